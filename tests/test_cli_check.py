"""The CLI contract (DESIGN.md): output formats, exit codes, the bundled example and its fix."""
from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "k3-serving"


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT / "server") + os.pathsep + e.get("PYTHONPATH", "")
    e.pop("GITHUB_ACTIONS", None)
    e["HF_HOME"] = str(cwd / ".no-hf-home")
    if env:
        e.update(env)
    return subprocess.run([sys.executable, "-m", "kimi_lsp", *args], cwd=cwd, env=e, text=True, capture_output=True, timeout=120)


@pytest.fixture()
def example(tmp_path: Path) -> Path:
    dst = tmp_path / "k3-serving"
    shutil.copytree(EXAMPLE, dst)
    (dst / ".git").mkdir()
    return dst


def test_json_on_the_example_reports_kl101_with_a_safe_fix(example: Path) -> None:
    r = run(["--check", "--format", "json", "."], example)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc) == {"version", "diagnostics", "summary"}
    kl101 = [d for d in doc["diagnostics"] if d["code"] == "KL101"]
    assert len(kl101) == 1
    d = kl101[0]
    assert d["path"] == "deploy/k3-dcp.yaml"
    assert (d["line"], d["column"]) == (8, 1)
    assert d["severity"] == "error"
    assert {"path", "line", "column", "end_line", "end_column", "code", "severity", "message", "related", "fixes"} <= set(d)
    assert d["related"][0]["path"] == "requirements.txt"
    safe = [f for f in d["fixes"] if f["applicability"] == "safe"]
    assert safe and safe[0]["edits"][0]["path"] == "requirements.txt"
    assert doc["summary"]["errors"] >= 1

    # apply the safe edit by hand, as a CI script consuming the JSON would
    edit = safe[0]["edits"][0]
    req = example / "requirements.txt"
    lines = req.read_text().split("\n")
    line = lines[edit["line"] - 1]
    assert edit["end_line"] == edit["line"]
    lines[edit["line"] - 1] = line[: edit["column"] - 1] + edit["new_text"] + line[edit["end_column"] - 1 :]
    req.write_text("\n".join(lines))
    r2 = run(["--check", "--format", "json", "."], example)
    assert r2.returncode == 0, r2.stdout
    assert not [x for x in json.loads(r2.stdout)["diagnostics"] if x["code"].startswith("KL1")]


def test_text_output_and_exit_codes(example: Path) -> None:
    r = run(["--check", "deploy/k3-dcp.yaml"], example)
    assert r.returncode == 1
    assert any(line.startswith("deploy/k3-dcp.yaml:8:1: KL101 [*] ") for line in r.stdout.splitlines())
    assert run(["--check", "--exit-zero", "."], example).returncode == 0
    assert run(["--check", "--ignore", "KL1", "."], example).returncode == 0
    assert run(["--check", "no/such/path"], example).returncode == 2
    assert run(["--check", "--format", "nope", "."], example).returncode == 2


def test_fix_bumps_the_pin_and_rechecks_clean(example: Path) -> None:
    r = run(["--check", "--fix", "."], example)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "flashinfer-python==0.7.2" in (example / "requirements.txt").read_text()
    assert "# pinned when the image was built" in (example / "requirements.txt").read_text()


def test_diff_does_not_write(example: Path) -> None:
    before = (example / "requirements.txt").read_text()
    r = run(["--check", "--diff", "."], example)
    assert "+flashinfer-python==0.7.2" in r.stdout
    assert (example / "requirements.txt").read_text() == before


def test_a_pin_file_argument_checks_the_launches_it_governs(example: Path) -> None:
    r = run(["--check", "--format", "json", "requirements.txt"], example)
    codes = [d["code"] for d in json.loads(r.stdout)["diagnostics"]]
    assert "KL101" in codes


def test_github_and_sarif_formats(example: Path) -> None:
    r = run(["--check", "--format", "github", "."], example)
    assert any(line.startswith("::error file=deploy/k3-dcp.yaml,line=8,col=1,") for line in r.stdout.splitlines())
    r = run(["--check", "--format", "sarif", "."], example)
    doc = json.loads(r.stdout)
    assert doc["version"] == "2.1.0"
    res = doc["runs"][0]["results"]
    assert any(x["ruleId"] == "KL101" for x in res)
    assert "::error " in run(["--check", "."], example, {"GITHUB_ACTIONS": "true"}).stdout


def test_check_imports_neither_pygls_nor_torch(example: Path) -> None:
    code = (
        "import sys; from kimi_lsp.cli.main import main; rc = main(['--check', '-q', '.']); "
        "bad = [m for m in ('pygls', 'lsprotocol', 'torch') if m in sys.modules]; "
        "print('BAD', bad) if bad else print('OK')"
    )
    e = dict(os.environ, PYTHONPATH=str(ROOT / "server"))
    r = subprocess.run([sys.executable, "-c", code], cwd=example, env=e, text=True, capture_output=True)
    assert r.stdout.strip().endswith("OK"), r.stdout + r.stderr


# Start-up budget (bench/RESULTS.md): modules a one-file check must not load. dataclasses pulls in
# inspect and ast; packaging.requirements pulls in markers, tags, platform and subprocess.
# A project without TOML files reads none: tomllib and the TOML reader load only when one is read
# (nor the uv.lock scanner, when there is no lock; the other lock readers, the pylock.toml scanner
# among them, load for a lock of theirs).
# The Python and notebook readers (and ast, json) load only when a .py or .ipynb file is read.
# PyYAML loads only for YAML outside syntax.yaml_scan's subset (a --config file is within it).
# argparse (with gettext, locale and shutil for its help formatter) reads only what the plain
# reading of --check's options leaves to it (cli/main.py).
HEAVY = ("dataclasses", "inspect", "packaging.requirements", "packaging.markers", "logging", "difflib", "subprocess",
         "tomllib", "tomli", "kimi_lsp.syntax.toml", "ast", "kimi_lsp.syntax.python", "kimi_lsp.syntax.notebook",
         "kimi_lsp.surfaces.python", "kimi_lsp.surfaces.notebook", "argparse", "gettext", "shutil",
         "kimi_lsp.syntax.uv_lock", "yaml", "kimi_lsp.syntax._pyyaml", "packaging", "typing", "json", "shlex",
         "contextlib", "datetime", "kimi_lsp.pins._lock_readers", "kimi_lsp.syntax.pylock")


def _modules_after(args: list[str], cwd: Path, env: dict[str, str]) -> set[str]:
    """The modules a run loads beyond what the standard library it cannot do without (pathlib,
    re) loads on this Python by itself: 3.13's pathlib imports glob and with it contextlib."""
    code = f"import sys; from kimi_lsp.cli.main import main; main({args!r}); print('\\nMODULES', *sys.modules)"
    e = dict(os.environ, PYTHONPATH=str(ROOT / "server"), **env)
    r = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=e, text=True, capture_output=True)
    line = r.stdout.rsplit("\nMODULES ", 1)
    assert len(line) == 2, r.stdout + r.stderr
    return set(line[1].split()) - _stdlib_modules()


@functools.cache
def _stdlib_modules() -> frozenset[str]:
    """What ``import pathlib, re`` loads by itself on this Python (asked once)."""
    out = subprocess.run([sys.executable, "-I", "-c", "import sys, pathlib, re; print(*sys.modules)"],
                         text=True, capture_output=True, check=True).stdout
    return frozenset(out.split())


def test_one_file_check_stays_off_heavy_modules(example: Path) -> None:
    mods = _modules_after(["--check", "-q", "deploy/k3-dcp.yaml"], example, {})
    assert "kimi_lsp.engine" in mods
    assert not [m for m in HEAVY if m in mods]


def _modules_of_project(tmp_path: Path, pins_fixture: str) -> set[str]:
    """The modules a one-file check loads in a repository made of ``tests/pins_fixtures/<pins_fixture>``
    and the example's launches, on its second run (a first run keeps what it made)."""
    proj = tmp_path / "project"
    shutil.copytree(ROOT / "tests" / "pins_fixtures" / pins_fixture, proj)
    (proj / ".git").mkdir()
    shutil.copytree(EXAMPLE / "deploy", proj / "deploy")
    _modules_after(["--check", "-q", "deploy/k3-dcp.yaml"], proj, {})
    return _modules_after(["--check", "-q", "deploy/k3-dcp.yaml"], proj, {})


def test_a_uv_project_is_read_without_tomllib(tmp_path: Path) -> None:
    """A plain pyproject.toml (syntax/toml_scan.py) and a uv.lock in uv's own shape
    (syntax/uv_lock.py) need neither tomllib nor the typing and datetime it imports."""
    mods = _modules_of_project(tmp_path, "uv-lock/sglang-only")
    assert {"kimi_lsp.syntax.toml_scan", "kimi_lsp.syntax.uv_lock"} <= mods
    assert not [m for m in HEAVY if m in mods and m not in ("kimi_lsp.syntax.toml", "kimi_lsp.syntax.uv_lock")]


def test_a_uv_exported_pylock_is_read_without_tomllib(tmp_path: Path) -> None:
    """A pylock.toml as `uv export` writes it is read by syntax/pylock.py's scan, and the marker on
    each of its packages by kimi_lsp.markers: no tomllib, no other lock reader, no packaging."""
    mods = _modules_of_project(tmp_path, "pylock/uv-export")
    assert {"kimi_lsp.syntax.pylock", "kimi_lsp.pins.locks", "kimi_lsp.markers"} <= mods
    assert not [m for m in HEAVY if m in mods and m not in ("kimi_lsp.syntax.toml", "kimi_lsp.syntax.pylock",
                                                            "kimi_lsp.syntax.uv_lock")]


def test_a_cache_hit_loads_no_engine(example: Path) -> None:
    env = {"KIMI_LSP_NO_CACHE": "", "KIMI_LSP_CACHE_RACY_SECONDS": "0", "KIMI_LSP_CACHE_DIR": str(example.parent / "cache")}
    _modules_after(["--check", "-q", "deploy/k3-dcp.yaml"], example, env)
    mods = _modules_after(["--check", "-q", "deploy/k3-dcp.yaml"], example, env)
    assert "kimi_lsp.cli.check" in mods and "kimi_lsp.cache" in mods
    # ... nor typing, json or importlib.util: each is a tenth of a hit (cache.py, _record.py)
    assert not [m for m in ("kimi_lsp.engine", "kimi_lsp.rules", "yaml", "tomllib", "typing", "json", "importlib.util", *HEAVY)
                if m in mods]


def test_rules_and_explain() -> None:
    r = run(["rules"], ROOT)
    assert r.returncode == 0 and "KL101" in r.stdout
    r = run(["explain", "KL101"], ROOT)
    assert r.returncode == 0 and "## Why is this bad?" in r.stdout
    assert run(["explain", "KL999"], ROOT).returncode == 2


def test_readme_shows_the_real_output_on_the_example() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    start = readme.index("$ kimi-lsp --check examples/k3-serving\n") + len("$ kimi-lsp --check examples/k3-serving\n")
    shown = readme[start : readme.index("```", start)]
    assert run(["--check", "examples/k3-serving"], ROOT).stdout == shown


@pytest.mark.parametrize("args", [["nonexist"], [".", "nonexist"], ["--select", "KL999", "."]])
def test_a_failed_run_still_prints_one_document_that_says_so(example: Path, args: list[str]) -> None:
    """Exit 2 with --format json/sarif: stdout is still one document, and it names the failure
    (a consumer reading only the document must not take it for a clean run)."""
    r = run(["--check", "--no-cache", "--format", "json", *args], example)
    assert r.returncode == 2, r.stderr
    doc = json.loads(r.stdout)
    assert doc["run_errors"] and doc["run_errors"][0] in r.stderr
    assert set(doc) == {"version", "diagnostics", "summary", "run_errors"}
    r = run(["--check", "--no-cache", "--format", "sarif", *args], example)
    (inv,) = json.loads(r.stdout)["runs"][0]["invocations"]
    assert r.returncode == 2 and inv["executionSuccessful"] is False
    assert [n["message"]["text"] for n in inv["toolExecutionNotifications"]] == doc["run_errors"]


def test_a_clean_json_document_has_no_run_errors(example: Path) -> None:
    doc = json.loads(run(["--check", "--no-cache", "--format", "json", "."], example).stdout)
    assert "run_errors" not in doc


# The console script leaves without interpreter finalization (cli/main.py `_leave`): what a
# normal exit does that matters must still happen, and anything it cannot vouch for exits normally.
_LEAVE = """
import atexit, sys, threading, time
from kimi_lsp.cli.main import _leave
atexit.register(lambda: print("atexit ran"))
print("buffered", end=" ")
sys.stderr.write("on stderr")
if sys.argv[1] == "thread":
    threading.Thread(target=lambda: (time.sleep(0.3), print("thread finished", end=" "))).start()
_leave(int(sys.argv[2]))
"""


@pytest.mark.parametrize("code", [0, 1, 2])
def test_leaving_runs_atexit_flushes_both_streams_and_keeps_the_status(code: int) -> None:
    r = subprocess.run([sys.executable, "-c", _LEAVE, "plain", str(code)], env=dict(os.environ, PYTHONPATH=str(ROOT / "server")),
                       text=True, capture_output=True, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (code, "buffered atexit ran\n", "on stderr")


def test_leaving_with_a_thread_still_running_waits_for_it_as_a_normal_exit_does() -> None:
    r = subprocess.run([sys.executable, "-c", _LEAVE, "thread", "1"], env=dict(os.environ, PYTHONPATH=str(ROOT / "server")),
                       text=True, capture_output=True, timeout=60)
    assert (r.returncode, r.stdout) == (1, "buffered thread finished atexit ran\n")


def test_the_console_script_lints_one_file_without_collections_and_more_with_them(example: Path) -> None:
    code = ("import gc, sys; from kimi_lsp.cli import check; seen = []; "
            "check._collections_for = (lambda f, real=check._collections_for: (real(f), seen.append(gc.isenabled()))); "
            "import atexit; atexit.register(lambda: print('GC', seen)); "
            "sys.argv = ['kimi-lsp', '--check', '-q', '--no-cache', *sys.argv[1:]]; from kimi_lsp.cli.main import entry; entry()")
    e = dict(os.environ, PYTHONPATH=str(ROOT / "server"))
    one = subprocess.run([sys.executable, "-c", code, "deploy/k3-dcp.yaml"], cwd=example, env=e, text=True, capture_output=True)
    assert one.returncode == 1 and one.stdout.endswith("GC [False]\n"), one.stdout + one.stderr
    many = subprocess.run([sys.executable, "-c", code, "."], cwd=example, env=e, text=True, capture_output=True)
    assert many.returncode == 1 and many.stdout.endswith("GC [True]\n"), many.stdout + many.stderr


@pytest.mark.parametrize(("script", "args", "paused"), [
    ("kimi-lsp", ["--check", "x.yaml"], True),
    ("kimi-lsp", ["rules"], True),
    ("kimi-lsp", ["serve"], False),
    ("kimi-lsp", ["verify"], False),
    ("kimi-lsp", [], False),
    ("other-tool", ["--check", "x.yaml"], False),
])
def test_the_console_script_pauses_collection_as_the_package_is_imported(
        tmp_path: Path, script: str, args: list[str], paused: bool) -> None:
    """Where ``cli.main.entry`` will run a short command, importing the package already pauses the
    cyclic collector (the imports before ``entry`` runs then do not collect); anything else that
    imports the package (the server, ``verify``, another program) keeps it."""
    path = tmp_path / script
    path.write_text("import gc, kimi_lsp\nprint(gc.isenabled())\n", "utf-8")
    e = dict(os.environ, PYTHONPATH=str(ROOT / "server"))
    r = subprocess.run([sys.executable, str(path), *args], env=e, text=True, capture_output=True, check=True)
    assert r.stdout.strip() == str(not paused)
