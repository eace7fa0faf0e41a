"""What sits under the cursor in a launch file: a flag (option word or YAML/TOML key) or its value."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kimi_lsp.engine import Engine
from kimi_lsp.knowledge.schema import Flag, Schema
from kimi_lsp.surfaces.model import LaunchCommand
from kimi_lsp.text import Span


@dataclass(frozen=True)
class Hit:
    written: str  # the option (``--tp-size``) or key (``tp-size``) as written
    is_key: bool  # a config-file key (no dashes)
    span: Span  # what the cursor is on (option, key or value)
    value: str | None  # the value, when the cursor is on it
    command: LaunchCommand


@dataclass(frozen=True)
class FlagAt:
    hit: Hit
    schema: Schema
    flag: Flag | None
    candidates: tuple[str, ...] = ()  # an ambiguous prefix


def _in_config(cmd: LaunchCommand, path: Path, offset: int) -> Hit | None:
    if cmd.config is None or cmd.config.path.resolve() != path:
        return None
    for e in cmd.config.entries:
        if e.key.span.contains(offset):
            return Hit(e.key.value, True, e.key.span, None, cmd)
        spans = e.item_spans or (e.value_span,)
        for sp in spans:
            if sp.start < sp.end and sp.contains(offset):
                value = None if isinstance(e.value, (list, dict)) else str(e.value)
                return Hit(e.key.value, True, sp, value, cmd)
    return None


def _in_argv(cmd: LaunchCommand, path: Path, offset: int) -> Hit | None:
    if cmd.path.resolve() != path:
        return None
    argv = cmd.argv
    for i, tok in enumerate(argv):
        if not tok.span.contains(offset):
            continue
        word = tok.value
        if word.startswith("-") and len(word) > 1:
            head, eq, value = word.partition("=")
            if eq and tok.exact and offset > tok.span.start + len(head):
                return Hit(head, False, Span(tok.span.start + len(head) + 1, tok.span.end), value, cmd)
            end = tok.span.start + len(head) if eq and tok.exact else tok.span.end
            return Hit(head, False, Span(tok.span.start, end), None, cmd)
        prev = argv[i - 1].value if i > 0 else ""
        if prev.startswith("-") and "=" not in prev:
            return Hit(prev, False, tok.span, word, cmd)
        return None
    return None


def flag_at(engine: Engine, path: Path, offset: int) -> FlagAt | None:
    _, surface = engine.read_launches(path)
    if surface is None:
        return None
    for cmd in surface.launches:
        hit = _in_config(cmd, path, offset) or _in_argv(cmd, path, offset)
        if hit is not None:
            schema = engine.schema_for_launch(path, cmd)
            return resolve(hit, schema)
    return None


def resolve(hit: Hit, schema: Schema) -> FlagAt:
    if hit.is_key:
        flag = schema.config_key(hit.written)
        found = flag if flag is not None else schema.match("--" + hit.written)
    else:
        found = schema.match(hit.written)
    if isinstance(found, tuple):
        return FlagAt(hit, schema, None, found)
    return FlagAt(hit, schema, found)
