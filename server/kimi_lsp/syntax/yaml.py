"""PyYAML with positions: composing safely, node spans, and scalars as located strings.

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

Safety: PyYAML's composers recurse per nesting level (libyaml's Cython composer crashes the
process on very deep input), so documents are composed here from parser events with an explicit
stack that stops at ``MAX_DEPTH``; libyaml's parser itself keeps no recursion and is used when
available. Documents that expand to too many nodes through aliases are refused too. Errors are
reported as the pure-Python loader words them: that is what ``yaml.safe_load`` (sglang) says.
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import SafeConstructor
from yaml.error import MarkedYAMLError, YAMLError
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.reader import ReaderError

from kimi_lsp._record import dataclass, field
from kimi_lsp.text import Span


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


INT_TAG = "tag:yaml.org,2002:int"
SEQ_TAG = "tag:yaml.org,2002:seq"
BOOL_TAG = "tag:yaml.org,2002:bool"


def _fast_resolve(resolve: Callable[..., str]) -> Callable[..., str]:
    """PyYAML's resolver tries a regex list per scalar; a plain ASCII decimal without a leading
    zero can only be an int under YAML 1.1's implicit rules (float and timestamp need '.', '-' or
    ':'), so long lists of numbers skip the regexes. Everything else goes to PyYAML."""

    def fast(self: Any, kind: type[Node], value: str | None, implicit: tuple[bool, bool]) -> str:
        if (
            kind is ScalarNode and implicit[0] and value is not None and value.isdigit() and value.isascii()
            and (value[0] != "0" or len(value) == 1) and not self.yaml_path_resolvers
        ):
            return INT_TAG
        return resolve(self, kind, value, implicit)

    return fast


try:
    from yaml import CSafeLoader as _CSafeLoader

    class _CLoader(_CSafeLoader):
        resolve = _fast_resolve(_CSafeLoader.resolve)

except ImportError:  # PyYAML built without libyaml
    _CLoader = None  # type: ignore[assignment,misc]  # a class where libyaml is built, else None

MAX_ALIAS_NODES = 10_000  # nodes that alias expansion may add to a document
MAX_DEPTH = 100
# Pure-Python PyYAML reads flow-heavy text at ~100 KB/s: re-reading a large file only to word an
# error the way yaml.safe_load does could take minutes (7 MB: 160 s). Above this, libyaml's
# wording (same position) is kept.
PURE_REPARSE_MAX_CHARS = 64 * 1024

STR_TAG = "tag:yaml.org,2002:str"
NULL_TAG = "tag:yaml.org,2002:null"
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


def _loader_class(text: str) -> type:
    # libyaml reports a leading BOM's offset differently from the decoded text; SourceText
    # strips the BOM, so this only matters for text handed in some other way.
    if _CLoader is None or text.startswith("\ufeff"):
        return yaml.SafeLoader
    return _CLoader


def _point(text: str, index: int) -> Span:
    index = max(0, min(index, len(text)))
    if index < len(text) and text[index] not in "\r\n":
        return Span(index, index + 1)
    return Span(index, index)


def problem_from_error(exc: Exception, text: str, *, c_loader: bool = False) -> YamlProblem:
    """A YAML exception as a problem at the position it names."""
    if isinstance(exc, MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        message = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem:
            message = f"{exc.context}, {exc.problem}"
        index = mark.index if mark is not None else 0
        span = _point(text, index)
        if text.startswith(("---", "..."), span.start):  # a document marker: point at all of it
            span = Span(span.start, span.start + 3)
        return YamlProblem(f"YAML syntax error: {message}", span)
    if isinstance(exc, ReaderError):
        index = exc.position
        if c_loader:  # libyaml reports a byte offset into the UTF-8 encoding
            index = len(text.encode("utf-8", "surrogatepass")[:index].decode("utf-8", "ignore"))
        return YamlProblem(f"YAML syntax error: {exc.reason}", _point(text, index))
    return YamlProblem(f"YAML syntax error: {exc}", Span(0, 0))


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
    """Compose every document of ``text``; stops at the first error, keeping what came before."""
    cls = _loader_class(text)
    loaded = _load(text, cls)
    if cls is _CLoader and loaded.syntax_error and len(text) <= PURE_REPARSE_MAX_CHARS:
        # Report errors the way yaml.safe_load (pure Python, what sglang runs) words them.
        return _load(text, yaml.SafeLoader)
    return loaded


def _load(text: str, cls: type) -> Loaded:
    if cls is _CLoader and _shallow(text):
        fast = _load_c(text)
        if fast is not None:
            return fast
    loaded = Loaded()
    loader = None
    try:
        loader = cls(text)  # the pure-Python reader checks every character here
        loader.get_event()  # StreamStartEvent
        while not loader.check_event(StreamEndEvent):
            loader.get_event()  # DocumentStartEvent
            aliases: list[int] = []
            node = _compose(loader, aliases)
            loader.get_event()  # DocumentEndEvent
            loaded.count += 1
            # without aliases the composer's own depth limit is the whole story
            why = check_limits(node) if aliases else None
            if why is not None:
                loaded.problems.append(YamlProblem(why, _point(text, node.start_mark.index)))
                continue
            loaded.docs.append(node)
    except _TooDeep as exc:
        loaded.problems.append(YamlProblem(f"YAML nesting deeper than {MAX_DEPTH} levels", _point(text, exc.index)))
    except YAMLError as exc:
        loaded.syntax_error = True
        loaded.problems.append(problem_from_error(exc, text, c_loader=cls is _CLoader))
    except RecursionError:  # not expected (nothing here recurses), but never let it escape
        loaded.problems.append(YamlProblem(f"YAML nesting deeper than {MAX_DEPTH} levels", Span(0, 0)))
    finally:
        try:
            if loader is not None:
                loader.dispose()
        except Exception:  # disposing a failed C parser must not mask the real problem
            pass
    return loaded


# libyaml's own composer recurses in C once per nesting level; it is several times faster than
# ours but must only see text whose nesting is provably shallow (and has no aliases to count).
_SHALLOW_BOUND = 40


_COMMENT_LINE = re.compile(r"^ *#.*$", re.M)
_INDENT = re.compile(r"^ *", re.M)
_NOT_INDICATOR = re.compile(r"[^-:?\n]+")


def _shallow(text: str) -> bool:
    """A cheap upper bound on the nesting depth is below ``_SHALLOW_BOUND``.

    A node nests one level deeper than its parent only by a flow opener (``[``/``{``), by a
    block indicator (``-``, ``?``, ``:``) on its line, or by sitting on a line indented further
    (each level at least one column; a sequence may share its mapping's column, hence 2x).
    The bound adds the deepest indentation to the most indicators on any one line (comment
    lines aside), computed with regexes rather than a loop over lines.
    """
    if "&" in text or "*" in text or text.count("[") + text.count("{") >= _SHALLOW_BOUND:
        return False
    body = _COMMENT_LINE.sub("", text)
    indent = max(map(len, _INDENT.findall(body)), default=0)
    if 2 * (indent + 1) >= _SHALLOW_BOUND:
        return False
    indicators = max(map(len, _NOT_INDICATOR.sub("", body).split("\n")), default=0)
    return 2 * (indent + 1) + indicators < _SHALLOW_BOUND


def _load_c(text: str) -> Loaded | None:
    """Every document composed by libyaml, or None on any error (the careful path reports it)."""
    loaded = Loaded()
    loader = _CLoader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:  # check_node() said a document follows
                loaded.docs.append(node)
            loaded.count += 1
    except YAMLError:
        return None
    finally:
        try:
            loader.dispose()
        except Exception:
            pass
    return loaded


class _TooDeep(Exception):
    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


def _compose(loader: yaml.SafeLoader, aliases: list[int] | None = None) -> Node:
    """One document's node graph, like PyYAML's Composer but without recursion.

    PyYAML's composer recurses per nesting level (libyaml's Cython one crashes the process on
    very deep input); this one keeps an explicit stack and stops at ``MAX_DEPTH``, so hostile
    input costs only the events read before the limit.
    """
    anchors: dict[str, Node] = {}
    stack: list[tuple[Node, list[Node]]] = []  # open collection, pending mapping key (0 or 1)
    while True:
        event = loader.get_event()
        node: Node
        if isinstance(event, AliasEvent):
            mark = event.start_mark  # a parser's events always carry their marks
            if aliases is not None and mark is not None:
                aliases.append(mark.index)
            found = anchors.get(event.anchor) if event.anchor is not None else None
            if found is None:
                # types-PyYAML types marks as yaml.error.Mark only; libyaml's parser (CSafeLoader,
                # also composed here) hands yaml._yaml.Mark, which has the same fields
                raise ComposerError(None, None, f"found undefined alias {event.anchor!r}", event.start_mark)  # type: ignore[arg-type]
            node = found
        elif isinstance(event, (SequenceEndEvent, MappingEndEvent)):
            node, _ = stack.pop()
            node.end_mark = event.end_mark
        else:
            anchor = event.anchor
            if anchor is not None and anchor in anchors:
                raise ComposerError(
                    f"found duplicate anchor {anchor!r}; first occurrence",
                    anchors[anchor].start_mark,
                    "second occurrence",
                    event.start_mark,
                )
            if isinstance(event, ScalarEvent):
                tag = event.tag
                if tag is None or tag == "!":
                    resolved: str = loader.resolve(ScalarNode, event.value, event.implicit)
                    tag = resolved
                # libyaml's marks, as above
                node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)  # type: ignore[arg-type]
            else:
                kind = SequenceNode if isinstance(event, SequenceStartEvent) else MappingNode
                tag = event.tag
                if tag is None or tag == "!":
                    resolved = loader.resolve(kind, None, event.implicit)
                    tag = resolved
                node = kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
            if anchor is not None:
                anchors[anchor] = node
            if not isinstance(node, ScalarNode):
                if len(stack) >= MAX_DEPTH:
                    raise _TooDeep(event.start_mark.index)
                stack.append((node, []))
                continue
        if not stack:
            return node
        parent, pending = stack[-1]
        if isinstance(parent, SequenceNode):
            parent.value.append(node)
        elif pending:
            parent.value.append((pending.pop(), node))
        else:
            pending.append(node)


def single_document_problem(text: str) -> YamlProblem | None:
    """What ``yaml.safe_load`` says about a stream of several documents (sglang reads one)."""
    try:
        # every document already composed within the limits, so libyaml's composer is safe here
        big = len(text) > PURE_REPARSE_MAX_CHARS
        loader = _loader_class(text)(text) if big else yaml.SafeLoader(text)
        try:
            loader.get_single_node()
        finally:
            loader.dispose()
    except YAMLError as exc:
        return problem_from_error(exc, text)
    except RecursionError:
        return None
    return None


class ConstructError(Exception):
    """A node that composes but does not construct (bad timestamp, unhashable key, unknown tag)."""

    def __init__(self, problem: YamlProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


_MISSING = object()
_BOOLS = SafeConstructor.bool_values


def _fast_scalar(node: Node) -> object:
    """SafeConstructor's result for the common plain scalars, without building a constructor."""
    if node.__class__ is not ScalarNode:
        return _MISSING
    tag, value = node.tag, node.value
    if tag == STR_TAG:
        return value
    if tag == INT_TAG and value.isdigit() and value.isascii() and (value[0] != "0" or len(value) == 1):
        return int(value)
    if tag == NULL_TAG:
        return None
    if tag == BOOL_TAG:
        return _BOOLS.get(value.lower(), _MISSING)
    return _MISSING


def construct(node: Node, text: str, span: Span | None = None) -> object:
    """What ``yaml.safe_load`` gives for ``node`` (YAML 1.1 booleans, merges, timestamps)."""
    value = _fast_scalar(node)
    if value is not _MISSING:
        return value
    if node.__class__ is SequenceNode and node.tag == SEQ_TAG:  # plain scalars (e.g. batch sizes)
        items = [_fast_scalar(item) for item in node.value]
        if _MISSING not in items:
            return items
    try:
        return SafeConstructor().construct_document(node)
    except MarkedYAMLError as exc:
        raise ConstructError(problem_from_error(exc, text)) from exc
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        where = span if span is not None else _point(text, node.start_mark.index)
        raise ConstructError(YamlProblem(f"YAML value cannot be loaded: {exc}", where)) from exc


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
        if isinstance(node, ScalarNode):
            if node.style in ("|", ">"):
                start = self.start(node)
                while end > start and text[end - 1] in " \t\r\n":
                    end -= 1
            return end
        if getattr(node, "flow_style", False) or not node.value:
            return end
        if isinstance(node, SequenceNode):
            return self.seq_items(node)[-1][1].end
        assert isinstance(node, MappingNode)  # the only other node with a value of its own
        last = self.map_items(node)[-1]
        return max(last[1].end, last[3].end)

    def span(self, node: Node) -> Span:
        if type(node) is ScalarNode and node.style not in ("|", ">"):
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
            if item.__class__ is ScalarNode and i >= pos and item.style not in ("|", ">") and text[i : i + 1] not in ("&", "!"):
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
            units = [(text[k], k, k + 1) for k in range(i, end)]
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
_OPENER_RE = re.compile(r"\{[{%#]")
_CLOSERS = {"{": "}}", "%": "%}", "#": "#}"}
# Actions that only steer the template (they render no text of their own).
_CONTROL_RE = re.compile(
    r"\{[{%]-?\s*(?:if|else|elif|end\w*|range|with|define|for|block|set|macro|call|filter|raw|/\*)\b"
    r"|\{\{-?\s*/\*|\{#"
)
_COMMENT_RE = re.compile(r"\{\{-?\s*/\*|\{#")
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
