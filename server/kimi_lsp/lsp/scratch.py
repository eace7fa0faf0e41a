"""Linting "what if" texts without touching the session: a fresh Workspace over the open
documents plus the candidate texts, and a fresh engine with the session's settings."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kimi_lsp.diagnostics import Diagnostic
from kimi_lsp.engine import Engine
from kimi_lsp.lsp.session import Session, Snaps
from kimi_lsp.workspace import Workspace

if TYPE_CHECKING:
    from kimi_lsp.text import Span


def workspace(session: Session, snaps: Snaps, extra: dict[Path, str] | None = None) -> Workspace:
    overlays = {p: s.text for p, s in snaps.items()}
    overlays.update(extra or {})
    return Workspace(session.root, overlays=overlays)


def engine(session: Session, ws: Workspace) -> Engine:
    return session.new_engine(ws)


def diagnostics_in(session: Session, eng: Engine, path: Path) -> list[Diagnostic]:
    """Diagnostics located in ``path``: its own lint plus the launches passing it with --config."""
    out: list[Diagnostic] = []
    seen: set[tuple[Span, str, str]] = set()
    for f in [*sorted(session.referrers(path)), path]:
        for d in eng.lint_file(f).diagnostics:
            key = (d.location.span, d.code, d.message)
            if d.path == path and key not in seen:
                seen.add(key)
                out.append(d)
    eng.errors.clear()
    return out


def launch_signature(eng: Engine, path: Path) -> tuple[object, ...]:
    """What the launches in ``path`` say (argv words, config entries): a comment must not change it."""
    _, surface = eng.read_launches(path)
    if surface is None:
        return ()
    sig: list[tuple[object, ...]] = []
    for cmd in surface.launches:
        entries = tuple((e.key.value, repr(e.value)) for e in cmd.config.entries) if cmd.config else ()
        sig.append(
            (cmd.entry.value, cmd.program.value, tuple(t.value for t in cmd.argv), entries, len(surface.problems))
        )
    return (tuple(sig), len(surface.problems))
