"""Which files a ``kimi-lsp --check PATH...`` run looks at.

Directories are walked skipping VCS metadata, virtualenvs, node_modules, build outputs and
git-ignored paths. ``.gitignore`` files are read and matched here (running ``git`` on a linted
repository could execute its configured hooks, e.g. core.fsmonitor; we never do).
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from kimi_lsp import _regex
from kimi_lsp._record import dataclass

SKIP_DIRS = {
    ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", "build", "dist", ".eggs",
    "site-packages", ".cache", "out"
}
_SHELL_SHEBANG = _regex.compile(rb"^#!\s*\S*(?:/|env\s+)(?:ba|z|k|da)?sh\b")


@dataclass(frozen=True)
class _Pattern:
    base: Path
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def _compile(line: str, base: Path) -> _Pattern | None:
    line = line.rstrip("\n").rstrip("\r")
    if not line.strip() or line.startswith("#"):
        return None
    if line.endswith(" ") and not line.endswith("\\ "):
        line = line.rstrip(" ")
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    if line.startswith("\\"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    anchored = "/" in line
    line = line.lstrip("/")
    rx = ""
    i = 0
    while i < len(line):
        c = line[i]
        if line.startswith("**/", i):
            rx += "(?:.*/)?"
            i += 3
        elif line.startswith("/**", i) and i + 3 == len(line):
            rx += "/.*"
            i += 3
        elif line.startswith("**", i):
            rx += ".*"
            i += 2
        elif c == "*":
            rx += "[^/]*"
            i += 1
        elif c == "?":
            rx += "[^/]"
            i += 1
        elif c == "[":
            j = line.find("]", i + 1)
            if j < 0:
                rx += re.escape(c)
                i += 1
            else:
                body = line[i + 1 : j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                rx += f"[{body}]"
                i = j + 1
        else:
            rx += re.escape(c)
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    return _Pattern(base, re.compile(f"^{prefix}{rx}(?:/.*)?$"), negate, dir_only)


class IgnoreRules:
    """.gitignore semantics, enough for deciding what a linter should skip."""

    def __init__(self) -> None:
        self._by_dir: dict[Path, list[_Pattern]] = {}

    def load_dir(self, d: Path) -> None:
        if d in self._by_dir:
            return
        pats: list[_Pattern] = []
        gi = d / ".gitignore"
        from kimi_lsp.workspace import read_regular

        try:
            data = read_regular(gi, 1_000_000)
        except (OSError, ValueError):
            data = b""  # missing, too large, or not a regular file: no patterns
        if data:
            for line in data.decode("utf-8", "replace").splitlines():
                p = _compile(line, d)
                if p is not None:
                    pats.append(p)
        self._by_dir[d] = pats

    def has_patterns(self, d: Path) -> bool:
        return bool(self._by_dir.get(d))

    def ignored(self, path: Path, is_dir: bool, ancestors: Iterable[Path]) -> bool:
        verdict = False
        for d in ancestors:
            for p in self._by_dir.get(d, ()):
                if p.dir_only and not is_dir:
                    # a dir-only pattern still matches files below a matching directory
                    try:
                        rel = path.relative_to(d).as_posix()
                    except ValueError:
                        continue
                    parent_rel = rel.rsplit("/", 1)[0] if "/" in rel else None
                    if parent_rel is None or not p.regex.match(parent_rel):
                        continue
                    verdict = not p.negate
                    continue
                try:
                    rel = path.relative_to(d).as_posix()
                except ValueError:
                    continue
                if p.regex.match(rel):
                    verdict = not p.negate
        return verdict


LAUNCH_SUFFIXES = {".yaml", ".yml", ".toml", ".sh", ".bash", ".zsh", ".ksh", ".sbatch", ".slurm", ".pbs"}


def looks_like_launch_candidate(path: Path) -> bool:
    """Whether the file's name alone says it may hold a launch (a read failure of such a file
    is reported; other files are only read when their content names sglang)."""
    if path.suffix.lower() in LAUNCH_SUFFIXES:
        return True
    low = path.name.lower()
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


def is_candidate(path: Path) -> bool:
    """Files that may hold a launch (cheap test on the name; shebang for extension-less files)."""
    suffix = path.suffix.lower()
    if looks_like_launch_candidate(path) or suffix in DOC_SUFFIXES or suffix in CODE_SUFFIXES:
        return True
    if path.suffix == "" and not path.name.startswith("."):
        from kimi_lsp.workspace import read_head

        head = read_head(path, 64)  # regular files only: a FIFO or a device must not block the walk
        return head is not None and bool(_SHELL_SHEBANG.match(head))
    return False


def walk(root: Path, repo_root: Path | None = None) -> Iterator[Path]:
    """Candidate launch files under ``root`` (sorted, deterministic)."""
    rules = IgnoreRules()
    top = repo_root if repo_root is not None and (root == repo_root or repo_root in root.parents) else root
    # .gitignore files between the repository root and the walked directory apply too
    chain = [top] + [p for p in reversed(root.parents) if top in p.parents] + ([root] if root != top else [])
    for d in chain:
        rules.load_dir(d)
    seen: set[tuple[int, int]] = set()
    # Per directory, only its ancestors that hold .gitignore patterns (usually one or two): the
    # walk then costs the same per directory at any depth, instead of a scan of every ancestor
    # per entry (cubic in depth before).
    base = tuple(a for a in chain if rules.has_patterns(a))
    stack: list[tuple[str, tuple[Path, ...]]] = [(str(root), base)]
    while stack:  # iterative: a tree thousands of levels deep must not exhaust the recursion limit
        dirpath, inherited = stack.pop()
        listed = _list_dir(dirpath)
        if listed is None:
            continue
        ident, dirnames, filenames = listed
        if ident in seen:  # the same directory again (a bind mount or the walk's own root link)
            continue
        seen.add(ident)
        d = Path(dirpath)
        rules.load_dir(d)
        ancestors = (*inherited, d) if rules.has_patterns(d) and d not in inherited else inherited
        keep: list[str] = []
        for name in dirnames:
            sub = d / name
            if name in SKIP_DIRS or name.endswith(".egg-info"):
                continue
            if os.path.lexists(os.path.join(dirpath, name, "pyvenv.cfg")):
                continue  # a virtualenv under any name
            if ancestors and rules.ignored(sub, True, ancestors):
                continue
            keep.append(os.path.join(dirpath, name))
        for name in filenames:
            f = d / name
            if ancestors and rules.ignored(f, False, ancestors):
                continue
            if f.is_symlink() and not f.exists():
                continue
            if is_candidate(f):
                yield f
        stack.extend((sub, ancestors) for sub in reversed(keep))


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
