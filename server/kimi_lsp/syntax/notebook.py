"""Jupyter notebooks (``.ipynb``): the cells, each source character located in the file.

A notebook is JSON; a cell's ``source`` is a list of strings (one per line, each ending in ``\\n``
but the last) or one string. The JSON is read here with positions: every string keeps the span
of its raw text, and a cell's source becomes a ``MappedSource`` whose k-th character maps to the
file characters it was written as (``\\"`` is two, ``\\u00e9`` six, ``\\n`` two), so the shell and
Python readers run on the decoded source and every span they report is the ``.ipynb`` file's own.
Nothing is executed. Regular expressions scan the strings (outputs may hold megabytes of base64),
and ``json.loads`` decodes each string's raw text, so values are exactly the JSON's.
"""
from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence

from kimi_lsp import _regex
from kimi_lsp._record import dataclass
from kimi_lsp.syntax import SyntaxProblem
from kimi_lsp.syntax.shell import MappedSource
from kimi_lsp.text import Span, line_spans

_WS = _regex.compile(r"[ \t\r\n]*")
_STRING = _regex.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9A-Fa-f]{4}))*"')
_NUMBER = _regex.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_ESCAPE_LEN = {"u": 6}
MAX_DEPTH = 512  # a hostile file nested deeper is a syntax problem, not a RecursionError


@dataclass(frozen=True, slots=True)
class JString:
    """A JSON string: its value and the span of its raw text (quotes included)."""

    value: str
    span: Span
    escaped: bool  # the raw text has escape sequences (the value does not sit in it verbatim)


class JSONProblem(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


class _Reader:
    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)

    def ws(self, i: int) -> int:
        m = _WS.match(self.s, i)
        return m.end() if m else i

    def value(self, i: int, depth: int) -> tuple[object, int]:
        if depth > MAX_DEPTH:
            raise JSONProblem("JSON nested too deeply", i)
        i = self.ws(i)
        if i >= self.n:
            raise JSONProblem("unexpected end of JSON", i)
        c = self.s[i]
        if c == '"':
            return self.string(i)
        if c == "{":
            return self.obj(i, depth)
        if c == "[":
            return self.arr(i, depth)
        for word, val in (("true", True), ("false", False), ("null", None)):
            if self.s.startswith(word, i):
                return val, i + len(word)
        m = _NUMBER.match(self.s, i)
        if m is not None and m.end() > i:
            raw = m.group(0)
            return (float(raw) if any(ch in raw for ch in ".eE") else int(raw)), m.end()
        raise JSONProblem(f"unexpected character {c!r} in JSON", i)

    def string(self, i: int) -> tuple[JString, int]:
        m = _STRING.match(self.s, i)
        if m is None:
            raise JSONProblem("unterminated or invalid JSON string", i)
        raw = m.group(0)
        escaped = "\\" in raw
        value = json.loads(raw) if escaped else raw[1:-1]
        return JString(value, Span(i, m.end()), escaped), m.end()

    def obj(self, i: int, depth: int) -> tuple[dict[str, object], int]:
        out: dict[str, object] = {}
        i = self.ws(i + 1)
        if i < self.n and self.s[i] == "}":
            return out, i + 1
        while True:
            i = self.ws(i)
            if i >= self.n or self.s[i] != '"':
                raise JSONProblem("expected a string key in JSON object", i)
            key, i = self.string(i)
            i = self.ws(i)
            if i >= self.n or self.s[i] != ":":
                raise JSONProblem("expected ':' in JSON object", i)
            val, i = self.value(i + 1, depth + 1)
            out[key.value] = val
            i = self.ws(i)
            if i < self.n and self.s[i] == ",":
                i += 1
                continue
            if i < self.n and self.s[i] == "}":
                return out, i + 1
            raise JSONProblem("expected ',' or '}' in JSON object", i)

    def arr(self, i: int, depth: int) -> tuple[list[object], int]:
        out: list[object] = []
        i = self.ws(i + 1)
        if i < self.n and self.s[i] == "]":
            return out, i + 1
        while True:
            val, i = self.value(i, depth + 1)
            out.append(val)
            i = self.ws(i)
            if i < self.n and self.s[i] == ",":
                i += 1
                continue
            if i < self.n and self.s[i] == "]":
                return out, i + 1
            raise JSONProblem("expected ',' or ']' in JSON array", i)


def load(text: str) -> tuple[object, SyntaxProblem | None]:
    """The JSON value of ``text`` with every string a ``JString``; or the problem and its place."""
    reader = _Reader(text)
    try:
        value, end = reader.value(0, 0)
        end = reader.ws(end)
        if end != len(text):
            raise JSONProblem("extra data after the JSON value", end)
    except JSONProblem as exc:
        pos = max(0, min(exc.pos, len(text)))
        return None, SyntaxProblem(f"notebook is not valid JSON: {exc.message}", Span(pos, min(pos + 1, len(text))))
    return value, None


def string_chars(text: str, js: JString) -> tuple[list[int], list[int]]:
    """File (start, end) of each character of ``js.value``: an escape sequence is the span of
    the whole sequence (a surrogate pair written as two ``\\uXXXX`` is one character)."""
    a, b = js.span.start + 1, js.span.end - 1
    if not js.escaped:
        return list(range(a, b)), list(range(a + 1, b + 1))
    starts: list[int] = []
    ends: list[int] = []
    i = a
    while i < b:
        if text[i] != "\\":
            starts.append(i)
            ends.append(i + 1)
            i += 1
            continue
        k = _ESCAPE_LEN.get(text[i + 1], 2)
        if k == 6:
            code = int(text[i + 2 : i + 6], 16)
            if 0xD800 <= code < 0xDC00 and text.startswith("\\u", i + 6) and i + 12 <= b:
                low = int(text[i + 8 : i + 12], 16)
                if 0xDC00 <= low < 0xE000:
                    k = 12
        starts.append(i)
        ends.append(i + k)
        i += k
    return starts, ends


@dataclass(frozen=True, slots=True)
class Cell:
    index: int  # 0-based position among the notebook's cells
    kind: str  # "code", "markdown", "raw"
    source: MappedSource  # the decoded source; each character located in the file
    span: Span  # the source's raw text in the file (the list or the string)


@dataclass(frozen=True, slots=True)
class Notebook:
    cells: tuple[Cell, ...]
    language: str  # the kernel's language ("python" unless the metadata says otherwise)
    problem: SyntaxProblem | None = None


def read(text: str) -> Notebook:
    """The cells of a notebook (nbformat 4; nbformat 3's ``worksheets`` too)."""
    value, problem = load(text)
    if problem is not None:
        return Notebook((), "python", problem)
    if not isinstance(value, dict):
        return Notebook((), "python", SyntaxProblem("notebook is not a JSON object", Span(0, min(1, len(text)))))
    raw_cells = value.get("cells")
    if raw_cells is None:  # nbformat 3
        sheets = value.get("worksheets")
        raw_cells = [c for ws in sheets if isinstance(ws, dict) for c in _list(ws.get("cells"))] if isinstance(sheets, list) else []
    cells: list[Cell] = []
    for k, raw in enumerate(_list(raw_cells)):
        if not isinstance(raw, dict):
            continue
        kind = _str(raw.get("cell_type")) or "code"
        src = raw.get("source", raw.get("input"))
        cell = _cell(text, k, kind, src)
        if cell is not None:
            cells.append(cell)
    return Notebook(tuple(cells), _language(value))


def _list(v: object) -> list[object]:
    return v if isinstance(v, list) else []


def _str(v: object) -> str | None:
    return v.value if isinstance(v, JString) else None


def _language(nb: dict[str, object]) -> str:
    meta = nb.get("metadata")
    if not isinstance(meta, dict):
        return "python"
    for key, field_name in (("kernelspec", "language"), ("language_info", "name")):
        sub = meta.get(key)
        if isinstance(sub, dict):
            lang = _str(sub.get(field_name))
            if lang:
                return lang.lower()
    return "python"


def _cell(text: str, index: int, kind: str, src: object) -> Cell | None:
    parts: Sequence[object]
    if isinstance(src, JString):
        parts = [src]
    elif isinstance(src, list):
        parts = src
    else:
        return None
    strings = [p for p in parts if isinstance(p, JString)]
    if not strings:
        return None
    starts: list[int] = []
    ends: list[int] = []
    for js in strings:
        s, e = string_chars(text, js)
        if len(s) != len(js.value):  # cannot happen for valid JSON; never mislocate a character
            s, e = [js.span.start] * len(js.value), [js.span.end] * len(js.value)
        starts.extend(s)
        ends.extend(e)
    value = "".join(js.value for js in strings)
    anchor = strings[-1].span.end - 1
    span = Span(strings[0].span.start, strings[-1].span.end)
    return Cell(index, kind, MappedSource(value, starts, ends, anchor), span)


def cell_position(book: Notebook, offset: int) -> tuple[int, int, int] | None:
    """Where file offset ``offset`` sits in the cell that holds it, as a notebook editor shows it:
    (the cell's 1-based number among the notebook's cells, its 1-based line in the cell's source, its
    1-based column in characters); None outside every cell's source."""
    for cell in book.cells:
        if not cell.span.start <= offset < cell.span.end:
            continue
        src = cell.source
        k = max(0, bisect.bisect_right(src.starts, offset) - 1)
        text = src.text
        line_start = text.rfind("\n", 0, k) + 1
        return cell.index + 1, text.count("\n", 0, k) + 1, k - line_start + 1
    return None


# -- IPython's shell escapes --------------------------------------------------------------------

# `%%bash`, `%%sh`, `%%script bash --bg`, `%%script sh`: the rest of the cell is a shell script
# `%%writefile [-a] start.sh`: the cell saves a script that is run later (a launch written down)
_SHELL_CELL = _regex.compile(
    r"[ \t]*%%(?:bash|sh|script[ \t]+(?:\S*/)?(?:bash|sh|zsh|dash)\b|writefile[ \t]+(?:-a[ \t]+)?\S+\.(?:sh|bash)[ \t]*$)"
    r"[^\n]*(?:\n|$)",
    re.MULTILINE,
)
# `%%writefile [-a] serve.py`: a Python file saved by the cell, read as the cell's Python
_PY_WRITEFILE = _regex.compile(r"[ \t]*%%writefile[ \t]+(?:-a[ \t]+)?\S+\.py[ \t]*(?:\n|$)")
# `!cmd`, `!!cmd`, `%sx cmd`, `%system cmd`, `x = !cmd`: one shell command on the line
_BANG = _regex.compile(r"[ \t]*(?:[A-Za-z_][\w.,\s]*=[ \t]*)?(?:!!?|%(?:sx|system)\b[ \t]*)")
_MAGIC_LINE = _regex.compile(r"[ \t]*(?:[A-Za-z_][\w.,\s]*=[ \t]*)?[%!]|[ \t]*\S.*\?[ \t]*$")
# IPython expands `{expr}` (and `$name`) in a shell escape: a value known only when it runs
_INTERPOLATION = _regex.compile(r"(?<![$\\{])\{[^{}\n]*\}(?!\})")


def _units(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """One unit per character of ``text[a:b]``, an IPython ``{expr}`` made of unknown characters
    that each stand for the whole braces (the lexer then sees no exact text there)."""
    units = [(k, k + 1) for k in range(a, b)]
    for m in _INTERPOLATION.finditer(text, a, b):
        for k in range(m.start(), m.end()):
            units[k - a] = (m.start(), m.end())
    return units


def _placeheld(text: str, a: int, b: int) -> str:
    return _INTERPOLATION.sub(lambda m: "$" + "_" * (len(m.group(0)) - 1), text[a:b])


def shell_parts(cell: Cell) -> list[MappedSource]:
    """The shell text a code cell runs: a ``%%bash`` cell's body, or each ``!`` line (with the
    lines a trailing backslash continues it onto), each character located in the file."""
    src = cell.source
    text = src.text
    if cell.kind != "code" or ("!" not in text and "%" not in text):
        return []
    m = _SHELL_CELL.match(text)
    if m is not None:
        if m.end() >= len(text):
            return []
        return [src.sub(text[m.end():], [(k, k + 1) for k in range(m.end(), len(text))])]
    if text.lstrip().startswith("%%"):
        return []  # another cell magic (%%writefile, %%time, %%capture ...): not read
    out: list[MappedSource] = []
    lines = line_spans(text)
    i = 0
    while i < len(lines):
        a, b = lines[i]
        bang = _BANG.match(text, a, b)
        i += 1
        if bang is None:
            continue
        start, end = bang.end(), b
        while text[start:end].rstrip().endswith("\\") and i < len(lines):
            end = lines[i][1]
            i += 1
        out.append(src.sub(_placeheld(text, start, end), _units(text, start, end)))
    return out


def python_text(cell: Cell) -> str | None:
    """A code cell's source with its IPython-only lines (``!cmd``, ``%magic``, ``obj?``) blanked,
    same length (so AST positions are the cell's); None for a cell that is not Python."""
    text = cell.source.text
    if cell.kind != "code":
        return None
    if text.lstrip().startswith("%%"):
        m = _PY_WRITEFILE.match(text)
        if m is None:
            return None
        head = m.end() - (1 if text.endswith("\n", 0, m.end()) else 0)  # the magic line, its break kept
        return " " * head + text[head:]
    if "!" not in text and "%" not in text and "?" not in text:
        return text
    out = list(text)
    lines = line_spans(text)
    i = 0
    while i < len(lines):
        a, b = lines[i]
        i += 1
        if not _MAGIC_LINE.match(text, a, b):
            continue
        end = b
        while text[a:end].rstrip().endswith("\\") and i < len(lines):
            end = lines[i][1]
            i += 1
        for k in range(a, end):
            if out[k] != "\n":
                out[k] = " "
    return "".join(out)


# IPython's package magics: `%pip install ...` runs `python -m pip install ...` in the kernel's own
# environment (IPython's recommended form), `%uv pip install ...` the same with uv, `%conda`,
# `%mamba`, `%micromamba install ...` conda's. Read as the shell command after the `%`.
_PACKAGE_MAGIC = _regex.compile(r"[ \t]*%(?=(?:pip|uv|conda|mamba|micromamba)[ \t])")
# Cell magics whose body IPython runs as a cell of its own (a `%%capture` pip cell hides its output)
_BODY_RUNS = _regex.compile(r"[ \t]*%%(?:capture|time|timeit|prun)\b[^\n]*(?:\n|$)")


def install_parts(cell: Cell) -> list[MappedSource]:
    """What a code cell installs with: its shell parts (``shell_parts``) and its package magic
    lines (``%pip install ...``), each a shell command located in the file; in a ``%%capture``
    (``%%time``...) cell, those of its body."""
    src = cell.source
    text = src.text
    if cell.kind != "code" or "%" not in text:
        return shell_parts(cell)
    body_start = 0
    m = _BODY_RUNS.match(text)
    if m is not None:
        body_start = m.end()
        body = src.sub(text[body_start:], [(k, k + 1) for k in range(body_start, len(text))])
        return install_parts(Cell(cell.index, cell.kind, body, cell.span))
    out = shell_parts(cell)
    if _SHELL_CELL.match(text) is not None or text.lstrip().startswith("%%"):
        return out
    lines = line_spans(text)
    i = 0
    while i < len(lines):
        a, b = lines[i]
        magic = _PACKAGE_MAGIC.match(text, a, b)
        i += 1
        if magic is None:
            continue
        start, end = magic.end(), b  # after the `%`
        while text[start:end].rstrip().endswith("\\") and i < len(lines):
            end = lines[i][1]
            i += 1
        out.append(src.sub(_placeheld(text, start, end), _units(text, start, end)))
    out.sort(key=lambda part: part.start(0) if part.text else part.anchor())  # in the cell's order
    return out


def install_text(notebook: Notebook) -> MappedSource:
    """Every shell part and package magic of the notebook (``install_parts``), one after another
    (a newline between them that sits nowhere in the file): where the notebook's own
    ``pip install`` lines are read from."""
    text_parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    anchor = 0
    for cell in notebook.cells:
        for part in install_parts(cell):
            n = len(part.text)
            text_parts.append(part.text + "\n")
            starts.extend(part.start(k) for k in range(n))
            ends.extend(part.end(k) for k in range(n))
            anchor = part.anchor()
            starts.append(anchor)
            ends.append(anchor)
    return MappedSource("".join(text_parts), starts, ends, anchor)
