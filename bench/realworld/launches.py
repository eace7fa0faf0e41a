"""Count the launches kimi-lsp reads in one directory tree (a helper of bench/realworld/run).

The JSON of ``kimi-lsp --check`` carries diagnostics and a file count, not how many launches it
found; this reads the same files through the same engine (``collect_files`` +
``Engine.read_launches``) so that the count is the product's own, without adding a field to it.
It also classifies paths for the ``--fix-dry`` report: a launch file, a pin file, or neither.

    python bench/realworld/launches.py DIR [PATH ...]   -> one JSON object on stdout
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]).resolve()
    classify = [Path(a) for a in args[1:]]
    from kimi_lsp.cli.check import collect_files
    from kimi_lsp.engine import Engine
    from kimi_lsp.pins import discovery
    from kimi_lsp.workspace import Workspace

    ws = Workspace(root)
    engine = Engine(ws)
    files, _errors = collect_files([str(root)], ws)
    launches = doubtful = launch_files = 0
    for f in files:
        _src, surface = engine.read_launches(f)
        if surface is None or not surface.launches:
            continue
        launch_files += 1
        launches += len(surface.launches)
        doubtful += sum(1 for c in surface.launches if getattr(c, "doubt", None))
    kinds: dict[str, str] = {}
    for p in classify:
        ap = (root / p).resolve()
        if discovery.pin_format(ap) is not None:
            kinds[str(p)] = "pin"
            continue
        src, surface = engine.read_launches(ap)
        if surface is None or not (surface.launches or surface.is_launch_file):
            kinds[str(p)] = "other"
        elif "sglang" in getattr(src, "text", ""):
            kinds[str(p)] = "launch"
        else:
            # "launch" is kimi-lsp's own reading; a file that never says sglang is worth a look (a
            # --config YAML legitimately doesn't, an unrelated YAML misread as one doesn't either)
            kinds[str(p)] = "launch?"
    json.dump({"candidates": len(files), "launch_files": launch_files, "launches": launches,
               "doubtful": doubtful, "kinds": kinds}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
