"""The common shapes of block YAML read without PyYAML: what most ``--config`` files are.

Importing PyYAML costs more than Python's own start-up, and a pre-commit run on one sglang
``--config`` file would otherwise spend most of its time there. ``scan`` reads a strict subset of
YAML line by line and gives exactly the nodes PyYAML's libyaml composer gives (tags, values,
styles, offsets of every mark), or None, and the caller composes the text with PyYAML as before.

The subset, documents separated by ``---`` lines (no directives, no ``...``):

* block mappings whose keys are plain words (``model-path``, ``app.kubernetes.io/name``) followed
  by ``:`` and a space or the end of the line;
* block sequences (``- item``), indentless under a key too, with compact mappings (``- name: x``);
* values on the entry's own line: a plain scalar of one line, a single- or double-quoted scalar
  without escapes, a flow sequence ``[1, 2, 4]`` of such scalars and flow mappings, or a flow
  mapping ``{app: sglang}`` of plain-word keys and such scalars; an empty value (null) or a
  nested block on the lines below; a literal block scalar (``|`` or ``|-``, the indentation
  taken from its first line), as in ``run: |`` and ``command: |``;
* comments and blank lines anywhere; only characters YAML prints, no tabs, no CR.

Plain scalars resolve as YAML 1.1 does in PyYAML (booleans ``yes``/``on``..., nulls, ints,
floats, strings); a plain scalar whose type this module cannot be sure of (``1_000.5``, ``0x1F``,
``2024-01-01``, ``.5``, ``<<``) is declined, like anchors, tags, aliases, folded and kept block
scalars (``>``, ``|+``), nested or multi-line flow collections and multi-line plain scalars.
``tests/unit/test_yaml_scan.py`` holds the scan to PyYAML on every YAML file under ``tests/``,
their mutations and generated text.
"""
from __future__ import annotations

import re

from kimi_lsp import _regex
from kimi_lsp.syntax.ynodes import MappingNode, Mark, Node, ScalarNode, SequenceNode

STR_TAG = "tag:yaml.org,2002:str"
INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
BOOL_TAG = "tag:yaml.org,2002:bool"
NULL_TAG = "tag:yaml.org,2002:null"
SEQ_TAG = "tag:yaml.org,2002:seq"
MAP_TAG = "tag:yaml.org,2002:map"

BOOL_WORDS = {
    "yes": True, "Yes": True, "YES": True, "no": False, "No": False, "NO": False,
    "true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False,
    "on": True, "On": True, "ON": True, "off": False, "Off": False, "OFF": False,
}
NULL_WORDS = frozenset(("~", "null", "Null", "NULL"))
MAX_DEPTH = 40  # far below the readers' own limit; deeper text goes to PyYAML

# Anything but the characters YAML prints on a line and "\n": tabs, CR, NEL, the Unicode line and
# paragraph separators, a BOM, C0/C1 controls, surrogates, U+FFFE/U+FFFF. (The complement, the
# printable set, takes ~6 ms to compile: its ranges reach U+10FFFF.) ASCII text needs only the
# ASCII part; the rest compiles (~0.4 ms) with the first other text.
_OUTSIDE_ASCII = _regex.compile("[\x00-\x09\x0b-\x1f\x7f]")
_OUTSIDE_OTHER = "\x80-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff"
_outside: list[re.Pattern[str]] = []


def _unprintable(text: str) -> bool:
    if text.isascii():
        return _OUTSIDE_ASCII.search(text) is not None
    if not _outside:
        _outside.append(re.compile(f"[{_OUTSIDE_ASCII.pattern[1:-1]}{_OUTSIDE_OTHER}]"))
    return _outside[0].search(text) is not None


_DOC_END = _regex.compile(r"^\.\.\.", re.M)
_DOC_START = _regex.compile(r"---(?: +(?:#.*)?)?")  # alone on its line but for a comment
_KEY = _regex.compile(r"[A-Za-z_][A-Za-z0-9_.\-/]*:(?= |$)")
_INT = _regex.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_FLOAT = _regex.compile(r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+][0-9]+)?")  # YAML 1.1 floats need the dot
# A version (0.5.23): a float has one dot, an int none, a timestamp a "-": a string for sure.
_DOTTED = _regex.compile(r"[0-9]+(?:\.[0-9]+){2,}")
# A plain scalar may not start with an indicator (a "-" starts one only before a non-blank).
_BAD_START = frozenset("?:,[]{}#&*!|>'\"%@`")


# The tag of each mapping key met (``resolve``'s answer; keys repeat across every manifest).
_KEY_TAGS: dict[str, str] = {}


def _key_tag(word: str) -> str:
    """``resolve(word)`` for a mapping key (it starts with a letter or "_": never declined),
    remembered."""
    tag = _KEY_TAGS.get(word)
    if tag is None:
        tag = resolve(word)
        if len(_KEY_TAGS) < 4096:
            _KEY_TAGS[word] = tag
    return tag


class _Decline(Exception):
    """The text is outside the subset: PyYAML reads it."""


def resolve(value: str) -> str:
    """The YAML 1.1 tag PyYAML's resolver gives the plain scalar ``value``; raises ``_Decline``
    where the subset does not decide it."""
    c = value[0]
    if c in "-+0123456789.":
        if _INT.fullmatch(value):
            if len(value) > 600:  # past Python's int-from-text limit (640 digits at its lowest)
                raise _Decline  # PyYAML's path reports the value that cannot be loaded
            return INT_TAG
        if _FLOAT.fullmatch(value):
            return FLOAT_TAG
        if _DOTTED.fullmatch(value):
            return STR_TAG
        if c in "-+" and len(value) > 1 and value[1] not in "0123456789.":
            return STR_TAG  # only the int and float patterns start with a sign
        raise _Decline
    if c in "<=":  # ``<<`` merges and ``=`` is the value key: not in the subset
        if value in ("<<", "="):
            raise _Decline
        return STR_TAG
    if value in BOOL_WORDS:
        return BOOL_TAG
    if value in NULL_WORDS:
        return NULL_TAG
    return STR_TAG


def construct_scalar(node: ScalarNode) -> object:
    """What ``yaml.safe_load`` gives for a scalar ``scan`` composed."""
    tag, value = node.tag, node.value
    if tag == STR_TAG:
        return value
    if tag == INT_TAG:
        return int(value)
    if tag == FLOAT_TAG:
        return float(value)
    if tag == BOOL_TAG:
        return BOOL_WORDS[value]
    return None


def construct(node: Node) -> object:
    """What ``yaml.safe_load`` gives for a node ``scan`` composed (the subset has no merges,
    no tags and only scalar keys, so this is the whole of SafeConstructor it needs)."""
    if isinstance(node, ScalarNode):
        return construct_scalar(node)
    if isinstance(node, SequenceNode):
        return [construct(item) for item in node.value]
    out: dict[object, object] = {}
    for key, value in node.value:
        out[construct(key)] = construct(value)  # the last of a duplicate key wins, as in safe_load
    return out


class _Line:
    __slots__ = ("indent", "start", "text")

    def __init__(self, indent: int, start: int, text: str) -> None:
        self.indent = indent  # column of the first character
        self.start = start  # offset of the first character
        self.text = text  # the line from its first character on


class _Scanner:
    def __init__(self, text: str, lines: list[_Line], end: int) -> None:
        self.text = text
        self.lines = lines  # the document's content lines
        self.end = end  # where the document ends: the next ``---``, or the end of the text
        self.k = 0  # the next content line

    def _next_start(self) -> int:
        """Where the next token is: a collection ends there (libyaml's block-end mark)."""
        return self.lines[self.k].start if self.k < len(self.lines) else self.end

    def _next_indent(self) -> int:
        return self.lines[self.k].indent if self.k < len(self.lines) else -1

    def block(self, indent: int, depth: int) -> Node:
        """The block collection whose first line is the next content line, at ``indent``."""
        if depth > MAX_DEPTH:
            raise _Decline
        if _is_entry(self.lines[self.k].text):
            return self.sequence(indent, depth)
        return self.mapping(indent, depth)

    def _line_at(self, indent: int) -> _Line | None:
        """The next content line when it sits at ``indent``; None at the end or a dedent (the
        collection ends). A line indented further is not in the subset."""
        if self.k >= len(self.lines):
            return None
        line = self.lines[self.k]
        if line.indent < indent:
            return None
        if line.indent > indent:
            raise _Decline
        return line

    def mapping(self, indent: int, depth: int) -> MappingNode:
        pairs: list[tuple[Node, Node]] = []
        start = self.lines[self.k].start
        while (line := self._line_at(indent)) is not None:
            m = _KEY.match(line.text)
            if m is None:
                raise _Decline  # a sequence entry here, a quoted or complex key, not a mapping...
            word = m.group()[:-1]
            if len(word) > 1000:
                raise _Decline  # YAML's implicit keys stop at 1024 characters
            key = ScalarNode(_key_tag(word), word, Mark(line.start), Mark(line.start + len(word)), "")
            value = self._value(line, m.end(), line.start + len(word) + 1, indent, depth, in_sequence=False)
            pairs.append((key, value))
        return MappingNode(MAP_TAG, pairs, Mark(start), Mark(self._next_start()), False)

    def sequence(self, indent: int, depth: int) -> SequenceNode:
        items: list[Node] = []
        start = self.lines[self.k].start
        while (line := self._line_at(indent)) is not None:
            text = line.text
            if not _is_entry(text):
                break  # an indentless sequence ends at its mapping's next key
            rest_at = 1
            while rest_at < len(text) and text[rest_at] == " ":
                rest_at += 1
            if rest_at < len(text) and text[rest_at] != "#" and _KEY.match(text, rest_at):
                # a compact mapping: its first key is on the dash's line, the rest below it
                col = line.indent + rest_at
                self.lines[self.k] = _Line(col, line.start + rest_at, text[rest_at:])
                if depth + 1 > MAX_DEPTH:
                    raise _Decline
                items.append(self.mapping(col, depth + 1))
                if self._next_indent() > indent:
                    raise _Decline
                continue
            items.append(self._value(line, rest_at, line.start + 1, indent, depth, in_sequence=True))
        return SequenceNode(SEQ_TAG, items, Mark(start), Mark(self._next_start()), False)

    def _value(self, line: _Line, at: int, empty_at: int, indent: int, depth: int, *, in_sequence: bool) -> Node:
        """The value after a key's ``:`` (or a sequence entry's ``-``) starting at ``line.text[at:]``;
        ``empty_at`` is where an empty value's marks are. Moves past the value's lines."""
        text = line.text
        while at < len(text) and text[at] == " ":
            at += 1
        self.k += 1
        if at >= len(text) or text[at] == "#":
            nxt = self._next_indent()
            if nxt > indent:
                node: Node = self.block(nxt, depth + 1)
            elif nxt == indent and not in_sequence and self._dash_next():
                node = self.sequence(nxt, depth + 1)  # indentless, under its key
            else:
                return ScalarNode(NULL_TAG, "", Mark(empty_at), Mark(empty_at), "")
            if self._next_indent() > indent:
                raise _Decline
            return node
        if text[at] == "|":
            node = self._literal(line, at, indent)
            if self._next_indent() > indent:
                raise _Decline
            return node
        node, end = self._inline(text, at, line.start)
        tail = text[end:]
        if tail and not (tail.lstrip(" ").startswith("#") and tail[0] == " "):
            raise _Decline  # more after the value, or a comment not set off by a space
        if self._next_indent() > indent:
            raise _Decline  # a multi-line scalar or a value YAML rejects
        return node

    def _literal(self, line: _Line, at: int, indent: int) -> ScalarNode:
        """A literal block scalar (``|`` or ``|-``) whose header is at ``line.text[at]``, its
        content on the lines below, more indented than ``indent``; moves past them."""
        header = line.text[at + 1 :]
        strip = header.startswith("-")
        rest = header[1:] if strip else header
        if rest.strip(" ") and not (rest[0] == " " and rest.lstrip(" ").startswith("#")):
            raise _Decline  # keep (+), an indentation indicator, or text after the header
        src = self.text
        pos = src.find("\n", line.start + at)
        if pos < 0:
            raise _Decline  # nothing below the header: an empty scalar
        pos += 1
        lines: list[tuple[bool, str, bool]] = []  # (content?, text without the indentation, line break after it?)
        width = 0  # the content's indentation, from its first line
        end = len(src)
        while pos < len(src):
            eol = src.find("\n", pos)
            raw = src[pos:] if eol < 0 else src[pos:eol]
            body = raw.lstrip(" ")
            n = len(raw) - len(body)
            if not width:
                if not body or n <= indent:
                    raise _Decline  # leading blank lines, or an empty scalar
                width = n
            if (body and n < width) or (not body and n <= width and eol < 0):
                # the scalar ends at the start of the first line indented less, or of a blank
                # last line without a line break (libyaml's mark follows the last break it read)
                end = pos
                break
            # spaces beyond the indentation are content, even on a line of nothing else
            lines.append((bool(body) or n > width, raw[width:], eol >= 0))
            if eol < 0:
                break
            pos = eol + 1
        if not lines:
            raise _Decline  # the header on the text's last line: an empty scalar
        last = max(i for i, (content, _, _) in enumerate(lines) if content)
        kept = lines[: last + 1]  # trailing blank lines are chomped, in clip as in strip
        value = "\n".join(piece for _, piece, _ in kept)
        if not strip and kept[-1][2]:
            value += "\n"  # clip: the final line break, when the last line has one
        while self.k < len(self.lines) and self.lines[self.k].start < end:
            self.k += 1  # the content lines (a "# ..." line in it is content, not a comment)
        return ScalarNode(STR_TAG, value, Mark(line.start + at), Mark(end), "|")

    def _dash_next(self) -> bool:
        return _is_entry(self.lines[self.k].text)

    def _inline(self, text: str, at: int, base: int) -> tuple[Node, int]:
        """The scalar or flow collection at ``text[at:]`` (block context): its node and where it ends."""
        c = text[at]
        if c == "[":
            return self._flow_sequence(text, at, base)
        if c == "{":
            return _flow_mapping(text, at, base)
        if c == "'" or c == '"':
            return _quoted(text, at, base)
        if c in _BAD_START or (c == "-" and (at + 1 >= len(text) or text[at + 1] == " ")):
            raise _Decline
        stop = text.find(" #", at)
        raw = text[at:] if stop < 0 else text[at:stop]
        value = raw.rstrip(" ")
        if ": " in value or value.endswith(":"):
            raise _Decline
        end = at + len(value)
        return ScalarNode(resolve(value), value, Mark(base + at), Mark(base + end), ""), end

    def _flow_sequence(self, text: str, at: int, base: int) -> tuple[Node, int]:
        """``[a, 'b', {k: v}]`` on one line: scalars and flow mappings of scalars."""
        items: list[Node] = []
        i = _skip_spaces(text, at + 1)
        if text.startswith("]", i):
            return SequenceNode(SEQ_TAG, items, Mark(base + at), Mark(base + i + 1), True), i + 1
        while True:
            item: Node
            if text.startswith("{", i):
                item, i = _flow_mapping(text, i, base)
            else:
                item, i = _flow_scalar(text, i, base)
            items.append(item)
            i = _skip_spaces(text, i)
            if text.startswith(",", i):
                i = _skip_spaces(text, i + 1)  # another item must follow: a trailing comma is declined
                continue
            if text.startswith("]", i):
                return SequenceNode(SEQ_TAG, items, Mark(base + at), Mark(base + i + 1), True), i + 1
            raise _Decline


def _skip_spaces(text: str, i: int) -> int:
    while i < len(text) and text[i] == " ":
        i += 1
    return i


def _flow_scalar(text: str, i: int, base: int) -> tuple[ScalarNode, int]:
    """A quoted or plain scalar inside ``[...]``/``{...}`` (one line); the plain one ends at a
    flow indicator and may hold no ``:`` or ``#``."""
    n = len(text)
    if i >= n:
        raise _Decline  # continued on the next line
    c = text[i]
    if c == "'" or c == '"':
        return _quoted(text, i, base)
    if c in _BAD_START or c == "-" and (i + 1 >= n or text[i + 1] in " ,]}"):
        raise _Decline
    j = i
    while j < n and text[j] not in ",[]{}#":
        j += 1
    value = text[i:j].rstrip(" ")
    if not value or ":" in value or j < n and text[j] == "#":
        raise _Decline
    return ScalarNode(resolve(value), value, Mark(base + i), Mark(base + i + len(value)), ""), i + len(value)


def _flow_mapping(text: str, at: int, base: int) -> tuple[MappingNode, int]:
    """``{k: v, k2: 'v2'}`` on one line: plain-word keys, each with a scalar after ``: ``."""
    pairs: list[tuple[Node, Node]] = []
    i = _skip_spaces(text, at + 1)
    if text.startswith("}", i):
        return MappingNode(MAP_TAG, pairs, Mark(base + at), Mark(base + i + 1), True), i + 1
    while True:
        m = _KEY.match(text, i)
        if m is None or not text.startswith(" ", m.end()):
            raise _Decline  # a quoted or complex key, a key without a value, ``k:v``
        word = m.group()[:-1]
        key = ScalarNode(resolve(word), word, Mark(base + i), Mark(base + i + len(word)), "")
        value, i = _flow_scalar(text, _skip_spaces(text, m.end()), base)
        pairs.append((key, value))
        i = _skip_spaces(text, i)
        if text.startswith(",", i):
            i = _skip_spaces(text, i + 1)
            continue
        if text.startswith("}", i):
            return MappingNode(MAP_TAG, pairs, Mark(base + at), Mark(base + i + 1), True), i + 1
        raise _Decline


def _is_entry(text: str) -> bool:
    """A block sequence entry: ``-`` alone or followed by a space."""
    return text == "-" or text.startswith("- ")


def _quoted(text: str, at: int, base: int) -> tuple[ScalarNode, int]:
    """A one-line quoted scalar without escapes or doubled quotes."""
    q = text[at]
    close = text.find(q, at + 1)
    if close < 0:
        raise _Decline
    value = text[at + 1 : close]
    if q == '"' and "\\" in value:
        raise _Decline
    if text.startswith(q, close + 1):
        raise _Decline  # '' inside single quotes
    return ScalarNode(STR_TAG, value, Mark(base + at), Mark(base + close + 1), q), close + 1


def _content_lines(text: str) -> list[_Line]:
    out: list[_Line] = []
    pos = 0
    for raw in text.split("\n"):
        body = raw.lstrip(" ")
        if body and body[0] != "#":
            indent = len(raw) - len(body)
            out.append(_Line(indent, pos + indent, body))
        pos += len(raw) + 1
    return out


def scan(text: str) -> tuple[list[Node], int] | None:
    """The documents of ``text`` and their count as PyYAML composes them, or None when the text
    is outside the subset."""
    if not text or _unprintable(text) or _DOC_END.search(text) is not None:
        return None
    # documents: the lines before the first ``---`` (when there are any), then those after each
    docs: list[list[_Line]] = [[]]
    ends: list[int] = []
    for line in _content_lines(text):
        if line.indent == 0 and line.text.startswith("---"):
            if not _DOC_START.fullmatch(line.text):
                return None  # content on the marker's line, or a scalar that starts with ---
            ends.append(line.start)
            docs.append([])
        else:
            docs[-1].append(line)
    ends.append(len(text))
    if not docs[0] and len(docs) > 1:
        docs, ends = docs[1:], ends[1:]  # only comments before the first ``---``
    nodes: list[Node] = []
    for lines, end in zip(docs, ends):
        if not lines or lines[0].indent != 0:
            return None  # an empty document (a null), or one whose root is indented
        scanner = _Scanner(text, lines, end)
        try:
            nodes.append(scanner.block(0, 1))
        except _Decline:
            return None
        if scanner.k != len(lines):
            return None
    return nodes, len(nodes)
