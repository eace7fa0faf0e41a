"""The requirements and uv.lock scanners are linear in their input (issue 32, red-team finding F3).

Four regular expressions backtracked over a run of spaces or over one inline table's keys:
pip's ``(^|\\s+)#.*$`` (now ``requirements.comment_start``, a hand scan), the simple-requirement
check in ``_pep508`` (``\\s*NAME\\s*(EXTRAS)?\\s*(SPEC)?\\s*``: cubic), the ``name @ url`` test, and
uv_lock's repeated-key search (``(?:\\{ |, )(KEY) = [^{}]*?, \\1 = ``). Each replacement is held
here to the old pattern's answers on generated input, and its cost is counted (backtracking
steps of a model of the regex engine, or calls), never timed.
"""
from __future__ import annotations

import random
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kimi_lsp.pins import _pep508, requirements
from kimi_lsp.syntax import uv_lock
from kimi_lsp.workspace import SourceText

from tests.unit._regex_steps import steps

OLD_COMMENT = re.compile(r"(^|\s+)#.*$")
_N = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_OP = r"(?:===|==|!=|~=|<=|>=|<|>)"
OLD_SIMPLE = re.compile(
    rf"\s*{_N}\s*(?:\[\s*(?:{_N}(?:\s*,\s*{_N})*)?\s*\])?\s*"
    rf"(?P<spec>{_OP}\s*[^\s,;()\[\]]+(?:\s*,\s*{_OP}\s*[^\s,;()\[\]]+)*)?\s*"
)
OLD_DIRECT_REF = re.compile(r"^[A-Za-z0-9._-]+\s*(\[[^\]]*\])?\s*@")
OLD_REPEATED_KEY = re.compile(r"(?:\{ |, )([A-Za-z0-9_-]+) = [^{}]*?, \1 = ")


def _strings(rng: random.Random, alphabet: list[str], count: int, longest: int) -> list[str]:
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest))) for _ in range(count)]


# -- the same answers ---------------------------------------------------------------------------


def test_comment_start_is_pips_comment_pattern() -> None:
    rng = random.Random(32)
    alphabet = [" ", " ", "\t", "#", "#", "a", "=", "\n", "\r", "\u00a0", "\u2028", "\x0b"]
    cases = _strings(rng, alphabet, 30_000, 12) + ["#", " #", "a#b", "a #b", "a # b\n", "# a\nb", "a\n#b\n", ""]
    for s in cases:
        m = OLD_COMMENT.search(s)
        assert requirements.comment_start(s) == (m.start() if m else None), repr(s)


def test_the_simple_requirement_pattern_accepts_what_it_did() -> None:
    rng = random.Random(33)
    alphabet = ["a", "b", "1", " ", " ", "\t", "[", "]", ",", "=", "==", ">=", "<", "~=", "!", ".", "-", ";", "(", "@", "*"]
    cases = _strings(rng, alphabet, 30_000, 9)
    cases += ["a", " a ", "a [b , c ] >= 1 , < 2 ", "a[]", "a [ ]==1", "a==1,", "a ===1", "a>=1 ,<2;x", "a==1.*"]
    # requirement-shaped: the parts of a full one, some dropped or doubled, any whitespace between
    parts = ["flash-infer", "[", "a.b", ",", "c", "]", ">=", "0.6", ",", "<", "1!2", ",", "==", "0.*"]
    for _ in range(30_000):
        kept = [p for p in parts for _ in range(rng.choice((0,) + (1,) * 20 + (2,)))]
        kept += [";"] * (rng.random() < 0.1)
        cases.append("".join(p + rng.choice(("", "", " ", "\t", "  ")) for p in kept))
    new = _pep508._SIMPLE_REQUIREMENT
    accepted = 0
    for s in cases:
        old, got = OLD_SIMPLE.fullmatch(s), new.fullmatch(s)
        assert (old is None) == (got is None), repr(s)
        if old is not None and got is not None:
            accepted += 1
            assert old.group("spec") == got.group("spec"), repr(s)
    assert accepted > 3_000  # the generated strings reach both answers


def test_the_direct_reference_pattern_accepts_what_it_did() -> None:
    rng = random.Random(34)
    alphabet = ["a", "1", ".", "-", " ", " ", "\t", "[", "]", "@", "x", "\n"]
    for s in _strings(rng, alphabet, 30_000, 10) + ["a @ u", "a[b] @u", "a [ b ]  @ u", "a@", "@a", "a [@"]:
        assert (OLD_DIRECT_REF.match(s) is None) == (requirements.DIRECT_REF_RE.match(s) is None), repr(s)


def test_repeated_key_finds_what_the_backreference_found() -> None:
    rng = random.Random(35)
    alphabet = ["{ ", " }", "{", "}", ", ", "a = ", "b = ", "ab = ", "a", "b", '""', "0", "[", "]", " = ", ","]
    cases = _strings(rng, alphabet, 20_000, 10) + ["{ a = 0, a = 0 }", "{ a = { a = 0 }, b = 0 }", "{ a = 0 }, a = 0"]
    for _ in range(20_000):  # table-shaped: keys from a few names, values scalars, arrays or tables
        cases.append(rng.choice(("{ ", "")) + ", ".join(
            rng.choice(("a", "b", "ab", "a-b")) + " = " + rng.choice(('""', "0", "[0, 1]", "{ a = 0 }", "{ b = 0, b = 1 }", "{}"))
            for _ in range(rng.randint(0, 4))) + rng.choice((" }", "")))
    found = 0
    for s in cases:
        want = OLD_REPEATED_KEY.search(s) is not None
        assert uv_lock._repeated_key(s) == want, repr(s)
        found += want
    assert 5_000 < found < 35_000


# -- linear cost --------------------------------------------------------------------------------


def _ratio(cost: Callable[[int], int], n: int) -> float:
    return cost(2 * n) / cost(n)


@pytest.mark.parametrize(
    ("make", "was_linear"),
    [
        pytest.param(lambda n: "flashinfer-python" + " " * n + "y", False, id="name-spaces-letter"),
        pytest.param(lambda n: "a" + " " * n + "[" + " " * n + "b" + " " * n + "x", False, id="extras-spaces"),
        pytest.param(lambda n: "a" + " " * n + "==" + " " * n + "1" + " " * n + "x", False, id="clause-spaces"),
        pytest.param(lambda n: "a==1" + ", ==1" * (n // 5) + " " * n + "x", True, id="many-clauses"),
    ],
)
def test_the_simple_requirement_pattern_backtracks_linearly(make: Callable[[int], str], was_linear: bool) -> None:
    """Steps of a backtracking matcher (the regex engine's model, without its shortcuts) at n and 2n:
    the old pattern's ratio is ~4 or ~8 (quadratic, cubic), the new one's ~2."""
    old = _ratio(lambda n: steps(OLD_SIMPLE, make(n), "fullmatch"), 60)
    new = _ratio(lambda n: steps(_pep508._SIMPLE_REQUIREMENT, make(n), "fullmatch"), 60)
    assert new < 2.3, new
    assert was_linear or old > 3.5, old  # (the counter sees what the engine did)


def test_the_direct_reference_pattern_backtracks_linearly() -> None:
    def make(n: int) -> str:
        return "flashinfer-python" + " " * n + "y"

    assert _ratio(lambda n: steps(OLD_DIRECT_REF, make(n), "match"), 100) > 3.5
    assert _ratio(lambda n: steps(requirements.DIRECT_REF_RE, make(n), "match"), 100) < 2.3


def test_the_key_or_brace_pattern_is_linear_in_a_tables_keys() -> None:
    def table(n: int) -> str:
        return "{ " + ", ".join(f'k{i} = ""' for i in range(n)) + " }"

    assert _ratio(lambda n: steps(OLD_REPEATED_KEY, table(n), "search"), 40) > 3.5
    assert _ratio(lambda n: steps(uv_lock._KEY_OR_BRACE, table(n), "finditer"), 40) < 2.3


def _calls(fn: Callable[[], object]) -> int:
    """Python and builtin calls made by ``fn`` (an operation count a busy machine does not change)."""
    count = 0

    def prof(_frame: object, event: str, _arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def test_comment_start_costs_one_pass() -> None:
    """A line of n spaces, one of n ``#`` glued to words, one of n spaced ``#`` after a line break:
    the scan makes a bounded number of calls per ``#`` and none per space."""
    for make in (lambda n: " " * n + "x", lambda n: "a#" * n, lambda n: " #" * n + "\nx"):
        small = _calls(lambda: requirements.comment_start(make(2_000)))
        large = _calls(lambda: requirements.comment_start(make(4_000)))
        assert large <= 2.2 * small + 10, (small, large)
    assert _calls(lambda: requirements.comment_start(" " * 100_000 + "x")) < 10


def test_a_requirements_file_with_a_line_of_spaces_reads_in_linear_steps() -> None:
    """The red team's file: two pins and one line of n spaces and a letter (30 KB held a check for 12 s)."""

    def cost(n: int) -> int:
        text = "sglang==0.5.23\nflashinfer-python==0.6.16.post4\n" + " " * n + "x\n" + "flashinfer-python" + " " * n + "y\n"
        src = SourceText(Path("/x/requirements.txt"), text)
        return _calls(lambda: requirements.read_requirements(src))

    cost(10)  # (imports made on the first read are not counted)
    assert _ratio(cost, 4_000) < 2.3


def test_one_inline_table_of_many_keys_costs_linear_calls() -> None:
    def cost(n: int) -> int:
        value = "{ registry = \"r\", " + ", ".join(f'k{i} = "x"' for i in range(n)) + " }"
        return _calls(lambda: uv_lock.inline_duplicates(value))

    assert _ratio(cost, 2_000) < 2.2
