"""The PyYAML side of the YAML reader: composing with PyYAML's parsers, and its errors.

Imported on first need: a document ``syntax.yaml_scan`` reads (the common shapes of a
``--config`` file) never loads PyYAML, whose import costs more than Python's own start-up.

Safety: PyYAML's composers recurse per nesting level (libyaml's Cython composer crashes the
process on very deep input), so documents are composed here from parser events with an explicit
stack that stops at ``MAX_DEPTH``; libyaml's parser itself keeps no recursion and is used when
available. Documents that expand to too many nodes through aliases are refused too. Errors are
reported as the pure-Python loader words them: that is what ``yaml.safe_load`` (sglang) says.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast

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

from kimi_lsp import _regex
from kimi_lsp.syntax import ynodes
from kimi_lsp.syntax.yaml import (
    INT_TAG,
    MAX_DEPTH,
    PURE_REPARSE_MAX_CHARS,
    ConstructError,
    Loaded,
    YamlProblem,
    _point,
    check_limits,
)
from kimi_lsp.text import Span

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


def _loader_class(text: str) -> type:
    # libyaml reports a leading BOM's offset differently from the decoded text; SourceText
    # strips the BOM, so this only matters for text handed in some other way.
    if _CLoader is None or text.startswith("\ufeff"):
        return yaml.SafeLoader
    return _CLoader


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
            doc = cast(ynodes.Node, node)  # the readers' node types: true of PyYAML's nodes too
            why = check_limits(doc) if aliases else None
            if why is not None:
                loaded.problems.append(YamlProblem(why, _point(text, node.start_mark.index)))
                continue
            loaded.docs.append(doc)
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


_COMMENT_LINE = _regex.compile(r"^ *#.*$", re.M)
_INDENT = _regex.compile(r"^ *", re.M)
_NOT_INDICATOR = _regex.compile(r"[^-:?\n]+")


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
                loaded.docs.append(cast(ynodes.Node, node))
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


def construct(node: ynodes.Node, text: str, span: Span | None = None) -> object:
    """``yaml.safe_load``'s value for a node PyYAML composed (``syntax.yaml.construct``'s slow path)."""
    try:
        return SafeConstructor().construct_document(cast(Node, node))
    except MarkedYAMLError as exc:
        raise ConstructError(problem_from_error(exc, text)) from exc
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        where = span if span is not None else _point(text, node.start_mark.index)
        raise ConstructError(YamlProblem(f"YAML value cannot be loaded: {exc}", where)) from exc


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
