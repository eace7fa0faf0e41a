"""The schema store read and a release's schema built from it: what a kept schema is made from.

``schema.py`` answers a run's questions from the kept (marshal) form of a release's schema
(``knowledge/_compiled.py``); this module reads ``data/sglang-schemas.tsv`` (format in
``scripts/sglang_schema_store.py``) and builds that form, once per release and install: the
reference construction (``_schema_from_rows``) and the layout ``_schema_from_kept`` reads
(``_kept_form``). A run that finds its release kept does not load it.
"""
from __future__ import annotations

import functools
import marshal
import os
from types import MappingProxyType

from kimi_lsp.knowledge.schema import _FLAG_FIELDS, DATA_DIR, STORE_FILE, Flag, Schema, _freeze

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any, Mapping


def _flag_from_json(raw: Mapping[str, Any], type_data: Mapping[str, Any]) -> Flag:
    choices = raw["choices"]
    return Flag(
        dest=raw["dest"],
        options=tuple(raw["options"]),
        action=raw["action"],
        type=raw["type"],
        choices=None if choices is None else tuple(choices),
        default=_freeze(raw["default"]),
        nargs=raw["nargs"],
        const=_freeze(raw["const"]),
        required=raw["required"],
        help=raw["help"],
        hidden=raw["hidden"],
        deprecated=raw["deprecated"],
        config_refused=raw["config_refused"],
        type_info=type_data.get(raw["type"]) if raw["type"] else None,
    )


def _flags_from_rows(attrs: tuple[str, ...], rows: list[list[Any]], type_data: Mapping[str, Any]) -> tuple[Flag, ...]:
    """`_flag_from_json` for positional rows, without a dict per flag (start-up time)."""
    (dest, options, action, type_, choices, default, nargs, const, required, help_, hidden, deprecated,
     refused) = (attrs.index(f) for f in _FLAG_FIELDS)
    return tuple(
        Flag(dest=r[dest], options=tuple(r[options]), action=r[action], type=r[type_],
             choices=None if r[choices] is None else tuple(r[choices]), default=_freeze(r[default]),
             nargs=r[nargs], const=_freeze(r[const]), required=r[required], help=r[help_], hidden=r[hidden],
             deprecated=r[deprecated], config_refused=r[refused],
             type_info=type_data.get(r[type_]) if r[type_] else None)
        for r in rows)


class _Store:
    """The packed schemas, split into lines but parsed only as far as one release needs.

    (A plain class: a dataclass here would cost more at import than the whole lookup.)"""

    __slots__ = ("versions", "attrs", "sections", "orders", "pool", "flags")

    def __init__(self, versions: tuple[str, ...], attrs: tuple[str, ...], sections: dict[str, bytes],
                 orders: dict[str, bytes], pool: list[bytes], flags: list[bytes]) -> None:
        # Raw UTF-8 lines: decoding and parsing happen only for what one release uses.
        self.versions = versions
        self.attrs = attrs
        self.sections = sections  # name -> its S line
        self.orders = orders  # version -> its O line: the flags' line numbers, in argparse order
        self.pool = pool  # the V lines: long timeline values, parsed only when a release uses them
        self.flags = flags  # the F line of each flag


@functools.cache
def _store() -> _Store:
    """The store's lines (format: scripts/sglang_schema_store.py `dump`), found by position."""
    from kimi_lsp.knowledge._compiled import read_data

    try:  # (read through the package's loader where the package is no directory: a zipapp)
        lines = read_data(os.path.join(DATA_DIR, STORE_FILE)).split(b"\n")
    except FileNotFoundError:
        return _Store((), (), {}, {}, [], [])
    import json  # here, not at start-up: a kept (_compiled) release needs no JSON

    header = json.loads(lines[0][2:])
    versions, names = tuple(header["versions"]), header["sections"]
    n_sec, n_ver = len(names), len(versions)
    s_lines, o_lines = lines[1:1 + n_sec], lines[1 + n_sec:1 + n_sec + n_ver]
    if not all(line.startswith(b"S\t") for line in s_lines) or not all(
            line.startswith(b"O\t%s\t" % v.encode()) for line, v in zip(o_lines, versions)):
        raise ValueError(f"{STORE_FILE}: lines out of order")
    first_flag = 1 + n_sec + n_ver + header["pool"]
    pool = lines[1 + n_sec + n_ver:first_flag]
    flags = lines[first_flag:]
    if flags and not flags[-1]:
        flags.pop()  # the final newline
    if pool and not (pool[0].startswith(b"V\t") and pool[-1].startswith(b"V\t")) or flags and not flags[0].startswith(b"F\t"):
        raise ValueError(f"{STORE_FILE}: lines out of order")
    return _Store(versions, tuple(header["attrs"]), dict(zip(names, s_lines)), dict(zip(versions, o_lines)),
                  pool, flags)


def _in_ranges(ranges: list[list[int]], i: int) -> bool:
    for r in ranges:
        if r[0] <= i <= r[1]:
            return True
    return False


_ABSENT = object()


def _at(line: list[list[Any]], i: int) -> Any:
    """The value a `[[lo, hi, value], ...]` timeline has at release index `i`."""
    for lo, hi, value in line:
        if lo <= i <= hi:
            return value
    return _ABSENT


def _unpack_release(version: str) -> dict[str, Any]:
    """One release's document exactly as the extractor wrote it (see sglang_schema_store.py)."""
    rows, doc = _release_rows(version)
    attrs = _store().attrs
    doc["flags"] = [dict(zip(attrs, values)) for values in rows]
    return doc


def _release_rows(version: str) -> tuple[list[list[Any]], dict[str, Any]]:
    """(each flag's values in `_store().attrs` order, the rest of the release's document)."""
    import json

    store = _store()
    i = store.versions.index(version)
    attrs = store.attrs
    texts = store.flags
    # One json.loads for all of the release's flags: far cheaper than one call per flag.
    order = store.orders[version]
    order = order[order.index(b"\t", 2) + 1:]
    # Decoded here: json.loads(bytes) decodes with "surrogatepass", several times slower.
    rows = json.loads((b"[" + b",".join([texts[n][2:] for n in json.loads(order)]) + b"]").decode())
    flags = []
    pooled: list[tuple[list[Any], int, int]] = []  # (values, attr index, pool entry)
    for row in rows:
        values = row[0]
        if len(row) > 1:  # attributes that differ between releases: this release's value
            values = list(values)
            for index, timeline in row[1].items():
                for entry in timeline:
                    if entry[0] <= i <= entry[1]:
                        if len(entry) == 4:
                            pooled.append((values, int(index), entry[3]))
                        else:
                            values[int(index)] = entry[2]
                        break
        flags.append(values)
    if pooled:  # one json.loads for every long value this release uses
        pool = store.pool
        found = json.loads((b"[" + b",".join([pool[k][2:] for _, _, k in pooled]) + b"]").decode())
        for (values, index, _), value in zip(pooled, found):
            values[index] = value
    doc: dict[str, Any] = {}
    for name, line in store.sections.items():
        packed = json.loads(line[line.index(b"\t", 2) + 1:].decode())
        if "dict" in packed:
            if _in_ranges(packed["r"], i):
                section = {}
                for key, timeline in packed["dict"].items():
                    value = _at(timeline, i)
                    if value is not _ABSENT:
                        section[key] = value
                doc[name] = section
        else:
            value = _at(packed["value"], i)
            if value is not _ABSENT:
                doc[name] = value
    doc["version"] = version
    return flags, doc


def _schema_from_rows(attrs: tuple[str, ...], rows: list[list[Any]], raw: dict[str, Any]) -> Schema:
    """The schema of one release from its decoded store rows: the reference construction."""
    type_data = raw.get("type_data", {})
    flags = _flags_from_rows(attrs, rows, type_data)
    config = raw.get("config", {})
    return Schema(
        version=raw["version"],
        flags=flags,
        deprecated_values=MappingProxyType(
            {k: MappingProxyType(dict(v)) for k, v in raw.get("deprecated_values", {}).items()}),
        deprecated_flags=MappingProxyType(dict(raw.get("deprecated_flags", {}))),
        config_store_true_keys=frozenset(config.get("store_true_keys", ())),
        config_refused_keys=MappingProxyType(dict(config.get("refused_keys", {}))),
        config_long_keys=config.get("keys", "dest_and_long_options") == "dest_and_long_options",
        config_merger=config.get("keys") != "none",
        config_verbatim=config.get("keys") == "verbatim",
        choice_lists=MappingProxyType({k: tuple(v) for k, v in raw.get("choice_lists", {}).items()}),
    )


def _thawed(value: Any) -> Any:
    """A frozen value as marshal keeps it (mapping proxies as dicts); `_freeze` makes it again."""
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    if isinstance(value, MappingProxyType):
        return {k: _thawed(v) for k, v in value.items()}
    return value


def _kept_form(schema: Schema) -> tuple[Any, ...]:
    """`schema` as marshal keeps it. Each flag is its own marshal bytes (a launch looks a dozen
    flags up, of ~530: `_FlagRows` decodes only those): its fields in `_FLAG_FIELDS` order (a
    default or const that holds a mapping thawed, with the positions to freeze again) and the
    name of its type's table. The lookup tables map to flag indices, so that
    `_schema_from_kept` builds nothing twice."""
    index = {id(f): i for i, f in enumerate(schema.flags)}
    rows, type_data = [], {}
    for f in schema.flags:
        row = [getattr(f, name) for name in _FLAG_FIELDS]
        thawed = []
        for at in (_FLAG_FIELDS.index("default"), _FLAG_FIELDS.index("const")):
            if _holds_mapping(row[at]):
                row[at] = _thawed(row[at])
                thawed.append(at)
        rows.append(marshal.dumps((tuple(row), tuple(thawed), f.type if f.type_info is not None else None)))
        if f.type_info is not None:
            type_data[f.type] = f.type_info
    # Equal keys made one object: marshal then writes each once and the others as references
    # (a dest is usually a config key too), so a load decodes each string once.
    same: dict[str, str] = {}
    return (schema.version, tuple(rows), type_data,
            {k: dict(v) for k, v in schema.deprecated_values.items()}, dict(schema.deprecated_flags),
            frozenset(same.setdefault(k, k) for k in schema.config_store_true_keys), dict(schema.config_refused_keys),
            (schema.config_long_keys, schema.config_merger, schema.config_verbatim), dict(schema.choice_lists),
            {same.setdefault(k, k): index[id(f)] for k, f in schema._by_option.items()},
            {same.setdefault(k, k): index[id(f)] for k, f in schema._by_dest.items()},
            {same.setdefault(k, k): index[id(f)] for k, f in schema._by_config_key.items()})


def _holds_mapping(value: Any) -> bool:
    if isinstance(value, MappingProxyType):
        return True
    return isinstance(value, tuple) and any(_holds_mapping(v) for v in value)
