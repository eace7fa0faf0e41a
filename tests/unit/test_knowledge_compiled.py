"""The kept (marshal) form of the knowledge tables: the very values decoding makes, never stale.

``knowledge/_compiled.py`` keeps what a data file decodes to in the user's cache directory
(``_kept``), so that a one-file check reads no JSON. An entry must give what decoding gives, be
remade when any file it came from changes, and be ignored when it is damaged, unreadable or cannot
be written at all.
"""
from __future__ import annotations

import marshal
import os
from pathlib import Path
from types import MappingProxyType

import pytest

from kimi_lsp import _kept
from kimi_lsp._record import fields
from kimi_lsp.knowledge import _compiled, _schema_store, flashinfer, schema, sglang_releases


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(_kept, "_kept_dir", [str(tmp_path / "cache" / "kept" / "this")])
    monkeypatch.setattr(_kept, "_chains", {})
    return tmp_path


def test_an_entry_is_made_once_and_then_read(store: Path) -> None:
    src = store / "table.json"
    src.write_text('{"releases": [1, 2.5, "x", null, true, {"k": [1]}]}', "utf-8")
    calls = []

    def build() -> object:
        calls.append(1)
        return {"releases": [1, 2.5, "x", None, True, {"k": [1]}]}

    first = _compiled.load("table", (str(src),), build)
    again = _compiled.load("table", (str(src),), build)
    assert len(calls) == 1  # the second load read the entry
    assert first == again == {"releases": [1, 2.5, "x", None, True, {"k": [1]}]}
    assert len(list((store / "cache" / "kept" / "this").iterdir())) == 1


def test_a_changed_source_remakes_the_entry(store: Path) -> None:
    src = store / "table.json"
    src.write_text('{"v": 1}', "utf-8")
    assert _compiled.load_json(str(src)) == {"v": 1}
    src.write_text('{"v": 22}', "utf-8")  # another size
    assert _compiled.load_json(str(src)) == {"v": 22}
    st = src.stat()
    src.write_text('{"v": 33}', "utf-8")  # the same size: the modification time tells
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert _compiled.load_json(str(src)) == {"v": 33}


def test_a_broken_or_foreign_entry_is_ignored(store: Path) -> None:
    src = store / "t.json"
    src.write_text("[1]", "utf-8")
    assert _compiled.load_json(str(src)) == [1]
    entry = Path(str(_kept.path_of("t.json")))
    good = entry.read_bytes()
    key = _compiled._key((str(src),))
    other = store / "other"
    _kept.write(str(other), ("other key",), (0, 3, 0), [b"abc"])
    for junk in (b"", b"\x00garbage", marshal.dumps(("other key", [9])), marshal.dumps([1, 2, 3]), other.read_bytes(),
                 good[:-1] + bytes([good[-1] ^ 0x40])):  # the value's last byte changed: its CRC says so
        entry.write_bytes(junk)
        entry.chmod(0o600)
        assert _compiled.load_json(str(src)) == [1]
        assert entry.read_bytes() == good  # and made again
    found = _kept.read(str(entry), key)
    assert found is not None and marshal.loads(found[1][found[0][0]:found[0][1]]) == [1]


def test_an_unwritable_cache_directory_still_decodes(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (store / "blocker").write_text("a file where the directory would be", "utf-8")
    monkeypatch.setattr(_kept, "_kept_dir", [str(store / "blocker" / "kept" / "this")])
    src = store / "t.json"
    src.write_text('{"a": 1}', "utf-8")
    assert _compiled.load_json(str(src)) == {"a": 1}
    assert _compiled.load("missing", (str(store / "absent.json"),), lambda: "built") == "built"


def test_every_shipped_release_survives_the_round_trip() -> None:
    """What a release decodes to is exactly what marshal gives back (types included: a tuple
    stays a tuple, a float a float), so a kept schema is the decoded one."""
    for version in schema.shipped_versions():
        decoded = (_schema_store._store().attrs, *_schema_store._release_rows(version))
        kept = marshal.loads(marshal.dumps(decoded))
        assert kept == decoded and repr(kept) == repr(decoded), version


def test_a_kept_schema_is_the_schema_built_from_its_rows_for_every_release() -> None:
    """``_schema_from_kept`` fills each flag's instance dict itself and rebuilds the lookup
    tables from indices: every field of every flag (type and value), every other field of the
    schema and every table (its order, each key's flag) must be what the reference construction
    makes, after a marshal round trip."""
    names = tuple(f.name for f in fields(schema.Flag))
    assert schema._FLAG_FIELDS + ("type_info",) == names  # the unpacking in _schema_from_kept
    for version in schema.shipped_versions():
        ref = _schema_store._schema_from_rows(_schema_store._store().attrs, *_schema_store._release_rows(version))
        fast = schema._schema_from_kept(marshal.loads(marshal.dumps(_schema_store._kept_form(ref))))
        assert len(fast.flags) == len(ref.flags)
        for a, b in zip(ref.flags, fast.flags):
            assert type(b) is schema.Flag and b == a and hash(b) == hash(a)
            for name in names:
                x, y = getattr(a, name), getattr(b, name)
                assert x == y and type(x) is type(y) and repr(x) == repr(y), (version, a.dest, name)
        for name in ("version", "deprecated_values", "deprecated_flags", "config_store_true_keys",
                     "config_refused_keys", "config_long_keys", "config_merger", "config_verbatim", "choice_lists"):
            x, y = getattr(ref, name), getattr(fast, name)
            assert x == y and type(x) is type(y), (version, name)
        ref_at = {id(f): i for i, f in enumerate(ref.flags)}
        fast_at = {id(f): i for i, f in enumerate(fast.flags)}
        for table in ("_by_option", "_by_dest", "_by_config_key"):
            assert [(k, ref_at[id(f)]) for k, f in getattr(ref, table).items()] == \
                   [(k, fast_at[id(f)]) for k, f in getattr(fast, table).items()], (version, table)


def test_a_default_that_holds_a_mapping_is_frozen_again_after_marshal() -> None:
    """No shipped release has one today; marshal keeps no mapping proxy, so the kept form thaws
    it and the load freezes it again (as ``_freeze`` froze the JSON)."""
    ref = _schema_store._schema_from_rows(("dest", "options", "action", "type", "choices", "default", "nargs", "const",
                                    "required", "help", "hidden", "deprecated", "config_refused"),
                                   [["x", ["--x"], "store", None, None, {"a": [1, {"b": 2}]}, None, [{"c": 3}],
                                     False, None, False, None, None]], {"version": "9.9.9"})
    fast = schema._schema_from_kept(marshal.loads(marshal.dumps(_schema_store._kept_form(ref))))
    (a,), (b,) = ref.flags, fast.flags
    assert repr(b.default) == repr(a.default) and repr(b.const) == repr(a.const)
    assert isinstance(b.default, MappingProxyType) and isinstance(b.default["a"][1], MappingProxyType)
    assert isinstance(b.const, tuple) and isinstance(b.const[0], MappingProxyType)


def test_the_tables_read_the_same_through_their_entries(store: Path) -> None:
    for module in (flashinfer, sglang_releases):
        fresh = _compiled.load_json(str(module._DATA))  # made now, in the empty store
        assert _compiled.load_json(str(module._DATA)) == fresh  # read back
        import json

        assert fresh == json.loads(module._DATA.read_text("utf-8"))


def test_a_kept_schema_makes_the_flags_a_lookup_reaches() -> None:
    """A launch looks a dozen flags up of ~530: a kept schema decodes and makes only those, each
    once (a lookup and ``Schema.flags`` give the same object), and every table answers as the
    reference construction's does."""
    version = schema.shipped_versions()[-1]
    ref = _schema_store._schema_from_rows(_schema_store._store().attrs, *_schema_store._release_rows(version))
    fast = schema._schema_from_kept(marshal.loads(marshal.dumps(_schema_store._kept_form(ref))))
    rows = fast.__dict__["_rows"]
    assert "flags" not in fast.__dict__ and not rows._made
    tp = fast.exact("--tp-size")
    assert tp is not None and tp == ref.exact("--tp-size") and len(rows._made) == 1
    assert fast.match("--tensor-parallel-size") is tp and fast.by_dest("tp_size") is tp
    assert fast.config_key("tp-size") is tp and len(rows._made) == 1
    assert fast.exact("--no-such-flag") is None and fast.config_key("no_such_key") is None
    assert fast.match("--tp") == ref.match("--tp")  # a prefix: argparse's abbreviation rules
    flags = fast.flags  # all of them now, once
    assert fast.flags is flags and len(flags) == len(ref.flags) and tp in flags
    assert next(f for f in flags if f.dest == "tp_size") is tp
    assert list(fast._by_option) == list(ref._by_option) and len(fast._by_config_key) == len(ref._by_config_key)


def test_a_release_table_makes_the_releases_a_lookup_reaches() -> None:
    """``sglang_release`` and ``has_enable_dcp`` make the one release they read; the whole table,
    when asked for, holds those same objects."""
    sglang_releases._rows.cache_clear()
    sglang_releases._table.cache_clear()
    sglang_releases._made.clear()
    newest = sglang_releases.sglang_versions()[-1]
    sglang_releases._table.cache_clear()
    sglang_releases._made.clear()
    rel = sglang_releases.sglang_release(newest)
    assert rel is not None and rel.version == newest and len(sglang_releases._made) == 1
    assert sglang_releases.sglang_release(newest + ".0") is rel  # PEP 440 equality
    assert sglang_releases.sglang_release("0.0.0.1") is None and len(sglang_releases._made) == 1
    assert rel in sglang_releases._table().values()
    assert next(r for r in sglang_releases._table().values() if r.version == newest) is rel

    flashinfer._table.cache_clear()
    flashinfer._made.clear()
    info = flashinfer.release_info("0.6.17rc1")
    assert info is not None and info.passes and len(flashinfer._made) == 1
    assert str(flashinfer.min_enable_dcp()) == "0.6.17rc1" and len(flashinfer._made) == 1
    assert flashinfer._table()[info.version] is info


def test_a_damaged_flag_row_is_made_again_from_the_store() -> None:
    """A kept schema decodes a flag's row only when a lookup reaches it; a row damaged on disk
    (marshal keeps no checksum) is then made again from the store, never a traceback."""
    version = schema.shipped_versions()[-1]
    ref = schema._load(version)
    kept = list(marshal.loads(marshal.dumps(_schema_store._kept_form(ref))))
    at = next(i for i, f in enumerate(ref.flags) if f.dest == "tp_size")
    rows = list(kept[1])
    rows[at] = rows[at][: len(rows[at]) // 2]  # cut short
    kept[1] = tuple(rows)
    fast = schema._schema_from_kept(tuple(kept))
    assert fast.exact("--tp-size") == ref.exact("--tp-size")
    assert [f.dest for f in fast.flags] == [f.dest for f in ref.flags]


def test_a_damaged_release_row_is_made_again_from_the_data_file(monkeypatch: pytest.MonkeyPatch) -> None:
    newest = sglang_releases.sglang_versions()[-1]
    want = sglang_releases.sglang_release(newest)
    damaged = {k: (parts, row[:3]) for k, (parts, row) in sglang_releases._rows().items()}
    monkeypatch.setattr(sglang_releases, "_rows", lambda: damaged)
    monkeypatch.setattr(sglang_releases, "_made", {})
    assert sglang_releases.sglang_release(newest) == want
