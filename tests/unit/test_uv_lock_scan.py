"""The scan-based uv.lock reader (syntax/uv_lock.py) against the tomllib path it stands in for.

``read_uv_lock`` reads a lock in uv's own shape with ``syntax.uv_lock.scan`` and anything else with
tomllib and the TOML locator (``_read_toml_lock``). Both must give the same ``PinSource``: the same
pins, names, versions, markers, spans, hashes and problems. Checked on every uv.lock fixture (each
must take the scan: they are uv's own output), and on mutations of them (lines dropped, doubled,
edited) where either the scan declines or its answer equals tomllib's.
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from kimi_lsp._record import replace
from kimi_lsp.pins import _lock_readers, locks
from kimi_lsp.pins.model import PinFormat, PinSource
from kimi_lsp.syntax.uv_lock import scan
from kimi_lsp.workspace import SourceText
from tests.unit._mutate import apply_edit, line_edits

TESTS = Path(__file__).resolve().parent.parent
LOCKS = sorted(p for p in TESTS.rglob("uv.lock") if p.is_file())


def _tomllib_path(path: Path, text: str) -> PinSource:
    return locks._guarded(
        SourceText(path, text), PinFormat.UV_LOCK, "uv",
        lambda: _lock_readers._read_toml_lock(SourceText(path, text), PinFormat.UV_LOCK, "uv", "package"),
    )


def _both(path: Path, text: str) -> tuple[PinSource, PinSource]:
    return locks.read_uv_lock(SourceText(path, text)), _tomllib_path(path, text)


def test_there_are_lock_fixtures() -> None:
    assert len(LOCKS) >= 20


@pytest.mark.parametrize("path", LOCKS, ids=lambda p: str(p.relative_to(TESTS)))
def test_every_fixture_takes_the_scan_and_matches_tomllib(path: Path) -> None:
    text = path.read_text("utf-8")
    scanned = locks._scan_uv_lock(SourceText(path, text))
    assert scanned is not None, "uv's own output must not fall back to tomllib"
    reference = _tomllib_path(path, text)
    assert reference.pins and not reference.problems
    assert scanned == reference
    assert locks.read_uv_lock(SourceText(path, text)) == reference


def _small_locks() -> list[Path]:
    return [p for p in LOCKS if p.stat().st_size < 5000] + [TESTS / "pins_fixtures" / "uv-lock" / "ok" / "uv.lock"]


@pytest.mark.parametrize("path", _small_locks(), ids=lambda p: str(p.relative_to(TESTS)))
def test_mutated_locks_match_tomllib(path: Path) -> None:
    text = path.read_text("utf-8")
    step = 1 if len(text) < 5000 else 29
    for mutated in line_edits(text, step):
        got, want = _both(path, mutated)
        assert got == want, mutated


@pytest.mark.parametrize(
    "edit",
    [
        ('name = "', 'name = "x"\nname = "'),  # a key twice in one table
        ("version = 1\n", "version = 1\n# a comment\n"),
        ("version = 1\n", ""),  # no top-level version: a problem tomllib's path reports
        ("[[package]]\n", "[[package]]\nname = \"a\\u0062\"\n", ),  # an escape
        ('{ name = "', '{ name = "x", name = "'),  # a key twice in an inline table
        ("[package.metadata]\n", "[package.metadata]\n\n[package.metadata]\n"),  # a table twice
        ("\n", "\r\n"),
        ('name = "', 'name."x" = 1\nname = "'),  # a dotted key
        ("", "\n[options]\nx = 1\n"),  # a table uv writes first, after the packages (appended)
        ("resolution-markers = [", "resolution-markers = 1\nx = ["),
    ],
)
def test_shapes_the_scan_declines(edit: tuple[str, str]) -> None:
    path = TESTS / "pins_fixtures" / "uv-lock" / "fork" / "uv.lock"
    text = path.read_text("utf-8")
    mutated = apply_edit(text, *edit)
    assert scan(mutated) is None or not scan(mutated).has_version  # type: ignore[union-attr]
    got, want = _both(path, mutated)
    assert got == want


def test_scan_reads_names_versions_markers_and_artifacts() -> None:
    text = (
        'version = 1\nrevision = 3\nrequires-python = ">=3.10"\n\n'
        '[[package]]\nname = "Flashinfer_Python"\nversion = "0.6.17"\nsource = { registry = "https://pypi.org/simple" }\n'
        'resolution-markers = [\n    "sys_platform == \'linux\'",\n    "sys_platform != \'linux\'",\n]\n'
        'dependencies = [\n    { name = "torch", marker = "sys_platform == \'linux\'" },\n]\n'
        'sdist = { url = "https://x/f.tar.gz", hash = "sha256:00", size = 1 }\n\n'
        '[package.optional-dependencies]\ncu13 = [\n    { name = "cuda-python" },\n]\n\n'
        '[[package]]\nname = "app"\nsource = { virtual = "." }\n'
    )
    lock = scan(text)
    assert lock is not None and lock.has_version
    first, second = lock.packages
    assert (first.name, first.version, first.artifacts) == ("Flashinfer_Python", "0.6.17", True)
    assert first.resolution_markers == ("sys_platform == 'linux'", "sys_platform != 'linux'")
    assert text[first.name_content.start : first.name_content.end] == "Flashinfer_Python"
    assert (second.name, second.version, second.artifacts, second.resolution_markers) == ("app", None, False, None)
    got, want = _both(Path("uv.lock"), text)
    assert got == want
    assert [p.name for p in got.pins] == ["flashinfer-python", "app"]


@pytest.mark.parametrize(
    "value, accepted",
    [
        ('{ a = 1, b = "x" }', True), ("{}", True), ("{ a = { b = 1 } }", True),
        ('[{ name = "x", extra = ["a", "b"] }]', True), ('["a", ]', True), ("[]", True),
        ('[\n    "a",\n]', True), ("[[\n    { a = 1 },\n], [\n    { b = 1 },\n]]", True),
        ("{ a = 1, }", False), ("{a = 1}", False), ("{ a = 1 ,b = 2 }", False), ("[,]", False),
        ("{ }", False), ("[a]", False), ('"a\\"b"', False), ("01", False), ("'a'", False),
    ],
)
def test_the_value_grammar_is_a_subset_of_toml(value: str, accepted: bool) -> None:
    from kimi_lsp._toml import tomllib

    text = f"version = 1\n\n[options]\nx = {value}\n"
    assert (scan(text) is not None) == accepted
    if accepted:
        assert tomllib.loads(text)["options"]["x"] is not None


def _gen_inline(rng: random.Random, depth: int = 0) -> str:
    keys = [rng.choice(["a", "b", "ab", "name", "marker", "n-1"]) for _ in range(rng.randint(0, 4))]
    parts = []
    for k in keys:
        r = rng.random()
        if r < 0.5 or depth >= 2:
            v = rng.choice(['"x"', '"a, b = c"', '"{ a = 1, a = 2 }"', "1", "true"])
        elif r < 0.7:
            v = "[" + ", ".join(rng.choice(['"p"', "2", '", a = "']) for _ in range(rng.randint(0, 3))) + "]"
        else:
            v = _gen_inline(rng, depth + 1)
        parts.append(f"{k} = {v}")
    return "{ " + ", ".join(parts) + " }" if parts else "{}"


def test_repeated_inline_keys_are_found_as_tomllib_finds_them() -> None:
    """``inline_duplicates`` against tomllib on 5,000 generated (nested) inline tables and arrays
    of them: a key written twice in one table, and only that, is a duplicate."""
    from kimi_lsp._toml import tomllib
    from kimi_lsp.syntax.uv_lock import inline_duplicates

    rng = random.Random(5)
    dups = 0
    for _ in range(5000):
        value = _gen_inline(rng) if rng.random() < 0.6 else "[" + ", ".join(_gen_inline(rng) for _ in range(3)) + "]"
        try:
            tomllib.loads(f"k = {value}\n")
            expected = False
        except tomllib.TOMLDecodeError:
            expected = True  # the only invalidity generated: a repeated key
        assert inline_duplicates(value) == expected, value
        dups += expected
    assert 500 < dups < 4500


@pytest.mark.parametrize("path", LOCKS, ids=lambda p: str(p.relative_to(TESTS)))
def test_a_package_read_in_one_match_is_read_as_the_block_loop_reads_it(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``scan`` reads a [[package]] table in uv's usual shape with one pattern: on every fixture and
    on mutations of the small ones (keys dropped, doubled, commented, requoted) its answer (or its
    refusal) is exactly the block loop's."""
    from kimi_lsp.syntax import uv_lock

    text = path.read_text("utf-8")
    texts = [text] + (line_edits(text, 1 if len(text) < 5000 else 29) if path in _small_locks() else [])
    for t in texts:
        fast = scan(t)
        monkeypatch.setattr(uv_lock, "USE_PACKAGE_PATTERN", False)
        assert scan(t) == fast, t
        monkeypatch.setattr(uv_lock, "USE_PACKAGE_PATTERN", True)


def test_uvs_usual_package_shape_takes_the_one_match() -> None:
    """The pattern covers what uv writes for most packages of the real 359 KB lock (a pattern that
    never matches would pass the test above and save nothing)."""
    import re

    from kimi_lsp.syntax import uv_lock

    text = (TESTS / "pins_fixtures" / "uv-lock" / "sglang-only" / "uv.lock").read_text("utf-8")
    pattern = re.compile(uv_lock._PACKAGE_PATTERN)
    starts = [m.start() for m in re.finditer(r"^\[\[package\]\]\n", text, re.M)]
    assert len(starts) > 200 and all(pattern.match(text, s) for s in starts)
    # ... and reads each of those tables to its end (forked dependencies, with `version` and
    # `source`, included): nothing is left to the block loop
    ends = [m.end() for m in map(pattern.match, [text] * len(starts), starts) if m is not None]
    assert all(text.startswith("\n", e) or e == len(text) for e in ends)


def test_the_lock_pins_are_made_on_demand_and_once() -> None:
    """``read_uv_lock`` checks the whole lock but makes a pin only when asked for: ``pins_for``
    makes that name's pins and leaves the others unmade; reading ``pins`` makes the rest, and every
    pin is made once (``pins_for`` and ``pins`` give the same objects, in file order)."""
    path = TESTS / "pins_fixtures" / "uv-lock" / "sglang-only" / "uv.lock"
    text = path.read_text("utf-8")
    source = locks.read_uv_lock(SourceText(path, text))
    lazy = source._lazy
    assert lazy is not None and not lazy._made
    fi = source.pins_for("flashinfer-python")
    assert [p.name for p in fi] == ["flashinfer-python"] and len(lazy._made) == 1
    assert source.pins_for("no-such-package") == () and len(lazy._made) == 1
    assert source.pins_for("flashinfer-python")[0] is fi[0]
    everything = source.pins  # made now, once
    assert len(everything) > 200 and source.pins is everything
    assert next(p for p in everything if p.name == "flashinfer-python") is fi[0]
    assert source == _tomllib_path(path, text)
    # a copy read the usual way (pins given) is the same value, printed the same way
    eager = PinSource(source.path, source.format, source.is_lock, everything, tool=source.tool,
                      relock_command=source.relock_command)
    assert eager == source and source == eager and repr(eager) == repr(source) and hash(eager) == hash(source)
    assert {eager} == {source} and not (source != eager)
    assert source != replace(eager, tool="pip") and replace(eager, tool="pip") != source
    # only this kind of source makes ``pins`` on a read: every other PinSource's attributes are
    # plain slots (a __getattr__ on PinSource would slow every attribute read of every source)
    assert isinstance(source, PinSource) and not hasattr(PinSource, "__getattr__")


def test_names_are_canonical_for_pins_for() -> None:
    """Names as written (``Flashinfer_Python``) are found by their canonical name."""
    text = ('version = 1\n\n[[package]]\nname = "Flashinfer_Python"\nversion = "0.6.17"\n'
            'source = { registry = "https://pypi.org/simple" }\n\n'
            '[[package]]\nname = "torch"\nversion = "2.9.1"\nsource = { registry = "https://pypi.org/simple" }\n')
    source = locks.read_uv_lock(SourceText(Path("uv.lock"), text))
    (pin,) = source.pins_for("flashinfer-python")
    assert (pin.version, pin.written_name.value) == ("0.6.17", "Flashinfer_Python")
    assert [p.name for p in source.pins] == ["flashinfer-python", "torch"]


def test_a_lock_read_on_demand_copies_and_pickles_as_its_value() -> None:
    import copy
    import pickle

    path = TESTS / "pins_fixtures" / "uv-lock" / "sglang-only" / "uv.lock"
    source = locks.read_uv_lock(SourceText(path, path.read_text("utf-8")))
    again = pickle.loads(pickle.dumps(source))
    assert again == source and again.pins_for("torch") == source.pins_for("torch")
    assert type(again) is PinSource and type(copy.copy(source)) is PinSource  # the value, not how it was read
    assert copy.copy(source) == source and copy.deepcopy(source) == source
