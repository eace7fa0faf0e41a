"""Python source, read with the ``ast`` module and located to the character; never imported or run.

``parse`` gives the module's AST (None when it does not parse: a half-written file is not a
launch file). ``string_value`` turns a string literal node (``ast.Constant`` of a ``str``, or an
f-string ``ast.JoinedStr``; implicit concatenation included) into its value with the position of
every character in the text: escape sequences (``\\n``, ``\\x41``, ``\\N{...}``, ``\\``-newline),
raw strings, triple quotes and the quotes and whitespace between concatenated pieces are walked
here, so ``"--tp\\x20" "8"`` maps each of its characters to where it is written. An f-string's
replacement fields (``{model}``) are unknown values: ``$`` and underscores, as long as the field,
none of whose characters is exact text. ``ast`` reports columns in UTF-8 bytes; ``Lines`` turns
them into character offsets.
"""
from __future__ import annotations

import ast
import re
import unicodedata
import warnings

from kimi_lsp import _regex
from kimi_lsp._record import dataclass

MAX_SOURCE = 4_000_000  # characters; a larger .py file is generated code, not a launch

_PREFIX = _regex.compile(r"([rRbBuUfF]{0,2})('''|\"\"\"|'|\")")
_SIMPLE_ESCAPES = {
    "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v",
}
_OCTAL = _regex.compile(r"[0-7]{1,3}")
_HEX = {"x": 2, "u": 4, "U": 8}


def parse(text: str) -> ast.Module | None:
    if len(text) > MAX_SOURCE:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences: SyntaxWarning, not our news
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class Lines:
    """AST positions (1-based line, UTF-8 byte column) as offsets into the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for m in re.finditer("\n", text):
            self.starts.append(m.end())

    def offset(self, lineno: int, col: int) -> int:
        if lineno - 1 >= len(self.starts):
            return len(self.text)
        start = self.starts[lineno - 1]
        end = self.starts[lineno] if lineno < len(self.starts) else len(self.text)
        line = self.text[start:end]
        if line.isascii():
            return start + min(col, len(line))
        return start + len(line.encode("utf-8")[:col].decode("utf-8", "ignore"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        lineno = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        end_lineno = getattr(node, "end_lineno", None) or lineno
        end_col = getattr(node, "end_col_offset", None)
        a = self.offset(lineno, col)
        b = self.offset(end_lineno, end_col) if end_col is not None else a
        return a, max(a, b)


@dataclass(frozen=True, slots=True)
class StringValue:
    """A string literal's value; ``units[k]`` is the (start, end) in the text of character k."""

    value: str
    units: tuple[tuple[int, int], ...]
    span: tuple[int, int]  # the whole literal (prefixes and quotes included)
    exact: bool  # one piece, no prefix but u, no escapes, no placeholders: the value is the text between the quotes
    placeholders: bool  # an f-string with replacement fields (unknown values)


def string_value(text: str, lines: Lines, node: ast.AST) -> StringValue | None:
    """The value of a ``str`` constant or an f-string, located; None for anything else, or when
    the text does not read back to the value ``ast`` found (never guess a position)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        expected: str | None = node.value
    elif isinstance(node, ast.JoinedStr):
        expected = None
    else:
        return None
    a, b = lines.span(node)
    pieces = _scan(text, a, b)
    if pieces is None:
        return None
    chars: list[str] = []
    units: list[tuple[int, int]] = []
    exact = len(pieces) == 1
    placeholders = False
    for prefix, q, body_start, body_end in pieces:
        low = prefix.lower()
        if "b" in low:
            return None
        raw, fmt = "r" in low, "f" in low
        if low not in ("", "u"):
            exact = False
        got = _decode(text, body_start, body_end, raw=raw, fmt=fmt)
        if got is None:
            return None
        piece_chars, piece_units, escaped, fields = got
        exact = exact and not escaped and not fields
        placeholders = placeholders or fields
        chars.extend(piece_chars)
        units.extend(piece_units)
    value = "".join(chars)
    if expected is not None and value != expected:
        return None
    return StringValue(value, tuple(units), (a, b), exact, placeholders)


def _scan(text: str, a: int, b: int) -> list[tuple[str, str, int, int]] | None:
    """The literal pieces written in ``text[a:b]``: (prefix, quote, body start, body end)."""
    out: list[tuple[str, str, int, int]] = []
    i = a
    while i < b:
        c = text[i]
        if c in " \t\r\n\f":
            i += 1
            continue
        if c == "\\" and text.startswith("\n", i + 1):
            i += 2
            continue
        if c == "\\" and text.startswith("\r\n", i + 1):
            i += 3
            continue
        if c == "#":
            nl = text.find("\n", i, b)
            i = b if nl < 0 else nl
            continue
        m = _PREFIX.match(text, i)
        if m is None:
            return None
        prefix, q = m.group(1), m.group(2)
        j = m.end()
        end = _closing(text, j, b, q, fmt="f" in prefix.lower())
        if end is None:
            return None
        out.append((prefix, q, j, end))
        i = end + len(q)
    return out or None


def _closing(text: str, j: int, b: int, q: str, *, fmt: bool) -> int | None:
    """Index of the closing quote ``q`` of a literal whose body starts at ``j``."""
    depth = 0
    while j < b:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if fmt and c == "{":
            if depth == 0 and text.startswith("{{", j):
                j += 2
                continue
            depth += 1
        elif fmt and c == "}" and depth:
            depth -= 1
        elif depth and c in "'\"":
            # a string inside a replacement field (3.12 allows the outer quote too)
            k = text.find(c, j + 1, b)
            if k < 0:
                return None
            j = k + 1
            continue
        elif depth == 0 and text.startswith(q, j):
            return j
        j += 1
    return None


def _decode(
    text: str, a: int, b: int, *, raw: bool, fmt: bool
) -> tuple[list[str], list[tuple[int, int]], bool, bool] | None:
    chars: list[str] = []
    units: list[tuple[int, int]] = []
    escaped = fields = False
    i = a
    while i < b:
        c = text[i]
        if fmt and c in "{}":
            if text.startswith(c * 2, i):
                chars.append(c)
                units.append((i, i + 2))
                escaped = True
                i += 2
                continue
            if c == "}":
                return None
            end = _field_end(text, i, b)
            if end is None:
                return None
            # an unknown value, as long as the field: `$` then underscores, all of it inexact
            n = end - i
            chars.extend("$" + "_" * (n - 1))
            units.extend([(i, end)] * n)
            fields = True
            i = end
            continue
        if c != "\\":
            chars.append(c)
            units.append((i, i + 1))
            i += 1
            continue
        escaped = True
        nx = text[i + 1] if i + 1 < b else ""
        if raw:
            # a raw string keeps the backslash; it only stops the next quote from closing it
            chars.append("\\")
            units.append((i, i + 1))
            i += 1
            if nx:
                chars.append(nx)
                units.append((i, i + 1))
                i += 1
            continue
        if nx == "\n":
            i += 2
            continue
        if nx == "\r":
            i += 3 if text.startswith("\n", i + 2) else 2
            continue
        if nx in _SIMPLE_ESCAPES:
            chars.append(_SIMPLE_ESCAPES[nx])
            units.append((i, i + 2))
            i += 2
            continue
        m = _OCTAL.match(text, i + 1, b)
        if m is not None:
            chars.append(chr(int(m.group(0), 8)))
            units.append((i, m.end()))
            i = m.end()
            continue
        if nx in _HEX:
            k = _HEX[nx]
            digits = text[i + 2 : i + 2 + k]
            try:
                chars.append(chr(int(digits, 16)))
            except (ValueError, OverflowError):
                return None
            units.append((i, i + 2 + k))
            i += 2 + k
            continue
        if nx == "N" and text.startswith("{", i + 2):
            close = text.find("}", i + 3, b)
            if close < 0:
                return None
            try:
                chars.append(unicodedata.lookup(text[i + 3 : close]))
            except KeyError:
                return None
            units.append((i, close + 1))
            i = close + 1
            continue
        # an unknown escape keeps its backslash (Python warns, and means the two characters)
        chars.append("\\")
        units.append((i, i + 1))
        i += 1
    return chars, units, escaped, fields


def _field_end(text: str, i: int, b: int) -> int | None:
    """``text[i] == '{'``: the index after the replacement field it opens."""
    depth = 0
    j = i
    while j < b:
        c = text[j]
        if c in "'\"":
            k = text.find(c, j + 1, b)
            if k < 0:
                return None
            j = k + 1
            continue
        if c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return None
