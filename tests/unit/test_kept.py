"""Values kept across runs (_kept.py): record methods and regular-expression programs.

A kept value must be exactly what making it anew gives, survive a restart, and never matter when
it is missing, broken or cannot be written.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kimi_lsp import _kept, _regex

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


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> _kept.Kept:
    monkeypatch.setattr(_kept, "_DIR", str(tmp_path))
    fresh = _kept.Kept("regex_programs")
    monkeypatch.setattr(_regex, "_programs", fresh)
    return fresh


@pytest.mark.parametrize(("pattern", "flags"), PATTERNS)
def test_a_kept_program_is_the_pattern_re_compiles(store: _kept.Kept, pattern: str | bytes, flags: int) -> None:
    expected = re.compile(pattern, flags)
    made = _regex.compile(pattern, flags)  # compiled, and its program kept
    assert made == expected and store._data
    store.save()
    again = _kept.Kept("regex_programs")  # a new run: read from the file
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
    monkeypatch.setattr(_kept, "_DIR", str(tmp_path))
    kept = _kept.Kept("t")
    kept.put("k", object())
    kept.put("ok", (1, "x"))
    kept.save()
    assert _kept.Kept("t").get("k") is None and _kept.Kept("t").get("ok") == (1, "x")


def test_a_broken_file_is_ignored_and_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_kept, "_DIR", str(tmp_path))
    kept = _kept.Kept("t")
    Path(kept._path).write_bytes(b"\x00not marshal")
    assert kept.get("k") is None
    kept.put("k", [1, "v"])
    kept.save()
    assert _kept.Kept("t").get("k") == [1, "v"]


def test_past_the_limit_a_save_keeps_what_the_run_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_kept, "_DIR", str(tmp_path))
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


def test_an_unwritable_package_only_means_making_it_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("not a directory", "utf-8")
    monkeypatch.setattr(_kept, "_DIR", str(tmp_path / "file" / "__pycache__"))
    kept = _kept.Kept("t")
    kept.put("k", 1)
    kept.save()  # nothing raised, nothing written
    assert not os.path.exists(kept._path) and kept.get("k") == 1


def test_programs_are_kept_across_real_starts(tmp_path: Path) -> None:
    """Two interpreters in a row: the second compiles nothing its predecessor kept."""
    code = ("import re, sys; n = [0]; orig = re._compile\n"
            "def count(p, f):\n    n[0] += not isinstance(p, re.Pattern)\n    return orig(p, f)\n"
            "re._compile = count\n"
            "from kimi_lsp import _kept; _kept._DIR = sys.argv[1]\n"
            "from kimi_lsp import _regex; _regex._programs = _kept.Kept('regex_programs')\n"
            "p = _regex.compile(r'(?P<k>[a-z]+) = \\d+'); print(n[0], p.match('ab = 12').group('k'))")
    env = {"PYTHONPATH": str(ROOT / "server"), "PATH": ""}
    runs = [subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True,
                           env=env).stdout.split() for _ in range(2)]
    assert runs == [["1", "ab"], ["0", "ab"]]
