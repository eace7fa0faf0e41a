"""Applying fixes: splice edits into texts, re-lint until stable, write atomically.

A fix is all-or-nothing: when one of its edits overlaps an edit already taken, the whole fix
waits for the next pass (ruff's rule). Files keep their BOM, encoding, line endings and
permissions; writes go through a temporary file in the same directory and a rename.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kimi_lsp.diagnostics import Applicability, Diagnostic, Edit, Fix
from kimi_lsp.workspace import SourceText, Workspace

MAX_PASSES = 10


def allowed(fix: Fix, unsafe: bool) -> bool:
    if fix.applicability is Applicability.SAFE:
        return bool(fix.edits)
    return unsafe and fix.applicability is Applicability.UNSAFE and bool(fix.edits)


def choose_fixes(diags: Iterable[Diagnostic], unsafe: bool) -> list[tuple[Diagnostic, Fix]]:
    """The first applicable fix of each diagnostic (fixes are listed safest first)."""
    out = []
    for d in diags:
        for f in d.fixes:
            if allowed(f, unsafe):
                out.append((d, f))
                break
    return out


def splice(text: str, edits: list[Edit]) -> str:
    for e in sorted(edits, key=lambda e: (e.span.start, e.span.end), reverse=True):
        text = text[: e.span.start] + e.new_text + text[e.span.end :]
    return text


def plan(fixes: list[tuple[Diagnostic, Fix]], texts: dict[Path, str]) -> tuple[dict[Path, list[Edit]], list[tuple[Diagnostic, Fix]]]:
    """Non-overlapping edits per file, taking whole fixes in order."""
    taken: dict[Path, list[Edit]] = {}
    applied: list[tuple[Diagnostic, Fix]] = []
    for d, f in fixes:
        if any(e.path not in texts for e in f.edits):
            continue
        clash = False
        for e in f.edits:
            for o in taken.get(e.path, []):
                if e == o:
                    continue
                if e.span.start < o.span.end and o.span.start < e.span.end:
                    clash = True
                if e.span.start == e.span.end == o.span.start == o.span.end:
                    clash = True
        if clash:
            continue
        for e in f.edits:
            lst = taken.setdefault(e.path, [])
            if e not in lst:
                lst.append(e)
        applied.append((d, f))
    return taken, applied


@dataclass
class FixOutcome:
    changed: dict[Path, tuple[str, str]] = field(default_factory=dict)  # path -> (before, after)
    sources: dict[Path, SourceText] = field(default_factory=dict)  # as read from disk, for writing back
    applied: list[tuple[Diagnostic, Fix]] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    converged: bool = True
    followups: list[str] = field(default_factory=list)


def fix_until_stable(
    lint: Callable[[], list[Diagnostic]],
    workspace: Workspace,
    unsafe: bool = False,
    max_passes: int = MAX_PASSES,
) -> FixOutcome:
    """Apply fixes in memory (as workspace overlays) and re-lint until nothing changes."""
    out = FixOutcome()
    originals: dict[Path, str] = {}
    diags = lint()
    for _ in range(max_passes):
        chosen = choose_fixes(diags, unsafe)
        if not chosen:
            break
        paths = {e.path for _, f in chosen for e in f.edits}
        texts: dict[Path, str] = {}
        for p in paths:
            t = workspace.text(p)
            if t is not None:
                texts[p] = t
        taken, applied = plan(chosen, texts)
        if not taken:
            break
        for p, edits in taken.items():
            if p not in originals:
                originals[p] = texts[p]
                src = workspace.read(p)
                if isinstance(src, SourceText):
                    out.sources[p] = src
            new = splice(texts[p], edits)
            workspace.set_overlay(p, new)
        out.applied.extend(applied)
        for _, f in applied:
            if f.followup and f.followup not in out.followups:
                out.followups.append(f.followup)
        diags = lint()
    else:
        out.converged = not choose_fixes(diags, unsafe)
    out.remaining = diags
    for p, before in originals.items():
        after = workspace.text(p)
        if after is not None and after != before:
            out.changed[p] = (before, after)
    return out


def write_atomic(src: SourceText, new_text: str) -> None:
    """Write ``new_text`` over ``src.path`` keeping BOM, encoding and permissions."""
    path = src.path
    data = new_text.encode(src.encoding)
    if src.bom and src.encoding == "utf-8":
        data = b"\xef\xbb\xbf" + data
    st = os.stat(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".kimi-lsp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, st.st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def inside(path: Path, root: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
        return True
    except ValueError:
        return False
