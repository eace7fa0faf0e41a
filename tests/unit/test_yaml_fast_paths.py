"""The YAML reader's fast paths (implicit int resolution, plain-scalar construction) give what
``yaml.safe_load`` gives, value and type, for every scalar shape YAML 1.1 treats specially."""
from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kimi_lsp.surfaces.shell import MappedSource
from kimi_lsp.syntax.yaml import ScalarChars, construct, load

TRICKY = [
    "0", "00", "007", "08", "10", "1_000", "+5", "-5", "0x1F", "0b101", "1:30", "190:20:30", "1.5", "1e3",
    "1.0e+3", ".inf", ".NaN", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "yes", "No", "ON", "off", "y",
    "n", "true", "False", "~", "null", "Null", "", "a", "12a", "١٢", "²", "9" * 30, "'1'", '"2"', "!!str 3",
    "!!int '4'", "[1, 2]", "{a: 1}", "- x", "0o17", "1,000", "1 000",
]


def _mapped(c: ScalarChars) -> MappedSource:
    return MappedSource(c.text, c.starts, c.ends, c.anchor)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    return type(a) is type(b) and (a == b if not isinstance(a, (list, dict)) else repr(a) == repr(b))


def _check(doc: str) -> None:
    try:
        expected = yaml.safe_load(doc)
    except yaml.YAMLError:
        return
    loaded = load(doc)
    if expected is None and not loaded.docs:
        return  # an empty stream
    assert loaded.docs, doc
    assert _same(construct(loaded.docs[0], doc), expected), doc


def test_tricky_scalars_alone_in_lists_and_as_values() -> None:
    for s in TRICKY:
        _check(f"{s}\n")
        _check(f"key: {s}\n")
        _check(f"key:\n  - {s}\n  - 1\n")
        _check(f"[{s}, 2, 3]\n")
    _check("!!omap\n- a: 1\n- b: 2\n")
    _check("!!set\n? a\n? b\n")
    _check("x: !!pairs\n  - a: 1\n")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(TRICKY), st.from_regex(r"[-+0-9_.:xob]{1,8}", fullmatch=True)), min_size=1, max_size=6))
def test_generated_number_like_lists(items: list[str]) -> None:
    _check("".join(f"- {s}\n" for s in items))
    _check("v: [" + ", ".join(items) + "]\n")


def test_verbatim_scalar_fast_path_maps_like_the_aligner() -> None:
    """scalar_source's shortcut for verbatim scalars equals the general aligner on every scalar
    of every YAML file in the fixture corpus (plain, quoted, escaped, folded, block)."""
    from pathlib import Path

    from kimi_lsp.syntax.ynodes import MappingNode, ScalarNode, SequenceNode

    from kimi_lsp.syntax.yaml import YamlText

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    checked = 0
    for f in sorted(fixtures.rglob("*.y*ml")):
        text = f.read_text("utf-8", errors="replace")
        loaded = load(text)
        y = YamlText(text)
        stack = list(loaded.docs)
        while stack:
            node = stack.pop()
            if isinstance(node, MappingNode):
                stack.extend(x for pair in node.value for x in pair)
            elif isinstance(node, SequenceNode):
                stack.extend(node.value)
            elif isinstance(node, ScalarNode):
                fast = _mapped(y.scalar_source(node))
                slow = _mapped(y._scalar_source_aligned(node, y.start(node), node.end_mark.index))
                # (a verbatim source keeps its offsets as ranges: compared as lists)
                assert (fast.text, list(fast.starts), list(fast.ends), fast.span(0, len(fast.text))) == (
                    slow.text, list(slow.starts), list(slow.ends), slow.span(0, len(slow.text))), (f, node.value)
                checked += 1
    assert checked > 500
