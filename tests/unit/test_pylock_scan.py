"""The scan-based pylock.toml reader (``syntax.pylock.scan_pylock``) against the tomllib path it
stands in for.

``read_pylock`` reads a pylock.toml as ``uv export`` writes it with the scan, and anything else
(pip's sub-tables, a package without a version, comments after the header, ...) with tomllib and
the TOML locator (``_read_toml_lock``). Both must give the same ``PinSource``: pins, names,
versions, markers, spans, hashes, tool, relock command and problems. Checked on every pylock
fixture uv wrote (each must take the scan), and on mutations of them (lines dropped, doubled,
edited) where either the scan declines or its answer equals tomllib's.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.pins import _lock_readers, locks
from kimi_lsp.pins.model import PinFormat, PinSource
from kimi_lsp.syntax.pylock import scan_pylock
from kimi_lsp.workspace import SourceText

TESTS = Path(__file__).resolve().parent.parent
PYLOCKS = sorted(p for p in TESTS.rglob("pylock*.toml") if p.is_file())
UV_EXPORTS = [p for p in PYLOCKS if 'created-by = "uv"' in p.read_text("utf-8")]
UV_EXPORT = TESTS / "pins_fixtures" / "pylock" / "uv-export" / "pylock.toml"


def _tomllib_path(path: Path, text: str) -> PinSource:
    source = SourceText(path, text)
    return locks._guarded(source, PinFormat.PYLOCK, None,
                          lambda: _lock_readers._read_toml_lock(source, PinFormat.PYLOCK, None, "packages"))


def _both(path: Path, text: str) -> tuple[PinSource, PinSource]:
    return locks.read_pylock(SourceText(path, text)), _tomllib_path(path, text)


def test_there_are_uv_exported_and_other_pylock_fixtures() -> None:
    assert len(UV_EXPORTS) >= 2 and len(PYLOCKS) > len(UV_EXPORTS)


@pytest.mark.parametrize("path", UV_EXPORTS, ids=lambda p: str(p.relative_to(TESTS)))
def test_every_uv_export_takes_the_scan_and_matches_tomllib(path: Path) -> None:
    text = path.read_text("utf-8")
    scanned = locks._scan_pylock(SourceText(path, text))
    assert scanned is not None, "uv's own export must not fall back to tomllib"
    reference = _tomllib_path(path, text)
    assert len(reference.pins) > 50 and not reference.problems and reference.tool == "uv"
    assert scanned == reference and scanned.pins == reference.pins
    assert (scanned.tool, scanned.relock_command) == (reference.tool, reference.relock_command)
    fi = scanned.pins_for("flashinfer-python")
    assert fi and fi == reference.pins_for("flashinfer-python")


@pytest.mark.parametrize("path", [p for p in PYLOCKS if p not in UV_EXPORTS], ids=lambda p: str(p.relative_to(TESTS)))
def test_other_producers_are_read_with_tomllib(path: Path) -> None:
    text = path.read_text("utf-8")
    assert scan_pylock(text) is None  # pip writes sub-tables ([[packages.wheels]])
    got, want = _both(path, text)
    assert got == want and type(got) is PinSource


def _mutations(text: str, step: int) -> list[str]:
    lines = text.split("\n")
    out: list[str] = []
    for i in range(0, len(lines), step):
        out.append("\n".join(lines[:i] + lines[i + 1 :]))  # dropped
        out.append("\n".join(lines[: i + 1] + lines[i:]))  # doubled (a key defined twice, ...)
        out.append("\n".join(lines[:i] + [lines[i] + " # note"] + lines[i + 1 :]))
        out.append("\n".join(lines[:i] + [lines[i].replace('"', "'", 2)] + lines[i + 1 :]))
        out.append("\n".join(lines[:i] + [lines[i].replace(" = ", "=", 1)] + lines[i + 1 :]))
    return out


def test_mutated_exports_match_tomllib() -> None:
    text = UV_EXPORT.read_text("utf-8")
    # the header, the top-level keys and the first packages line by line, then every 7th line
    head = "\n".join(text.split("\n")[:60])
    for mutated in [*_mutations(head + "\n", 1), *_mutations(text, 7)]:
        got, want = _both(UV_EXPORT, mutated)
        assert got == want, mutated


@pytest.mark.parametrize(
    "edit",
    [
        ('name = "', 'name = "x"\nname = "'),  # a key twice in one table
        ('lock-version = "1.0"\n', 'lock-version = "1.0"\n# a comment\n'),  # a comment after the header
        ('lock-version = "1.0"\n', ""),  # no lock-version: a problem both report (the scan too)
        ("[[packages]]\n", '[[packages]]\nname = "a\\u0062"\n'),  # an escape
        ("[[packages]]\n", "[[packages]]\n[packages.vcs]\nurl = \"x\"\n"),  # a sub-table
        ('version = "', 'versions = "'),  # a package without a version (PEP 751 allows it)
        ('marker = "', 'markers = "'),  # a key uv's export does not write
        ('name = "', 'name = 1\nx = "'),  # a name that is not a string
        ("\n", "\r\n"),
        ('created-by = "uv"', 'created-by = 3'),  # a creator that is not a string: no tool
        ('created-by = "uv"', 'created-by = "pdm 2.20"'),
        ("", "\n[tool]\nx = 1\n"),  # a table after the packages (appended)
    ],
)
def test_shapes_the_scan_declines_or_reads_alike(edit: tuple[str, str]) -> None:
    text = UV_EXPORT.read_text("utf-8")
    old, new = edit
    assert old in text
    if not old:
        mutated = text + new
    else:
        mutated = text.replace(old, new) if old == "\n" else text.replace(old, new, 1)
    got, want = _both(UV_EXPORT, mutated)
    assert got == want


def test_the_scan_reads_the_creator_the_lock_version_and_each_package() -> None:
    text = (
        "# This file was autogenerated by uv via the following command:\n"
        "#    uv export --format pylock.toml -o pylock.toml\n"
        'lock-version = "1.0"\ncreated-by = "uv"\nrequires-python = ">=3.11"\n\n'
        '[[packages]]\nname = "Flashinfer_Python"\nversion = "0.6.17"\nmarker = "sys_platform == \'linux\'"\n'
        'index = "https://pypi.org/simple"\n'
        'sdist = { url = "https://x/f.tar.gz", size = 1, hashes = { sha256 = "00" } }\n\n'
        '[[packages]]\nname = "torch"\nversion = "2.9.1"\n'
    )
    lock = scan_pylock(text)
    assert lock is not None and lock.created_by == "uv" and lock.has_lock_version
    assert [(r[0], r[2], r[4], r[5]) for r in lock.rows] == [
        ("Flashinfer_Python", "0.6.17", "sys_platform == 'linux'", True), ("torch", "2.9.1", None, False)]
    source = locks.read_pylock(SourceText(Path("pylock.toml"), text))
    (fi,) = source.pins_for("flashinfer-python")
    assert (fi.version, fi.written_name.value, fi.hashed, fi.marker) == ("0.6.17", "Flashinfer_Python", True,
                                                                         "sys_platform == 'linux'")
    assert source.relock_command == "uv lock --upgrade-package {name} && uv export --format pylock.toml -o pylock.toml"
    assert source == _tomllib_path(Path("pylock.toml"), text)
