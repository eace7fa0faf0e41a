"""Hover: a flag or YAML/TOML key (sglang's help for the pinned release), a pin line (what that
version means for the launches it governs), a rule code in a suppression comment (rule docs)."""

from __future__ import annotations

import re
from pathlib import Path

from lsprotocol import types as T

from kimi_lsp import catalogue
from kimi_lsp.lsp import convert, cursor, flagdoc, pindoc
from kimi_lsp.lsp.session import Session, Snaps, uri_to_path
from kimi_lsp.rules import get as get_rule
from kimi_lsp.text import LineIndex, Span

_SUPPRESSION = re.compile(r"#\s*kimi-lsp:\s*ignore(?:-file)?\[(?P<codes>[^\]]*)\]")
_CODE = re.compile(r"KL\d+", re.I)


def rule_hover(lines: LineIndex, offset: int) -> tuple[str, Span] | None:
    line = lines.line_of(offset)
    start = lines.line_start(line)
    text = lines.line_text(line)
    for m in _SUPPRESSION.finditer(text):
        for c in _CODE.finditer(m.group("codes")):
            a = start + m.start("codes") + c.start()
            span = Span(a, a + len(c.group(0)))
            rule = get_rule(c.group(0).upper())
            if span.contains(offset) and rule is not None:
                return catalogue.render_rule_markdown(rule, heading="###"), span
    return None


def flag_hover(session: Session, path: Path, offset: int) -> tuple[str, Span] | None:
    at = cursor.flag_at(session.engine, path, offset)
    if at is None:
        return None
    if at.flag is not None:
        return flagdoc.markdown(at.flag, at.schema, at.hit.value), at.hit.span
    if at.candidates:
        cands = ", ".join(f"`{c}`" for c in at.candidates)
        return f"`{at.hit.written}` is ambiguous in sglang {at.schema.version}: it could match {cands}", at.hit.span
    return f"`{at.hit.written}` is not an sglang {at.schema.version} flag", at.hit.span


def launch_hover(session: Session, path: Path, offset: int, on_flag: bool) -> tuple[str, Span] | None:
    """The launch under the cursor: the sglang release it is judged by and the evidence for it, and
    the pins that govern it (the same answer as `kimi-lsp launches`). On the launch's program
    (``python -m sglang.launch_server``) alone; appended to a flag's hover inside the launch."""
    from kimi_lsp import launch_info

    try:
        infos = launch_info.launches_in(session.engine, path)
    except Exception:  # noqa: BLE001 - a hover must never take the lint thread down
        return None
    for info in infos:
        inside = info.launch_span.start <= offset <= info.launch_span.end
        if (on_flag and inside) or info.span.start <= offset <= info.span.end:
            return launch_info.markdown(info, session.engine.workspace), info.span
    return None


def hover_at(session: Session, snaps: Snaps, uri: str, pos: T.Position) -> T.Hover | None:
    """On the lint thread."""
    session.sync(snaps)
    path = uri_to_path(uri)
    lines = session.lines_of(path) if path is not None else None
    if path is None or lines is None:
        return None
    offset = convert.offset_of(lines, pos, session.encoding)
    found = rule_hover(lines, offset) or pindoc.pin_hover(session, path, offset) or flag_hover(session, path, offset)
    launch = launch_hover(session, path, offset, on_flag=found is not None)
    if found is None:
        if launch is None:
            return None
        found = launch
    elif launch is not None:
        found = (f"{found[0]}\n\n---\n\n{launch[0]}", found[1])
    text, span = found
    return T.Hover(
        contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=text),
        range=convert.span_to_range(lines, span, session.encoding),
    )
