"""YAML with positions: composing safely, node spans, and scalars as located strings.

PyYAML marks carry code-point ``index`` values, so node spans slice the decoded text directly.
What the marks do not give, this module adds:

* spans trimmed to the node's own text: without its ``&anchor``/``!tag`` properties, without
  the trailing blank lines and comments a block collection or block scalar's end mark includes;
* alias-aware children: composing resolves ``*alias`` to the anchored node, whose marks point
  at the anchor; a child that sits earlier in the text than its place is an alias, and its span
  is the ``*name`` text where it is written;
* ``scalar_source``: the scalar's value with the file span of every character, so a shell script
  in a block scalar (``run: |``) can be lexed with exact positions.

Templated YAML (Helm/Go templates, Jinja): ``template_actions`` finds ``{{ }}``/``{% %}``/``{# #}``
and ``mask_templates`` masks them with every offset kept, so the documents inside compose and
their launches keep exact positions (see ``Masked`` for what each action becomes).

Composing: ``load`` first tries ``syntax.yaml_scan``, which reads the common shapes of a
``--config`` file without importing PyYAML (whose import alone costs more than Python's start-up)
and gives the very nodes PyYAML would; any other text is composed by ``syntax._pyyaml``, safely
(no recursion, nesting and alias limits) and with errors worded as ``yaml.safe_load`` (sglang)
words them. Nodes of either kind are checked with the classes of ``syntax.ynodes``.
"""
from __future__ import annotations

import bisect
import sys
from collections.abc import Sequence

from kimi_lsp import _regex
from kimi_lsp._record import dataclass, field
from kimi_lsp.syntax import yaml_scan
from kimi_lsp.syntax.ynodes import MappingNode, Node, ScalarNode, SequenceNode
from kimi_lsp.text import Span

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any, cast
else:

    def cast(_type: object, value: object) -> object:  # typing.cast, without typing
        return value


@dataclass(frozen=True, slots=True)
class YamlProblem:
    """The text is not YAML (or exceeds a limit): the message and where. Surfaces turn it into
    their ``YamlProblem`` (this floor knows nothing of launches)."""

    message: str
    span: Span


@dataclass(frozen=True, slots=True)
class ScalarChars:
    """A scalar's value with the file span of each character: ``starts[k]``/``ends[k]`` for
    character k (zero-width where the character has no text of its own, e.g. a folded break);
    ``anchor`` is where text after the value would start. ``range`` sequences mean verbatim."""

    text: str
    starts: Sequence[int]
    ends: Sequence[int]
    anchor: int


# the resolved tags, the scan's (both composers give them; the readers import them from here)
INT_TAG, SEQ_TAG, BOOL_TAG = yaml_scan.INT_TAG, yaml_scan.SEQ_TAG, yaml_scan.BOOL_TAG
STR_TAG, NULL_TAG = yaml_scan.STR_TAG, yaml_scan.NULL_TAG


MAX_ALIAS_NODES = 10_000  # nodes that alias expansion may add to a document
MAX_DEPTH = 100
# Pure-Python PyYAML reads flow-heavy text at ~100 KB/s: re-reading a large file only to word an
# error the way yaml.safe_load does could take minutes (7 MB: 160 s). Above this, libyaml's
# wording (same position) is kept.
PURE_REPARSE_MAX_CHARS = 64 * 1024

MERGE_TAG = "tag:yaml.org,2002:merge"

_DQ_ESCAPES = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
    "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0",
    "L": "\u2028", "P": "\u2029",
}
_DQ_HEX = {"x": 2, "u": 4, "U": 8}


@dataclass
class Loaded:
    """The documents of a YAML stream that composed and passed the limits, and what went wrong."""

    docs: list[Node] = field(default_factory=list)
    problems: list[YamlProblem] = field(default_factory=list)
    count: int = 0  # documents in the stream as far as it could be read (empty ones included)
    syntax_error: bool = False  # the parser rejected the text (as opposed to a limit we enforce)


def _point(text: str, index: int) -> Span:
    index = max(0, min(index, len(text)))
    if index < len(text) and text[index] not in "\r\n":
        return Span(index, index + 1)
    return Span(index, index)


def check_limits(root: Node) -> str | None:
    """Why ``root`` must not be expanded (alias bomb, nesting), or None."""
    seen: set[int] = set()
    stack: list[Node] = [root]
    while stack:  # unique nodes, iteratively (a recursive alias would loop a recursive walk)
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(_children(node))
    limit = len(seen) + MAX_ALIAS_NODES
    count = 0
    deep: list[tuple[Node, int]] = [(root, 1)]
    while deep:
        node, depth = deep.pop()
        count += 1
        if depth > MAX_DEPTH:
            return f"YAML nesting deeper than {MAX_DEPTH} levels"
        if count > limit:
            return f"YAML aliases expand to more than {MAX_ALIAS_NODES} extra nodes (alias bomb?)"
        deep.extend((child, depth + 1) for child in _children(node))
    return None


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        out: list[Node] = []
        for k, v in node.value:
            out.append(k)
            out.append(v)
        return out
    return []


def load(text: str) -> Loaded:
    """Compose every document of ``text``; stops at the first error, keeping what came before.

    The scan runs only while PyYAML is not loaded: it spares a run that import, but once PyYAML
    is in, libyaml reads the same text as fast and a declined scan would be time lost. Both give
    the same nodes (tests/unit/test_yaml_scan.py), so which one read a file never shows."""
    if _scan_first():
        scanned = yaml_scan.scan(text)
        if scanned is not None:
            return Loaded(docs=scanned[0], count=scanned[1])
    from kimi_lsp.syntax import _pyyaml

    return _pyyaml.load(text)


def _scan_first() -> bool:
    return "yaml" not in sys.modules


def single_document_problem(text: str) -> YamlProblem | None:
    """What ``yaml.safe_load`` says about a stream of several documents (sglang reads one)."""
    from kimi_lsp.syntax import _pyyaml

    return _pyyaml.single_document_problem(text)


class ConstructError(Exception):
    """A node that composes but does not construct (bad timestamp, unhashable key, unknown tag)."""

    def __init__(self, problem: YamlProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


_MISSING = object()
_SCANNED = (ScalarNode, SequenceNode, MappingNode)  # the classes only yaml_scan composes


def _fast_scalar(node: Node) -> object:
    """SafeConstructor's result for the common plain scalars, without building a constructor."""
    if node.id != "scalar":
        return _MISSING
    tag, value = node.tag, node.value
    if tag == STR_TAG:
        return value
    if tag == INT_TAG and value.isdigit() and value.isascii() and (value[0] != "0" or len(value) == 1):
        return int(value)
    if tag == NULL_TAG:
        return None
    if tag == BOOL_TAG:
        # the spellings the resolver types as bool; any other (an explicit !!bool) goes the slow way
        return yaml_scan.BOOL_WORDS.get(value, _MISSING)
    return _MISSING


def construct(node: Node, text: str, span: Span | None = None) -> object:
    """What ``yaml.safe_load`` gives for ``node`` (YAML 1.1 booleans, merges, timestamps)."""
    if type(node) in _SCANNED:  # composed by yaml_scan: only the tags its constructor knows
        return yaml_scan.construct(node)
    value = _fast_scalar(node)
    if value is not _MISSING:
        return value
    if node.id == "sequence" and node.tag == SEQ_TAG:  # plain scalars (e.g. batch sizes)
        items = [_fast_scalar(item) for item in node.value]
        if _MISSING not in items:
            return items
    from kimi_lsp.syntax import _pyyaml

    return _pyyaml.construct(node, text, span)


class YamlText:
    """Spans of composed nodes in ``text`` (memoised per node)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._ends: dict[int, int] = {}
        # id(collection) -> its located children: seq_items' pairs or map_items' quadruples
        self._items: dict[int, list[Any]] = {}

    # -- single nodes ---------------------------------------------------------------------------
    def start(self, node: Node) -> int:
        """Where the node's own text starts: after ``&anchor`` and ``!tag`` properties."""
        text = self.text
        i = node.start_mark.index
        end = node.end_mark.index
        while i < end and text[i] in "&!":
            while i < end and text[i] not in " \t\r\n":
                i += 1
            i = self._skip_space(i, end)
        return min(i, max(end, node.start_mark.index))

    def _skip_space(self, i: int, end: int) -> int:
        text = self.text
        while i < end:
            c = text[i]
            if c in " \t\r\n":
                i += 1
            elif c == "#":
                while i < end and text[i] not in "\r\n":
                    i += 1
            else:
                break
        return i

    def end(self, node: Node) -> int:
        """Where the node's own text ends: without trailing blank lines and comments."""
        key = id(node)
        cached = self._ends.get(key)
        if cached is not None:
            return cached
        result = self._end(node)
        self._ends[key] = result
        return result

    def _end(self, node: Node) -> int:
        text = self.text
        end = node.end_mark.index
        kind = node.id
        if kind == "scalar":
            if cast(ScalarNode, node).style in ("|", ">"):
                start = self.start(node)
                while end > start and text[end - 1] in " \t\r\n":
                    end -= 1
            return end
        if getattr(node, "flow_style", False) or not node.value:
            return end
        if kind == "sequence":
            return self.seq_items(cast(SequenceNode, node))[-1][1].end
        last = self.map_items(cast(MappingNode, node))[-1]  # the only other node with a value of its own
        return max(last[1].end, last[3].end)

    def span(self, node: Node) -> Span:
        # ``id`` rather than isinstance: for PyYAML's nodes the latter is a Python-level check
        if node.id == "scalar" and cast(ScalarNode, node).style not in ("|", ">"):
            # the common case, kept cheap for long lists: no properties, the marks are the text
            i = node.start_mark.index
            if self.text[i : i + 1] not in ("&", "!"):
                return Span(i, max(i, node.end_mark.index))
        start = self.start(node)
        return Span(start, max(start, self.end(node)))

    # -- children -------------------------------------------------------------------------------
    def _child_span(self, node: Node, pos: int) -> Span:
        """``node``'s span where it is written after offset ``pos`` (an alias is written ``*name``)."""
        if node.start_mark.index >= pos:
            return self.span(node)
        text = self.text
        i, n = pos, len(text)
        while i < n:
            c = text[i]
            if c in " \t\r\n,:-[{?":
                i += 1
            elif c == "#":
                while i < n and text[i] not in "\r\n":
                    i += 1
            else:
                break
        if i < n and text[i] == "*":
            j = i + 1
            while j < n and text[j] not in " \t\r\n,[]{}":
                j += 1
            return Span(i, j)
        return Span(pos, pos)

    def seq_items(self, node: SequenceNode) -> list[tuple[Node, Span]]:
        hit = self._items.get(id(node))
        if hit is not None:
            return hit
        out: list[tuple[Node, Span]] = []
        pos = self.start(node)
        text = self.text
        for item in node.value:
            i = item.start_mark.index
            if item.id == "scalar" and i >= pos and cast(ScalarNode, item).style not in ("|", ">") and text[i : i + 1] not in ("&", "!"):
                span = Span(i, max(i, item.end_mark.index))  # span()'s common case, inlined for long lists
            else:
                span = self._child_span(item, pos)
            out.append((item, span))
            if span.end > pos:
                pos = span.end
        self._items[id(node)] = out
        return out

    def map_items(self, node: MappingNode) -> list[tuple[Node, Span, Node, Span]]:
        hit = self._items.get(id(node))
        if hit is not None:
            return hit
        out: list[tuple[Node, Span, Node, Span]] = []
        pos = self.start(node)
        for key, value in node.value:
            kspan = self._child_span(key, pos)
            vspan = self._child_span(value, kspan.end)
            out.append((key, kspan, value, vspan))
            pos = max(pos, kspan.end, vspan.end)
        self._items[id(node)] = out
        return out

    # -- scalars as located strings ---------------------------------------------------------------
    def scalar_source(self, node: ScalarNode) -> ScalarChars:
        """The scalar's value with the file span of each character (zero-width where unknown)."""
        text = self.text
        start = self.start(node)
        end = node.end_mark.index
        style = node.style
        if style is None or style == '"' or style == "'":
            # the common case: the value is written verbatim (one line, no escapes or doubled
            # quotes), so character k of the value is character a+k of the text
            a, b = (start, end) if style is None else (start + 1, end - 1)
            value = node.value
            if b - a == len(value) and text[a:b] == value:
                anchor = b if value else a
                return ScalarChars(value, range(a, b), range(a + 1, b + 1), anchor)
        return self._scalar_source_aligned(node, start, end)

    def _scalar_source_aligned(self, node: ScalarNode, start: int, end: int) -> ScalarChars:
        """Any scalar: its raw text cut into units (escapes, doubled quotes) and aligned."""
        text = self.text
        style = node.style
        units: list[tuple[str, int, int]] = []
        if style == '"':
            units = _double_quoted_units(text, start + 1, max(start + 1, end - 1))
        elif style == "'":
            i, stop = start + 1, max(start + 1, end - 1)
            while i < stop:
                if text.startswith("''", i) and i + 1 < stop:
                    units.append(("'", i, i + 2))
                    i += 2
                else:
                    units.append((text[i], i, i + 1))
                    i += 1
        else:
            i = start
            if style in ("|", ">"):  # content starts after the header line (|-, >2, | # comment)
                nl = text.find("\n", start, end)
                i = end if nl < 0 else nl + 1
            # every unit is one character of the text: aligned against the text itself
            return _align_text(node.value, text, i, end, end if end > i else start)
        anchor = units[-1][2] if units else (start + 1 if style in ('"', "'") else start)
        return _align(node.value, units, anchor)


def _double_quoted_units(text: str, i: int, stop: int) -> list[tuple[str, int, int]]:
    units: list[tuple[str, int, int]] = []
    while i < stop:
        c = text[i]
        if c == "\\" and i + 1 < stop:
            nx = text[i + 1]
            if nx in "\r\n":  # escaped line break: the break and the next line's indentation vanish
                j = i + 1
                if text.startswith("\r\n", j):
                    j += 2
                else:
                    j += 1
                while j < stop and text[j] in " \t":
                    j += 1
                i = j
                continue
            if nx in _DQ_ESCAPES:
                units.append((_DQ_ESCAPES[nx], i, i + 2))
                i += 2
                continue
            if nx in _DQ_HEX:
                width = _DQ_HEX[nx]
                digits = text[i + 2 : i + 2 + width]
                try:
                    ch = chr(int(digits, 16))
                except (ValueError, OverflowError):
                    ch = "\ufffd"
                units.append((ch, i, min(stop, i + 2 + width)))
                i += 2 + width
                continue
            units.append((nx, i, i + 2))
            i += 2
            continue
        units.append((c, i, i + 1))
        i += 1
    return units


def _align_text(value: str, text: str, i: int, end: int, anchor: int) -> ScalarChars:
    """``_align`` where the units are the characters ``text[i:end]`` themselves (plain and block
    scalars), without making them: the same answer (tests/unit/test_syntax.py), and a line of
    the value written as is in the text (a script in a ``run: |`` block) is matched in one
    comparison instead of character by character."""
    starts: list[int] = []
    ends: list[int] = []
    u = i
    n = len(value)
    v = 0
    while v < n:
        ch = value[v]
        if u < end and text[u] == ch:
            # _align would take this character and every next one that the text repeats at the
            # very next position: a run up to the value's line end, compared at once
            stop = value.find("\n", v)
            stop = n if stop < 0 else stop
            if stop - v > 1 and text.startswith(value[v:stop], u) and u + (stop - v) <= end:
                starts.extend(range(u, u + (stop - v)))
                ends.extend(range(u + 1, u + (stop - v) + 1))
                u += stop - v
                v = stop
                continue
            starts.append(u)
            ends.append(u + 1)
            u += 1
            v += 1
            continue
        k = u
        while k < end and text[k] != ch and text[k] in " \t\r\n":
            k += 1
        if k < end and text[k] == ch:
            starts.append(k)
            ends.append(k + 1)
            u = k + 1
        else:
            p = u if u < end else anchor
            starts.append(p)
            ends.append(p)
            if ch in " \t\r\n":
                u = k  # the blanks walked over were folded into this character
        v += 1
    return ScalarChars(value, starts, ends, anchor)


def _align(value: str, units: Sequence[tuple[str, int, int]], anchor: int) -> ScalarChars:
    """Match the value's characters to source units in order.

    Every non-blank character of a plain, quoted or block scalar's value appears in its raw text
    in order; only blanks differ (line folding turns breaks into spaces, indentation and trailing
    spaces vanish). So blanks in the raw text may be skipped, and a value blank that has no raw
    counterpart gets a zero-width span (which makes any token containing it inexact).
    """
    starts: list[int] = []
    ends: list[int] = []
    u, m = 0, len(units)
    for ch in value:
        k = u
        while k < m and units[k][0] != ch and units[k][0] in " \t\r\n":
            k += 1
        if k < m and units[k][0] == ch:
            starts.append(units[k][1])
            ends.append(units[k][2])
            u = k + 1
            continue
        p = units[u][1] if u < m else anchor
        starts.append(p)
        ends.append(p)
        if ch in " \t\r\n":
            u = k  # the blanks walked over were folded into this character
    return ScalarChars(value, starts, ends, anchor)


# -- templated YAML (Helm/Go templates, Jinja) --------------------------------------------------

# ``{{ }}`` not preceded by ``$`` (GitHub Actions' ``${{ }}`` is plain YAML text), ``{% %}``,
# ``{# #}``. Go template comments ``{{/* */}}`` are ``{{ }}`` actions too.
_OPENER_RE = _regex.compile(r"\{[{%#]")
_CLOSERS = {"{": "}}", "%": "%}", "#": "#}"}
# Actions that only steer the template (they render no text of their own).
_CONTROL_RE = _regex.compile(
    r"\{[{%]-?\s*(?:if|else|elif|end\w*|range|with|define|for|block|set|macro|call|filter|raw|/\*)\b"
    r"|\{\{-?\s*/\*|\{#"
)
_COMMENT_RE = _regex.compile(r"\{\{-?\s*/\*|\{#")
MAX_TEMPLATE_ACTIONS = 100_000


@dataclass(frozen=True, slots=True)
class Masked:
    """Templated YAML with its template actions masked, every offset unchanged.

    An action alone on its lines (``{{- if .Values.x }}``, ``{{ toYaml .Values.r | nindent 8 }}``)
    becomes blanks; one inside a line becomes ``$___`` of its length: a plain YAML scalar, and a
    shell-style variable to the readers above, so the words it makes are unknown values (as a
    ``$VAR`` in a script is). ``values`` are those placeholders' spans; ``blocks`` the blanked
    actions that render text we cannot see; ``controls`` the control actions (``if``, ``range``,
    ``else``...), after which the masked text holds every branch at once."""

    text: str
    actions: tuple[Span, ...]
    values: tuple[Span, ...]
    blocks: tuple[Span, ...]
    controls: tuple[Span, ...] = ()


def template_actions(text: str) -> list[Span]:
    """Spans of the template actions in ``text`` (empty for plain YAML): ``{{ }}`` not preceded
    by ``$`` (GitHub Actions' ``${{ }}`` is plain YAML text), ``{% %}``, ``{# #}``.

    One pass: each opener's closer is found with ``str.find`` and the scan resumes after it; an
    opener whose closer is missing means no later opener of that kind closes either (so hostile
    input with many unclosed openers stays linear)."""
    if "{{" not in text and "{%" not in text and "{#" not in text:
        return []
    out: list[Span] = []
    unclosed: set[str] = set()
    pos = 0
    while len(out) < MAX_TEMPLATE_ACTIONS:
        m = _OPENER_RE.search(text, pos)
        if m is None:
            break
        i, kind = m.start(), text[m.start() + 1]
        if kind in unclosed or (kind == "{" and i > 0 and text[i - 1] == "$"):
            pos = i + 2 if kind != "{" else i + 1
            continue
        j = text.find(_CLOSERS[kind], i + 2)
        if j < 0:
            unclosed.add(kind)
            pos = i + 1
            continue
        out.append(Span(i, j + 2))
        pos = j + 2
    return out


def mask_templates(text: str, actions: list[Span] | None = None) -> Masked:
    """``text`` with its template actions masked (see ``Masked``)."""
    if actions is None:
        actions = template_actions(text)
    chars = list(text)
    ends = [a.end for a in actions]
    alone_on_line: dict[int, bool] = {}
    values: list[Span] = []
    blocks: list[Span] = []
    controls: list[Span] = []
    for a in actions:
        raw = text[a.start : a.end]
        line_start = text.rfind("\n", 0, a.start) + 1
        alone = alone_on_line.get(line_start)
        if alone is None:  # once per line: a line of many actions must not cost quadratic time
            line_end = text.find("\n", a.end)
            line_end = len(text) if line_end < 0 else line_end
            rest = "".join(_line_outside_actions(text, line_start, line_end, actions, ends))
            alone = alone_on_line[line_start] = not rest.strip()
        control = _CONTROL_RE.match(raw) is not None and not _COMMENT_RE.match(raw)
        if control or _COMMENT_RE.match(raw) or alone:
            for i in range(a.start, a.end):
                if chars[i] not in "\r\n":
                    chars[i] = " "
            (controls if control else blocks).append(a)
        else:
            width = a.end - a.start
            chars[a.start : a.end] = "$" + "_" * (width - 1)
            if "\n" in raw:  # keep the lines (a multi-line action inside a value is rare)
                for i in range(a.start, a.end):
                    if text[i] in "\r\n":
                        chars[i] = text[i]
            values.append(a)
    return Masked("".join(chars), tuple(actions), tuple(values), tuple(blocks), tuple(controls))


def _line_outside_actions(text: str, start: int, end: int, actions: list[Span], ends: list[int]) -> list[str]:
    """The pieces of ``text[start:end]`` outside every action (``actions`` sorted, ``ends``
    their ends)."""
    k = bisect.bisect_right(ends, start)  # the first action ending after start
    out: list[str] = []
    pos = start
    while k < len(actions) and actions[k].start < end:
        a = actions[k]
        out.append(text[pos : max(pos, a.start)])
        pos = max(pos, a.end)
        k += 1
    out.append(text[pos:end] if pos < end else "")
    return out
