#!/usr/bin/env python3
"""Pack the per-release sglang schemas into the one compact store kimi-lsp ships.

The extractor (scripts/extract_sglang_schema.py) makes one JSON document per release. Shipping
~90 of them would cost ~7 MB, yet consecutive releases differ in a handful of flags. The store
keeps every flag once, with the release ranges in which each of its attributes holds. Logically:

    {"format": 2,
     "versions": ["0.4.0", ..., "0.5.23"],          oldest first; a range is (first, last) indices
     "attrs": ["dest", "options", ...],             the record keys of a flag, in record order
     "flags": [{"r": [[lo, hi], ...],               releases that have the flag
                "k": {attr: value},                 attributes constant over those releases
                "t": {attr: [[lo, hi, value], ...]} the others, per range
               }, ...],
     "order": {version: [flag index, ...]},         each release's flags, in its argparse order
     "sections": {name: ...}}                       the other top-level keys, per key and range

On disk (`dump`) it is one record a line (`knowledge/data/sglang-schemas.tsv`), each
release's flag list on a line of its own, so that loading one release parses only its own flags.
`kimi_lsp.knowledge._schema_store` unpacks one release from it (`_unpack_release`); `pack(unpack(x))`
is the identity and unpacking gives back exactly the extractor's document for every release
(tests/unit/test_schema_store.py checks both against digests of the extractor output).
"""
from __future__ import annotations

import json
from typing import Any

STORE_FORMAT = 2
POOL_MIN = 64  # timeline values whose JSON is at least this long go to the V lines
_ABSENT = object()


def _canon(value: Any) -> str:
    # Type-aware equality: 1, 1.0 and True are equal in Python but not to argparse.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _timeline(values: list[Any]) -> list[list[Any]]:
    """[[lo, hi, value], ...] for the runs of equal present values (absent ones are skipped)."""
    out: list[list[Any]] = []
    prev_key: str | None = None
    for i, value in enumerate(values):
        if value is _ABSENT:
            prev_key = None
            continue
        key = _canon(value)
        if key == prev_key and out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i, value])
        prev_key = key
    return out


def _ranges(present: list[bool]) -> list[list[int]]:
    out: list[list[int]] = []
    for i, here in enumerate(present):
        if not here:
            continue
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return out


def _merged_order(orders: list[list[str]]) -> list[str]:
    """One sequence of flag keys that, filtered to a release, is that release's order as often
    as possible: a new key goes right after its predecessor in the release that introduces it."""
    merged: list[str] = []
    seen: set[str] = set()
    for order in orders:
        prev: str | None = None
        for key in order:
            if key not in seen:
                at = merged.index(prev) + 1 if prev is not None else 0
                merged.insert(at, key)
                seen.add(key)
            prev = key
    return merged


def flag_key(rec: dict[str, Any]) -> str:
    # Option strings are unique within one parser, so the first one names a flag in a release.
    return rec["options"][0]


def pack(releases: list[dict[str, Any]]) -> dict[str, Any]:
    """The store for these extractor documents (any order; sorted by version here)."""
    from kimi_lsp.knowledge.schema import _version_key

    releases = sorted(releases, key=lambda d: _version_key(d["version"]))
    versions = [d["version"] for d in releases]
    if len(set(versions)) != len(versions):
        raise ValueError("a release given twice")
    attrs: list[str] = []
    for doc in releases:
        for rec in doc["flags"]:
            for a in rec:
                if a not in attrs:
                    attrs.append(a)
    by_release = [{flag_key(r): r for r in doc["flags"]} for doc in releases]
    orders = [[flag_key(r) for r in doc["flags"]] for doc in releases]
    merged = _merged_order(orders)
    index = {k: i for i, k in enumerate(merged)}
    flags = []
    for key in merged:
        recs = [table.get(key, _ABSENT) for table in by_release]
        entry: dict[str, Any] = {"r": _ranges([r is not _ABSENT for r in recs]), "k": {}, "t": {}}
        for a in attrs:
            line = _timeline([r.get(a, _ABSENT) if r is not _ABSENT else _ABSENT for r in recs])
            present = sum(hi - lo + 1 for lo, hi, _ in line)
            if len(line) == 1 and present == sum(hi - lo + 1 for lo, hi in entry["r"]):
                entry["k"][a] = line[0][2]
            elif line:
                entry["t"][a] = line
        if not entry["t"]:
            del entry["t"]
        flags.append(entry)
    # Every release lists its flags: then loading one release reads one short line to know
    # which flag lines to parse, instead of parsing the ranges of all of them.
    order = {v: [index[k] for k in own] for v, own in zip(versions, orders)}
    sections: dict[str, Any] = {}
    names: list[str] = []
    for doc in releases:
        for name in doc:
            if name not in ("flags", "version") and name not in names:
                names.append(name)
    for name in names:
        values = [doc.get(name, _ABSENT) for doc in releases]
        if all(isinstance(v, dict) for v in values if v is not _ABSENT):
            keys: list[str] = []
            for v in values:
                if v is not _ABSENT:
                    keys.extend(k for k in v if k not in keys)
            per_key = {k: _timeline([v.get(k, _ABSENT) if v is not _ABSENT else _ABSENT for v in values])
                       for k in keys}
            sections[name] = {"dict": per_key, "r": _ranges([v is not _ABSENT for v in values])}
        else:
            sections[name] = {"value": _timeline(values)}
    return {"format": STORE_FORMAT, "versions": versions, "attrs": attrs, "flags": flags,
            "order": order, "sections": sections}


def _j(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def dump(store: dict[str, Any]) -> str:
    """The store as text, one record a line, so that the loader parses only what one release
    needs: a tag, tab-separated keys, and JSON (see the module docstring for the fields)

        H  <header JSON: format, versions, attrs, sections (their names, in S-line order)>
        S  <section name>  <section JSON>
        O  <version>       <flag indices JSON, in the release's argparse order>
        V  <a long value of some flag's timeline>       (line k is pool entry k)
        F  <[[value per attr], {attr index: [[lo, hi, value], ...]}]>   (line k is flag k)

    A timeline entry `[lo, hi, 0, k]` stands for `[lo, hi, <pool entry k>]`: a help text or
    choice list that another release has is then not even parsed when loading this one.

    The lines come in this order, one O line per version in `versions` order, so that the loader
    finds each kind by position instead of by reading every line."""
    pool: list[str] = []
    pooled: dict[str, int] = {}

    def entry_of(lo: int, hi: int, value: Any) -> list[Any]:
        text = _j(value)
        if len(text) < POOL_MIN:
            return [lo, hi, value]
        if text not in pooled:
            pooled[text] = len(pool)
            pool.append(text)
        return [lo, hi, 0, pooled[text]]

    rows = []
    attrs = store["attrs"]
    for entry in store["flags"]:
        # Positional, so that loading builds no dict per attribute; a varying attribute holds
        # None in the list and its timeline in the dict. "r" is implied by the O lines.
        varying = entry.get("t", {})
        if set(entry["k"]) | set(varying) != set(attrs):
            raise ValueError(f"flag {entry['k'].get('options')}: not every attribute is recorded")
        row: list[Any] = [[entry["k"].get(a) for a in attrs]]
        if varying:
            row.append({str(attrs.index(a)): [entry_of(*e) for e in line] for a, line in varying.items()})
        rows.append("F\t" + _j(row))
    header = {"format": store["format"], "versions": store["versions"], "attrs": store["attrs"],
              "sections": list(store["sections"]), "pool": len(pool)}
    lines = ["H\t" + _j(header)]
    lines += [f"S\t{name}\t{_j(sec)}" for name, sec in store["sections"].items()]
    lines += [f"O\t{v}\t{_j(store['order'][v])}" for v in store["versions"]]
    lines += ["V\t" + text for text in pool]
    lines += rows
    return "\n".join(lines) + "\n"
