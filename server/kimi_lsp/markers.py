"""PEP 508 environment markers of the plainest kind, evaluated without ``packaging.markers``.

A lock's pins carry markers (``uv export`` writes ``platform_machine == 'x86_64' and sys_platform
== 'linux'`` on every package of a pylock.toml), and the flashinfer rules ask whether a pin can
apply on a Linux GPU host. ``packaging.markers`` answers exactly, but importing it (with
``packaging.tags``, ``subprocess``, ``platform``, ``dataclasses``, ...) costs ~15 ms, half of a
one-file check. ``plain`` reads the subset whose answer needs nothing of that: ``==`` and ``!=``
between one of the platform variables the rules set themselves (``PLATFORM_KEYS``) on the left
and a quoted word that no PEP 440 version could be, joined by ``and``, ``or`` and parentheses.
There every packaging release compares the two strings as strings. Anything else (another
variable, another operator, a version-like value, the variable on the right, a syntax error) is
None: the caller asks packaging. ``tests/unit/test_markers.py`` holds the answers to packaging's.
"""
from __future__ import annotations

from kimi_lsp import _regex

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import TypeAlias

    # a comparison (variable, "==" or "!=", value), or ("and" | "or", [operands])
    Plain: TypeAlias = "tuple[str, str, str] | tuple[str, list[Plain]]"

# The variables the flashinfer rules set for the host they judge (rules/_flashinfer.py): the
# others would come from the linting interpreter's own environment.
PLATFORM_KEYS = frozenset({"sys_platform", "platform_system", "os_name", "platform_machine"})

_TOKEN = _regex.compile(r"""[ \t]*(?:(\(|\)|==|!=)|\b(and|or)\b|([A-Za-z_][A-Za-z0-9_.]*)|'([^']*)'|"([^"]*)")""")
# A value that no specifier ``==value`` / ``!=value`` could read as a version: a word that does
# not start with a digit, nor with a ``v`` and a digit (PEP 440 allows a leading ``v``).
_WORD = _regex.compile(r"(?![vV][0-9])[A-Za-z_][A-Za-z0-9_]*")


def plain(marker: str) -> Plain | None:
    """The marker parsed, when it is in the plain subset; else None (ask packaging)."""
    tokens: list[tuple[str, str]] = []  # (kind, text): "op", "bool", "var", "str"
    pos, n = 0, len(marker)
    while pos < n:
        m = _TOKEN.match(marker, pos)
        if m is None:
            if marker[pos:].strip(" \t"):
                return None
            break
        pos = m.end()
        op, boolean, var, single, double = m.groups()
        if op is not None:
            tokens.append(("op", op))
        elif boolean is not None:
            tokens.append(("bool", boolean))
        elif var is not None:
            tokens.append(("var", var))
        else:
            tokens.append(("str", single if single is not None else double))
    parser = _Parser(tokens)
    try:
        tree = parser.disjunction()
    except ValueError:
        return None
    return tree if parser.at == len(tokens) else None


def evaluate(tree: Plain, env: Mapping[str, str]) -> bool:
    """``Marker(marker).evaluate(env)`` for a marker ``plain`` read (``env`` sets every variable
    of ``PLATFORM_KEYS``)."""
    if len(tree) == 3:
        var, op, value = tree
        return (env[var] == value) is (op == "==")
    kind, parts = tree
    if kind == "and":
        return all(evaluate(p, env) for p in parts)
    return any(evaluate(p, env) for p in parts)


class _Parser:
    """``marker_or := marker_and ('or' marker_and)*``, ``marker_and := atom ('and' atom)*``,
    ``atom := '(' marker_or ')' | VAR ('==' | '!=') STRING`` (PEP 508's grammar, restricted)."""

    __slots__ = ("tokens", "at")

    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.at = 0

    def _next(self) -> tuple[str, str]:
        if self.at >= len(self.tokens):
            raise ValueError("the marker ends early")
        tok = self.tokens[self.at]
        self.at += 1
        return tok

    def _peek(self, kind: str, text: str) -> bool:
        return self.at < len(self.tokens) and self.tokens[self.at] == (kind, text)

    def disjunction(self) -> Plain:
        return self._joined("or", self.conjunction)

    def conjunction(self) -> Plain:
        return self._joined("and", self.atom)

    def _joined(self, word: str, operand: Callable[[], Plain]) -> Plain:
        """``operand (word operand)*``: the operand itself when there is one."""
        parts = [operand()]
        while self._peek("bool", word):
            self.at += 1
            parts.append(operand())
        return parts[0] if len(parts) == 1 else (word, parts)

    def atom(self) -> Plain:
        kind, text = self._next()
        if (kind, text) == ("op", "("):
            inner = self.disjunction()
            if self._next() != ("op", ")"):
                raise ValueError("an unclosed parenthesis")
            return inner
        if kind != "var" or text not in PLATFORM_KEYS:
            raise ValueError("not a platform variable on the left")
        op_kind, op = self._next()
        value_kind, value = self._next()
        if op_kind != "op" or op not in ("==", "!=") or value_kind != "str" or not _WORD.fullmatch(value):
            raise ValueError("not a plain comparison")
        return (text, op, value)


__all__ = ["PLATFORM_KEYS", "evaluate", "plain"]
