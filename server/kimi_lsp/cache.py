"""The ``--check`` result cache: a repeated run over unchanged files answers without linting.

Pre-commit and editors' save hooks run ``kimi-lsp --check`` on the same files again and again.
Like pre-commit's and pip's caches, this one lives in the user's cache directory
(``$KIMI_LSP_CACHE_DIR``, else ``$XDG_CACHE_HOME/kimi-lsp``, else ``~/.cache/kimi-lsp``), never in
the linted repository, and an entry is keyed by everything its result depends on:

- the run: the resolved files checked (a run of explicit files only; a directory walk is not
  cached, because a new file anywhere in the tree would change it), the working directory, the
  command-line settings, the environment variables lint reads (``HOME``, ``HF_*``,
  ``XDG_CACHE_HOME``, ``KIMI_LSP_*``), the Python version and the installed kimi-lsp, PyYAML and
  packaging files (size and mtime of every file of theirs but bytecode: the modules and every
  data file, ``knowledge/data/*.tsv`` as much as ``*.json``);
- the files: every path the run read, probed or listed (the launch files, pin files, ``--config``
  files, settings, model ``config.json``s) is recorded while it lints (``workspace.touched``) with
  its ``stat``; a path that was missing records its nearest existing directory, whose mtime
  changes when an entry is added, so a pin file created next to a launch invalidates the entry as
  surely as an edit to the lockfile does. ``.git`` is recorded as present or absent only: git's
  own writes do not invalidate anything.

An entry is written only after a clean run (no internal errors, one process) and only when none
of the recorded paths changed in the two seconds before the run began, so that an edit racing the
lint (or a filesystem with coarse timestamps) cannot pin a stale answer (git's "racy clean"
problem). Any doubt is a miss: an unreadable, corrupt or foreign entry is ignored and replaced.

The directory may be shared or planted (a ``KIMI_LSP_CACHE_DIR`` on a shared runner, in /tmp):
the cache is used only when the directory and its ``results-v<N>`` are real directories (no
links) of this (effective) user that nobody else can write, else the run goes uncached, without
an error. Every file is created with ``O_EXCL|O_NOFOLLOW`` (``CACHEDIR.TAG`` too), mode 0600
whatever the umask; entries are read with ``O_NOFOLLOW`` and only when this user's own; pruning
unlinks only this user's regular ``<hex>.bin`` files, through a descriptor of the directory it
checked, never through a link.

``--no-cache`` or ``KIMI_LSP_NO_CACHE=1`` turn it off. This module imports only the standard
library's cheapest parts: a hit loads no engine, rules, schema, YAML or pin readers.
"""
from __future__ import annotations

import marshal
import os
import sys

from kimi_lsp import _kept

TYPE_CHECKING = False  # typing itself is not imported: see _record.py
if TYPE_CHECKING:
    from typing import Any

FORMAT = 2
MAX_ENTRIES = 2048
RACY_SECONDS = 2.0
_ENV_PREFIXES = ("HF_", "HUGGINGFACE_", "XDG_CACHE_HOME", "KIMI_LSP_", "HOME")
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by kimi-lsp.\n"

Sig = tuple[int, int, int, int, int] | None


_STAT, _EXISTS, _LSTAT = 0, 1, 2


def _lsig(path: str) -> Sig:
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_mode)


def _now(kind: int, path: str) -> Any:
    if kind == _STAT:
        return signature(path)
    if kind == _EXISTS:
        return os.path.exists(path)
    if kind == _LSTAT:
        return _lsig(path)
    raise ValueError(kind)


def _link_components(path: str, checked: set[str]) -> list[str]:
    """Every symbolic link among ``path`` and its parent directories (as written); ``checked``
    holds the components already examined (shared parents are looked at once per run)."""
    out = []
    cur = path
    while cur not in checked:
        checked.add(cur)
        try:
            if os.path.islink(cur):
                out.append(cur)
        except (OSError, ValueError):
            pass
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    return out


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _trusted(st: os.stat_result) -> bool:
    """An entry this user wrote, that nobody else can have rewritten."""
    import stat as _stat

    return _stat.S_ISREG(st.st_mode) and _kept.mine(st)


def enabled(no_cache: bool = False) -> bool:
    return not no_cache and os.environ.get("KIMI_LSP_NO_CACHE", "") in ("", "0")


def signature(path: str) -> Sig:
    """What says a file (or directory listing) changed: mtime, ctime, size, inode, mode; None when
    it does not exist. The language server uses it too, for pin files no watcher reports."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_mode)


def _tree_sig(top: str) -> list[tuple[str, int, int]]:
    """Every file under ``top`` but bytecode (the modules and every data file: a schema update
    that ships only ``knowledge/data/sglang-schemas.tsv`` is a new key), with its stat. A
    package that is no directory (a zipapp) is the archive's own stat."""
    out: list[tuple[str, int, int]] = []
    if not os.path.isdir(top):
        archive = top
        while archive and not os.path.isfile(archive) and os.path.dirname(archive) != archive:
            archive = os.path.dirname(archive)
        try:
            st = os.stat(archive)
            return [(archive, st.st_mtime_ns, st.st_size)]
        except (OSError, ValueError):
            return out
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if not name.endswith((".pyc", ".pyo")):
                p = os.path.join(dirpath, name)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                out.append((p, st.st_mtime_ns, st.st_size))
    return out


def _installed() -> list[Any]:
    """What the code that answers is: kimi-lsp's files and the parsers it relies on."""
    here = os.path.dirname(os.path.abspath(__file__))
    sigs: list[Any] = [sys.version, _tree_sig(here)]
    for mod in ("yaml", "packaging"):
        spec = _find_spec(mod)
        origin = spec.origin if spec is not None else None
        sigs.append(_tree_sig(os.path.dirname(origin)) if origin else None)
    return sigs


def _find_spec(name: str) -> Any:
    """Where the top-level module ``name`` would be imported from, without importing it:
    ``importlib.util.find_spec`` asks the same finders, but importing importlib.util (and
    contextlib with it) is a tenth of a cache hit."""
    mod = sys.modules.get(name)
    if mod is not None:
        return getattr(mod, "__spec__", None)
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find(name, None) if find is not None else None
        if spec is not None:
            return spec
    return None


def directory() -> str | None:
    """Where entries live; None when there is no home to put them in (the directory the kept
    start-up files live under too: ``_kept.cache_root``)."""
    return _kept.cache_root()


class Cache:
    """The cache for one run of ``--check`` over ``files`` (resolved paths) from ``cwd``."""

    def __init__(self, directory: str, key: bytes, files: frozenset[str] = frozenset()) -> None:
        self.directory = directory
        self.key = key
        self.files = files  # the files named on the command line: each must be a dependency
        import zlib  # here: a shared library to load, which a --no-cache run never needs

        self.entry_path = os.path.join(directory, f"results-v{FORMAT}", f"{zlib.crc32(key):08x}{zlib.adler32(key):08x}.bin")
        self._safe: bool | None = None  # whether the directories are this user's alone (_usable)

    def _usable(self, create: bool) -> bool:
        """The cache directory and its ``results-v<N>`` are real directories (no links) of this
        user that nobody else can write (made 0700 when ``create``); else no cache at all."""
        if not self._safe:
            self._safe = _kept.secure_dir(self.directory, create, not _kept.named_by_user()) and _kept.secure_dir(
                os.path.dirname(self.entry_path), create)
        return self._safe

    @classmethod
    def for_run(cls, files: list[str], cwd: str, settings: dict[str, Any]) -> Cache | None:
        """None when nothing may be cached: no files, or nowhere to keep the cache."""
        where = directory()
        if not files or where is None:
            return None
        env = sorted((k, v) for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES))
        key = marshal.dumps((FORMAT, tuple(files), cwd, sorted(settings.items()), env, _installed()))
        return cls(where, key, frozenset(files))

    # -- reading ---------------------------------------------------------------------------
    def load(self) -> Any | None:
        """The stored result when every recorded path is as it was, else None. Any doubt is a
        miss: an entry not owned by this user or writable by others (a shared cache directory
        must not be able to force a result), one whose dependency list is empty or lacks a file
        the run names, or one of an unexpected shape."""
        if not self._usable(False):
            return None
        try:
            fd = os.open(self.entry_path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
        except (OSError, ValueError):
            return None
        try:
            st = os.fstat(fd)
            if not _trusted(st):
                return None
            with os.fdopen(fd, "rb") as fh:
                fd = -1
                stored = marshal.load(fh)
            key, deps, result = stored
        except (OSError, EOFError, ValueError, TypeError):
            return None
        finally:
            if fd >= 0:
                os.close(fd)
        if key != self.key:
            return None  # another run's entry under the same short name
        try:
            if not deps or not self.files <= {path for kind, path, _sig in deps if kind == _STAT}:
                return None
            for kind, path, sig in deps:
                if _now(kind, path) != sig:
                    return None
        except (TypeError, ValueError, AttributeError):
            return None
        return result

    # -- writing ---------------------------------------------------------------------------
    def prepare(self) -> None:
        """Create the cache directory before the run, so that its creation (which changes its
        parent's mtime, e.g. ~/.cache's) cannot look like a change to what the run read."""
        if not self._usable(True):
            return  # no cache directory of this user's own: same answers, nothing kept (store then fails)
        tag = os.path.join(self.directory, "CACHEDIR.TAG")  # backup tools skip the directory
        if not os.path.lexists(tag):
            _create(tag, _TAG.encode())

    def store(self, touched: tuple[set[str], set[str]], result: Any, started: float) -> bool:
        """Write the entry; False when it is not safe or not possible to.

        ``touched``: (paths whose content or listing the run used, paths it only tested for
        existence). A missing path also records its directory, whose mtime changes when the
        path appears."""
        used, probed = touched
        deps: list[tuple[int, str, Any]] = []
        newest = (started - _racy_seconds()) * 1e9
        pending = sorted(used | set(self.files))
        seen: set[str] = set()
        links: set[str] = set()
        checked: set[str] = set()  # directories already examined for links
        while pending:
            p = pending.pop()
            if p in seen:
                continue
            seen.add(p)
            links.update(_link_components(p, checked))
            sig = signature(p)
            if sig is None:
                parent = os.path.dirname(p)
                if parent != p:
                    pending.append(parent)
            elif sig[0] >= newest or sig[1] >= newest:
                return False  # changed just before or during the run: maybe not what was linted
            deps.append((_STAT, p, sig))
        # a link on the way to anything read is a dependency too: re-pointing it changes the answer
        deps.extend((_LSTAT, p, _lsig(p)) for p in sorted(links))
        deps.extend((_EXISTS, p, os.path.exists(p)) for p in sorted(probed - seen))
        if not any(kind == _STAT for kind, _p, _s in deps):
            return False
        try:
            data = marshal.dumps((self.key, deps, result))
        except ValueError:
            return False  # a diagnostic carried data marshal cannot hold
        if not self._usable(True):
            return False
        target = self.entry_path
        tmp = f"{target}.{os.getpid()}.tmp"
        if not _create(tmp, data):
            return False
        try:
            os.replace(tmp, target)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return False
        self._prune()
        return True

    def _prune(self) -> None:
        """Past MAX_ENTRIES, unlink the oldest entries: only this user's regular files named as
        entries are named, found and unlinked through a descriptor of the checked directory (a
        link put in its place is never followed)."""
        folder = os.path.dirname(self.entry_path)
        if not (self._usable(False) and os.scandir in os.supports_fd and os.unlink in os.supports_dir_fd):
            return  # (no descriptor-relative calls here: entries are never pruned)
        try:
            dfd = os.open(folder, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            return
        try:
            import stat as _stat

            st = os.fstat(dfd)
            if not (_stat.S_ISDIR(st.st_mode) and _kept.mine(st)):
                return
            entries = []
            with os.scandir(dfd) as it:
                for e in it:
                    if _is_entry_name(e.name):
                        st = e.stat(follow_symlinks=False)
                        if _trusted(st):
                            entries.append((st.st_mtime_ns, e.name))
            if len(entries) <= MAX_ENTRIES:
                return
            entries.sort()
            for _mtime, name in entries[: len(entries) - MAX_ENTRIES]:
                os.unlink(name, dir_fd=dfd)
        except OSError:
            pass
        finally:
            os.close(dfd)


def _is_entry_name(name: str) -> bool:
    """``<16 hex digits>.bin``: the only names ``store`` gives entries."""
    head, dot, ext = name.partition(".")
    return dot == "." and ext == "bin" and len(head) == 16 and all(c in "0123456789abcdef" for c in head)


def _create(path: str, data: bytes) -> bool:
    """Create ``path`` (never an existing file, never through a link) holding ``data``, mode 0600
    whatever the umask; False when it cannot be."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    except (OSError, ValueError):
        return False
    try:
        try:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, 0o600)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        return True
    except OSError:
        try:
            os.unlink(path)
        except OSError:
            pass
        return False


def _racy_seconds() -> float:
    """RACY_SECONDS; ``KIMI_LSP_CACHE_RACY_SECONDS`` lowers it for tests on freshly copied files."""
    try:
        return max(0.0, float(os.environ.get("KIMI_LSP_CACHE_RACY_SECONDS", RACY_SECONDS)))
    except ValueError:
        return RACY_SECONDS
