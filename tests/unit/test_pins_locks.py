"""Lockfile readers against real lockfiles written by the real tools (tests/pins_fixtures/,
made by scripts/make_lock_fixtures.sh), plus broken files."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.pins import _lock_readers, locks
from kimi_lsp.pins.model import PinFormat, PinSource
from kimi_lsp.workspace import SourceText

FIXTURES = Path(__file__).resolve().parents[1] / "pins_fixtures"
FI = "flashinfer-python"


def _src(rel: str, text: str | None = None) -> SourceText:
    path = FIXTURES / rel
    return SourceText(path, path.read_text(encoding="utf-8") if text is None else text)


def _read(rel: str, fmt: str, text: str | None = None) -> tuple[SourceText, PinSource]:
    src = _src(rel, text)
    return src, locks.read_lock(src, fmt)


# (fixture, format, tool, locked flashinfer-python versions in file order)
REAL = [
    ("uv-lock/pinned-old/uv.lock", "uv.lock", "uv", ["0.6.16.post4"]),
    ("uv-lock/ok/uv.lock", "uv.lock", "uv", ["0.6.17"]),
    ("uv-lock/range-old/uv.lock", "uv.lock", "uv", ["0.6.10"]),
    ("uv-lock/sglang-only/uv.lock", "uv.lock", "uv", ["0.7.2"]),
    ("uv-lock/sglang-old/uv.lock", "uv.lock", "uv", ["0.6.14"]),
    ("uv-lock/sglang-override/uv.lock", "uv.lock", "uv", ["0.6.17"]),
    ("uv-lock/fork/uv.lock", "uv.lock", "uv", ["0.6.16.post4", "0.6.17"]),
    ("uv-lock/workspace/uv.lock", "uv.lock", "uv", ["0.6.16.post4"]),
    ("poetry-lock/pinned-old/poetry.lock", "poetry.lock", "poetry", ["0.6.16.post4"]),
    ("poetry-lock/sglang/poetry.lock", "poetry.lock", "poetry", ["0.7.2"]),
    ("pdm-lock/range-old/pdm.lock", "pdm.lock", "pdm", ["0.6.16.post4", "0.6.16.post4"]),
    ("pipfile-lock/pinned/Pipfile.lock", "Pipfile.lock", "pipenv", ["0.6.10"]),
    ("pylock/uv-export/pylock.toml", "pylock", "uv", ["0.6.16.post4"]),
    ("pylock/pip-lock/pylock.toml", "pylock", "pip", ["0.6.10"]),
    ("conda-lock/pip-entries/conda-lock.yml", "conda-lock", "conda", ["0.6.16.post4", "0.6.16.post4"]),
]


@pytest.mark.parametrize(("rel", "fmt", "tool", "versions"), REAL, ids=[r[0] for r in REAL])
def test_real_lock_flashinfer_entry(rel: str, fmt: str, tool: str, versions: list[str]) -> None:
    src, ps = _read(rel, fmt)
    assert ps.problems == ()
    assert ps.is_lock and ps.format == fmt and ps.tool == tool
    pins = ps.pins_for(FI)
    assert [p.version for p in pins] == versions
    for pin in pins:
        entry = src.text[pin.span.start : pin.span.end]
        # the related location covers the entry: its name and its locked version
        assert FI in entry and pin.version in entry, entry
        assert src.text[pin.written_name.span.start : pin.written_name.span.end] == pin.written_name.value
        assert pin.specifier == f"=={pin.version}"
        assert pin.spec_span is None  # a lock is never edited
        # the span starts on the entry's own name line, not somewhere before it
        first_line = src.lines.line_text(src.lines.line_of(pin.span.start))
        assert FI in first_line


@pytest.mark.parametrize(
    ("rel", "start", "end"),
    [
        ("uv-lock/pinned-old/uv.lock", 'name = "flashinfer-python"', 'version = "0.6.16.post4"'),
        ("poetry-lock/pinned-old/poetry.lock", 'name = "flashinfer-python"', 'version = "0.6.16.post4"'),
        ("pylock/pip-lock/pylock.toml", 'name = "flashinfer-python"', 'version = "0.6.10"'),
    ],
)
def test_toml_span_is_name_line_through_version_line(rel: str, start: str, end: str) -> None:
    fmt = {"uv.lock": "uv.lock", "poetry.lock": "poetry.lock", "pylock.toml": "pylock"}[Path(rel).name]
    src, ps = _read(rel, fmt)
    (pin,) = ps.pins_for(FI)
    assert src.text[pin.span.start : pin.span.end] == f"{start}\n{end}"


def test_relock_commands() -> None:
    assert _read("uv-lock/ok/uv.lock", "uv.lock")[1].relock_command == "uv lock --upgrade-package {name}"
    assert _read("poetry-lock/sglang/poetry.lock", "poetry.lock")[1].relock_command == "poetry update --lock {name}"
    assert _read("pdm-lock/range-old/pdm.lock", "pdm.lock")[1].relock_command == "pdm update --no-sync {name}"
    assert _read("pipfile-lock/pinned/Pipfile.lock", "Pipfile.lock")[1].relock_command == "pipenv lock"
    uv_pylock = _read("pylock/uv-export/pylock.toml", "pylock")[1]
    # uv records its export command in the header; re-lock, then re-export
    assert uv_pylock.relock_command == (
        "uv lock --upgrade-package {name} && uv export --no-progress --format pylock.toml -o pylock.toml"
    )
    assert _read("pylock/pip-lock/pylock.toml", "pylock")[1].relock_command is None
    conda = _read("conda-lock/pip-entries/conda-lock.yml", "conda-lock")[1]
    assert conda.relock_command == "conda-lock lock --lockfile conda-lock.yml --update {name}"


def test_uv_lock_reads_every_package_and_every_fork_entry() -> None:
    _, ps = _read("uv-lock/sglang-only/uv.lock", "uv.lock")
    assert len(ps.pins) == 212  # uv: "Resolved 212 packages"
    assert [p.version for p in ps.pins_for("sglang")] == ["0.5.23"]
    # numpy is locked twice under resolution-markers forks in the real lock
    numpy = ps.pins_for("numpy")
    assert len(numpy) == 2 and all(p.marker and "python_full_version" in p.marker for p in numpy)


def test_uv_fork_markers() -> None:
    _, ps = _read("uv-lock/fork/uv.lock", "uv.lock")
    old, new = ps.pins_for(FI)
    assert old.marker == "python_full_version < '3.12'"
    assert new.marker == "python_full_version >= '3.12'"


def test_uv_lock_requirements_echo_the_manifest() -> None:
    src = _src("uv-lock/range-old/uv.lock")
    (req,) = [p for p in locks.uv_lock_requirements(src) if p.name == FI]
    assert req.specifier == ">=0.6.10,<0.7" and req.version is None and req.extras == ("cu13",)
    assert src.text[req.span.start : req.span.end] == (
        '{ name = "flashinfer-python", extras = ["cu13"], specifier = ">=0.6.10,<0.7" }'
    )
    assert src.text[req.written_name.span.start : req.written_name.span.end] == FI
    # the echoes are not locked entries: the lock's pins keep only what gets installed
    assert [p.version for p in locks.read_uv_lock(src).pins_for(FI)] == ["0.6.10"]


def test_uv_lock_requirements_overrides_and_members() -> None:
    src = _src("uv-lock/sglang-override/uv.lock")
    reqs = locks.uv_lock_requirements(src)
    (override,) = [p for p in reqs if p.override]
    assert (override.name, override.specifier, override.version) == (FI, "==0.6.17", "0.6.17")
    assert src.text[override.span.start : override.span.end].startswith('{ name = "flashinfer-python"')
    assert [p.specifier for p in reqs if p.name == "sglang"] == ["==0.5.16"]
    ws = _src("uv-lock/workspace/uv.lock")
    assert sorted((p.name, p.specifier) for p in locks.uv_lock_requirements(ws)) == [
        ("flashinfer-cubin", "==0.6.16.post4"),
        (FI, "==0.6.16.post4"),
    ]


def test_uv_lock_requirements_dev_groups() -> None:
    text = """version = 1
revision = 3
requires-python = ">=3.11"

[manifest]
constraints = [{ name = "flashinfer-python", specifier = "<=0.6.10" }]

[[package]]
name = "app"
version = "0.1.0"
source = { virtual = "." }

[package.metadata]
requires-dist = [
    { name = "flashinfer-python", marker = "extra == 'serve'", specifier = "==0.6.10" },
]

[package.metadata.requires-dev]
gpu = [{ name = "flashinfer-cubin", specifier = "==0.6.10" }]
"""
    src = SourceText(Path("/x/uv.lock"), text)
    reqs = locks.uv_lock_requirements(src)
    assert [(p.name, p.specifier, p.group, p.constraint, p.marker) for p in reqs] == [
        (FI, "<=0.6.10", None, True, None),
        (FI, "==0.6.10", None, False, "extra == 'serve'"),
        ("flashinfer-cubin", "==0.6.10", "gpu", False, None),
    ]
    assert text[reqs[2].span.start : reqs[2].span.end] == '{ name = "flashinfer-cubin", specifier = "==0.6.10" }'


def test_pdm_extras_entry() -> None:
    _, ps = _read("pdm-lock/range-old/pdm.lock", "pdm.lock")
    plain, extra = ps.pins_for(FI)
    assert plain.extras == () and extra.extras == ("cu13",)
    assert plain.group is None and plain.hashed


def test_poetry_transitive_pin_via_sglang() -> None:
    _, ps = _read("poetry-lock/sglang/poetry.lock", "poetry.lock")
    assert {p.name: p.version for p in ps.pins} == {FI: "0.7.2", "sglang": "0.5.23"}


def test_pipfile_lock_positions_and_fields() -> None:
    src, ps = _read("pipfile-lock/pinned/Pipfile.lock", "Pipfile.lock")
    (pin,) = ps.pins_for(FI)
    assert pin.specifier == "==0.6.10"  # Pipfile.lock keeps the operator
    assert pin.version == "0.6.10"
    assert pin.extras == ("cu13",) and pin.marker == "python_version >= '3.10'" and pin.hashed
    entry = src.text[pin.span.start : pin.span.end]
    assert entry.startswith('"flashinfer-python": {') and entry.endswith("}")
    assert '"version": "==0.6.10"' in entry
    assert src.text[pin.written_name.span.start - 1 : pin.written_name.span.end + 1] == '"flashinfer-python"'
    assert [p.version for p in ps.pins_for("flashinfer-cubin")] == ["0.6.10"]


def test_pipfile_lock_categories_and_unpinned_entries() -> None:
    text = """{
    "_meta": {"hash": {"sha256": "00"}, "pipfile-spec": 6, "requires": {}, "sources": []},
    "default": {},
    "develop": {
        "Flashinfer_Python": {"version": "==0.6.16.post4", "hashes": []},
        "tool": {"git": "https://example.invalid/tool.git", "ref": "abc"}
    },
    "gpu": {"flashinfer-cubin": {"version": "*"}}
}"""
    src = SourceText(Path("/x/Pipfile.lock"), text)
    ps = locks.read_pipfile_lock(src)
    assert ps.problems == ()
    (fi,) = ps.pins_for(FI)
    assert (fi.group, fi.version, fi.written_name.value) == ("develop", "0.6.16.post4", "Flashinfer_Python")
    assert text[fi.written_name.span.start : fi.written_name.span.end] == "Flashinfer_Python"
    (tool,) = ps.pins_for("tool")
    assert tool.version is None and tool.specifier == ""
    (cubin,) = ps.pins_for("flashinfer-cubin")
    assert (cubin.group, cubin.specifier, cubin.version) == ("gpu", "", None)


def test_pylock_table_and_inline_wheel_forms() -> None:
    src, ps = _read("pylock/pip-lock/pylock.toml", "pylock")
    assert "[[packages.wheels]]" in src.text  # pip writes sub-tables
    (pin,) = ps.pins
    assert pin.version == "0.6.10" and pin.hashed
    src, ps = _read("pylock/uv-export/pylock.toml", "pylock")
    assert "wheels = [{ url" in src.text  # uv writes inline tables
    (pin,) = ps.pins_for(FI)
    assert pin.marker == "platform_machine == 'x86_64' and sys_platform == 'linux'"


def test_pylock_version_from_wheel_name_when_omitted() -> None:
    text = """lock-version = "1.0"
created-by = "some-tool"

[[packages]]
name = "flashinfer-python"
wheels = [{ url = "https://files.example.invalid/flashinfer_python-0.6.16.post4-py3-none-any.whl", hashes = { sha256 = "00" } }]
"""
    ps = locks.read_pylock(SourceText(Path("/x/pylock.toml"), text))
    (pin,) = ps.pins
    assert pin.version == "0.6.16.post4" and ps.tool == "some-tool" and ps.relock_command is None


def test_conda_lock_every_platform_pip_only() -> None:
    src, ps = _read("conda-lock/pip-entries/conda-lock.yml", "conda-lock")
    assert {p.name for p in ps.pins} == {FI}  # conda-managed python/pip are not PyPI pins
    spans = [src.text[p.span.start : p.span.end] for p in ps.pins_for(FI)]
    assert "platform: linux-64" in spans[0] and "platform: linux-aarch64" in spans[1]
    assert all(s.startswith("name: flashinfer-python\n  version: 0.6.16.post4") for s in spans)


def test_crlf_positions() -> None:
    text = _src("poetry-lock/pinned-old/poetry.lock").text.replace("\n", "\r\n")
    src, ps = _read("poetry-lock/pinned-old/poetry.lock", "poetry.lock", text)
    assert ps.problems == ()
    (pin,) = ps.pins_for(FI)
    assert src.text[pin.span.start : pin.span.end] == 'name = "flashinfer-python"\r\nversion = "0.6.16.post4"'


def test_read_lock_unknown_format() -> None:
    ps = locks.read_lock(SourceText(Path("/x/foo.lock"), ""), PinFormat.REQUIREMENTS)  # no lock reader for it
    assert ps.pins == () and [p.message for p in ps.problems] == ["not a lockfile format: requirements"]


# -- broken files ---------------------------------------------------------------------------

BROKEN = [
    ("uv.lock", "version = 1\n[[package]]\nname = \"flashinfer-python\"\nversion = 0.6.10\n", 3),
    # after a wheel list (left out of the fast parse): the position is still the file's
    ("uv.lock", 'version = 1\n[[package]]\nname = "a"\nversion = "1"\nwheels = [\n    { url = "u", hash = "h" },\n]\n'
     '[[package]]\nname = "flashinfer-python"\nversion = 0.6.10\n', 9),
    ("poetry.lock", "[[package]]\nname = \"flashinfer-python\"\nversion = \"0.6.10\"\n[[package\n", 3),
    ("pdm.lock", "[metadata\n", 0),
    ("pylock", 'lock-version = "1.0"\n[[packages]]\nname = "x"\nname = "y"\n', 3),
    ("Pipfile.lock", '{\n  "default": {\n    "flashinfer-python": {"version": "==0.6.10",}\n  }\n}\n', 2),
    ("conda-lock", "version: 1\npackage:\n- name: x\n  version: [1\n", None),
]


@pytest.mark.parametrize(("fmt", "text", "line"), BROKEN, ids=[f"{b[0]}-{i}" for i, b in enumerate(BROKEN)])
def test_syntax_errors_become_located_problems(fmt: str, text: str, line: int | None) -> None:
    src = SourceText(Path(f"/x/{fmt}"), text)
    ps = locks.read_lock(src, fmt)
    assert ps.pins == () and ps.is_lock
    (problem,) = ps.problems
    assert src.path.name in problem.message
    if line is not None:
        assert src.lines.position(problem.span.start)[0] == line


@pytest.mark.parametrize(
    ("fmt", "text", "needle"),
    [
        ("uv.lock", 'version = 1\npackage = "nope"\n', "not an array of tables"),
        ("uv.lock", "[[package]]\nversion = \"1\"\n", "has no name"),
        ("poetry.lock", "[[package]]\nname = \"x\"\nversion = 3\n", "not a string"),
        ("pylock", '[[packages]]\nname = "x"\nversion = "1"\n', "no lock-version"),
        ("Pipfile.lock", "[1, 2]", "not a JSON object"),
        ("Pipfile.lock", '{"default": {"x": "==1"}}', "not an object"),
        ("Pipfile.lock", "", "not valid JSON"),
        ("conda-lock", "just: text\n", "no `package:` list"),
        ("conda-lock", "package:\n- manager: pip\n  version: 1\n", "has no name"),
        ("conda-lock", "", "no `package:` list"),
    ],
)
def test_wrong_shapes_are_problems(fmt: str, text: str, needle: str) -> None:
    ps = locks.read_lock(SourceText(Path(f"/x/{fmt}"), text), fmt)
    assert any(needle in p.message for p in ps.problems), ps.problems


def test_broken_entry_does_not_hide_the_others() -> None:
    text = '[[package]]\nversion = "1"\n\n[[package]]\nname = "flashinfer-python"\nversion = "0.6.10"\n'
    ps = locks.read_poetry_lock(SourceText(Path("/x/poetry.lock"), text))
    assert [p.version for p in ps.pins_for(FI)] == ["0.6.10"]
    assert len(ps.problems) == 1


def test_inline_package_array_still_located() -> None:
    # not what any tool writes, but valid TOML: locate the entries by their names
    text = 'package = [\n  { name = "a", version = "1" },\n  { name = "flashinfer-python", version = "0.6.10" },\n]\n'
    ps = locks.read_poetry_lock(SourceText(Path("/x/poetry.lock"), text))
    (pin,) = ps.pins_for(FI)
    assert pin.version == "0.6.10"
    assert text[pin.written_name.span.start : pin.written_name.span.end] == FI


def test_readers_never_raise_on_garbage() -> None:
    garbage = ["\x00\x01", "[[package]]\n" * 3, "{" * 50, "- - - :", '"""', "package:\n  - 3\n  - [a]\n"]
    for fmt in locks.LOCK_FORMATS:
        for text in garbage:
            ps = locks.read_lock(SourceText(Path(f"/x/{fmt}"), text), fmt)
            assert isinstance(ps, PinSource)


_TOML_LOCKS = {"uv.lock": "uv.lock", "poetry.lock": "poetry.lock", "pdm.lock": "pdm.lock", "pylock.toml": "pylock"}


@pytest.mark.parametrize(
    "path",
    sorted(p for p in FIXTURES.parent.rglob("*") if p.name in _TOML_LOCKS),  # every lock under tests/
    ids=lambda p: str(p.relative_to(FIXTURES.parent)),
)
def test_artifact_lists_left_out_change_no_pin(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Leaving the wheel/sdist/file lists out of the parse (and, for uv.lock, the scan) reads every
    lock fixture exactly as a parse of the whole file does: pins, spans, hashed, problems."""
    fmt = _TOML_LOCKS[path.name]
    src = SourceText(path, path.read_text(encoding="utf-8"))
    fast = locks.read_lock(src, fmt)
    monkeypatch.setattr(_lock_readers, "_SKIPPABLE", set())
    monkeypatch.setattr(locks, "_scan_uv_lock", lambda source: None)
    assert locks.read_lock(src, fmt) == fast


def test_pylock_without_version_is_read_with_its_artifacts() -> None:
    """A pylock package that omits ``version`` keeps it in a wheel's file name: the lists that the
    parse otherwise leaves out are read again for it, also in uv's one-item-per-line form."""
    text = """lock-version = "1.0"
created-by = "uv"

[[packages]]
name = "flashinfer-python"
sdist = { url = "https://files.example.invalid/flashinfer_python-0.6.17.tar.gz", upload-time = 2026-10-29T21:13:25Z }
wheels = [
    { url = "https://files.example.invalid/flashinfer_python-0.6.17-py3-none-any.whl", upload-time = 2026-10-29T21:12:09Z, size = 1, hashes = { sha256 = "00" } },
]

[[packages]]
name = "sglang"
version = "0.5.23"
wheels = [{ url = "https://files.example.invalid/sglang-0.5.23-py3-none-any.whl", hashes = { sha256 = "00" } }]
"""
    ps = locks.read_pylock(SourceText(Path("/x/pylock.toml"), text))
    assert [(p.name, p.version, p.hashed) for p in ps.pins] == [("flashinfer-python", "0.6.17", True), ("sglang", "0.5.23", True)]
    assert ps.problems == ()


@pytest.mark.parametrize("path", sorted(FIXTURES.parent.rglob("conda-lock*.yml")), ids=lambda p: str(p.relative_to(FIXTURES.parent)))
def test_conda_lock_reads_alike_through_libyaml_and_the_pure_python_composer(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """conda-lock.yml is composed through syntax.yaml.load (libyaml); the pure-Python composer it
    replaced (still used for a file libyaml finds anything wrong with) reads the same pins."""
    import kimi_lsp.syntax.yaml as syntax_yaml

    src = SourceText(path, path.read_text(encoding="utf-8"))
    fast = locks.read_conda_lock(src)
    monkeypatch.setattr(syntax_yaml, "load", lambda text: syntax_yaml.Loaded())  # every file takes the old path
    assert locks.read_conda_lock(src) == fast and fast.pins
