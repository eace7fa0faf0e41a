"""The "Ignore KLxxx on this line" action: where the ``# kimi-lsp: ignore[...]`` comment goes.

At the end of the diagnostic's line, else alone on the line above (YAML block scalars, a shell
command whose line ends in ``\\``). Each candidate is checked by linting the edited text: the
launches must read exactly as before (argv words, config entries, no new parse error) and the
diagnostic must be gone. A line inside a ``\\`` continuation cannot carry a comment at all; there
the action becomes "Ignore KLxxx in this file" (``ignore-file``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from kimi_lsp import suppression
from kimi_lsp.lsp import scratch
from kimi_lsp.lsp.session import Session, Snaps
from kimi_lsp.text import LineIndex, Span

if TYPE_CHECKING:
    from kimi_lsp.diagnostics import Diagnostic

_LEADING_DIRECTIVE = re.compile(r"^(#!|#\s*(syntax|escape|check)\s*=)", re.I)


def scope_for(lines: LineIndex, line: int) -> str:
    """ "line" when a line comment can suppress a diagnostic on ``line``, else "file"."""
    if line >= lines.line_count:
        return "file"
    here = lines.line_text(line).rstrip()
    above = lines.line_text(line - 1).rstrip() if line > 0 else ""
    if here.endswith("\\") and above.endswith("\\"):
        return "file"
    return "line"


def _newline(text: str) -> str:
    return "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"


def _extend(text: str, lines: LineIndex, line: int, code: str, kind: str) -> tuple[Span, str] | None:
    """Add ``code`` to a directive already on ``line`` (kind "line") or in the file ("file")."""
    for dv in suppression.parse(text, lines):
        if (kind == "file") != (dv.kind == "file") or (kind == "line" and lines.line_of(dv.span.start) != line):
            continue
        if not dv.codes:
            return None  # already ignores everything
        close = text.find("]", dv.span.start, dv.span.end)
        if close > 0:
            return Span(close, close), f", {code}"
    return None


def line_candidates(text: str, lines: LineIndex, line: int, code: str) -> list[tuple[Span, str]]:
    out: list[tuple[Span, str]] = []
    ext = _extend(text, lines, line, code, "line")
    if ext is not None:
        out.append(ext)
    here = lines.line_text(line)
    comment = f"# kimi-lsp: ignore[{code}]"
    if not here.rstrip().endswith("\\"):
        end = lines.line_start(line) + len(here.rstrip())
        out.append((Span(end, lines.line_end(line)), f"  {comment}"))
    indent = here[: len(here) - len(here.lstrip())]
    start = lines.line_start(line)
    out.append((Span(start, start), f"{indent}{comment}{_newline(text)}"))
    return out


def file_candidates(text: str, lines: LineIndex, code: str) -> list[tuple[Span, str]]:
    ext = _extend(text, lines, 0, code, "file")
    if ext is not None:
        return [ext]
    line = 0
    while line < lines.line_count - 1 and _LEADING_DIRECTIVE.match(lines.line_text(line)):
        line += 1
    start = lines.line_start(line)
    return [(Span(start, start), f"# kimi-lsp: ignore-file[{code}]{_newline(text)}")]


def _count(diags: Iterable[Diagnostic], code: str) -> int:
    return sum(1 for d in diags if d.code == code)


def ignore_edit(
    session: Session, snaps: Snaps, path: Path, code: str, line: int, scope: str
) -> tuple[Span, str] | None:
    """The first candidate that suppresses ``code`` without changing what the launches say."""
    text = session.text_of(path)
    if text is None:
        return None
    lines = LineIndex(text)
    base = scratch.engine(session, scratch.workspace(session, snaps))
    before = scratch.diagnostics_in(session, base, path)
    signature = scratch.launch_signature(base, path)
    cands = line_candidates(text, lines, line, code) if scope == "line" else file_candidates(text, lines, code)
    for span, new in cands:
        edited = text[: span.start] + new + text[span.end :]
        eng = scratch.engine(session, scratch.workspace(session, snaps, {path: edited}))
        after = scratch.diagnostics_in(session, eng, path)
        if scratch.launch_signature(eng, path) != signature:
            continue
        if _count(after, code) < _count(before, code) and _count(after, "KL901") <= _count(before, "KL901"):
            return span, new
    return None
