"""Lint many files: in this process for small inputs, on every core for large trees.

``lint_files`` is what ``kimi-lsp --check`` runs after collecting its files. Its result is the
same whether it runs serially or in worker processes: diagnostics deduplicated and sorted the
way ``cli/check.py`` does it, plus the engine's internal errors.

Parallel runs fork workers (``concurrent.futures.ProcessPoolExecutor``, fork context). Each
worker keeps one ``Engine`` for its whole life, so a pin file is read and parsed at most once
per worker, and files are dealt out in chunks of one project directory (the nearest directory
holding pin files), so a project's launch files mostly land on one worker.

``--config`` cross-references: a YAML file passed with ``--config`` by a launch in this run is
checked through that launch, not on its own (``Engine.index_config_references``). Building
that index means parsing every launch file, which is a third of a run; done in the parent before
dispatch, it would stay serial. Instead each worker indexes the files it is given before linting
them, reports which files hold a standalone config and whether it treated them as referenced,
and the parent re-lints, with the union of all workers' indexes, the few config files whose
verdict differs (a config referenced only from another chunk). The outcome equals a serial run
that indexes every file first (tests/reliability/test_batch.py checks this on the corpora).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:  # the engine is imported where it is used: `--check` on one file stays lean
    from typing import Any

    from kimi_lsp.diagnostics import Diagnostic
    from kimi_lsp.engine import Engine
    from kimi_lsp.workspace import Resolutions, Workspace

# Below this many files a pool costs more (fork + pickling + one pin read per worker) than it saves.
PARALLEL_MIN_FILES = 200
# Chunks per worker: enough to balance uneven projects, few enough to keep pin reads local.
_CHUNKS_PER_WORKER = 4
# A worker costs a fork and its own pin reads: give each at least this many files.
_MIN_FILES_PER_WORKER = 50


def lint_files(
    files: list[Path], root: Path, overrides: dict[str, Any], jobs: int | None = None,
    resolved: Resolutions | None = None,
) -> tuple[list[Diagnostic], list[str]]:
    """Diagnostics of ``files`` (deduplicated, sorted) and internal engine errors.

    ``root`` is the working directory (``Workspace`` root), ``overrides`` the command-line
    settings (select, ignore, sglang_version, target_gpu). ``jobs``: worker processes; None
    means one per available core, 1 means this process only. ``resolved``: the realpaths the
    workspace that collected ``files`` worked out (``Workspace.resolutions``), not asked again.
    """
    files = list(files)
    if len(files) >= PARALLEL_MIN_FILES:
        from kimi_lsp import _imports

        _imports.end_direct_imports()  # start-up is behind; the per-call hook would cost more
    workers = workers_for(jobs, len(files))
    if workers > 1:
        try:
            return _lint_parallel(files, root, overrides, workers, resolved)
        except _PoolUnavailable:
            pass  # no fork (or a worker died): the serial path gives the same answer
    return lint_serial(files, root, overrides, resolved)


# Set by the console script (``cli.main.entry``), which leaves with ``os._exit``: the engine of
# its lint is then kept to the end, not freed object by object when the lint returns (the
# caches of a 5,000-file lint: ~40 ms, about 1 % of it, for memory the system takes back anyway).
KEEP_TO_EXIT = False
_kept: list[object] = []


def lint_serial(
    files: Sequence[Path], root: Path, overrides: dict[str, Any], resolved: Resolutions | None = None
) -> tuple[list[Diagnostic], list[str]]:
    from kimi_lsp.engine import Engine

    engine = Engine(_workspace(root, resolved), overrides=overrides)
    if KEEP_TO_EXIT:
        _kept.append(engine)
    _index(engine, files)
    return lint_with(engine, files), list(engine.errors)


def lint_with(engine: Engine, files: Iterable[Path]) -> list[Diagnostic]:
    """Lint in order, keep the first of equal diagnostics, sort (``Engine.lint_files``)."""
    return engine.lint_files(files)


# -- parallel ------------------------------------------------------------------------------------


class _PoolUnavailable(Exception):
    pass


def workers_for(jobs: int | None, n_files: int) -> int:
    if jobs is not None and jobs <= 1:
        return 1
    if n_files <= PARALLEL_MIN_FILES:
        return 1
    if jobs is None:
        try:
            jobs = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            jobs = os.cpu_count() or 1
    return max(1, min(jobs, n_files // _MIN_FILES_PER_WORKER or 1))


def _lint_parallel(
    files: list[Path], root: Path, overrides: dict[str, Any], workers: int, resolved: Resolutions | None
) -> tuple[list[Diagnostic], list[str]]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError as exc:  # Windows: no fork; spawning would re-import everything per worker
        raise _PoolUnavailable from exc
    chunks = _chunks(files, workers * _CHUNKS_PER_WORKER)
    _warm(overrides)
    results: dict[int, _FileOut] = {}
    errors: list[str] = []
    referenced: set[Path] = set()
    try:
        with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker, initargs=(str(root), overrides, resolved)) as pool:
            # biggest chunks first, so no worker is left with a large one at the end
            order = sorted(range(len(chunks)), key=lambda i: -len(chunks[i]))
            futures = [pool.submit(_lint_chunk, [(j, str(files[j])) for j in chunks[i]]) for i in order]
            for fut in futures:
                out, refs, errs = fut.result()
                for j, fo in out:
                    results[j] = fo
                referenced.update(Path(p) for p in refs)
                errors.extend(errs)
    except (BrokenProcessPool, OSError) as exc:
        raise _PoolUnavailable from exc
    # A config file a worker linted on its own although a launch in another chunk passes it
    # with --config (or the other way round): lint it again, knowing every reference.
    redo = [
        j for j, fo in results.items()
        if fo.has_config and fo.treated_referenced != (_resolved(files[j]) in referenced)
    ]
    if redo:
        from kimi_lsp.engine import Engine

        engine = Engine(_workspace(root, resolved), overrides=overrides)
        engine.referenced_configs.update(referenced)
        for j in sorted(redo):
            results[j] = _FileOut(tuple(engine.lint_file(files[j]).diagnostics), True, True)
        errors.extend(engine.errors)
    # a re-linted file may repeat its worker's error message: keep each message once, in order
    from kimi_lsp.engine import merged

    return merged(results[j].diagnostics for j in range(len(files))), list(dict.fromkeys(errors))


class _FileOut:
    __slots__ = ("diagnostics", "has_config", "treated_referenced")

    def __init__(self, diagnostics: tuple[Diagnostic, ...], has_config: bool, treated_referenced: bool) -> None:
        self.diagnostics = diagnostics
        self.has_config = has_config
        self.treated_referenced = treated_referenced

    def __reduce__(self) -> tuple[type[_FileOut], tuple[tuple[Diagnostic, ...], bool, bool]]:
        return (_FileOut, (self.diagnostics, self.has_config, self.treated_referenced))


_ENGINE: Engine | None = None


def _warm(overrides: dict[str, Any]) -> None:
    """Import what linting imports lazily, once, before forking: workers inherit it."""
    import importlib

    for name in (
        "kimi_lsp.engine", "kimi_lsp.pins.discovery", "kimi_lsp.pins.locks", "kimi_lsp.pins._lock_readers",
        "kimi_lsp.pins.requirements", "kimi_lsp.rules._vet",
        "kimi_lsp.pins.pyproject", "kimi_lsp.pins.pipfile", "kimi_lsp.pins.conda_env", "kimi_lsp.pins.install_cmds",
        "kimi_lsp.surfaces", "kimi_lsp.cli.check",
        # what the readers and rules import on first use: once here rather than once per worker
        "kimi_lsp.release", "kimi_lsp.pins.bump", "kimi_lsp.syntax.toml", "kimi_lsp.surfaces.shell",
        "kimi_lsp.surfaces.dockerfile", "kimi_lsp.surfaces.toml_profile", "kimi_lsp.surfaces.yaml_embedded",
        "kimi_lsp.knowledge.flashinfer", "packaging.requirements", "decimal",
    ):
        try:
            importlib.import_module(name)
        except Exception:  # a module that fails to import fails the same way in the worker
            pass
    try:
        from kimi_lsp.knowledge.schema import load_schema

        load_schema(None)
        from kimi_lsp.engine import recent_releases

        for version in recent_releases():  # what a launch of an unknown release is checked by
            load_schema(version)
        wanted = overrides.get("sglang_version") if isinstance(overrides, dict) else None
        if isinstance(wanted, str):
            load_schema(wanted)
    except Exception:
        pass


def _init_worker(root: str, overrides: dict[str, Any], resolved: Resolutions | None = None) -> None:
    global _ENGINE
    from kimi_lsp.engine import Engine

    _ENGINE = Engine(_workspace(root, resolved), overrides=overrides)


def _workspace(root: Path | str, resolved: Resolutions | None) -> Workspace:
    """A CLI lint's workspace (stable), starting from the collecting workspace's realpaths."""
    from kimi_lsp.workspace import Workspace

    ws = Workspace(Path(root), stable=True)
    if resolved is not None:
        ws.adopt(resolved)
    return ws


def _lint_chunk(items: list[tuple[int, str]]) -> tuple[list[tuple[int, _FileOut]], list[str], list[str]]:
    from kimi_lsp.surfaces.model import Entry

    engine = _ENGINE
    assert engine is not None, "worker not initialised"
    paths = [Path(p) for _, p in items]
    _index(engine, paths)
    first_error = len(engine.errors)
    out: list[tuple[int, _FileOut]] = []
    for (j, _), path in zip(items, paths, strict=True):
        # the engine's own resolution (its workspace remembers each directory's), once per file
        resolved = _engine_resolved(engine, path)
        treated = resolved in engine.referenced_configs
        result = engine.lint_file(path)
        _, surface = engine.read_launches(resolved)
        has_config = surface is not None and any(c.entry is Entry.CONFIG_FILE for c in surface.launches)
        out.append((j, _FileOut(tuple(result.diagnostics), has_config, treated)))
    refs = [str(p) for p in engine.referenced_configs]
    return out, refs, engine.errors[first_error:]


# -- helpers -------------------------------------------------------------------------------------


def _index(engine: Engine, files: Sequence[Path]) -> None:
    """``--config`` cross-references among ``files`` (``Engine.index_config_references``).

    With the cyclic collector paused, and what it read then left out of later collections
    (``gc.freeze``): indexing reads every file and keeps what it read for the lint, so each
    collection while it runs would walk all of that again, and it throws nothing cyclic away
    (a 5,000-file run peaks at the same memory with the collector off). That was ~2 % of such a
    run. The lint itself runs with the collector on (``cli.check``)."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        engine.index_config_references(list(files))
    finally:
        if enabled:
            gc.freeze()
            gc.enable()


def _engine_resolved(engine: Engine, path: Path) -> Path:
    """``_resolved``, through the workspace's remembered directory resolutions (same answer:
    ``Workspace.resolve`` is ``Path.resolve`` with each directory's resolution kept)."""
    try:
        return engine.workspace.resolve(path)
    except (RuntimeError, OSError):
        return Path(os.path.abspath(path))


def _resolved(path: Path) -> Path:
    """As the engine keys files: symlinks resolved, a looping link left as written."""
    try:
        return Path(path).resolve()
    except (RuntimeError, OSError):
        return Path(os.path.abspath(path))


def project_key(path: Path, cache: dict[str, str]) -> Path:
    """The nearest directory at or above ``path``'s holding a pin file (else its own directory)."""
    return Path(_project_key(os.fspath(path), cache))


def _project_key(path: str, cache: dict[str, str]) -> str:
    # strings, not Paths: the parent chunks thousands of files before any worker starts
    from kimi_lsp.pins.discovery import pin_format

    start = os.path.dirname(path)
    trail: list[str] = []
    d = start
    found: str | None = None
    while True:
        hit = cache.get(d)
        if hit is not None:
            found = hit
            break
        trail.append(d)
        if _has_pin_file(Path(d), pin_format):
            found = d
            break
        parent = os.path.dirname(d)
        if parent == d or os.path.exists(os.path.join(d, ".git")):
            break
        d = parent
    key = found if found is not None else start
    for t in trail:
        cache[t] = key if found is not None else t
    return key


def _has_pin_file(d: Path, pin_format: Callable[[Path], str | None]) -> bool:
    try:
        with os.scandir(d) as it:
            for e in it:
                if pin_format(d / e.name) is not None:
                    return True
    except OSError:
        return False
    return (d / "requirements").is_dir()


def _chunks(files: Sequence[Path], target: int) -> list[list[int]]:
    """Indices of ``files`` grouped by project directory, groups split to about len/target files."""
    cache: dict[str, str] = {}
    groups: dict[str, list[int]] = {}
    for j, f in enumerate(files):
        groups.setdefault(_project_key(os.fspath(f), cache), []).append(j)
    size = max(8, -(-len(files) // max(1, target)))
    chunks: list[list[int]] = []
    current: list[int] = []
    for idx in groups.values():
        # a big project is split (its pins are then read once by each worker that gets a part);
        # small projects are packed together up to the chunk size
        while len(idx) > size:
            chunks.append(idx[:size])
            idx = idx[size:]
        if len(current) + len(idx) > size and current:
            chunks.append(current)
            current = []
        current.extend(idx)
    if current:
        chunks.append(current)
    return chunks


__all__ = ["PARALLEL_MIN_FILES", "lint_files", "lint_serial", "lint_with"]
