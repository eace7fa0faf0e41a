"""Shared helpers for the reliability tests: throwaway repositories and in-memory linting."""
from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from kimi_lsp.engine import Engine
from kimi_lsp.workspace import Workspace

# Drops the working directory (and '' for -c) from sys.path before anything is imported: what
# `python -P` does on 3.11+, and what the editor extension runs on every Python.
_OFF_CWD = "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]"


def python_safe_module(module: str, *args: str) -> list[str]:
    """``python -P -m MODULE ARGS``; on 3.10 (no ``-P``) the same through runpy."""
    if sys.version_info >= (3, 11):
        return [sys.executable, "-P", "-m", module, *args]
    run = f"{_OFF_CWD}; import runpy; runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
    return [sys.executable, "-c", run, *args]


def python_safe_code(script: str) -> list[str]:
    """``python -P -c SCRIPT``; on 3.10 the script starts by taking the directory off sys.path."""
    if sys.version_info >= (3, 11):
        return [sys.executable, "-P", "-c", script]
    return [sys.executable, "-c", f"{_OFF_CWD}\n{script}"]


TESTS = Path(__file__).resolve().parent.parent
FIXTURES = TESTS / "fixtures"
PINS_FIXTURES = TESTS / "pins_fixtures"

# Every launch-file name the readers dispatch on, and every pin-file name discovery knows.
LAUNCH_NAMES = (
    "k3.yaml", "deploy.yml", ".github/workflows/ci.yml", "compose.yaml", "profile.toml",
    "run.sh", "job.sbatch", "Dockerfile", "serve.dockerfile", "launch",
)
PIN_NAMES = (
    "requirements.txt", "requirements-dev.in", "constraints.txt", "pyproject.toml", "uv.lock",
    "poetry.lock", "pdm.lock", "Pipfile", "Pipfile.lock", "pylock.toml", "environment.yml",
    "conda-lock.yml",
)


def make_repo(root: Path) -> Path:
    """An empty repository root (``.git`` marks it; nothing in it is ever run)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    return root.resolve()


def copy_fixture_corpus(dst: Path) -> list[Path]:
    """tests/fixtures/<case> copied under ``dst``, each case a repository of its own."""
    cases = []
    for case in sorted(p for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith("_")):
        target = dst / case.name
        shutil.copytree(case, target, symlinks=True)
        (target / ".git").mkdir(exist_ok=True)
        cases.append(target.resolve())
    return cases


def lint_text(engine: Engine, path: Path, text: str):
    """Lint ``text`` as the content of ``path`` (an editor overlay: nothing is written to disk)."""
    engine.workspace.set_overlay(path, text)
    engine.invalidate(path)
    try:
        return engine.lint_file(path)
    finally:
        engine.workspace.drop_overlay(path)


def fresh_engine(root: Path) -> Engine:
    return Engine(Workspace(root))


def work(fn: Callable[[], object]) -> int:
    """How many operations ``fn()`` performs: the Python functions and built-ins it calls (a
    profile hook counts them). Unlike seconds, the count does not change with the load on the
    machine, so tests compare it between input sizes (linear work doubles when the input does)
    instead of timing a run."""
    count = 0

    def hook(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event == "call" or event == "c_call":
            count += 1

    old = sys.getprofile()
    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(old)
    return count


def growth(run: Callable[[int], object], small: int, factor: int = 4) -> float:
    """``work`` of ``run(small * factor)`` over that of ``run(small)``, after one run of each to
    load what a first run loads: about ``factor`` when the work is linear, ``factor ** 2`` when
    quadratic."""
    run(small)
    run(small * factor)
    return work(lambda: run(small * factor)) / max(1, work(lambda: run(small)))


def cpu_growth(run: Callable[[int], object], small: int, factor: int = 4, repeat: int = 3) -> float:
    """``growth`` measured in this process's CPU time (the best of ``repeat`` runs of each size),
    for work done inside built-ins (a regular expression, a string search) that call counts do not
    see. Other processes on a busy machine do not add to it, and only the ratio is asserted."""
    import gc
    import time

    def best(n: int) -> float:
        out = float("inf")
        for _ in range(repeat):
            gc.disable()
            try:
                start = time.process_time()
                run(n)
                out = min(out, time.process_time() - start)
            finally:
                gc.enable()
        return out

    run(small)
    run(small * factor)
    return best(small * factor) / max(best(small), 1e-4)
