"""Parameter expansion of the shell lexer's words, with positions.

``expand`` takes a word of ``syntax.shell.lex`` (already unquoted, its ``$…`` substitutions kept
verbatim and listed in ``Word.substitutions``) and replaces ``$NAME``, ``${NAME}``,
``${NAME:-default}`` / ``${NAME-default}``, ``${NAME:=default}``, ``${NAME:+alt}`` and
``${NAME:?msg}`` from the variables known so far. Each character of the result keeps a file
offset: a literal character the offset it is written at, a character that came from a variable
the offset of the variable's own value (the ``ARG``/``ENV`` default, the shell assignment), a
default the offset it is written at. An unknown variable stays as its reference text (so callers
see the ``$``); command substitutions and other forms (``${#V}``, ``${V/a/b}``, ``$1``) stay
verbatim too. Nothing runs.
"""
from __future__ import annotations

from collections.abc import Mapping

from kimi_lsp import _regex
from kimi_lsp._record import dataclass
from kimi_lsp.syntax.shell import FlatSource, Word, lex
from kimi_lsp.text import Span

_BRACED_RE = _regex.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=+?])([^}]*))?\}")
_PLAIN_RE = _regex.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True, slots=True)
class Expanded:
    """A word's value after expansion, the file offset of each character (None: made up, e.g. a
    JSON escape), and the span of the raw word (quotes included)."""

    text: str
    offsets: tuple[int | None, ...]
    span: Span

    def tail(self, k: int) -> Expanded:
        """The value from character ``k`` on (``NAME=value``: the value)."""
        return Expanded(self.text[k:], self.offsets[k:], self.span)


def literal(word: Word) -> Expanded:
    """``word`` taken as it is (no expansion): each character at the offset it is written at."""
    return Expanded(word.value, _char_offsets(word, 0, len(word.value)), word.token.span)


def _char_offsets(word: Word, a: int, b: int) -> tuple[int | None, ...]:
    # an escaped character (``\\$``) spans the backslash and itself: it sits at its last offset
    return word.chars.offsets(a, b)


def expand(word: Word, env: Mapping[str, Expanded]) -> Expanded:
    """``word`` with the parameter expansions of its substitutions done from ``env``."""
    value = word.value
    if not word.substitutions:
        return literal(word)
    text: list[str] = []
    offsets: list[int | None] = []

    def emit(a: int, b: int) -> None:
        text.append(value[a:b])
        offsets.extend(_char_offsets(word, a, b))

    def emit_var(name: str, i: int, j: int, default: tuple[int, int] | None, op: str | None) -> None:
        var = env.get(name)
        if var is not None and (var.text or not (op or "").startswith(":")):
            if op and op.endswith("+"):
                if default is not None:
                    emit(*default)
                return
            text.append(var.text)
            offsets.extend(var.offsets)
            return
        if op and op.lstrip(":") in ("-", "=") and default is not None:
            emit(*default)
            return
        if op and op.lstrip(":") == "+":
            return
        emit(i, j)  # unknown: keep the reference text

    done = 0
    for a, b in word.substitutions:
        emit(done, a)
        i = a
        while i < b:
            if value[i] == "$":
                m = _BRACED_RE.match(value, i, b)
                if m:
                    default = (m.start(3), m.end(3)) if m.group(3) is not None else None
                    emit_var(m.group(1), i, m.end(), default, m.group(2))
                    i = m.end()
                    continue
                m = _PLAIN_RE.match(value, i, b)
                if m:
                    emit_var(m.group(1), i, m.end(), None, None)
                    i = m.end()
                    continue
            emit(i, i + 1)
            i += 1
        done = b
    emit(done, len(value))
    return Expanded("".join(text), tuple(offsets), word.token.span)


def expand_text(text: str, a: int, b: int, env: Mapping[str, Expanded], *, escape: str = "\\") -> Expanded:
    """``text[a:b]`` read as one value (a Dockerfile ``ARG``/``ENV`` default, legacy ``ENV NAME a b``
    included): its words expanded, the text between them kept as written."""
    commands, _ = lex(FlatSource(text[a:b], a), escape=escape)
    words = sorted((w for c in commands for w in (*c.words, *c.assignment_words)), key=lambda w: w.token.span.start)
    parts: list[str] = []
    offsets: list[int | None] = []
    at = a
    for word in words:
        span = word.token.span
        got = expand(word, env)
        parts += [text[at : span.start], got.text]
        offsets += [*range(at, span.start), *got.offsets]
        at = span.end
    parts.append(text[at:b])
    offsets += range(at, b)
    return Expanded("".join(parts), tuple(offsets), Span(a, b))
