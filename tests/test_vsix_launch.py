"""The VS Code extension's bootstrap (vscode-extension/bundled/tool/launch.py): the wheels it
unpacks into the extension's storage stay one whole directory. Racing starts unpack once; a
directory without a (readable, complete) manifest, with a truncated or same-size-damaged file is
unpacked again and swapped in; every file and directory is fsync'ed before the rename; reuse costs
one stat per file (hashes only once a boot or a week); old bundles are pruned without following
links. A tiny kimi_lsp wheel stands in for the real bundle (tests/test_vsix_bundle.py and the
extension's end-to-end test cover the real one)."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = ROOT / "vscode-extension" / "bundled" / "tool" / "launch.py"
MAIN = 'import sys\nfrom kimi_lsp.cli.main import entry\nsys.exit(entry())\n'
CLI = 'import sys\n\ndef entry() -> int:\n    print("kimi-lsp 0.1.0 " + " ".join(sys.argv[1:]))\n    return 0\n'
FILES = {
    "kimi_lsp/__init__.py": "",
    "kimi_lsp/__main__.py": MAIN,
    "kimi_lsp/cli/__init__.py": "",
    "kimi_lsp/cli/main.py": CLI,
    "kimi_lsp/data/table.json": '{"rows": [' + ", ".join(str(i) for i in range(200)) + "]}\n",
    "kimi_lsp-0.1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: kimi-lsp\nVersion: 0.1.0\n",
    "kimi_lsp-0.1.0.data/scripts/kimi-lsp": "#!python\n",
}
# Makes N processes wait for each other before they start, and counts the unpacks they do.
DRIVER = """
import importlib.util, os, sys, time
launch_py, ready, n, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
spec = importlib.util.spec_from_file_location("launch", launch_py)
launch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(launch)
unpack = launch.unpack
def counted(*args, **kwargs):
    with open(log, "a") as f:
        f.write("unpack\\n")
    return unpack(*args, **kwargs)
launch.unpack = counted
open(os.path.join(ready, str(os.getpid())), "w").close()
while len(os.listdir(ready)) < n:
    time.sleep(0.005)
sys.exit(launch.main(sys.argv[5:]))
"""


def _launch() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kimi_lsp_bundle_launch", LAUNCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def ext(tmp_path: Path) -> Path:
    """An installed extension: bundled/tool/launch.py and bundled/libs/ with one small wheel."""
    (tmp_path / "ext" / "bundled" / "tool").mkdir(parents=True)
    (tmp_path / "ext" / "bundled" / "libs").mkdir()
    (tmp_path / "ext" / "bundled" / "tool" / "launch.py").write_bytes(LAUNCH.read_bytes())
    with zipfile.ZipFile(tmp_path / "ext" / "bundled" / "libs" / "kimi_lsp-0.1.0-py3-none-any.whl", "w") as zf:
        for name, text in FILES.items():
            zf.writestr(name, text)
    return tmp_path / "ext"


@pytest.fixture()
def launch(ext: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """launch.py loaded from the extension (its wheels are ext's), with its own boot id file."""
    spec = importlib.util.spec_from_file_location("kimi_lsp_bundle_launch", ext / "bundled" / "tool" / "launch.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (tmp_path / "boot_id").write_text("boot-1\n")
    monkeypatch.setattr(module, "BOOT_ID", str(tmp_path / "boot_id"))
    return module


def _start(ext: Path, storage: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-I", "-u", str(ext / "bundled" / "tool" / "launch.py"), "--storage", str(storage), "--", "--version"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _bundles(storage: Path) -> list[Path]:
    return sorted((storage / "server").iterdir())


def test_racing_first_starts_all_start_from_one_directory_unpacked_once(ext: Path, tmp_path: Path) -> None:
    n = 8
    storage, ready, log = tmp_path / "st", tmp_path / "ready", tmp_path / "unpacks.log"
    ready.mkdir()
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    cmd = [sys.executable, "-I", "-u", str(driver), str(ext / "bundled" / "tool" / "launch.py"), str(ready), str(n), str(log)]
    procs = [subprocess.Popen([*cmd, "--storage", str(storage), "--", "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(n)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.startswith("kimi-lsp 0.1.0"), out
        assert err == "", "no start fell back to a temporary copy or saw damage"
    bundles = _bundles(storage)
    assert len(bundles) == 1 and not bundles[0].name.startswith("."), bundles
    assert log.read_text().count("unpack") == 1, "the starts that waited for the lock found the first one's directory"


def test_a_leftover_directory_without_its_marker_is_replaced_once(ext: Path, tmp_path: Path) -> None:
    storage = tmp_path / "st"
    assert _start(ext, storage).returncode == 0
    (final,) = _bundles(storage)
    (final / ".kimi-lsp-bundle-complete").unlink()
    (final / "kimi_lsp" / "stray.py").write_text("")  # what an older build's crash may leave
    first = _start(ext, storage)
    assert first.returncode == 0 and first.stdout.startswith("kimi-lsp 0.1.0")
    assert "was damaged (no readable marker" in first.stderr and "temporary copy" not in first.stderr
    second = _start(ext, storage)
    assert (second.returncode, second.stderr) == (0, ""), "repaired for good: no warning, no temporary copy"
    assert _bundles(storage) == [final]
    assert not (final / "kimi_lsp" / "stray.py").exists(), "the directory was replaced, not patched"


def test_a_truncated_module_in_a_marked_directory_is_repaired_on_the_next_start(ext: Path, tmp_path: Path) -> None:
    storage = tmp_path / "st"
    assert _start(ext, storage).returncode == 0
    (final,) = _bundles(storage)
    (final / "kimi_lsp" / "cli" / "main.py").write_text("")
    r = _start(ext, storage)
    assert r.returncode == 0 and r.stdout.startswith("kimi-lsp 0.1.0"), r.stderr
    assert "kimi_lsp/cli/main.py has 0 bytes, not" in r.stderr
    assert (final / "kimi_lsp" / "cli" / "main.py").read_text() == CLI
    assert _start(ext, storage).stderr == ""


@pytest.mark.parametrize("marker", ["old", "cut"])
def test_a_marker_without_a_whole_manifest_means_unpack_again(launch: ModuleType, tmp_path: Path, marker: str) -> None:
    storage = tmp_path / "st"
    wheels = launch.list_wheels(launch.wheels_dir())
    key = launch.bundle_key(wheels)
    final = Path(launch.prepare_in(str(storage), wheels, key))
    path = final / ".kimi-lsp-bundle-complete"
    text = path.read_text()
    # The old marker (the key alone), or a manifest cut short at the end of a line.
    path.write_text(key + "\n" if marker == "old" else "".join(text.splitlines(keepends=True)[:4]))
    assert launch.inspect(str(final), key, False) is not None
    launch.prepare_in(str(storage), wheels, key)
    assert path.read_text() == text and launch.inspect(str(final), key, True) is None


def test_reuse_stats_each_file_and_hashes_only_after_a_boot_or_a_week(launch: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = tmp_path / "st"
    wheels = launch.list_wheels(launch.wheels_dir())
    key = launch.bundle_key(wheels)
    final = Path(launch.prepare_in(str(storage), wheels, key))
    manifest, _ = launch.read_marker(str(final), key)
    files = len(manifest)
    assert files == len([n for n in FILES if ".data/" not in n]) and files >= 5
    hashed: list[str] = []
    stats: list[str] = []
    real_sha256, real_lstat = launch.file_sha256, os.lstat

    def sha256(path: str) -> str:
        hashed.append(path)
        return str(real_sha256(path))

    def lstat(path: str, *args: object, **kwargs: object) -> os.stat_result:
        stats.append(path)
        return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(launch, "file_sha256", sha256)
    monkeypatch.setattr(launch.os, "lstat", lstat)

    for starts in (1, 4):  # the unpack noted its hashes: plain starts only compare sizes
        stats.clear()
        for _ in range(starts):
            launch.prepare_in(str(storage), wheels, key)
        assert hashed == []
        assert files * starts <= len(stats) <= (files + 3) * starts, "one stat per file, and a few for the directory"

    # Same-size damage (what a power loss can leave): found by the hashes on the next boot's first start.
    main = final / "kimi_lsp" / "cli" / "main.py"
    main.write_text("#" * len(CLI))
    launch.prepare_in(str(storage), wheels, key)
    assert hashed == [], "not a new boot and not a week: the hashes are not read"
    (tmp_path / "boot_id").write_text("boot-2\n")
    launch.prepare_in(str(storage), wheels, key)
    assert main.read_text() == CLI, "repaired"
    hashed.clear()
    launch.prepare_in(str(storage), wheels, key)
    assert hashed == [], "checked once for this boot"

    # A week after the last full check, the hashes are read again.
    verified = final / ".kimi-lsp-bundle-verified"
    old = time.time() - launch.VERIFY_SECONDS - 60
    os.utime(verified, (old, old))
    launch.prepare_in(str(storage), wheels, key)
    assert len(hashed) == files


def test_every_file_and_directory_is_fsynced_before_the_rename(launch: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.name == "nt":
        pytest.skip("directories are not fsync'ed on Windows")
    events: list[tuple[str, str]] = []
    real_fsync, real_rename = os.fsync, os.rename

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}") if os.path.isdir("/proc/self/fd") else str(fd)))
        real_fsync(fd)

    def rename(src: str, dst: str) -> None:
        events.append(("rename", str(dst)))
        real_rename(src, dst)

    monkeypatch.setattr(launch.os, "fsync", fsync)
    monkeypatch.setattr(launch.os, "rename", rename)
    wheels = launch.list_wheels(launch.wheels_dir())
    key = launch.bundle_key(wheels)
    final = launch.prepare_in(str(tmp_path / "st"), wheels, key)
    renames = [i for i, (what, target) in enumerate(events) if what == "rename" and target == final]
    assert len(renames) == 1
    before = [p for what, p in events[: renames[0]] if what == "fsync"]
    after = [p for what, p in events[renames[0]:] if what == "fsync"]
    manifest, _ = launch.read_marker(final, key)
    dirs = {os.path.dirname(rel) for rel, _, _ in manifest} - {""}
    # every file, the marker, and every directory (kimi_lsp, kimi_lsp/cli, ..., the top one)
    assert len(before) >= len(manifest) + 1 + len(dirs) + 1
    if os.path.isdir("/proc/self/fd"):
        assert sum(p.endswith(os.sep + ".kimi-lsp-bundle-complete") for p in before) == 1
        assert {os.path.basename(p) for p in before} >= {"main.py", "table.json", "cli", "kimi_lsp"}
        assert after == [os.path.dirname(final)], "then the parent, so that the rename itself is durable"


@pytest.mark.parametrize("winner", ["whole", "empty"])
def test_a_start_without_a_lock_that_loses_the_rename_uses_the_winners_directory_only_when_whole(
    launch: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, winner: str
) -> None:
    import errno

    def no_locks(fd: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(launch.Lock, "_lock", staticmethod(no_locks))
    wheels = launch.list_wheels(launch.wheels_dir())
    key = launch.bundle_key(wheels)
    storage = tmp_path / "st"
    real_install = launch.install

    def lose_the_race(wheels: list[str], parent: str, key: str) -> None:
        # Another start put its directory in place between this one's check and its rename.
        if winner == "whole":
            real_install(wheels, parent, key)
        else:
            os.mkdir(os.path.join(parent, key))
        raise OSError(errno.ENOTEMPTY, "Directory not empty")

    monkeypatch.setattr(launch, "install", lose_the_race)
    if winner == "whole":
        final = launch.prepare_in(str(storage), wheels, key)
        assert launch.inspect(final, key, True) is None
    else:
        with pytest.raises(OSError):
            launch.prepare_in(str(storage), wheels, key)  # what is in place is not whole: no pass
        monkeypatch.setattr(launch, "install", real_install)
        final = launch.prepare_in(str(storage), wheels, key)  # the next start repairs it
        assert launch.inspect(final, key, True) is None


def test_prune_deletes_old_and_renamed_away_bundles_and_never_follows_a_link(launch: ModuleType, tmp_path: Path) -> None:
    storage = tmp_path / "st"
    server = storage / "server"
    server.mkdir(parents=True)
    now = time.time()
    old = now - launch.STALE_SECONDS - 60

    def bundle(name: str, used: float, marker: bool = True) -> Path:
        d = server / name
        (d / "kimi_lsp").mkdir(parents=True)
        (d / "kimi_lsp" / "__init__.py").write_text("")
        if marker:
            (d / ".kimi-lsp-bundle-complete").write_text("x\n")
            os.utime(d / ".kimi-lsp-bundle-complete", (used, used))
        os.utime(d, (used, used))
        return d

    stale, recent, damaged_old, damaged_new = bundle("0.0.1-a", old), bundle("0.0.2-b", now), bundle("0.0.3-c", old, False), bundle("0.0.4-d", now, False)
    aside = bundle(".tmp-old-0.0.5-e-1-ff", now)
    building = bundle(".tmp-0.1.0-x-abc", now)
    abandoned = bundle(".tmp-0.1.0-x-def", now - launch.STALE_TMP_SECONDS - 60)
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    (server / "0.0.6-link").symlink_to(outside, target_is_directory=True)
    os.utime(server / "0.0.6-link", (old, old), follow_symlinks=False)
    wheels = launch.list_wheels(launch.wheels_dir())
    key = launch.bundle_key(wheels)
    launch.prepare_in(str(storage), wheels, key)
    left = {p.name for p in server.iterdir()}
    assert left == {key, recent.name, damaged_new.name, building.name}, left
    assert not any(p.exists() for p in (stale, damaged_old, aside, abandoned))
    assert (outside / "keep.txt").read_text() == "keep", "a link is removed, not what it points at"


def test_a_wheel_entry_that_leaves_the_directory_is_refused(launch: ModuleType, tmp_path: Path) -> None:
    for name in ("../escape.py", "/abs.py", "a/../../b.py", "C:/x.py", "a\\..\\b.py"):
        whl = tmp_path / "bad.whl"
        with zipfile.ZipFile(whl, "w") as zf:
            zf.writestr(name, "")
        target = tmp_path / "t"
        target.mkdir()
        with pytest.raises(RuntimeError, match="refusing the entry"):
            launch.unpack([str(whl)], str(target))
        assert list(target.iterdir()) == []
        target.rmdir()


def test_a_stale_bundle_that_a_running_server_holds_is_not_pruned(ext: Path, tmp_path: Path) -> None:
    """A window of an old extension version left open for weeks runs from a bundle whose marker
    nobody touched: the running process's shared lock keeps it; once it exits, it is pruned."""
    if os.name == "nt":
        pytest.skip("on Windows the held file keeps the directory from being renamed instead")
    storage = tmp_path / "st"
    old_ext = tmp_path / "old-ext"
    (old_ext / "bundled").mkdir(parents=True)
    (old_ext / "bundled" / "tool").symlink_to(ext / "bundled" / "tool", target_is_directory=True)
    (old_ext / "bundled" / "libs").mkdir()
    with zipfile.ZipFile(old_ext / "bundled" / "libs" / "kimi_lsp-0.0.9-py3-none-any.whl", "w") as zf:
        for name, text in FILES.items():
            if name != "kimi_lsp/cli/main.py":
                zf.writestr(name.replace("0.1.0", "0.0.9"), text)
        # the old server: starts, says so, and runs until its stdin closes
        zf.writestr("kimi_lsp/cli/main.py", CLI.replace("    return 0", "    sys.stdout.flush()\n    sys.stdin.read()\n    return 0"))
    launch = old_ext / "bundled" / "tool" / "launch.py"
    server = subprocess.Popen([sys.executable, "-I", "-u", str(launch), "--storage", str(storage), "--", "serve"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().startswith("kimi-lsp 0.1.0 serve")
        (old,) = _bundles(storage)
        assert old.name.startswith("0.0.9-")
        past = time.time() - 40 * 24 * 3600
        os.utime(old / ".kimi-lsp-bundle-complete", (past, past))
        assert _start(ext, storage).returncode == 0  # the new version unpacks and prunes
        assert old in _bundles(storage), "in use: kept"
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=60)
    new = [b for b in _bundles(storage) if b != old][0]
    shutil.rmtree(new)  # the next start unpacks again, and prunes again
    assert _start(ext, storage).returncode == 0
    assert old not in _bundles(storage), "no longer in use and unused for 40 days: pruned"
