"""Values made at start-up and kept across runs, in the user's cache directory.

``kimi-lsp --check FILE`` starts once per pre-commit invocation, so what every start makes the
same way (the package's bytecode in one file, a record's generated ``__init__``, a regular
expression's compiled program, a decoded knowledge table) is made once and kept. Where, and how:

- In the user's cache directory, as pre-commit, ruff and mypy keep theirs (``cache_root``: the
  result cache's directory), under ``kept/<version>-<cache tag>-O<optimisation level>-<hash of
  sys.version and the package directory>``: never in the installed package (a read-only or
  another user's install, ``pip uninstall``, a zipapp), one directory per interpreter, install
  and ``-O`` level, so that a ``-OO`` run never hands docstring-less bytecode to a normal one.
- Each file says what made it (``ident``: the format, ``sys.version``, the bytecode magic number
  and the generator's own stamp, e.g. ``_record.py``'s size and mtime); another ident is an empty
  file, made again.
- Written atomically (a fresh ``O_EXCL|O_NOFOLLOW`` temporary file, mode 0600 whatever the umask,
  then ``os.replace``) into directories made 0700; read only from a regular file and directories
  owned by this (effective) user that no one else can write, opened without following a link.
- The first run that makes a new directory (an upgrade, another interpreter) removes the sibling
  directories nothing wrote to for 60 days (``prune``): the cache does not grow with every release.
- Every entry carries a CRC-32 of its bytes, checked when the entry is decoded (a run touches only
  what it uses); the file's index carries one too. Any mismatch is a miss: made again, never a
  crash or another answer.

``FAST`` says whether the start-up tricks that lean on interpreter internals (``_imports``' kept
bytecode and direct imports, ``_regex``'s kept programs) may run: only on the CPython versions
they were tested on, and never under ``KIMI_LSP_PLAIN_STARTUP=1``; elsewhere the plain path.
"""
from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any, Callable

# The interpreters the fast start-up path was tested on (CI runs the suite on each, both ways).
TESTED = sys.implementation.name == "cpython" and (3, 10) <= sys.version_info[:2] <= (3, 13)
FAST = TESTED and os.environ.get("KIMI_LSP_PLAIN_STARTUP", "") in ("", "0")

FORMAT = 1
_HEAD = b"KLk1"  # the container's first bytes: then the index's CRC, its length, the index, the blob
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_euid = getattr(os, "geteuid", None)

crc32: Callable[[Any], int] | None
try:
    import zlib

    crc32 = zlib.crc32
except ImportError:  # pragma: no cover - a Python without zlib: nothing can be verified, nothing is kept
    crc32 = None


def magic() -> bytes | None:
    """The interpreter's bytecode magic number (what a ``.pyc`` starts with), read where the fast
    path may read importlib's internals; None on the plain path, where ``sys.version`` (part of
    every ident and of the directory's name) stands for it: a CPython release's magic number never
    changes, and ``importlib.util`` would cost a result-cache hit a tenth of its time."""
    if not FAST:
        return None
    found = getattr(sys.modules.get("_frozen_importlib_external"), "MAGIC_NUMBER", None)
    return found if isinstance(found, bytes) else None


def cache_root() -> str | None:
    """The user's cache directory for kimi-lsp: ``$KIMI_LSP_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/kimi-lsp``, else ``~/.cache/kimi-lsp``; None when there is no home."""
    where = os.environ.get("KIMI_LSP_CACHE_DIR")
    if where:
        return os.path.abspath(where)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "kimi-lsp")
    home = os.path.expanduser("~")
    return os.path.join(home, ".cache", "kimi-lsp") if os.path.isabs(home) else None


_POSIX = os.name == "posix"  # (Windows reports no owner and no group/other bits: its ACLs decide)


def mine(st: os.stat_result) -> bool:
    """Owned by the effective user and writable by nobody else."""
    return not _POSIX or ((_euid is None or st.st_uid == _euid()) and not st.st_mode & 0o022)


def trusted_dir(path: str) -> bool:
    """``path`` is a directory (not a link to one) this user owns and only this user can write."""
    import stat

    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISDIR(st.st_mode) and mine(st)


def secure_dir(path: str, create: bool = True, ours: bool = True) -> bool:
    """Make ``path`` (and its missing parents) 0700 where missing; True when it is then a
    directory this user owns and nobody else can write (else it must not be used).

    ``ours``: a directory only kimi-lsp makes (``kept/``, ``results-v<N>``, the default
    ``~/.cache/kimi-lsp``), which an older kimi-lsp may have made group-writable under a umask of
    002 (user private groups): this user's own is then made so nobody else can write it (through a
    descriptor: never a link). A directory the user named (``KIMI_LSP_CACHE_DIR``) is left as it is."""
    if create and not os.path.lexists(path):
        parent = os.path.dirname(path)
        if parent != path and not os.path.isdir(parent):
            secure_dir(parent)
        try:
            os.mkdir(path, 0o700)
            os.chmod(path, 0o700)  # the umask may have taken bits away (0o700 itself cannot widen)
        except (OSError, ValueError):
            pass
    if trusted_dir(path):
        return True
    if ours and create and _POSIX and _euid is not None:
        _tighten(path)
        return trusted_dir(path)
    return False


def _tighten(path: str) -> None:
    """Take group and other write off this user's own directory ``path`` (not a link)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC)
    except (OSError, ValueError):
        return
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode) and _euid is not None and st.st_uid == _euid():
            os.fchmod(fd, stat.S_IMODE(st.st_mode) & ~0o022)
    except OSError:
        pass
    finally:
        os.close(fd)


def named_by_user() -> bool:
    """Whether the cache directory is one the user named (``KIMI_LSP_CACHE_DIR``), not kimi-lsp's own."""
    return bool(os.environ.get("KIMI_LSP_CACHE_DIR"))


_chains: dict[tuple[str, bool], bool] = {}


def _trusted_chain(directory: str, create: bool) -> bool:
    """The kept directory, ``kept/`` and the cache root above them (``secure_dir`` each, made
    when ``create``): all three this user's own and nobody else's to write. Asked once a run."""
    found = _chains.get((directory, create))
    if found is None:
        kept = os.path.dirname(directory)
        new = create and not os.path.lexists(directory)
        root = os.path.dirname(kept)
        found = _chains[directory, create] = (secure_dir(root, create, not named_by_user())
                                              and secure_dir(kept, create) and secure_dir(directory, create))
        if found:
            _chains[directory, False] = True
            if new:  # a new version, interpreter or install: the directories nothing wrote to for long go
                prune(kept, os.path.basename(directory))
    return found


STALE_SECONDS = 60 * 86400


def prune(kept: str, spare: str) -> None:
    """Remove the directories of ``kept`` (but ``spare``) that no run wrote to for
    STALE_SECONDS (an upgraded or uninstalled kimi-lsp's, an interpreter gone): only this user's
    own regular files and directories, through descriptors of the directories checked (a link is
    never followed). A directory still in use is at worst made again."""
    if not (os.scandir in os.supports_fd and os.unlink in os.supports_dir_fd and os.rmdir in os.supports_dir_fd):
        return
    import stat
    import time

    old = time.time() - STALE_SECONDS
    flags = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
    try:
        top = os.open(kept, flags)
    except OSError:
        return
    try:
        with os.scandir(top) as it:
            names = [e.name for e in it if e.name != spare]
        for name in names:
            try:
                st = os.stat(name, dir_fd=top, follow_symlinks=False)
                if not (stat.S_ISDIR(st.st_mode) and mine(st) and st.st_mtime < old):
                    continue
                sub = os.open(name, flags, dir_fd=top)
            except OSError:
                continue
            try:
                with os.scandir(sub) as it:
                    files = [e.name for e in it]
                for file in files:
                    fst = os.stat(file, dir_fd=sub, follow_symlinks=False)
                    if stat.S_ISREG(fst.st_mode) and mine(fst):
                        os.unlink(file, dir_fd=sub)
                os.rmdir(name, dir_fd=top)  # fails (and stays) when anything else was in it
            except OSError:
                pass
            finally:
                os.close(sub)
    except OSError:
        pass
    finally:
        os.close(top)


_kept_dir: list[str | None] = []  # kept_dir's answer, once worked out


def kept_dir() -> str | None:
    """This interpreter's, install's and ``-O`` level's directory for kept files (not created);
    None when there is no cache directory or nothing can be verified."""
    if _kept_dir:
        return _kept_dir[0]
    root = cache_root()
    tag = sys.implementation.cache_tag
    found = None
    if root is not None and tag is not None and crc32 is not None:
        version = getattr(sys.modules.get(__name__.rpartition(".")[0]), "__version__", "0")
        which = crc32(f"{sys.version}\0{_PACKAGE_DIR}".encode("utf-8", "surrogateescape"))
        found = os.path.join(root, "kept", f"{version}-{tag}-O{sys.flags.optimize}-{which:08x}")
    _kept_dir.append(found)
    return found


def path_of(name: str) -> str | None:
    """Where the kept file ``name`` lives (None: nowhere)."""
    where = kept_dir()
    return None if where is None else os.path.join(where, f"{name}.marshal")


def sound(data: Any, crc: int) -> bool:
    """Whether ``data`` (bytes, or a slice of a mapping) has the CRC its entry recorded."""
    return crc32 is not None and crc32(data) == crc


def read(path: str | None, ident: object) -> tuple[Any, Any] | None:
    """(the index, the blob its spans point into) of a kept file whose ident is ``ident``; None
    when it is missing, made by something else, not this user's own or damaged.

    The blob is a mapping of the file, not a copy: a run touches only the pages of the entries it
    decodes. The files are only ever replaced (``write``), never rewritten in place, so the
    mapping stays valid while it is read."""
    if path is None or crc32 is None or not _trusted_chain(os.path.dirname(path), False):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        import stat

        st = os.fstat(fd)
        if not (stat.S_ISREG(st.st_mode) and mine(st)) or st.st_size < 12:
            return None
        import mmap

        data = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        if data[:4] != _HEAD:
            return None
        crc, size = int.from_bytes(data[4:8], "little"), int.from_bytes(data[8:12], "little")
        head = memoryview(data)[12:12 + size]
        if len(head) != size or crc32(head) != crc:
            return None
        found_ident, index = marshal.loads(head)
    except (OSError, ValueError, EOFError, TypeError):
        return None
    finally:
        os.close(fd)
    if found_ident != ident:
        return None
    return index, memoryview(data)[12 + size:]


def write(path: str | None, ident: object, index: object, parts: list[bytes]) -> bool:
    """Keep (``ident``, ``index``) and the blob ``parts`` make in ``path``, atomically; False when
    it cannot be (no trusted directory, a value marshal cannot keep)."""
    if path is None or crc32 is None:
        return False
    try:
        head = marshal.dumps((ident, index))  # type: ignore[arg-type]  # ValueError for what marshal cannot keep
    except ValueError:
        return False
    return write_bytes(path, b"".join([_HEAD, crc32(head).to_bytes(4, "little"), len(head).to_bytes(4, "little"),
                                        head, *parts]))


_serial = [0]


def write_bytes(path: str, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically (a concurrent reader sees the old file or the new
    one), in a directory made 0700 and owned by this user; False where that is not possible."""
    if not _trusted_chain(os.path.dirname(path), True):
        return False
    _serial[0] += 1
    tmp = f"{path}.{os.getpid()}-{_serial[0]}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
    except (OSError, ValueError):
        return False
    try:
        try:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, 0o600)  # whatever the umask
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


class Kept:
    """A dict of marshal-able values, read on first use and saved at exit when it grew.

    Each value is kept as its own marshal bytes with its CRC and decoded (after the check) when
    asked for: a run decodes only the entries it uses (a one-file check builds a fraction of the
    package's records). ``generator`` names what made the values (e.g. a module's size and mtime):
    a file made by another generator is not read."""

    __slots__ = ("_name", "_ident", "_data", "_grew", "_used", "bytecode")

    # Past this many entries (edits of the package's own code leave old ones behind), a save
    # keeps only those this run asked for.
    LIMIT = 4096

    def __init__(self, name: str, generator: object = None, bytecode: bool = False) -> None:
        self._name = name
        self._ident = (FORMAT, sys.version, magic(), generator)
        self._data: dict[Any, tuple[Any, int]] | None = None  # key -> (marshal bytes, CRC)
        self._grew = False
        self._used: set[Any] = set()
        self.bytecode = bytecode  # code objects: not written under -B / PYTHONDONTWRITEBYTECODE

    @property
    def _path(self) -> str | None:
        return path_of(self._name)

    def _load(self) -> dict[Any, tuple[Any, int]]:
        self._data = {}
        found = read(self._path, self._ident)
        if found is not None:
            index, blob = found
            if type(index) is dict:
                for key, span in index.items():
                    try:
                        start, end, crc = span
                        if 0 <= start <= end <= len(blob):
                            self._data[key] = (blob[start:end], crc)
                    except (TypeError, ValueError):
                        continue
        return self._data

    def get(self, key: Any) -> Any:
        data = self._data if self._data is not None else self._load()
        self._used.add(key)
        entry = data.get(key)
        if entry is None:
            return None
        raw, crc = entry
        if not sound(raw, crc):
            data.pop(key, None)  # damaged: made again, and not kept as it was
            return None
        try:
            return marshal.loads(raw)
        except (ValueError, EOFError, TypeError):
            return None

    def put(self, key: Any, value: Any) -> None:
        data = self._data if self._data is not None else self._load()
        try:
            raw = marshal.dumps(value)
        except ValueError:  # not something marshal keeps: made again next time
            return
        if crc32 is None:
            return
        data[key] = (raw, crc32(raw))
        self._used.add(key)
        if not self._grew:
            self._grew = True
            import atexit

            atexit.register(self.save)

    def save(self) -> None:
        data = self._data
        if not data or (self.bytecode and sys.dont_write_bytecode):
            return
        if len(data) > self.LIMIT:
            data = {k: v for k, v in data.items() if k in self._used}
        index, parts, offset = {}, [], 0
        for key, (raw, crc) in data.items():
            if not sound(raw, crc):
                continue
            index[key] = (offset, offset + len(raw), crc)
            parts.append(bytes(raw))
            offset += len(raw)
        write(self._path, self._ident, index, parts)
