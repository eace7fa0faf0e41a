"""sglang ``--config`` YAML: one located ``ConfigEntry`` per top-level key.

sglang reads the file with ``yaml.safe_load`` (``srt/utils/server_args_config_parser.py``): one
document, a mapping at the root (an empty file is ``{}``), duplicate keys silently keep the last
value, YAML 1.1 booleans apply. Values here are what ``safe_load`` gives, constructed from the
composed nodes so that every key and value keeps its position.
"""
from __future__ import annotations

from pathlib import Path

from kimi_lsp.syntax.ynodes import MappingNode, Node, ScalarNode, SequenceNode

from kimi_lsp.syntax.yaml import (
    MERGE_TAG,
    NULL_TAG,
    ConstructError,
    Loaded,
    YamlText,
    construct,
    YamlProblem,
    single_document_problem,
)
from kimi_lsp.surfaces.model import (
    ConfigEntry,
    ConfigFile,
    Entry,
    LaunchCommand,
    Surface,
    SurfaceResult,
    SyntaxProblem,
)
from kimi_lsp.text import Located, Span

ROOT_NOT_MAPPING = "Config file must contain a dictionary at root level"


class _Pair:
    __slots__ = ("key", "key_span", "value", "value_span", "own")

    def __init__(self, key: Node, key_span: Span, value: Node, value_span: Span, own: bool) -> None:
        self.key, self.key_span, self.value, self.value_span, self.own = key, key_span, value, value_span, own


def _pairs(y: YamlText, node: MappingNode, depth: int = 0) -> list[_Pair]:
    """The mapping's pairs as ``safe_load`` sees them: ``<<`` merges first, then its own keys."""
    merged: list[_Pair] = []
    own: list[_Pair] = []
    for key, kspan, value, vspan in y.map_items(node):
        if key.tag == MERGE_TAG and depth < 8:
            sources = [value] if isinstance(value, MappingNode) else (
                [v for v in value.value if isinstance(v, MappingNode)] if isinstance(value, SequenceNode) else []
            )
            # PyYAML gives earlier mappings of a merge list precedence: they are added last.
            for source in reversed(sources):
                merged.extend(_Pair(p.key, p.key_span, p.value, p.value_span, False) for p in _pairs(y, source, depth + 1))
            continue
        own.append(_Pair(key, kspan, value, vspan, True))
    return merged + own


def _value_span(y: YamlText, pair: _Pair) -> Span:
    value = pair.value
    if isinstance(value, ScalarNode) and value.tag == NULL_TAG and value.start_mark.index == value.end_mark.index:
        # `key:` with nothing after it: PyYAML puts the empty scalar right after the colon
        return Span(value.start_mark.index, value.start_mark.index)
    return pair.value_span


def as_problem(p: YamlProblem) -> SyntaxProblem:
    return SyntaxProblem(p.message, p.span)


def read_config_yaml(path: Path, text: str, loaded: Loaded, *, doubt: str | None = None) -> SurfaceResult:
    """Entries of an sglang ``--config`` YAML (the caller decided that this is one, or guessed:
    ``doubt`` then says why it is only a guess)."""
    problems: list[SyntaxProblem] = [as_problem(p) for p in loaded.problems]
    if loaded.count > 1 and not problems:
        extra = single_document_problem(text)
        if extra is not None:
            problems.append(as_problem(extra))
    if not loaded.docs and problems:
        # nothing sglang could read: no launch to check, only the problem to report
        return SurfaceResult(problems=tuple(problems), is_launch_file=True)
    y = YamlText(text)
    root = loaded.docs[0] if loaded.docs else None
    entries: list[ConfigEntry] = []
    duplicates: list[tuple[Located[str], Located[str]]] = []
    span = Span(0, len(text))
    if root is not None and not (isinstance(root, ScalarNode) and root.tag == NULL_TAG):
        if not isinstance(root, MappingNode):
            problems.append(SyntaxProblem(ROOT_NOT_MAPPING, y.span(root)))
        else:
            span = y.span(root)
            entries, duplicates = config_entries(y, root, problems)
    config = ConfigFile(path=path, format="yaml", entries=tuple(entries), duplicates=tuple(duplicates))
    start = span.start
    launch = LaunchCommand(
        path=path,
        surface=Surface.CONFIG_YAML,
        entry=Entry.CONFIG_FILE,
        program=Located("--config", Span(start, start)),
        argv=(),
        span=span,
        base_dir=path.parent,
        config=config,
        doubt=doubt,
    )
    return SurfaceResult(launches=(launch,), problems=tuple(problems), is_launch_file=True)


def config_entries(
    y: YamlText, root: MappingNode, problems: list[SyntaxProblem]
) -> tuple[list[ConfigEntry], list[tuple[Located[str], Located[str]]]]:
    """A mapping's entries as sglang's ``--config`` reader gives them (also an srt-slurm role map)."""
    # dict semantics: the first occurrence fixes the order, the last one the key and value
    order: list[object] = []
    latest: dict[object, ConfigEntry] = {}
    previous: dict[object, Located[str]] = {}
    duplicates: list[tuple[Located[str], Located[str]]] = []
    for pair in _pairs(y, root):
        if not isinstance(pair.key, ScalarNode):
            continue  # a complex key cannot name a flag; sglang would fail on it anyway
        key_text = Located(pair.key.value, pair.key_span)
        value_span = _value_span(y, pair)
        try:
            hashable = construct(pair.key, y.text, pair.key_span)
            hash(hashable)
        except (ConstructError, TypeError):
            hashable = ("raw", pair.key.value)
        try:
            value = construct(pair.value, y.text, value_span)
        except ConstructError as exc:
            problems.append(as_problem(exc.problem))
            continue
        items: tuple[Span, ...] = ()
        if isinstance(pair.value, SequenceNode):
            items = tuple(s for _, s in y.seq_items(pair.value))
        entry = ConfigEntry(key=key_text, value=value, value_span=value_span, item_spans=items)
        if hashable not in latest:
            order.append(hashable)
        latest[hashable] = entry
        if pair.own:
            earlier = previous.get(hashable)
            if earlier is not None:
                duplicates.append((key_text, earlier))
            previous[hashable] = key_text
    return [latest[k] for k in order], duplicates
