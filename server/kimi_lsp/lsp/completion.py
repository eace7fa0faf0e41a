"""Completion of sglang flag names and of choice values, for the release the project pins.

YAML keys without dashes in an sglang ``--config`` YAML and in a TOML profile's ``[sglang]``
table; ``--flags`` elsewhere (shell scripts, Dockerfiles, Kubernetes/compose/CI YAML).
Documentation is attached in ``completionItem/resolve`` when the client supports it.

Completion reads the text around the cursor, not the file's parse: a half-written file (a typo
in another key, an ambiguous prefix, a YAML syntax error further down) still completes. Items are
filtered by the word typed so far (on the whole name or on one of its dash-separated parts, a
superset of what the client's own fuzzy filter keeps), so a list is small and complete
(``isIncomplete: false``); only a list over ``MAX_ITEMS`` (an empty prefix) is cut and marked
incomplete, so that the client asks again as the user types.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as T

from kimi_lsp.knowledge.schema import HELP_ACTION, Flag, Schema, load_schema
from kimi_lsp.lsp import convert, flagdoc
from kimi_lsp.lsp.session import Session, Snaps, uri_to_path
from kimi_lsp.surfaces.model import Entry
from kimi_lsp.text import LineIndex, Span

if TYPE_CHECKING:
    from kimi_lsp.lsp.server import KimiLanguageServer

_YAML_KEY = re.compile(r"^([A-Za-z0-9_-]*)$")
_YAML_VALUE = re.compile(r"^([A-Za-z0-9_-]+):(\s*)(['\"]?)([^\s'\"#]*)$")
_TOML_KEY = re.compile(r"^\s*([A-Za-z0-9_-]*)$")
_TOML_VALUE = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=\s*(['\"]?)([^'\"]*)$")
_TOML_HEADER = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]")
_FLAG_VALUE = re.compile(r"(--[A-Za-z0-9_-]+)(?:=|[\s'\",]+)(['\"]?)([^\s'\",=]*)$")
_WORD = re.compile(r"[^\s'\"\[\],=]*$")
_TOP_KEY = re.compile(r"^([A-Za-z0-9_-]+)\s*:", re.M)
MAX_ITEMS = 100


@dataclass(frozen=True)
class Ctx:
    kind: str  # "key" | "flag" | "value"
    start: int  # offset where the replaced word starts
    flag_word: str = ""  # for "value": the option or key naming the flag
    is_key: bool = False  # keys are written without dashes
    quote: str | None = None  # TOML: the value needs quotes added
    space: str = ""  # YAML: a space to insert after a bare colon
    prefix: str = ""  # what is typed of the word so far (the filter)


def _toml_table(lines: LineIndex, line: int) -> str | None:
    for i in range(line, -1, -1):
        m = _TOML_HEADER.match(lines.line_text(i))
        if m:
            return m.group(1)
    return None


def _yaml_config_like(session: Session, path: Path, text: str) -> bool:
    """An sglang config YAML: read as one, named by a launch's ``--config``, or more than half
    of its top-level keys look like sglang options. "More than half", not "all": a config being
    written has a typo or an ambiguous prefix somewhere, and still completes; a Kubernetes,
    compose or CI file (``apiVersion``, ``services``, ``jobs``) does not qualify."""
    if path in session.engine.referenced_configs:
        return True
    _, surface = session.engine.read_launches(path)
    if surface is not None and any(c.entry is Entry.CONFIG_FILE for c in surface.launches):
        return True
    keys = _TOP_KEY.findall(text)  # the word being typed has no colon yet: it is not among them
    if not keys:
        return True  # a new file
    sglang_ish = {k: _sglang_ish(k) for k in set(keys)}  # a manifest repeats a few keys many times
    return 2 * sum(1 for k in keys if sglang_ish[k]) > len(keys)


def _sglang_ish(key: str) -> bool:
    """An option's name, a prefix of one or more (argparse's rules), or a near miss (a typo)."""
    import difflib

    schema = load_schema(None)
    if schema.config_key(key) is not None or schema.match("--" + _norm(key)) is not None:
        return True
    return bool(difflib.get_close_matches("--" + _norm(key), schema.long_options(), n=1, cutoff=0.8))


def _norm(word: str) -> str:
    return word.lstrip("-").replace("_", "-").lower()


def matches(label: str, prefix: str) -> bool:
    """``tp`` finds ``tp-size``; ``backend`` finds ``decode-attention-backend``; ``tp_s``
    finds ``tp-size`` (keys written with underscores are KL205, but the intent is clear)."""
    want = _norm(prefix)
    if not want:
        return True
    name = _norm(label)
    return name.startswith(want) or any(part.startswith(want) for part in name.split("-")[1:])


def context(session: Session, path: Path, lines: LineIndex, text: str, offset: int) -> Ctx | None:
    line = lines.line_of(offset)
    start = lines.line_start(line)
    before = text[start:offset]
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml") and _yaml_config_like(session, path, text):
        if _YAML_KEY.match(before):
            return Ctx("key", start, is_key=True, prefix=before)
        m = _YAML_VALUE.match(before)
        if m:
            return Ctx("value", offset - len(m.group(4)), m.group(1), True, space="" if m.group(2) else " ", prefix=m.group(4))
    if suffix == ".toml" and _toml_table(lines, line) == "sglang":
        m = _TOML_KEY.match(before)
        if m:
            return Ctx("key", offset - len(m.group(1)), is_key=True, prefix=m.group(1))
        m = _TOML_VALUE.match(before)
        if m:
            return Ctx("value", offset - len(m.group(3)), m.group(1), True, quote=None if m.group(2) else '"', prefix=m.group(3))
    if "sglang" not in text:
        return None
    m = _FLAG_VALUE.search(before)
    if m and not m.group(3).startswith("-"):
        return Ctx("value", offset - len(m.group(3)), m.group(1), prefix=m.group(3))
    found = _WORD.search(before)  # always matches: the pattern may match empty at the end
    word = found.group(0) if found else ""
    if word.startswith("-"):
        return Ctx("flag", offset - len(word), prefix=word)
    return None


@dataclass(frozen=True)
class ClientShape:
    """What the client's completion supports (decides how items are written)."""

    tags: bool = False  # CompletionItemTag.Deprecated
    lazy_docs: bool = False  # completionItem/resolve fills in documentation
    edit_range: bool = False  # CompletionList.itemDefaults.editRange (LSP 3.17)


def _tags(deprecated: bool, shape: ClientShape) -> dict[str, Any]:
    if not deprecated:
        return {}
    return {"tags": [T.CompletionItemTag.Deprecated]} if shape.tags else {"deprecated": True}


def _detail(flag: Flag) -> str:
    d = flagdoc.type_name(flag)
    if flag.takes_value and flag.default not in (None, "==SUPPRESS=="):
        d += f" · default {flag.default}"
    return d


_CATALOGS: dict[tuple[str, bool], tuple[tuple[str, str, str, bool], ...]] = {}


def _catalog(schema: Schema, is_key: bool) -> tuple[tuple[str, str, str, bool], ...]:
    """(label, option, detail, deprecated) of every completable spelling, computed once per release."""
    hit = _CATALOGS.get((schema.version, is_key))
    if hit is None:
        hit = _CATALOGS[(schema.version, is_key)] = _build_catalog(schema, is_key)
    return hit


def _build_catalog(schema: Schema, is_key: bool) -> tuple[tuple[str, str, str, bool], ...]:
    out = []
    for flag in schema.flags:
        if flag.hidden or flag.action == HELP_ACTION or "--config" in flag.options:
            continue
        deprecated = flagdoc.is_deprecated(flag, schema)
        detail = _detail(flag)
        for opt in flag.long_options:
            out.append((opt[2:] if is_key else opt, opt, detail, deprecated))
    return tuple(out)


def _edit(rng: T.Range, label: str, new: str, shape: ClientShape) -> dict[str, Any]:
    """The item's edit: per item, or only its text when the list carries the range."""
    if shape.edit_range:
        return {"text_edit_text": new} if new != label else {}
    return {"text_edit": T.TextEdit(range=rng, new_text=new)}


def flag_items(schema: Schema, ctx: Ctx, rng: T.Range, shape: ClientShape, tail: str) -> list[T.CompletionItem]:
    kind = T.CompletionItemKind.Property if ctx.is_key else T.CompletionItemKind.Field
    items = []
    for label, opt, detail, deprecated in _catalog(schema, ctx.is_key):
        if not matches(label, ctx.prefix):
            continue
        flag = schema.exact(opt) if not shape.lazy_docs else None
        items.append(
            T.CompletionItem(
                label=label,
                kind=kind,
                detail=detail,
                documentation=_docs(flag, schema) if flag is not None else None,
                sort_text=f"~{label}" if deprecated else None,
                data=f"{schema.version} {opt}",
                **_edit(rng, label, f"{label}{tail}" if ctx.is_key else label, shape),
                **_tags(deprecated, shape),
            )
        )
    return items


def value_items(flag: Flag, schema: Schema, ctx: Ctx, rng: T.Range, shape: ClientShape) -> list[T.CompletionItem]:
    old = dict(schema.deprecated_values.get(flag.dest, {}))
    values = [str(c) for c in flag.choices or ()]
    if not values and ctx.is_key and flag.action == "store_true":
        values = ["true", "false"]
    items = []
    for v in values:
        if not matches(v, ctx.prefix):
            continue
        deprecated = v in old
        new = f"{ctx.quote}{v}{ctx.quote}" if ctx.quote else f"{ctx.space}{v}"
        items.append(
            T.CompletionItem(
                label=v,
                kind=T.CompletionItemKind.EnumMember,
                detail=f"deprecated alias of {old[v]}" if deprecated else flag.options[0],
                sort_text=f"~{v}" if deprecated else None,
                **_edit(rng, v, new, shape),
                **_tags(deprecated, shape),
            )
        )
    return items


def _docs(flag: Flag, schema: Schema) -> T.MarkupContent:
    return T.MarkupContent(kind=T.MarkupKind.Markdown, value=flagdoc.markdown(flag, schema))


def _value_flag(schema: Schema, ctx: Ctx) -> Flag | None:
    found = (
        (schema.config_key(ctx.flag_word) or schema.match("--" + ctx.flag_word))
        if ctx.is_key
        else schema.match(ctx.flag_word)
    )
    return found if isinstance(found, Flag) else None


def complete(session: Session, snaps: Snaps, uri: str, pos: T.Position, shape: ClientShape) -> T.CompletionList | None:
    """On the lint thread."""
    session.sync(snaps)
    path = uri_to_path(uri)
    src_text = session.text_of(path) if path is not None else None
    if path is None or src_text is None:
        return None
    lines = LineIndex(src_text)
    offset = convert.offset_of(lines, pos, session.encoding)
    ctx = context(session, path, lines, src_text, offset)
    if ctx is None:
        return None
    schema = session.engine.schema_for_launch(path)
    rng = convert.span_to_range(lines, Span(ctx.start, offset), session.encoding)
    if ctx.kind == "value":
        flag = _value_flag(schema, ctx)
        items = value_items(flag, schema, ctx, rng, shape) if flag is not None else []
    else:
        rest = src_text[offset : lines.line_end(lines.line_of(offset))]
        tail = ": " if ctx.is_key and path.suffix.lower() in (".yaml", ".yml") and not rest.strip() else ""
        tail = " = " if ctx.is_key and path.suffix.lower() == ".toml" and not rest.strip() else tail
        items = flag_items(schema, ctx, rng, shape, tail)
    defaults = T.CompletionItemDefaults(edit_range=rng) if shape.edit_range else None
    incomplete = len(items) > MAX_ITEMS
    if incomplete:  # deprecated spellings last, as the client would sort them
        items = sorted(items, key=lambda i: i.sort_text or i.label)[:MAX_ITEMS]
    return T.CompletionList(is_incomplete=incomplete, items=items, item_defaults=defaults)


def resolve_item(item: T.CompletionItem) -> T.CompletionItem:
    if item.documentation is None and isinstance(item.data, str) and " " in item.data:
        version, option = item.data.split(" ", 1)
        schema = load_schema(version)
        flag = schema.exact(option)
        if flag is not None:
            item.documentation = _docs(flag, schema)
    return item


def client_shape(ls: KimiLanguageServer) -> ClientShape:
    item = "text_document.completion.completion_item"
    return ClientShape(
        tags=T.CompletionItemTag.Deprecated in (ls.cap(f"{item}.tag_support.value_set") or ()),
        lazy_docs="documentation" in (ls.cap(f"{item}.resolve_support.properties") or ()),
        edit_range="editRange" in (ls.cap("text_document.completion.completion_list.item_defaults") or ()),
    )
