"""syntax/shell_expand.py: parameter expansion of the lexer's words, each character located."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.syntax.shell import FlatSource, lex
from kimi_lsp.syntax.shell_expand import Expanded, expand, expand_text
from kimi_lsp.text import Span


def _words(text: str) -> list:
    commands, _ = lex(FlatSource(text))
    return [w for c in commands for w in c.words]


def test_variables_take_the_offsets_of_their_value() -> None:
    env = {"V": Expanded("1.2", (100, 101, 102), Span(98, 103))}
    text = 'pip install "a==${V}" b==$V c==${X:-3} d==${V:+9} e==$X \'f==$V\' g==\\$V'
    got = {e.text.split("==")[0]: e for e in (expand(w, env) for w in _words(text)[2:])}
    assert got["a"].text == "a==1.2" and got["a"].offsets[3:] == (100, 101, 102)
    assert got["a"].offsets[:3] == tuple(range(13, 16))  # after the opening quote
    assert got["b"].text == "b==1.2"
    c = got["c"]
    assert c.text == "c==3" and text[c.offsets[3]] == "3"  # a default sits where it is written
    assert got["d"].text == "d==9"
    e = got["e"]
    assert e.text == "e==$X" and text[e.offsets[3]] == "$"  # unknown: the reference text stays
    assert got["f"].text == "f==$V"  # single quotes: no expansion
    g = got["g"]
    assert g.text == "g==$V" and text[g.offsets[3]] == "$"  # escaped dollar: at the '$', not the backslash


def test_expand_text_keeps_the_text_between_words() -> None:
    text = 'x a "b ${V}" c'
    env = {"V": Expanded("1", (50,), Span(50, 51))}
    got = expand_text(text, 2, len(text), env)
    assert got.text == "a b 1 c"
    assert got.offsets == (2, 3, 5, 6, 50, 12, 13)


def _all_words(commands):  # type: ignore[no-untyped-def]
    for c in commands:
        yield from c.words
        yield from c.assignment_words
        for a in c.arrays:
            yield from a.words


_SHELL_SAMPLES = [
    p for p in sorted(Path(__file__).resolve().parent.parent.rglob("*"))
    if p.is_file() and (p.suffix == ".sh" or p.name.startswith("Dockerfile")) and "node_modules" not in p.parts
]


@pytest.mark.parametrize("path", _SHELL_SAMPLES, ids=lambda p: p.name)
def test_character_offsets_equal_the_per_character_mapping(path: Path) -> None:
    """``Source.offsets`` (computed from a word's segments) is ``end(k) - 1`` per character."""

    text = path.read_text("utf-8", errors="replace")
    text += '\nx=a\\$b"c\\"d"\'e\' "${HOME}x" $\'\\n\' run --flag="v 1"\\\n  next\n'
    fresh, _ = lex(FlatSource(text, 7))
    mapped, _ = lex(FlatSource(text, 7))
    for w_fresh, w_mapped in zip(_all_words(fresh), _all_words(mapped), strict=True):
        n = len(w_fresh.value)
        fast = w_fresh.chars.offsets(0, n)  # before anything maps the word
        slow = tuple(w_mapped.chars.end(k) - 1 for k in range(n))  # maps it
        assert fast == slow, w_fresh.value
        assert w_mapped.chars.offsets(0, n) == slow  # ... and once mapped
        if n > 2:
            assert w_fresh.chars.offsets(1, n - 1) == slow[1 : n - 1]
