"""Manifest pin readers: requirements, pyproject, Pipfile, environment.yml, install commands."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.pins.conda_env import conda_to_pep440, read_conda_env, read_conda_env_tree
from kimi_lsp.pins.install_cmds import read_install_pins, read_install_tree
from kimi_lsp.pins.model import Pin, PinSource
from kimi_lsp.pins.pipfile import read_pipfile
from kimi_lsp.pins.pyproject import poetry_to_pep440, read_pyproject
from kimi_lsp.syntax.dockerfile import parse
from kimi_lsp.pins.requirements import read_requirements, read_requirements_tree
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText, Workspace

ROOT = Path("/proj")
FI = "flashinfer-python"


def src(name: str, text: str) -> SourceText:
    return SourceText(ROOT / name, text)


def cut(text: str, span: Span | None) -> str | None:
    return None if span is None else text[span.start : span.end]


def only(ps: PinSource, name: str = FI) -> Pin:
    pins = ps.pins_for(name)
    assert len(pins) == 1, pins
    return pins[0]


# -- requirements ------------------------------------------------------------------------------


def test_requirements_basic_positions_and_spellings() -> None:
    text = (
        "# serving deps\n"
        "Flashinfer.Python[cu13] >= 0.6.10, <0.7 ; sys_platform == 'linux'  # kernels\n"
        "flashinfer_cubin==0.6.16.post4\n"
        "numpy\n"
    )
    ps = read_requirements(src("requirements.txt", text))
    assert ps.format == "requirements" and not ps.is_lock and ps.problems == ()
    p = only(ps)
    assert p.written_name.value == "Flashinfer.Python" and cut(text, p.written_name.span) == "Flashinfer.Python"
    assert p.specifier == ">=0.6.10,<0.7" and p.version is None
    assert cut(text, p.spec_span) == ">= 0.6.10, <0.7"
    assert p.extras == ("cu13",) and p.marker == "sys_platform == 'linux'"
    assert cut(text, p.span) == "Flashinfer.Python[cu13] >= 0.6.10, <0.7 ; sys_platform == 'linux'"
    cubin = only(ps, "flashinfer-cubin")
    assert cubin.version == "0.6.16.post4" and cut(text, cubin.spec_span) == "==0.6.16.post4"
    numpy = only(ps, "numpy")
    assert numpy.specifier == "" and numpy.spec_span == Span(text.index("numpy") + 5, text.index("numpy") + 5)


def test_requirements_written_clause_order_kept() -> None:
    ps = read_requirements(src("requirements.txt", "flashinfer-python<0.7,>=0.6.10\n"))
    assert only(ps).specifier == "<0.7,>=0.6.10"


@pytest.mark.parametrize(
    ("line", "version"),
    [("flashinfer-python==0.6.16.post4", "0.6.16.post4"), ("flashinfer-python===0.6.10", "0.6.10"),
     ("flashinfer-python==0.6.*", None), ("flashinfer-python>=0.6.17", None), ("flashinfer-python==0.6.17rc1", "0.6.17rc1")],
)
def test_requirements_sole_version(line: str, version: str | None) -> None:
    assert only(read_requirements(src("requirements.txt", line + "\n"))).version == version


def test_requirements_crlf_continuation_and_options() -> None:
    text = (
        "-i https://pypi.example/simple\r\n"
        "--extra-index-url https://flashinfer-wheels.example/whl/cu130\r\n"
        "--pre\r\n"
        "flashinfer-python\\\r\n"
        "==0.6.10 --config-settings x=y\r\n"
        "flashinfer-jit-cache==0.6.10+cu130 \\\r\n"
        "    --config-settings=a=b\r\n"
    )
    ps = read_requirements(src("requirements.txt", text))
    p = only(ps)
    assert p.specifier == "==0.6.10" and p.version == "0.6.10"
    # the specifier sits on the continuation line: still one contiguous stretch of text
    assert cut(text, p.spec_span) == "==0.6.10"
    jit = only(ps, "flashinfer-jit-cache")
    assert jit.version == "0.6.10+cu130" and cut(text, jit.spec_span) == "==0.6.10+cu130"
    assert not ps.problems


def test_requirements_spec_split_by_continuation_is_not_editable() -> None:
    text = "flashinfer-python>=0.6.10,\\\n<0.7\n"
    p = only(read_requirements(src("requirements.txt", text)))
    assert p.specifier == ">=0.6.10,<0.7" and p.spec_span is None


def test_requirements_comment_rules() -> None:
    text = "flashinfer-python @ https://h/flashinfer_python-0.6.17-py3-none-any.whl#sha256=abc # c\n# flashinfer-cubin==1\n"
    ps = read_requirements(src("requirements.txt", text))
    p = only(ps)
    assert p.version == "0.6.17" and p.specifier == "==0.6.17" and p.spec_span is None
    assert ps.pins_for("flashinfer-cubin") == ()


def test_requirements_url_forms() -> None:
    text = (
        "https://h/whl/flashinfer_jit_cache-0.6.13+cu130-cp39-abi3-manylinux_2_28_x86_64.whl\n"
        "git+https://github.com/flashinfer-ai/flashinfer@v0.6.17#egg=flashinfer-python\n"
        "./dist/flashinfer_cubin-0.6.13-py3-none-any.whl\n"
    )
    ps = read_requirements(src("requirements.txt", text))
    assert only(ps, "flashinfer-jit-cache").version == "0.6.13+cu130"
    git = only(ps)
    assert git.version is None and git.spec_span is None
    assert only(ps, "flashinfer-cubin").version == "0.6.13"


def test_requirements_env_var_reference() -> None:
    text = "flashinfer-python==${FLASHINFER_VERSION}\n"
    ps = read_requirements(src("requirements.txt", text))
    p = only(ps)
    assert p.spec_span is None and p.version is None
    assert any("FLASHINFER_VERSION" in pr.message for pr in ps.problems)


def test_requirements_hashed_not_editable() -> None:
    text = (
        "flashinfer-python[cu13]==0.6.10.post1 ; sys_platform == \"linux\" \\\n"
        "    --hash=sha256:3656064d \\\n"
        "    --hash=sha256:cb1872b3\n"
    )
    ps = read_requirements(src("requirements.txt", text))
    p = only(ps)
    assert p.hashed and p.spec_span is None and p.version == "0.6.10.post1"
    assert p.marker == 'sys_platform == "linux"'
    assert ps.is_lock  # hashes mean compiled output


def test_requirements_pip_compile_header() -> None:
    text = (
        "#\n# This file is autogenerated by pip-compile with Python 3.11\n# by the following command:\n#\n"
        "#    pip-compile --generate-hashes --output-file=requirements.txt requirements.in\n#\n"
        "flashinfer-python==0.6.10 \\\n    --hash=sha256:aa\n    # via -r requirements.in\n"
        "torch==2.9.1\n    # via\n    #   -c constraints.txt\n    #   flashinfer-python\n"
    )
    ps = read_requirements(src("requirements.txt", text))
    assert ps.is_lock and ps.tool == "pip-tools"
    assert ps.relock_command == (
        'pip-compile -P "{name}=={version}" --generate-hashes --output-file=requirements.txt requirements.in'
    )
    assert ROOT / "requirements.in" in ps.includes
    assert all(p.spec_span is None for p in ps.pins)
    assert only(ps, "torch").hashed is False


def test_requirements_uv_compile_header() -> None:
    text = (
        "# This file was autogenerated by uv via the following command:\n"
        "#    uv pip compile requirements.in --python-version 3.11 -o requirements.txt\n"
        "flashinfer-python==0.6.10.post1\n    # via\n    #   -c constraints.txt\n    #   -r requirements.in\n"
    )
    ps = read_requirements(src("requirements.txt", text))
    assert ps.tool == "uv" and ps.is_lock
    assert ps.relock_command == "uv pip compile -P {name}=={version} requirements.in --python-version 3.11 -o requirements.txt"
    assert ps.includes == (ROOT / "requirements.in",)


def test_requirements_via_only_and_sibling_in() -> None:
    ws = Workspace(ROOT, {ROOT / "gpu.in": "flashinfer-python>=0.6\n"})
    text = "flashinfer-python==0.6.10\n    # via some-package\n"
    ps = read_requirements(src("gpu.txt", text), ws)
    assert ps.is_lock and ps.relock_command == 'pip-compile -P "{name}=={version}" -o gpu.txt gpu.in'
    assert ps.includes == (ROOT / "gpu.in",)


def test_requirements_in_file_is_pip_tools_manifest() -> None:
    ps = read_requirements(src("requirements.in", "flashinfer-python>=0.6.10\n"))
    assert ps.tool == "pip-tools" and not ps.is_lock and only(ps).spec_span is not None


def test_constraints_by_name_and_extras_problem() -> None:
    ps = read_requirements(src("constraints.txt", "flashinfer-python[cu13]<0.6.17\n"))
    assert ps.format == "constraints"
    p = only(ps)
    assert p.constraint and p.specifier == "<0.6.17"
    assert any("extras" in pr.message for pr in ps.problems)


def test_requirements_includes_tree_with_cycle() -> None:
    files = {
        ROOT / "requirements.txt": "-r sub/base.txt\n-c constraints.txt\nsglang==0.5.16\n",
        ROOT / "sub/base.txt": "--requirement ../requirements.txt\nflashinfer-python==0.6.10\n-rmore.txt\n",
        ROOT / "sub/more.txt": "-r base.txt\nflashinfer-cubin==0.6.10\n",
        ROOT / "constraints.txt": "flashinfer-python<0.6.17\n-r sub/base.txt\n",
    }
    ws = Workspace(ROOT, {p: t for p, t in files.items()})
    first = ws.read(ROOT / "requirements.txt")
    assert isinstance(first, SourceText)
    tree = read_requirements_tree(first, ws)
    by_path = {(s.path, s.format) for s in tree}
    assert by_path == {
        (ROOT / "requirements.txt", "requirements"),
        (ROOT / "sub/base.txt", "requirements"),
        (ROOT / "sub/more.txt", "requirements"),
        (ROOT / "constraints.txt", "constraints"),
    }
    base = next(s for s in tree if s.path == ROOT / "sub/base.txt")
    p = only(base)
    assert cut(files[ROOT / "sub/base.txt"], p.spec_span) == "==0.6.10"
    cons = next(s for s in tree if s.format == "constraints")
    assert only(cons).constraint
    assert tree[0].includes == (ROOT / "sub/base.txt", ROOT / "constraints.txt")


def test_requirements_missing_include_is_a_problem() -> None:
    ws = Workspace(ROOT, {})
    text = "-r nothere.txt\n-r https://example.com/r.txt\n"
    ps = read_requirements(src("requirements.txt", text), ws)
    msgs = [pr.message for pr in ps.problems]
    assert any("not found" in m for m in msgs) and any("remote" in m for m in msgs)
    nf = next(pr for pr in ps.problems if "not found" in pr.message)
    assert cut(text, nf.span) == "nothere.txt"


# -- pyproject ---------------------------------------------------------------------------------

PYPROJECT = '''[project]
name = "k3"
dependencies = [
    # MLA kernels
    'flashinfer_python[cu13]==0.6.10 ; sys_platform == "linux"',  # comment, "quoted"
    "sglang[srt]>=0.5.16",
]

[project.optional-dependencies]
gpu = ["flashinfer-cubin==0.6.10"]   # must match

[dependency-groups]
dev = ["pytest", {include-group = "gpu"}, "Flashinfer.Python>=0.6.10,<0.7"]

[tool.uv]
constraint-dependencies = ["flashinfer-python<=0.6.16"]
override-dependencies = [
  """flashinfer-python[cu13]==0.6.17""",
]
dev-dependencies = ['flashinfer-jit-cache==0.6.10+cu130']
'''


def test_pyproject_pep621_pep735_uv() -> None:
    text = PYPROJECT
    ps = read_pyproject(src("pyproject.toml", text))
    assert ps.format == "pyproject" and ps.tool == "uv" and not ps.problems
    fi = ps.pins_for(FI)
    main = next(p for p in fi if p.group is None and not p.constraint and not p.override)
    assert main.written_name.value == "flashinfer_python"
    assert cut(text, main.spec_span) == "==0.6.10" and main.version == "0.6.10"
    assert main.marker == 'sys_platform == "linux"' and main.extras == ("cu13",)
    assert cut(text, main.span) == 'flashinfer_python[cu13]==0.6.10 ; sys_platform == "linux"'
    dev = next(p for p in fi if p.group == "dev")
    assert dev.specifier == ">=0.6.10,<0.7" and cut(text, dev.spec_span) == ">=0.6.10,<0.7"
    cons = next(p for p in fi if p.constraint)
    assert cons.specifier == "<=0.6.16"
    over = next(p for p in fi if p.override)
    assert over.version == "0.6.17" and cut(text, over.spec_span) == "==0.6.17"
    gpu = only(ps, "flashinfer-cubin")
    assert gpu.group == "gpu" and cut(text, gpu.spec_span) == "==0.6.10"
    jit = only(ps, "flashinfer-jit-cache")
    assert jit.group == "dev" and jit.version == "0.6.10+cu130"
    assert only(ps, "pytest").group == "dev"


POETRY = '''[tool.poetry]
name = "k3"

[tool.poetry.dependencies]
python = ">=3.11,<3.12"
"Flashinfer_Python" = { version = "^0.6.10", extras = ["cu13"], markers = "sys_platform == 'linux'" }  # caret
flashinfer-cubin = "0.6.16.post4"
flashinfer-jit-cache = [
    { version = "~0.6.10", python = "<3.12" },
    { version = ">=0.6.10 <0.7", python = ">=3.12" },
]
sglang = {git = "https://github.com/sgl-project/sglang"}
any-thing = "*"
uvloop = { version = "0.6.*", optional = true }

[tool.poetry.extras]
fast = ["uvloop"]

[tool.poetry.group.gpu.dependencies]
torch = ">=2.9 || ^3.0"

[tool.poetry.dev-dependencies]
pytest = "^8"
'''


def test_pyproject_poetry() -> None:
    text = POETRY
    ps = read_pyproject(src("pyproject.toml", text))
    assert ps.tool == "poetry" and not ps.problems
    assert ps.pins_for("python") == ()
    p = only(ps)
    assert p.written_name.value == "Flashinfer_Python" and cut(text, p.written_name.span) == "Flashinfer_Python"
    assert p.specifier == ">=0.6.10,<0.7.0" and p.native_spec == "^0.6.10"
    assert cut(text, p.spec_span) == "^0.6.10"
    assert p.extras == ("cu13",) and p.marker == "sys_platform == 'linux'"
    assert cut(text, p.span).startswith('"Flashinfer_Python" = {') and cut(text, p.span).endswith("}")
    cubin = only(ps, "flashinfer-cubin")
    assert cubin.specifier == "==0.6.16.post4" and cubin.version == "0.6.16.post4"
    assert cut(text, cubin.spec_span) == "0.6.16.post4"
    jits = ps.pins_for("flashinfer-jit-cache")
    assert [j.specifier for j in jits] == [">=0.6.10,<0.7.0", ">=0.6.10,<0.7"]
    assert [cut(text, j.spec_span) for j in jits] == ["~0.6.10", ">=0.6.10 <0.7"]
    sg = only(ps, "sglang")
    assert sg.specifier == "" and sg.spec_span is None
    anyp = only(ps, "any-thing")
    assert anyp.specifier == "" and cut(text, anyp.spec_span) == "*"
    assert only(ps, "uvloop").group == "fast" and only(ps, "uvloop").specifier == "==0.6.*"
    assert only(ps, "torch").specifier == ">=2.9||>=3.0,<4.0" and only(ps, "torch").group == "gpu"
    assert only(ps, "pytest").group == "dev"


@pytest.mark.parametrize(
    ("poetry", "pep440"),
    [("^0.6.10", ">=0.6.10,<0.7.0"), ("~0.6.10", ">=0.6.10,<0.7.0"), ("^0.6", ">=0.6,<0.7"), ("~0.6", ">=0.6,<0.7"),
     ("0.6.10", "==0.6.10"), ("0.6.*", "==0.6.*"), ("*", ""), ("^1.2.3", ">=1.2.3,<2.0.0"), ("^0.0.3", ">=0.0.3,<0.0.4"),
     ("~=0.6.10", "~=0.6.10"), (">= 1.2, < 2", ">=1.2,<2"), ("=0.6.10", "==0.6.10"), ("^0.6.10 || ^0.7", ">=0.6.10,<0.7.0||>=0.7,<0.8")],
)
def test_poetry_to_pep440(poetry: str, pep440: str) -> None:
    assert poetry_to_pep440(poetry) == pep440


def test_pyproject_poetry_dotted_and_table_forms() -> None:
    text = (
        "[tool.poetry.dependencies]\nflashinfer-python.version = '0.6.10'\n"
        "[tool.poetry.dependencies.flashinfer-cubin]\nversion = \"^0.6.10\"\n"
    )
    ps = read_pyproject(src("pyproject.toml", text))
    assert cut(text, only(ps).spec_span) == "0.6.10"
    assert cut(text, only(ps, "flashinfer-cubin").spec_span) == "^0.6.10"
    assert cut(text, only(ps, "flashinfer-cubin").written_name.span) == "flashinfer-cubin"


def test_pyproject_pdm() -> None:
    text = (
        '[project]\ndependencies = ["flashinfer-python[cu13]>=0.6.10,<0.6.17"]\n'
        "[tool.pdm.dev-dependencies]\ngpu = ['flashinfer-cubin==0.6.10']\n"
        '[tool.pdm.resolution.overrides]\n"flashinfer-python" = ">=0.6.17"\n'
    )
    ps = read_pyproject(src("pyproject.toml", text))
    assert ps.tool == "pdm"
    over = next(p for p in ps.pins_for(FI) if p.override)
    assert over.specifier == ">=0.6.17" and cut(text, over.spec_span) == ">=0.6.17"
    assert cut(text, over.written_name.span) == "flashinfer-python"
    assert only(ps, "flashinfer-cubin").group == "gpu"


def test_pyproject_escaped_string_has_no_spec_span() -> None:
    text = '[project]\ndependencies = ["flashinfer-python==0.6.10 ; sys_platform == \\"linux\\""]\n'
    p = only(read_pyproject(src("pyproject.toml", text)))
    assert p.version == "0.6.10" and p.spec_span is None and p.marker == 'sys_platform == "linux"'


def test_pyproject_crlf_and_literal_multiline() -> None:
    text = "[project]\r\ndependencies = [\r\n  '''flashinfer-python>=0.6.10''',\r\n  \"x\",\r\n]\r\n"
    p = only(read_pyproject(src("pyproject.toml", text)))
    assert cut(text, p.spec_span) == ">=0.6.10"


def test_pyproject_dynamic_files_and_invalid() -> None:
    text = '[project]\ndynamic = ["dependencies"]\n[tool.setuptools.dynamic]\ndependencies = {file = ["requirements.txt"]}\n'
    ps = read_pyproject(src("pyproject.toml", text))
    assert ps.includes == (ROOT / "requirements.txt",)
    bad = read_pyproject(src("pyproject.toml", "[project\nx = 1\n"))
    assert bad.pins == () and bad.problems
    assert bad.problems[0].message == "pyproject.toml: TOML syntax error: Expected ']' at the end of a table declaration"
    assert bad.problems[0].span == Span(8, 8)  # where tomllib says, the end of line 1


def test_pyproject_tool_detection() -> None:
    assert read_pyproject(src("pyproject.toml", '[project]\nname="x"\n')).tool is None
    assert read_pyproject(src("pyproject.toml", '[build-system]\nbuild-backend = "poetry.core.masonry.api"\n')).tool == "poetry"


# -- Pipfile ------------------------------------------------------------------------------------


def test_pipfile() -> None:
    text = (
        '[[source]]\nurl = "https://pypi.example/simple"\nname = "pypi"\n\n'
        '[packages]\nflashinfer-python = {version = "==0.6.10", extras = ["cu13"], markers = "sys_platform == \'linux\'"}\n'
        'flashinfer_cubin = "==0.6.10"\nrequests = "*"\n\n'
        '[dev-packages]\n"Flashinfer.Jit-Cache" = ">=0.6.10"\n\n[gpu]\ntorch = "2.9.1"\n\n[requires]\npython_version = "3.11"\n'
    )
    ps = read_pipfile(src("Pipfile", text))
    assert ps.format == "Pipfile" and ps.tool == "pipenv" and not ps.problems
    p = only(ps)
    assert p.version == "0.6.10" and cut(text, p.spec_span) == "==0.6.10" and p.extras == ("cu13",)
    assert p.marker == "sys_platform == 'linux'" and p.group is None
    assert cut(text, only(ps, "flashinfer-cubin").written_name.span) == "flashinfer_cubin"
    req = only(ps, "requests")
    assert req.specifier == "" and cut(text, req.spec_span) == "*"
    jit = only(ps, "flashinfer-jit-cache")
    assert jit.group == "dev-packages" and cut(text, jit.written_name.span) == "Flashinfer.Jit-Cache"
    torch = only(ps, "torch")
    assert torch.group == "gpu" and torch.specifier == "==2.9.1"
    assert ps.pins_for("python-version") == ()


# -- environment.yml ----------------------------------------------------------------------------

ENV_YML = '''name: k3
channels:
  - conda-forge
dependencies:
  - python=3.11
  - flashinfer-python=0.6.10   # fuzzy
  - conda-forge::flashinfer-cubin 0.6.10
  - "flashinfer-jit-cache>=0.6.10,<0.7"
  - numpy=1.26=py311_0
  - pip
  - pip:
    - "Flashinfer_Python[cu13]==0.6.10 ; sys_platform == 'linux'"
    - -r requirements-gpu.txt
    - --extra-index-url https://flashinfer-wheels.example/whl/cu130
'''


def test_conda_env() -> None:
    text = ENV_YML
    ps = read_conda_env(src("environment.yml", text))
    assert ps.format == "environment.yml" and ps.tool == "conda" and not ps.problems
    conda_fi, pip_fi = ps.pins_for(FI)
    assert conda_fi.specifier == "==0.6.10.*" and conda_fi.native_spec == "=0.6.10" and conda_fi.version is None
    assert cut(text, conda_fi.spec_span) == "=0.6.10" and cut(text, conda_fi.span) == "flashinfer-python=0.6.10"
    assert pip_fi.specifier == "==0.6.10" and cut(text, pip_fi.spec_span) == "==0.6.10" and pip_fi.extras == ("cu13",)
    assert cut(text, pip_fi.written_name.span) == "Flashinfer_Python" and pip_fi.native_spec is None
    cubin = only(ps, "flashinfer-cubin")
    assert cubin.specifier == "==0.6.10" and cut(text, cubin.spec_span) == "0.6.10"
    jit = only(ps, "flashinfer-jit-cache")
    assert jit.specifier == ">=0.6.10,<0.7" and cut(text, jit.spec_span) == ">=0.6.10,<0.7"
    numpy = only(ps, "numpy")
    assert numpy.specifier == "==1.26.*" and numpy.spec_span is None  # build string pinned
    assert ps.includes == (ROOT / "requirements-gpu.txt",)


@pytest.mark.parametrize(
    ("conda", "pep"),
    [("=0.6.10", "==0.6.10.*"), ("==0.6.10", "==0.6.10"), (">=0.6.10,<0.7", ">=0.6.10,<0.7"), ("0.6.*", "==0.6.*"),
     ("", ""), ("0.6.10|0.6.17", "==0.6.10||==0.6.17")],
)
def test_conda_to_pep440(conda: str, pep: str) -> None:
    assert conda_to_pep440(conda) == pep


def test_conda_env_tree_and_bad_yaml() -> None:
    ws = Workspace(ROOT, {ROOT / "requirements-gpu.txt": "flashinfer-cubin==0.6.10\n"})
    tree = read_conda_env_tree(src("environment.yml", ENV_YML), ws)
    assert [s.path.name for s in tree] == ["environment.yml", "requirements-gpu.txt"]
    bad = read_conda_env(src("environment.yml", "dependencies: [a\n  - b: : :\n"))
    assert bad.pins == () and bad.problems
    assert read_conda_env(src("environment.yml", "")).pins == ()


# -- Dockerfiles and shell ----------------------------------------------------------------------

DOCKERFILE = '''# syntax=docker/dockerfile:1
ARG FLASHINFER_VERSION=0.6.15.post1
FROM lmsysorg/sglang:v0.5.16 AS base
ARG FLASHINFER_VERSION
ENV CUDA_TAG=cu130
# comment
RUN --mount=type=cache,target=/root/.cache pip install --no-cache-dir --force-reinstall \\
    # a comment inside the continuation
    flashinfer-python==${FLASHINFER_VERSION} \\

    flashinfer-cubin==${FLASHINFER_VERSION} \\
    "flashinfer-jit-cache==${FLASHINFER_VERSION}+${CUDA_TAG}" \\
    --extra-index-url https://flashinfer-wheels.example/whl/${CUDA_TAG} && \\
    uv pip install --system 'flashinfer_python[cu13]>=0.6.10,<0.7' -r requirements-gpu.txt
RUN ["python3", "-m", "pip", "install", "Flashinfer.Python==0.6.10"]
RUN <<EOF
set -e
pip3 install flashinfer-cubin==0.6.9
EOF
'''


def test_dockerfile_install_pins() -> None:
    text = DOCKERFILE
    ps = read_install_pins(src("Dockerfile", text), "dockerfile")
    assert ps.format == "dockerfile" and not ps.is_lock, ps.problems
    fi = ps.pins_for(FI)
    assert [p.specifier for p in fi] == ["==0.6.15.post1", ">=0.6.10,<0.7", "==0.6.10"]
    var = fi[0]
    assert cut(text, var.span) == "flashinfer-python==${FLASHINFER_VERSION}"
    assert var.spec_span is not None and var.spec_span.start == text.index("0.6.15.post1")
    assert cut(text, var.spec_span) == "0.6.15.post1"
    quoted = fi[1]
    assert cut(text, quoted.span) == "'flashinfer_python[cu13]>=0.6.10,<0.7'"
    assert cut(text, quoted.spec_span) == ">=0.6.10,<0.7" and quoted.extras == ("cu13",)
    assert cut(text, quoted.written_name.span) == "flashinfer_python"
    execf = fi[2]
    assert cut(text, execf.spec_span) == "==0.6.10" and cut(text, execf.written_name.span) == "Flashinfer.Python"
    jit = only(ps, "flashinfer-jit-cache")
    assert jit.version == "0.6.15.post1+cu130" and cut(text, jit.spec_span) == "0.6.15.post1"
    cubins = ps.pins_for("flashinfer-cubin")
    assert [c.version for c in cubins] == ["0.6.15.post1", "0.6.9"]
    assert cut(text, cubins[1].spec_span) == "==0.6.9"
    assert ps.includes == (ROOT / "requirements-gpu.txt",)


def test_dockerfile_instruction_splitter_escape_directive() -> None:
    text = "# escape=`\nFROM x\nRUN pip install `\n    flashinfer-python==0.6.10\n"
    escape, instructions, _ = parse(text)
    kinds = [i.keyword for i in instructions]
    assert escape == "`"
    assert kinds == ["FROM", "RUN"]
    ps = read_install_pins(src("Dockerfile", text), "dockerfile")
    assert only(ps).version == "0.6.10"


def test_dockerfile_stage_scoping_and_unknown_build_arg() -> None:
    text = (
        "FROM a AS one\nARG V=0.6.10\nRUN pip install flashinfer-python==$V\n"
        "FROM b\nRUN pip install flashinfer-cubin==${V}\n"
    )
    ps = read_install_pins(src("Dockerfile", text), "dockerfile")
    assert only(ps).version == "0.6.10"
    cubin = only(ps, "flashinfer-cubin")
    assert cubin.version is None and cubin.spec_span is None  # V is not defined in the second stage
    assert ps.problems


def test_dockerfile_env_legacy_and_defaults() -> None:
    text = "FROM x\nENV FI_VER 0.6.10\nRUN pip install \"flashinfer-python==${FI_VER:-0.6.9}\" flashinfer-cubin==${NOPE:-0.6.8}\n"
    ps = read_install_pins(src("Dockerfile", text), "dockerfile")
    p = only(ps)
    assert p.version == "0.6.10" and cut(text, p.spec_span) == "0.6.10"
    assert only(ps, "flashinfer-cubin").version == "0.6.8"


def test_shell_script_install_pins() -> None:
    text = (
        "#!/bin/bash\nset -euo pipefail\nV=0.6.10\nexport SPEC='>=0.6.10'\n"
        "pip install -U flashinfer-python==$V \"flashinfer-cubin$SPEC\" --index-url https://x/simple 2>&1 | tee log\n"
        "python -m pip install --upgrade-strategy eager flashinfer-jit-cache; uv add 'sglang[srt]==0.5.16'\n"
        "pipx install flashinfer-python==0.1\n"
        "echo pip install flashinfer-python==0.2\n"
        "sudo -H pip3 install -c constraints.txt -rreqs.txt\n"
    )
    ps = read_install_pins(src("launch.sh", text), "shell")
    assert ps.format == "shell"
    p = only(ps)
    assert p.version == "0.6.10" and cut(text, p.spec_span) == "0.6.10" and cut(text, p.span) == "flashinfer-python==$V"
    cubin = only(ps, "flashinfer-cubin")
    assert cubin.specifier == ">=0.6.10" and cut(text, cubin.spec_span) == ">=0.6.10"
    assert only(ps, "flashinfer-jit-cache").specifier == ""
    assert only(ps, "sglang").version == "0.5.16"
    assert ps.includes == (ROOT / "constraints.txt", ROOT / "reqs.txt")


def test_install_tree_reads_requirement_files() -> None:
    ws = Workspace(ROOT, {ROOT / "constraints.txt": "flashinfer-python<0.6.17\n", ROOT / "reqs.txt": "flashinfer-python\n"})
    text = "pip install -c constraints.txt -r reqs.txt\n"
    tree = read_install_tree(src("setup.sh", text), "shell", ws)
    assert [(s.path.name, s.format) for s in tree] == [
        ("setup.sh", "shell"), ("constraints.txt", "constraints"), ("reqs.txt", "requirements")
    ]


# -- robustness ---------------------------------------------------------------------------------

GARBAGE = [
    "", "\x00\x01", "[[[", "=\n==\n", "\\", "-r", "-r\n-c", "a @", "x[", "x(", "flashinfer-python==",
    '"""', "'''", "{", "dependencies:\n  - pip:\n    - !!binary AAA", "RUN [\"pip\"", "RUN <<EOF\n",
    "ARG X=${", "pip install 'unterminated", "[tool.poetry.dependencies]\nx = {version = 1}",
    "[packages]\nx = [1, 2]", "dependencies: 5", "dependencies:\n  - {pip: 3}\n  - [1]\n  - ~",
    "flashinfer-python>=0.6 ; ;", "\r\r\n\\\r\n\\", "ENV", "RUN", "FROM", "[project]\ndependencies = 'x'",
    "[project.optional-dependencies]\nx = 3", "[dependency-groups]\nx = [{include-group = 3}, 4]",
]


@pytest.mark.parametrize("text", GARBAGE)
def test_readers_never_raise(text: str) -> None:
    ws = Workspace(ROOT, {})
    for ps in (
        read_requirements(src("requirements.txt", text), ws),
        read_pyproject(src("pyproject.toml", text)),
        read_pipfile(src("Pipfile", text)),
        read_conda_env(src("environment.yml", text)),
        read_install_pins(src("Dockerfile", text), "dockerfile", ws),
        read_install_pins(src("run.sh", text), "shell", ws),
    ):
        assert isinstance(ps, PinSource)
        for p in ps.pins:
            assert 0 <= p.span.start <= p.span.end <= len(text)
            if p.spec_span is not None:
                assert 0 <= p.spec_span.start <= p.spec_span.end <= len(text)
    assert read_requirements_tree(src("requirements.txt", text), ws)
