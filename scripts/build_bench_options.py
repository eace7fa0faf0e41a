#!/usr/bin/env python3
"""Write knowledge/data/sglang_bench_serving_options.json: the long options of sglang's serving
benchmark (``python -m sglang.bench_serving``), read from the released wheels' source (every
``add_argument("--…")`` in its modules, no code run). KL201 uses them to say, once, that a
"server launch" full of them is a benchmark command, instead of one unknown flag each.

Usage: python scripts/build_bench_options.py sglang-0.5.4-….whl sglang-0.5.23-….whl ...
"""
from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "server" / "kimi_lsp" / "knowledge" / "data" / "sglang_bench_serving_options.json"
# the benchmark's own modules in any release (it moved to sglang.benchmark.serving in 0.5.2x)
_MODULES = re.compile(r"^sglang/(bench_serving\.py|benchmark/(serving|datasets/[\w/]+|utils|endpoint|goodput)\.py)$")


def _options(source: str) -> set[str]:
    out: set[str] = set()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return out
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            for a in node.args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--"):
                    out.add(a.value)
    return out


def main(argv: list[str] | None = None) -> int:
    wheels = sys.argv[1:] if argv is None else argv
    if not wheels:
        print(__doc__, file=sys.stderr)
        return 2
    options: set[str] = set()
    read: list[str] = []
    for w in wheels:
        with zipfile.ZipFile(w) as z:
            for name in z.namelist():
                if _MODULES.match(name):
                    options |= _options(z.read(name).decode("utf-8", "replace"))
        read.append(Path(w).name.split("-")[1])
    data = {"format": 1, "releases_read": read, "options": sorted(options)}
    OUT.write_text(json.dumps(data, indent=1) + "\n", "utf-8")
    print(f"{len(options)} bench_serving options -> {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
