#!/usr/bin/env python3
"""Add one sglang release to everything kimi-lsp knows, from its one wheel, offline.

    python3 scripts/add_sglang_release.py 0.5.24 --wheel /path/to/sglang-0.5.24-....whl

(Without --wheel the wheel is downloaded once with ``pip download --no-deps``.) One command
writes every knowledge file a release needs; tests/unit/test_launch_checks.py asserts that each
shipped release has all of them:

1. its argparse schema into the store (``extract_sglang_schema.py --add``: sglang-schemas.tsv and
   the extractor digests the tests compare it with);
2. its launch checks outside argparse's table (``build_launch_checks.py``: parse-time errors and
   ``sglang serve``'s model lookup), and the schema and model registry of the diffusion server
   ``sglang serve`` hands a diffusion model to (``extract_diffusion_schema.py``: sglang_diffusion.json);
3. its build date (``sglang_release_dates.json``: the newest timestamp among the wheel's entries);
4. its row of the release table (``sglang_releases.json``: the kernel pins of its METADATA and
   where its Kimi-K3 DCP check lives; KL329 and the flashinfer rules read it);
5. the retired-flags table (``sglang_retired_flags.json``): read against the newest release, so a
   new newest release retires what the previous newest still registered as deprecated (read from
   the schema store, not from another wheel) and un-retires what it registers again;
6. which benchmark entry points it has and their own options (``build_entry_points.py --add``:
   sglang_entry_points.json).

Then run the tests and commit the changed files under server/kimi_lsp/knowledge/data and
tests/data/oracle.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(REPO / "scripts"))

import build_entry_points  # noqa: E402  (the path is set up just above)
import build_launch_checks  # noqa: E402
import extract_diffusion_schema  # noqa: E402
import build_release_dates  # noqa: E402
import build_retired_flags  # noqa: E402
import build_sglang_table  # noqa: E402
import extract_sglang_schema  # noqa: E402
from build_flashinfer_table import Archive  # noqa: E402
from packaging.version import Version  # noqa: E402

DATA = REPO / "server" / "kimi_lsp" / "knowledge" / "data"
# argparse action names of the schema -> the class names the retired-flags reader sees in source
_SOURCE_ACTION = {"deprecated": "DeprecatedAction", "deprecated_store_true": "DeprecatedStoreTrueAction",
                  "deprecated_store_const": "DeprecatedStoreConstAction",
                  "deprecated_alias_store": "DeprecatedAliasStoreAction", "store_true": "store_true",
                  "store_false": "store_false"}


def add_date(version: str, wheel: Path) -> None:
    path = DATA / "sglang_release_dates.json"
    dates = json.loads(path.read_text("utf-8"))
    dates[version] = build_release_dates.built_on(wheel)
    from kimi_lsp.knowledge.schema import _version_key

    ordered = {v: dates[v] for v in sorted(dates, key=_version_key)}
    path.write_text(json.dumps(ordered, indent=0, sort_keys=False) + "\n", "utf-8")


def add_table_row(version: str, wheel: Path) -> None:
    path = build_sglang_table.OUTPUT
    doc = json.loads(path.read_text("utf-8"))
    finding = build_sglang_table.analyse(version, Archive(wheel, "wheel", wheel.stat().st_size))
    rows = [r for r in doc.pop("releases") if r["version"] != version]
    rows.append(build_sglang_table.row(finding))
    rows.sort(key=lambda r: Version(r["version"]))
    doc["count"] = len(rows)
    path.write_text(build_sglang_table.render(rows, doc), "utf-8")


def _store_entries(version: str) -> dict[str, dict[str, Any]]:
    """The retired-flags reader's entries for a shipped release, from the schema store (and the
    launch checks' parse-time messages, which the store does not keep)."""
    from kimi_lsp.knowledge import launch_checks
    from kimi_lsp.knowledge.schema import load_schema_exact

    schema = load_schema_exact(version)
    assert schema is not None, version
    out: dict[str, dict[str, Any]] = {}
    for flag in schema.flags:
        action = _SOURCE_ACTION.get(flag.action, flag.action)
        for opt in flag.long_options:
            stop = launch_checks.parse_error(version, opt)
            said = stop[len("error: "):] if stop and stop.startswith("error: ") else (flag.help or "")
            said = " ".join(said.split())
            deprecated = action in build_retired_flags._DEPRECATED_ACTIONS or bool(
                re.match(r"\s*[\[(]?(NOTE: )?.{0,40}deprecated", said, re.I))
            out[opt] = {"deprecated": deprecated, "action": action, "said": said, "new_flag": flag.deprecated,
                        "takes_value": flag.takes_value}
    return out


def update_retired(version: str, wheel: Path) -> None:
    path = build_retired_flags.OUT
    doc = json.loads(path.read_text("utf-8"))
    read = doc["releases_read"]
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name == "sglang/srt/server_args.py" or name.startswith("sglang/srt/arg_groups/"):
                z.extract(name, tmp)
        new = build_retired_flags._entries(Path(tmp))
    # what the release registers: its schema (step 1 stored it) knows the flags made from the
    # dataclass fields too, which the source scan above does not see
    registered = set(new) | set(_store_entries(version))
    newest = read[-1] if read else None
    table: dict[str, Any] = doc["flags"]
    if newest is None or Version(version) > Version(newest):
        if newest is not None:
            # what the previous newest release still registered as deprecated, and this one drops
            for opt, e in _store_entries(newest).items():
                if e["deprecated"] and opt not in registered and opt not in table:
                    words, keeps = build_retired_flags._replacement(e)
                    table[opt] = {"last_seen": newest, "said": e["said"], "replacement": words,
                                  "keeps_value": keeps, "value_map": dict(build_retired_flags._MAPS.findall(e["said"]))}
        for opt in list(table):
            if opt in registered:
                del table[opt]  # registered again: the newest release's own table speaks for it
    else:
        for opt, entry in table.items():
            seen = new.get(opt)
            if seen is not None and Version(version) > Version(entry["last_seen"]):
                words, keeps = build_retired_flags._replacement(seen)
                entry.update(last_seen=version, said=seen["said"], replacement=words, keeps_value=keeps,
                             value_map=dict(build_retired_flags._MAPS.findall(seen["said"])))
    if version not in read:
        read.append(version)
        read.sort(key=Version)
    doc["flags"] = dict(sorted(table.items()))
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", "utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("version", metavar="VERSION")
    ap.add_argument("--wheel", type=Path, help="the release's wheel (default: download it once)")
    args = ap.parse_args(argv)
    version: str = args.version
    wheel: Path = args.wheel or extract_sglang_schema.fetch_wheel(version)
    steps = (
        ("schema", lambda: extract_sglang_schema.main(["--add", version, "--wheel", str(wheel)])),
        ("launch checks", lambda: build_launch_checks.main([version, "--wheel", str(wheel)])),
        ("diffusion schema", lambda: extract_diffusion_schema.main([version, "--wheel", str(wheel)])),
        ("release date", lambda: add_date(version, wheel)),
        ("release table row", lambda: add_table_row(version, wheel)),
        ("retired flags", lambda: update_retired(version, wheel)),
        ("entry points", lambda: build_entry_points.main(["--add", str(wheel)])),
    )
    for name, step in steps:
        rc = step()
        if rc:
            print(f"sglang {version}: {name} failed (exit {rc}); later steps not run", file=sys.stderr)
            return int(rc)
        print(f"sglang {version}: {name} done", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
