"""``-r``/``-c`` includes that cannot be read fail closed (issue 32, red-team finding F1).

An include kimi-lsp cannot read (missing, a dangling link, a FIFO, a directory, over the size
limit, undecodable, a URL, a ``${VAR}``, past the file budget) is a source with no pins and the
reason, worded as an unreadable pin file is (``{name}: why`` at 0:0) and naming the directive and
its line: what it would pin is unknown, so the launch it governs is never "All checks passed".
What pip reads, kimi-lsp reads: a Latin-1 file with a PEP 263 coding line, a chain of any depth.
This holds for a tree that installs the launch's stack (it pins sglang or a flashinfer package);
a docs or tests requirements file's dangling ``-r`` stays its own problem (zero false positives).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from kimi_lsp.engine import Engine
from kimi_lsp.pins import discovery
from kimi_lsp.pins.conda_env import read_conda_env_tree
from kimi_lsp.pins.install_cmds import read_install_tree
from kimi_lsp.pins.model import PinFormat, PinSource
from kimi_lsp.pins.requirements import include_target, pip_decode
from kimi_lsp.text import Span
from kimi_lsp.workspace import MAX_FILE_BYTES, SourceText, Workspace

OLD = "flashinfer-python==0.6.16.post4\n"
K3 = "model-path: moonshotai/Kimi-K3\ntp-size: 8\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"


def _repo(tmp_path: Path, line: str = "-r gpu.txt") -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "requirements.txt").write_text(f"sglang==0.5.23\n{line}\n", encoding="utf-8")
    (repo / "k3.yaml").write_text(K3, encoding="utf-8")
    return repo


def _tree(repo: Path) -> tuple[PinSource, ...]:
    return discovery.read_pin_file(repo / "requirements.txt", Workspace(repo))


def _unreadable(sources: tuple[PinSource, ...], name: str) -> PinSource:
    found = [s for s in sources if s.path.name == name]
    assert len(found) == 1, [s.path.name for s in sources]
    src = found[0]
    assert src.pins == () and len(src.problems) == 1
    problem = src.problems[0]
    # the shape of an unreadable pin file's problem (rules/_flashinfer.py's "broken" finding)
    assert problem.span == Span(0, 0) and problem.message.startswith(f"{name}: "), problem
    return src


def _make_fifo(p: Path) -> None:
    os.mkfifo(p)


def _make_dangling(p: Path) -> None:
    p.symlink_to(p.parent / "nowhere.txt")


def _make_dir(p: Path) -> None:
    p.mkdir()


def _make_large(p: Path) -> None:
    with open(p, "wb") as f:
        f.write(OLD.encode())
        f.truncate(MAX_FILE_BYTES + 1)  # (sparse: no 8 MiB written)


def _make_latin1_without_coding_line(p: Path) -> None:
    p.write_bytes(b"flashinfer-python==0.6.16.post4  # caf\xe9\n")


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (None, "file not found"),
        (_make_dangling, "file not found"),
        (_make_fifo, "not a regular file"),
        (_make_dir, "not a regular file"),
        (_make_large, "file too large"),
        (_make_latin1_without_coding_line, "not valid UTF-8"),
    ],
    ids=["missing", "dangling-link", "fifo", "directory", "over-8-MiB", "latin-1-without-coding-line"],
)
def test_an_include_that_cannot_be_read_is_a_source_that_says_why(tmp_path: Path, make, why: str) -> None:
    repo = _repo(tmp_path)
    if make is not None:
        make(repo / "gpu.txt")
    sources = _tree(repo)  # (a FIFO is never opened for reading: this returns)
    assert [s.path.name for s in sources] == ["requirements.txt", "gpu.txt"]
    message = _unreadable(sources, "gpu.txt").problems[0].message
    assert why in message and "`-r gpu.txt` on line 2 of requirements.txt" in message, message


@pytest.mark.parametrize(
    ("line", "name", "why"),
    [
        ("-c https://example.invalid/constraints-gpu.txt", "https:%2F%2Fexample.invalid%2Fconstraints-gpu.txt", "a URL"),
        ("--constraint=https://example.invalid/c.txt", "https:%2F%2Fexample.invalid%2Fc.txt", "a URL"),
        ("-r ${GPU_REQUIREMENTS}", "${GPU_REQUIREMENTS}", "pip expands ${GPU_REQUIREMENTS} from the environment"),
        ("-r reqs/${CUDA}/gpu.txt", "reqs%2F${CUDA}%2Fgpu.txt", "pip expands ${CUDA}"),
    ],
)
def test_a_url_or_an_environment_variable_is_not_read_and_says_so(tmp_path: Path, line: str, name: str, why: str) -> None:
    repo = _repo(tmp_path, line)
    src = _unreadable(_tree(repo), name)
    assert why in src.problems[0].message and "line 2 of requirements.txt" in src.problems[0].message
    assert src.format is (PinFormat.CONSTRAINTS if "-c" in line or "constraint" in line else PinFormat.REQUIREMENTS)
    assert src.path.parent == repo  # one name beside the includer: no real file can be taken for it


def test_the_environment_is_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pip would read ${GPU_REQUIREMENTS} where it runs; the lint's own environment says nothing of that."""
    repo = _repo(tmp_path, "-r ${GPU_REQUIREMENTS}")
    (repo / "gpu.txt").write_text(OLD, encoding="utf-8")
    monkeypatch.setenv("GPU_REQUIREMENTS", "gpu.txt")
    assert all(not s.pins for s in _tree(repo)[1:])


def test_dollar_and_tilde_are_literal_in_a_requirements_file_as_in_pip(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert include_target(repo / "requirements.txt", "$HOME/x.txt") == repo / "$HOME" / "x.txt"
    assert include_target(repo / "requirements.txt", "~/x.txt") == repo / "~" / "x.txt"
    assert isinstance(include_target(repo / "requirements.txt", "~/x.txt", shell=True), str)
    assert isinstance(include_target(repo / "requirements.txt", "$REQS", shell=True), str)


def test_a_latin_1_file_with_a_coding_line_is_read_as_pip_reads_it(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "gpu.txt").write_bytes(b"# -*- coding: latin-1 -*-\nflashinfer-python==0.6.16.post4  # caf\xe9\n")
    gpu = _tree(repo)[1]
    assert gpu.path.name == "gpu.txt" and not gpu.problems
    assert [(p.name, p.version) for p in gpu.pins] == [("flashinfer-python", "0.6.16.post4")]


def test_pip_decode() -> None:
    assert pip_decode(b"# coding: latin-1\na\xe9\n") == ("# coding: latin-1\na\u00e9\n", "iso8859-1")
    assert pip_decode(b"a==1\n# coding=cp1252\n\x80\n") == ("a==1\n# coding=cp1252\n\u20ac\n", "cp1252")
    assert pip_decode(b"a==1\nb==2\n# coding: latin-1\n\xe9") is None  # third line: not pip's
    assert pip_decode(b" # coding: latin-1\n\xe9") is None  # not a comment line
    assert pip_decode(b"# coding: no-such-codec\n\xe9") is None
    assert pip_decode(b"# coding: utf-8\n\xe9") is None  # it says UTF-8, and is not
    assert pip_decode(b"\xef\xbb\xbf# coding: latin-1\n\xe9") is None  # a BOM decides first


def test_a_chain_deeper_than_32_is_read_to_its_end(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "-r c1.txt")
    for i in range(1, 41):
        (repo / f"c{i}.txt").write_text(f"-r c{i + 1}.txt\n", encoding="utf-8")
    (repo / "c41.txt").write_text(OLD, encoding="utf-8")
    sources = _tree(repo)
    assert len(sources) == 42 and not any(s.problems for s in sources)
    assert sources[-1].pins[0].version == "0.6.16.post4"


def test_past_the_file_budget_the_next_include_is_unreadable(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "\n".join(f"-r f{i}.txt" for i in range(300)))
    for i in range(300):
        (repo / f"f{i}.txt").write_text("", encoding="utf-8")
    sources = _tree(repo)
    assert len(sources) == 257
    assert "more than 256 requirements files" in _unreadable(sources, "f255.txt").problems[0].message


def test_each_include_is_read_once_and_a_cycle_ends(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "-r a.txt\n-r a.txt\n-r missing.txt\n-r missing.txt")
    (repo / "a.txt").write_text("-r requirements.txt\n-r a.txt\n", encoding="utf-8")
    assert [s.path.name for s in _tree(repo)] == ["requirements.txt", "a.txt", "missing.txt"]


def test_conda_pip_includes_fail_closed(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    env = repo / "environment.yml"
    env.write_text("dependencies:\n  - python=3.11\n  - pip:\n    - -r gpu.txt\n    - -c https://x.invalid/c.txt\n"
                   "    - sglang==0.5.23\n", encoding="utf-8")
    ws = Workspace(repo)
    got = ws.read(env)
    assert isinstance(got, SourceText)
    tree = read_conda_env_tree(got, ws)
    assert "line 4 of environment.yml" in _unreadable(tree, "gpu.txt").problems[0].message
    assert _unreadable(tree, "https:%2F%2Fx.invalid%2Fc.txt").format is PinFormat.CONSTRAINTS


def test_a_tree_that_installs_no_stack_keeps_its_dangling_include_to_itself(tmp_path: Path) -> None:
    """Zero false positives: a docs requirements file whose ``-r`` is missing pins neither sglang
    nor flashinfer (another install): what it would add is no launch's stack, so it gives no
    unreadable source (the includer keeps its "included file not found"), as before; the same
    include under a file that pins the stack fails closed."""
    repo = _repo(tmp_path)
    (repo / "gpu.txt").write_text(OLD, encoding="utf-8")
    docs = repo / "requirements-docs.txt"
    docs.write_text("sphinx==7.2\n-r docs/missing.txt\n-c https://x.invalid/c.txt\n", encoding="utf-8")
    tree = discovery.read_pin_file(docs, Workspace(repo))
    assert [s.path.name for s in tree] == ["requirements-docs.txt"]
    assert "included file not found: docs/missing.txt" in [p.message for p in tree[0].problems]
    docs.write_text("sphinx==7.2\nflashinfer-python==0.7.2\n-r docs/missing.txt\n", encoding="utf-8")
    _unreadable(discovery.read_pin_file(docs, Workspace(repo)), "missing.txt")
    nested = repo / "requirements-gpu.txt"  # (the stack anywhere in the tree: here two includes down)
    nested.write_text("-r base.txt\n-r missing.txt\n", encoding="utf-8")
    (repo / "base.txt").write_text("-r gpu.txt\n", encoding="utf-8")
    _unreadable(discovery.read_pin_file(nested, Workspace(repo)), "missing.txt")


def test_install_command_includes_fail_closed(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    script = repo / "setup.sh"
    script.write_text("set -e\npip install -r gpu.txt -c https://x.invalid/c.txt -r \"$REQS\"\n", encoding="utf-8")
    ws = Workspace(repo)
    got = ws.read(script)
    assert isinstance(got, SourceText)
    tree = read_install_tree(got, "shell", ws)
    assert "`-r gpu.txt` on line 2 of setup.sh" in _unreadable(tree, "gpu.txt").problems[0].message
    assert "a shell expansion" in _unreadable(tree, "$REQS").problems[0].message
    _unreadable(tree, "https:%2F%2Fx.invalid%2Fc.txt")


def test_a_pyproject_dynamic_dependency_file_that_cannot_be_read_fails_closed(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "requirements.txt").unlink()
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "1"\ndynamic = ["dependencies"]\n\n'
        '[tool.setuptools.dynamic]\ndependencies = { file = ["gpu.txt"] }\n', encoding="utf-8")
    tree = discovery.read_pin_file(repo / "pyproject.toml", Workspace(repo))
    assert '`file = "gpu.txt"` on line 7 of pyproject.toml' in _unreadable(tree, "gpu.txt").problems[0].message


def test_the_launch_gets_the_unreadable_pin_file_error(tmp_path: Path) -> None:
    """End to end: the same KL101 an unreadable requirements.txt gets, naming the include."""
    repo = _repo(tmp_path)
    eng = Engine(Workspace(repo))
    diags = eng.lint_file(repo / "k3.yaml").diagnostics
    assert [d.code for d in diags] == ["KL101"]
    assert "gpu.txt, cannot be read: gpu.txt: file not found (`-r gpu.txt` on line 2 of requirements.txt)" in diags[0].message
