"""``source.fixAll.kimi-lsp``: every safe fix of a document, planned and re-linted until stable by
``kimi_lsp.fixes`` (the same code as ``kimi-lsp --check --fix``), on a scratch workspace."""

from __future__ import annotations

from pathlib import Path

from kimi_lsp import fixes
from kimi_lsp.diagnostics import Diagnostic
from kimi_lsp.lsp import scratch
from kimi_lsp.lsp.session import Session, Snaps


def has_safe_fix(session: Session, path: Path) -> bool:
    return bool(fixes.choose_fixes(session.diagnostics_for(path), unsafe=False))


def fix_all(session: Session, snaps: Snaps, path: Path) -> tuple[dict[Path, tuple[str, str]], list[str]]:
    """(path -> (before, after)) for every file the fixes touch, and the follow-up commands."""
    ws = scratch.workspace(session, snaps)

    def lint() -> list[Diagnostic]:
        # a fresh engine per pass: the engine caches parsed --config files by path
        return scratch.diagnostics_in(session, scratch.engine(session, ws), path)

    # the same guard as --fix: never a lockfile, never outside the workspace's repositories; a
    # fix that would touch such a file is left out whole, not applied in part
    roots = {fixes.edit_root(path, session.root)} | set(session.folders)
    outcome = fixes.fix_until_stable(lint, ws, may_edit=lambda p: fixes.edit_refusal(p, ws, roots))
    return dict(outcome.changed), outcome.followups
