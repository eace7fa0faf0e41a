"""What each sglang release requires of flashinfer and its kernel packages, from its metadata.

Every sglang release pins flashinfer-python with ``==``, so a project that pins only
``sglang==X`` still installs one known flashinfer version. ``data/sglang_releases.json`` holds that
mapping (made by ``scripts/build_sglang_table.py`` from the released wheels' METADATA) so that
lint time needs no resolver and no network.
"""

from __future__ import annotations

import marshal
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType

from kimi_lsp._record import dataclass, field
from kimi_lsp import pep440
from kimi_lsp.knowledge import _compiled
from kimi_lsp.pep440 import InvalidVersion, Version

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any

_DATA = Path(__file__).with_name("data") / "sglang_releases.json"


@dataclass(frozen=True)
class SglangRelease:
    version: str
    flashinfer_requirement: str | None  # as in METADATA, e.g. "flashinfer_python[cu13]==0.7.2"
    flashinfer_version: str | None  # the exact version when pinned with ==
    has_k3_dcp_check: bool  # the release refuses Kimi-K3 DCP + cutedsl_mla without enable_dcp
    # canonical name -> specifier, for sglang-kernel / sgl-kernel, torch, flashinfer-cubin and
    # flashinfer-jit-cache when the release constrains them
    pins: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # the sglang extra flashinfer comes with (old releases: "srt"); None when it is a base dependency
    flashinfer_extra: str | None = None
    # the source file of sglang's Kimi-K3 DCP check, e.g. "sglang/srt/arg_groups/overrides.py"
    k3_dcp_check_file: str | None = None


@cache
def _rows() -> dict[Any, tuple[tuple[Any, ...], bytes]]:
    """Each release by its version's sort key: its version's parts and its row, the row as its
    own marshal bytes (a lint asks for one or two releases of ~100: ``_release`` decodes those).
    PEP 440 order; a repeated version keeps its first place and its last row, as the table did."""

    return _compiled.load("sglang_releases.json.by-key", (str(_DATA), __file__, pep440.__file__), _build_rows)


def _build_rows() -> dict[Any, tuple[tuple[Any, ...], bytes]]:
    return {parts[-1]: (parts, marshal.dumps(row)) for parts, row in _compiled.releases_in_order(str(_DATA), __file__)}


_made: dict[Any, SglangRelease] = {}


def _release(key: Any) -> SglangRelease:
    """The release whose version has sort key ``key`` (one of ``_rows()``'), made once."""
    made = _made.get(key)
    if made is None:
        try:
            row = marshal.loads(_rows()[key][1])
        except (ValueError, EOFError, TypeError):  # a row damaged on disk (marshal keeps no checksum)
            row = marshal.loads(_build_rows()[key][1])  # made again from the data file
        made = _made.setdefault(key, SglangRelease(
            version=row["version"],
            flashinfer_requirement=row.get("flashinfer_requirement"),
            flashinfer_version=row.get("flashinfer_version"),
            has_k3_dcp_check=row.get("k3_dcp_check") is not None,
            pins=MappingProxyType(dict(row.get("pins") or {})),
            flashinfer_extra=row.get("flashinfer_extra"),
            k3_dcp_check_file=row.get("k3_dcp_check"),
        ))
    return made


@cache
def _table() -> Mapping[Version, SglangRelease]:
    return {Version._from_parts(parts): _release(key) for key, (parts, _) in _rows().items()}


def sglang_release(version: str) -> SglangRelease | None:
    """The release ``version`` (PEP 440 equality, ``+local`` ignored), or None when unknown."""
    try:
        parsed = Version(version.strip())
    except InvalidVersion:
        return None
    key = Version(parsed.public)._key  # what Version's equality and hash compare
    return _release(key) if key in _rows() else None


def sglang_versions() -> tuple[str, ...]:
    """Every sglang release in the table, PEP 440 sorted."""
    return tuple(r.version for r in _table().values())
