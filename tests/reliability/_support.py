"""Shared helpers for the reliability tests: throwaway repositories and in-memory linting."""
from __future__ import annotations

import shutil
from pathlib import Path

from kimi_lsp.engine import Engine
from kimi_lsp.workspace import Workspace

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
