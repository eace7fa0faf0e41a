"""``# kimi-lsp: ignore[...]`` comments: parse them, apply them, report the ones that rot.

Syntax (DESIGN.md), for every format with ``#`` comments:
- ``# kimi-lsp: ignore[KL101]`` at the end of a line, or alone on the line above the target;
- ``# kimi-lsp: ignore-file[KL101,KL204]`` anywhere in the file;
- ``ignore`` / ``ignore-file`` without codes ignore every code.
A code may be a prefix (``KL1``), as in select/ignore.
"""
from __future__ import annotations


from kimi_lsp import _regex
from kimi_lsp._record import dataclass
from kimi_lsp.diagnostics import Diagnostic
from kimi_lsp.text import LineIndex, Span

_DIRECTIVE = _regex.compile(
    r"(?:^|(?<=\s))#\s*kimi-lsp:\s*(?P<kind>ignore-file|ignore)\b(?:\[(?P<codes>[^\]]*)\])?"
)
_CODE = _regex.compile(r"^KL\d{0,3}$")


@dataclass(frozen=True, slots=True)
class Directive:
    kind: str  # "line" | "file"
    codes: tuple[str, ...]  # empty: all codes
    span: Span  # the comment text
    target_line: int  # 0-based line the directive covers (file directives: -1)
    invalid: tuple[str, ...] = ()  # codes that are not KL codes

    def matches(self, code: str) -> bool:
        return not self.codes or any(code.startswith(c) for c in self.codes)


# Every directive holds it: text without it has none (and needs no line index to say so).
MARKER = "kimi-lsp:"


def parse(text: str, lines: LineIndex | None = None) -> list[Directive]:
    if MARKER not in text:
        return []
    lines = lines or LineIndex(text)
    out: list[Directive] = []
    for m in _DIRECTIVE.finditer(text):
        start = m.start()
        line = lines.line_of(start)
        line_text = lines.line_text(line)
        col = start - lines.line_start(line)
        raw = [c.strip() for c in (m.group("codes") or "").split(",") if c.strip()]
        codes = tuple(c for c in raw if _CODE.match(c))
        invalid = tuple(c for c in raw if not _CODE.match(c))
        end = lines.line_end(line)
        span = Span(start, end)
        if m.group("kind") == "ignore-file":
            out.append(Directive("file", codes, span, -1, invalid))
            continue
        alone = not line_text[:col].strip()
        target = line
        if alone:
            # the next line that is not itself only a comment
            target = line + 1
            while target < lines.line_count and lines.line_text(target).lstrip().startswith("#"):
                target += 1
        out.append(Directive("line", codes, span, target, invalid))
    return out


@dataclass
class Applied:
    kept: list[Diagnostic]
    used: set[int]  # indices of directives that suppressed something


def apply(diags: list[Diagnostic], directives: list[Directive], lines: LineIndex) -> Applied:
    if not directives:
        return Applied(list(diags), set())
    kept: list[Diagnostic] = []
    used: set[int] = set()
    for d in diags:
        line = lines.line_of(d.location.span.start)
        hit = None
        for i, dv in enumerate(directives):
            if not dv.matches(d.code):
                continue
            if dv.kind == "file" or dv.target_line == line:
                hit = i
                break
        if hit is None:
            kept.append(d)
        else:
            used.add(hit)
    return Applied(kept, used)
