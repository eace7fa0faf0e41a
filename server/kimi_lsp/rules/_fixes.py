"""Edits on launch files, built from located tokens; never by re-serialising YAML or TOML."""
from __future__ import annotations

from pathlib import Path

from kimi_lsp.diagnostics import Applicability, Edit, Fix
from kimi_lsp.launch import ArgUse, Origin, ResolvedLaunch
from kimi_lsp.surfaces.model import Surface, Token
from kimi_lsp.text import Span
from kimi_lsp.workspace import Workspace


def _path_of(launch: ResolvedLaunch, use: ArgUse) -> Path:
    if use.origin is Origin.CONFIG and launch.config is not None:
        return launch.config.path
    return launch.command.path


def replace_token_value(text: str, tok: Token, new: str) -> Span | None:
    """Span to replace so that ``tok`` reads ``new``, keeping its quotes. None if unsafe."""
    raw = text[tok.span.start : tok.span.end]
    if raw == tok.value:
        return tok.span
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" and raw[1:-1] == tok.value:
        return Span(tok.span.start + 1, tok.span.end - 1)
    return None


def set_value_fix(
    launch: ResolvedLaunch,
    use: ArgUse,
    value: str,
    title: str,
    workspace: Workspace,
    applicability: Applicability = Applicability.UNSAFE,
) -> Fix | None:
    """Replace the value of an existing flag occurrence."""
    if not use.values or len(use.values) != 1:
        return None
    tok = use.values[0]
    source_text = workspace.text(_path_of(launch, use))
    if source_text is None:
        return None
    span = replace_token_value(source_text, tok, tok.value)
    if span is None:
        return None
    return Fix(title, (Edit(_path_of(launch, use), span, value),), applicability)


def add_flag_fix(
    launch: ResolvedLaunch,
    after: ArgUse,
    option: str,
    value: str,
    title: str,
    workspace: Workspace,
    applicability: Applicability = Applicability.UNSAFE,
) -> Fix | None:
    """Insert ``option value`` right after an existing flag occurrence.

    Shell-like command lines get `` --opt value`` after the last value word; a config YAML gets a
    new top-level line after the entry. Exec-form lists (JSON/YAML sequences) get no fix: an
    insertion there needs list syntax we do not rewrite.
    """
    path = _path_of(launch, after)
    text = workspace.text(path)
    if text is None:
        return None
    if after.origin is Origin.CONFIG and after.entry is not None:
        if launch.config is None or launch.config.format != "yaml":
            return None
        # insert a sibling line below the entry, at the key's column
        key_start = after.entry.key.span.start
        line_start = text.rfind("\n", 0, key_start) + 1
        indent = text[line_start:key_start]
        if indent.strip():
            return None
        end = after.entry.value_span.end
        nl = text.find("\n", end)
        insert_at = len(text) if nl < 0 else nl + 1
        newline = "\r\n" if "\r\n" in text else "\n"
        prefix = "" if nl >= 0 else newline
        new = f"{prefix}{indent}{option.lstrip('-')}: {value}{newline}"
        return Fix(title, (Edit(path, Span(insert_at, insert_at), new),), applicability)
    if launch.command.surface not in (Surface.SHELL, Surface.DOCKERFILE, Surface.CI_YAML, Surface.COMPOSE, Surface.KUBERNETES):
        return None
    last = after.values[-1] if after.values else after.option
    raw = text[last.span.start : last.span.end]
    # only when the word is plain shell text (not a JSON/YAML list item)
    if raw.startswith('"') and text[last.span.end : last.span.end + 1] in (",", "]"):
        return None
    if launch.command.surface in (Surface.KUBERNETES, Surface.COMPOSE):
        line_start = text.rfind("\n", 0, last.span.start) + 1
        if text[line_start:last.span.start].strip().startswith("-"):
            return None
    pos = last.span.end
    return Fix(title, (Edit(path, Span(pos, pos), f" {option} {value}"),), applicability)
