#!/usr/bin/env python3
"""Build knowledge/data/sglang_retired_flags.json: sglang's own deprecation and rename table.

A flag sglang retired is unknown to a newer release (KL201). Its replacement must come from
what sglang itself said while the flag still existed, never from string similarity: the help
text or ``DeprecatedAction`` message ("Please set `--moe-a2a-backend` to 'deepep' instead.") and
the ``new_flag=`` / ``const_value=`` of the rename actions (``DeprecatedAliasStoreAction``,
``DeprecatedStoreTrueAction``, ``DeprecatedStoreConstAction``). For each retired option the
newest release read that still registers it wins.

Usage (sglang trees unpacked from the released wheels, ``pip download --no-deps sglang==X`` then
unzip; only ``sglang/srt/server_args.py`` and ``sglang/srt/arg_groups/`` are read):

    python scripts/build_retired_flags.py 0.5.4=/tmp/sg/x0.5.4 0.5.16=/tmp/sg/x0.5.16 ...
"""
from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "server" / "kimi_lsp" / "knowledge" / "data" / "sglang_retired_flags.json"

_DEPRECATED_ACTIONS = {
    "DeprecatedAction", "DeprecatedStoreTrueAction", "DeprecatedStoreConstAction", "DeprecatedAliasStoreAction",
}
# "Please set `--moe-runner-backend` to 'flashinfer_cutlass' instead."
_SET_TO = re.compile(r"set `(--[\w-]+)` to '([\w.-]+)' instead")
# "(Deprecated: use --flashinfer-allreduce-fusion-backend=auto)", "Use --enable-prefill-cp instead."
_USE = re.compile(r"[Uu]se `?(--[\w-]+)(?:=([\w.-]+))?`? instead|[Uu]se `?(--[\w-]+)=([\w.-]+)`?\)")
# "Please use '--attention-backend flashinfer' instead"
_USE_QUOTED = re.compile(r"[Uu]se '(--[\w-]+) ([\w.-]+)' instead")
# "'in-seq-split' maps to 'zigzag'"
_MAPS = re.compile(r"'([\w.-]+)' maps to '([\w.-]+)'")


def _const(node: ast.expr | None) -> object:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)


def _calls(tree: ast.AST):
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument":
            yield n


def _entries(release_dir: Path) -> dict[str, dict]:
    srt = release_dir / "sglang" / "srt"
    files = [srt / "server_args.py", *sorted((srt / "arg_groups").rglob("*.py"))]
    out: dict[str, dict] = {}
    for f in files:
        if not f.is_file():
            continue
        tree = ast.parse(f.read_text("utf-8"))
        for call in _calls(tree):
            options = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            kw = {k.arg: k.value for k in call.keywords if k.arg}
            action = kw.get("action")
            action_name = action.id if isinstance(action, ast.Name) else (_const(action) if action is not None else None)
            help_text = _const(kw.get("help"))
            help_text = help_text if isinstance(help_text, str) and help_text != "argparse.SUPPRESS" else ""
            message = _const(kw.get("error_message"))
            said = message if isinstance(message, str) else help_text
            deprecated = action_name in _DEPRECATED_ACTIONS or re.match(r"\s*[\[(]?(NOTE: )?.{0,40}deprecated", said, re.I)
            for opt in options:
                if not opt.startswith("--"):
                    continue
                out[opt] = {
                    "deprecated": bool(deprecated),
                    "action": action_name,
                    "said": " ".join(said.split()),
                    "new_flag": _const(kw.get("new_flag")),
                    "dest": _const(kw.get("dest")) or opt[2:].replace("-", "_"),
                    "takes_value": action_name == "DeprecatedAliasStoreAction"
                    or (action_name not in ("store_true", "store_false", "DeprecatedAction",
                                            "DeprecatedStoreTrueAction", "DeprecatedStoreConstAction")
                        and _const(kw.get("nargs")) != 0),
                }
    return out


def _replacement(e: dict) -> tuple[list[str] | None, bool]:
    """(the words that replace the flag, whether the old value(s) carry over)."""
    new_flag = e["new_flag"]
    if isinstance(new_flag, str):
        flag, eq, value = new_flag.partition("=")
        if e["action"] == "DeprecatedAliasStoreAction":
            return [flag], True
        return ([flag, value] if eq else [flag]), False
    m = _SET_TO.search(e["said"])
    if m:
        return [m.group(1), m.group(2)], False
    m = _USE_QUOTED.search(e["said"])
    if m:
        return [m.group(1), m.group(2)], False
    m = _USE.search(e["said"])
    if m and not e["takes_value"]:
        flag = m.group(1) or m.group(3)
        value = m.group(2) or m.group(4)
        # a store-true flag replaced by a store-true flag, or by one value of a valued flag
        return ([flag, value] if value else [flag]), False
    return None, False


def build(releases: list[tuple[str, Path]]) -> dict:
    releases = sorted(releases, key=lambda r: Version(r[0]))
    seen: dict[str, tuple[str, dict]] = {}
    for version, path in releases:
        for opt, e in _entries(path).items():
            seen[opt] = (version, e)  # newest release last
    newest = releases[-1][0]
    table = {}
    for opt, (version, e) in sorted(seen.items()):
        if not e["deprecated"] or version == newest:
            continue  # still registered in the newest release read: KL204's, not retired
        words, keeps_value = _replacement(e)
        table[opt] = {
            "last_seen": version,
            "said": e["said"],
            "replacement": words,
            "keeps_value": keeps_value,
            "value_map": dict(_MAPS.findall(e["said"])),
        }
    # sglang maps old values by the option's dest, not by its spelling: an alias that shares the
    # dest (and the new flag) of an option whose message names the mapping gets the same mapping
    # (0.5.19: --nsa-prefill-cp-mode, dest dsa_prefill_cp_mode, like --dsa-prefill-cp-mode).
    by_dest: dict[tuple[object, object], dict[str, str]] = {}
    for opt, row in table.items():
        e = seen[opt][1]
        if row["value_map"]:
            by_dest.setdefault((e["dest"], e["new_flag"]), {}).update(row["value_map"])
    for opt, row in table.items():
        e = seen[opt][1]
        if row["keeps_value"] and not row["value_map"]:
            row["value_map"] = dict(by_dest.get((e["dest"], e["new_flag"]), {}))
    return {"format": 1, "releases_read": [v for v, _ in releases], "flags": table}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    releases = []
    for a in args:
        version, _, path = a.partition("=")
        releases.append((version, Path(path)))
    data = build(releases)
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", "utf-8")
    print(f"{len(data['flags'])} retired flags -> {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
