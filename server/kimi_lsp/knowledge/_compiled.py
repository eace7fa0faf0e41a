"""The knowledge tables in the form fastest to load: marshal, kept next to the bytecode.

Every ``kimi-lsp --check`` reads the sglang schema of one release and the flashinfer and sglang
tables. Decoding them from JSON (and importing ``json``) was ~4 ms of a one-file check (issue 16).
As CPython keeps a module's bytecode, the decoded value is kept in ``knowledge/__pycache__/
<name>.<cache_tag>.marshal``, keyed by the size and modification time of every file it is made
from (the data file, and the module whose code shapes it): a changed file is a different key, so
an entry is never stale. Nothing is written where the package is not writable; a missing,
unreadable or foreign entry only means decoding as before. These entries belong to the installed
package, not to a linted project: ``--no-cache`` (the result cache) does not concern them.
"""
from __future__ import annotations

import os
import sys

from kimi_lsp import _kept, pep440

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    _T = TypeVar("_T")

_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")
_TAG = sys.implementation.cache_tag
_FORMAT = 2  # bump when the entries' layout changes (2: a schema's flags as rows of their own)


def _key(sources: tuple[str, ...]) -> tuple[object, ...] | None:
    key: list[object] = [_FORMAT]
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
    path = os.path.join(_DIR, f"{name}.{_TAG}.marshal")
    entry = _kept.read(path)
    if type(entry) is tuple and len(entry) == 2 and entry[0] == key:
        return entry[1]  # type: ignore[no-any-return]  # what build() returned for this key
    value = build()
    _kept.write(path, (key, value))
    return value


def load_json(path: str) -> Any:
    """``json.loads`` of a data file, kept decoded (``json`` is imported only to make an entry)."""

    def build() -> Any:
        import json

        with open(path, encoding="utf-8") as fh:
            return json.load(fh)

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
