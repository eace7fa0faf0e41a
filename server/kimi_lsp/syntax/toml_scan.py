"""The plain TOML of pyproject.toml and kimi-lsp.toml, read without tomllib.

tomllib (with the ``typing`` and ``datetime`` it imports) is ~5 ms of a one-file ``--check`` in a
project that has a pyproject.toml, which is most of them (issue 16). ``scan`` reads the subset of
TOML such files are written in and gives exactly what ``tomllib.loads`` gives for it:

- comments, blank lines, ``[table]`` and ``[[array.of.tables]]`` headers of bare keys;
- ``key = value`` with a bare key; values: basic strings without escapes, literal strings,
  decimal integers, booleans, arrays (over several lines, with comments, a trailing comma),
  one-line inline tables, nested.

Everything else is declined (``None``): escapes, multi-line strings, floats, dates, quoted or
dotted keys, whitespace inside headers, CR line ends, control characters, and every redefinition
TOML forbids (a key twice, a table twice, a table over a value). The caller then asks tomllib,
which also words the error of a broken file. ``tests/unit/test_toml_scan.py`` holds the scan to
tomllib on every TOML file of the tests and the corpus, and on generated and mutated documents.
"""
from __future__ import annotations


from kimi_lsp import _regex

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any

_WS = _regex.compile(r"[ \t]*")
_COMMENT = _regex.compile(r"#[^\x00-\x08\x0a-\x1f\x7f]*")
_KEY = _regex.compile(r"""[A-Za-z0-9_-]+|"([^"\\\x00-\x08\x0a-\x1f\x7f]*)"|'([^'\x00-\x08\x0a-\x1f\x7f]*)'""")
# Strings: escapes only of a quote, a backslash, a newline or a tab; multi-line ones without a
# quote or a backslash inside (a line-ending backslash, and quotes next to the delimiters, are
# where TOML's rules get subtle: tomllib reads those).
_BASIC = _regex.compile(r'"((?:[^"\\\x00-\x08\x0a-\x1f\x7f]|\\["\\nt])*)"')
_LITERAL = _regex.compile(r"'([^'\x00-\x08\x0a-\x1f\x7f]*)'")
_ML_BASIC = _regex.compile(r'"""\n?([^"\\\x00-\x08\x0b-\x1f\x7f]*)"""')
_ML_LITERAL = _regex.compile(r"'''\n?([^'\x00-\x08\x0b-\x1f\x7f]*)'''")
_ESCAPE = _regex.compile(r'\\(["\\nt])')
_UNESCAPED = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}
_INT = _regex.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_MAX_DEPTH = 40

# Kinds of the tables built, by id: a header defined it, a header named it as a parent, it is
# an array-of-tables element, or it is an inline table (a value: closed to headers and keys).
_EXPLICIT, _IMPLICIT, _ELEMENT, _INLINE = range(4)


class _Decline(Exception):
    pass


class _Scan:
    __slots__ = ("t", "n", "kinds", "aots")

    def __init__(self, text: str) -> None:
        self.t = text
        self.n = len(text)
        self.kinds: dict[int, int] = {}
        self.aots: set[int] = set()  # ids of the lists [[headers]] made

    def _end_of_line(self, i: int) -> int:
        """After a header or a value: spaces, a comment, then the line end (or the text's)."""
        t = self.t
        i = _WS.match(t, i).end()  # type: ignore[union-attr]  # `[ \t]*` always matches
        if i < self.n and t[i] == "#":
            i = _COMMENT.match(t, i).end()  # type: ignore[union-attr]  # `#` matched
        if i < self.n:
            if t[i] != "\n":
                raise _Decline
            i += 1
        return i

    def _gap(self, i: int) -> int:
        """Inside an array: spaces, line ends and comments."""
        t, n = self.t, self.n
        while i < n:
            c = t[i]
            if c == " " or c == "\t" or c == "\n":
                i += 1
            elif c == "#":
                i = _COMMENT.match(t, i).end()  # type: ignore[union-attr]  # `#` matched
                if i < n and t[i] != "\n":
                    raise _Decline
            else:
                break
        return i

    def key(self, i: int) -> tuple[str, int]:
        """A bare or quoted key (a quoted one without escapes): its name and where it ends."""
        m = _KEY.match(self.t, i)
        if m is None:
            raise _Decline
        name = m.group(1) if m.group(1) is not None else m.group(2)
        return (m.group() if name is None else name), m.end()

    def value(self, i: int, depth: int) -> tuple[Any, int]:
        t = self.t
        if i >= self.n or depth > _MAX_DEPTH:
            raise _Decline
        c = t[i]
        if c == '"':
            if t.startswith('"""', i):
                m = _ML_BASIC.match(t, i)
            else:
                m = _BASIC.match(t, i)
                if m is not None and "\\" in m.group(1):
                    return _ESCAPE.sub(lambda e: _UNESCAPED[e.group(1)], m.group(1)), m.end()
        elif c == "'":
            m = _ML_LITERAL.match(t, i) if t.startswith("'''", i) else _LITERAL.match(t, i)
        elif c == "t" and t.startswith("true", i):
            return True, i + 4
        elif c == "f" and t.startswith("false", i):
            return False, i + 5
        elif c == "-" or "0" <= c <= "9":
            m = _INT.match(t, i)
            if m is None:
                raise _Decline
            return int(m.group()), m.end()
        elif c == "[":
            return self._array(i + 1, depth + 1)
        elif c == "{":
            return self._inline(i + 1, depth + 1)
        else:
            raise _Decline
        if m is None:
            raise _Decline
        return m.group(1), m.end()

    def _array(self, i: int, depth: int) -> tuple[list[Any], int]:
        t = self.t
        out: list[Any] = []
        i = self._gap(i)
        while True:
            if i < self.n and t[i] == "]":
                return out, i + 1
            item, i = self.value(i, depth)
            out.append(item)
            i = self._gap(i)
            if i < self.n and t[i] == ",":
                i = self._gap(i + 1)
            elif i < self.n and t[i] == "]":
                return out, i + 1
            else:
                raise _Decline

    def _inline(self, i: int, depth: int) -> tuple[dict[str, Any], int]:
        t = self.t
        out: dict[str, Any] = {}
        self.kinds[id(out)] = _INLINE
        i = _WS.match(t, i).end()  # type: ignore[union-attr]  # always matches
        if i < self.n and t[i] == "}":
            return out, i + 1
        while True:
            key, i = self.key(i)
            i = _WS.match(t, i).end()  # type: ignore[union-attr]  # always matches
            if i >= self.n or t[i] != "=" or key in out:
                raise _Decline
            i = _WS.match(t, i + 1).end()  # type: ignore[union-attr]  # always matches
            out[key], i = self.value(i, depth)
            i = _WS.match(t, i).end()  # type: ignore[union-attr]  # always matches
            if i < self.n and t[i] == ",":
                i = _WS.match(t, i + 1).end()  # type: ignore[union-attr]  # always matches
                continue  # (a `}` right after the comma is not a key: declined above)
            if i < self.n and t[i] == "}":
                return out, i + 1
            raise _Decline

    def _parent(self, root: dict[str, Any], parts: list[str]) -> dict[str, Any]:
        """The table a header's last key goes in, making the implicit ones on the way."""
        d = root
        for part in parts:
            v = d.get(part)
            if v is None:
                v = d[part] = {}
                self.kinds[id(v)] = _IMPLICIT
            elif type(v) is not dict or self.kinds.get(id(v)) not in (_EXPLICIT, _IMPLICIT):
                raise _Decline  # a value, an inline table, or an array of tables (its last element)
            d = v
        return d

    def document(self) -> dict[str, Any]:
        t, n = self.t, self.n
        root: dict[str, Any] = {}
        self.kinds[id(root)] = _EXPLICIT
        table = root
        i = 0
        while i < n:
            i = _WS.match(t, i).end()  # type: ignore[union-attr]  # always matches
            if i >= n:
                break
            c = t[i]
            if c == "\n" or c == "#":
                i = self._end_of_line(i)
            elif c == "[":
                aot = t.startswith("[[", i)
                i += 2 if aot else 1
                parts = []
                while True:
                    part, i = self.key(i)
                    parts.append(part)
                    if i < n and t[i] == ".":
                        i += 1
                        continue
                    if i < n and t[i] == "]":
                        break
                    raise _Decline  # spaces in the header, or not a header
                parent = self._parent(root, parts[:-1])
                last = parts[-1]
                current = parent.get(last)
                if aot:  # [[array.of.tables]]
                    if not t.startswith("]]", i):
                        raise _Decline
                    if current is None:
                        current = parent[last] = []
                        self.aots.add(id(current))
                    elif type(current) is not list or id(current) not in self.aots:
                        raise _Decline
                    table = {}
                    self.kinds[id(table)] = _ELEMENT
                    current.append(table)
                    i = self._end_of_line(i + 2)
                else:
                    if current is None:
                        table = parent[last] = {}
                    elif type(current) is dict and self.kinds.get(id(current)) == _IMPLICIT:
                        table = current
                    else:
                        raise _Decline  # defined twice, or over a value
                    self.kinds[id(table)] = _EXPLICIT
                    i = self._end_of_line(i + 1)
            else:
                key, i = self.key(i)
                i = _WS.match(t, i).end()  # type: ignore[union-attr]  # always matches
                if i >= n or t[i] != "=" or key in table:
                    raise _Decline  # a dotted or quoted key, no `=`, or a key twice
                i = _WS.match(t, i + 1).end()  # type: ignore[union-attr]  # always matches
                table[key], i = self.value(i, 0)
                i = self._end_of_line(i)
        return root


def scan(text: str) -> dict[str, Any] | None:
    """``tomllib.loads(text)`` for a document in the subset, else None (ask tomllib)."""
    if "\r" in text or text.startswith("\ufeff"):
        return None
    try:
        return _Scan(text).document()
    except _Decline:
        return None
