"""Shared helpers for the argument-schema (KL2xx) and cross-argument (KL3xx) rules.

They read a ``ResolvedLaunch`` the way sglang's resolution does: the last occurrence of a flag
wins, an unset flag has its schema default, store-true flags are booleans, and the release's
deprecated value renames (its schema's ``deprecated_values``: ``tokenspeed_mla -> cutedsl_mla``
from 0.5.23) happen before any check looks at a backend.
Nothing here reads files; positions come from the located tokens.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from kimi_lsp.diagnostics import Applicability, Edit, Fix, Location, Related
from kimi_lsp.knowledge.schema import Flag, Schema
from kimi_lsp.launch import ArgProblem, ArgProblemKind, ArgUse, Origin, ResolvedLaunch
from kimi_lsp.rules import _base
from kimi_lsp.rules._base import LaunchContext
from kimi_lsp.rules._fixes import replace_token_value
from kimi_lsp.surfaces.model import ConfigEntry, Entry, Token
from kimi_lsp.text import Span

# argparse stops at these; whatever follows them was never parsed
_TRUE = frozenset({"1", "true", "yes", "on", "y", "t"})
# entry points that run sglang's --config merger
MERGING_ENTRIES = (Entry.LAUNCH_SERVER, Entry.SERVE)


# -- locations ---------------------------------------------------------------------------


def origin_path(launch: ResolvedLaunch, origin: Origin) -> Path:
    if origin is Origin.CONFIG and launch.config is not None:
        return launch.config.path
    return launch.command.path


def use_location(launch: ResolvedLaunch, use: ArgUse) -> Location:
    return Location(origin_path(launch, use.origin), use.decisive_span)


def token_location(launch: ResolvedLaunch, tok: Token, origin: Origin) -> Location:
    return Location(origin_path(launch, origin), tok.span)


def value_location(launch: ResolvedLaunch, use: ArgUse, tok: Token) -> Location:
    """A finding about one value: the whole option-and-value for a single value (it starts on the
    option's line, like every other finding about a flag), the value alone among several."""
    if len(use.values) <= 1:
        return use_location(launch, use)
    return token_location(launch, tok, use.origin)


def problem_location(launch: ResolvedLaunch, prob: ArgProblem) -> Location:
    return token_location(launch, prob.token, prob.origin)


def launch_anchor(launch: ResolvedLaunch) -> Location:
    """Where a finding about the whole launch sits: the model path, else the program."""
    use = launch.last("model_path")
    if use is not None:
        return use_location(launch, use)
    cmd = launch.command
    if cmd.program.span.end > cmd.program.span.start:
        return Location(cmd.path, cmd.program.span)
    return Location(cmd.path, Span(cmd.span.start, cmd.span.start))


def related_use(launch: ResolvedLaunch, use: ArgUse, message: str) -> Related:
    return Related(use_location(launch, use), message)


def flag_text(use: ArgUse) -> str:
    """How the user wrote the option: `--tp-size` on a command line, `tp-size` in a config file."""
    if use.origin is Origin.CONFIG and use.entry is not None:
        return use.entry.key.value
    return use.option.value


def spelled(use: ArgUse) -> str:
    """`--tp-size 8` / `tp-size: 8`, for messages."""
    value = " ".join(t.value for t in use.values)
    if use.origin is Origin.CONFIG and use.entry is not None:
        return f"{use.entry.key.value}: {value}" if use.values else use.entry.key.value
    if use.inline:
        return f"{use.option.value}={value}"
    return f"{use.option.value} {value}".rstrip()


# -- values ------------------------------------------------------------------------------


def parse_int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


def default(schema: Schema, dest: str) -> object:
    from kimi_lsp.launch import field_flag

    # `tp_size` is `tensor_parallel_size` to argparse up to 0.5.13 (launch._FIELD_OF_DEST)
    flag = schema.by_dest(dest) or field_flag(schema, dest)
    return None if flag is None else flag.default


def int_value(launch: ResolvedLaunch, dest: str) -> int | None:
    """The value sglang would see: the last occurrence, else the schema default (None: unknown)."""
    use = launch.last(dest)
    if use is not None:
        return parse_int(use.value)
    d = default(launch.schema, dest)
    return d if isinstance(d, int) and not isinstance(d, bool) else None


def str_value(launch: ResolvedLaunch, dest: str) -> str | None:
    use = launch.last(dest)
    if use is not None:
        return use.value
    d = default(launch.schema, dest)
    return d if isinstance(d, str) else None


def flag_on(launch: ResolvedLaunch, dest: str) -> ArgUse | None:
    """The occurrence that turns a boolean flag on (store-true, or `--x` of a `--x/--no-x` pair)."""
    use = launch.last(dest)
    if use is None or use.flag.takes_value:
        return None
    if use.flag.action == "boolean_optional" and is_negative_option(use):
        return None
    return use


def is_negative_option(use: ArgUse) -> bool:
    """Whether a `--x/--no-x` occurrence is the `--no-x` spelling (unique prefixes included)."""
    head = use.option.value.split("=", 1)[0]
    if use.origin is Origin.CONFIG and use.entry is not None:
        head = "--" + use.entry.key.value
    negatives = [o for o in use.flag.options if o.startswith("--no-")]
    return any(o == head or o.startswith(head) for o in negatives) and not any(
        (o == head or o.startswith(head)) for o in use.flag.options if not o.startswith("--no-")
    )


def release_at_least(launch: ResolvedLaunch, version: str) -> bool:
    """Whether the release the launch is checked against is ``version`` or newer (a check that
    sglang added in ``version`` says nothing about the releases before it)."""
    from kimi_lsp.pep440 import InvalidVersion, Version

    try:
        return Version(launch.schema.version) >= Version(version)
    except InvalidVersion:
        return True


def backend(launch: ResolvedLaunch, dest: str) -> tuple[str | None, ArgUse | None]:
    """An attention backend flag after sglang's deprecated renames; "" counts as unset."""
    use = launch.last(dest)
    if use is None or not use.value:
        return None, None
    return launch.schema.deprecated_values.get(dest, {}).get(use.value, use.value), use


def attention_backends(launch: ResolvedLaunch) -> tuple[tuple[str | None, ArgUse | None], tuple[str | None, ArgUse | None]]:
    """sglang's ``attention_backends_of``: (prefill, decode), each the phase flag else
    ``--attention-backend``."""
    general = backend(launch, "attention_backend")
    prefill = backend(launch, "prefill_attention_backend")
    decode = backend(launch, "decode_attention_backend")
    return (prefill if prefill[0] else general), (decode if decode[0] else general)


def env_set(launch: ResolvedLaunch, name: str) -> bool:
    """An environment variable set on the launch with a value sglang reads as true."""
    value = launch.env_value(name)
    return value is not None and value.strip().lower() in _TRUE


def env_present(launch: ResolvedLaunch, name: str) -> bool:
    """Set at all (a value we cannot know counts as set)."""
    return name in launch.env


def plugins_active(launch: ResolvedLaunch) -> bool:
    """sglang loads plugins (which may extend choice lists) when SGLANG_PLUGINS is set."""
    var = launch.env.get("SGLANG_PLUGINS")
    return var is not None and (var.value is None or bool(var.value.value.strip()))


fatal_parse = _base.fatal_parse  # re-exported: the rules that read it next to another condition


def is_literal(tok: Token, origin: Origin) -> bool:
    """Whether a word's value is known at lint time: a shell word with `$VAR` or a command
    substitution is only known when the launch runs."""
    return origin is not Origin.CLI or ("$" not in tok.value and "`" not in tok.value)


def argv_is_known(launch: ResolvedLaunch) -> bool:
    """Every command-line word is literal text (no `$VAR`, `"$@"` or command substitution)."""
    return all(t.exact and "$" not in t.value and "`" not in t.value for t in launch.command.argv)


# -- config entries ----------------------------------------------------------------------


def entry_flag(schema: Schema, key: str) -> Flag | None:
    """The flag a `--config` key ends up on: the merger's own table, else argparse's matching
    of the emitted `--{key}` (a unique prefix), else None."""
    flag = schema.config_key(key)
    if flag is not None:
        return flag
    m = schema.match("--" + key)
    return m if isinstance(m, Flag) else None


def is_refused_key(schema: Schema, key: str) -> bool:
    """Whether the merger raises "Unsupported config option" for ``key`` (its own table decides:
    an alias it does not know is emitted as `--{key}` like any unknown key)."""
    flag = schema.config_key(key)
    return flag is not None and bool(flag.config_refused)


def is_store_true_key(schema: Schema, key: str) -> bool:
    """Whether the merger turns `key: true` into a bare `--key` (its own list, per release).

    The 0.5.1-0.5.7 merger (`config_verbatim`) does so for every key: its list of boolean keys
    is always empty, so any YAML boolean is a bare flag (true) or nothing (false)."""
    return schema.config_verbatim or key.replace("-", "_") in schema.config_store_true_keys


def merges_config(launch: ResolvedLaunch) -> bool:
    """Whether the launch's entry point runs a `--config` merger on its release (0.4.x has no
    `--config` option: argparse rejects it as unrecognized, and KL201 says so)."""
    return launch.command.entry in MERGING_ENTRIES and launch.schema.config_merger


def is_yaml_config(launch: ResolvedLaunch) -> bool:
    return launch.config is not None and launch.config.format == "yaml"


def special_config_value(schema: Schema, entry: ConfigEntry) -> str | None:
    """Which config-merger rule speaks for an entry's value, so that the generic value rules
    (KL202/KL203) stay quiet: "null", "list", "store-true" or None. Four rules ask it of every
    entry: the answer depends on the key and the value's shape only, and is remembered per
    schema."""
    value = entry.value
    shape: object = (
        "null" if value is None else len(value) if isinstance(value, list) else "bool" if isinstance(value, bool) else "other"
    )
    key = (schema, entry.key.value, shape)  # (a schema compares by identity; loaded ones live on)
    try:
        return _SPECIAL_VALUES[key]
    except KeyError:
        if len(_SPECIAL_VALUES) > 20_000:  # keys typed in an editor, one new one per keystroke
            _SPECIAL_VALUES.clear()
        found = _SPECIAL_VALUES[key] = _special_config_value(schema, entry)
        return found


_SPECIAL_VALUES: dict[tuple[Schema, str, object], str | None] = {}


def _special_config_value(schema: Schema, entry: ConfigEntry) -> str | None:
    flag = entry_flag(schema, entry.key.value)
    if flag is None or is_refused_key(schema, entry.key.value):
        return None
    if entry.value is None:
        return "null"
    _, most = flag.arity
    if isinstance(entry.value, list):
        return "list" if most is not None and len(entry.value) > most else None
    if not flag.takes_value:
        if isinstance(entry.value, bool) and is_store_true_key(schema, entry.key.value):
            return None
        return "store-true"
    return None


# -- did-you-mean --------------------------------------------------------------------------


def closest_choice(value: str, choices: Iterable[object]) -> str | None:
    names = [str(c) for c in choices]
    low = {n.lower(): n for n in names}
    if value.lower() in low:
        return low[value.lower()]
    import difflib  # only a did-you-mean needs it

    found = difflib.get_close_matches(value, names, n=1, cutoff=0.6)
    return found[0] if found else None


# How alike a word must be to a known option or choice to count as its misspelling where the launch
# may run code newer than the schema (``LaunchContext.beyond_schema``): one or two letters off.
NEAR_MISS_RATIO = 0.85


# A did-you-mean is offered only when the names themselves (without their dashes, which every
# option shares) are this alike: `--kv-offload-tier` is not a misspelling of `--ple-offload-dir`
# (0.73), `--mem-fration-static` is of `--mem-fraction-static` (0.97).
HINT_RATIO = 0.75


def worth_a_hint(word: str, guess: str | None) -> bool:
    """Whether ``guess`` is near enough ``word`` to be offered as a did-you-mean."""
    if guess is None:
        return False
    import difflib

    a, b = word.lstrip("-").lower(), guess.lstrip("-").lower()
    return difflib.SequenceMatcher(None, a, b).ratio() >= HINT_RATIO


def near_miss(word: str, guess: str | None) -> bool:
    """Whether ``word`` is surely a misspelling of ``guess`` (not merely like it): where new
    options and choices may exist, only such words are reported."""
    if guess is None:
        return False
    if word.lower() == guess.lower():
        return True
    import difflib

    return difflib.SequenceMatcher(None, word, guess).ratio() >= NEAR_MISS_RATIO


def show_choices(choices: Iterable[object], limit: int = 8) -> str:
    names = [str(c) for c in choices]
    shown = ", ".join(f"`{n}`" for n in names[:limit])
    if len(names) > limit:
        shown += f", … ({len(names) - limit} more)"
    return shown


# -- fixes ---------------------------------------------------------------------------------


def replace_token(
    ctx: LaunchContext, tok: Token, origin: Origin, new: str, title: str,
    applicability: Applicability = Applicability.UNSAFE,
) -> Fix | None:
    """Replace a whole token's text (keeping its quotes) when the token maps 1:1 onto the file."""
    path = origin_path(ctx.launch, origin)
    text = ctx.workspace.text(path)
    if text is None or not tok.exact:
        return None
    span = replace_token_value(text, tok, tok.value)
    if span is None:
        return None
    return Fix(title, (Edit(path, span, new),), applicability)


def replace_prefix(
    ctx: LaunchContext, tok: Token, origin: Origin, length: int, new: str, title: str,
    applicability: Applicability = Applicability.UNSAFE,
) -> Fix | None:
    """Replace the first ``length`` characters of an unquoted token (e.g. the option part of
    `--opt=value`)."""
    path = origin_path(ctx.launch, origin)
    text = ctx.workspace.text(path)
    if text is None or not tok.exact:
        return None
    raw = text[tok.span.start : tok.span.end]
    if raw == tok.value:
        start = tok.span.start
    elif len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" and raw[1:-1] == tok.value:
        start = tok.span.start + 1
    else:
        return None
    return Fix(title, (Edit(path, Span(start, start + length), new),), applicability)


def key_rename_fix(
    ctx: LaunchContext, entry: ConfigEntry, new_key: str, title: str,
    applicability: Applicability = Applicability.UNSAFE,
) -> Fix | None:
    """Rename a config-file key in place (quotes kept)."""
    launch = ctx.launch
    if launch.config is None:
        return None
    path = launch.config.path
    text = ctx.workspace.text(path)
    if text is None:
        return None
    span = replace_token_value(text, Token(entry.key.value, entry.key.span), entry.key.value)
    if span is None:
        return None
    return Fix(title, (Edit(path, span, new_key),), applicability)


def entry_value_fix(
    ctx: LaunchContext, entry: ConfigEntry, new_value: str, title: str,
    applicability: Applicability = Applicability.UNSAFE,
) -> Fix | None:
    """Replace a config entry's whole value node (scalars only)."""
    launch = ctx.launch
    if launch.config is None or isinstance(entry.value, (list, dict)):
        return None
    path = launch.config.path
    if entry.value_span.end <= entry.value_span.start:
        return None
    return Fix(title, (Edit(path, entry.value_span, new_value),), applicability)


def delete_entry_fix(
    ctx: LaunchContext, entry: ConfigEntry, title: str,
    applicability: Applicability = Applicability.UNSAFE,
) -> Fix | None:
    """Delete a config entry written on a line of its own (`key: value  # comment`)."""
    launch = ctx.launch
    if launch.config is None or launch.config.format != "yaml":
        return None
    path = launch.config.path
    text = ctx.workspace.text(path)
    if text is None:
        return None
    start = text.rfind("\n", 0, entry.key.span.start) + 1
    if text[start : entry.key.span.start].strip():
        return None  # inside a flow mapping or after other text
    end_of_value = max(entry.value_span.end, entry.key.span.end)
    nl = text.find("\n", end_of_value)
    if nl < 0:
        end = len(text)
    else:
        if "\n" in text[entry.key.span.start : end_of_value]:
            return None  # a multi-line value: leave it to the user
        end = nl + 1
    return Fix(title, (Edit(path, Span(start, end), ""),), applicability)


# -- cross-argument facts ------------------------------------------------------------------


def dcp(launch: ResolvedLaunch) -> tuple[int, ArgUse | None]:
    """(dcp_size, the flag occurrence); 1 when unset."""
    use = launch.last("dcp_size")
    n = parse_int(use.value) if use is not None else None
    return (n if n is not None else 1), use


def explicit(launch: ResolvedLaunch, dest: str) -> ArgUse | None:
    """The deciding occurrence of a value flag, when it has a (non-empty) value."""
    use = launch.last(dest)
    return use if use is not None and use.flag.takes_value and use.value else None


def dcp_related(launch: ResolvedLaunch, use: ArgUse | None, n: int) -> tuple[Related, ...]:
    if use is None:
        return ()
    return (related_use(launch, use, f"decode context parallelism is enabled here (dcp-size {n})"),)
