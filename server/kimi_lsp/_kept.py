"""Values made at start-up and kept across runs, the way CPython keeps bytecode.

``kimi-lsp --check FILE`` starts once per pre-commit invocation, so what every start makes the
same way (a record's generated methods, a regular expression's compiled program) is made once and
kept in the package's ``__pycache__`` as marshal, one file per interpreter. The key of an entry is
its whole input (a record's shape, a pattern and its flags), so an entry can never be stale; the
file is rewritten at exit only when a run made something new. ``read`` and ``write`` are the file
side, shared with ``knowledge/_compiled.py``. Nothing is written where the
package is not writable, and a missing or unreadable file only means making everything again.
"""
from __future__ import annotations

import marshal
import mmap
import os
import sys

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any

_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")


class Kept:
    """A dict of marshal-able values, read on first use and saved at exit when it grew.

    Each value is kept as its own marshal bytes and decoded when asked for: a run decodes only
    the entries it uses (a one-file check builds a fraction of the package's records)."""

    __slots__ = ("_path", "_data", "_grew", "_used")

    # Past this many entries (edits of the package's own code leave old ones behind), a save
    # keeps only those this run asked for.
    LIMIT = 4096

    def __init__(self, name: str) -> None:
        self._path = os.path.join(_DIR, f"{name}.{sys.implementation.cache_tag}.marshal")
        self._data: dict[Any, Any] | None = None
        self._grew = False
        self._used: set[Any] = set()

    def _load(self) -> dict[Any, Any]:
        data = read(self._path)
        self._data = data if isinstance(data, dict) else {}
        return self._data

    def get(self, key: Any) -> Any:
        data = self._data if self._data is not None else self._load()
        self._used.add(key)
        raw = data.get(key)
        if type(raw) is not bytes:
            return None
        try:
            return marshal.loads(raw)
        except (ValueError, EOFError, TypeError):
            return None

    def put(self, key: Any, value: Any) -> None:
        data = self._data if self._data is not None else self._load()
        try:
            data[key] = marshal.dumps(value)
        except ValueError:  # not something marshal keeps: made again next time
            return
        self._used.add(key)
        if not self._grew:
            self._grew = True
            import atexit

            atexit.register(self.save)

    def save(self) -> None:
        data = self._data
        if not data:
            return
        if len(data) > self.LIMIT:
            data = {k: v for k, v in data.items() if k in self._used}
        write(self._path, data)


def read(path: str) -> object:
    """What a kept file holds, or None when it is missing or unreadable.

    Decoded from a mapping of the file, not from a copy of it: a run reads ~400 KB of these
    (the schema of its release, the regular expressions and record methods), and a copy is as
    many fresh pages of memory to fault in. The files are only ever replaced (``write_bytes``),
    never rewritten in place, so the mapping stays valid while it is read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as data:
            return marshal.loads(data)
    except (OSError, ValueError, EOFError, TypeError):  # (an empty file cannot be mapped: ValueError)
        return None
    finally:
        os.close(fd)


def write(path: str, value: object) -> None:
    """Keep ``value`` in ``path``, atomically; nothing where the directory is not writable or
    marshal cannot keep the value."""
    try:
        data = marshal.dumps(value)  # type: ignore[arg-type]  # ValueError for what marshal cannot keep
    except ValueError:
        return
    write_bytes(path, data)


def write_bytes(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (a concurrent reader sees the old file or the new
    one); nothing where the directory is not writable."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
