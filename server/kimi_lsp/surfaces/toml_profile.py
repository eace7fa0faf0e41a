"""kimi-lsp TOML launch profiles: the ``[sglang]`` table of any ``*.toml``.

Keys are flag names without ``--`` (dashes or underscores), values as in the YAML config;
``[sglang.env]`` holds environment variables for the launch. sglang itself reads no TOML (its
``--config`` rejects ``.toml``), so this format is kimi-lsp's own.

Values and syntax errors come from ``tomllib``; positions from a small scanner that runs only on
text ``tomllib`` accepted (so it can assume valid TOML) and records, for every key path, the
span of its last key part, of its value, and of each array item.
"""
from __future__ import annotations

import re
from pathlib import Path

from kimi_lsp._record import dataclass
from kimi_lsp._toml import tomllib
from kimi_lsp.surfaces.model import (
    ConfigEntry,
    ConfigFile,
    Entry,
    EnvVar,
    LaunchCommand,
    Surface,
    SurfaceResult,
    SyntaxProblem,
)
from kimi_lsp.text import Located, Span

SGLANG_TABLE_RE = re.compile(r"^[ \t]*(?:\[[ \t]*[\"']?sglang[\"']?[ \t]*[.\]]|[\"']?sglang[\"']?[ \t]*[.=])", re.MULTILINE)
_SGLANG_HEADER_RE = re.compile(r"^[ \t]*\[[ \t]*[\"']?sglang[\"']?[ \t]*[.\]]", re.MULTILINE)
_LOCATION_RE = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$|\s*\(at end of document\)\s*$")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class TomlLoc:
    key: Span  # the last key part as written (quotes included)
    value: Span  # the value (a table header's whole `[...]` for a table)
    items: tuple[Span, ...] = ()


def has_sglang_table(text: str) -> bool:
    """Whether the text defines a top-level ``sglang`` table (a broken file: a header for it)."""
    if SGLANG_TABLE_RE.search(text) is None:  # cheap filter for the common case
        return False
    try:
        return isinstance(tomllib.loads(text).get("sglang"), dict)
    except (tomllib.TOMLDecodeError, RecursionError):  # tomllib recurses per nesting level
        return _SGLANG_HEADER_RE.search(text) is not None


def _deep_nesting_span(text: str, limit: int = 100) -> Span:
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


def toml_problem(exc: tomllib.TOMLDecodeError, text: str) -> SyntaxProblem:
    message = str(exc)
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


class _Scanner:
    """Key and value positions of a valid TOML document."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)
        self.found: dict[tuple[str, ...], TomlLoc] = {}

    def at(self, i: int) -> str:
        return self.s[i] if i < self.n else ""

    def blank(self, i: int, newlines: bool) -> int:
        while i < self.n:
            c = self.s[i]
            if c in " \t" or (newlines and c in "\r\n"):
                i += 1
            elif c == "#":
                while i < self.n and self.s[i] not in "\r\n":
                    i += 1
            else:
                break
        return i

    def _basic_end(self, i: int) -> int:
        j = i + 1
        while j < self.n and self.s[j] != '"':
            j += 2 if self.s[j] == "\\" else 1
        return min(j + 1, self.n)

    def keys(self, i: int) -> tuple[list[tuple[str, Span]], int]:
        parts: list[tuple[str, Span]] = []
        while i < self.n:
            i = self.blank(i, False)
            c = self.at(i)
            if c == '"':
                j = self._basic_end(i)
                try:
                    name = tomllib.loads(f"k = {self.s[i:j]}")["k"]
                except (tomllib.TOMLDecodeError, KeyError):
                    name = self.s[i + 1 : j - 1]
            elif c == "'":
                j = self.s.find("'", i + 1)
                j = self.n if j < 0 else j + 1
                name = self.s[i + 1 : j - 1]
            else:
                m = _BARE_KEY.match(self.s, i)
                if m is None:
                    break
                j, name = m.end(), m.group(0)
            parts.append((name, Span(i, j)))
            i = self.blank(j, False)
            if self.at(i) != ".":
                break
            i += 1
        return parts, i

    def value(self, i: int, path: tuple[str, ...] | None) -> tuple[Span, tuple[Span, ...], int]:
        s = self.s
        for quote in ('"""', "'''"):
            if s.startswith(quote, i):
                j = i + 3
                while j < self.n:
                    if quote == '"""' and s[j] == "\\":
                        j += 2
                        continue
                    if s.startswith(quote, j):
                        end = j + 3
                        while end < self.n and s[end] == quote[0] and end - j < 5:
                            end += 1  # up to two quotes may end the content: """a"""""
                        return Span(i, end), (), end
                    j += 1
                return Span(i, self.n), (), self.n
        c = self.at(i)
        if c == '"':
            j = self._basic_end(i)
            return Span(i, j), (), j
        if c == "'":
            j = s.find("'", i + 1)
            j = self.n if j < 0 else j + 1
            return Span(i, j), (), j
        if c == "[":
            items: list[Span] = []
            j = self.blank(i + 1, True)
            while j < self.n and s[j] != "]":
                span, _, j = self.value(j, None)
                items.append(span)
                j = self.blank(j, True)
                if self.at(j) == ",":
                    j = self.blank(j + 1, True)
                elif self.at(j) != "]":
                    break  # not valid TOML after all; stop rather than loop
            return Span(i, min(j + 1, self.n)), tuple(items), min(j + 1, self.n)
        if c == "{":
            j = self.blank(i + 1, True)
            while j < self.n and s[j] != "}":
                parts, j = self.keys(j)
                if not parts or self.at(j) != "=":
                    break
                j = self.blank(j + 1, False)
                span, items_, j = self.value(j, None if path is None else path + tuple(p for p, _ in parts))
                if path is not None:
                    self.record(path, parts, span, items_)
                j = self.blank(j, True)
                if self.at(j) == ",":
                    j = self.blank(j + 1, True)
            return Span(i, min(j + 1, self.n)), (), min(j + 1, self.n)
        j = i
        while j < self.n and s[j] not in ",]}#\r\n":
            j += 1
        end = j
        while end > i and s[end - 1] in " \t":
            end -= 1
        return Span(i, end), (), j

    def record(self, table: tuple[str, ...], parts: list[tuple[str, Span]], value: Span, items: tuple[Span, ...]) -> None:
        names = tuple(p for p, _ in parts)
        for k in range(1, len(parts)):  # dotted keys define their parent tables too
            self.found.setdefault(table + names[:k], TomlLoc(parts[k - 1][1], Span(parts[0][1].start, value.end)))
        self.found[table + names] = TomlLoc(parts[-1][1], value, items)

    def run(self) -> dict[tuple[str, ...], TomlLoc]:
        table: tuple[str, ...] = ()
        i = 0
        while i < self.n:
            i = self.blank(i, True)
            if i >= self.n:
                break
            if self.s[i] == "[":
                array = self.s.startswith("[[", i)
                parts, j = self.keys(i + (2 if array else 1))
                j = self.blank(j, False)
                end = j + (2 if array else 1)
                if not parts:
                    i = end
                    continue
                table = tuple(p for p, _ in parts) + (("[]",) if array else ())
                self.found.setdefault(table, TomlLoc(parts[-1][1], Span(i, min(end, self.n))))
                i = end
                continue
            parts, j = self.keys(i)
            if not parts or self.at(j) != "=":
                eol = self.s.find("\n", i)  # cannot happen in valid TOML; skip the line
                i = self.n if eol < 0 else eol + 1
                continue
            j = self.blank(j + 1, False)
            span, items, j = self.value(j, table + tuple(p for p, _ in parts))
            self.record(table, parts, span, items)
            i = j
        return self.found


def scan(text: str) -> dict[tuple[str, ...], TomlLoc]:
    """Positions of every key path in a TOML text that ``tomllib`` accepted."""
    return _Scanner(text).run()


def _env_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def read_toml(path: Path, text: str, *, forced: bool = False) -> SurfaceResult:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return SurfaceResult(problems=(toml_problem(exc, text),), is_launch_file=forced or has_sglang_table(text))
    except RecursionError:  # tomllib recurses per nesting level: report where the nesting starts
        problem = SyntaxProblem("TOML syntax error: arrays or tables nested too deeply", _deep_nesting_span(text))
        return SurfaceResult(problems=(problem,), is_launch_file=forced or has_sglang_table(text))
    table = data.get("sglang")
    if not isinstance(table, dict):
        note = ("no [sglang] table",) if forced else ()
        return SurfaceResult(is_launch_file=forced, notes=note)
    locs = scan(text)
    header = locs.get(("sglang",))
    fallback = header.key if header else Span(0, 0)
    entries: list[ConfigEntry] = []
    env: list[EnvVar] = []
    for key, value in table.items():
        loc = locs.get(("sglang", key))
        if key == "env" and isinstance(value, dict):
            for name, raw in value.items():
                env_loc = locs.get(("sglang", "env", name))
                name_span = env_loc.key if env_loc else fallback
                value_span = env_loc.value if env_loc else fallback
                env.append(EnvVar(Located(name, name_span), Located(_env_value(raw), value_span)))
            continue
        entries.append(
            ConfigEntry(
                key=Located(key, loc.key if loc else fallback),
                value=value,
                value_span=loc.value if loc else fallback,
                item_spans=loc.items if loc and isinstance(value, list) else (),
            )
        )
    entries.sort(key=lambda e: e.key.span.start)
    spans = [e.value_span for e in entries] + [e.key.span for e in entries]
    if header is not None:
        spans.append(header.value)
    span = Span(min(s.start for s in spans), max(s.end for s in spans)) if spans else Span(0, 0)
    program = Located("[sglang]", header.value if header else Span(span.start, span.start))
    config = ConfigFile(path=path, format="toml", entries=tuple(entries), env=tuple(env))
    launch = LaunchCommand(
        path=path,
        surface=Surface.TOML,
        entry=Entry.CONFIG_FILE,
        program=program,
        argv=(),
        span=span,
        base_dir=path.parent,
        env=tuple(env),
        config=config,
    )
    return SurfaceResult(launches=(launch,), is_launch_file=True)
