#!/usr/bin/env python3
"""Regenerate docs/rules.md from the rule modules (CI fails when the committed file is stale)."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from kimi_lsp.catalogue import render_docs  # noqa: E402


def main() -> int:
    out = ROOT / "docs" / "rules.md"
    text = render_docs()
    if "--check" in sys.argv:
        current = out.read_text("utf-8") if out.exists() else ""
        if current != text:
            print("docs/rules.md is stale: run python scripts/gen_rules_doc.py", file=sys.stderr)
            return 1
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
