"""Positions in source text: spans, located values, a line index.

Offsets are code-point indices into the decoded ``str`` (what PyYAML marks and Python slicing
use). Lines split on ``\\n``, ``\\r\\n`` and ``\\r`` only (LSP's definition; ``str.splitlines``
would also split on form feeds and U+2028). Conversion to 1-based CLI columns or LSP UTF-16
columns happens only at the edges (cli/, lsp/convert.py).
"""
from __future__ import annotations

import bisect
import re
from types import GenericAlias

from kimi_lsp import _regex
from kimi_lsp._record import dataclass

_NEWLINE = _regex.compile(r"\r\n|\r|\n")
_END = re.Match.end


@dataclass(frozen=True, slots=True, order=True)
class Span:
    """Half-open ``[start, end)`` range of code-point offsets."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"invalid span {self.start}..{self.end}")

    def contains(self, offset: int) -> bool:
        return self.start <= offset <= self.end

    def shift(self, delta: int) -> Span:
        return Span(self.start + delta, self.end + delta)

    def cover(self, other: Span) -> Span:
        return Span(min(self.start, other.start), max(self.end, other.end))


TYPE_CHECKING = False  # typing itself is not imported: see _record.py
if TYPE_CHECKING:
    from typing import Any, Generic, TypeVar

    T = TypeVar("T")

    @dataclass(frozen=True, slots=True)
    class Located(Generic[T]):
        """A value and where its text sits in the file."""

        value: T
        span: Span

else:

    @dataclass(frozen=True, slots=True)
    class Located:
        """A value and where its text sits in the file (generic for mypy: the branch above)."""

        value: Any
        span: Span
        __class_getitem__ = classmethod(GenericAlias)  # Located[int] still works at run time


class LineIndex:
    """Maps offsets to (line, column) and back; both 0-based, columns in code points."""

    __slots__ = ("_starts", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        starts = [0]
        starts.extend(map(_END, _NEWLINE.finditer(text)))
        self._starts = starts

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def line_start(self, line: int) -> int:
        return self._starts[line]

    def line_end(self, line: int) -> int:
        """Offset of the end of ``line``'s content, before its terminator."""
        if line + 1 < len(self._starts):
            end = self._starts[line + 1]
            if end >= 2 and self._text[end - 2 : end] == "\r\n":
                return end - 2
            return end - 1
        return len(self._text)

    def line_text(self, line: int) -> str:
        return self._text[self._starts[line] : self.line_end(line)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset) - 1

    def position(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, len(self._text)))
        line = self.line_of(offset)
        return line, offset - self._starts[line]

    def offset(self, line: int, column: int) -> int:
        if line >= len(self._starts):
            return len(self._text)
        start = self._starts[line]
        return min(start + column, self.line_end(line))

    def line_span(self, line: int) -> Span:
        return Span(self._starts[line], self.line_end(line))


def utf16_column(line_text: str, column: int) -> int:
    """Code-point column on ``line_text`` -> UTF-16 code units."""
    prefix = line_text[:column]
    return column + sum(1 for ch in prefix if ord(ch) > 0xFFFF)


def column_from_utf16(line_text: str, units: int) -> int:
    """UTF-16 code units on ``line_text`` -> code-point column (clamped to the line)."""
    count = 0
    for i, ch in enumerate(line_text):
        if count >= units:
            return i
        count += 2 if ord(ch) > 0xFFFF else 1
    return len(line_text)


def utf8_column(line_text: str, column: int) -> int:
    return len(line_text[:column].encode("utf-8", "surrogatepass"))


def column_from_utf8(line_text: str, units: int) -> int:
    count = 0
    for i, ch in enumerate(line_text):
        if count >= units:
            return i
        count += len(ch.encode("utf-8", "surrogatepass"))
    return len(line_text)


def line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line of ``text``, the end before its line break (``\n`` or ``\r\n``);
    a text that ends with a line break has no empty last line."""
    out: list[tuple[int, int]] = []
    pos, n = 0, len(text)
    while pos < n:
        nl = text.find("\n", pos)
        if nl < 0:
            out.append((pos, n))
            break
        end = nl - 1 if nl > pos and text[nl - 1] == "\r" else nl
        out.append((pos, end))
        pos = nl + 1
    return out
