"""Which pin files govern a launch file (lockfiles.md §3).

Walk from the launch file's directory up to the repository root; every directory holding a pin
file is a ``Project``. Inside a project the locks come first, the primary lock (the one the
manifest's tool writes) at their head, then the manifests. A uv workspace member without a lock
of its own is governed by the workspace root's ``uv.lock``.

Everything is cached on the ``Workspace`` object so that linting 10,000 launch files reads and
parses each pin file once. Cached results are checked against ``Workspace.read``'s own cache by
identity, so an editor overlay or ``Workspace.invalidate`` makes the next lookup re-read the file.
"""
from __future__ import annotations

import os
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from kimi_lsp import _regex
from kimi_lsp._record import dataclass, field
from kimi_lsp.pins.model import LOCK_FORMATS, PinFormat, PinProblem, PinSource
from kimi_lsp.text import Span
from kimi_lsp.workspace import ReadFailure, SourceText, Workspace, is_below, touched
from kimi_lsp.workspace import normalize_path as _norm

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

# File names and globs of pin files, relative to a project directory. ``pylock.*.toml`` is
# narrowed by ``pin_format`` to PEP 751's ``pylock.<name>.toml`` (one dot-free name).
PIN_FILE_PATTERNS: tuple[str, ...] = (
    "requirements*.txt",
    "requirements*.in",
    "requirements/*.txt",
    "requirements/*.in",
    "constraints*.txt",
    "pyproject.toml",
    "uv.lock",
    "poetry.lock",
    "pdm.lock",
    "Pipfile",
    "Pipfile.lock",
    "pylock.toml",
    "pylock.*.toml",
    "environment.yml",
    "environment.yaml",
    "conda-lock.yml",
    "conda-lock.yaml",
    "*.conda-lock.yml",
    "*.conda-lock.yaml",
)

_EXACT = {
    "pyproject.toml": PinFormat.PYPROJECT,
    "uv.lock": PinFormat.UV_LOCK,
    "poetry.lock": PinFormat.POETRY_LOCK,
    "pdm.lock": PinFormat.PDM_LOCK,
    "Pipfile": PinFormat.PIPFILE,
    "Pipfile.lock": PinFormat.PIPFILE_LOCK,
    "environment.yml": PinFormat.ENVIRONMENT_YML,
    "environment.yaml": PinFormat.ENVIRONMENT_YML,
    "conda-lock.yml": PinFormat.CONDA_LOCK,
    "conda-lock.yaml": PinFormat.CONDA_LOCK,
}
_PYLOCK_RE = _regex.compile(r"^pylock(?:\.[^.]+)?\.toml$")
_REQ_SUFFIXES = (".txt", ".in")

# Order of manifests inside a project, and of locks after the primary one.
_MANIFEST_RANK = {PinFormat.PYPROJECT: 0, PinFormat.PIPFILE: 1, PinFormat.ENVIRONMENT_YML: 2, PinFormat.REQUIREMENTS: 3, PinFormat.CONSTRAINTS: 4}
_LOCK_RANK = {PinFormat.UV_LOCK: 1, PinFormat.POETRY_LOCK: 2, PinFormat.PDM_LOCK: 3, PinFormat.PIPFILE_LOCK: 4, PinFormat.CONDA_LOCK: 5, PinFormat.PYLOCK: 6}
# The lock each manifest tool writes (PinSource.tool of the manifest -> lock format).
_TOOL_LOCK = {"uv": PinFormat.UV_LOCK, "poetry": PinFormat.POETRY_LOCK, "pdm": PinFormat.PDM_LOCK, "pipenv": PinFormat.PIPFILE_LOCK, "conda": PinFormat.CONDA_LOCK}


def pin_format(path: Path) -> PinFormat | None:
    """The ``PinSource.format`` a pin file of this name has; None when it is no pin file."""
    return name_format(path.name, path.parent.name == "requirements")


def name_format(name: str, in_requirements_dir: bool) -> PinFormat | None:
    """``pin_format`` from the file's name and whether its directory is named ``requirements``
    (no Path to make for each entry of a directory listing)."""
    if name in _EXACT:
        return _EXACT[name]
    if _PYLOCK_RE.match(name):
        return PinFormat.PYLOCK
    if name.endswith((".conda-lock.yml", ".conda-lock.yaml")):
        return PinFormat.CONDA_LOCK
    lower = name.lower()
    # the requirements reader also calls any "constraint*" file a constraints file
    if lower.startswith("constraint") and lower.endswith(".txt"):
        return PinFormat.CONSTRAINTS
    if lower.startswith("requirements") and lower.endswith(_REQ_SUFFIXES):
        return PinFormat.REQUIREMENTS
    if in_requirements_dir and lower.endswith(_REQ_SUFFIXES):
        return PinFormat.REQUIREMENTS
    return None


@dataclass(frozen=True)
class Project:
    dir: Path
    locks: tuple[PinSource, ...]  # e.g. uv.lock; the primary lock first
    manifests: tuple[PinSource, ...]  # pyproject, requirements*, Pipfile, environment.yml, constraints (+ includes)


@dataclass(frozen=True)
class Governing:
    own: tuple[PinSource, ...]  # the launch file's own pins (Dockerfile / shell pip install), highest priority
    projects: tuple[Project, ...]  # nearest first, from the launch file's dir up to repo_root inclusive
    searched: tuple[Path, ...]  # directories searched, for "no pin found" messages


# -- cache ---------------------------------------------------------------------------------


@dataclass
class _Cache:
    # (path, reader kind) -> (identity of every file the result was read from, result)
    files: dict[tuple[Path, str], tuple[tuple[tuple[Path, object], ...], tuple[PinSource, ...]]] = field(
        default_factory=dict
    )
    # dir -> (mtime_ns of the dir and of its requirements/ folder, pin files in it)
    dirs: dict[Path, tuple[tuple[int, int], tuple[Path, ...]]] = field(default_factory=dict)
    # pyproject path -> (identity of its text, [tool.uv.workspace] (members, exclude) or None)
    uv_workspaces: dict[Path, tuple[object, tuple[tuple[str, ...], tuple[str, ...]] | None]] = field(
        default_factory=dict
    )


_CACHE_ATTR = "_kimi_lsp_pin_cache"


def _cache(workspace: Workspace) -> _Cache:
    cache = getattr(workspace, _CACHE_ATTR, None)
    if cache is None:
        cache = _Cache()
        setattr(workspace, _CACHE_ATTR, cache)
    return cache


def clear_cache(workspace: Workspace) -> None:
    """Forget every pin file and directory listing this workspace has cached."""
    if hasattr(workspace, _CACHE_ATTR):
        delattr(workspace, _CACHE_ATTR)


# -- reading one pin file ------------------------------------------------------------------------


def read_pin_file(path: Path, workspace: Workspace, fmt: PinFormat | None = None) -> tuple[PinSource, ...]:
    """The pins of one pin file, plus the files it pulls in (``-r``/``-c``, conda ``pip: -r``,
    setuptools dynamic dependency files), each its own PinSource, the file itself first.
    ``fmt`` forces a format for a file whose name says none (default: from the name)."""
    path = _norm(path)
    fmt = pin_format(path) or fmt
    if fmt is None:
        return ()
    return _cached(workspace, path, fmt, fmt, lambda src: _dispatch(fmt, src, workspace))


def _cached(workspace: Workspace, path: Path, kind: str, fmt: PinFormat | None, read: Any) -> tuple[PinSource, ...]:
    """``kind``: the cache key; ``fmt``: the format an unreadable file is reported with (None:
    nothing to report, the caller reports it)."""
    cache = _cache(workspace)
    hit = cache.files.get((path, kind))
    if hit is not None and all(workspace.read(p) is obj for p, obj in hit[0]):
        return hit[1]
    src = workspace.read(path)
    if isinstance(src, ReadFailure):
        result: tuple[PinSource, ...] = (_unreadable(src, fmt),) if fmt is not None else ()
    else:
        result = read(src)
    # Every file the result came from, and every include it names (read or not): a change to any
    # of them, or one appearing, re-reads the tree.
    touched: dict[Path, None] = {path: None}
    for s in result:
        touched[_norm(s.path)] = None
        for inc in s.includes:
            touched[_norm(inc)] = None
    cache.files[(path, kind)] = (tuple((p, workspace.read(p)) for p in touched), result)
    return result


def _unreadable(failure: ReadFailure, fmt: PinFormat) -> PinSource:
    return PinSource(
        failure.path, fmt, fmt in LOCK_FORMATS, (), problems=(PinProblem(f"{failure.path.name}: {failure.reason}", Span(0, 0)),)
    )


def _dispatch(fmt: PinFormat, src: SourceText, workspace: Workspace) -> tuple[PinSource, ...]:
    # The manifest readers are imported here, not at module level, so that discovery (and the
    # lock readers) import on their own.
    if fmt in LOCK_FORMATS:
        from kimi_lsp.pins.locks import read_lock

        return (read_lock(src, fmt),)
    if fmt in (PinFormat.REQUIREMENTS, PinFormat.CONSTRAINTS):
        from kimi_lsp.pins.requirements import read_requirements_tree

        return read_requirements_tree(src, workspace)
    if fmt is PinFormat.PYPROJECT:
        from kimi_lsp.pins.pyproject import read_pyproject

        project = read_pyproject(src, workspace)
        return (project, *_included_requirements(project, workspace))
    if fmt is PinFormat.PIPFILE:
        from kimi_lsp.pins.pipfile import read_pipfile

        return (read_pipfile(src, workspace),)
    if fmt is PinFormat.ENVIRONMENT_YML:
        from kimi_lsp.pins import conda_env

        return conda_env.read_conda_env_tree(src, workspace)
    return ()


def _included_requirements(source: PinSource, workspace: Workspace) -> tuple[PinSource, ...]:
    """A pyproject's ``[tool.setuptools.dynamic]`` dependency files, read as requirements."""
    if not source.includes:
        return ()
    from kimi_lsp.pins.requirements import read_include, read_requirements_tree, unreadable_include

    out: list[PinSource] = []
    for inc in source.includes:
        got = read_include(workspace, inc)
        if isinstance(got, SourceText):
            out.extend(read_requirements_tree(got, workspace))
            continue
        # what the file would add is unknown: never "no pin" (fail closed, as for a -r)
        own = workspace.read(source.path)
        if isinstance(own, SourceText):
            at = max(0, own.text.find(inc.name))
            out.append(unreadable_include(inc, False, got.reason, own, at, inc.name, directive=f'file = "{inc.name}"'))
        else:
            out.append(_unreadable(got, PinFormat.REQUIREMENTS))
    return tuple(out)


def _own_pins(path: Path, kind: str, workspace: Workspace) -> tuple[PinSource, ...]:
    if isinstance(workspace.read(path), ReadFailure):
        return ()  # the engine reports an unreadable launch file itself

    def read(src: SourceText) -> tuple[PinSource, ...]:
        from kimi_lsp.pins import install_cmds

        tree = getattr(install_cmds, "read_install_tree", None)
        if tree is not None:
            return tuple(tree(src, kind, workspace))
        return (install_cmds.read_install_pins(src, kind),)

    return _cached(workspace, path, f"own:{kind}", None, read)  # an unreadable launch file: the engine says so


# -- directories and projects --------------------------------------------------------------------


def _mtime(path: Path) -> int:
    touched(path)
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


def _dir_pin_files(d: Path, workspace: Workspace) -> tuple[Path, ...]:
    """Pin files directly in ``d`` and in ``d/requirements/``, sorted by name. A directory's
    mtime changes when an entry is added or removed, so the listing stays current."""
    if workspace.stable:
        return _listed_pin_files(d, workspace)
    cache = _cache(workspace)
    req_dir = d / "requirements"
    stamp = (_mtime(d), _mtime(req_dir))
    hit = cache.dirs.get(d)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    found: list[Path] = []
    for folder in (d, req_dir):
        try:
            with os.scandir(folder) as it:
                found.extend(_pin_files_among(folder, it))
        except OSError:
            continue
    result = tuple(found)
    cache.dirs[d] = (stamp, result)
    return result


def _listed_pin_files(d: Path, workspace: Workspace) -> tuple[Path, ...]:
    """``_dir_pin_files`` in a stable workspace (one CLI lint, during which nothing is taken to
    change): from the workspace's listings, ``requirements/`` only when ``d`` has one."""
    req_dir = d / "requirements"
    touched(d)  # what a cached run's result depends on: entries added or removed here
    touched(req_dir)
    found: list[Path] = []
    entries = workspace.listing(str(d))
    if entries is not None:
        found.extend(_pin_files_among(d, entries.values()))
    # (a directory that cannot be listed may still be passed through: look inside anyway)
    sub = None if entries is None else entries.get("requirements")
    if entries is None or (sub is not None and _is_dir(sub)):
        inner = workspace.listing(str(req_dir))
        if inner is not None:
            found.extend(_pin_files_among(req_dir, inner.values()))
    return tuple(found)


def _pin_files_among(folder: Path, entries: Iterable[os.DirEntry[str]]) -> list[Path]:
    """The pin files among a directory's entries, sorted by name. Every entry but a directory
    counts: a dangling link, a FIFO or an unreadable file under a pin file's name is a pin file
    that cannot be read, never "no pin"."""
    in_req = folder.name == "requirements"
    names = sorted(e.name for e in entries if not _is_dir(e))
    return [folder / n for n in names if name_format(n, in_req) is not None]


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _walk_dirs(start: Path, bound: Path) -> tuple[Path, ...]:
    if start != bound and not is_below(start, bound):  # (not `in start.parents`: quadratic in depth)
        return (start,)  # the launch file is outside the repository: look only beside it
    out = [start]
    cur = start
    while cur != bound:
        cur = cur.parent
        out.append(cur)
    return tuple(out)


def _bound(start: Path, repo_root: Path, workspace: Workspace) -> Path:
    """The outermost directory to search. A repo root that is the filesystem root means "no
    repository found" (``find_repo_root``'s fallback): then the workspace root bounds the walk,
    and never above $HOME (a stray ~/requirements.txt governs nothing)."""
    repo_root = _norm(repo_root)
    if repo_root != Path(repo_root.anchor):
        return repo_root
    ws_root = _norm(workspace.root)
    if ws_root != Path(ws_root.anchor) and (start == ws_root or is_below(start, ws_root)):
        return ws_root
    home = _norm(Path.home())  # $HOME is part of the result cache's key
    if is_below(start, home):
        return home
    return start


def _project(d: Path, workspace: Workspace, bound: Path) -> Project | None:
    # one CLI lint: every launch file below ``d`` asks for the same project (and the walk up
    # from each asks for every directory above it)
    return workspace.remembered(("project", d, bound), lambda: _read_project(d, workspace, bound))


def _read_project(d: Path, workspace: Workspace, bound: Path) -> Project | None:
    files = _dir_pin_files(d, workspace)
    if not files:
        return None
    seen: set[tuple[Path, str]] = set()
    sources: list[PinSource] = []
    for f in files:
        for s in read_pin_file(f, workspace):
            key = (_norm(s.path), s.format)
            if key not in seen:
                seen.add(key)
                sources.append(s)
    locks = [s for s in sources if s.is_lock]
    manifests = [s for s in sources if not s.is_lock]
    tool = _project_tool(d, manifests)
    if tool in ("uv", None) and not any(s.format is PinFormat.UV_LOCK for s in locks):
        root_lock = _uv_workspace_lock(d, workspace, bound)
        if root_lock is not None:
            locks.append(root_lock)
    locks.sort(key=lambda s: _lock_rank(s, tool))
    manifests.sort(key=lambda s: _MANIFEST_RANK.get(s.format, 9))
    return Project(d, tuple(locks), tuple(manifests))


def _project_tool(d: Path, manifests: list[PinSource]) -> str | None:
    """The tool whose lock is primary here: the pyproject's tool (read_pyproject decides it from
    [tool.*] tables and the build backend), else pipenv for a Pipfile, conda for an env file."""
    own = [m for m in manifests if _norm(m.path).parent == d]
    for m in own:
        if m.format is PinFormat.PYPROJECT and m.tool:
            return m.tool
    formats = {m.format for m in own}
    if PinFormat.PIPFILE in formats:
        return "pipenv"
    if PinFormat.ENVIRONMENT_YML in formats and PinFormat.PYPROJECT not in formats:
        return "conda"
    return None


def _lock_rank(lock: PinSource, tool: str | None) -> tuple[int, str]:
    # the lock the project's own tool writes first (a bare pyproject is most often uv's),
    # then tool locks, generic pylock, compiled requirements last
    primary = _TOOL_LOCK.get(tool or "uv")
    if lock.format == primary:
        return (0, lock.path.name)
    if lock.format is PinFormat.PYLOCK and tool == "pdm":
        return (0, lock.path.name)  # pdm with lock.format = "pylock"
    return (_LOCK_RANK.get(lock.format, 7), lock.path.name)


# -- uv workspaces -----------------------------------------------------------------------------


def _uv_workspace_lock(member: Path, workspace: Workspace, bound: Path) -> PinSource | None:
    """The workspace root's uv.lock when ``member`` is a member of a uv workspace above it
    (uv writes one lock at the root, lockfiles.md §3)."""
    if member / "pyproject.toml" not in _dir_pin_files(member, workspace):
        return None
    for root in member.parents:
        if bound != root and not is_below(root, bound):
            break
        pyproject = root / "pyproject.toml"
        if pyproject not in _dir_pin_files(root, workspace):
            continue
        globs = _uv_workspace_globs(pyproject, workspace)
        if globs is None:
            continue
        rel = member.relative_to(root).as_posix()
        members, exclude = globs
        if any(_glob_match(rel, g) for g in members) and not any(_glob_match(rel, g) for g in exclude):
            lock = root / "uv.lock"
            if lock in _dir_pin_files(root, workspace):
                return read_pin_file(lock, workspace)[0]
            return None
        # uv stops at the first workspace root above a project, member or not
        return None
    return None


def _uv_workspace_globs(pyproject: Path, workspace: Workspace) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    cache = _cache(workspace)
    src = workspace.read(pyproject)
    hit = cache.uv_workspaces.get(pyproject)
    if hit is not None and hit[0] is src:
        return hit[1]
    globs = None
    if isinstance(src, SourceText):
        from kimi_lsp.syntax.toml import parse  # lazily: a YAML-only run never loads tomllib

        got = parse(src.text)
        data = got if isinstance(got, dict) else {}
        table = data.get("tool", {}).get("uv", {}).get("workspace") if isinstance(data.get("tool"), dict) else None
        if isinstance(table, dict):
            members = tuple(m for m in table.get("members", []) if isinstance(m, str))
            exclude = tuple(m for m in table.get("exclude", []) if isinstance(m, str))
            globs = (members, exclude)
    cache.uv_workspaces[pyproject] = (src, globs)
    return globs


def _glob_match(rel: str, pattern: str) -> bool:
    """Path glob as uv's members use it: ``*`` stays inside one path segment, ``**`` spans any."""
    parts = [p for p in PurePosixPath(rel).parts if p != "."]
    pats = [p for p in PurePosixPath(pattern.strip("/")).parts if p != "."]

    def match(i: int, j: int) -> bool:
        if j == len(pats):
            return i == len(parts)
        if pats[j] == "**":
            return any(match(k, j + 1) for k in range(i, len(parts) + 1))
        return i < len(parts) and fnmatchcase(parts[i], pats[j]) and match(i + 1, j + 1)

    return match(0, 0)


# -- public API ---------------------------------------------------------------------------------


def discover(launch_path: Path, workspace: Workspace, repo_root: Path, *, own_kind: str | None = None) -> Governing:
    """The pin sources that govern ``launch_path``: its own installs (``own_kind`` "dockerfile"
    or "shell"), then every project from its directory up to ``repo_root`` (nearest first)."""
    launch_path = _norm(launch_path)
    start = launch_path.parent
    own = _own_pins(launch_path, own_kind, workspace) if own_kind else ()
    # one CLI lint: every launch in a directory has the same projects
    projects, dirs = workspace.remembered(("governing-dirs", start, repo_root), lambda: _projects(start, repo_root, workspace))
    return Governing(own, projects, dirs)


def _projects(start: Path, repo_root: Path, workspace: Workspace) -> tuple[tuple[Project, ...], tuple[Path, ...]]:
    """The projects from ``start`` up to the search's bound (nearest first), and the directories."""
    bound = _bound(start, repo_root, workspace)
    dirs = _walk_dirs(start, bound)
    return tuple(p for d in dirs if (p := _project(d, workspace, bound)) is not None), dirs


def project_dir(pin_path: Path) -> Path:
    """The project a pin file belongs to: its directory, or the parent of a ``requirements/`` folder."""
    pin_path = _norm(pin_path)
    parent = pin_path.parent
    name = pin_path.name.lower()
    if parent.name == "requirements" and not name.startswith(("requirements", "constraint")):
        return parent.parent
    return parent


def governed_roots(pin_path: Path, workspace: Workspace, repo_root: Path) -> tuple[Path, ...]:
    """Directories whose launch files ``pin_path`` can govern: its project directory (launch
    files below it discover it walking up; a uv workspace root's lock sits in the root, which
    holds the members). A requirements/constraints file also governs the projects of the pin
    files that include it with ``-r``/``-c`` from elsewhere in the repository."""
    pin_path = _norm(pin_path)
    out: dict[Path, None] = {project_dir(pin_path): None}
    if pin_format(pin_path) in (PinFormat.REQUIREMENTS, PinFormat.CONSTRAINTS):
        for d in _includers(pin_path, workspace, _bound(pin_path.parent, repo_root, workspace)):
            out.setdefault(d, None)
    return tuple(out)


_MAX_INCLUDER_DIRS = 20_000


def _includers(pin_path: Path, workspace: Workspace, root: Path) -> list[Path]:
    """Project dirs of pin files under ``root`` whose include tree reaches ``pin_path``."""
    from kimi_lsp.walk import SKIP_DIRS

    found: list[Path] = []
    visited = 0
    for dirpath, dirnames, _files in os.walk(root):
        visited += 1
        if visited > _MAX_INCLUDER_DIRS:
            break
        dirnames[:] = sorted(n for n in dirnames if n not in SKIP_DIRS and not n.startswith("."))
        d = Path(dirpath)
        for f in _dir_pin_files(d, workspace):
            if f == pin_path or pin_format(f) in LOCK_FORMATS:
                continue
            tree = read_pin_file(f, workspace)
            if any(_norm(s.path) == pin_path for s in tree[1:]):
                found.append(project_dir(f))
    return found


def manifest_for_lock(lock: PinSource, project: Project) -> PinSource | None:
    """The manifest ``lock`` is generated from (where a fix edits), among ``project.manifests``:
    pyproject for uv/poetry/pdm locks and tool-made pylock files, Pipfile for Pipfile.lock,
    environment.yml for conda-lock, the ``.in`` (or other input) for compiled requirements."""
    manifests = project.manifests
    lock_dir = _norm(lock.path).parent
    own_dir = _norm(project.dir)

    def first(fmt: PinFormat, *dirs: Path) -> PinSource | None:
        cands = [m for m in manifests if m.format == fmt]
        for d in dirs:
            for m in cands:
                if _norm(m.path).parent == d:
                    return m
        return cands[0] if cands else None

    fmt = lock.format
    if fmt in (PinFormat.UV_LOCK, PinFormat.POETRY_LOCK, PinFormat.PDM_LOCK):
        # a uv workspace member's lock is the root's, but its requirements are in its own pyproject
        return first(PinFormat.PYPROJECT, own_dir, lock_dir)
    if fmt is PinFormat.PIPFILE_LOCK:
        return first(PinFormat.PIPFILE, lock_dir, own_dir)
    if fmt is PinFormat.CONDA_LOCK:
        return first(PinFormat.ENVIRONMENT_YML, lock_dir, own_dir)
    if fmt is PinFormat.PYLOCK:
        if lock.tool in ("uv", "pdm", "poetry"):
            return first(PinFormat.PYPROJECT, lock_dir, own_dir)
        reqs = [m for m in manifests if m.format is PinFormat.REQUIREMENTS and _norm(m.path).parent == lock_dir]
        reqs.sort(key=lambda m: (m.path.suffix != ".in", m.path.name))
        return reqs[0] if reqs else first(PinFormat.PYPROJECT, lock_dir, own_dir)
    if fmt is PinFormat.REQUIREMENTS:  # compiled output (pip-compile / uv pip compile / uv export)
        inputs = [_norm(p) for p in lock.includes]
        named = [m for m in manifests if _norm(m.path) in inputs and not m.is_lock]
        named.sort(key=lambda m: (m.path.suffix != ".in", inputs.index(_norm(m.path))))
        if named:
            return named[0]
        sibling = _norm(lock.path).with_suffix(".in")
        found = [m for m in manifests if _norm(m.path) == sibling]
        if found:
            return found[0]
        if lock.tool == "uv":
            return first(PinFormat.PYPROJECT, lock_dir, own_dir)
    return None


__all__ = [
    "PIN_FILE_PATTERNS",
    "Governing",
    "Project",
    "clear_cache",
    "discover",
    "governed_roots",
    "manifest_for_lock",
    "pin_format",
    "project_dir",
    "read_pin_file",
]
