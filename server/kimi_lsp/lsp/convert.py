"""Positions and diagnostics at the LSP edge.

The engine speaks code-point offsets (``kimi_lsp.text``); the client speaks 0-based lines and
columns in the negotiated position encoding (UTF-16 unless it offered UTF-8 or UTF-32). Every
conversion goes through the text the offsets were computed against.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as T

from kimi_lsp.catalogue import doc_url
from kimi_lsp.diagnostics import Diagnostic, Severity
from kimi_lsp.lsp._blake import blake2b
from kimi_lsp.rules import BY_CODE
from kimi_lsp.text import LineIndex, Span, column_from_utf8, column_from_utf16, utf8_column, utf16_column

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
SOURCE = "kimi-lsp"

_SEVERITY = {
    Severity.ERROR: T.DiagnosticSeverity.Error,
    Severity.WARNING: T.DiagnosticSeverity.Warning,
    Severity.INFO: T.DiagnosticSeverity.Information,
}


def to_units(line_text: str, column: int, encoding: str) -> int:
    """Code-point column -> the client's units on that line."""
    if encoding == UTF8:
        return utf8_column(line_text, column)
    if encoding == UTF32:
        return min(column, len(line_text))
    return utf16_column(line_text, column)


def from_units(line_text: str, units: int, encoding: str) -> int:
    """The client's units on a line -> code-point column (clamped to the line)."""
    if encoding == UTF8:
        return column_from_utf8(line_text, units)
    if encoding == UTF32:
        return min(units, len(line_text))
    return column_from_utf16(line_text, units)


def position(lines: LineIndex, offset: int, encoding: str) -> T.Position:
    line, col = lines.position(offset)
    return T.Position(line=line, character=to_units(lines.line_text(line), col, encoding))


def span_to_range(lines: LineIndex, span: Span, encoding: str) -> T.Range:
    return T.Range(start=position(lines, span.start, encoding), end=position(lines, span.end, encoding))


def offset_of(lines: LineIndex, pos: T.Position, encoding: str) -> int:
    """Client position -> code-point offset; positions past the end clamp to the end."""
    if pos.line >= lines.line_count:
        return lines.line_end(lines.line_count - 1)
    text = lines.line_text(pos.line)
    return lines.offset(pos.line, from_units(text, pos.character, encoding))


_DIGESTS: dict[int, tuple[str, str]] = {}  # id(text) -> (text, digest): every fix of a report asks


def digest(text: str) -> str:
    """A short fingerprint of a file's text: fixes carry it to detect that spans went stale."""
    hit = _DIGESTS.get(id(text))
    if hit is not None and hit[0] is text:
        return hit[1]
    d = blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    if len(_DIGESTS) >= 64:
        _DIGESTS.clear()
    _DIGESTS[id(text)] = (text, d)
    return d


# -- diagnostics -----------------------------------------------------------------------------

LinesOf = Callable[[Path], "LineIndex | None"]


def fix_payload(d: Diagnostic, text_of: Callable[[Path], str | None]) -> list[dict[str, Any]]:
    """The diagnostic's fixes as JSON data: spans in code points plus each file's digest."""
    out: list[dict[str, Any]] = []
    for i, f in enumerate(d.fixes):
        digests: dict[str, str] = {}
        for e in f.edits:
            t = text_of(e.path)
            digests[str(e.path)] = digest(t) if t is not None else ""
        out.append(
            {
                "index": i,
                "title": f.title,
                "applicability": f.applicability.value,
                "followup": f.followup,
                "edits": [
                    {"path": str(e.path), "start": e.span.start, "end": e.span.end, "new_text": e.new_text}
                    for e in f.edits
                ],
                "digests": digests,
            }
        )
    return out


def to_lsp_diagnostic(
    d: Diagnostic,
    lines_of: LinesOf,
    text_of: Callable[[Path], str | None],
    uri_of: Callable[[Path], str],
    encoding: str,
    tags_supported: bool = True,
) -> T.Diagnostic:
    lines = lines_of(d.path)
    rng = span_to_range(lines, d.location.span, encoding) if lines is not None else _zero()
    related = []
    for r in d.related:
        rl = lines_of(r.location.path)
        rr = span_to_range(rl, r.location.span, encoding) if rl is not None else _zero()
        related.append(
            T.DiagnosticRelatedInformation(
                location=T.Location(uri=uri_of(r.location.path), range=rr), message=r.message
            )
        )
    rule = BY_CODE.get(d.code)
    return T.Diagnostic(
        range=rng,
        message=d.message,
        severity=_SEVERITY[d.severity],
        code=d.code,
        code_description=T.CodeDescription(href=doc_url(rule)) if rule is not None else None,
        source=SOURCE,
        related_information=related or None,
        tags=_tags(d.code) if tags_supported else None,
        data={"code": d.code, "fixes": fix_payload(d, text_of)},
    )


def _tags(code: str) -> list[T.DiagnosticTag] | None:
    if code == "KL901":
        return [T.DiagnosticTag.Unnecessary]
    if code == "KL204":
        return [T.DiagnosticTag.Deprecated]
    return None


DiagnosticKey = tuple[str, int, int, int, int]  # code and range


def _zero() -> T.Range:
    return T.Range(start=T.Position(line=0, character=0), end=T.Position(line=0, character=0))


def diagnostic_key(code: object, rng: T.Range) -> DiagnosticKey:
    """How a diagnostic sent back by the client is matched with the one the server published."""
    return (str(code), rng.start.line, rng.start.character, rng.end.line, rng.end.character)
