"""Which flashinfer-python releases have ``enable_dcp``, and what a version specifier admits.

sglang refuses a Kimi-K3 + DCP + cutedsl_mla launch unless
``flashinfer.decode.trtllm_batch_decode_with_kv_cache_mla`` has an ``enable_dcp`` parameter.
The answer per release comes from ``data/flashinfer_dcp.json``, which
``scripts/build_flashinfer_table.py`` made by reading every released archive; it is not a
``version < X`` rule, because release candidates (0.6.17rc1) have the parameter while the final
they precede sorts above them.

Only the standard library is imported here (versions are ``kimi_lsp.pep440``'s): ``kimi-lsp
--check`` loads this module on every run and start-up time is a feature.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import cache, lru_cache, reduce
from pathlib import Path

from kimi_lsp import pep440
from kimi_lsp._record import dataclass
from kimi_lsp.knowledge import _compiled
from kimi_lsp.pep440 import InvalidSpecifier, InvalidVersion, Specifier, SpecifierSet, Version

WATCHED = ("flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache")

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any

_DATA = Path(__file__).with_name("data") / "flashinfer_dcp.json"

# Far above any real release: stands for "whatever comes next" in open ranges.
_FAR_FUTURE = Version("99999")


@dataclass(frozen=True)
class FlashinferRelease:
    """One row of the table: what the released archive of ``version`` contains."""

    version: Version
    has_function: bool  # trtllm_batch_decode_with_kv_cache_mla is defined somewhere
    decode_exports: bool  # flashinfer.decode binds it (what sglang imports)
    enable_dcp: bool  # the def has the parameter
    file: str | None = None
    line: int | None = None
    params: int | None = None

    @property
    def passes(self) -> bool:
        """Would sglang's probe accept this release?"""
        return self.decode_exports and self.enable_dcp


@cache
def _rows() -> dict[Any, tuple[tuple[Any, ...], tuple[Any, ...]]]:
    """Each release by its version's sort key: its version's parts and its row's values in
    ``FlashinferRelease`` order, PEP 440 order (kept: a lookup makes the one release it reads)."""

    def build() -> dict[Any, tuple[tuple[Any, ...], tuple[Any, ...]]]:
        return {
            parts[-1]: (parts, (r["has_function"], r["decode_exports"], r["enable_dcp"], r.get("file"), r.get("line"),
                                r.get("params")))
            for parts, r in _compiled.releases_in_order(str(_DATA), __file__)
        }

    return _compiled.load("flashinfer_dcp.json.by-key", (str(_DATA), __file__, pep440.__file__), build)


_made: dict[Any, FlashinferRelease] = {}


def _release(key: Any) -> FlashinferRelease:
    """The release whose version has sort key ``key`` (one of ``_rows()``'), made once."""
    made = _made.get(key)
    if made is None:
        parts, values = _rows()[key]
        made = _made.setdefault(key, FlashinferRelease(Version._from_parts(parts), *values))
    return made


def _known(version: Version) -> FlashinferRelease | None:
    """The table's row for ``version`` (PEP 440 equality), else None."""
    key = version._key  # what Version's equality and hash compare
    return _release(key) if key in _rows() else None


@cache
def _table() -> Mapping[Version, FlashinferRelease]:
    return {r.version: r for r in map(_release, _rows())}


def table_info() -> Mapping[str, object]:
    """The table's header: how and when it was made."""
    data = _compiled.load_json(str(_DATA))
    return {k: v for k, v in data.items() if k != "releases"}


def releases() -> tuple[Version, ...]:
    """All known flashinfer-python releases, PEP 440 sorted."""
    return tuple(_table())


def release_info(version: str) -> FlashinferRelease | None:
    """The table row for a released version (a ``+local`` label is ignored), else None."""
    parsed = _parse(version)
    return None if parsed is None else _known(Version(parsed.public))


def _passing() -> Iterator[Version]:
    """The versions sglang's probe accepts (``FlashinferRelease.passes``), in PEP 440 order, read
    off the rows: no release is made for them."""
    return (Version._from_parts(parts) for parts, (_, exports, dcp, *_) in _rows().values() if exports and dcp)


@cache
def min_enable_dcp() -> Version:
    """The first release, in PEP 440 order, whose signature has ``enable_dcp`` (0.6.17rc1)."""
    return next(_passing())


@cache
def first_good_final() -> str:
    """The oldest final release with ``enable_dcp``: what a quick-fix bumps to ("0.6.17")."""
    return str(next(v for v in _passing() if not v.is_prerelease and not v.is_devrelease))


def _parse(version: str) -> Version | None:
    try:
        return Version(version.strip())
    except InvalidVersion:
        return None


def _undeterminable(v: Version) -> bool:
    # Editable and source installs without _build_meta.py report 0.0.0+unknown; nightlies
    # (.devN) carry commits that their number does not tell (0.6.16.dev20260729 already has
    # enable_dcp yet sorts below 0.6.17rc1). Only the signature check of `kimi-lsp verify` knows.
    return v.is_devrelease or not any(v.release)


@lru_cache(maxsize=2048)
def has_enable_dcp(version: str) -> bool | None:
    """Does flashinfer-python ``version`` have ``enable_dcp``? None: cannot tell from the version."""
    v = _parse(version)
    if v is None or _undeterminable(v):
        return None
    known = _known(Version(v.public))
    if known is not None:
        return known.passes
    public = Version(v.public)
    if public > releases()[-1]:
        return True  # newer than anything we know: the feature is not going away
    return public >= min_enable_dcp()


# --------------------------------------------------------------------------------------------
# Specifiers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpecVerdict:
    """What a flashinfer-python version specifier means for the ``enable_dcp`` check.

    kind:
      pinned-bad / pinned-ok / pinned-unknown  one exact version (``==V`` / ``===V``)
      all-bad        no version it admits has enable_dcp (also: nothing satisfies it)
      admits-bad     it admits releases both with and without enable_dcp
      all-ok         every release it admits has it (or, for a range no release reaches yet,
                     the later releases it would admit)
      unconstrained  no constraint at all
      invalid        not PEP 440 specifier text
    """

    kind: str
    exact: str | None = None
    lowest_bad: str | None = None
    highest_bad: str | None = None
    lowest_ok: str | None = None
    detail: str = ""


def classify(specifiers: Iterable[str]) -> SpecVerdict:
    """Classify the intersection of several specifier strings (a requirement, constraints ...)."""
    if isinstance(specifiers, str):  # a lone string would otherwise be iterated by character
        specifiers = (specifiers,)
    return _classify(tuple(str(s) for s in specifiers))


@lru_cache(maxsize=2048)  # every launch of a project asks about the same pins
def _classify(specifiers: tuple[str, ...]) -> SpecVerdict:
    sets: list[SpecifierSet] = []
    for text in specifiers:
        try:
            sets.append(SpecifierSet(str(text).strip()))
        except InvalidSpecifier:
            return SpecVerdict("invalid", detail=f"not a PEP 440 version specifier: {text!r}")
    combined = reduce(lambda a, b: a & b, sets, SpecifierSet())
    clauses = list(combined)
    if not clauses:
        return SpecVerdict("unconstrained", detail="no version constraint")
    return _pinned(clauses) or _ranged(combined, clauses)


def _pinned(clauses: list[Specifier]) -> SpecVerdict | None:
    """The verdict for an exact pin that the other clauses agree with, else None."""
    for pin in clauses:
        if pin.operator not in ("==", "===") or pin.version.endswith(".*"):
            continue
        v = _parse(pin.version)
        if v is None:  # `===` takes any string: only that literal build can install
            return SpecVerdict(
                "pinned-unknown",
                exact=pin.version,
                detail=f"pins {pin.version!r}, which is not a PEP 440 version",
            )
        if not all(c.contains(v, prereleases=True) for c in clauses if c is not pin):
            continue
        verdict = has_enable_dcp(pin.version)
        if verdict is None:
            return SpecVerdict(
                "pinned-unknown",
                exact=pin.version,
                detail=f"pins {pin.version}; whether it has enable_dcp cannot be told from the version",
            )
        if verdict:
            return SpecVerdict("pinned-ok", exact=pin.version, lowest_ok=pin.version,
                               detail=f"pins {pin.version}, which has enable_dcp")
        return SpecVerdict("pinned-bad", exact=pin.version, lowest_bad=pin.version,
                           highest_bad=pin.version, detail=f"pins {pin.version}, which lacks enable_dcp")
    return None


def _opts_into_prereleases(clause: Specifier) -> bool:
    # As the packaging that current pip vendors decides it: a clause naming a pre-release opts
    # the set into pre-releases, except `!=` (it excludes one) and `==X.*` (cannot name one).
    if clause.operator == "!=" or clause.version.endswith(".*"):
        return False
    v = _parse(clause.version)
    return v is not None and v.is_prerelease


def _admitted(combined: SpecifierSet, clauses: list[Specifier]) -> list[Version]:
    """The known releases pip would consider for this set, in order.

    pip's rule: pre-releases only when a clause names one, or when no final release matches.
    """
    matching = [v for v in releases() if combined.contains(v, prereleases=True)]
    if any(_opts_into_prereleases(c) for c in clauses):
        return matching
    finals = [v for v in matching if not v.is_prerelease]
    return finals or matching


def _probes(clauses: list[Specifier]) -> set[Version]:
    """Unreleased versions at and around every boundary of the set.

    The set is a union of intervals whose ends are the clause versions; a point just inside each
    end, plus one far above everything, witnesses whether an interval holds future versions.
    """
    out = {_FAR_FUTURE}
    for clause in clauses:
        v = _parse(clause.version.removesuffix(".*"))
        if v is None:
            continue
        v = Version(v.public)
        out.add(v)
        out.add(Version(f"{v.base_version}.post{(v.post or 0) + 1}"))
        rel = v.release
        for i in range(len(rel) + 1):
            head = rel[:i]
            bumped = (*head, (rel[i] if i < len(rel) else 0) + 1)
            out.add(Version(".".join(map(str, bumped))))
            if i < len(rel) and rel[i] > 0:  # just below: X.Y.(Z-1).99999
                out.add(Version(".".join(map(str, (*head, rel[i] - 1, 99999)))))
    return out


def _future_ok(combined: SpecifierSet, clauses: list[Specifier]) -> bool:
    """Could a release not yet in the table satisfy the set and have enable_dcp?"""
    known = set(releases())
    prereleases = any(_opts_into_prereleases(c) for c in clauses)
    for probe in _probes(clauses):
        if probe in known or (probe.is_prerelease and not prereleases):
            continue
        if not combined.contains(probe, prereleases=True):
            continue
        if has_enable_dcp(str(probe)):
            return True
    return False


def _span(versions: list[Version]) -> str:
    if len(versions) == 1:
        return str(versions[0])
    return f"{versions[0]} ... {versions[-1]}"


def _ranged(combined: SpecifierSet, clauses: list[Specifier]) -> SpecVerdict:
    admitted = _admitted(combined, clauses)
    table = _table()
    bad = [v for v in admitted if not table[v].passes]
    ok = [v for v in admitted if table[v].passes]
    lowest_bad = str(bad[0]) if bad else None
    highest_bad = str(bad[-1]) if bad else None
    lowest_ok = str(ok[0]) if ok else None
    if not ok and not _future_ok(combined, clauses):
        detail = (
            f"admits only {_span(bad)}, which lack{'s' if len(bad) == 1 else ''} enable_dcp"
            if bad
            else f"no release satisfies {combined}, and none with enable_dcp could"
        )
        return SpecVerdict("all-bad", lowest_bad=lowest_bad, highest_bad=highest_bad, detail=detail)
    if bad:
        return SpecVerdict(
            "admits-bad",
            lowest_bad=lowest_bad,
            highest_bad=highest_bad,
            lowest_ok=lowest_ok,
            detail=f"admits {_span(bad)}, which lack{'s' if len(bad) == 1 else ''} enable_dcp",
        )
    detail = (
        f"every release it admits has enable_dcp (lowest {lowest_ok})"
        if ok
        else "no release satisfies it yet; the later releases it admits would have enable_dcp"
    )
    return SpecVerdict("all-ok", lowest_ok=lowest_ok, detail=detail)


def bump_target(sglang_version: str | None) -> str:
    """The flashinfer-python version a quick-fix should pin.

    sglang's own pin when that has enable_dcp (it keeps the install consistent with sglang's
    metadata), else the oldest final release that has it.
    """
    from kimi_lsp.knowledge.sglang_releases import sglang_release

    release = sglang_release(sglang_version) if sglang_version else None
    pinned = release.flashinfer_version if release else None
    if pinned and has_enable_dcp(pinned):
        return pinned
    return first_good_final()
