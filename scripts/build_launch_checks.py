#!/usr/bin/env python3
"""Record, per shipped sglang release, the launch checks sglang makes outside argparse's table.

    python3 scripts/build_launch_checks.py [VERSION ...] [--wheel PATH]

Writes ``server/kimi_lsp/knowledge/data/sglang_launch_checks.json``: for every release the schema
store ships (or, with VERSIONs, those releases added to what the file already holds):

* ``parse_errors``: option -> what sglang prints when the option is on the command line, for the
  flags whose argparse action stops the launch at parse time. sglang's ``DeprecatedAction``
  changed behaviour twice: up to 0.5.7 it raises ``ValueError(self.help)`` for every such flag,
  0.5.8-0.5.17 only warn, and from 0.5.18 it calls ``parser.error(error_message)`` when the flag
  was registered with an ``error_message``. The class is read from the wheel and classified, never
  assumed from the version.
* ``serve``: how ``sglang serve`` finds the model before anything is parsed (``cli/utils.py``
  ``get_model_path`` and ``cli/serve.py``), or null where the release has no ``sglang serve``:
  ``model_options`` (the words it looks for: ``--model-path`` from 0.5.5, ``--model`` too from
  0.5.11), ``positional`` (a bare first word is the model: 0.5.16 on) and ``model_type`` (``--model-type``
  is taken off the command line first: 0.5.10 on).

The diffusion server ``sglang serve`` hands a diffusion model to has a schema of its own:
``scripts/extract_diffusion_schema.py`` (``sglang_diffusion.json``).

Wheels come from ``scripts/extract_sglang_schema.py``'s cache (``pip download --no-deps`` when
missing); nothing of sglang is imported.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(REPO / "scripts"))

from extract_sglang_schema import Wheel, collect_fields, fetch_wheel, manual_records  # noqa: E402

OUT = REPO / "server" / "kimi_lsp" / "knowledge" / "data" / "sglang_launch_checks.json"
ACTION_MODULES = ("sglang/srt/arg_groups/argparse_actions.py", "sglang/srt/server_args.py")


def deprecated_action_kind(wheel: Wheel) -> str:
    """How this release's ``DeprecatedAction.__call__`` behaves: "value_error" (raises
    ``ValueError(self.help)``), "parser_error" (``parser.error(self.error_message)`` when one was
    given, else a warning), "warn" (a warning only) or "none" (no such class)."""
    for rel in ACTION_MODULES:
        if rel not in wheel.names:
            continue
        tree = ast.parse(wheel.source(rel))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == "DeprecatedAction":
                call = next(f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__call__")
                text = ast.unparse(call)
                if "raise ValueError(self.help)" in text:
                    return "value_error"
                if "parser.error(self.error_message)" in text:
                    return "parser_error"
                if "print_deprecated_warning" in text and "raise" not in text:
                    return "warn"
                raise SystemExit(f"{wheel.path.name}: DeprecatedAction.__call__ not understood:\n{text}")
    return "none"


def parse_errors(wheel: Wheel) -> dict[str, str]:
    kind = deprecated_action_kind(wheel)
    if kind in ("warn", "none"):
        return {}
    out: dict[str, str] = {}
    for rec in manual_records(wheel, collect_fields(wheel)):
        if rec["_class"] != "DeprecatedAction":
            continue
        if kind == "value_error":
            message = f"ValueError: {rec['help']}"
        elif rec.get("_error_message") is not None:
            message = f"error: {rec['_error_message']}"
        else:
            continue
        for opt in rec["options"]:
            out[opt] = message
    return out


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def serve_model(wheel: Wheel) -> dict[str, Any] | None:
    """How ``sglang serve`` looks for the model (see the module docstring); None: no ``serve``."""
    if "sglang/cli/serve.py" not in wheel.names:
        return None
    utils = ast.parse(wheel.source("sglang/cli/utils.py"))
    serve = ast.parse(wheel.source("sglang/cli/serve.py"))
    funcs = {f.name: f for f in utils.body if isinstance(f, ast.FunctionDef)}
    finder = funcs.get("try_get_model_path") or funcs["get_model_path"]
    options: list[str] = []
    for node in ast.walk(finder):
        # `arg == "--model-path"`, `arg in ("--model-path", "--model")`
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "arg":
            for s in _strings(node):
                if s.startswith("--") and s not in options:
                    options.append(s)
    if not options:
        raise SystemExit(f"{wheel.path.name}: no model option found in {finder.name}")
    names = {f.name for f in serve.body if isinstance(f, ast.FunctionDef)}
    return {
        "model_options": options,
        "positional": "_normalize_positional_model_path" in names,
        "model_type": "_extract_model_type_override" in names,
    }


def shipped() -> list[str]:
    """The releases of the schema store (its header line), oldest first."""
    from kimi_lsp.knowledge.schema import DATA_DIR, STORE_FILE

    with open(Path(DATA_DIR) / STORE_FILE, encoding="utf-8") as f:
        return list(json.loads(f.readline().split("\t", 1)[1])["versions"])


def release_checks(version: str, wheel_path: Path | None = None) -> dict[str, Any]:
    wheel = Wheel(wheel_path or fetch_wheel(version))
    return {"parse_errors": parse_errors(wheel), "serve": serve_model(wheel)}


def write(releases: dict[str, dict[str, Any]]) -> None:
    from kimi_lsp.knowledge.schema import _version_key

    checks = {v: {k: releases[v][k] for k in ("parse_errors", "serve")} for v in sorted(releases, key=_version_key)}
    OUT.write_text(json.dumps({"format": 1, "releases": checks}, indent=1, sort_keys=True) + "\n", "utf-8")


def read() -> dict[str, dict[str, Any]]:
    """What the file holds, per release."""
    if not OUT.exists():
        return {}
    checks: dict[str, dict[str, Any]] = json.loads(OUT.read_text("utf-8"))["releases"]
    return checks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("versions", nargs="*", metavar="VERSION")
    ap.add_argument("--wheel", type=Path, help="one VERSION: read this wheel instead of downloading one")
    args = ap.parse_args(argv)
    if args.wheel and len(args.versions) != 1:
        ap.error("--wheel needs exactly one VERSION")
    if args.versions:
        releases = read()
        wanted = list(args.versions)
    else:
        releases, wanted = {}, shipped()
    for v in wanted:
        releases[v] = release_checks(v, args.wheel)
        print(f"sglang {v}: {len(releases[v]['parse_errors'])} parse-time errors, serve {releases[v]['serve']}",
              file=sys.stderr)
    write(releases)
    print(f"{len(releases)} releases -> {OUT.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
