"""Which files a ``kimi-lsp --check PATH...`` run looks at.

Directories are walked skipping VCS metadata, virtualenvs, node_modules, build outputs and
git-ignored paths. ``.gitignore`` files are read and matched here (running ``git`` on a linted
repository could execute its configured hooks, e.g. core.fsmonitor; we never do).

The matching follows git's (dir.c and wildmatch.c) without regular expressions: a committed
pattern is untrusted input, and a backtracking regex turns a 20-byte line such as
``*a*a*a*a*a*a*a*a*a*b`` into exponential time. A pattern is split at its slashes into segments;
one segment is matched against one file name by the two-pointer glob algorithm (at most
len(segment) x len(name) steps), and the segments against the path's components by a set of
positions carried down the walk (an NFA: ``**`` segments are the only ones that branch). Each
directory hands its children the positions its own name reached, so no entry ever re-reads its
ancestors' names: the walk costs the same per entry at any depth.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from kimi_lsp import _regex

SKIP_DIRS = {
    ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", "build", "dist", ".eggs",
    "site-packages", ".cache", "out"
}
_SHELL_SHEBANG = _regex.compile(rb"^#!\s*\S*(?:/|env\s+)(?:ba|z|k|da)?sh\b")
_GITIGNORE_LIMIT = 1_000_000


# -- one glob segment against one name --------------------------------------------------------

class _Star:
    """``*`` (any run of characters within one name)."""

    __slots__ = ()


class _Any:
    """``?`` (one character)."""

    __slots__ = ()


class _Globstar:
    """A whole ``**`` segment: any number of directories (one or more when it ends the pattern)."""

    __slots__ = ()


class _Slash:
    """A segment separator while tokenising."""

    __slots__ = ()


STAR, ANY, GLOBSTAR, SLASH = _Star(), _Any(), _Globstar(), _Slash()

# wildmatch.c's [:name:] classes; git's ctype is ASCII-only
_POSIX: dict[str, frozenset[str]] = {
    "alnum": frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    "alpha": frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    "blank": frozenset(" \t"),
    "cntrl": frozenset([chr(i) for i in range(32)] + ["\x7f"]),
    "digit": frozenset("0123456789"),
    "graph": frozenset(chr(i) for i in range(33, 127)),
    "lower": frozenset("abcdefghijklmnopqrstuvwxyz"),
    "print": frozenset(chr(i) for i in range(32, 127)),
    "punct": frozenset(c for c in map(chr, range(33, 127)) if not c.isalnum()),
    "space": frozenset(" \t\n\r\v\f"),
    "upper": frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    "xdigit": frozenset("0123456789ABCDEFabcdef"),
}


class _Class:
    """``[...]``: members, ranges and named classes; ``[!...]``/``[^...]`` negated."""

    __slots__ = ("negated", "chars", "ranges")

    def __init__(self, negated: bool, chars: frozenset[str], ranges: tuple[tuple[str, str], ...]) -> None:
        self.negated = negated
        self.chars = chars
        self.ranges = ranges

    def has(self, c: str) -> bool:
        hit = c in self.chars or any(lo <= c <= hi for lo, hi in self.ranges)
        return hit != self.negated


_Token = str | _Star | _Any | _Class  # str: one literal character
_Segment = str | tuple[_Token, ...] | _Globstar  # str: a literal name (no wildcard)


def _parse_class(p: str, i: int) -> tuple[_Class, int] | None:
    """The class opening at ``p[i] == "["`` and the index after it, as wildmatch.c reads it
    (``]`` first is a member; ``a-z``; ``\\`` escapes; ``[:alpha:]``); None when it never closes
    or names an unknown class (git then matches nothing)."""
    n = len(p)
    j = i + 1
    negated = j < n and p[j] in "!^"
    if negated:
        j += 1
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    prev: str | None = None
    first = True
    while True:
        if j >= n:
            return None
        ch = p[j]
        if ch == "]" and not first:
            return _Class(negated, frozenset(chars), tuple(ranges)), j + 1
        first = False
        if ch == "\\":
            j += 1
            if j >= n:
                return None
            chars.add(p[j])
            prev = p[j]
        elif ch == "-" and prev is not None and j + 1 < n and p[j + 1] != "]":
            j += 1
            hi = p[j]
            if hi == "\\":
                j += 1
                if j >= n:
                    return None
                hi = p[j]
            ranges.append((prev, hi))
            prev = None
        elif ch == "[" and j + 1 < n and p[j + 1] == ":":
            k = p.find("]", j + 2)
            if k < 0:
                return None
            if k - (j + 2) - 1 < 0 or p[k - 1] != ":":
                chars.add("[")  # no ":]": an ordinary "[" member
                prev = "["
            else:
                members = _POSIX.get(p[j + 2 : k - 1])
                if members is None:
                    return None
                chars.update(members)
                prev = None
                j = k
        else:
            chars.add(ch)
            prev = ch
        j += 1


def _tokens(p: str) -> list[_Token | _Globstar | _Slash] | None:
    """``p`` as tokens; None when git would match it against nothing (an unclosed class, a
    trailing backslash). A run of stars is ``**`` (GLOBSTAR) only as a whole segment."""
    out: list[_Token | _Globstar | _Slash] = []
    n = len(p)
    i = 0
    while i < n:
        c = p[i]
        if c == "\\":
            if i + 1 >= n:
                return None
            out.append(SLASH if p[i + 1] == "/" else p[i + 1])
            i += 2
        elif c == "*":
            j = i
            while j < n and p[j] == "*":
                j += 1
            whole = (i == 0 or p[i - 1] == "/") and (j == n or p[j] == "/" or p.startswith("\\/", j))
            out.append(GLOBSTAR if j - i >= 2 and whole else STAR)
            i = j
        elif c == "?":
            out.append(ANY)
            i += 1
        elif c == "[":
            parsed = _parse_class(p, i)
            if parsed is None:
                return None
            out.append(parsed[0])
            i = parsed[1]
        elif c == "/":
            out.append(SLASH)
            i += 1
        else:
            out.append(c)
            i += 1
    return out


def _segment(toks: Sequence[_Token | _Globstar], whole: bool) -> _Segment:
    """One segment's tokens as a literal name, a token tuple, or (``whole``: a path segment that
    is only stars) GLOBSTAR; a name-only pattern's ``**`` is a plain ``*``."""
    if whole and len(toks) == 1 and toks[0] is GLOBSTAR:
        return GLOBSTAR
    plain: list[_Token] = [STAR if t is GLOBSTAR else t for t in toks]  # type: ignore[misc]
    if all(isinstance(t, str) for t in plain):
        return "".join(plain)  # type: ignore[arg-type]
    return tuple(plain)


def glob_match(toks: Sequence[_Token], name: str) -> bool:
    """Whether ``name`` matches the tokens: the two-pointer algorithm (on a mismatch, only the
    last ``*`` seen takes one more character), so at most len(toks) x len(name) steps, never
    the exponential backtracking of a regex."""
    global steps
    n = 0
    p = i = 0
    star_p = -1
    star_i = 0
    np, ni = len(toks), len(name)
    while i < ni:
        n += 1
        if p < np:
            t = toks[p]
            if t is STAR:
                star_p, star_i = p, i
                p += 1
                continue
            if t is ANY or (t == name[i] if isinstance(t, str) else isinstance(t, _Class) and t.has(name[i])):
                p += 1
                i += 1
                continue
        if star_p < 0:
            steps += n
            return False
        p = star_p + 1
        star_i += 1
        i = star_i
    steps += n
    while p < np and toks[p] is STAR:
        p += 1
    return p == np


steps = 0  # glob_match's character steps, for the tests' complexity checks


def _seg_match(seg: _Segment, name: str) -> bool:
    if isinstance(seg, str):
        return seg == name
    return glob_match(seg, name)  # type: ignore[arg-type]  # (GLOBSTAR is handled by the caller)


# -- one .gitignore line ------------------------------------------------------------------------

_States = frozenset[int]
_NONE: _States = frozenset()


class IgnorePattern:
    """One ``.gitignore`` line. ``base_name`` (a line without a slash) matches an entry's own
    name at any depth below the file's directory; otherwise ``segments`` match the path from
    that directory, component by component."""

    __slots__ = ("negate", "dir_only", "base_name", "segments", "_start")

    def __init__(self, negate: bool, dir_only: bool, base_name: _Segment | None, segments: tuple[_Segment, ...]) -> None:
        self.negate = negate
        self.dir_only = dir_only
        self.base_name = base_name
        self.segments = segments
        self._start = self._closure({0}) if base_name is None else _NONE

    def start(self) -> _States:
        """The positions before any component (at the ``.gitignore``'s directory)."""
        return self._start

    def _closure(self, states: set[int]) -> _States:
        # a "**" that does not end the pattern may stand for no directory at all
        segs = self.segments
        last = len(segs) - 1
        todo = list(states)
        while todo:
            i = todo.pop()
            if i < last and segs[i] is GLOBSTAR and i + 1 not in states:
                states.add(i + 1)
                todo.append(i + 1)
        return frozenset(states)

    def step(self, states: _States, name: str) -> _States:
        """The positions after one more path component ``name``."""
        segs = self.segments
        end = len(segs)
        out: set[int] = set()
        for i in states:
            if i == end:
                continue  # matched already: what lies below is decided by the directory's verdict
            seg = segs[i]
            if seg is GLOBSTAR:
                out.add(i)
                out.add(i + 1)
            elif _seg_match(seg, name):
                out.add(i + 1)
        return self._closure(out) if out else _NONE

    def accepts(self, states: _States) -> bool:
        return len(self.segments) in states

    def matches_name(self, name: str) -> bool:
        return self.base_name is not None and _seg_match(self.base_name, name)

    def matches(self, rel: str, is_dir: bool) -> bool:
        """Whether this line matches the path ``rel`` (relative to its ``.gitignore``'s directory,
        "/"-separated) itself; a path below a matched directory is the walk's business."""
        if self.dir_only and not is_dir:
            return False
        parts = rel.split("/")
        if self.base_name is not None:
            return self.matches_name(parts[-1])
        states = self._start
        for part in parts:
            states = self.step(states, part)
            if not states:
                return False
        return self.accepts(states)


def compile_line(line: str) -> IgnorePattern | None:
    """One ``.gitignore`` line as git parses it (dir.c): None for a blank line, a comment, or a
    pattern that can match nothing."""
    line = line[:-1] if line.endswith("\r") else line
    if not line or line.startswith("#"):
        return None
    line = _trim_trailing_spaces(line)
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    dir_only = line.endswith("/")
    if dir_only:
        line = line[:-1]  # one slash, as git strips
    if not line:
        return None
    if "/" not in line:
        toks = _tokens(line)
        if toks is None:
            return None
        return IgnorePattern(negate, dir_only, _segment(toks, False), ())  # type: ignore[arg-type]  # no SLASH in it
    toks = _tokens(_prefix_stars(line[1:] if line.startswith("/") else line))
    if toks is None:
        return None
    segments: list[_Segment] = []
    cur: list[_Token | _Globstar] = []
    for t in toks:
        if t is SLASH:
            segments.append(_segment(cur, True))
            cur = []
        else:
            cur.append(t)  # type: ignore[arg-type]
    segments.append(_segment(cur, True))
    return IgnorePattern(negate, dir_only, None, tuple(segments))


def _prefix_stars(line: str) -> str:
    """git's reading of a path pattern whose first wildcard is a run of stars right after a
    literal prefix, as in ``a**/c``: dir.c compares the prefix itself and hands wildmatch the
    rest, which then starts with ``**/`` and so crosses directories (``a**/c`` matches
    ``ax/y/c``). Spelled in segments: ``a*/**/c``; at the end of the line, ``a*``."""
    n = len(line)
    i = 0
    while i < n and line[i] not in "*?[\\":
        i += 1
    j = i
    while j < n and line[j] == "*":
        j += 1
    if j - i < 2 or i == 0 or line[i - 1] == "/" or (j < n and line[j] != "/"):
        return line
    return line[:i] + ("*" if j == n else "*/**" + line[j:])


def _trim_trailing_spaces(line: str) -> str:
    """Trailing spaces go unless escaped with a backslash (dir.c's trim_trailing_spaces)."""
    last_space = -1
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if c == " ":
            if last_space < 0:
                last_space = i
        elif c == "\\":
            i += 1
            if i >= n:
                return line
            last_space = -1
        else:
            last_space = -1
        i += 1
    return line[:last_space] if last_space >= 0 else line


def parse_gitignore(text: str) -> tuple[IgnorePattern, ...]:
    """A ``.gitignore`` file's patterns in order (lines end at "\\n" only, as git splits them;
    a byte-order mark is skipped)."""
    text = text[1:] if text.startswith("\ufeff") else text
    return tuple(p for p in map(compile_line, text.split("\n")) if p is not None)


# -- the rules in force at one directory --------------------------------------------------------

# The .gitignore files in force for a directory's entries, outermost first: each file's patterns
# and, per pattern, the positions the directory's path (from that file's directory) reached
# (unused for name-only patterns).
_Group = tuple[tuple[IgnorePattern, ...], tuple[_States, ...]]


class IgnoreRules:
    """.gitignore files read once per directory (a missing, unreadable, too large or irregular one
    holds no patterns)."""

    def __init__(self) -> None:
        self._by_dir: dict[str, tuple[IgnorePattern, ...]] = {}

    def load_dir(self, d: str) -> tuple[IgnorePattern, ...]:
        hit = self._by_dir.get(d)
        if hit is None:
            from kimi_lsp.workspace import read_regular

            try:
                data = read_regular(os.path.join(d, ".gitignore"), _GITIGNORE_LIMIT)
            except (OSError, ValueError):
                data = b""  # missing, too large, or not a regular file: no patterns
            hit = self._by_dir[d] = parse_gitignore(data.decode("utf-8", "replace")) if data else ()
        return hit


def _enter(groups: tuple[_Group, ...], name: str) -> tuple[_Group, ...]:
    """The groups in force below directory ``name`` (positions advanced by it); a file whose
    path patterns can no longer match anything there, and that has no name-only pattern, drops."""
    out: list[_Group] = []
    for pats, states in groups:
        advanced = tuple(s if p.base_name is not None else p.step(s, name) for p, s in zip(pats, states))
        if any(p.base_name is not None or s for p, s in zip(pats, advanced)):
            out.append((pats, advanced))
    return tuple(out)


def _with_file(groups: tuple[_Group, ...], pats: tuple[IgnorePattern, ...]) -> tuple[_Group, ...]:
    return (*groups, (pats, tuple(p.start() for p in pats))) if pats else groups


def _ignored(groups: tuple[_Group, ...], name: str, is_dir: bool) -> bool:
    """git's verdict for entry ``name`` of the directory ``groups`` belong to: the last matching
    line wins, a deeper .gitignore over a shallower one."""
    for pats, states in reversed(groups):
        for k in range(len(pats) - 1, -1, -1):
            p = pats[k]
            if p.dir_only and not is_dir:
                continue
            if p.base_name is not None:
                hit = _seg_match(p.base_name, name)
            else:
                s = states[k]
                hit = bool(s) and p.accepts(p.step(s, name))
            if hit:
                return not p.negate
    return False


# -- file kinds ---------------------------------------------------------------------------------

LAUNCH_SUFFIXES = {".yaml", ".yml", ".toml", ".sh", ".bash", ".zsh", ".ksh", ".sbatch", ".slurm", ".pbs"}


def looks_like_launch_candidate(path: Path) -> bool:
    """Whether the file's name alone says it may hold a launch (a read failure of such a file
    is reported; other files are only read when their content names sglang)."""
    return _launch_name(path.name, path.suffix)


def _launch_name(name: str, suffix: str) -> bool:
    if suffix.lower() in LAUNCH_SUFFIXES:
        return True
    low = name.lower()
    return low.startswith(("dockerfile", "containerfile")) or low.endswith(".dockerfile")


# Documentation: launches in its code blocks. Not "launch candidates" by name: a Markdown file
# that cannot be read (binary, too large) is nobody's broken launch.
DOC_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".rst"})
# Notebooks and Python: launches in code, read only when the text names sglang (the reader's
# first test, a substring search, before anything is parsed). Not launch candidates by name
# either: an unreadable .py is nobody's broken launch.
NOTEBOOK_SUFFIXES = frozenset({".ipynb"})
PYTHON_SUFFIXES = frozenset({".py", ".pyw"})
CODE_SUFFIXES = NOTEBOOK_SUFFIXES | PYTHON_SUFFIXES
# systemd units (ExecStart=), text files of commands, VS Code debug configurations: read only when
# the text names an sglang launch; not candidates by name (an unreadable notes.txt is no launch)
SERVICE_SUFFIXES = frozenset({".service"})
TEXT_SUFFIXES = frozenset({".txt"})
VSCODE_LAUNCH = "launch.json"
MAKE_SUFFIXES = frozenset({".mk"})
MAKE_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})
OTHER_SUFFIXES = SERVICE_SUFFIXES | TEXT_SUFFIXES | MAKE_SUFFIXES
# `.txt` files that are pin files by name (pins/discovery.py reads them)
_PIN_TEXT_NAMES = ("requirements", "constraint")


def is_candidate(path: Path) -> bool:
    """Files that may hold a launch (cheap test on the name; shebang for extension-less files)."""
    return _candidate(os.fspath(path), path.name, path.suffix)


def _candidate(full: str, name: str, suffix: str) -> bool:
    low = suffix.lower()
    if low in TEXT_SUFFIXES and name.lower().startswith(_PIN_TEXT_NAMES):
        return False  # requirements*.txt, constraints*.txt: pin files, read as pins, never launches
    if _launch_name(name, suffix) or low in DOC_SUFFIXES or low in CODE_SUFFIXES or low in OTHER_SUFFIXES:
        return True
    if name == VSCODE_LAUNCH or name in MAKE_NAMES:
        return True
    if suffix == "" and not name.startswith("."):
        from kimi_lsp.workspace import read_head

        head = read_head(full, 64)  # regular files only: a FIFO or a device must not block the walk
        return head is not None and bool(_SHELL_SHEBANG.match(head))
    return False


def _suffix(name: str) -> str:
    """``PurePath(name).suffix`` without making a path."""
    i = name.rfind(".")
    return name[i:] if 0 < i < len(name) - 1 else ""


# -- the walk -----------------------------------------------------------------------------------

def _below(top: str, root: str) -> list[str] | None:
    """The names leading from directory ``top`` down to ``root`` ([] when they are the same);
    None when ``root`` is not below ``top``. (Strings: Path.relative_to and ``in parents``
    cost a path object per ancestor on Python 3.12+, quadratic in depth.)"""
    if root == top:
        return []
    head = top if top.endswith("/") else top + "/"
    if not root.startswith(head):
        return None
    return [c for c in root[len(head):].split("/") if c]


def _groups_at(rules: IgnoreRules, top: str, down: Sequence[str]) -> tuple[_Group, ...] | None:
    """The groups in force for the entries of ``top``/``down``...; None when a directory on the
    way is ignored (which hides everything below it: git never looks inside)."""
    groups = _with_file((), rules.load_dir(top))
    at = top
    for name in down:
        if groups and _ignored(groups, name, True):
            return None
        at = os.path.join(at, name)
        groups = _with_file(_enter(groups, name), rules.load_dir(at))
    return groups


def is_ignored(top: str, rel: str, is_dir: bool, rules: IgnoreRules | None = None) -> bool:
    """Whether the .gitignore files from directory ``top`` down ignore ``rel`` ("/"-separated,
    relative to ``top``), itself or by a directory above it: ``git check-ignore --no-index``'s
    answer, without running git."""
    parts = [c for c in rel.split("/") if c]
    if not parts:
        return False
    groups = _groups_at(rules or IgnoreRules(), top, parts[:-1])
    return groups is None or _ignored(groups, parts[-1], is_dir)


def walk(root: Path, repo_root: Path | None = None) -> Iterator[Path]:
    """Candidate launch files under ``root`` (sorted, deterministic)."""
    rules = IgnoreRules()
    root_s = os.fspath(root)
    top = os.fspath(repo_root) if repo_root is not None else root_s
    down = _below(top, root_s)
    if down is None:
        top, down = root_s, []
    # .gitignore files between the repository root and the walked directory apply too
    groups = _groups_at(rules, top, down)
    if groups is None:
        return
    seen: set[tuple[int, int]] = set()
    # Each directory carries the groups in force for its entries: no entry looks at its
    # ancestors again, so the walk costs the same per entry at any depth.
    stack: list[tuple[str, tuple[_Group, ...]]] = [(root_s, groups)]
    while stack:  # iterative: a tree thousands of levels deep must not exhaust the recursion limit
        dirpath, groups = stack.pop()
        listed = _list_dir(dirpath)
        if listed is None:
            continue
        ident, dirnames, filenames = listed
        if ident in seen:  # the same directory again (a bind mount or the walk's own root link)
            continue
        seen.add(ident)
        keep: list[tuple[str, tuple[_Group, ...]]] = []
        for name in dirnames:
            if name in SKIP_DIRS or name.endswith(".egg-info"):
                continue
            sub = os.path.join(dirpath, name)
            if os.path.lexists(os.path.join(sub, "pyvenv.cfg")):
                continue  # a virtualenv under any name
            if groups and _ignored(groups, name, True):
                continue
            keep.append((sub, _with_file(_enter(groups, name), rules.load_dir(sub))))
        for name in filenames:
            if groups and _ignored(groups, name, False):
                continue
            full = os.path.join(dirpath, name)
            if os.path.islink(full) and not os.path.exists(full):
                continue  # dangling, or a loop
            if _candidate(full, name, _suffix(name)):
                yield Path(full)
        stack.extend(reversed(keep))


def _list_dir(dirpath: str) -> tuple[tuple[int, int], list[str], list[str]] | None:
    """(device and inode, sorted subdirectories to descend, sorted other entries) as
    ``os.walk(followlinks=False)`` would split them; None when the directory cannot be listed."""
    dirs: list[str] = []
    files: list[str] = []
    try:
        st = os.stat(dirpath)
        with os.scandir(dirpath) as it:
            for e in it:
                try:
                    is_dir = e.is_dir()
                except OSError:
                    is_dir = False
                if not is_dir:
                    files.append(e.name)
                elif not e.is_symlink():
                    dirs.append(e.name)  # a link to a directory is neither walked nor linted
    except OSError:
        return None
    return (st.st_dev, st.st_ino), sorted(dirs), sorted(files)


# -- repository text a reader may look through (release evidence, images built here) ------------
# The kinds of file whose text can name a release or build an image: read by the bounded
# repository walks of evidence.py and surfaces/built_images.py.
_TEXT_SUFFIXES = frozenset({
    ".yaml", ".yml", ".toml", ".json", ".sh", ".bash", ".zsh", ".env", ".md", ".mdx", ".rst", ".txt",
    ".py", ".ipynb", ".cfg", ".ini", ".conf", ".lock", ".in", ".dockerfile", ".tpl", ".sbatch", ".slurm",
})
_TEXT_NAMES = frozenset({"dockerfile", "containerfile", "makefile", "pipfile", "justfile"})


def is_text_name(name: str) -> bool:
    """Whether a file of this name is text a repository walk reads (by its name alone)."""
    low = name.lower()
    if low in _TEXT_NAMES or low.startswith(("dockerfile", "containerfile")) or low.startswith("requirements"):
        return True
    dot = low.rfind(".")
    return dot > 0 and low[dot:] in _TEXT_SUFFIXES


class TextWalk:
    """The text files (``is_text_name``) under a repository root, depth-first in name order, for the
    bounded repository reads (release evidence, images built here). Hidden directories are left
    out but CI definitions, and so are SKIP_DIRS, ``*.egg-info`` and virtual environments. Every
    directory listed is ``touched`` (the result cache must see a file added there), and so is every
    file yielded. ``complete`` is False once a bound stopped the walk."""

    _CI_DIRS = (".github", ".gitlab", ".circleci", ".buildkite")

    def __init__(self, root: Path, max_entries: int, max_files: int) -> None:
        self.root = root
        self.max_entries = max_entries
        self.max_files = max_files
        self.complete = True

    def __iter__(self) -> Iterator[Path]:
        from kimi_lsp.workspace import touched

        seen = files = 0
        stack = [str(self.root)]
        while stack:
            d = stack.pop()
            try:
                with os.scandir(d) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                continue
            touched(d)
            for e in entries:
                seen += 1
                if seen > self.max_entries:
                    self.complete = False
                    return
                try:
                    if e.is_dir(follow_symlinks=False):
                        if e.name in self._CI_DIRS or (
                                e.name not in SKIP_DIRS and not e.name.endswith(".egg-info") and not e.name.startswith(".")
                                and not os.path.lexists(os.path.join(e.path, "pyvenv.cfg"))):
                            stack.append(e.path)
                        continue
                    if not e.is_file(follow_symlinks=False) or not is_text_name(e.name):
                        continue
                except OSError:
                    continue
                files += 1
                if files > self.max_files:
                    self.complete = False
                    return
                touched(e.path)
                yield Path(e.path)

