"""The command line's own conventions: repository text never reaches the terminal raw (diff
headers, fix messages, ``export``), the exit status still means something when the report cannot
be written, and usage mistakes are usage errors (exit 2) that say what was meant."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kimi_lsp import fixes
from kimi_lsp.cli.check import diff_header_name
from kimi_lsp.cli.commands import shell_word
from kimi_lsp.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
K3 = "model-path: moonshotai/Kimi-K3\ntp-size: 8\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"
PINS = "sglang==0.5.23\nflashinfer-python==0.6.16.post4\n"
# a file name a repository may hold: a GitHub workflow command on a line of its own, and a
# terminal escape that clears the screen
HOSTILE = "requirements-\x1b[2J\n::error file=k3.yaml,line=1::INJECTED\n.txt"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("GITHUB_ACTIONS", "GITHUB_WORKSPACE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "no-hf-home"))
    monkeypatch.setenv("KIMI_LSP_NO_CACHE", "1")


def kimi(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    monkeypatch.chdir(cwd)
    try:
        rc = main(args)
    except SystemExit as exc:  # the subcommands' argparse exits itself, as the console script does
        rc = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return rc, out, err


def spawn(args: list[str], cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "server"), KIMI_LSP_NO_CACHE="1", HF_HOME=str(cwd / ".no-hf"))
    env.pop("GITHUB_ACTIONS", None)
    kw.setdefault("capture_output", True)
    return subprocess.run([sys.executable, "-m", "kimi_lsp", *args], cwd=cwd, env=env, text=True, timeout=120, **kw)  # type: ignore[call-overload, no-any-return]


def project(tmp_path: Path, pins_name: str = "requirements.txt") -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "k3.yaml").write_text(K3)
    (root / pins_name).write_text(PINS)
    return root


def no_raw_controls(text: str) -> bool:
    return "\x1b" not in text and not any(line.startswith("::") for line in text.splitlines())


# -- file names in --diff headers and --fix messages ---------------------------------------------

def test_diff_headers_quote_a_hostile_pin_file_name_as_git_does(tmp_path, monkeypatch, capsys) -> None:
    root = project(tmp_path, HOSTILE)
    rc, out, err = kimi(["--check", "--diff", "k3.yaml"], root, monkeypatch, capsys)
    assert rc == 1, err
    assert no_raw_controls(out) and no_raw_controls(err)
    assert '--- "a/requirements-\\033[2J\\n::error file=k3.yaml,line=1::INJECTED\\n.txt"' in out.splitlines()
    if shutil.which("git"):  # git reads the quoted name back: the diff still applies
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        (root / "fix.diff").write_text(out)
        subprocess.run(["git", "apply", "fix.diff"], cwd=root, check=True)
        assert "flashinfer-python==0.6.16.post4" not in (root / HOSTILE).read_text()


def test_diff_header_names() -> None:
    assert diff_header_name("a/deploy/requirements.txt") == "a/deploy/requirements.txt"
    assert diff_header_name("a/é.txt") == "a/é.txt"  # printable non-ASCII stays as it is
    assert diff_header_name('a/q"\\\t.txt') == '"a/q\\"\\\\\\t.txt"'
    assert diff_header_name("a/\u202eevil.txt") == '"a/\\342\\200\\256evil.txt"'  # bidi override
    assert diff_header_name("a/\udcff.txt") == '"a/\\377.txt"'  # an undecodable byte, as it was


def test_fix_messages_escape_file_names(tmp_path, monkeypatch, capsys) -> None:
    root = project(tmp_path, HOSTILE)

    def refuse(*_a: object, **_k: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fixes, "write_atomic", refuse)
    rc, out, err = kimi(["--check", "--fix", "k3.yaml"], root, monkeypatch, capsys)
    assert rc == 2
    assert "kimi-lsp: error: not fixed: requirements-\\x1b[2J\\n::error" in err
    assert no_raw_controls(out) and no_raw_controls(err)


# -- export --to args ---------------------------------------------------------------------------

def test_export_args_escapes_control_characters_and_stays_a_faithful_command_line(tmp_path) -> None:
    value = "k3\x1b[2J\x1b[1;1Hclean\u202e\n'q\\"
    (tmp_path / "p.toml").write_text(
        '[sglang]\nmodel-path = "moonshotai/Kimi-K3"\nserved-model-name = "k3\\u001b[2J\\u001b[1;1Hclean\\u202e\\n\'q\\\\"\n'
        '[sglang.env]\nNOTE = "a\\u0007b"\n')
    r = spawn(["export", "--to", "args", "p.toml"], tmp_path)
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip()
    assert line.isascii() and line.isprintable()
    assert line.startswith("NOTE=$'a\\ab' python3 -m sglang.launch_server ")
    if shutil.which("bash"):  # the shell reads every word back as the profile's value
        words = subprocess.run(["bash", "-c", "printf '%s\\0' " + line.split(" ", 1)[1]],
                               capture_output=True, text=True, check=True).stdout.split("\0")[:-1]
        assert words[words.index("--served-model-name") + 1] == value
    r = spawn(["export", "--to", "yaml", "p.toml"], tmp_path)
    assert r.returncode == 0 and "\x1b" not in r.stdout and "\u202e" not in r.stdout and "\x07" not in r.stdout


def test_shell_word() -> None:
    assert shell_word("plain") == "plain"
    assert shell_word("two words") == "'two words'"
    assert shell_word("a\x1bb") == "$'a\\Eb'"
    assert shell_word("\x01" + "9") == "$'\\x019'"  # two hex digits: the 9 is not read into the escape
    assert shell_word("\u2028" + "0") == "$'\\u20280'"


def test_export_refuses_a_nul_no_command_line_can_carry(tmp_path) -> None:
    (tmp_path / "p.toml").write_text('[sglang]\nmodel-path = "moonshotai/Kimi-K3"\nserved-model-name = "a\\u0000b"\n')
    r = spawn(["export", "--to", "args", "p.toml"], tmp_path)
    assert r.returncode == 2 and "NUL" in r.stderr and not r.stdout


# -- the exit status when the report cannot be written ----------------------------------------

def test_a_failing_check_whose_reader_left_still_fails(tmp_path) -> None:
    root = project(tmp_path)
    for args, want in ((["--check", "k3.yaml"], 1), (["--check", "--exit-zero", "k3.yaml"], 2),
                       (["--check", "--format", "json", "k3.yaml"], 1)):
        r, w = os.pipe()
        os.close(r)
        try:
            res = spawn(args, root, stdout=w, stderr=subprocess.PIPE, capture_output=False)
        finally:
            os.close(w)
        assert res.returncode == want, (args, res.stderr)
        assert "Traceback" not in res.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["--check", "k3.yaml"], ["--check", "--format", "sarif", "--exit-zero", "k3.yaml"],
                                  ["--check", "--diff", "k3.yaml"], ["rules"]])
def test_a_full_disk_exits_2_with_one_line(tmp_path, args: list[str]) -> None:
    root = project(tmp_path)
    with open("/dev/full", "w") as full:
        res = spawn(args, root, stdout=full, stderr=subprocess.PIPE, capture_output=False)
    assert res.returncode == 2
    assert res.stderr.splitlines()[-1] == "kimi-lsp: error: the report could not be written to stdout: No space left on device"
    assert "Traceback" not in res.stderr and "Exception ignored" not in res.stderr


@pytest.mark.parametrize("args", ["--check k3.yaml", "rules", "export --to args p.toml"])
def test_a_closed_stdout_exits_2_with_one_line(tmp_path, args: str) -> None:
    root = project(tmp_path)
    (root / "p.toml").write_text('[sglang]\nmodel-path = "moonshotai/Kimi-K3"\n')
    env = dict(os.environ, PYTHONPATH=str(ROOT / "server"), KIMI_LSP_NO_CACHE="1")
    res = subprocess.run(f"exec {sys.executable} -m kimi_lsp {args} >&-", shell=True, cwd=root, env=env,
                         text=True, stderr=subprocess.PIPE, timeout=120)
    assert res.returncode == 2
    assert res.stderr == "kimi-lsp: error: stdout is closed; the report has nowhere to go\n"


# -- usage errors -------------------------------------------------------------------------------

@pytest.mark.parametrize("args, says", [
    (["--check", "--jobs", "0", "."], "--jobs 0: the number of worker processes is 1 or more"),
    (["--check", "-j", "-3", "."], "--jobs -3: the number of worker processes is 1 or more"),
    (["--check", "--jobs=0", "."], "--jobs 0:"),
    (["--check", "--unsafe-fixes", "."], "--unsafe-fixes applies only with --fix or --diff"),
])
def test_settings_that_would_do_nothing_are_usage_errors(tmp_path, monkeypatch, capsys, args, says) -> None:
    root = project(tmp_path)
    rc, out, err = kimi(args, root, monkeypatch, capsys)
    assert rc == 2 and says in err and not out


def test_unsafe_fixes_with_fix_or_diff_is_accepted(tmp_path, monkeypatch, capsys) -> None:
    root = project(tmp_path)
    assert kimi(["--check", "--diff", "--unsafe-fixes", "k3.yaml"], root, monkeypatch, capsys)[0] == 1
    assert kimi(["--check", "--jobs", "1", "k3.yaml"], root, monkeypatch, capsys)[0] == 1


def test_serve_rejects_an_unknown_log_level_and_documents_its_options(tmp_path) -> None:
    r = spawn(["serve", "--log-level", "banana"], tmp_path)
    assert r.returncode == 2 and "invalid choice" in r.stderr and "BANANA" in r.stderr
    r = spawn(["serve", "--help"], tmp_path)
    assert r.returncode == 0
    for text in ("--tcp", "listen on TCP", "(default: 127.0.0.1)", "(default: 2087)", "DEBUG, INFO, WARNING"):
        assert text in " ".join(r.stdout.split()), text


@pytest.mark.parametrize("args, hint", [
    (["--check", "--formt", "json", "."], "(did you mean --format?)"),
    (["--chek", "."], "(did you mean --check?)"),
    (["--check", "--no-cahce", "--exitzero", "."], "(did you mean --no-cache, --exit-zero?)"),
    (["serv"], "(did you mean `kimi-lsp serve`?)"),
    (["rules", "--formatt", "json"], "unrecognized arguments: --formatt json (did you mean --format?)"),
    (["--check", "--format", "jsn", "."], "(did you mean json?)"),
    (["rules", "--format=markdwn"], "(did you mean markdown?)"),
])
def test_a_mistyped_option_gets_did_you_mean(tmp_path, monkeypatch, capsys, args, hint) -> None:
    rc, _out, err = kimi(args, tmp_path, monkeypatch, capsys)
    assert rc == 2
    assert hint in err.splitlines()[-1]


def test_no_suggestion_for_what_is_far_from_every_option(tmp_path, monkeypatch, capsys) -> None:
    rc, _out, err = kimi(["--check", "--zzzzzz", "."], tmp_path, monkeypatch, capsys)
    last = err.splitlines()[-1]
    assert rc == 2 and last.startswith("kimi-lsp: error: unrecognized arguments: --zzzzzz") and "did you mean" not in last


def test_usage_errors_echo_arguments_escaped(tmp_path, monkeypatch, capsys) -> None:
    rc, _out, err = kimi(["--check", "--\x1b[2Jx"], tmp_path, monkeypatch, capsys)
    assert rc == 2 and "\x1b" not in err and "--\\x1b[2Jx" in err


def test_serve_mistyped_option(tmp_path) -> None:
    r = spawn(["serve", "--tpc"], tmp_path)
    assert r.returncode == 2 and "(did you mean --tcp?)" in r.stderr


# -- --diff with a machine-readable format ------------------------------------------------------

def test_diff_with_json_keeps_one_json_document_that_carries_the_diff(tmp_path, monkeypatch, capsys) -> None:
    import json

    root = project(tmp_path)
    rc, text_diff, _ = kimi(["--check", "--diff", "k3.yaml"], root, monkeypatch, capsys)
    assert rc == 1 and text_diff.startswith("--- a/requirements.txt\n")
    rc, out, err = kimi(["--check", "--diff", "--format", "json", "k3.yaml"], root, monkeypatch, capsys)
    assert rc == 1
    doc = json.loads(out)  # the whole of stdout is the document
    assert doc["diff"] == text_diff
    assert {"version", "diagnostics", "summary"} <= set(doc) and "run_errors" not in doc
    assert "Would fix requirements.txt" in err
    assert (root / "requirements.txt").read_text() == PINS  # --diff writes nothing
    # nothing to change: the key is there, empty
    (root / "notes.yaml").write_text("a: 1\n")
    rc, out, _ = kimi(["--check", "--diff", "--format", "json", "notes.yaml"], root, monkeypatch, capsys)
    assert rc == 0 and json.loads(out)["diff"] == ""


def test_diff_with_json_that_fails_still_prints_its_document(tmp_path, monkeypatch, capsys) -> None:
    import json

    rc, out, _err = kimi(["--check", "--diff", "--format", "json", "no/such.yaml"], tmp_path, monkeypatch, capsys)
    doc = json.loads(out)
    assert rc == 2 and doc["run_errors"] and doc["diff"] == ""


def test_diff_with_sarif_keeps_the_document_on_stdout(tmp_path, monkeypatch, capsys) -> None:
    import json

    root = project(tmp_path)
    rc, out, err = kimi(["--check", "--diff", "--format", "sarif", "k3.yaml"], root, monkeypatch, capsys)
    assert rc == 1 and json.loads(out)["version"] == "2.1.0"
    assert "--- a/requirements.txt" in err


# -- JSON paths: one rule for every path in the document ----------------------------------------

def _json_paths(doc: dict[str, object]) -> list[str]:
    out: list[str] = []
    for d in doc["diagnostics"]:  # type: ignore[attr-defined]
        out.append(d["path"])
        out += [r["path"] for r in d["related"]]
        out += [e["path"] for f in d["fixes"] for e in f["edits"]]
    return out


@pytest.mark.parametrize("where", ["root", "below", "outside"])
def test_json_paths_are_relative_inside_the_working_directory_and_absolute_elsewhere(tmp_path, monkeypatch, capsys, where) -> None:
    import json

    root = project(tmp_path)
    (root / "deploy").mkdir()
    (root / "k3.yaml").rename(root / "deploy" / "k3.yaml")
    (tmp_path / "elsewhere").mkdir()
    cwd = {"root": root, "below": root / "deploy", "outside": tmp_path / "elsewhere"}[where]
    target = str(root / "deploy" / "k3.yaml") if where == "outside" else os.path.relpath(root / "deploy" / "k3.yaml", cwd)
    rc, out, _ = kimi(["--check", "--format", "json", target], cwd, monkeypatch, capsys)
    assert rc == 1
    paths = _json_paths(json.loads(out))
    assert len(paths) >= 3 and any(p.endswith("requirements.txt") for p in paths)
    real = cwd.resolve()
    for p in paths:
        full = Path(p) if os.path.isabs(p) else real / p
        assert full.is_file(), p
        inside = full.resolve().is_relative_to(real)
        assert os.path.isabs(p) != inside, p  # relative exactly when inside
        assert ".." not in Path(p).parts and "\\" not in p
    # the text report names the same places the same way
    _rc, text, _ = kimi(["--check", target], cwd, monkeypatch, capsys)
    assert f"  --> {[p for p in paths if p.endswith('requirements.txt')][0]}:2:1: " in text


# -- bare `kimi-lsp`, and the server's ways out ------------------------------------------------

def _lsp(obj: dict[str, object]) -> bytes:
    import json

    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_lsp(stream: object) -> bytes:
    length = 0
    while True:
        line = stream.readline()  # type: ignore[attr-defined]
        if line in (b"\r\n", b""):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return stream.read(length)  # type: ignore[attr-defined, no-any-return]


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}}


def test_bare_kimi_lsp_on_a_terminal_prints_help_instead_of_serving(tmp_path) -> None:
    import pty

    master, slave = pty.openpty()
    try:
        r = spawn([], tmp_path, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, capture_output=False)
    finally:
        os.close(slave)
        os.close(master)
    assert r.returncode == 2
    assert r.stdout.startswith("usage: kimi-lsp") and "--check" in r.stdout
    assert "stdin is a terminal" in r.stderr and "kimi-lsp serve" in r.stderr


def test_bare_kimi_lsp_with_pipes_still_serves(tmp_path) -> None:
    import json

    env = dict(os.environ, PYTHONPATH=str(ROOT / "server"))
    p = subprocess.Popen([sys.executable, "-m", "kimi_lsp"], cwd=tmp_path, env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdin is not None
        p.stdin.write(_lsp(INITIALIZE))
        p.stdin.flush()
        assert json.loads(_read_lsp(p.stdout))["id"] == 1
        p.stdin.write(_lsp({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) + _lsp({"jsonrpc": "2.0", "method": "exit"}))
        p.stdin.close()
        assert p.wait(timeout=60) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_the_stdio_server_exits_on_the_first_sigint(tmp_path) -> None:
    import json
    import signal

    env = dict(os.environ, PYTHONPATH=str(ROOT / "server"))
    p = subprocess.Popen([sys.executable, "-m", "kimi_lsp", "serve"], cwd=tmp_path, env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdin is not None
        p.stdin.write(_lsp(INITIALIZE))
        p.stdin.flush()
        assert json.loads(_read_lsp(p.stdout))["id"] == 1  # serving: the reader waits on stdin
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=30) == 130
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.stderr is not None and b"Fatal Python error" not in p.stderr.read()


def test_a_tcp_server_that_the_client_ends_logs_no_traceback(tmp_path) -> None:
    import json
    import socket
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "server"))
    p = subprocess.Popen([sys.executable, "-m", "kimi_lsp", "serve", "--tcp", "--port", str(port)], cwd=tmp_path, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(600):  # (a bounded number of tries; the server needs some seconds to import)
            try:
                conn = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                if p.poll() is not None:
                    break
                time.sleep(0.1)
        else:
            pytest.fail("the server never listened")
        with conn, conn.makefile("rb") as stream:
            conn.sendall(_lsp(INITIALIZE))
            assert json.loads(_read_lsp(stream))["id"] == 1
            conn.sendall(_lsp({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            assert json.loads(_read_lsp(stream))["id"] == 2
            conn.sendall(_lsp({"jsonrpc": "2.0", "method": "exit"}))
            assert p.wait(timeout=60) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.stderr is not None
    err = p.stderr.read().decode()
    assert "Traceback" not in err and "Unhandled exception" not in err, err


# -- --stdin-filename PATH - --------------------------------------------------------------------

def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_stdin_is_linted_as_the_named_file_with_its_pins(tmp_path, monkeypatch, capsys) -> None:
    import json

    root = project(tmp_path)
    (root / "deploy").mkdir()
    (root / "k3.yaml").unlink()
    (root / "deploy" / "served.yaml").write_text("model-path: moonshotai/Kimi-K3\n")  # on disk: no DCP
    _stdin(monkeypatch, K3.encode())  # the editor's buffer: DCP on cutedsl_mla
    rc, out, err = kimi(["--check", "--format", "json", "--stdin-filename", "deploy/served.yaml", "-"], root, monkeypatch, capsys)
    assert rc == 1, err
    doc = json.loads(out)
    kl101 = [d for d in doc["diagnostics"] if d["code"] == "KL101"]
    assert len(kl101) == 1 and kl101[0]["path"] == "deploy/served.yaml" and kl101[0]["line"] == 4
    assert kl101[0]["related"][0]["path"] == "requirements.txt"  # found upward from the named file
    assert doc["summary"]["files"] == 1
    assert (root / "deploy" / "served.yaml").read_text() == "model-path: moonshotai/Kimi-K3\n"
    # a name that is not on disk works the same, and nothing is written
    _stdin(monkeypatch, K3.encode())
    rc, out, _ = kimi(["--check", "-q", "--stdin-filename", "deploy/new.yaml"], root, monkeypatch, capsys)
    assert rc == 1 and out.splitlines()[-1].startswith("deploy/new.yaml:4:1: KL101 ")
    assert not (root / "deploy" / "new.yaml").exists()


def test_stdin_takes_the_settings_of_the_named_files_directory(tmp_path, monkeypatch, capsys) -> None:
    root = project(tmp_path)
    (root / "deploy").mkdir()
    (root / "deploy" / "kimi-lsp.toml").write_text('ignore = ["KL101"]\n')
    _stdin(monkeypatch, K3.encode())
    rc, out, _ = kimi(["--check", "--stdin-filename", "deploy/k3.yaml", "-"], root, monkeypatch, capsys)
    assert "KL101" not in out and rc == 0
    _stdin(monkeypatch, K3.encode())
    rc, out, _ = kimi(["--check", "--stdin-filename", "k3.yaml", "-"], root, monkeypatch, capsys)
    assert "KL101" in out and rc == 1


@pytest.mark.parametrize("args, says", [
    (["--check", "-"], "- (stdin) needs --stdin-filename PATH"),
    (["--check", "--stdin-filename", "a.yaml", "-", "b.yaml"], "--stdin-filename lints stdin alone"),
    (["--check", "--stdin-filename", "a.yaml", "--fix", "-"], "cannot write stdin back"),
    (["--check", "--stdin-filename", "", "-"], "--stdin-filename needs the name"),
])
def test_stdin_usage_errors(tmp_path, monkeypatch, capsys, args, says) -> None:
    _stdin(monkeypatch, K3.encode())
    rc, out, err = kimi(args, tmp_path, monkeypatch, capsys)
    assert rc == 2 and says in err and not out


def test_stdin_that_does_not_decode_is_an_error_not_a_pass(tmp_path, monkeypatch, capsys) -> None:
    import json

    _stdin(monkeypatch, b"model-path: \xff\n")
    rc, out, err = kimi(["--check", "--format", "json", "--stdin-filename", "k3.yaml", "-"], tmp_path, monkeypatch, capsys)
    assert rc == 2 and "not valid UTF-8" in err
    assert json.loads(out)["run_errors"]
