"""The options of sglang's serving benchmark (``python -m sglang.bench_serving``), read from the
released wheels by ``scripts/build_bench_options.py``: a "server launch" carrying several of them is
a benchmark command written where a server command was meant (KL201 says so once)."""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path

_DATA = Path(__file__).with_name("data") / "sglang_bench_serving_options.json"


@cache
def bench_serving_options() -> frozenset[str]:
    try:
        with open(_DATA, encoding="utf-8") as fh:
            return frozenset(json.load(fh)["options"])
    except (OSError, ValueError, KeyError, TypeError):  # a damaged data file: no such diagnosis
        return frozenset()
