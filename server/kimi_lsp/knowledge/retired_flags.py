"""Flags sglang retired, and what sglang itself said replaces them.

``data/sglang_retired_flags.json`` is made by ``scripts/build_retired_flags.py`` from the released
wheels: for each option that some release registered as deprecated (``DeprecatedAction`` and the
rename actions, or a "(Deprecated)" help text) and the newest release read no longer registers,
the newest release that still had it, its own words, and the replacement those words name. A
replacement therefore never comes from string similarity.
"""
from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType

from kimi_lsp._record import dataclass
from kimi_lsp.knowledge import _compiled

_DATA = Path(__file__).with_name("data") / "sglang_retired_flags.json"


@dataclass(frozen=True, slots=True)
class RetiredFlag:
    option: str  # e.g. "--enable-deepep-moe"
    last_seen: str  # the newest release read that still registers it
    said: str  # sglang's help text or DeprecatedAction message there ("" for a hidden alias)
    # the words that replace the option, e.g. ("--moe-a2a-backend", "deepep"); () when sglang's
    # words name no single replacement (a setting to copy from elsewhere, an environment variable)
    replacement: tuple[str, ...]
    keeps_value: bool  # a renamed valued flag: the old value(s) carry over to the new one
    value_map: Mapping[str, str]  # old value -> new value, where sglang renamed values too


@cache
def retired_flags() -> Mapping[str, RetiredFlag]:
    raw = _compiled.load_json(str(_DATA))
    out = {}
    for option, e in raw["flags"].items():
        out[option] = RetiredFlag(
            option,
            e["last_seen"],
            e["said"],
            tuple(e["replacement"] or ()),
            bool(e["keeps_value"]),
            MappingProxyType(dict(e["value_map"])),
        )
    return MappingProxyType(out)


def retired(option: str) -> RetiredFlag | None:
    """The retired flag ``option`` names exactly (``--x=v`` is looked up as ``--x``)."""
    return retired_flags().get(option.split("=", 1)[0])
