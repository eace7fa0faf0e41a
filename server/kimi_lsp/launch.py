"""Interpret a located launch the way sglang does: ``--config`` merging, then argparse.

sglang builds ``config_args + before_config + after_config`` (server_args_config_parser.py) and
hands it to an ``argparse.ArgumentParser`` with ``allow_abbrev=True``; the last occurrence of a
flag wins, so CLI > config > defaults. We replay both steps on located tokens so every value
that decides a diagnostic keeps the span where the user wrote it.

No file I/O here: the engine loads the ``--config`` file and passes the parsed ``ConfigFile``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from kimi_lsp import _regex
from kimi_lsp._record import StrEnum, dataclass, field, str_enum
from kimi_lsp.knowledge.schema import Flag, Schema
from kimi_lsp.surfaces.model import ConfigEntry, ConfigFile, Entry, EnvVar, LaunchCommand, Token, Unknown
from kimi_lsp.text import Span

# argparse's own test (argparse._negative_number_matcher)
_NEGATIVE_NUMBER = _regex.compile(r"^-\d+$|^-\d*\.\d+$")


@str_enum
class Origin(StrEnum):
    """Where a word of the merged argv was written."""

    CLI = "cli"  # the command line
    CONFIG = "config"  # the --config file (the token is its YAML key or value)


@str_enum
class ArgProblemKind(StrEnum):
    """The argparse (or config merger) error an ``ArgProblem`` stands for."""

    UNKNOWN = "unknown"  # unrecognized arguments (collected: argparse reports them at the end)
    AMBIGUOUS = "ambiguous"  # a prefix of several options (argparse exits here)
    MISSING_VALUE = "missing-value"  # expected N argument(s)
    EXPLICIT_VALUE = "explicit-value"  # --flag=value for a flag that takes none
    EXTRA_VALUE = "extra-value"  # a value word no option consumed
    CONFIG_REFUSED = "config-refused"  # a --config key whose action the merger refuses


@dataclass(frozen=True, slots=True)
class ArgUse:
    """One occurrence of a known flag in the merged argv."""

    flag: Flag
    option: Token  # the option token as written (config: the YAML key)
    values: tuple[Token, ...]  # the value tokens argparse consumed (config: the YAML value/items)
    origin: Origin
    entry: ConfigEntry | None = None  # the YAML entry, for config-origin uses
    inline: bool = False  # written --flag=value

    @property
    def value(self) -> str | None:
        """The single value (for nargs None flags) or None."""
        return self.values[0].value if self.values else None

    @property
    def decisive_span(self) -> Span:
        """Where a diagnostic about this flag sits: the option (YAML key) through its value."""
        if self.values:
            return self.option.span.cover(self.values[-1].span)
        return self.option.span


@dataclass(frozen=True, slots=True)
class ArgProblem:
    """An argparse-level error sglang would raise while parsing the merged argv."""

    kind: ArgProblemKind
    token: Token
    origin: Origin
    message: str  # argparse's / sglang's own wording
    candidates: tuple[str, ...] = ()
    flag: Flag | None = None
    entry: ConfigEntry | None = None


@dataclass(frozen=True)
class ResolvedLaunch:
    command: LaunchCommand
    schema: Schema
    uses: tuple[ArgUse, ...]
    problems: tuple[ArgProblem, ...]
    config: ConfigFile | None = None
    config_token: Token | None = None  # the path token after --config on the command line
    env: dict[str, EnvVar] = field(default_factory=dict)
    model_path: Token | None = None  # serve's positional model, when written that way
    # `sglang serve` of a diffusion model: sglang's LLM parser never sees it; `schema` is then the
    # release's diffusion server (knowledge/diffusion.py), and uses and problems are its (empty
    # where the release has none in the data)
    diffusion: bool = False
    # why the launch is only probably one of a diffusion model (its name or its options say so,
    # not sglang's own test): its findings are warnings that name this; None when sure
    diffusion_doubt: str | None = None

    def last(self, dest: str) -> ArgUse | None:
        """The occurrence argparse keeps (the last one)."""
        index = self.__dict__.get("_last_by_dest")
        if index is None:  # rules ask dozens of times per launch: one pass builds the answer
            index = {}
            for use in self.uses:
                index[use.flag.dest] = use
                # rules ask by the ServerArgs field (`tp_size`): up to 0.5.13 argparse stores it
                # as `tensor_parallel_size` (likewise dp, pp, ep)
                field = _FIELD_OF_DEST.get(use.flag.dest)
                if field is not None:
                    index[field] = use
            self.__dict__["_last_by_dest"] = index
        return index.get(dest)

    def value(self, dest: str) -> str | None:
        use = self.last(dest)
        if use is None:
            return None
        if not use.flag.takes_value:
            return "true"
        return use.value

    def is_set(self, dest: str) -> bool:
        use = self.last(dest)
        return use is not None

    def env_value(self, name: str) -> str | None:
        var = self.env.get(name)
        if var is None or var.value is None:
            return None
        return var.value.value


# -- config merging ------------------------------------------------------------------------


def config_tokens(config: ConfigFile, schema: Schema) -> tuple[list[tuple[Token, ConfigEntry | None]], list[ArgProblem]]:
    """sglang's ``_convert_config_to_args``: YAML entries -> argv words, each mapped to its source.

    Returns (words, problems). A word is (token, entry) where the token's span is the YAML key
    for the emitted ``--{key}`` and the value node (or list item) for values.
    """
    words: list[tuple[Token, ConfigEntry | None]] = []
    problems: list[ArgProblem] = []
    for entry in config.entries:
        key = entry.key.value
        # sglang emits `--{key}` verbatim; a kimi-lsp TOML profile accepts underscores (its
        # export writes dashes), so only YAML keeps the key as written
        emitted = key.replace("_", "-") if config.format == "toml" else key
        key_tok = Token(f"--{emitted}", entry.key.span)
        flag = schema.config_key(key)
        if flag is not None and flag.config_refused:
            problems.append(
                ArgProblem(
                    ArgProblemKind.CONFIG_REFUSED,
                    key_tok,
                    Origin.CONFIG,
                    f"Unsupported config option '{key.replace('-', '_')}' with action '{flag.config_refused}'",
                    flag=flag,
                    entry=entry,
                )
            )
            # sglang raises at the first such key; the rest is still replayed so that every
            # refused key, and the launch the other keys describe, can be checked in one pass
            continue
        value = entry.value
        # the merger's own list of store_true keys (it differs between releases)
        store_true = key.replace("-", "_") in schema.config_store_true_keys
        if isinstance(value, bool) and schema.config_verbatim:
            # 0.5.1-0.5.7's merger tests `action.action`, which argparse actions lack, so it
            # knows no boolean flag: true emits the bare `--{key}` and false emits nothing,
            # whatever the flag takes (`tp-size: true` -> `--tp-size`: "expected one argument")
            if value:
                words.append((key_tok, entry))
        elif isinstance(value, bool):
            if store_true:
                if value:
                    words.append((key_tok, entry))
            else:
                words.append((key_tok, entry))
                words.append((Token(str(value).lower(), entry.value_span), entry))
        elif isinstance(value, list):
            if value:
                words.append((key_tok, entry))
                spans = entry.item_spans if len(entry.item_spans) == len(value) else (entry.value_span,) * len(value)
                for item, span in zip(value, spans):
                    words.append((Token(_config_str(item), span, exact=False), entry))
        elif isinstance(value, dict):
            words.append((key_tok, entry))
            import json  # here, not at start-up: only a mapping value needs it

            words.append((Token(json.dumps(value), entry.value_span, exact=False), entry))
        else:
            words.append((key_tok, entry))
            words.append((Token(_config_str(value), entry.value_span), entry))
    return words, problems


def _config_str(value: object) -> str:
    # str(), as sglang does: None -> "None", 2.0 -> "2.0", nested lists -> Python repr
    return str(value)


# -- Engine / ServerArgs keyword arguments ------------------------------------------------------

# argparse dests that are no ServerArgs field (sglang.Engine(config=...) is a TypeError)
_NOT_FIELDS = frozenset({"help", "config"})
# ServerArgs fields without a command-line flag (reference/sglang.md: the Engine-API-only fields
# of 0.5.23); a keyword naming one is valid though the argparse schema does not list it
ENGINE_ONLY_FIELDS = frozenset({
    "watermark_enabled", "watermark_key", "watermark_gamma", "watermark_delta", "watermark_seed",
    "watermark_context_width", "watermark_hash", "aux_hidden_state_capture", "uses_mamba_radix_cache",
    "custom_sigquit_handler", "stat_loggers", "enable_cp_tp_group_sharing", "grpc_worker_threads",
    "speculative_boundary_reduction", "server_args_class",
})


# ServerArgs fields that argparse stores under another name: up to 0.5.13 `--tp-size` (whose first
# option is `--tensor-parallel-size`) lands in `tensor_parallel_size`, and `from_cli_args` copies it
# into the `tp_size` field (likewise pp, dp and ep); from 0.5.14 the dest is the field itself.
_FIELD_OF_DEST = {
    "tensor_parallel_size": "tp_size", "pipeline_parallel_size": "pp_size",
    "data_parallel_size": "dp_size", "expert_parallel_size": "ep_size",
}
_DEST_OF_FIELD = {field: dest for dest, field in _FIELD_OF_DEST.items()}


def field_flag(schema: Schema, key: str) -> Flag | None:
    """The flag whose value the ServerArgs field ``key`` holds, or None when ``key`` is no field."""
    if key in _NOT_FIELDS or key.startswith("_") or key in _FIELD_OF_DEST:
        return None  # `tensor_parallel_size` is argparse's name, never a field
    flag = schema.by_dest(key)
    if flag is None and key in _DEST_OF_FIELD:
        flag = schema.by_dest(_DEST_OF_FIELD[key])
    return flag


def field_name(flag: Flag) -> str:
    """The ServerArgs field that holds ``flag``'s value."""
    return _FIELD_OF_DEST.get(flag.dest, flag.dest)


def unknown_word(span: Span) -> Token:
    """A word whose value is known only when the program runs (rules read it as not literal)."""
    return Token("$_", span, exact=False)


def engine_tokens(config: ConfigFile, schema: Schema) -> tuple[list[Token], list[ArgProblem]]:
    """``sglang.Engine(**kwargs)`` / ``ServerArgs(**kwargs)``: each keyword is a ServerArgs field
    (a flag's dest, exactly: no prefixes, no aliases) and becomes the flag's words as argparse
    would have seen them, so that the same rules read it. The option word sits on the keyword,
    each value word on its literal; a value not known before the program runs is an unknown word."""
    words: list[Token] = []
    problems: list[ArgProblem] = []
    for entry in config.entries:
        key = entry.key.value
        flag = field_flag(schema, key)
        if flag is None or not flag.long_options:
            if key in ENGINE_ONLY_FIELDS or key.startswith("_"):
                continue
            problems.append(
                ArgProblem(ArgProblemKind.UNKNOWN, Token(key, entry.key.span), Origin.CLI,
                           f"Unexpected keyword argument '{key}'", entry=entry)
            )
            continue
        opt = Token(_engine_option(flag), entry.key.span, exact=False)
        value = entry.value
        if isinstance(value, Unknown):
            words.extend((opt, unknown_word(entry.value_span)) if flag.takes_value else (unknown_word(entry.value_span),))
        elif value is None:
            continue  # the field's own default (None) is what it was given
        elif isinstance(value, bool) and not flag.takes_value:
            if value:
                words.append(opt)
            elif len(flag.long_options) > 1 and flag.long_options[1].startswith("--no-"):
                words.append(Token(flag.long_options[1], entry.key.span, exact=False))
        elif isinstance(value, (list, tuple)):
            spans = entry.item_spans if len(entry.item_spans) == len(value) else (entry.value_span,) * len(value)
            words.append(opt)
            for item, span in zip(value, spans):
                words.append(unknown_word(span) if isinstance(item, Unknown) else Token(_config_str(item), span, exact=False))
        elif isinstance(value, dict):
            import json  # here, not at start-up: only a mapping value needs it

            words.extend((opt, Token(json.dumps(value), entry.value_span, exact=False)))
        else:
            text = _config_str(value)
            if text.startswith("-") and not _NEGATIVE_NUMBER.match(text):
                words.extend((opt, unknown_word(entry.value_span)))  # argparse would read an option here; the field takes it as is
            else:
                words.extend((opt, Token(text, entry.value_span)))
    return words, problems


def _engine_option(flag: Flag) -> str:
    spelled = "--" + flag.dest.replace("_", "-")
    return spelled if spelled in flag.long_options else flag.long_options[0]


# -- argparse replay -----------------------------------------------------------------------


def _classify(schema: Schema, word: str, has_negative_optionals: bool) -> str:
    """argparse's per-word 'O' (option) / 'A' (argument) pattern letter."""
    if not word or word[0] != "-" or word == "-":
        return "A"
    if schema.exact(word) is not None:
        return "O"
    if len(word) == 1:
        return "A"
    if "=" in word and schema.exact(word.split("=", 1)[0]) is not None:
        return "O"
    m = schema.match(word)
    if m is not None:
        return "O"
    if _NEGATIVE_NUMBER.match(word) and not has_negative_optionals:
        return "A"
    if " " in word:
        return "A"
    return "O"


def _nargs_range(flag: Flag) -> tuple[int, int | None]:
    if not flag.takes_value:
        return 0, 0
    n = flag.nargs
    if n is None:
        return 1, 1
    if n == "?":
        return 0, 1
    if n == "*":
        return 0, None
    if n == "+":
        return 1, None
    if isinstance(n, int):
        return n, n
    return 1, 1


def parse_words(
    schema: Schema, words: Sequence[tuple[Token, Origin, ConfigEntry | None]]
) -> tuple[list[ArgUse], list[ArgProblem]]:
    """Replay argparse over (token, origin, entry) words. Unknown options are collected (argparse
    reports them together at the end). argparse exits at the first ambiguous option (before
    consuming anything) or at the first missing or explicit value (while consuming); each is
    recorded and left out, with the values it would take, so that the rest of the launch is read
    too: what sglang reports next once that one is fixed. A help option ends the reading."""
    uses: list[ArgUse] = []
    problems: list[ArgProblem] = []
    values = [w[0].value for w in words]
    # '--' makes every later word an argument
    pattern: list[str] = []
    seen_dd = False
    for v in values:
        if seen_dd:
            pattern.append("A")
        elif v == "--":
            pattern.append("-")
            seen_dd = True
        else:
            pattern.append(_classify(schema, v, False))
    i = 0
    n = len(words)
    extras: list[int] = []
    stopped = False  # argparse printed its help while consuming: later words were never consumed
    rest = n  # the first word argparse never consumed, when stopped
    while i < n and not stopped:
        tok, origin, entry = words[i]
        if pattern[i] == "-":
            # sglang's parser has no positionals, so nothing consumes the '--' itself: argparse
            # leaves it among the extras ("unrecognized arguments: --"), with every word after it
            extras.append(i)
            i += 1
            continue
        if pattern[i] == "A":
            extras.append(i)
            i += 1
            continue
        word = tok.value
        explicit: str | None = None
        option = word
        flag = schema.exact(word)
        if flag is None and "=" in word:
            head, explicit = word.split("=", 1)
            flag = schema.exact(head)
            option = head
        if flag is None:
            m = schema.match(word)
            if isinstance(m, tuple):
                problems.append(_ambiguous(tok, origin, entry, m))
                # argparse exits at the first ambiguous option of the whole argv (it classifies
                # every word before consuming any); the rest is still read here, so that what
                # follows it is checked too: its values, when the candidates agree on how many
                i = _skip_ambiguous(schema, m, pattern, i + 1, "=" in word)
                continue
            if m is None:
                problems.append(
                    ArgProblem(ArgProblemKind.UNKNOWN, tok, origin, f"unrecognized arguments: {word}", entry=entry)
                )
                i += 1
                continue
            flag = m
            if "=" in word:
                option, explicit = word.split("=", 1)
            elif word[1] != "-" and word[:2] in flag.options and len(word) > 2:
                # argparse's single-dash rule: `-hx` is `-h` with the explicit argument `x`
                option, explicit = word[:2], word[2:]
        lo, hi = _nargs_range(flag)
        opt_tok = tok
        if explicit is not None:
            if hi == 0:
                problems.append(
                    ArgProblem(
                        ArgProblemKind.EXPLICIT_VALUE,
                        tok,
                        origin,
                        f"argument {_display(flag)}: ignored explicit argument {explicit!r}",
                        flag=flag,
                        entry=entry,
                    )
                )
                i += 1  # argparse exits here; the rest is read as it would be without the word
                continue
            eq = len(option) + (word[len(option) : len(option) + 1] == "=")
            val_tok = Token(explicit, _sub_span(tok, eq), exact=tok.exact)
            opt_tok = Token(option, _sub_span(tok, 0, len(option)), exact=tok.exact)
            uses.append(ArgUse(flag, opt_tok, (val_tok,), origin, entry, inline=True))
            i += 1
            continue
        # consume following 'A' words
        j = i + 1
        avail = 0
        while j + avail < n and pattern[j + avail] == "A":
            avail += 1
        take = avail if hi is None else min(avail, hi)
        if take < lo:
            problems.append(
                ArgProblem(
                    ArgProblemKind.MISSING_VALUE,
                    tok,
                    origin,
                    f"argument {_display(flag)}: {_expected(flag)}",
                    flag=flag,
                    entry=entry,
                )
            )
            # argparse exits here; the words after it are read as they would be without it and
            # the too few values it has (an option follows, or nothing does: completing the
            # values changes nothing after them)
            i = j + avail
            continue
        vals = tuple(words[k][0] for k in range(j, j + take))
        uses.append(ArgUse(flag, opt_tok, vals, origin, entry))
        i = j + take
        if flag.action == "help":
            # argparse prints the help and exits 0 as it reads the option: the unrecognized
            # words it collected so far are never reported (an ambiguous one still is: that
            # error comes before any option is read)
            problems = [p for p in problems if p.kind is not ArgProblemKind.UNKNOWN]
            extras = []
            stopped, rest = True, i
            break
    if stopped:
        # argparse printed its help and exited: but an ambiguous option further on is what it
        # reports instead (it classifies every word before consuming any), so those are found
        for k in range(rest, n):
            m = schema.match(words[k][0].value) if pattern[k] == "O" else None
            if isinstance(m, tuple):
                problems.append(_ambiguous(words[k][0], words[k][1], words[k][2], m))
        return uses, problems
    for k in extras:
        tok, origin, entry = words[k]
        problems.append(ArgProblem(ArgProblemKind.EXTRA_VALUE, tok, origin, f"unrecognized arguments: {tok.value}", entry=entry))
    return uses, problems


def _ambiguous(tok: Token, origin: Origin, entry: ConfigEntry | None, candidates: tuple[str, ...]) -> ArgProblem:
    word = tok.value
    head = word.split("=", 1)[0] if "=" in word else word
    return ArgProblem(ArgProblemKind.AMBIGUOUS, tok, origin, f"ambiguous option: {head} could match {', '.join(candidates)}",
                      candidates=candidates, entry=entry)


def _skip_ambiguous(schema: Schema, candidates: tuple[str, ...], pattern: list[str], j: int, inline: bool) -> int:
    """Where reading resumes after an ambiguous option: past the values every candidate would
    take alike (none after `--opt=value`); when they differ, past every value word, so that no
    value is reported as a stray argument."""
    if inline:
        return j
    ranges = {_nargs_range(f) for f in (schema.exact(c) for c in candidates) if f is not None}
    avail = 0
    while j + avail < len(pattern) and pattern[j + avail] == "A":
        avail += 1
    if len(ranges) == 1:
        lo, hi = next(iter(ranges))
        return j + (avail if hi is None else min(avail, hi))
    return j + avail


def _display(flag: Flag) -> str:
    return "/".join(flag.options)


def _expected(flag: Flag) -> str:
    n = flag.nargs
    if n is None:
        return "expected one argument"
    if n == "+":
        return "expected at least one argument"
    if isinstance(n, int):
        return f"expected {n} argument{'s' if n != 1 else ''}"
    return "expected one argument"


def _sub_span(tok: Token, start: int, length: int | None = None) -> Span:
    """Span of a slice of the token's value, when the token maps 1:1 onto its text."""
    raw_len = tok.span.end - tok.span.start
    if not tok.exact or raw_len != len(tok.value):
        # quoted or escaped: point at the whole token
        return tok.span
    s = tok.span.start + start
    e = tok.span.end if length is None else s + length
    return Span(s, e)


# -- the whole launch ----------------------------------------------------------------------


def config_path_token(command: LaunchCommand) -> tuple[Token | None, list[Token]]:
    """The word after the exact token ``--config`` (sglang tests ``"--config" in argv``) and all
    ``--config`` tokens (several is an error)."""
    argv = command.argv
    hits = [i for i, t in enumerate(argv) if t.value == "--config"]
    toks = [argv[i] for i in hits]
    if not hits:
        return None, toks
    i = hits[0]
    return (argv[i + 1] if i + 1 < len(argv) else None), toks


def cli_words(command: LaunchCommand, schema: Schema | None = None) -> tuple[list[Token], Token | None, list[ArgProblem]]:
    """The command-line words argparse sees, after sglang's own pre-processing.

    ``sglang serve``: ``--model-type X`` is stripped and a bare first word becomes the model path.
    ``--config FILE`` is removed (its entries are merged separately) for entries that honour it,
    on a release that has the merger (``schema.config_merger``: 0.4.x has none, and argparse
    then rejects ``--config FILE`` like any unknown option).
    """
    problems: list[ArgProblem] = []
    argv = list(command.argv)
    model: Token | None = None
    if command.entry is Entry.SERVE:
        # what this release's `sglang serve` does before parsing (cli/serve.py): from 0.5.10 it
        # takes `--model-type` off, from 0.5.16 it reads a bare first word as the model; before,
        # both reach argparse as they are (None: a release without the data, read as the newest)
        from kimi_lsp.knowledge.launch_checks import serve_model

        serve = serve_model(schema.version) if schema is not None else None
        filtered: list[Token] = []
        i = 0
        while i < len(argv):
            t = argv[i]
            if serve is not None and not serve.model_type:
                filtered.append(t)
            elif t.value == "--model-type":
                i += 2
                continue
            elif t.value.startswith("--model-type="):
                i += 1
                continue
            else:
                filtered.append(t)
            i += 1
        argv = filtered
        if argv and not argv[0].value.startswith("-") and (serve is None or serve.positional):
            model = argv[0]
            argv = argv[1:]
    if command.entry in (Entry.LAUNCH_SERVER, Entry.SERVE) and (schema is None or schema.config_merger):
        idx = [i for i, t in enumerate(argv) if t.value == "--config"]
        if idx:
            i = idx[0]
            argv = argv[:i] + argv[i + 2 :]
    return argv, model, problems


def resolve(command: LaunchCommand, schema: Schema, config: ConfigFile | None, *, llm: bool = False,
            diffusers_dir: Callable[[str], bool] | None = None) -> ResolvedLaunch:
    """Merge ``config`` (the file's own entries for a config file, else the loaded ``--config``)
    with the command line and replay argparse. A ``sglang serve`` launch of a diffusion model is
    replayed on the release's diffusion server instead (``llm``: never). ``diffusers_dir``: the
    caller's answer to whether a model path is a local diffusers pipeline directory (its
    ``model_index.json``): this module reads no files."""
    env = {v.name.value: v for v in command.env}
    problems: list[ArgProblem] = []
    words: list[tuple[Token, Origin, ConfigEntry | None]] = []
    if command.entry is Entry.NO_CONFIG:
        # a benchmark (or the router's launch_server) adds its own options to the same parser
        from kimi_lsp.knowledge.entry_points import entry_schema, module_of

        schema = entry_schema(schema, module_of(command.program.value))
    if command.entry is Entry.ENGINE:
        ewords, eproblems = engine_tokens(command.config or ConfigFile(command.path, "python", ()), schema)
        problems.extend(eproblems)
        words.extend((t, Origin.CLI, None) for t in ewords)
        words.extend((t, Origin.CLI, None) for t in command.argv)  # unknown words (``**options``)
        uses, parse_problems = parse_words(schema, words)
        problems.extend(parse_problems)
        return ResolvedLaunch(command=command, schema=schema, uses=tuple(uses), problems=tuple(problems), env=env)
    if command.entry is Entry.SERVE and not llm:
        found, doubt = diffusion_launch(command, schema, diffusers_dir)
        if found:
            launch = _resolve_diffusion(command, schema, env, doubt)
            if doubt is not None and launch.problems and not resolve(command, schema, config, llm=True).problems:
                # only probably a diffusion model's, and all sglang's LLM server takes: either
                # may serve it, so neither parser's complaint is one sglang is sure to make
                return ResolvedLaunch(command=command, schema=launch.schema, uses=(), problems=(), env=env,
                                      model_path=launch.model_path, diffusion=True, diffusion_doubt=doubt)
            return launch
    cfg = command.config if command.entry is Entry.CONFIG_FILE else config
    if command.entry is not Entry.CONFIG_FILE and not schema.config_merger:
        cfg = None  # a release without `--config` never reads the file (KL201 reports the option)
    if cfg is not None:
        cwords, cproblems = config_tokens(cfg, schema)
        problems.extend(cproblems)
        words.extend((t, Origin.CONFIG, e) for t, e in cwords)
        for var in cfg.env:
            env[var.name.value] = var
    cli, model, cli_problems = cli_words(command, schema)
    problems.extend(cli_problems)
    if model is not None:
        mp = schema.exact("--model-path")
        if mp is not None:
            words.append((Token("--model-path", model.span, exact=False), Origin.CLI, None))
    words.extend((t, Origin.CLI, None) for t in cli)
    if model is not None:
        # place the model value right after the synthesized --model-path
        pos = next((k for k, w in enumerate(words) if w[0].span == model.span and w[0].value == "--model-path"), None)
        if pos is not None:
            words.insert(pos + 1, (model, Origin.CLI, None))
    uses, parse_problems = parse_words(schema, words)
    problems.extend(parse_problems)
    config_tok, _ = config_path_token(command)
    return ResolvedLaunch(
        command=command,
        schema=schema,
        uses=tuple(uses),
        problems=tuple(problems),
        config=cfg,
        config_token=config_tok if command.entry is not Entry.CONFIG_FILE and schema.config_merger else None,
        env=env,
        model_path=model,
    )


# -- `sglang serve` of a diffusion model -------------------------------------------------------

# Families whose names say diffusion; an LLM or VLM name (LLaVA-Video, StableLM) says nothing of the kind.
_DIFFUSION_NAME = _regex.compile(
    r"(?i)diffusion|flux|qwen-image|z-image|hunyuan-?(?:video|image|dit)|wan2|mova-|sd3|sdxl|cogvideo|ltx-?video|mochi"
)


def _serve_model(command: LaunchCommand, schema: Schema) -> tuple[str | None, str | None]:
    """(model type, model path) as this release's `sglang serve` reads them before dispatching."""
    from kimi_lsp.knowledge.launch_checks import serve_model

    serve = serve_model(schema.version)
    options = serve.model_options if serve is not None else ("--model-path", "--model")
    words = [t.value for t in command.argv]
    model_type = model = None
    rest: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == "--model-type" and i + 1 < len(words):
            model_type = words[i + 1]  # `_extract_model_type_override`: the last one wins
            i += 2
            continue
        if w.startswith("--model-type="):
            model_type = w.split("=", 1)[1]
        elif model is None and w in options and i + 1 < len(words):
            model = words[i + 1]
        elif model is None and "=" in w and w.split("=", 1)[0] in options:
            model = w.split("=", 1)[1]
        rest.append(w)
        i += 1
    if model is None and rest and not rest[0].startswith("-") and (serve is None or serve.positional):
        model = rest[0]  # a bare first word is the model path
    if serve is not None and not serve.model_type:
        model_type = None  # before 0.5.10 `--model-type` selects nothing: the model decides
    return model_type, model


def diffusion_launch(command: LaunchCommand, schema: Schema,
                     diffusers_dir: Callable[[str], bool] | None = None) -> tuple[bool, str | None]:
    """Whether ``sglang serve`` hands this launch to its diffusion server, and the doubt (None:
    sure). sglang decides by `--model-type`, then its registry of diffusion models, then the
    model's files (a local dir's or the hub's model_index.json). A local directory in the
    workspace holding a diffusers model_index.json is read through ``diffusers_dir`` (sure);
    the hub is never asked, so a launch is also taken for one when its model is named like a
    diffusion family or its options are the diffusion server's, with that doubt named."""
    model_type, model = _serve_model(command, schema)
    if model_type == "llm":
        return False, None
    if model_type == "diffusion":
        return True, None
    from kimi_lsp.knowledge.diffusion import diffusion_release

    release = diffusion_release(schema.version)
    if release is None:
        return False, None  # no diffusion server in this release (or none in the data)
    if model is not None and release.registered(model):
        return True, None
    if model is not None and diffusers_dir is not None and diffusers_dir(model):
        return True, None  # `os.path.isdir(model)` and its model_index.json names a diffusers version
    if model is not None and _DIFFUSION_NAME.search(model):
        return True, f"`{model}` is named like a diffusion model"
    if _diffusion_by_options(command, schema):
        return True, "its options are the diffusion server's"
    return False, None


def _resolve_diffusion(command: LaunchCommand, schema: Schema, env: dict[str, EnvVar], doubt: str | None) -> ResolvedLaunch:
    """argparse's ``parse_known_args`` over the diffusion server's parser, then ``from_cli_args``:
    the per-component options are taken off what it left (each with its value), and from 0.5.10
    anything left is ``error: unrecognized arguments`` (0.5.5-0.5.9 ignore it)."""
    from kimi_lsp.knowledge.diffusion import diffusion_release

    release = diffusion_release(schema.version)
    if release is None:
        return ResolvedLaunch(command=command, schema=schema, uses=(), problems=(), env=env, diffusion=True,
                              diffusion_doubt=doubt)
    dschema = release.schema
    cli, model, _ = cli_words(command, schema)  # the LLM release decides `--model-type` and the bare model
    words: list[tuple[Token, Origin, ConfigEntry | None]] = []
    if model is not None:
        words.append((Token("--model-path", model.span, exact=False), Origin.CLI, None))
        words.append((model, Origin.CLI, None))
    words.extend((t, Origin.CLI, None) for t in cli)
    uses, problems = parse_words(dschema, words)
    left = sorted((p for p in problems if p.kind in (ArgProblemKind.UNKNOWN, ArgProblemKind.EXTRA_VALUE)),
                  key=lambda p: p.token.span.start)
    dropped: set[int] = set()
    k = 0
    while k < len(left):  # `_extract_component_*`: `--<c>-path X` / `--component-paths.<c>=X`
        head, eq, _ = left[k].token.value.partition("=")
        if release.is_component_option(head):
            dropped.add(id(left[k]))
            if not eq and k + 1 < len(left) and not left[k + 1].token.value.startswith("-"):
                dropped.add(id(left[k + 1]))
                k += 1
        k += 1
    kept: list[ArgProblem] = []
    for p in problems:
        if id(p) in dropped:
            continue
        if p.kind in (ArgProblemKind.UNKNOWN, ArgProblemKind.EXTRA_VALUE) and not release.rejects_unknown:
            continue  # parse_known_args' leftovers, which this release's from_cli_args never looks at
        if p.kind is ArgProblemKind.AMBIGUOUS and len(set(p.candidates) - release.pipeline_options) <= 1:
            continue  # a pipeline's own option, registered only when that model is served
        kept.append(p)
    return ResolvedLaunch(command=command, schema=dschema, uses=tuple(uses), problems=tuple(kept), env=env,
                          model_path=model, diffusion=True, diffusion_doubt=doubt)


def _diffusion_by_options(command: LaunchCommand, schema: Schema) -> bool:
    """Whether a `sglang serve` launch is one of a diffusion model by what it says: no
    `--model-type llm`, and options that the release's diffusion server has and its LLM parser
    does not (`--num-gpus`, `--pipeline-class-name`, `--vae-cpu-offload`). Whether the model is
    a diffusers pipeline (its model_index.json) cannot be known offline for a hub id."""
    from kimi_lsp.knowledge.diffusion import diffusion_release

    words = [t.value for t in command.argv]
    release = diffusion_release(schema.version)
    if release is None:
        return False
    options = frozenset(release.schema.long_options())
    # every option the LLM parser does not know is one of the diffusion server's (a benchmark's
    # or a misspelt option among them says the launch is not simply a diffusion one)
    foreign = [h for h in (w.split("=", 1)[0] for w in words if w.startswith("--"))
               if schema.exact(h) is None and not isinstance(schema.match(h), Flag)]
    known = [h for h in foreign if h in options]
    # the diffusion server also takes per-component options it names by pattern
    # (`--transformer-path`, `--vae-precision`, `--text-encoder-quantization`: from_cli_args)
    return bool(known) and all(h in options or h.endswith(_COMPONENT_SUFFIXES) or h.startswith("--component")
                               for h in foreign)


_COMPONENT_SUFFIXES = ("-path", "-quantization", "-precision", "-attention-backend")


def resolve_config_path(
    token_value: str, command: LaunchCommand, cwd: Path, exists: Callable[[Path], bool] | None = None
) -> Path | None:
    """Find the ``--config`` file: relative to the launch file's directory, then the working dir.

    ``exists`` lets the caller look through editor overlays (``Workspace.exists``)."""
    p = Path(token_value)
    if p.is_absolute():
        return p
    test = exists or Path.exists
    for base in (command.base_dir, cwd):
        cand = base / p
        if test(cand):
            return cand
    return None
