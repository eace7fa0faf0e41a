"""The flashinfer bump edits and re-lock hints, checked by applying edits to whole files."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.diagnostics import Edit
from kimi_lsp.pins.bump import bump_fix_edits, relock_hint
from kimi_lsp.pins.conda_env import read_conda_env
from kimi_lsp.pins.install_cmds import read_install_pins
from kimi_lsp.pins.model import Pin, PinFormat, PinSource
from kimi_lsp.pins.pipfile import read_pipfile
from kimi_lsp.pins.pyproject import read_pyproject
from kimi_lsp.pins.requirements import read_requirements
from kimi_lsp.text import Located, Span
from kimi_lsp.workspace import SourceText

ROOT = Path("/proj")
FI = "flashinfer-python"
T = "0.6.17"
FIXTURES = Path(__file__).resolve().parents[1] / "pins_fixtures"


def apply(text: str, edits: tuple[Edit, ...]) -> str:
    spans = sorted(edits, key=lambda e: e.span.start)
    for a, b in zip(spans, spans[1:]):
        assert a.span.end <= b.span.start, "edits overlap"
    for e in reversed(spans):
        text = text[: e.span.start] + e.new_text + text[e.span.end :]
    return text


def read(name: str, text: str) -> PinSource:
    s = SourceText(ROOT / name, text)
    if name == "pyproject.toml":
        return read_pyproject(s)
    if name == "Pipfile":
        return read_pipfile(s)
    if name.startswith("environment"):
        return read_conda_env(s)
    if name.startswith("Dockerfile"):
        return read_install_pins(s, "dockerfile")
    if name.endswith(".sh"):
        return read_install_pins(s, "shell")
    return read_requirements(s)


def bumped(name: str, text: str, *, index: int = 0, companions: bool = True, target: str = T) -> str | None:
    ps = read(name, text)
    pin = ps.pins_for(FI)[index]
    edits = bump_fix_edits(ps, pin, target, text, companions)
    if edits is None:
        return None
    for e in edits:
        assert e.path == ROOT / name
    return apply(text, edits)


# -- requirements ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("flashinfer-python==0.6.10", "flashinfer-python==0.6.17"),
        ("flashinfer-python===0.6.10", "flashinfer-python===0.6.17"),
        ("flashinfer-python==0.6.16.post4", "flashinfer-python==0.6.17"),
        ("flashinfer-python>= 0.6.10, <0.7", "flashinfer-python>= 0.6.17, <0.7"),
        ("flashinfer-python<0.7,>=0.6.10", "flashinfer-python<0.7,>=0.6.17"),
        ("flashinfer-python~=0.6.10", "flashinfer-python~=0.6.17"),
        ("flashinfer-python~=0.6", "flashinfer-python>=0.6.17,<1"),
        ("flashinfer-python<0.6.17", "flashinfer-python>=0.6.17"),
        ("flashinfer-python<=0.6.16,!=0.6.10", "flashinfer-python>=0.6.17"),
        ("flashinfer-python==0.6.16.*", "flashinfer-python>=0.6.17"),
        ("flashinfer-python==0.6.*", "flashinfer-python>=0.6.17,<0.7"),
        ("flashinfer-python<0.7", "flashinfer-python>=0.6.17,<0.7"),
        ("flashinfer-python!=0.6.10", "flashinfer-python>=0.6.17,!=0.6.10"),
        ("flashinfer-python>0.6.16", "flashinfer-python>=0.6.17"),
        ("flashinfer-python>=0.6.10,<0.6.17", None),  # the cap the user chose excludes the target
        ("flashinfer-python==0.6.10,!=0.6.17", None),
        ("flashinfer-python", "flashinfer-python>=0.6.17"),
        ("flashinfer-python ; sys_platform == 'linux'", "flashinfer-python>=0.6.17 ; sys_platform == 'linux'"),
        ("Flashinfer.Python[cu13] == 0.6.10 ; sys_platform == 'linux'  # kernels",
         "Flashinfer.Python[cu13] == 0.6.17 ; sys_platform == 'linux'  # kernels"),
        ("flashinfer_python (==0.6.10)", "flashinfer_python (==0.6.17)"),
        ("flashinfer-python @ https://h/flashinfer_python-0.6.10-py3-none-any.whl", None),
        ("flashinfer-python==${FLASHINFER_VERSION}", None),
    ],
)
def test_requirements_line_bumps(line: str, expected: str | None) -> None:
    out = bumped("requirements.txt", line + "\n")
    assert out == (None if expected is None else expected + "\n")


def test_requirements_whole_file_crlf_with_companions() -> None:
    text = (
        "# GPU stack\r\n"
        "--extra-index-url https://flashinfer-wheels.example/whl/cu130\r\n"
        "flashinfer_python[cu13]==0.6.10  # MLA\r\n"
        "flashinfer-cubin==0.6.10\r\n"
        "flashinfer-jit-cache==0.6.10+cu130 \\\r\n"
        "    --config-settings x=y\r\n"
        "torch==2.9.1\r\n"
    )
    expected = (
        "# GPU stack\r\n"
        "--extra-index-url https://flashinfer-wheels.example/whl/cu130\r\n"
        "flashinfer_python[cu13]==0.6.17  # MLA\r\n"
        "flashinfer-cubin==0.6.17\r\n"
        "flashinfer-jit-cache==0.6.17+cu130 \\\r\n"
        "    --config-settings x=y\r\n"
        "torch==2.9.1\r\n"
    )
    assert bumped("requirements.txt", text) == expected
    alone = bumped("requirements.txt", text, companions=False)
    assert alone == text.replace("flashinfer_python[cu13]==0.6.10", "flashinfer_python[cu13]==0.6.17")


def test_companion_already_at_target_is_left_alone() -> None:
    text = "flashinfer-python==0.6.10\nflashinfer-cubin>=0.6.17\nflashinfer-jit-cache\n"
    assert bumped("requirements.txt", text) == (
        "flashinfer-python==0.6.17\nflashinfer-cubin>=0.6.17\nflashinfer-jit-cache>=0.6.17\n"
    )


def test_hashed_and_compiled_are_not_edited() -> None:
    hashed = "flashinfer-python==0.6.10 \\\n    --hash=sha256:aa\n"
    assert bumped("requirements.txt", hashed) is None
    compiled = "flashinfer-python==0.6.10\n    # via -r requirements.in\n"
    assert bumped("requirements.txt", compiled) is None


def test_lock_sources_are_never_edited() -> None:
    pin = Pin(FI, Located(FI, Span(0, 17)), "==0.6.10", "0.6.10", Span(0, 25), Span(17, 25))
    lock = PinSource(ROOT / "uv.lock", PinFormat.UV_LOCK, True, (pin,), tool="uv")
    assert bump_fix_edits(lock, pin, T, "flashinfer-python==0.6.10") is None


def test_bump_result_reads_back_at_target() -> None:
    text = "flashinfer-python>=0.6.10,<0.7\n"
    out = bumped("requirements.txt", text)
    assert out is not None
    assert read("requirements.txt", out).pins_for(FI)[0].specifier == ">=0.6.17,<0.7"


# -- pyproject ---------------------------------------------------------------------------------


def test_pyproject_pep621_keeps_quotes_comments_markers() -> None:
    text = (
        "[project]\n"
        "dependencies = [\n"
        "    'flashinfer_python[cu13]==0.6.10 ; sys_platform == \"linux\"',  # MLA kernels\n"
        "]\n"
        "[project.optional-dependencies]\n"
        'gpu = ["flashinfer-cubin==0.6.10"]   # must match flashinfer-python\n'
    )
    assert bumped("pyproject.toml", text) == (
        "[project]\n"
        "dependencies = [\n"
        "    'flashinfer_python[cu13]==0.6.17 ; sys_platform == \"linux\"',  # MLA kernels\n"
        "]\n"
        "[project.optional-dependencies]\n"
        'gpu = ["flashinfer-cubin==0.6.17"]   # must match flashinfer-python\n'
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('"^0.6.10"', '"^0.6.17"'),
        ('"~0.6.10"', '"~0.6.17"'),
        ('"0.6.16.post4"', '"0.6.17"'),
        ('"=0.6.10"', '"=0.6.17"'),
        ('">=0.6.10 <0.7"', '">=0.6.17 <0.7"'),
        ('"*"', '">=0.6.17"'),
        ('"0.6.*"', '">=0.6.17,<0.7"'),
        ('"^0.6.10 || ^0.7"', None),
        ('{ version = "^0.6.10", extras = ["cu13"] }  # caret', '{ version = "^0.6.17", extras = ["cu13"] }  # caret'),
        ("{ git = 'https://github.com/flashinfer-ai/flashinfer' }", None),
    ],
)
def test_poetry_native_bumps(value: str, expected: str | None) -> None:
    head = '[tool.poetry]\nname = "x"\n[tool.poetry.dependencies]\npython = "^3.11"\n'
    out = bumped("pyproject.toml", f"{head}flashinfer-python = {value}\n")
    assert out == (None if expected is None else f"{head}flashinfer-python = {expected}\n")


def test_poetry_fixture_with_cubin() -> None:
    path = FIXTURES / "poetry-lock" / "pinned-old" / "pyproject.toml"
    if not path.exists():
        pytest.skip("fixture not present")
    text = path.read_text()
    out = bumped("pyproject.toml", text)
    assert out == text.replace('version = "0.6.16.post4"', 'version = "0.6.17"').replace(
        'flashinfer-cubin = "0.6.16.post4"', 'flashinfer-cubin = "0.6.17"'
    )


def test_pdm_override_and_capped_range() -> None:
    text = (
        '[project]\ndependencies = ["flashinfer-python[cu13]>=0.6.10,<0.6.17"]\n'
        '[tool.pdm.resolution.overrides]\nflashinfer-python = "==0.6.10"\n'
    )
    assert bumped("pyproject.toml", text, index=0) is None
    assert bumped("pyproject.toml", text, index=1) == text.replace('= "==0.6.10"', '= "==0.6.17"')


# -- Pipfile / conda ----------------------------------------------------------------------------


def test_pipfile_bump() -> None:
    text = (
        '[packages]\nflashinfer-python = {version = "==0.6.10", extras = ["cu13"]}\n'
        'flashinfer-cubin = "==0.6.10"\nflashinfer-jit-cache = "*"\n'
    )
    assert bumped("Pipfile", text) == (
        '[packages]\nflashinfer-python = {version = "==0.6.17", extras = ["cu13"]}\n'
        'flashinfer-cubin = "==0.6.17"\nflashinfer-jit-cache = ">=0.6.17"\n'
    )


def test_conda_env_bumps() -> None:
    text = (
        "dependencies:\n"
        "  - flashinfer-python=0.6.10   # fuzzy\n"
        "  - conda-forge::flashinfer-cubin 0.6.10\n"
        "  - pip:\n"
        "    - \"flashinfer_python[cu13]==0.6.10 ; sys_platform == 'linux'\"\n"
    )
    assert bumped("environment.yml", text, index=0) == text.replace("=0.6.10   #", "=0.6.17   #").replace(
        "cubin 0.6.10", "cubin 0.6.17"
    )
    assert bumped("environment.yml", text, index=1, companions=False) == text.replace(
        "[cu13]==0.6.10", "[cu13]==0.6.17"
    )


def test_conda_ranges_and_build_strings() -> None:
    assert bumped("environment.yml", "dependencies:\n  - flashinfer-python>=0.6.10,<0.7\n") == (
        "dependencies:\n  - flashinfer-python>=0.6.17,<0.7\n"
    )
    assert bumped("environment.yml", "dependencies:\n  - flashinfer-python\n") == (
        "dependencies:\n  - flashinfer-python>=0.6.17\n"
    )
    assert bumped("environment.yml", "dependencies:\n  - flashinfer-python=0.6.10=py_0\n") is None


# -- Dockerfile / shell -------------------------------------------------------------------------


def test_dockerfile_arg_default_is_edited_once_for_the_trio() -> None:
    text = (
        "ARG FLASHINFER_VERSION=0.6.15.post1\n"
        "FROM lmsysorg/sglang:v0.5.16\n"
        "ARG FLASHINFER_VERSION\n"
        "ARG CUDA_TAG=cu130\n"
        "RUN pip install --force-reinstall --no-deps \\\n"
        "      flashinfer-python==${FLASHINFER_VERSION} \\\n"
        "      flashinfer-cubin==${FLASHINFER_VERSION} \\\n"
        "      \"flashinfer-jit-cache==${FLASHINFER_VERSION}+${CUDA_TAG}\" \\\n"
        "      --extra-index-url https://flashinfer-wheels.example/whl/${CUDA_TAG}\n"
    )
    assert bumped("Dockerfile", text) == text.replace("=0.6.15.post1", "=0.6.17")


def test_dockerfile_literals_and_quoting() -> None:
    text = (
        "FROM x\n"
        "RUN uv pip install --system 'flashinfer_python[cu13]>=0.6.10,<0.7' flashinfer-cubin\n"
        'RUN ["pip", "install", "flashinfer-python==0.6.10"]\n'
    )
    assert bumped("Dockerfile", text, index=0) == text.replace(">=0.6.10,<0.7", ">=0.6.17,<0.7").replace(
        " flashinfer-cubin\n", " 'flashinfer-cubin>=0.6.17'\n"
    )
    assert bumped("Dockerfile", text, index=1, companions=False) == text.replace(
        "flashinfer-python==0.6.10", "flashinfer-python==0.6.17"
    )


def test_shell_unquoted_word_gets_quoted() -> None:
    text = "#!/bin/sh\npip install flashinfer-python $EXTRA\npip install flashinfer-python==0.6.10\n"
    assert bumped("run.sh", text) == text.replace(
        "install flashinfer-python $EXTRA", "install 'flashinfer-python>=0.6.17' $EXTRA"
    )
    assert bumped("run.sh", text, index=1, companions=False) == text.replace("==0.6.10", "==0.6.17")


def test_shell_variable_value_is_edited() -> None:
    text = 'FI_VERSION="0.6.10"\npip install "flashinfer-python[cu13]==${FI_VERSION}"\n'
    assert bumped("run.sh", text) == text.replace('"0.6.10"', '"0.6.17"')


# -- relock hints -------------------------------------------------------------------------------


def _src(fmt: str, name: str, tool: str | None = None, *, is_lock: bool = False, relock: str | None = None) -> PinSource:
    return PinSource(ROOT / name, PinFormat(fmt), is_lock, (), tool=tool, relock_command=relock)


@pytest.mark.parametrize(
    ("source", "lock", "expected"),
    [
        (_src("pyproject", "pyproject.toml", "uv"), None, "uv lock --upgrade-package flashinfer-python"),
        (_src("pyproject", "pyproject.toml", None), _src("uv.lock", "uv.lock", "uv", is_lock=True),
         "uv lock --upgrade-package flashinfer-python"),
        (_src("pyproject", "pyproject.toml", "poetry"), None, "poetry update --lock flashinfer-python"),
        (_src("pyproject", "pyproject.toml", "pdm"), None, "pdm update --no-sync flashinfer-python"),
        (_src("pyproject", "pyproject.toml", None), None, None),
        (_src("Pipfile", "Pipfile", "pipenv"), None, "pipenv lock"),
        (_src("requirements", "requirements.in", "pip-tools"), None, 'pip-compile -P "flashinfer-python==0.6.17" requirements.in'),
        (_src("requirements", "requirements.in", "pip-tools"),
         _src("requirements", "requirements.txt", "uv", is_lock=True,
              relock="uv pip compile -P {name}=={version} requirements.in -o requirements.txt"),
         "uv pip compile -P flashinfer-python==0.6.17 requirements.in -o requirements.txt"),
        (_src("requirements", "requirements.txt", "pip-tools", is_lock=True,
              relock='pip-compile -P "{name}=={version}" requirements.in'), None,
         'pip-compile -P "flashinfer-python==0.6.17" requirements.in'),
        (_src("requirements", "requirements.txt"), None, None),
        (_src("dockerfile", "Dockerfile"), None, None),
        (_src("environment.yml", "environment.yml", "conda"), _src("conda-lock", "conda-lock.yml", "conda", is_lock=True),
         "conda-lock -f environment.yml --lockfile conda-lock.yml"),
    ],
)
def test_relock_hint(source: PinSource, lock: PinSource | None, expected: str | None) -> None:
    assert relock_hint(source, FI, T, lock) == expected


def test_relock_hint_from_read_compiled_file() -> None:
    text = (
        "# This file is autogenerated by pip-compile with Python 3.11\n# by the following command:\n#\n"
        "#    pip-compile requirements.in\n#\nflashinfer-python==0.6.10\n    # via -r requirements.in\n"
    )
    ps = read("requirements.txt", text)
    assert relock_hint(ps, FI, T) == 'pip-compile -P "flashinfer-python==0.6.17" requirements.in'


# -- robustness ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec_text",
    ["", "==", "==x", ">=0.6.10,,<0.7", "^^1", "|", "~", "===", ">=0.6.10 ; ;", "0.6.x", "v", "\\", "${X}", "((", "=="],
)
def test_bump_never_raises(spec_text: str) -> None:
    text = f"flashinfer-python{spec_text}\n"
    pin = Pin(FI, Located(FI, Span(0, 17)), spec_text, None, Span(0, len(text) - 1), Span(17, 17 + len(spec_text)),
              native_spec=spec_text or None)
    for fmt in ("requirements", "pyproject", "environment.yml", "dockerfile", "Pipfile"):
        src = PinSource(ROOT / "f", PinFormat(fmt), False, (pin,))
        for target in (T, "garbage", ""):
            out = bump_fix_edits(src, pin, target, text)
            assert out is None or isinstance(out, tuple)
    far = Pin(FI, Located(FI, Span(0, 1)), "", None, Span(0, 1), Span(500, 600))
    assert bump_fix_edits(PinSource(ROOT / "f", PinFormat.REQUIREMENTS, False, (far,)), far, T, "x") is None


def test_dockerfile_crlf_continuation_bump() -> None:
    text = (
        "FROM x\r\nARG FI=0.6.10\r\nRUN pip install \\\r\n"
        "    # pinned for the K3 image\r\n"
        "    flashinfer-python==${FI} \\\r\n"
        "    flashinfer-cubin==0.6.10\r\n"
    )
    assert bumped("Dockerfile", text) == text.replace("FI=0.6.10", "FI=0.6.17").replace(
        "cubin==0.6.10", "cubin==0.6.17"
    )


def test_target_with_local_label_for_jit_cache() -> None:
    text = "flashinfer-jit-cache==0.6.10+cu130\nflashinfer-jit-cache>=0.6.10\n"
    ps = read("requirements.txt", text)
    exact, floor = ps.pins_for("flashinfer-jit-cache")
    e1 = bump_fix_edits(ps, exact, "0.6.17+cu130", text, companions=False)
    e2 = bump_fix_edits(ps, floor, "0.6.17+cu130", text, companions=False)
    assert e1 is not None and e2 is not None
    assert apply(text, e1 + e2) == "flashinfer-jit-cache==0.6.17+cu130\nflashinfer-jit-cache>=0.6.17\n"
