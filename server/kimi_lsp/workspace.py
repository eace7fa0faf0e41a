"""Reading files for the engine: decoding, limits, editor overlays, one read per run.

The CLI and the language server both hand the engine a ``Workspace``. The server adds overlays
(unsaved editor buffers) so that a pin file open in the editor is read from the buffer. Every
failure to read becomes a ``ReadFailure`` with a reason, never an exception.
"""
from __future__ import annotations

import codecs
import errno
import os
import stat
import sys
from functools import cached_property
from pathlib import Path
from types import MappingProxyType

from kimi_lsp._record import dataclass
from kimi_lsp.text import LineIndex

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import TypeVar

    _T = TypeVar("_T")

# Launch files and pin files are small; anything bigger is skipped with a diagnostic.
MAX_FILE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class SourceText:
    path: Path
    text: str  # decoded, BOM removed, newlines untouched
    encoding: str = "utf-8"
    bom: bool = False

    @cached_property
    def lines(self) -> LineIndex:
        return LineIndex(self.text)

    @property
    def newline(self) -> str:
        """The file's dominant line ending, for edits that insert lines."""
        crlf = self.text.count("\r\n")
        lf = self.text.count("\n") - crlf
        return "\r\n" if crlf > lf else "\n"


@dataclass(frozen=True, slots=True)
class ReadFailure:
    path: Path
    reason: str  # one line, user-facing
    # line/column (0-based) of the first undecodable byte, when that is the reason
    line: int = 0
    column: int = 0
    # The bytes decoded with replacement characters, when they were read but could not be
    # decoded (None: never read, e.g. permission denied): whether such a file is a launch at all
    # is decided on it (surfaces.detect.unreadable_severity).
    lossy: str | None = None


def decode_bytes(path: Path, data: bytes) -> SourceText | ReadFailure:
    if data.startswith(codecs.BOM_UTF8):
        body, enc, bom = data[len(codecs.BOM_UTF8) :], "utf-8", True
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return SourceText(path, data.decode("utf-16"), "utf-16", True)
        except UnicodeDecodeError as exc:
            return ReadFailure(path, f"invalid UTF-16: {exc.reason}", lossy=data.decode("utf-16", "replace"))
    else:
        body, enc, bom = data, "utf-8", False
    if b"\x00" in body[:8192]:
        return ReadFailure(path, "binary file (contains NUL bytes)", lossy=body.decode("utf-8", "replace"))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = body[: exc.start]
        line = prefix.count(b"\n")
        col = len(prefix[prefix.rfind(b"\n") + 1 :].decode("utf-8", "replace"))
        return ReadFailure(
            path, f"not valid UTF-8 (byte 0x{body[exc.start]:02x} at offset {exc.start})", line, col,
            body.decode("utf-8", "replace"),
        )
    return SourceText(path, text, enc, bom)


# Every path a lint reads, probes or lists, while a ``--check`` run records them for its result
# cache (kimi_lsp/cache.py); None otherwise. Readers that go around the Workspace call ``touched``
# (content or listing matters) or ``probed`` (only whether it exists matters, e.g. ``.git``).
_touched: set[str] | None = None
_probed: set[str] | None = None


def record_touched() -> None:
    global _touched, _probed
    _touched, _probed = set(), set()


def take_touched() -> tuple[set[str], set[str]]:
    """(paths whose content or listing was used, paths only tested for existence)."""
    global _touched, _probed
    out = (_touched or set(), (_probed or set()) - (_touched or set()))
    _touched = _probed = None
    return out


def touched(path: object) -> None:
    if _touched is not None:
        _touched.add(str(path))


def probed(path: object) -> None:
    if _probed is not None:
        _probed.add(str(path))


@dataclass(frozen=True, slots=True)
class Resolutions:
    """Realpaths one workspace worked out (``Workspace.resolutions``): directories' as strings,
    files' as the ``Path`` its ``resolve`` returned."""

    dirs: dict[str, str]
    files: dict[str, Path]


class Workspace:
    """File access for one lint run (CLI) or one server session (LSP).

    ``root`` is the directory paths are reported relative to and the outer bound of pin discovery
    when no ``.git`` is found above a file.
    """

    # A stable workspace belongs to one CLI lint, during which nothing on disk is taken to change
    # (its reads are cached already): existence checks and per-directory answers (the pin
    # projects of a directory, its settings file) are then remembered in ``memo`` too, until
    # ``invalidate`` or an overlay change. The server's workspaces are never stable.
    stable = False

    def __init__(self, root: Path | None = None, overlays: dict[Path, str] | None = None, *, stable: bool = False) -> None:
        self.root = (root or Path.cwd()).resolve()
        self.stable = stable
        self.memo: dict[object, object] = {}
        self._overlays: dict[Path, str] = {}
        self._cache: dict[Path, SourceText | ReadFailure | None] = {}
        self._roots: dict[Path, tuple[Path | None, tuple[str, ...]]] = {}
        self._real_dirs: dict[str, str] = {}  # directory -> its realpath
        self._real_files: dict[str, Path] = {}  # path -> resolve(path), in a stable workspace
        self._listings: dict[str, Mapping[str, os.DirEntry[str]] | None] = {}  # dir -> entries, when stable
        for p, t in (overlays or {}).items():
            self.set_overlay(p, t)

    # -- overlays (editor buffers) -------------------------------------------------------
    def set_overlay(self, path: Path, text: str) -> None:
        path = normalize_path(path)
        self._overlays[path] = text
        self._cache.pop(path, None)
        self.memo.clear()

    def drop_overlay(self, path: Path) -> None:
        path = normalize_path(path)
        self._overlays.pop(path, None)
        self._cache.pop(path, None)
        self.memo.clear()

    def overlay(self, path: Path) -> str | None:
        """The editor's unsaved text of ``path``, if it has one."""
        return self._overlays.get(normalize_path(path))

    def invalidate(self, path: Path | None = None) -> None:
        # the repositories' release evidence (evidence.py): only the changed file is read again
        indexes = self.__dict__.get("_kimi_lsp_repo_index")
        if indexes:
            if path is None:
                indexes.clear()
            else:
                changed = normalize_path(path)
                for index in indexes.values():
                    if index.root in changed.parents:
                        index.forget(changed)
        self._roots.clear()  # a new or removed .git anywhere: cheap to recompute
        self._real_dirs.clear()
        self._real_files.clear()
        self._listings.clear()
        self.memo.clear()
        if path is None:
            self._cache.clear()
        else:
            self._cache.pop(normalize_path(path), None)

    # -- reading ---------------------------------------------------------------------------
    def exists(self, path: Path) -> bool:
        path = normalize_path(path)
        if _touched is not None:
            _touched.add(str(path))
        if self.stable:
            return path in self._overlays or self._listed_file(str(path))
        return path in self._overlays or path.is_file()

    def file_in(self, d: Path, name: str) -> Path | None:
        """``d / name`` when ``exists`` says it is a file, else None: the same answer (and the
        same path recorded as touched), without a Path made for a name that is not there when a
        listing answers (a stable workspace)."""
        if not self.stable or self._overlays:
            p = d / name
            return p if self.exists(p) else None
        s = str(normalize_path(d))
        full = s + "/" + name if s != "/" else "/" + name
        if _touched is not None:
            _touched.add(full)
        return Path(full) if self._listed_file(full) else None

    def _listed_entry(self, s: str) -> tuple[bool, os.DirEntry[str] | None]:
        """Whether the listing of the directory of ``s`` (absolute and normal) answers for it, and
        its entry there (None: no such name). A lint probes the same few names (settings files,
        ``.git``, pin files) in every directory it meets, and one listing answers them all. It
        does not answer where it cannot be made, nor for a name it lacks where names may match in
        another case: the filesystem is asked then."""
        parent, _, name = s.rpartition("/")
        entries = self.listing(parent or "/")
        if entries is None or (_FOLDS_CASE and name not in entries):
            return False, None
        return True, entries.get(name)

    def _listed_file(self, s: str) -> bool:
        """``Path(s).is_file()`` (``s`` absolute and normal), from ``_listed_entry``."""
        return self._listed_is(s, want_dir=False)

    def _listed_is(self, s: str, *, want_dir: bool) -> bool:
        """``os.path.isdir(s)`` or ``isfile``, from ``_listed_entry`` (both follow a link)."""
        known, entry = self._listed_entry(s)
        if not known:
            return os.path.isdir(s) if want_dir else os.path.isfile(s)
        try:
            return entry is not None and (entry.is_dir() if want_dir else entry.is_file())
        except OSError:
            return False

    def _listed_exists(self, s: str) -> bool:
        """``os.path.exists(s)``, from ``_listed_entry``."""
        known, entry = self._listed_entry(s)
        if not known:
            return os.path.exists(s)
        return entry is not None and (not entry.is_symlink() or os.path.exists(s))

    def is_dir(self, path: Path) -> bool:
        """``path.is_dir()``; in a stable workspace from ``_listed_entry``."""
        s = str(path)
        if not self.stable or s[:1] != "/" or s.rpartition("/")[2] in ("", ".", ".."):
            return path.is_dir()  # the root, a path not absolute, or not normal
        return self._listed_is(s, want_dir=True)

    def listing(self, d: str) -> Mapping[str, os.DirEntry[str]] | None:
        """The entries of directory ``d`` (absolute, normal) by name: ``ABSENT`` (empty) when
        there is no such directory, None when it cannot be listed. A stable workspace lists
        each directory once (nothing is taken to change during one CLI lint); another lists it
        on every call."""
        if not self.stable:
            return _list_dir(d)
        try:
            return self._listings[d]
        except KeyError:
            found = self._listings[d] = ABSENT if self._known_absent(d) else _list_dir(d)
            return found

    def _known_absent(self, d: str) -> bool:
        """Whether a listing already made shows that directory ``d`` is not there (an ancestor's
        listing lacks the next name, or has it as something other than a directory): a model's
        ``config.json`` is looked for under every launch directory, and most of those paths do
        not exist. Only listings at hand are read; never a new one."""
        listings = self._listings
        below: list[str] = []
        cur = d
        while True:
            parent, _, name = cur.rpartition("/")
            if name in ("", ".", ".."):
                return False
            below.append(name)
            up = listings.get(parent or "/", _NOT_LISTED)
            if up is not _NOT_LISTED:
                break
            cur = parent
        if up is None:
            return False  # not listable: what is below is unknown
        if up is ABSENT:
            return True
        entry = up.get(below[-1])  # the component just below that listing
        if entry is None:
            return not _FOLDS_CASE
        try:
            return not entry.is_dir()  # a file, or a link to nothing or to a file
        except OSError:
            return False

    def read(self, path: Path) -> SourceText | ReadFailure:
        """Decoded text of ``path``; cached until ``invalidate``."""
        path = normalize_path(path)
        if _touched is not None:
            _touched.add(str(path))
        hit = self._cache.get(path)
        if hit is not None:
            return hit
        if path in self._overlays:
            result: SourceText | ReadFailure = SourceText(path, self._overlays[path])
        else:
            result = _read_disk(path)
        self._cache[path] = result
        return result

    def resolve(self, path: Path) -> Path:
        """``path.resolve()`` (absolute, symlinks resolved), with each directory's resolution
        remembered until ``invalidate``: a file that is not itself a link then costs one lstat
        instead of one per path component. A link loop raises as ``Path.resolve`` does."""
        s = os.fspath(path)
        if (
            not s.startswith("/") or "//" in s or "/./" in s or "/../" in s
            or s.endswith(("/", "/.", "/.."))
        ):
            # relative, or with `.`/`..` components (`link/..` is the link target's parent:
            # only realpath knows), or anything else pathlib would normalise: the general way
            return resolve_path(Path(s) if s.startswith("/") else Path.cwd() / s)
        if self.stable:  # one CLI lint asks again for each file (collecting, indexing, linting)
            hit = self._real_files.get(s)
            if hit is None:
                hit = self._real_files[s] = self._resolve_file(s)
            return hit
        return self._resolve_file(s)

    def resolve_mode(self, path: Path | str) -> tuple[Path, int | None]:
        """``resolve(path)`` and the mode ``os.stat`` gives for it (None: missing, or cannot be
        asked). One ``lstat`` answers both when the file itself is not a link (the command line
        asks this of every file it is given, as the string it was given: a path that needs no
        normalising becomes a Path only once, resolved)."""
        s = os.fspath(path)
        if s.startswith("/") and not ("//" in s or "/./" in s or "/../" in s or s.endswith(("/", "/.", "/.."))):
            parent, _, name = s.rpartition("/")
            real_parent = self._real_dir(parent)
            candidate = real_parent + "/" + name if real_parent != "/" else "/" + name
            try:
                st = os.lstat(candidate)
            except (OSError, ValueError):
                st = None
            if st is not None and not stat.S_ISLNK(st.st_mode):
                return Path(candidate), st.st_mode
        real = self.resolve(path if isinstance(path, Path) else Path(path))
        try:
            return real, os.stat(real).st_mode
        except (OSError, ValueError):
            return real, None

    def resolutions(self, files: Iterable[Path] = ()) -> Resolutions:
        """What this workspace has resolved (each directory's realpath) and ``files``, answers
        of its ``resolve``, for another workspace of the same tree to start from (``adopt``):
        the engine's, linting what the command line's workspace collected."""
        return Resolutions(dict(self._real_dirs), {str(f): f for f in files})

    def adopt(self, known: Resolutions) -> None:
        """Start from another workspace's ``resolutions`` (taken within the same CLI run)."""
        self._real_dirs.update(known.dirs)
        if self.stable:
            self._real_files.update(known.files)

    def _resolve_file(self, s: str) -> Path:
        parent, _, name = s.rpartition("/")
        candidate = self._real_child(self._real_dir(parent), name)
        return resolve_path(Path(s)) if candidate is None else Path(candidate)

    def _real_dir(self, d: str) -> str:
        """``realpath`` of the absolute, normal directory ``d`` ("" is the root), each directory's
        answer remembered: a directory below a resolved one costs one lstat of its own. (A loop
        up to the nearest known directory, then down: a tree may be deeper than Python's stack.)"""
        real_dirs = self._real_dirs
        below: list[str] = []
        cur = d
        while cur not in real_dirs:
            if not cur:
                real_dirs[""] = "/"
                break
            below.append(cur)
            cur = cur.rpartition("/")[0]
        real = real_dirs[cur]
        for c in reversed(below):
            child = self._real_child(real, c.rpartition("/")[2])
            # a link: Path.resolve follows it (and raises on a loop, as the caller expects)
            real = real_dirs[c] = str(resolve_path(Path(c))) if child is None else child
        return real

    @staticmethod
    def _real_child(real_parent: str, name: str) -> str | None:
        """``real_parent/name`` when that is not a symbolic link (or does not exist: realpath then
        keeps the name as written); None for a link, which only realpath can follow."""
        candidate = real_parent + "/" + name if real_parent != "/" else "/" + name
        try:
            if stat.S_ISLNK(os.lstat(candidate).st_mode):
                return None
        except (OSError, ValueError):
            pass  # missing: resolve() (non-strict) keeps the name as written
        return candidate

    def repo_root(self, start: Path, fallback: Path | None = None) -> Path:
        """``find_repo_root``, remembered per directory until ``invalidate`` (a lint asks for
        the repository of every launch file, and of the pins beside it)."""
        # (``remembered``, written out without its closure: asked for every launch and pin file)
        key = ("dir-of", start)
        known = self.memo.get(key) if self.stable else None
        if isinstance(known, Path):
            cur = known
        else:
            cur = start if self.is_dir(start) else start.parent
            if self.stable:
                self.memo[key] = cur
        hit = self._roots.get(cur)
        if hit is None:
            hit = self._find_repo(cur)
        elif _probed is not None:
            _probed.update(hit[1])
        if _touched is not None:
            _touched.add(str(start))
        if hit[0] is not None:
            return hit[0]
        return fallback if fallback is not None else Path(cur.anchor)

    def _find_repo(self, cur: Path) -> tuple[Path | None, tuple[str, ...]]:
        """``_find_repo``, from the remembered answer of the nearest directory above (each new
        directory costs one probe, not one per level up to the repository; a loop, not
        recursion: a tree may be deeper than Python's stack)."""
        below: list[tuple[Path, str]] = []
        d = cur
        while True:
            known = self._roots.get(d)
            if known is not None:
                if _probed is not None:
                    _probed.update(known[1])
                break
            git = d / ".git"
            probed(git)
            if self._listed_exists(str(git)) if self.stable else git.exists():
                known = self._roots[d] = (d, (str(git),))
                break
            below.append((d, str(git)))
            if d.parent == d:
                known = (None, ())  # above the root: nothing found, nothing probed
                break
            d = d.parent
        found, probes = known
        for d, git_path in reversed(below):
            probes = (git_path, *probes)
            self._roots[d] = (found, probes)
        return self._roots[cur]

    def remembered(self, key: tuple[object, ...], make: Callable[[], _T]) -> _T:
        """``make()``; in a stable workspace (one CLI lint) once per ``key``, kept in ``memo``."""
        if not self.stable:
            return make()
        memo = self.memo
        if key not in memo:
            memo[key] = make()
        return memo[key]  # type: ignore[return-value]  # what make() returned for this key

    def text(self, path: Path) -> str | None:
        r = self.read(path)
        return r.text if isinstance(r, SourceText) else None


# Whether the filesystem may hold a name in another case (macOS, Windows): a listing that lacks
# a name then does not prove the file missing.
_FOLDS_CASE = sys.platform in ("darwin", "win32", "cygwin")


# The listing of a directory that does not exist (or is a file): nothing is in it. (Read-only:
# one object shared by every such directory.)
ABSENT: Mapping[str, os.DirEntry[str]] = MappingProxyType({})
_NOT_LISTED: Mapping[str, os.DirEntry[str]] = MappingProxyType({})  # (a marker: no listing made yet)


def _list_dir(d: str) -> Mapping[str, os.DirEntry[str]] | None:
    try:
        with os.scandir(d) as it:
            return {e.name: e for e in it}
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT
    except (OSError, ValueError):  # e.g. permission denied: what is inside is unknown
        return None


def _read_disk(path: Path) -> SourceText | ReadFailure:
    try:
        data = read_regular(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        return ReadFailure(path, "file not found")
    except PermissionError:
        return ReadFailure(path, "permission denied")
    except NotRegularFile:
        return ReadFailure(path, "not a regular file")
    except FileTooLarge as exc:
        return ReadFailure(
            path, f"file too large to lint ({exc.size // (1024 * 1024)} MiB > {MAX_FILE_BYTES // (1024 * 1024)} MiB)"
        )
    except OSError as exc:
        return ReadFailure(path, f"cannot read file: {exc.strerror or exc}")
    except ValueError:  # a NUL in the path
        return ReadFailure(path, "file not found")
    return decode_bytes(path, data)


class NotRegularFile(OSError):
    """A FIFO, socket, device or directory where a file was expected."""


class FileTooLarge(OSError):
    def __init__(self, size: int) -> None:
        super().__init__(f"{size} bytes")
        self.size = size


# O_NONBLOCK: opening a FIFO without a writer (or a tty) returns at once instead of waiting;
# O_NOCTTY: a terminal device never becomes the controlling terminal. The type is then checked on
# the open descriptor, so a file swapped for a device between a check and the open is refused too.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


def read_regular(path: Path | str, limit: int) -> bytes:
    """The bytes of ``path`` when it is (or links to) a regular file of at most ``limit`` bytes.
    Never blocks on a FIFO, device or terminal: those raise ``NotRegularFile`` before a read."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(f"{path}: not a regular file")
        if st.st_size > limit:
            raise FileTooLarge(st.st_size)
        # One read of the size fstat gave (plus one byte, to see the end): a buffer of that size,
        # not of 1 MiB, which malloc would map and unmap for every file. A regular file reads
        # short only at its end, so fewer bytes than asked for, as many as fstat said, is all of it.
        want = min(st.st_size + 1, limit + 1)
        first = os.read(fd, want)
        if len(first) < want and len(first) == st.st_size:
            return first
        chunks: list[bytes] = [first] if first else []
        total = len(first)
        if total > limit:
            raise FileTooLarge(total)
        while first:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew while being read
                raise FileTooLarge(total)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_head(path: Path | str, n: int) -> bytes | None:
    """The first ``n`` bytes of a regular file; None for anything else or on any error."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, n)
    except OSError:
        return None
    finally:
        os.close(fd)


_NORMAL: set[str] = set()  # path strings already known to be absolute and normal


def resolve_path(path: Path) -> Path:
    """``path.resolve()`` that raises RuntimeError on a symbolic-link loop on every Python, as
    3.10-3.12 do: 3.13's returns the looping path instead, and callers read a loop as an
    unreadable path only when told (one more stat: ELOOP is the loop's only sign)."""
    real = path.resolve()
    try:
        os.stat(real)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RuntimeError(f"Symlink loop from {str(real)!r}") from None
    return real


def is_below(path: Path, ancestor: Path) -> bool:
    """``ancestor in path.parents``, by comparing the strings: ``parents`` makes a path object per
    ancestor (Python 3.12+ formats each one's string), so the test inside a walk up a deep tree
    cost the square of its depth. Paths that are not absolute and plain ask pathlib."""
    p, a = os.fspath(path), os.fspath(ancestor)
    if p[:1] != "/" or a[:1] != "/" or p.startswith("//") or a.startswith("//"):
        return ancestor in path.parents
    return p != a and p.startswith(a if a.endswith("/") else a + "/")


def normalize_path(path: Path) -> Path:
    """Absolute and normalised, without resolving links (the key for caches and overlays)."""
    if isinstance(path, Path):
        s = str(path)
        if s in _NORMAL:
            return path  # already absolute and normal: no new Path (hot: called per read)
        if s[:1] == "/" and os.path.normpath(s) == s:
            if len(_NORMAL) > 100_000:
                _NORMAL.clear()
            _NORMAL.add(s)
            return path
    p = Path(path)
    if not p.is_absolute():
        p = Path.cwd() / p
    return Path(os.path.normpath(p))


def find_repo_root(start: Path, fallback: Path | None = None) -> Path:
    """The nearest directory at or above ``start`` holding ``.git``; else ``fallback`` or ``/``."""
    touched(start)
    cur = start if start.is_dir() else start.parent
    found, _probes = _find_repo(cur)
    if found is not None:
        return found
    return fallback if fallback is not None else Path(cur.anchor)


def _find_repo(cur: Path) -> tuple[Path | None, tuple[str, ...]]:
    probes: list[str] = []
    for d in (cur, *cur.parents):
        git = d / ".git"
        probes.append(str(git))
        probed(git)
        if git.exists():
            return d, tuple(probes)
    return None, tuple(probes)
