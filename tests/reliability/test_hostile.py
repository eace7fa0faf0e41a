"""Hostile input: each gets a clear diagnostic (or is skipped, with the reason noted here), within
bounded time and memory.

No test times a run (wall-clock limits failed on a busy machine): the work an input costs is
counted (``_support.work``: the functions and built-ins called) and compared between input sizes
(``growth``: ~4 for four times the input when linear, ~16 when quadratic) or per unit of input.
Memory is measured with tracemalloc where the input could make the process allocate without
bound (alias bombs, nesting).
"""
from __future__ import annotations

import builtins
import io
import json
import os
import sys
import tracemalloc
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from kimi_lsp.cli.main import main as cli_main
from kimi_lsp.pins import discovery
from kimi_lsp.walk import walk
from kimi_lsp import workspace as workspace_module
from kimi_lsp.workspace import MAX_FILE_BYTES, Workspace

from ._support import fresh_engine, growth, make_repo, work

K3 = "model-path: moonshotai/Kimi-K3\ntp-size: 8\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"
MB = 1024 * 1024


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo")
    (root / "requirements.txt").write_text("sglang==0.5.23\nflashinfer-python==0.6.16.post4\n", "utf-8")
    return root


def lint(root: Path, name: str, data: bytes | str, *, max_mb: float | None = None):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, "utf-8", newline="")
    else:
        path.write_bytes(data)
    eng = fresh_engine(root)
    if max_mb is not None:
        tracemalloc.start()
    try:
        result = eng.lint_file(path)
    finally:
        if max_mb is not None:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
    if max_mb is not None:
        assert peak < max_mb * MB, f"{name}: peak {peak / MB:.0f} MiB"
    assert not eng.errors, eng.errors
    return result


def codes(result, path: Path | None = None) -> list[str]:
    return [d.code for d in result.diagnostics if path is None or d.path == path]


def messages(result, code: str) -> list[str]:
    return [d.message for d in result.diagnostics if d.code == code]


# -- YAML bombs and depth -----------------------------------------------------------------------


def billion_laughs(levels: int = 9, width: int = 9) -> str:
    """An sglang config whose one value expands to width**levels strings (387M for 9x9)."""
    lines = ["model-path: moonshotai/Kimi-K3", "tp-size: 8", "dcp-size: 8", "lora-paths:", '  - &a0 ["lol"]']
    for i in range(1, levels + 1):
        lines.append(f"  - &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    lines.append(f"served-model-name: *a{levels}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", ["k3.yaml", "deploy/k8s.yaml", ".github/workflows/ci.yml"])
def test_alias_bomb_is_refused_quickly(repo: Path, name: str) -> None:
    text = billion_laughs()
    if name != "k3.yaml":  # embedded launch surfaces: the bomb sits next to a real launch
        text = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - command: [python3, -m, sglang.launch_server]\n" + \
            "      args: *a9\n" + "x:\n" + "".join("  " + ln + "\n" for ln in billion_laughs().splitlines()[3:])
    result = lint(repo, name, text, max_mb=150)
    if name == "k3.yaml":
        assert any("alias" in m for m in messages(result, "KL001")), result.diagnostics
        # refused at a limit: 9 levels (387M strings) cost what 5 levels (59,000) do
        small = work(lambda: lint(repo, name, billion_laughs(5)))
        assert work(lambda: lint(repo, name, billion_laughs(9))) < 2 * small


def test_recursive_alias_does_not_loop(repo: Path) -> None:
    text = "model-path: moonshotai/Kimi-K3\nloop: &x [*x]\n"  # libyaml rejects; must not hang either way
    lint(repo, "k3.yaml", text, max_mb=100)


def deep_yaml(shape: str, n: int) -> str:
    if shape == "flow-seq":
        body = "[" * n + "]" * n
    elif shape == "flow-map":
        body = "{a: " * n + "1" + "}" * n
    elif shape == "block-map":
        body = "".join("  " * i + "a:\n" for i in range(n)) + "  " * n + "b: 1\n"
    else:
        body = "".join("  " * i + "-\n" for i in range(n)) + "  " * n + "1\n"
    # every root key an sglang option name, so the file is an sglang --config on its own
    key = "json-model-override-args"
    return f"model-path: moonshotai/Kimi-K3\ndcp-size: 8\n{key}:\n  " + body.replace("\n", "\n  ") if shape.startswith("block") else \
        f"model-path: moonshotai/Kimi-K3\ndcp-size: 8\n{key}: {body}\n"


@pytest.mark.parametrize("shape", ["flow-seq", "flow-map", "block-map", "block-seq"])
def test_deep_yaml_nesting(repo: Path, shape: str) -> None:
    n = 20_000 if shape.startswith("flow") else 2_000
    result = lint(repo, "k3.yaml", deep_yaml(shape, n), max_mb=300)
    assert any("nesting" in m for m in messages(result, "KL001")), [d.message for d in result.diagnostics]
    assert growth(lambda k: lint(repo, "k3.yaml", deep_yaml(shape, k)), n // 16) < 6  # linear in the depth


def test_deep_toml_nesting(repo: Path) -> None:
    def text(n: int) -> str:
        return '[sglang]\nmodel-path = "moonshotai/Kimi-K3"\nx = ' + "[" * n + "]" * n + "\n"

    result = lint(repo, "profile.toml", text(5_000), max_mb=300)
    assert "KL001" in codes(result), [(d.code, d.message) for d in result.diagnostics]
    assert growth(lambda n: lint(repo, "profile.toml", text(n)), 1_000) < 6


@pytest.mark.parametrize("name", ["uv.lock", "poetry.lock", "pylock.toml", "pyproject.toml", "Pipfile.lock", "conda-lock.yml"])
def test_deep_nesting_in_pin_files(repo: Path, name: str) -> None:
    n = 5_000
    if name == "Pipfile.lock":
        text = '{"default": ' + "[" * n + "]" * n + "}"
    elif name.endswith(".yml"):
        text = "package: " + "[" * n + "]" * n + "\n"
    else:
        text = "x = " + "[" * n + "]" * n + "\n"
    path = repo / name
    path.write_text(text, "utf-8")
    sources = discovery.read_pin_file(path, Workspace(repo))
    assert sources and sources[0].problems, sources
    lint(repo, "k3.yaml", K3)

    def read(k: int) -> None:
        path.write_text(text.replace("[" * n + "]" * n, "[" * k + "]" * k), "utf-8")
        discovery.read_pin_file(path, Workspace(repo))

    assert growth(read, n // 4) < 6


@pytest.mark.parametrize("name", ["pyproject.toml", "kimi-lsp.toml"])
def test_deep_nesting_in_project_files_above_a_member(repo: Path, name: str) -> None:
    """A deeply nested pyproject.toml / kimi-lsp.toml at the root: read for uv workspaces and
    for settings while linting a launch in a member project below it."""
    (repo / name).write_text("x = " + "[" * 5000 + "]" * 5000 + "\n", "utf-8")
    (repo / "member").mkdir()
    (repo / "member" / "pyproject.toml").write_text('[project]\nname = "m"\ndependencies = ["flashinfer-python==0.6.16.post4"]\n', "utf-8")
    result = lint(repo, "member/k3.yaml", K3)
    assert "KL101" in codes(result)  # the launch is still checked
    if name == "kimi-lsp.toml":  # and the broken configuration is reported on itself
        assert "KL002" in codes(fresh_engine(repo).lint_file(repo / name))


# -- size, binary, encodings ----------------------------------------------------------------------


def _count_decodes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The paths whose bytes are decoded (a file skipped for its size never is)."""
    decoded: list[Path] = []
    real = workspace_module.decode_bytes

    def spy(path: Path, data: bytes):
        decoded.append(path)
        return real(path, data)

    monkeypatch.setattr(workspace_module, "decode_bytes", spy)
    return decoded


def test_50_mb_launch_file_is_skipped_with_kl001(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = (K3 + "# padding " + "x" * 100 + "\n") * (50 * MB // 120)
    decoded = _count_decodes(monkeypatch)
    result = lint(repo, "k3.yaml", data, max_mb=64)
    assert len(data) > MAX_FILE_BYTES
    assert any("too large" in m for m in messages(result, "KL001"))
    assert repo / "k3.yaml" not in decoded  # skipped before a byte of it is decoded


def test_50_mb_pin_file_is_a_pin_problem(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "requirements.txt").write_bytes(b"flashinfer-python==0.6.16.post4\n" * (50 * MB // 32))
    decoded = _count_decodes(monkeypatch)
    sources = discovery.read_pin_file(repo / "requirements.txt", Workspace(repo))
    assert sources[0].problems and "too large" in sources[0].problems[0].message
    assert not [p for p in decoded if p.name == "requirements.txt"]
    result = lint(repo, "k3.yaml", K3)
    assert "KL001" not in codes(result)


def test_file_just_under_the_limit_is_linted_in_linear_work(repo: Path) -> None:
    # a 7 MiB config: big but legal; linear-time readers finish it
    def text(n: int) -> str:
        return K3 + "".join(f"# comment line {i} {'y' * 60}\n" for i in range(n))

    result = lint(repo, "k3.yaml", text(7 * MB // 80), max_mb=400)
    assert "KL101" in codes(result)
    assert growth(lambda n: lint(repo, "k3.yaml", text(n)), 3_000) < 6


# What each kind of launch file looks like, so that an undecodable copy is still recognisably one.
LAUNCHES = {
    "k3.yaml": K3,
    "run.sh": "python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --dcp-size 8\n",
    "Dockerfile": 'FROM lmsysorg/sglang:v0.5.23\nCMD ["python3", "-m", "sglang.launch_server"]\n',
    "profile.toml": '[sglang]\nmodel-path = "moonshotai/Kimi-K3"\n',
}


def kl001(result) -> list[tuple[str, str]]:
    return [(d.severity.value, d.message) for d in result.diagnostics if d.code == "KL001"]


@pytest.mark.parametrize("name", sorted(LAUNCHES))
def test_binary_file(repo: Path, name: str) -> None:
    data = LAUNCHES[name].encode() + bytes(range(256)) * 64
    result = lint(repo, name, data)
    assert any("binary" in m for m in messages(result, "KL001")), result.diagnostics


def test_binary_pin_file(repo: Path) -> None:
    (repo / "uv.lock").write_bytes(b"\x00\x01\x02" * 1000)
    sources = discovery.read_pin_file(repo / "uv.lock", Workspace(repo))
    assert sources[0].problems and "binary" in sources[0].problems[0].message
    lint(repo, "k3.yaml", K3)


@pytest.mark.parametrize("name", sorted(LAUNCHES))
def test_invalid_utf8(repo: Path, name: str) -> None:
    data = LAUNCHES[name].encode() + b"# bad: \xff\xfe\xc3(\n"
    result = lint(repo, name, data)
    found = messages(result, "KL001")
    assert any("UTF-8" in m and "0xff" in m for m in found), result.diagnostics


# issue 33: pre-commit passes every changed *.sh/*.toml/*.yml to the hook; one in latin-1 that never
# names sglang is outside the domain (was: KL001 error, exit 1).
@pytest.mark.parametrize(
    "name,data",
    [
        ("build.sh", b"echo caf\xe9\n"),
        ("data.toml", b'name = "caf\xe9"\n'),
        ("latin1.yml", b"greeting: caf\xe9\n"),
        ("Dockerfile", b"FROM debian\nLABEL x=caf\xe9\n"),
        ("k3.yaml", bytes(range(256)) * 64),  # binary, no launch in it
        ("model.yaml", b"model: caf\xe9\nimage: x\n"),  # names a model, but no sglang config
    ],
)
def test_undecodable_file_outside_the_domain_is_silent(repo: Path, name: str, data: bytes) -> None:
    assert kl001(lint(repo, name, data)) == []


def test_undecodable_file_that_names_sglang_is_a_warning(repo: Path) -> None:
    # it may be a launch, but nothing readable proves it one: a guess is at most a warning
    result = lint(repo, "notes.yml", b"# we run SGLang here, caf\xe9\nfoo: 1\n")
    assert kl001(result) == [("warning", "cannot read launch file: not valid UTF-8 (byte 0xe9 at offset 25)")]


def test_undecodable_config_is_an_error(repo: Path) -> None:
    # exact option names with a model among them prove an sglang --config (DESIGN: a proven launch)
    result = lint(repo, "k3.yaml", K3.encode() + b"# caf\xe9\n")
    assert [sev for sev, _ in kl001(result)] == ["error"]


def test_undecodable_config_named_by_a_launch_is_an_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # keys that prove nothing, but a launch passes it with --config: a launch file, unreadable
    (repo / "cfg.yaml").write_bytes(b"model: caf\xe9\n")
    (repo / "run.sh").write_text("python -m sglang.launch_server --config cfg.yaml\n", "utf-8")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("KIMI_LSP_NO_CACHE", "1")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli_main(["--check", "--format", "json", "."])
    diags = [(d["path"], d["code"], d["severity"]) for d in json.loads(out.getvalue())["diagnostics"]]
    assert ("cfg.yaml", "KL001", "error") in diags, diags
    assert rc == 1


def _lines_of(result, path: Path, text: str) -> list[tuple[str, int]]:
    out = []
    for d in result.diagnostics:
        if d.path == path:
            out.append((d.code, text.count("\n", 0, d.location.span.start) + text.count("\r", 0, d.location.span.start) - text.count("\r\n", 0, d.location.span.start)))
    return sorted(out)


@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_crlf_and_bom_lint_like_lf(repo: Path, bom: bool, newline: str) -> None:
    base = lint(repo, "k3.yaml", K3)
    want = _lines_of(base, repo / "k3.yaml", K3)
    text = K3.replace("\n", newline)
    data = ("\ufeff" if bom else "") + text
    got = lint(repo, "k3.yaml", data.encode("utf-8"))
    assert _lines_of(got, repo / "k3.yaml", text) == want
    assert "KL101" in codes(got)


def test_crlf_shell_continuations(repo: Path) -> None:
    text = "#!/bin/bash\r\npython3 -m sglang.launch_server \\\r\n  --model-path moonshotai/Kimi-K3 \\\r\n  --dcp-size 8 \\\r\n  --decode-attention-backend cutedsl_mla\r\n"
    result = lint(repo, "run.sh", text.encode())
    assert "KL101" in codes(result), result.diagnostics


def test_utf16_with_bom(repo: Path) -> None:
    result = lint(repo, "k3.yaml", "\ufeff".encode("utf-16-le") + K3.encode("utf-16-le"))
    assert "KL101" in codes(result) or "KL001" in codes(result)


# -- filesystem oddities --------------------------------------------------------------------------


def test_symlink_loops_terminate(repo: Path) -> None:
    (repo / "deploy").mkdir()
    (repo / "deploy" / "k3.yaml").write_text(K3, "utf-8")
    os.symlink("..", repo / "deploy" / "up")  # a directory loop
    os.symlink("self.yaml", repo / "self.yaml")  # a file that points at itself
    os.symlink("b.yaml", repo / "a.yaml")
    os.symlink("a.yaml", repo / "b.yaml")  # a two-link cycle
    found = list(walk(repo, repo))
    assert not any("up" in p.relative_to(repo).parts for p in found)  # the loop is not followed
    assert repo / "deploy" / "k3.yaml" in found
    assert not {repo / "self.yaml", repo / "a.yaml", repo / "b.yaml"} & set(found)
    eng = fresh_engine(repo)
    eng.lint_file(repo / "deploy" / "k3.yaml")
    assert not eng.errors


# Path.resolve() raises RuntimeError("Symlink loop") on Python 3.11: the engine and the CLI must
# turn that into a read failure.


def test_engine_on_a_looping_link(repo: Path) -> None:
    os.symlink("self.yaml", repo / "self.yaml")
    result = fresh_engine(repo).lint_file(repo / "self.yaml")  # unreadable -> KL001 or nothing
    assert all(d.code == "KL001" for d in result.diagnostics)


def test_cli_on_symlink_loop_paths(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``kimi-lsp --check`` given a looping link exits 0/1/2 with a message, never a traceback."""
    os.symlink("self.yaml", repo / "self.yaml")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    monkeypatch.chdir(repo)
    for argv in (["--check", "."], ["--check", "self.yaml"], ["--check", "k3.yaml", "self.yaml"]):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = cli_main(argv)
        assert rc in (0, 1, 2), (argv, rc)
        assert "Traceback" not in err.getvalue(), err.getvalue()


def test_fifo_and_device_are_not_read(repo: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(repo / "pipe.yaml")  # reading a FIFO would block forever
    eng = fresh_engine(repo)
    result = eng.lint_file(repo / "pipe.yaml")  # (a blocking read would never return)
    assert all(d.code == "KL001" for d in result.diagnostics)
    assert list(walk(repo, repo)) == [p for p in walk(repo, repo)]  # the walk does not hang on it


# Unreadable files and directories. The suite runs as root in CI, and root reads a mode-000 file
# anyway, so permission bits prove nothing there: the denial is simulated by patching the one
# read the engine does (Path.read_bytes in workspace._read_disk) and the directory listing
# (os.scandir, which os.walk and discovery use). As a normal user the real chmod test runs too.


def test_unreadable_launch_file_simulated(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = repo / "k3.yaml"
    real = os.open  # files are opened by descriptor (never blocking on a FIFO or device)

    def deny(path, *args, **kw):
        if os.fspath(path) == str(target):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kw)

    monkeypatch.setattr(os, "open", deny)
    result = lint(repo, "k3.yaml", K3)
    assert any("permission denied" in m for m in messages(result, "KL001")), result.diagnostics


def test_unreadable_pin_file_simulated(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = repo / "requirements.txt"
    real = os.open  # files are opened by descriptor (never blocking on a FIFO or device)

    def deny(path, *args, **kw):
        if os.fspath(path) == str(target):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kw)

    monkeypatch.setattr(os, "open", deny)
    result = lint(repo, "k3.yaml", K3)
    assert "KL001" not in codes(result, repo / "k3.yaml")
    sources = discovery.read_pin_file(target, Workspace(repo))
    assert sources[0].problems and "permission denied" in sources[0].problems[0].message


def test_unreadable_directory_simulated(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "secret").mkdir()
    (repo / "secret" / "k3.yaml").write_text(K3, "utf-8")
    (repo / "open").mkdir()
    (repo / "open" / "k3.yaml").write_text(K3, "utf-8")
    real = os.scandir

    def deny(path=".", *a, **kw):
        if Path(os.fsdecode(path)) == repo / "secret":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *a, **kw)

    monkeypatch.setattr(os, "scandir", deny)
    found = list(walk(repo, repo))
    assert repo / "open" / "k3.yaml" in found and repo / "secret" / "k3.yaml" not in found
    eng = fresh_engine(repo)
    eng.lint_file(repo / "open" / "k3.yaml")
    assert not eng.errors


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads mode-000 files: see the simulated tests")
def test_unreadable_for_real(repo: Path) -> None:
    (repo / "k3.yaml").write_text(K3, "utf-8")
    (repo / "k3.yaml").chmod(0)
    (repo / "locked").mkdir()
    (repo / "locked" / "x.yaml").write_text(K3, "utf-8")
    (repo / "locked").chmod(0)
    try:
        list(walk(repo, repo))
        result = fresh_engine(repo).lint_file(repo / "k3.yaml")
        assert any("permission denied" in m for m in messages(result, "KL001"))
    finally:
        (repo / "locked").chmod(0o755)
        (repo / "k3.yaml").chmod(0o644)


def test_many_files_in_one_directory_bounded(repo: Path) -> None:
    def tree(n: int) -> Path:
        d = repo / f"many{n}"
        d.mkdir()
        for i in range(n):
            (d / f"n{i}.yaml").write_text("name: x\n", "utf-8")
        return d

    for n in (500, 2000):
        tree(n)
    assert len(list(walk(repo / "many2000", repo))) == 2000
    # linear in the files of the directory: four times the files, about four times the work
    assert growth(lambda n: list(walk(repo / f"many{n}", repo)), 500) < 6


def test_big_yaml_with_a_late_syntax_error(repo: Path) -> None:
    """1 MB of flow-heavy YAML that mentions sglang and breaks on its last line: libyaml finds the
    error; re-reading it with pure-Python PyYAML for sglang's wording used to take ~20 s."""
    body = "".join(f"k{i}: [a, b, {{c: d}}]\n" for i in range(45_000))
    text = "# python -m sglang.launch_server\nmodel-path: x\n" + body + "bad: [\n"
    result = lint(repo, "ci.yaml", text)
    assert any(d.location.span.start >= len(text) - 8 for d in result.diagnostics if d.code == "KL001")
    # ~100 calls a line; the pure-Python re-read (kept for files under 64 KiB) costs ~1,000 a line
    smaller = text[: text.index("k12000:")] + "bad: [\n"  # 12,000 lines, ~290 KB
    assert work(lambda: lint(repo, "ci.yaml", smaller)) < 300 * 12_000


def test_yaml_with_very_many_top_level_keys(repo: Path) -> None:
    """100,000 distinct keys: classifying the file as an sglang config or not used to cost an
    argparse prefix scan per key (34 s for 300,000)."""
    def text(n: int) -> str:
        return "model-path: x\n" + "".join(f"k{i}: 1\n" for i in range(n))

    lint(repo, "k3.yaml", text(100_000))
    # ~18 calls a key; a prefix scan over sglang's ~650 options would be hundreds a key
    assert work(lambda: lint(repo, "k3.yaml", text(20_000))) < 60 * 20_000
    assert growth(lambda n: lint(repo, "k3.yaml", text(n)), 5_000) < 6


def test_very_long_line_and_argv(repo: Path) -> None:
    # 5,000 flags: pins/install_cmds.py's word expansion costs ~0.3 ms a word (reported)
    def script(n: int) -> str:
        flags = " ".join(f"--served-model-name n{i}" for i in range(n))
        return f"#!/bin/bash\npython3 -m sglang.launch_server --model-path moonshotai/Kimi-K3 {flags}\n"

    lint(repo, "run.sh", script(5_000))
    lint(repo, "k3.yaml", "model-path: " + "x" * 2_000_000 + "\n")
    assert growth(lambda n: lint(repo, "run.sh", script(n)), 300) < 6
    assert work(lambda: lint(repo, "run.sh", script(1_200))) < 400 * 1_200  # ~115 calls a flag
    assert growth(lambda n: lint(repo, "k3.yaml", "model-path: " + "x" * n + "\n"), 100_000) < 6


def test_no_output_to_stdout_from_the_engine(repo: Path, capsys: pytest.CaptureFixture) -> None:
    lint(repo, "k3.yaml", billion_laughs())
    lint(repo, "k3.yaml", b"\x00" * 10)
    captured = capsys.readouterr()
    assert captured.out == ""


def test_open_is_not_called_on_unrelated_big_files(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk reads at most a shebang's worth of an extension-less file (a model checkpoint
    next to the launch scripts must not be slurped)."""
    big = repo / "weights"
    big.write_bytes(b"\x00" * (20 * MB))
    reads: list[int] = []
    real_open = builtins.open

    def spy(file, mode="r", *a, **kw):
        fh = real_open(file, mode, *a, **kw)
        if "b" in mode and Path(os.fsdecode(file)) == big:
            real_read = fh.read

            class Wrapped:
                def __enter__(self):
                    return self

                def __exit__(self, *exc):
                    fh.close()

                def read(self, n=-1):
                    reads.append(n)
                    return real_read(n)

            return Wrapped()
        return fh

    monkeypatch.setattr(builtins, "open", spy)
    list(walk(repo, repo))
    assert all(0 <= n <= 4096 for n in reads), reads


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX file system semantics")
