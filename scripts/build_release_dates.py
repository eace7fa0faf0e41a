#!/usr/bin/env python3
"""Record when each shipped sglang release was built, from its released wheel.

    python3 scripts/build_release_dates.py

Writes ``server/kimi_lsp/knowledge/data/sglang_release_dates.json``: ``{"0.5.23": "2026-10-30", …}``
for every release the schema store ships. The date is the newest timestamp among the wheel's zip
entries (the build), read from the wheels ``scripts/extract_sglang_schema.py`` caches in
~/.cache/kimi-lsp/wheels (downloaded with ``pip download --no-deps`` when missing). The engine
uses it for dated nightly images (``lmsysorg/sglang:nightly-dev-20251215``): such an image runs
the code between the last release built before that day and the first one after it.
"""
from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(REPO / "scripts"))

from extract_sglang_schema import fetch_wheel  # noqa: E402  (the path is set up just above)

from kimi_lsp.knowledge.schema import shipped_versions  # noqa: E402

OUT = REPO / "server" / "kimi_lsp" / "knowledge" / "data" / "sglang_release_dates.json"


def built_on(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as z:
        y, m, d = max(i.date_time for i in z.infolist())[:3]
    return f"{y:04d}-{m:02d}-{d:02d}"


def main() -> int:
    dates = {v: built_on(fetch_wheel(v)) for v in shipped_versions()}
    OUT.write_text(json.dumps(dates, indent=0, sort_keys=False) + "\n", "utf-8")
    print(f"{len(dates)} releases -> {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
