"""Security: nothing in a linted project is executed or imported; YAML is loaded safely; no network
in lint or fixes; a fix never writes outside the repository root."""
from __future__ import annotations

import io
import os
import shutil
import socket
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from kimi_lsp.cli.check import collect_files
from kimi_lsp.cli.main import main as cli_main
from kimi_lsp.engine import Engine
from kimi_lsp.fixes import fix_until_stable
from kimi_lsp.workspace import Workspace

from ._support import copy_fixture_corpus, make_repo, python_safe_module

SERVER = Path(__file__).resolve().parents[2] / "server"
K3 = "model-path: moonshotai/Kimi-K3\ntp-size: 8\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"


def trap(marker: Path, what: str) -> str:
    """Python source that leaves ``marker`` behind if it ever runs."""
    return f"open({str(marker)!r}, 'a').write({what!r} + '\\n')\n"


def booby_trapped_project(root: Path, marker: Path) -> Path:
    """A repository whose every executable hook would write ``marker`` when run or imported."""
    make_repo(root)
    script = root / "hook.sh"
    script.write_text(f"#!/bin/sh\necho fsmonitor >> {marker}\n", "utf-8")
    script.chmod(0o755)
    (root / ".git" / "config").write_text(f"[core]\n\tfsmonitor = {script}\n\thooksPath = {root / 'hooks'}\n", "utf-8")
    (root / "hooks").mkdir()
    for hook in ("pre-commit", "post-checkout", "fsmonitor-watchman"):
        (root / "hooks" / hook).write_text(f"#!/bin/sh\necho {hook} >> {marker}\n", "utf-8")
        (root / "hooks" / hook).chmod(0o755)
    (root / "setup.py").write_text(trap(marker, "setup.py"), "utf-8")
    (root / "conftest.py").write_text(trap(marker, "conftest.py"), "utf-8")
    (root / "sitecustomize.py").write_text(trap(marker, "sitecustomize"), "utf-8")
    (root / "usercustomize.py").write_text(trap(marker, "usercustomize"), "utf-8")
    (root / "evil.pth").write_text("import os; " + trap(marker, ".pth").strip() + "\n", "utf-8")
    # modules that shadow what kimi-lsp imports, in case the project dir ended up on sys.path
    for mod in ("yaml", "packaging", "tomllib", "json", "pathlib", "kimi_lsp"):
        (root / f"{mod}.py").write_text(trap(marker, f"{mod}.py"), "utf-8")
    (root / "requirements.txt").write_text(
        "sglang==0.5.23\nflashinfer-python==0.6.16.post4\n-r extra/requirements.txt\n", "utf-8")
    (root / "extra").mkdir()
    (root / "extra" / "requirements.txt").write_text("-e .\n./local-pkg\n", "utf-8")
    (root / "pyproject.toml").write_text(
        "[build-system]\nrequires = ['setuptools']\nbuild-backend = 'setuptools.build_meta'\n"
        "[project]\nname = 'evil'\ndynamic = ['dependencies']\n"
        "[tool.setuptools.dynamic]\ndependencies = {file = ['requirements.txt']}\n", "utf-8")
    (root / "k3.yaml").write_text(K3, "utf-8")
    (root / "run.sh").write_text(
        f"#!/bin/bash\ntouch {marker}\npip install flashinfer-python==0.6.16\n"
        "python3 -m sglang.launch_server --config k3.yaml $(touch /tmp/never) `id`\n", "utf-8")
    (root / "Dockerfile").write_text(f"FROM x\nRUN touch {marker}\nCMD [\"python3\", \"-m\", \"sglang.launch_server\"]\n", "utf-8")
    (root / ".envrc").write_text(f"touch {marker}\n", "utf-8")
    return root


def test_nothing_in_the_project_runs_cli(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    root = booby_trapped_project(tmp_path / "proj", marker)
    env = dict(os.environ, PYTHONPATH=str(SERVER))
    env.pop("PYTHONSAFEPATH", None)
    # -P: like the `kimi-lsp` console script, the project directory is not put on sys.path
    for argv in (["--check", "."], ["--check", "--fix", "--unsafe-fixes", "."], ["--check", "requirements.txt"]):
        proc = subprocess.run(python_safe_module("kimi_lsp", *argv), cwd=root, env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode in (0, 1), (argv, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
    assert not marker.exists(), marker.read_text()
    assert not Path("/tmp/never").exists()


def test_nothing_in_the_project_runs_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine, the walk and the fixer never start a process nor import project code."""
    marker = tmp_path / "MARKER"
    root = booby_trapped_project(tmp_path / "proj", marker)
    calls: list[str] = []

    def forbidden(name):
        def _raise(*a, **kw):
            calls.append(name)
            raise AssertionError(f"{name} called while linting")
        return _raise

    for mod, names in ((subprocess, ("Popen", "run", "call", "check_call", "check_output")),
                       (os, ("system", "popen", "execv", "execve", "execvp", "fork", "spawnv", "posix_spawn"))):
        for n in names:
            if hasattr(mod, n):
                monkeypatch.setattr(mod, n, forbidden(f"{mod.__name__}.{n}"))
    before = set(sys.modules)
    ws = Workspace(root)
    files, _ = collect_files(["."], ws)

    def lint_all():
        eng = Engine(Workspace(root, overlays={p: t for p, t in ws._overlays.items()}))
        eng.index_config_references(files)
        out = []
        for f in files:
            out.extend(eng.lint_file(f).diagnostics)
        return out

    diags = lint_all()
    fix_until_stable(lint_all, ws, unsafe=True)
    assert diags
    assert not calls, calls
    assert not marker.exists()
    new = {m for m in set(sys.modules) - before if not m.startswith(("kimi_lsp", "encodings", "_"))}
    project_modules = {m for m in new if getattr(sys.modules.get(m), "__file__", None) and
                       str(root) in str(getattr(sys.modules[m], "__file__", ""))}
    assert not project_modules, project_modules


def test_yaml_python_tags_are_not_constructed(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    root = make_repo(tmp_path / "proj")
    (root / "requirements.txt").write_text("flashinfer-python==0.6.16.post4\n", "utf-8")
    payloads = [
        f"model-path: !!python/object/apply:os.system ['touch {marker}']\ntp-size: 8\n",
        f"model-path: x\ntp-size: !!python/object/new:subprocess.Popen [['touch', '{marker}']]\n",
        "model-path: x\nlora-paths: !!python/name:os.system\nx: !!python/module:os\n",
        f"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - command: !!python/object/apply:os.system ['touch {marker}']\n"
        "      args: [python3, -m, sglang.launch_server]\n",
    ]
    for i, text in enumerate(payloads):
        (root / f"c{i}.yaml").write_text(text, "utf-8")
    (root / "environment.yml").write_text(f"dependencies:\n  - !!python/object/apply:os.system ['touch {marker}']\n", "utf-8")
    (root / "conda-lock.yml").write_text(f"package: !!python/object/apply:os.system ['touch {marker}']\n", "utf-8")
    eng = Engine(Workspace(root))
    for i in range(len(payloads)):
        eng.lint_file(root / f"c{i}.yaml")
    assert not eng.errors, eng.errors
    assert not marker.exists()


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    attempts: list[str] = []

    class NoSocket(socket.socket):
        def __init__(self, *a, **kw):
            attempts.append(f"socket{a}")
            raise OSError("network access attempted during lint")

    def refuse(name):
        def _raise(*a, **kw):
            attempts.append(f"{name}{a[:1]}")
            raise OSError(f"{name} attempted during lint")
        return _raise

    monkeypatch.setattr(socket, "socket", NoSocket)
    for n in ("create_connection", "getaddrinfo", "gethostbyname", "socketpair"):
        monkeypatch.setattr(socket, n, refuse(n))
    import urllib.request

    monkeypatch.setattr(urllib.request, "urlopen", refuse("urlopen"))
    return attempts


def test_no_network_over_the_fixture_corpus(tmp_path: Path, no_network: list[str]) -> None:
    cases = copy_fixture_corpus(tmp_path / "corpus")
    total = 0
    for case in cases:
        ws = Workspace(case)
        files, _ = collect_files(["."], ws)
        files = [f for f in files if f.suffix != ".fixed"]

        def lint_all(case=case, files=files, ws=ws):
            eng = Engine(Workspace(case, overlays=dict(ws._overlays)))
            eng.index_config_references(files)
            out = []
            for f in files:
                out.extend(eng.lint_file(f).diagnostics)
            assert not eng.errors, eng.errors
            return out

        total += len(lint_all())
        fix_until_stable(lint_all, ws, unsafe=True)  # fixes computed and applied in memory
    assert total > 10
    assert not no_network, no_network


def test_no_network_through_the_cli_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_network: list[str]) -> None:
    root = tmp_path / "corpus"
    copy_fixture_corpus(root)
    for case in sorted(p for p in root.iterdir() if p.is_dir())[:8]:
        monkeypatch.chdir(case)
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            rc = cli_main(["--check", "--fix", "--unsafe-fixes", "."])
        assert rc in (0, 1), case.name
    assert not no_network, no_network


def _run_fix(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(root)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli_main(["--check", "--fix", "--unsafe-fixes", "."])
    return rc, out.getvalue() + err.getvalue()


def test_fix_never_writes_through_a_link_out_of_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "requirements.txt"
    victim.write_text("sglang==0.5.23\nflashinfer-python==0.6.16.post4\n", "utf-8")
    before = victim.read_bytes()
    root = make_repo(tmp_path / "repo")
    os.symlink(victim, root / "requirements.txt")
    (root / "k3.yaml").write_text(K3, "utf-8")
    rc, text = _run_fix(root, monkeypatch)
    assert victim.read_bytes() == before, text
    assert (root / "requirements.txt").is_symlink()


def test_fix_never_edits_an_included_file_outside_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "shared-pins"
    outside.mkdir()
    victim = outside / "base.txt"
    victim.write_text("flashinfer-python==0.6.16.post4\n", "utf-8")
    before = victim.read_bytes()
    root = make_repo(tmp_path / "repo")
    (root / "requirements.txt").write_text(f"sglang==0.5.23\n-r {victim}\n-r ../shared-pins/base.txt\n", "utf-8")
    (root / "k3.yaml").write_text(K3, "utf-8")
    rc, text = _run_fix(root, monkeypatch)
    assert victim.read_bytes() == before, text


def test_fix_never_writes_outside_through_a_linked_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "requirements.txt").write_text("sglang==0.5.23\nflashinfer-python==0.6.16.post4\n", "utf-8")
    (outside / "k3.yaml").write_text(K3, "utf-8")
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    root = make_repo(tmp_path / "repo")
    os.symlink(outside, root / "linked")
    rc, text = _run_fix(root, monkeypatch)
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before, text


def test_fix_stays_inside_and_does_fix_inside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: the same project, all inside the repository, does get fixed."""
    root = make_repo(tmp_path / "repo")
    (root / "requirements.txt").write_text("sglang==0.5.23\nflashinfer-python==0.6.16.post4\n", "utf-8")
    (root / "k3.yaml").write_text(K3, "utf-8")
    _run_fix(root, monkeypatch)
    assert "0.6.16.post4" not in (root / "requirements.txt").read_text("utf-8")
    shutil.rmtree(root)
