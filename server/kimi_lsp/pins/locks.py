"""Lockfile readers: what a lock says gets installed, with the position of every entry.

One reader per format (lockfiles.md §4.3-§4.8): uv.lock, poetry.lock, pdm.lock, Pipfile.lock,
pylock.toml (PEP 751) and conda-lock.yml. Each returns a ``PinSource`` with ``is_lock=True`` whose
pins are the *locked* entries: ``version`` is the locked version and ``span`` covers the entry from
its ``name`` line through its ``version`` line, so a diagnostic's related location lands on it.
``spec_span`` is always None: a lock is never edited by hand (§0.1) — the fix edits the manifest
and ``relock_command`` regenerates the lock.

Values come from the real parsers (tomllib, a small JSON scanner, PyYAML's composer); TOML
positions from ``syntax/toml.py``'s locator, because tomllib has none. A broken file becomes a
``PinProblem``; no reader raises.

uv.lock also echoes the manifest's requirements (``[package.metadata] requires-dist``,
``requires-dev``, ``[manifest] constraints/overrides``). Those are not what gets installed, so
they are not in ``pins`` (a consumer would mistake an echoed range for a locked version); read
them with ``uv_lock_requirements``, e.g. to tell that a lock is stale after a manifest edit.

This module is the entry point and reads a uv.lock in uv's own shape itself (``syntax/uv_lock.py``'s
scan, the common case); the other readers are in ``_lock_readers.py``, loaded when one is needed.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from kimi_lsp import _regex
from kimi_lsp.pins.model import LOCK_FORMATS, LazyPins, Pin, PinFormat, PinProblem, PinSource
from kimi_lsp.text import Located, Span
from kimi_lsp.workspace import SourceText

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any

    from kimi_lsp.syntax.uv_lock import UvPackage

# What PEP 503 folds into one '-' in a canonical name.
_CANON = _regex.compile(r"[-_.]+")


# Targeted re-lock commands after the manifest changed (lockfiles.md §0.2, §5).
RELOCK = {
    PinFormat.UV_LOCK: "uv lock --upgrade-package {name}",
    PinFormat.POETRY_LOCK: "poetry update --lock {name}",
    PinFormat.PDM_LOCK: "pdm update --no-sync {name}",
    PinFormat.PIPFILE_LOCK: "pipenv lock",
}


def read_lock(source: SourceText, fmt: PinFormat) -> PinSource:
    """Dispatch on ``fmt`` (one of ``LOCK_FORMATS``)."""
    reader = _READERS.get(fmt)
    if reader is None:
        return _failed(source, fmt, None, f"not a lockfile format: {fmt.value}")
    return reader(source)


def read_uv_lock(source: SourceText) -> PinSource:
    return _guarded(source, PinFormat.UV_LOCK, "uv", lambda: _scan_uv_lock(source) or _toml_lock(source, PinFormat.UV_LOCK, "uv", "package"))


def read_poetry_lock(source: SourceText) -> PinSource:
    return _guarded(source, PinFormat.POETRY_LOCK, "poetry", lambda: _toml_lock(source, PinFormat.POETRY_LOCK, "poetry", "package"))


def read_pdm_lock(source: SourceText) -> PinSource:
    return _guarded(source, PinFormat.PDM_LOCK, "pdm", lambda: _toml_lock(source, PinFormat.PDM_LOCK, "pdm", "package"))


def read_pylock(source: SourceText) -> PinSource:
    return _guarded(source, PinFormat.PYLOCK, None,
                    lambda: _scan_pylock(source) or _toml_lock(source, PinFormat.PYLOCK, None, "packages"))


def read_pipfile_lock(source: SourceText) -> PinSource:
    from kimi_lsp.pins import _lock_readers

    return _guarded(source, PinFormat.PIPFILE_LOCK, "pipenv", lambda: _lock_readers._read_pipfile_lock(source))


def read_conda_lock(source: SourceText) -> PinSource:
    from kimi_lsp.pins import _lock_readers

    return _guarded(source, PinFormat.CONDA_LOCK, "conda", lambda: _lock_readers._read_conda_lock(source))


def uv_lock_requirements(source: SourceText) -> tuple[Pin, ...]:
    """The manifest requirements a uv.lock records: every ``[package.metadata] requires-dist``
    (group None) and ``requires-dev`` (group = the dependency group) of the workspace's own
    packages, and ``[manifest] constraints`` (``constraint=True``) / ``overrides``
    (``override=True``). ``version`` is set only for a sole ``==`` clause. Empty on a broken file.
    """
    from kimi_lsp.pins import _lock_readers

    return _lock_readers.uv_lock_requirements(source)


def _toml_lock(source: SourceText, fmt: PinFormat, tool: str | None, array: str) -> PinSource:
    """A TOML lock read with tomllib and the locator (``_lock_readers``, loaded for it)."""
    from kimi_lsp.pins import _lock_readers

    return _lock_readers._read_toml_lock(source, fmt, tool, array)


def locked_versions(source: PinSource, name: str) -> tuple[str, ...]:
    """The distinct locked versions of ``name`` (several under uv forks / conda platforms)."""
    return tuple(dict.fromkeys(p.version for p in source.pins_for(name) if p.version))


# -- shared --------------------------------------------------------------------------------


def _failed(source: SourceText, fmt: PinFormat, tool: str | None, message: str, span: Span | None = None) -> PinSource:
    return PinSource(
        source.path,
        fmt,
        True,
        (),
        tool=tool,
        relock_command=RELOCK.get(fmt),
        problems=(PinProblem(message, span or Span(0, 0)),),
    )


def _guarded(source: SourceText, fmt: PinFormat, tool: str | None, read: Callable[[], PinSource]) -> PinSource:
    # The readers check shapes as they go; this net keeps a reader bug on a strange file from
    # taking down a whole lint run or the server.
    try:
        return read()
    except Exception as exc:  # noqa: BLE001
        return _failed(source, fmt, tool, f"could not read {source.path.name}: {type(exc).__name__}: {exc}")


def _canonical(name: str) -> str:
    return _CANON.sub("-", name).lower()  # packaging.utils.canonicalize_name, without packaging.tags


def _eq_spec(version: str | None) -> str:
    return f"=={version}" if version else ""


def _scan_uv_lock(source: SourceText) -> PinSource | None:
    """A uv.lock in uv's own shape, read by ``syntax.uv_lock.scan`` (no tomllib, no locator);
    None for any other text, which ``_read_toml_lock`` reads. The whole file is checked here; its
    pins are made on demand (``LazyPins``), each exactly as ``_toml_entry_pin`` makes it from
    tomllib's values and the locator's positions."""
    from kimi_lsp.syntax.uv_lock import package, scan

    lock = scan(source.text)
    if lock is None or not lock.has_version:
        return None
    rows = lock.rows

    def make(i: int) -> Pin:
        p = package(rows[i])
        forks = p.resolution_markers
        marker = (forks[0] if len(forks) == 1 else " or ".join(f"({m})" for m in forks)) if forks else None
        return _scanned_pin(p, marker)

    return _on_demand(source, PinFormat.UV_LOCK, rows, make, "uv", RELOCK[PinFormat.UV_LOCK])


def _scan_pylock(source: SourceText) -> PinSource | None:
    """A pylock.toml as uv exports it, read by ``syntax.pylock.scan_pylock``; None for any other
    text, which ``_read_toml_lock`` reads. Its pins are made on demand, each exactly as
    ``_toml_entry_pin`` makes it from tomllib's values and the locator's positions."""
    from kimi_lsp.syntax.pylock import scan_pylock
    from kimi_lsp.syntax.uv_lock import package

    lock = scan_pylock(source.text)
    if lock is None:
        return None
    rows = lock.rows

    def make(i: int) -> Pin:
        name, at, version, version_at, marker, hashed = rows[i]
        # its `name` and `version` lines are written as uv.lock's: located the same way
        return _scanned_pin(package((name, at, version, version_at, None, hashed)), marker)

    tool, relock = _pylock_producer(source, lock.created_by)
    problems = () if lock.has_lock_version else (
        PinProblem(f"{source.path.name} has no lock-version: not a PEP 751 lock?", Span(0, 0)),)
    return _on_demand(source, PinFormat.PYLOCK, rows, make, tool, relock, problems)


def _scanned_pin(p: UvPackage, marker: str | None) -> Pin:
    """The pin of a package a lock scan located: its span from the ``name`` key/value through the
    ``version`` one (both end at their line's end: a scan reads nothing after a closing quote)."""
    name_kv, version_kv = p.name_kv, p.version_kv
    end = name_kv.end if version_kv is None else max(name_kv.end, version_kv.end)
    start = name_kv.start if version_kv is None else min(name_kv.start, version_kv.start)
    return Pin(
        name=_canonical(p.name),
        written_name=Located(p.name, p.name_content),
        specifier=_eq_spec(p.version),
        version=p.version,
        span=Span(start, end),
        spec_span=None,
        marker=marker or None,
        hashed=p.artifacts,
    )


def _on_demand(source: SourceText, fmt: PinFormat, rows: Sequence[tuple[Any, ...]], make: Callable[[int], Pin],
               tool: str | None, relock: str | None, problems: tuple[PinProblem, ...] = ()) -> PinSource:
    """The lock source of a scan's ``rows`` (each a package, its name first), pins made by ``make``
    when asked for."""
    # every name canonicalized in one pass (names hold no newline: the scans' strings exclude it)
    names = _canonical("\n".join(r[0] for r in rows)).split("\n") if rows else []
    return PinSource.on_demand(source.path, fmt, True, LazyPins(names, make), tool=tool, relock_command=relock,
                               problems=problems)


def _pylock_producer(source: SourceText, creator: object) -> tuple[str | None, str | None]:
    """(tool, relock command) for a pylock.toml from its ``created-by`` and header comment."""
    tool = creator.split()[0].lower() if isinstance(creator, str) and creator.strip() else None
    name = source.path.name
    if tool == "uv":
        # uv writes the export command into the header: re-run it after re-locking
        m = re.search(r"^#\s+(uv export\b[^\r\n]*)", source.text[:2000], re.MULTILINE)
        export = m.group(1).strip() if m else f"uv export --format pylock.toml -o {name}"
        return tool, "uv lock --upgrade-package {name} && " + export
    if tool == "pdm":
        return tool, "pdm update --no-sync {name}"
    # pip lock records neither its inputs nor its command line: there is nothing to re-run
    return tool, None



_READERS: dict[str, Callable[[SourceText], PinSource]] = {
    PinFormat.UV_LOCK: read_uv_lock,
    PinFormat.POETRY_LOCK: read_poetry_lock,
    PinFormat.PDM_LOCK: read_pdm_lock,
    PinFormat.PIPFILE_LOCK: read_pipfile_lock,
    PinFormat.PYLOCK: read_pylock,
    PinFormat.CONDA_LOCK: read_conda_lock,
}

__all__ = [
    "LOCK_FORMATS",
    "RELOCK",
    "locked_versions",
    "read_conda_lock",
    "read_lock",
    "read_pdm_lock",
    "read_pipfile_lock",
    "read_poetry_lock",
    "read_pylock",
    "read_uv_lock",
    "uv_lock_requirements",
]
