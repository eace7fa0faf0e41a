"""Values kept across runs (_kept.py): record methods and regular-expression programs.

A kept value must be exactly what making it anew gives, survive a restart, and never matter when
it is missing, broken, made by something else, not this user's own or cannot be written. Kept
files live in the user's cache directory, never in the package, one directory per interpreter,
install and ``-O`` level, written 0600 in 0700 directories whatever the umask.
"""
from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from kimi_lsp import _kept, _record, _regex, cache

ROOT = Path(__file__).resolve().parents[2]

PATTERNS: list[tuple[str | bytes, int]] = [
    (r"\r\n|\r|\n", 0),
    (r"(?P<key>[A-Za-z0-9_-]+) = (?P<value>\"[^\"]*\")\n", 0),
    (r"^\s*#\s+(?:via\s+)?(?:\(from\s+)?(-[rc])\s+(\S+?)\)?\s*$", 0),
    (r"(?:^|(?<=\s))#\s*kimi-lsp:\s*(?P<kind>ignore-file|ignore)\b", re.I),
    (r"^(?:wheels|files)[ \t]*=[ \t]*\[\{[^\n]*\}\][ \t]*$", re.M),
    (r"""\s*v? (?:(?P<epoch>[0-9]+)!)? (?P<release>[0-9]+(?:\.[0-9]+)*)""", re.X | re.I),
    (rb"^#!\s*\S*(?:/|env\s+)(?:ba|z|k|da)?sh\b", 0),
    (r"[\x00-\x08\x0b-\x1f\x7f]|é+|\u2028", 0),
    (r"(a)(?(1)b|c)(?!d)(?i:e)", 0),
]


def _kept_in(where: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Kept files go to ``where``/cache/kept/this for the rest of the test."""
    kept = where / "cache" / "kept" / "this"
    monkeypatch.setattr(_kept, "_kept_dir", [str(kept)])
    monkeypatch.setattr(_kept, "_chains", {})
    return kept


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> _kept.Kept:
    _kept_in(tmp_path, monkeypatch)
    fresh = _kept.Kept("regex_programs", _regex._TAG)
    monkeypatch.setattr(_regex, "_programs", fresh)
    return fresh


def _child_env(tmp_path: Path, **env: str) -> dict[str, str]:
    return {"PYTHONPATH": str(ROOT / "server"), "PATH": "", "KIMI_LSP_CACHE_DIR": str(tmp_path / "cache"), **env}


@pytest.mark.parametrize(("pattern", "flags"), PATTERNS)
def test_a_kept_program_is_the_pattern_re_compiles(store: _kept.Kept, pattern: str | bytes, flags: int) -> None:
    expected = re.compile(pattern, flags)
    made = _regex.compile(pattern, flags)  # compiled, and its program kept
    if not _kept.FAST:  # the plain path (KIMI_LSP_PLAIN_STARTUP=1): re.compile's own, nothing kept
        assert made == expected and not store._data
        return
    assert made == expected and store._data
    store.save()
    again = _kept.Kept("regex_programs", _regex._TAG)  # a new run: read from the file
    assert again.get((_regex._TAG, pattern, flags)) is not None
    _regex._programs = again
    kept = _regex.compile(pattern, flags)
    assert kept == expected
    assert (kept.groupindex, kept.groups, kept.flags) == (expected.groupindex, expected.groups, expected.flags)
    sample = "a\r\nb = \"c\"\n# kimi-lsp: ignore[KL1]\néé\u2028ab" if isinstance(pattern, str) else b"#!/bin/sh\n"
    assert [m.span() for m in kept.finditer(sample)] == [m.span() for m in expected.finditer(sample)]


def test_a_program_the_engine_refuses_is_compiled_anew(store: _kept.Kept) -> None:
    key = (_regex._TAG, "ab+", 0)
    store.put(key, (32, [1, 2, 3], 0, {}, (None,)))  # not a valid program
    assert _regex.compile("ab+") == re.compile("ab+")
    store.put(key, "junk")
    assert _regex.compile("ab+") == re.compile("ab+")


def test_what_marshal_cannot_keep_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _kept_in(tmp_path, monkeypatch)
    kept = _kept.Kept("t")
    kept.put("k", object())
    kept.put("ok", (1, "x"))
    kept.save()
    assert _kept.Kept("t").get("k") is None and _kept.Kept("t").get("ok") == (1, "x")


def test_a_broken_file_is_ignored_and_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    where = _kept_in(tmp_path, monkeypatch)
    where.mkdir(parents=True, mode=0o700)
    kept = _kept.Kept("t")
    path = Path(str(kept._path))
    path.write_bytes(b"\x00not marshal")
    path.chmod(0o600)
    assert kept.get("k") is None
    kept.put("k", [1, "v"])
    kept.save()
    assert _kept.Kept("t").get("k") == [1, "v"]


def test_every_damaged_byte_is_a_miss_never_another_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each byte of a kept file changed in turn: a get gives the value or None (made again),
    never a traceback or another value (each entry's CRC, and the index's; the red team's k5)."""
    _kept_in(tmp_path, monkeypatch)
    values = {("shape", 1): ("a", 1, 2.5), ("shape", 2): compile("x = 1\ny = x + 1\n", "<t>", "exec"), "s": "x" * 40}
    kept = _kept.Kept("t")
    for k, v in values.items():
        kept.put(k, v)
    kept.save()
    path = Path(str(kept._path))
    good = path.read_bytes()
    misses = 0
    for at in range(len(good)):
        path.write_bytes(good[:at] + bytes([good[at] ^ 0x5A]) + good[at + 1:])
        run = _kept.Kept("t")
        for k, v in values.items():
            got = run.get(k)
            misses += got is None
            assert got is None or got == v, (at, k)
    assert misses >= len(good) - 16  # (only changes marshal reads the same way go unseen)
    path.write_bytes(good)
    assert all(_kept.Kept("t").get(k) == v for k, v in values.items())


def test_another_generator_or_interpreter_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file says what made it: an upgraded generator (``_record.py`` changed: the red team's
    k2) or another interpreter's file is not read, whatever its keys."""
    _kept_in(tmp_path, monkeypatch)
    old = _kept.Kept("t", ("_record", 100, 1))
    old.put("shape", "old code")
    old.save()
    assert _kept.Kept("t", ("_record", 100, 1)).get("shape") == "old code"
    assert _kept.Kept("t", ("_record", 101, 2)).get("shape") is None
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    assert _kept.Kept("t", ("_record", 100, 1)).get("shape") is None


def test_the_record_code_is_kept_by_its_generator() -> None:
    st = os.stat(_record.__file__)
    assert _record._codes._ident[-1] == ("_record", st.st_size, st.st_mtime_ns)
    assert _record._codes.bytecode  # not written under -B


def test_past_the_limit_a_save_keeps_what_the_run_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _kept_in(tmp_path, monkeypatch)
    old = _kept.Kept("t")
    for i in range(10):
        old.put(f"old{i}", i)
    old.save()
    run = _kept.Kept("t")
    monkeypatch.setattr(_kept.Kept, "LIMIT", 5)
    assert run.get("old3") == 3
    run.put("new", 1)
    run.save()
    saved = _kept.Kept("t")
    assert sorted(saved._load()) == ["new", "old3"] and saved.get("old3") == 3 and saved.get("new") == 1


def test_an_unwritable_cache_directory_only_means_making_it_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("not a directory", "utf-8")
    monkeypatch.setattr(_kept, "_kept_dir", [str(tmp_path / "file" / "kept" / "this")])
    monkeypatch.setattr(_kept, "_chains", {})
    kept = _kept.Kept("t")
    kept.put("k", 1)
    kept.save()  # nothing raised, nothing written
    assert not os.path.exists(str(kept._path)) and kept.get("k") == 1


def test_kept_files_are_this_users_alone_whatever_the_umask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under umask 000 (a root CI job, a service with UMask=0000) a kept file is still 0600 and
    its directories 0700: nobody else can put code into the next run (the red team's k3)."""
    kept_dir = _kept_in(tmp_path, monkeypatch)
    old = os.umask(0)
    try:
        kept = _kept.Kept("t")
        kept.put("k", 1)
        kept.save()
    finally:
        os.umask(old)
    for d in (kept_dir.parent.parent, kept_dir.parent, kept_dir):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
    assert stat.S_IMODE(Path(str(kept._path)).stat().st_mode) == 0o600
    assert [p.name for p in kept_dir.iterdir()] == ["t.marshal"]  # no temporary file left behind


@pytest.mark.parametrize("how", ["file writable by others", "directory writable by others", "file is a link",
                                 "directory is a link", "another owner"])
def test_a_kept_file_someone_else_could_have_written_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 how: str) -> None:
    kept_dir = _kept_in(tmp_path, monkeypatch)
    kept = _kept.Kept("t")
    kept.put("k", "mine")
    kept.save()
    path = Path(str(kept._path))
    if how == "file writable by others":
        path.chmod(0o646)
    elif how == "directory writable by others":
        kept_dir.chmod(0o777)
    elif how == "file is a link":
        real = tmp_path / "elsewhere.marshal"
        path.rename(real)
        real.chmod(0o600)
        path.symlink_to(real)
        linked = real.read_bytes()
    elif how == "directory is a link":
        kept_dir.rename(tmp_path / "elsewhere")
        kept_dir.symlink_to(tmp_path / "elsewhere")
    else:
        if os.geteuid() != 0:
            pytest.skip("changing a file's owner needs root")
        os.chown(path, 1000, 1000)
    monkeypatch.setattr(_kept, "_chains", {})
    assert _kept.Kept("t").get("k") is None
    again = _kept.Kept("t")
    again.put("k", "made again")
    again.save()  # never through a link, never into a directory others can write
    if how == "directory is a link":
        assert _kept.read(str(path), again._ident) is None  # nothing was written there
    if how == "directory writable by others":  # kimi-lsp's own directory: made this user's alone first
        assert stat.S_IMODE(kept_dir.stat().st_mode) == 0o755 and _kept.Kept("t").get("k") == "made again"
    if how == "file is a link":  # the link was replaced, its target left alone
        assert not path.is_symlink() and (tmp_path / "elsewhere.marshal").read_bytes() == linked


def test_kept_files_live_in_the_user_cache_directory_one_per_level(tmp_path: Path) -> None:
    """Keyed by package version, cache tag, ``-O`` level and interpreter/install: a -OO run never
    shares a file with a normal one (the red team's k1); the directory is the result cache's."""
    code = "from kimi_lsp import _kept, cache; print(_kept.kept_dir()); print(cache.directory())"
    dirs = []
    for opt in ([], ["-O"], ["-OO"]):
        out = subprocess.run([sys.executable, *opt, "-c", code], capture_output=True, text=True, check=True,
                             env=_child_env(tmp_path)).stdout.split("\n")
        assert out[1] == str(tmp_path / "cache") and out[0].startswith(str(tmp_path / "cache" / "kept") + os.sep)
        assert f"-{sys.implementation.cache_tag}-O{len(opt[0]) - 1 if opt else 0}-" in out[0]
        dirs.append(out[0])
    assert len(set(dirs)) == 3


@pytest.mark.parametrize(("env", "fast"), [({}, True), ({"KIMI_LSP_PLAIN_STARTUP": "1"}, False),
                                           ({"KIMI_LSP_PLAIN_STARTUP": "0"}, True)])
def test_the_switch_forces_the_plain_path(tmp_path: Path, env: dict[str, str], fast: bool) -> None:
    code = "from kimi_lsp import _kept, _regex; print(_kept.FAST, _regex._TAG is not None)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=_child_env(tmp_path, **env)).stdout.split()
    assert out == [str(fast and _kept.TESTED)] * 2


def test_only_tested_interpreters_take_the_fast_path() -> None:
    assert _kept.TESTED == (sys.implementation.name == "cpython" and (3, 10) <= sys.version_info[:2] <= (3, 13))


def test_the_result_cache_and_the_kept_files_share_one_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for env in ({"KIMI_LSP_CACHE_DIR": str(tmp_path / "a")}, {"XDG_CACHE_HOME": str(tmp_path / "x")},
                {"HOME": str(tmp_path / "h")}):
        for name in ("KIMI_LSP_CACHE_DIR", "XDG_CACHE_HOME"):
            monkeypatch.delenv(name, raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        assert cache.directory() == _kept.cache_root() and str(_kept.cache_root()).startswith(str(tmp_path))


def test_programs_are_kept_across_real_starts(tmp_path: Path) -> None:
    """Two interpreters in a row: the second compiles nothing its predecessor kept."""
    code = ("import re, sys; n = [0]; orig = re._compile\n"
            "def count(p, f):\n    n[0] += not isinstance(p, re.Pattern)\n    return orig(p, f)\n"
            "re._compile = count\n"
            "from kimi_lsp import _regex\n"
            "p = _regex.compile(r'(?P<k>[a-z]+) = \\d+'); print(n[0], p.match('ab = 12').group('k'))")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env=_child_env(tmp_path)).stdout.split() for _ in range(2)]
    assert runs == [["1", "ab"], ["0", "ab"]]


def test_a_new_kept_directory_prunes_the_stale_ones_never_through_a_link(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run of another version, interpreter or install removes the kept directories
    nothing wrote to for STALE_SECONDS (what an upgrade or an uninstall left): its own files only,
    never through a link, never a directory in use."""
    kept_dir = _kept_in(tmp_path, monkeypatch)
    top = kept_dir.parent
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "imports.marshal").write_text("not mine to delete", "utf-8")
    old = 1_000_000_000  # 2001
    for name, files in (("0.0.9-cpython-311-O0-00000000", 3), ("0.1.0-cpython-310-O0-11111111", 1), ("recent", 2)):
        d = top / name
        d.mkdir(parents=True, mode=0o700)
        for i in range(files):
            (d / f"f{i}.marshal").write_bytes(b"x")
        if name != "recent":
            os.utime(d, (old, old))
    (top / "link").symlink_to(victim, target_is_directory=True)
    os.utime(top / "link", (old, old), follow_symlinks=False)
    kept = _kept.Kept("t")
    kept.put("k", 1)
    kept.save()  # creates kept/this: the stale siblings go
    assert sorted(p.name for p in top.iterdir()) == ["link", "recent", "this"]
    assert (victim / "imports.marshal").exists() and len(list((top / "recent").iterdir())) == 2
    kept.save()  # an existing directory prunes nothing (once per new directory)
    assert _kept.Kept("t").get("k") == 1
