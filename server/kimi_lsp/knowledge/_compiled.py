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

import marshal
import os
import sys

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    _T = TypeVar("_T")

_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")
_TAG = sys.implementation.cache_tag
_FORMAT = 1  # bump when the entries' layout changes


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
    try:
        with open(path, "rb") as fh:
            entry = marshal.loads(fh.read())
        if type(entry) is tuple and len(entry) == 2 and entry[0] == key:
            return entry[1]  # type: ignore[no-any-return]  # what build() returned for this key
    except (OSError, ValueError, EOFError, TypeError):
        pass
    value = build()
    _save(path, key, value)
    return value


def _save(path: str, key: tuple[object, ...], value: object) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        data = marshal.dumps((key, value))  # type: ignore[arg-type]  # ValueError below for what marshal cannot keep
        os.makedirs(_DIR, exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old entry or the new one
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass


def load_json(path: str) -> Any:
    """``json.loads`` of a data file, kept decoded (``json`` is imported only to make an entry)."""

    def build() -> Any:
        import json

        with open(path, encoding="utf-8") as fh:
            return json.load(fh)

    return load(os.path.basename(path), (path,), build)
