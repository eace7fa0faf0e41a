"""kimi-lsp TOML launch profiles: the ``[sglang]`` table of any ``*.toml``.

Keys are flag names without ``--`` (dashes or underscores), values as in the YAML config;
``[sglang.env]`` holds environment variables for the launch. sglang itself reads no TOML (its
``--config`` rejects ``.toml``), so this format is kimi-lsp's own.

Values, syntax errors and positions come from ``syntax/toml.py``, imported only when a TOML file
is read (a YAML-only ``--check`` never loads tomllib).
"""
from __future__ import annotations

import re
from pathlib import Path

from kimi_lsp import _regex
from kimi_lsp.surfaces.model import (
    ConfigEntry,
    ConfigFile,
    Entry,
    EnvVar,
    LaunchCommand,
    Surface,
    SurfaceResult,
    SyntaxProblem,
)
from kimi_lsp.text import Located, Span

SGLANG_TABLE_RE = _regex.compile(r"^[ \t]*(?:\[[ \t]*[\"']?sglang[\"']?[ \t]*[.\]]|[\"']?sglang[\"']?[ \t]*[.=])", re.MULTILINE)
_SGLANG_HEADER_RE = _regex.compile(r"^[ \t]*\[[ \t]*[\"']?sglang[\"']?[ \t]*[.\]]", re.MULTILINE)


def has_sglang_table(text: str) -> bool:
    """Whether the text defines a top-level ``sglang`` table (a broken file: a header for it)."""
    if SGLANG_TABLE_RE.search(text) is None:  # cheap filter for the common case
        return False
    from kimi_lsp.syntax.toml import parse

    data = parse(text)
    if isinstance(data, SyntaxProblem):
        return _SGLANG_HEADER_RE.search(text) is not None
    return isinstance(data.get("sglang"), dict)


def _env_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def read_toml(path: Path, text: str, *, forced: bool = False) -> SurfaceResult:
    from kimi_lsp.syntax.toml import locate, parse

    data = parse(text)
    if isinstance(data, SyntaxProblem):
        return SurfaceResult(problems=(data,), is_launch_file=forced or has_sglang_table(text))
    table = data.get("sglang")
    if not isinstance(table, dict):
        note = ("no [sglang] table",) if forced else ()
        return SurfaceResult(is_launch_file=forced, notes=note)
    locs = locate(text)
    header_key = locs.keys.get(("sglang",))
    header_value = locs.value_or_table(("sglang",))
    fallback = header_key or Span(0, 0)
    entries: list[ConfigEntry] = []
    env: list[EnvVar] = []
    for key, value in table.items():
        if key == "env" and isinstance(value, dict):
            for name, raw in value.items():
                env_path = ("sglang", "env", name)
                name_span = locs.keys.get(env_path) or fallback
                value_span = locs.value_or_table(env_path) or fallback
                env.append(EnvVar(Located(name, name_span), Located(_env_value(raw), value_span)))
            continue
        key_path = ("sglang", key)
        key_span = locs.keys.get(key_path)
        entries.append(
            ConfigEntry(
                key=Located(key, key_span or fallback),
                value=value,
                value_span=(locs.value_or_table(key_path) or fallback) if key_span else fallback,
                item_spans=locs.items(key_path) if key_span and isinstance(value, list) else (),
            )
        )
    entries.sort(key=lambda e: e.key.span.start)
    spans = [e.value_span for e in entries] + [e.key.span for e in entries]
    if header_value is not None:
        spans.append(header_value)
    span = Span(min(s.start for s in spans), max(s.end for s in spans)) if spans else Span(0, 0)
    program = Located("[sglang]", header_value if header_value else Span(span.start, span.start))
    config = ConfigFile(path=path, format="toml", entries=tuple(entries), env=tuple(env))
    launch = LaunchCommand(
        path=path,
        surface=Surface.TOML,
        entry=Entry.CONFIG_FILE,
        program=program,
        argv=(),
        span=span,
        base_dir=path.parent,
        env=tuple(env),
        config=config,
    )
    return SurfaceResult(launches=(launch,), is_launch_file=True)
