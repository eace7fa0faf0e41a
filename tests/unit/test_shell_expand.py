"""syntax/shell_expand.py: parameter expansion of the lexer's words, each character located."""
from __future__ import annotations

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
