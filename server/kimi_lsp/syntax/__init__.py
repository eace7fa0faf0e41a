"""The one reader per language, with positions: shell, Dockerfile, YAML, TOML.

Everything above this floor (``surfaces/`` asks "where is the launch", ``pins/`` asks "which words
are pins", ``config.py``) reads text through these modules and never lexes it again. Modules here
import only the standard library, PyYAML/tomllib, and ``kimi_lsp.text`` / ``kimi_lsp.diagnostics`` /
``kimi_lsp._record`` (tests/unit/test_syntax.py checks it).
"""
from __future__ import annotations

from kimi_lsp._record import dataclass
from kimi_lsp.text import Located, Span

# The records a reader hands up. ``surfaces.model`` re-exports them: a launch's argv is made of
# the lexer's tokens, not copies of them.


@dataclass(frozen=True, slots=True)
class Token:
    """One argv word: its value after unquoting, and the span of its raw text (quotes included).

    ``exact`` is False when the value was assembled from text that does not map 1:1 onto the
    span (variable expansion, escapes); rules then must not offer edits inside the token.
    """

    value: str
    span: Span
    exact: bool = True


@dataclass(frozen=True, slots=True)
class EnvVar:
    name: Located[str]
    value: Located[str] | None  # None: set without a value we can know (e.g. ``ENV X`` from ARG)


@dataclass(frozen=True, slots=True)
class SyntaxProblem:
    """The file could not be parsed (becomes KL001 when the file is a launch file)."""

    message: str
    span: Span
