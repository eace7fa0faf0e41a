"""The scan of ``syntax.yaml_scan`` gives exactly the nodes PyYAML gives, or declines.

A one-file ``--check`` of a plain ``--config`` file never imports PyYAML: the scan reads the file
instead. Whatever it accepts must compose, node for node (kind, tag, value, style, flow style,
the offset of every start and end mark), as PyYAML composes it in ``syntax._pyyaml``, construct to
what ``yaml.safe_load`` gives, and lint to the same diagnostics. Everything else it must decline.
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kimi_lsp.syntax import _pyyaml
from kimi_lsp.syntax import yaml as reader
from kimi_lsp.syntax import yaml_scan
from kimi_lsp.syntax.ynodes import MappingNode, Node, ScalarNode, SequenceNode
from tests.unit._mutate import mutate
from tests.unit.test_yaml_fast_paths import TRICKY

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent


def _sig(n: Node) -> tuple:
    base = (n.id, n.tag, n.start_mark.index, n.end_mark.index)
    if n.id == "scalar":
        return (*base, n.value, n.style)
    if n.id == "sequence":
        return (*base, n.flow_style, tuple(_sig(c) for c in n.value))
    return (*base, n.flow_style, tuple((_sig(k), _sig(v)) for k, v in n.value))


def _agrees(text: str) -> bool | None:
    """None when the scan declines; else asserts it equals PyYAML and returns True."""
    got = yaml_scan.scan(text)
    if got is None:
        return None
    ref = _pyyaml.load(text)
    assert not ref.problems, (text, ref.problems)
    assert (len(ref.docs), ref.count) == (len(got[0]), got[1]), text
    for a, b, value in zip(got[0], ref.docs, yaml.safe_load_all(text)):
        assert _sig(a) == _sig(b), text
        assert _same(reader.construct(a, text), value), text
    return True


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and (repr(a) == repr(b) if isinstance(a, (list, dict)) else a == b)


def _yaml_files() -> list[Path]:
    roots = [TESTS / "fixtures", TESTS / "pins_fixtures", TESTS / "data", ROOT / "examples"]
    return sorted(p for r in roots if r.is_dir() for p in r.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


def _texts() -> list[str]:
    out = []
    for p in _yaml_files():
        try:
            out.append(p.read_text("utf-8").removeprefix("\ufeff"))
        except (UnicodeDecodeError, OSError):
            continue
    return out


def test_every_yaml_file_under_tests_scans_as_pyyaml_composes_it() -> None:
    verdicts = [_agrees(t) for t in _texts()]
    assert verdicts.count(True) >= 90  # most --config files and many manifests are in the subset
    assert verdicts.count(None) >= 10  # and the rest is declined, not guessed


def test_mutations_of_the_accepted_files_agree_or_are_declined() -> None:
    """Characters that change YAML's reading (indicators, quotes, blanks, words YAML 1.1 types)
    inserted, deleted, lines doubled or re-indented: 6,000 mutations, seeded."""
    rng = random.Random(16)
    seeds = [t for t in _texts() if len(t) < 20_000 and yaml_scan.scan(t) is not None]
    alphabet = list(" \n-:#'\"[],{}&*!|>?%@`~<=.0123456789abcyYnNoOtTfF_/\\") + [
        "  ", "- ", ": ", " #", "\n  ", "é", "\u2028", "\t", "\r", "\x85", "\ufeff", "1e5", "<<", "yes", "~"]
    accepted = 0
    for _ in range(6000):
        t = mutate(rng, rng.choice(seeds), alphabet)
        accepted += bool(_agrees(t))
    assert accepted > 2000


ACCEPTED = [
    "model-path: moonshotai/Kimi-K3   # the model\ntp-size: 8\n",
    "a: 1\nb: -2\nc: +3\nd: 0\ne: 0.88\nf: -1.5\ng: yes\nh: Off\ni: ~\nj: null\nk:\nl: NULL\nm: TRUE\n",
    "a: 1.\nb: 5.0e-2\nc: -1.5E+3\ne: 0.5.23\nf: 1.2.3.4\ng: [0.6.17, 0.88]\n",
    "a: -foo\nb: +x\nc: http://h:8080/p#frag\nd: a#b\ne: x, [y] {z}\nf: '#1'\ng: \"a: b\"\nh: ''\n",
    "bs: [1, 2, 4]\ne: []\nq: ['a', \"b\", c d]\n",
    "labels: {app: sglang-1, tier: 'gpu'}\nports: [{port: 80}, {port: 443, name: \"tls\"}]\nnone: {}\nsp: { a: 1 , b: -x }\n",
    "seq:\n- a\n- b: 1\n  c: 2\n-\nnested:\n  a: 1\n\n  b: on\n# end",
    "spec:\n  containers:\n    - name: x\n      args:\n      - --tp\n      - 8\n      env:\n        - name: A\n          value: '1'\n",
    "on: [push]\nyes: 1\n_x: 2\nnull: 3\n",
    "- a\n- b\n",
    "k: é ✓ 🚀\n# 中文注释\nv: \"中文\"\n",
    "a: 1",
    "run: |\n  python -m sglang.launch_server \\\n    --tp 8  # not a comment\n\n  # nor this\n   \n\nnext: |-\n  x\n  y\n\n",
    "steps:\n  - name: serve\n    run: |\n      echo 1\n  - run: |\n      echo 2\n",
    "a: |\n  x",
    "a: |\n  x\n  ", "a: |\n  x\n\n  ", "a: |\n  x\n     ", "a: |-\n  x\n     \n", "a: |\n  x\n   y",
    "---\na: 1\n",
    "# head\n--- # first\na: 1\n---\n- b\n---   \nc:\n  d: [1]\n# tail\n",
    "a: 1\n---\nb: 2",
    "a:\n  # comment\n  b: 1\n    # deeper comment\nc: 2\n",
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_the_shapes_of_the_subset_are_accepted(text: str) -> None:
    assert _agrees(text) is True


DECLINED = [
    "",  # empty: PyYAML says what an empty stream is
    "# only a comment\n",
    "a: 1\n...\n",
    "--- a: 1\n",
    "---\n---\na: 1\n",
    "a: 1\n---\n",
    "---\n  a: 1\n",
    "---x: 1\n",
    "%YAML 1.1\n---\na: 1\n",
    "a: &x 1\nb: *x\n",
    "a: !!str 1\n",
    "a: >\n  text\n",
    "a: |+\n  text\n\n",
    "a: |2\n   text\n",
    "a: |-2\n   text\n",
    "a: | x\n  text\n",
    "a: |#c\n  text\n",
    "a: |\n\n  text\n",  # leading blank lines
    "a: |\nb: 1\n",  # an empty block scalar
    "a: |",
    "a:\n  b: |\n  x\n",  # content not indented past its mapping
    "a: |\n    x\n  y\n",  # a line between the mapping's indentation and the content's
    "a: 0x1F\n", "a: 010\n", "a: 1_000\n", "a: 1_0.5\n", "a: 2024-01-01\n", "a: .5\n", "a: .inf\n", "a: 1e+5\n", "a: 1e5\n", "a: 1.2.3-rc1\n", "a: 8080:30\n",
    "a: 1:30\n", "<<: {b: 1}\n", "a: =\n",
    "a: {b: [1]}\n", "a: {b}\n", "a: {b: 1,}\n", "a: {'b': 1}\n", "a: {b:1}\n", "a: {b: }\n", "a: {b: 1\n", "a: {b: 1} x\n",
    "a: [{b: {c: 1}}]\n", "a: {b: http://x}\n",
    "a: [1,\n  2]\n",
    "a: [1, 2,]\n",
    "a: [[1]]\n",
    "a: multi\n  line\n",
    "a: 'it''s'\n",
    'a: "esc\\n"\n',
    "a:\tb\n",
    "a: 1\r\nb: 2\r\n",
    "\ufeffa: 1\n",
    "a: x\u2028y\n",
    "'quoted key': 1\n",
    "? complex\n: key\n",
    "8080: port\n",
    "a: b: c\n",
    "a: b:\n",
    "  a: 1\n",
    "a: 1\n - b\n",
    "a: 1\n  b: 2\n",
    "a:\n  - 1\n b: 2\n",
    "- - a\n",
    "a: 'x'y\n",
    "a: [1] x\n",
    "a: 'x'# c\n",
    "a: ? x\n",
    "a: -\n",
    "a: @x\n",
    "k" * 1500 + ": 1\n",
    "tp-size: " + "9" * 5000 + "\n",  # too long for int(): PyYAML's path reports it
    "scalar\n",
]


@pytest.mark.parametrize("text", DECLINED)
def test_everything_else_is_declined(text: str) -> None:
    assert yaml_scan.scan(text) is None


def test_a_declined_or_invalid_text_reads_as_pyyaml_reads_it() -> None:
    assert reader.load("a: [1\n").problems  # the syntax error comes from PyYAML, worded as before
    loaded = reader.load("a: &x 1\nb: *x\n")
    assert not loaded.problems and loaded.count == 1


def test_scanned_nodes_pass_as_pyyaml_nodes_and_back() -> None:
    """The readers check nodes with syntax.ynodes' classes, true of both kinds of node."""
    (doc,), _ = yaml_scan.scan("a: [1]\nb: x\n") or ((None,), 0)
    assert isinstance(doc, MappingNode) and not isinstance(doc, ScalarNode)
    py = yaml.compose("a: [1]\nb: x\n")
    assert isinstance(py, MappingNode) and isinstance(py, Node) and not isinstance(py, SequenceNode)
    assert isinstance(py.value[0][1], SequenceNode) and isinstance(py.value[1][1], ScalarNode)


def test_fixture_projects_lint_the_same_scanned_or_composed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every fixture project, linted once with the scan forced and once with PyYAML only, gives
    the same diagnostics (code, file, span, message, fixes)."""
    from tests.test_fixtures import _cases, _copy_case, _lint

    def run(scan: bool) -> list[tuple]:
        monkeypatch.setattr(reader, "_scan_first", lambda: scan)
        out = []
        for case in _cases():
            root = _copy_case(case, tmp_path / ("scan" if scan else "pyyaml"))
            monkeypatch.chdir(root)
            diags, _, _, _ = _lint(root)
            out.extend((case, d.path.relative_to(root).as_posix(), d.code, d.location.span, d.message,
                        tuple(f.title for f in d.fixes)) for d in diags)
        return sorted(out, key=repr)

    scanned = run(True)
    assert scanned == run(False)
    assert len(scanned) > 100


@settings(max_examples=600, deadline=None)
@given(st.one_of(
    st.sampled_from(TRICKY),
    st.from_regex(r"[-+]?[0-9_.:]{1,10}([eE][-+]?[0-9]{1,3})?", fullmatch=True),
    st.from_regex(r"[-+.~<=a-zA-Z0-9_/$:#@!%&*'\"\[\]{},| ]{1,12}", fullmatch=True),
))
def test_the_resolver_types_every_plain_scalar_as_pyyaml_does(s: str) -> None:
    """Number-like, word-like and indicator-laden scalars alone, as values, in lists: the scan
    either declines or agrees with PyYAML (tag and constructed value)."""
    for doc in (f"key: {s}\n", f"- {s}\n", f"v: [{s}, 1]\n", f"{s}: 1\n"):
        try:
            _agrees(doc)
        except yaml.YAMLError:  # PyYAML's safe_load rejects it: the scan must have declined then
            assert yaml_scan.scan(doc) is None, doc


def test_generated_literal_block_scalars_agree_or_are_declined() -> None:
    """Literal block scalars under every kind of parent, with random indentation, blank lines,
    comment-like lines and endings (another key, a comment, a document, blanks at the end of the
    text with and without a line break): 4,000, seeded."""
    rng = random.Random(5)
    accepted = 0
    for _ in range(4000):
        parent = rng.choice(["a: ", "- ", "k:\n  b: ", "k:\n- ", "k:\n  - ", "- x: ", "x:\n  - y: "])
        head = rng.choice(["|", "|-", "| # c", "|-  #c", "|+", "|2", ">"])
        body = [" " * rng.randint(0, 8) + rng.choice(["", "x", "# c", "y z", "- a", "k: v", "  ", "\\"])
                for _ in range(rng.randint(0, 5))]
        tail = rng.choice(["", "\n", "\nb: 1\n", "\n# c\n", "\n---\nc: 2\n", "\n  ", "\n     "])
        text = parent + head + "\n" + "\n".join(body) + tail
        try:
            accepted += bool(_agrees(text))
        except yaml.YAMLError:
            assert yaml_scan.scan(text) is None, text
    assert accepted > 400


def test_generated_flow_collections_agree_or_are_declined() -> None:
    """One-line flow sequences and mappings, nested two deep, with scalars of every kind, odd
    spacing, missing or trailing separators and text after them: 4,000, seeded."""
    rng = random.Random(9)
    atoms = ["a", "b1", "x-y", "1", "0.5", "yes", "~", "'q'", '"d d"', "-x", "http://h", "a b", "", " ", "{", "}",
             "[", "]", ",", ": ", ":", "#", " #c", "?", "&a", "*a", "!t", "k: v", "0x1", "1e3"]

    def flow(depth: int = 0) -> str:
        if rng.random() < 0.5:
            items = [rng.choice(atoms) if depth > 1 or rng.random() < 0.7 else flow(depth + 1) for _ in range(rng.randint(0, 3))]
            return "[" + rng.choice([", ", ",", " , "]).join(items) + rng.choice(["]", " ]", ",]", ""])
        pairs = [rng.choice(["a", "b", "k1", "on", "x.y/z", "'k'", "1"]) + rng.choice([": ", ":", ":  "])
                 + (rng.choice(atoms) if depth > 1 or rng.random() < 0.8 else flow(depth + 1)) for _ in range(rng.randint(0, 3))]
        return "{" + rng.choice([" ", ""]) + ", ".join(pairs) + rng.choice(["}", " }", ",}", ""])

    accepted = 0
    for _ in range(4000):
        text = rng.choice(["k: ", "- ", "a:\n  - ", "a:\n  b: "]) + flow() + rng.choice(["\n", "", " # c\n", "\nz: 1\n", " x\n"])
        try:
            accepted += bool(_agrees(text))
        except yaml.YAMLError:
            assert yaml_scan.scan(text) is None, text
    assert accepted > 300
