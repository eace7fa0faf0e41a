"""TOML with positions: the one reader of TOML text (profiles, manifests, locks, settings).

``parse`` gives tomllib's values, or the ``SyntaxProblem`` tomllib's error describes, located
(one wording, one mapping of its ``(at line L, column C)`` to a span). A document nested deeper
than tomllib's recursion allows is a problem too, never an exception.

tomllib keeps no positions (tomlkit neither), so ``locate`` walks the raw text of a document that
``parse`` accepted and records where every key and value sits. Paths are tuples of keys (decoded,
as tomllib's tables hold them) and array indices: ``("project", "dependencies", 0)``; an element
of an array of tables is addressed by its index too: ``("package", 3, "name")``. On text it cannot
follow the locator stops and returns what it found so far; it never raises.
"""
from __future__ import annotations

from collections.abc import Mapping

from kimi_lsp import _regex
from kimi_lsp._record import MadeOnRead, dataclass
from kimi_lsp.syntax import SyntaxProblem, toml_scan
from kimi_lsp.text import Span

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any, Union

    KeyPath = tuple[Union[str, int], ...]
else:
    KeyPath = tuple
"""``KeyPath``: keys (``str``) and array indices (``int``) from the document root."""

# tomllib counts brackets per nesting level on the Python stack; past this depth (far below what
# it accepts) no real file goes, so it is where a "nested too deeply" problem points.
_NESTING_LIMIT = 100
_LOCATION_RE = _regex.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$|\s*\(at end of document\)\s*$")
_BARE_KEY_RE = _regex.compile(r"[A-Za-z0-9_-]+")
_BARE_VALUE_RE = _regex.compile(r"[^,\]}#\r\n]*")
_BASIC_STRING_RE = _regex.compile(r'"(?:[^"\\\n]|\\.)*"')


def parse(text: str) -> dict[str, Any] | SyntaxProblem:
    """tomllib's tables for ``text``, or where and why it is not TOML.

    A document in the plain subset ``toml_scan`` reads (most pyproject.toml files) is read
    without importing tomllib; the scan gives what tomllib would."""
    scanned = toml_scan.scan(text)
    if scanned is not None:
        return scanned
    from kimi_lsp._toml import tomllib

    try:
        return tomllib.loads(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError, and anything else tomllib refuses
        return _problem(str(exc), text)
    except RecursionError:  # tomllib recurses per nesting level: report where the nesting starts
        return SyntaxProblem("TOML syntax error: arrays or tables nested too deeply", _deep_nesting_span(text))


def _problem(message: str, text: str) -> SyntaxProblem:
    """tomllib's message without its position, on the character it names (empty at a line end)."""
    m = _LOCATION_RE.search(message)
    offset = len(text)
    if m is not None:
        message = message[: m.start()]
        if m.group(1):
            line, column = int(m.group(1)), int(m.group(2))
            starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]  # tomllib counts "\n" only
            if line - 1 < len(starts):
                offset = min(len(text), starts[line - 1] + column - 1)
    if offset < len(text) and text[offset] not in "\r\n":
        span = Span(offset, offset + 1)
    else:
        span = Span(offset, offset)
    return SyntaxProblem(f"TOML syntax error: {message}", span)


def _deep_nesting_span(text: str, limit: int = _NESTING_LIMIT) -> Span:
    """Where brackets outside strings and comments first nest ``limit`` deep (else the start)."""
    depth, i, n, quote = 0, 0, len(text), ""
    while i < n:
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote or c == "\n":
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif c in "[{":
            depth += 1
            if depth >= limit:
                return Span(i, i + 1)
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return Span(0, 0)


# -- positions -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TomlString:
    literal: Span  # the whole literal, quotes included
    content: Span  # between the quotes (after a multi-line string's leading newline)


@dataclass(frozen=True, slots=True)
class TomlHeader:
    """A ``[table]`` or ``[[array-of-tables]]`` header; ``path`` ends in the element's index for
    the latter."""

    path: KeyPath
    span: Span  # the brackets and what is between them
    array: bool


@dataclass(frozen=True, slots=True)
class TomlPositions:
    """Where the keys and values of a document sit."""

    keys: Mapping[KeyPath, Span]  # the last key part as first written (quotes included)
    values: Mapping[KeyPath, Span]  # every value written after ``=`` or in an array
    strings: Mapping[KeyPath, TomlString]  # the string values among them
    # tables without a value of their own: a header's ``[...]``; for a table made by dotted keys
    # (``a.b = 1`` makes ``a``), its first statement from the first key part to the value's end
    tables: Mapping[KeyPath, Span]
    headers: tuple[TomlHeader, ...]  # in document order

    def value_or_table(self, path: KeyPath) -> Span | None:
        return self.values.get(path) or self.tables.get(path)

    def items(self, path: KeyPath) -> tuple[Span, ...]:
        """The spans of an array's items, in order."""
        out: list[Span] = []
        while (span := self.values.get((*path, len(out)))) is not None:
            out.append(span)
        return tuple(out)

    def string_content(self, path: KeyPath, text: str, value: str) -> Span | None:
        """Span of the string's content when it maps 1:1 onto ``value`` (no escapes)."""
        loc = self.strings.get(path)
        if loc is None or text[loc.content.start : loc.content.end] != value:
            return None
        return loc.content


def _span(raw: tuple[int, ...]) -> Span:
    return Span(raw[0], raw[1])


def _string_record(raw: tuple[int, ...]) -> TomlString:
    return TomlString(Span(raw[0], raw[1]), Span(raw[2], raw[3]))


def locate(text: str) -> TomlPositions:
    """Positions of keys and values in ``text`` (which ``parse`` accepted); partial, never raising,
    on text it cannot follow."""
    scanner = _Scanner(text)
    try:
        scanner.run()
    except (ValueError, IndexError, RecursionError):
        pass
    return TomlPositions(
        MadeOnRead(scanner.keys, _span),
        MadeOnRead(scanner.values, _span),
        MadeOnRead(scanner.strings, _string_record),
        MadeOnRead(scanner.tables, _span),
        tuple(scanner.headers),
    )


class _Scanner:
    def __init__(self, text: str) -> None:
        self.t = text
        self.n = len(text)
        self.i = 0
        self.keys: dict[KeyPath, tuple[int, int]] = {}
        self.values: dict[KeyPath, tuple[int, int]] = {}
        self.strings: dict[KeyPath, tuple[int, int, int, int]] = {}
        self.tables: dict[KeyPath, tuple[int, int]] = {}
        self.headers: list[TomlHeader] = []
        self.aot_count: dict[KeyPath, int] = {}

    def _ws(self) -> None:
        t, i, n = self.t, self.i, self.n
        while i < n and t[i] in " \t":
            i += 1
        self.i = i

    def _ws_nl(self) -> None:
        t, i, n = self.t, self.i, self.n
        while i < n:
            c = t[i]
            if c in " \t\r\n":
                i += 1
            elif c == "#":
                j = t.find("\n", i)
                i = n if j < 0 else j
            else:
                break
        self.i = i

    def _key_part(self) -> tuple[str, int, int]:
        """(decoded name, start, end of the key as written)."""
        t, i = self.t, self.i
        if i < self.n and t[i] in "\"'":
            start, end, content_start, content_end = self._string()
            name = t[content_start:content_end]
            if t[i] == '"' and "\\" in name:
                from kimi_lsp._toml import tomllib

                name = tomllib.loads(f"k = {t[start:end]}")["k"]
            return name, start, end
        m = _BARE_KEY_RE.match(t, i)
        if m is None:
            raise ValueError(f"bad key at {i}")
        self.i = m.end()
        return m.group(0), i, m.end()

    def _dotted_key(self) -> list[tuple[str, int, int]]:
        parts = [self._key_part()]
        while True:
            self._ws()
            if self.i < self.n and self.t[self.i] == ".":
                self.i += 1
                self._ws()
                parts.append(self._key_part())
            else:
                return parts

    def _string(self) -> tuple[int, int, int, int]:
        """At a quote: where the literal starts and ends, then where its content does."""
        t, start = self.t, self.i
        q = t[start]
        if t.startswith(q * 3, start):
            c0 = start + 3
            if t.startswith("\r\n", c0):
                c0 += 2
            elif t.startswith("\n", c0):
                c0 += 1
            k = start + 3
            while True:
                k = t.find(q * 3, k)
                if k < 0:
                    raise ValueError("unterminated multi-line string")
                if q == '"' and _escaped(t, k):
                    k += 1
                    continue
                break
            end = k + 3
            while end < self.n and t[end] == q and end - (k + 3) < 2:
                end += 1  # up to two quotes may end the content: """a"""""
            self.i = end
            return start, end, c0, end - 3
        if q == '"':
            m = _BASIC_STRING_RE.match(t, start)
            if m is None:
                raise ValueError("unterminated string")
            j = m.end() - 1
        else:
            j = t.find("'", start + 1)
            if j < 0 or "\n" in t[start:j]:
                raise ValueError("unterminated string")
        self.i = j + 1
        return start, j + 1, start + 1, j

    def run(self) -> None:
        table: KeyPath = ()
        t = self.t
        while True:
            self._ws_nl()
            if self.i >= self.n:
                return
            if t[self.i] == "[":
                table = self._header()
            else:
                self._keyval(table)
            self._ws()
            if self.i < self.n and t[self.i] == "#":
                j = t.find("\n", self.i)
                self.i = self.n if j < 0 else j

    def _header(self) -> KeyPath:
        start = self.i
        array = self.t.startswith("[[", start)
        self.i += 2 if array else 1
        self._ws()
        parts = self._dotted_key()
        self._ws()
        self.i += 2 if array else 1
        span = Span(start, min(self.i, self.n))
        parent: KeyPath = ()
        for name, key_start, key_end in parts:
            path = (*parent, name)
            self.keys.setdefault(path, (key_start, key_end))
            if path in self.aot_count:  # [a.b] under [[a]]: b belongs to a's last element
                parent = (*path, self.aot_count[path] - 1)
            else:
                parent = path
        if array:
            self.aot_count[path] = self.aot_count.get(path, 0) + 1
            path = (*path, self.aot_count[path] - 1)
        self.tables.setdefault(path, (span.start, span.end))
        self.headers.append(TomlHeader(path, span, array))
        return path

    def _keyval(self, table: KeyPath) -> None:
        parts = self._dotted_key()
        path = table
        for name, start, end in parts:
            path = (*path, name)
            self.keys.setdefault(path, (start, end))
        self._ws()
        if self.i >= self.n or self.t[self.i] != "=":
            raise ValueError(f"expected '=' at {self.i}")
        self.i += 1
        self._ws()
        self._value(path)
        if len(parts) > 1:  # dotted keys define their parent tables too
            statement = (parts[0][1], self.i)
            parent = table
            for name, _, _ in parts[:-1]:
                parent = (*parent, name)
                self.tables.setdefault(parent, statement)

    def _value(self, path: KeyPath) -> None:
        t = self.t
        start = self.i
        c = t[start] if start < self.n else ""
        if c in "\"'":
            self.strings[path] = self._string()
        elif c == "[":
            self.i += 1
            index = 0
            while True:
                self._ws_nl()
                if self.i >= self.n:
                    raise ValueError("unterminated array")
                if t[self.i] == "]":
                    self.i += 1
                    break
                self._value((*path, index))
                index += 1
                self._ws_nl()
                if self.i < self.n and t[self.i] == ",":
                    self.i += 1
        elif c == "{":
            self.i += 1
            while True:
                self._ws_nl()  # TOML 1.1 allows newlines in inline tables; be lenient
                if self.i >= self.n:
                    raise ValueError("unterminated inline table")
                if t[self.i] == "}":
                    self.i += 1
                    break
                if t[self.i] == ",":
                    self.i += 1
                    continue
                self._keyval(path)
        else:
            m = _BARE_VALUE_RE.match(t, start)
            end = m.end() if m else start
            while end > start and t[end - 1] in " \t":
                end -= 1
            self.i = end
        self.values[path] = (start, self.i)


def _escaped(t: str, k: int) -> bool:
    n = 0
    while k - n - 1 >= 0 and t[k - n - 1] == "\\":
        n += 1
    return n % 2 == 1


__all__ = ["KeyPath", "TomlHeader", "TomlPositions", "TomlString", "locate", "parse"]
