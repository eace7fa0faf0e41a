"""The knowledge tables in the form fastest to load: marshal, kept in the user's cache directory.

Every ``kimi-lsp --check`` reads the sglang schema of one release and the flashinfer and sglang
tables. Decoding them from JSON (and importing ``json``) was ~4 ms of a one-file check (issue 16).
As CPython keeps a module's bytecode, the decoded value is kept (``_kept``: the user's cache
directory, never the installed package; one directory per interpreter and install; written 0600
and read only when this user's own), in ``<name>.marshal``, keyed by the size and modification
time of every file it is made from (the data file, and the module whose code shapes it) and by
``sys.version``: a changed file is a different key, so an entry is never stale. Its bytes carry a
CRC-32, checked before they are decoded: a damaged file is made again, never another answer.
A missing, unreadable or foreign entry only means decoding as before, and a source that is no
file (a zipapp) means decoding every run (its data is read through the package's loader). These
entries belong to the installed package, not to a linted project: ``--no-cache`` (the result
cache) does not concern them.
"""
from __future__ import annotations

import marshal
import os
import sys

from kimi_lsp import _kept, pep440

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    _T = TypeVar("_T")

_FORMAT = 3  # bump when the entries' layout changes (2: a schema's flags as rows; 3: in the cache directory)


def _key(sources: tuple[str, ...]) -> tuple[object, ...] | None:
    key: list[object] = [_FORMAT, sys.version]
    for path in sources:
        try:
            st = os.stat(path)
        except OSError:
            return None
        key += (path, st.st_size, st.st_mtime_ns)
    return tuple(key)


def load(name: str, sources: tuple[str, ...], build: Callable[[], _T]) -> _T:
    """``build()``, or the value it made last time from these same ``sources``.

    The value must be made of what marshal keeps (str, int, float, bool, None, bytes, tuple,
    list, dict, set, frozenset); anything else is simply not kept.
    """
    key = _key(sources)
    if key is None:
        return build()
    path = _kept.path_of(name)
    found = _kept.read(path, key)
    if found is not None:
        span, blob = found
        try:
            start, end, crc = span
            raw = blob[start:end]
            if _kept.sound(raw, crc):
                return marshal.loads(raw)  # type: ignore[no-any-return]  # what build() returned for this key
        except (TypeError, ValueError, EOFError):
            pass  # damaged or foreign: made again below
    value = build()
    try:
        raw = marshal.dumps(value)  # type: ignore[arg-type]  # ValueError for what marshal cannot keep
    except ValueError:
        return value
    if _kept.crc32 is not None:
        _kept.write(path, key, (0, len(raw), _kept.crc32(raw)), [raw])
    return value


def read_data(path: str) -> bytes:
    """A data file's bytes: from the file system, else through the package's loader (a zipapp's
    ``zipimporter``: its paths name a member of the archive). OSError when neither has it."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as err:
        get_data = getattr(globals().get("__loader__"), "get_data", None)
        if get_data is None:
            raise
        try:
            return get_data(path)  # type: ignore[no-any-return]
        except OSError:
            raise err from None


def load_json(path: str) -> Any:
    """``json.loads`` of a data file, kept decoded (``json`` is imported only to make an entry)."""

    def build() -> Any:
        import json

        return json.loads(read_data(path).decode("utf-8"))

    return load(os.path.basename(path), (path,), build)


def releases_in_order(path: str, shaped_by: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """The ``releases`` rows of a data file in PEP 440 order, each with its parsed version as
    ``Version._parts`` (the module ``shaped_by`` builds its table from them): kept, so that a run
    parses none of the versions. A repeated version keeps the file's order (the sort is stable)."""

    def build() -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        rows = [(pep440.Version(row["version"])._parts(), row) for row in load_json(path)["releases"]]
        rows.sort(key=lambda r: r[0][-1])  # the version's sort key
        return rows

    return load(f"{os.path.basename(path)}.in-order", (path, shaped_by, pep440.__file__), build)
