from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Applicability, Edit, Fix, Location, Severity
from kimi_lsp.knowledge.entry_points import EntryParser
from kimi_lsp.knowledge.retired_flags import RetiredFlag, retired
from kimi_lsp.knowledge.schema import Flag, Schema
from kimi_lsp.launch import ArgProblem, ArgProblemKind, Origin, field_name
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule
from kimi_lsp.rules._fixes import replace_token_value
from kimi_lsp.surfaces.model import Entry, Token
from kimi_lsp.text import Span


@rule(code="KL201", name="unknown-argument", severity=Severity.ERROR, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """An sglang argument or `--config` key that the pinned sglang release does not define, or
    an abbreviation that matches several.

    ## What it does
    Replays sglang's argparse parser (`allow_abbrev` on) over the launch: a flag that is neither an
    option of the pinned release nor the unique prefix of one is unknown; a prefix that several
    options start with is ambiguous (`--pp` could be `--pp-size` or `--pp-max-micro-batch-size`).
    `--config` keys are checked the same way, because sglang passes each key as `--{key}`, so
    `tp: 8` works while `pp: 2` is ambiguous. A flag an older sglang release retired is named
    with what that release said replaces it (its deprecation message or rename table, e.g.
    `--enable-deepep-moe` -> `--moe-a2a-backend deepep`); otherwise a did-you-mean comes from the
    closest option. An ambiguous option does not end the check: argparse reports the first one of
    the whole command line (it classifies every word before consuming any), and the rest of the
    launch is read on.

    Per release, it also reports what sglang rejects outside argparse's table: `--config` on a
    release that has no such option (0.4.x to 0.5.2: the file is never read), a flag whose action
    stops the parse (`DeprecatedAction`: `ValueError` up to 0.5.7, `parser.error` from 0.5.18),
    and `sglang serve` on a release without that command (before 0.5.5). The benchmark entry points
    (`python -m sglang.bench_one_batch`, `sglang.bench_offline_throughput`,
    `sglang.bench_one_batch_server`, their `sglang.benchmark.*` homes, `sglang.compile_deep_gemm`)
    and the router's `sglang_router.launch_server` parse the server options and their own on one
    parser: a word neither knows is unknown there too, and a module the release does not have
    (`sglang.bench_one_batch` from 0.5.21) is reported with the one that replaced it. As warnings, it names
    what an abbreviated switch turns on (`--enable-flashinfer` is `--enable-flashinfer-allreduce-fusion`
    on 0.5.21-0.5.23) and a help option that keeps the server from starting (`--hel`,
    `help: true` in a `--config` file).

    ## Why is this bad?
    sglang exits before loading anything with `error: unrecognized arguments: --tp-sise 8` or
    `error: ambiguous option: --pp could match --pp-size, --pp-max-micro-batch-size, ...`,
    usually after the container image was pulled and the job scheduled.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-sise 2 --pp 2
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-size 2 --pp-size 2
    ```

    ## Fix safety
    The replacement sglang itself named for a retired flag is safe when it is valid for the pinned
    release and the launch then re-lints without a new error; otherwise it is unsafe or only
    named. The closest known option is a guess from spelling alone: a hint that is never applied
    by `--fix` (and offers an edit only when the edited launch re-lints without a new error).
    Removing the leading dashes of a `--config` key written as `--tp-size:` is safe.
    """
    launch = ctx.launch
    if launch.diffusion:
        yield from _diffusion(ctx)
        return
    if launch.command.entry is Entry.SERVE and _no_serve(launch.schema.version):
        cmd = launch.command
        yield Violation(Location(cmd.path, cmd.program.span),
                        f"sglang {launch.schema.version} has no `sglang serve` command (its `sglang` console script came"
                        " with 0.5.5): use `python -m sglang.launch_server`")
        return
    own = _own_parser(ctx)
    if launch.command.entry is Entry.NO_CONFIG and own is None:
        missing = _missing_module(ctx)
        if missing is not None:
            yield missing
            return
    if launch.command.entry is not Entry.ENGINE:  # keyword arguments meet no argparse action
        yield from _accepted_uses(ctx)
    first_ambiguous = next((p for p in launch.problems if p.kind is ArgProblemKind.AMBIGUOUS), None)
    bench = _bench_problems(ctx)
    if bench:
        yield _bench_command(ctx, bench)
    for prob in launch.problems:
        if prob.kind not in (ArgProblemKind.UNKNOWN, ArgProblemKind.AMBIGUOUS) or not _args.is_literal(prob.token, prob.origin):
            continue
        if prob in bench:
            continue  # said once, for the whole benchmark command
        if prob.origin is Origin.CLI and launch.command.entry is Entry.NO_CONFIG and (
            own is None or own.accepts_unknown(prob.token.value.split("=", 1)[0])
        ):
            continue  # an entry point whose own options are not known here: its parser may take it
        if prob.kind is ArgProblemKind.AMBIGUOUS and own is not None and not own.judges_ambiguity(prob.candidates):
            continue  # a prefix of router options from several router releases: unique in the one that runs, maybe
        if launch.command.entry is Entry.ENGINE:
            if prob.entry is not None:
                yield from _engine_keyword(ctx, prob)
            continue
        if prob.origin is Origin.CONFIG and prob.entry is not None and prob.token.span == prob.entry.key.span:
            found = _config_key(ctx, prob)
        else:
            found = _cli_word(ctx, prob, own)
        for v in found:
            if first_ambiguous is not None and prob is not first_ambiguous and prob.kind is ArgProblemKind.AMBIGUOUS:
                # argparse stops at the first ambiguous option of the whole argv: this one is
                # found by reading on, as fixing the first would make sglang report it next
                head = first_ambiguous.token.value.split("=", 1)[0]
                v = Violation(v.location, f"{v.message} (sglang reports the ambiguous `{head}` first)", v.fixes,
                              v.related, v.severity, v.data)
            yield v


def _diffusion(ctx: LaunchContext) -> Iterator[Violation]:
    """`sglang serve` of a diffusion model: its parser (sglang.multimodal_gen, ``launch.schema``)
    is sglang's own argparse too, so the same replay holds; its leftovers are what its
    ``from_cli_args`` rejects (launch.py took the per-component options off)."""
    launch = ctx.launch
    version = launch.schema.version
    yield from _accepted_uses(ctx)  # an abbreviated switch, a help option: argparse's own rules
    for prob in launch.problems:
        if not _args.is_literal(prob.token, prob.origin):
            continue
        head = prob.token.value.split("=", 1)[0]
        where = _args.problem_location(launch, prob)
        if prob.kind is ArgProblemKind.AMBIGUOUS:
            yield Violation(where, f"Ambiguous option `{head}` of sglang {version}'s diffusion server could match"
                                   f" {_list(prob.candidates)}")
        elif prob.kind is ArgProblemKind.UNKNOWN:
            guess = launch.schema.closest(head)
            if ctx.beyond_schema and not _args.near_miss(head, guess):
                continue  # may be an option added after the newest release kimi-lsp knows
            guess = guess if _args.worth_a_hint(head, guess) else None
            hint = f" (did you mean `{guess}`?)" if guess else ""
            fixes = (Fix(f"Did you mean `{guess}`?", (), Applicability.DISPLAY_ONLY),) if guess else ()
            yield Violation(where, f"Unknown option `{head}` of sglang {version}'s diffusion server"
                                   f" (sglang.multimodal_gen, which serves this model): it exits with"
                                   f" `unrecognized arguments`{hint}", fixes=fixes)
        elif prob.kind is ArgProblemKind.EXTRA_VALUE and prob.token.value.startswith("-"):
            continue  # (a negative number argparse read as a value: the option before it is reported)


def _no_serve(version: str) -> bool:
    from kimi_lsp.knowledge.launch_checks import serve_model, shipped

    return version in shipped() and serve_model(version) is None


def _accepted_uses(ctx: LaunchContext) -> Iterator[Violation]:
    """Options argparse accepts that do not do what they read as: an abbreviation (a unique
    prefix, which argparse silently expands), a help option (no server starts), and a flag whose
    action stops the launch at parse time on this release (``DeprecatedAction``)."""
    launch = ctx.launch
    schema = launch.schema
    own = _own_parser(ctx)
    for use in launch.uses:
        head = use.option.value
        if not _args.is_literal(use.option, use.origin) or head.startswith("---"):
            continue
        where = _args.use_location(launch, use)
        written = _args.flag_text(use)
        exact = head in use.flag.options
        full = head if exact else next((o for o in use.flag.options if o.startswith(head)), None)
        if full is None:
            continue  # a spelling the merger made up (a TOML profile's key): nothing to expand
        # (only a DeprecatedAction stops the parse: other launches never load the table)
        stop = None
        if use.flag.action == "deprecated":
            from kimi_lsp.knowledge.launch_checks import parse_error

            stop = parse_error(schema.version, full)
        if stop is not None:
            gone = retired(full)
            instead = f"; use `{' '.join(gone.replacement)}`" if gone is not None and gone.replacement else ""
            yield Violation(where, f"`{written}` stops sglang while it parses the command line"
                                   f" ({stop}){instead}")
            continue
        if use.flag.action == "help":
            if exact and use.origin is Origin.CLI:
                continue  # `--help` written out: printing the help is what is asked for
            if use.origin is Origin.CONFIG and use.entry is not None:
                value = use.entry.value
                shown = f"`{written}: {str(value).lower() if isinstance(value, bool) else value}` in the config file"
            else:
                shown = f"`{written}`" + ("" if exact else f" is read as `{full}`: it")
            yield Violation(where, f"{shown} makes sglang print its help and exit: no server starts",
                            severity=Severity.WARNING)
            continue
        if launch.command.entry is Entry.NO_CONFIG and use.origin is Origin.CLI and (own is None or not own.complete):
            continue  # a benchmark's parser adds options of its own: a prefix may mean one of them
        if exact or (use.flag.takes_value and retired(head) is None):
            # `--tp 2`, `--mem-fraction 0.8`: a shorthand whose value says what is meant. A switch
            # reached by a prefix (`--enable-flashinfer` turning on
            # `--enable-flashinfer-allreduce-fusion`), or an option sglang once had under exactly
            # the written name, is probably not what was meant
            continue
        if use.origin is Origin.CONFIG and use.entry is not None:
            fix = _args.key_rename_fix(ctx, use.entry, full[2:], f"Write `{full[2:]}` in full")
            shown = f"`{written}` is read as `{full[2:]}`"
        else:
            fix = _args.replace_prefix(ctx, use.option, use.origin, len(head), full, f"Write `{full}` in full")
            shown = f"`{head}` is read as `{full}`"
        gone = retired(head)
        what = (f" (`{head}` itself was an option until sglang {gone.last_seen})" if gone is not None
                else ", so this turns on that switch")
        yield Violation(
            where,
            f"{shown}: argparse accepts a unique prefix of an option{what}; write it in full if that is what is meant"
            " (a release that adds an option starting alike makes it ambiguous)",
            fixes=_offer(fix), severity=Severity.WARNING,
        )


# a server launch with this many options of sglang's serving benchmark is a benchmark command
_BENCH_OPTIONS_AT_LEAST = 2


def _bench_problems(ctx: LaunchContext) -> list[ArgProblem]:
    """The unknown command-line options of a server launch that are sglang's serving benchmark's,
    when there are several: ``sglang serve --backend sglang --dataset-name random ...``."""
    launch = ctx.launch
    if launch.command.entry not in (Entry.LAUNCH_SERVER, Entry.SERVE):
        return []
    unknown = [p for p in launch.problems if p.kind is ArgProblemKind.UNKNOWN and p.origin is Origin.CLI
               and _args.is_literal(p.token, p.origin)]
    if len(unknown) < _BENCH_OPTIONS_AT_LEAST:
        return []
    from kimi_lsp.knowledge.bench_options import bench_serving_options

    options = bench_serving_options()
    bench = [p for p in unknown if p.token.value.split("=", 1)[0] in options]
    return bench if len(bench) >= _BENCH_OPTIONS_AT_LEAST else []


def _bench_command(ctx: LaunchContext, bench: list[ArgProblem]) -> Violation:
    names = [p.token.value.split("=", 1)[0] for p in bench]
    shown = ", ".join(f"`{n}`" for n in names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return Violation(_args.problem_location(ctx.launch, bench[0]),
                     f"{shown} are options of sglang's serving benchmark (`python -m sglang.bench_serving`), not of "
                     "the server: this server launch exits with `unrecognized arguments`; run the benchmark "
                     "against a running server instead")


def _own_parser(ctx: LaunchContext) -> EntryParser | None:
    """The options a benchmark (or the router's launch_server) adds to ServerArgs on this
    release; None when the launch is no such entry point or the data does not say."""
    cmd = ctx.launch.command
    if cmd.entry is not Entry.NO_CONFIG:
        return None
    from kimi_lsp.knowledge.entry_points import entry_parser, module_of

    return entry_parser(ctx.launch.schema.version, module_of(cmd.program.value))


def _missing_module(ctx: LaunchContext) -> Violation | None:
    """``python -m sglang.bench_one_batch`` on a release without that module (0.5.21 on): Python
    ends with ``No module named sglang.bench_one_batch`` before sglang parses anything."""
    from kimi_lsp.knowledge.entry_points import missing_module, module_of, replacement

    cmd = ctx.launch.command
    version = ctx.launch.schema.version
    module = module_of(cmd.program.value)
    if not missing_module(version, module):
        return None
    instead = replacement(version, module)
    use = f": use `python -m {instead}`" if instead else ""
    return Violation(Location(cmd.path, cmd.program.span),
                     f"sglang {version} has no module `{module}` (Python exits with `No module named {module}`){use}")


def _cli_word(ctx: LaunchContext, prob: ArgProblem, own: EntryParser | None = None) -> Iterator[Violation]:
    launch = ctx.launch
    word = prob.token.value
    head = word.split("=", 1)[0]
    where = _args.problem_location(launch, prob)
    what = (
        f"Ambiguous option `{head}` could match {_list(prob.candidates)}"
        if prob.kind is ArgProblemKind.AMBIGUOUS
        else f"Unknown sglang argument `{head}`"
    )
    if own is not None and prob.kind is ArgProblemKind.UNKNOWN:
        # its parser is ServerArgs plus the entry point's own options class: name both
        what = (f"Unknown argument `{head}` of `python -m {own.module}` (neither a server option nor one of its"
                f" {own.options_class})")
    odd = _odd_blanks(word)
    if odd and prob.kind is ArgProblemKind.UNKNOWN:
        yield _joined_by_odd_blank(ctx, prob, odd, where)
        return
    if head == "--config" and prob.kind is ArgProblemKind.UNKNOWN and not launch.schema.config_merger:
        yield Violation(where, f"{what}: this sglang release has no `--config` option, "
                               "so the launch exits with `unrecognized arguments` and the file is never read")
        return
    gone = retired(head)
    if gone is not None:
        yield _retired(ctx, prob, gone, what, where)
        return
    if prob.kind is ArgProblemKind.AMBIGUOUS:
        yield Violation(where, what)
        return
    guess = launch.schema.closest(head)
    if ctx.beyond_schema and not _args.near_miss(head, guess):
        return  # may be an option added after the newest release kimi-lsp knows
    guess = guess if _args.worth_a_hint(head, guess) else None
    fixes: tuple[Fix, ...] = ()
    if guess is not None:
        fix = _args.replace_prefix(ctx, prob.token, prob.origin, len(head), guess, f"Did you mean `{guess}`?")
        fixes = (_hint(ctx, fix, f"Did you mean `{guess}`?"),)
    hint = f" (did you mean `{guess}`?)" if guess else ""
    yield Violation(where, f"{what}{hint}", fixes=fixes)


def _odd_blanks(word: str) -> list[int]:
    """Where ``word`` holds a blank the shell does not split at (a no-break space pasted from a
    web page, a thin space): to a reader two words, to the shell one."""
    return [i for i, c in enumerate(word) if c.isspace() and c not in " \t\n\r"]


def _joined_by_odd_blank(ctx: LaunchContext, prob: ArgProblem, odd: list[int], where: Location) -> Violation:
    word = prob.token.value
    first = word[: odd[0]]
    name = f"U+{ord(word[odd[0]]):04X}"
    what = (f"Unknown sglang argument `{word}`: a non-ASCII blank ({name}) after `{first}` joins it and what "
            "follows into one word (the shell splits words at ASCII spaces and tabs only)")
    fixes: tuple[Fix, ...] = ()
    tok = prob.token
    if tok.exact and tok.span.end - tok.span.start == len(word):
        edits = tuple(Edit(where.path, Span(tok.span.start + i, tok.span.start + i + 1), " ") for i in odd)
        fixes = (Fix(f"Replace the {name} with a space", edits, Applicability.SAFE),)
    return Violation(where, what, fixes=fixes)


def _config_key(ctx: LaunchContext, prob: ArgProblem) -> Iterator[Violation]:
    launch = ctx.launch
    assert prob.entry is not None
    key = prob.entry.key.value
    where = _args.problem_location(launch, prob)
    if not key.startswith("-") and "_" in key and _args.is_yaml_config(launch):
        return  # KL205 speaks for underscored keys
    if key.startswith("-"):
        bare = key.lstrip("-")
        target = launch.schema.match("--" + bare)
        fixes: tuple[Fix, ...] = ()
        if isinstance(target, Flag):
            fix = _args.key_rename_fix(
                ctx, prob.entry, bare, f"Write the key as `{bare}`", Applicability.SAFE
            )
            fixes = (fix,) if fix is not None else ()
        yield Violation(
            where,
            f"`--config` key `{key}` is passed as `--{key}`, which argparse rejects: keys are written without leading dashes",
            fixes=fixes,
        )
        return
    toml = launch.config is not None and launch.config.format == "toml"
    what = "launch profile key" if toml else "`--config` key"
    emitted = prob.token.value
    gone = retired(emitted)
    if prob.kind is ArgProblemKind.AMBIGUOUS:
        message = f"Ambiguous {what} `{key}`: sglang reads `{emitted}`, which could match {_list(prob.candidates)}"
        yield _retired(ctx, prob, gone, message, where) if gone is not None else Violation(where, message)
        return
    if gone is not None:
        yield _retired(ctx, prob, gone, f"Unknown {what} `{key}`", where)
        return
    guess = launch.schema.closest(emitted)
    if ctx.beyond_schema and not _args.near_miss(emitted, guess):
        return  # may be an option added after the newest release kimi-lsp knows
    guess = guess if _args.worth_a_hint(emitted, guess) else None
    fixes = ()
    if guess is not None:
        title = f"Did you mean `{guess[2:]}`?"
        fixes = (_hint(ctx, _args.key_rename_fix(ctx, prob.entry, guess[2:], title), title),)
    hint = f" (did you mean `{guess[2:]}`?)" if guess else ""
    yield Violation(where, f"Unknown {what} `{key}`{hint}", fixes=fixes)


def _engine_keyword(ctx: LaunchContext, prob: ArgProblem) -> Iterator[Violation]:
    """``sglang.Engine(tensor_parallel_size=2)``: ServerArgs takes its field names only (no
    aliases, no prefixes): ``TypeError: Unexpected keyword argument 'tensor_parallel_size'``."""
    launch = ctx.launch
    key = prob.token.value
    where = _args.problem_location(launch, prob)
    schema = launch.schema
    option = "--" + key.replace("_", "-")
    gone = retired(option)
    if gone is not None:  # sglang's own words name the replacement: no guess from spelling
        what = f"`{key}` is not a ServerArgs field: sglang raises `TypeError: Unexpected keyword argument '{key}'`"
        yield Violation(where, f"{what}; sglang removed `{option}` (still in {gone.last_seen}){_retired_field(schema, gone)}")
        return
    flag = schema.exact(option)  # an alias or another spelling of a field's flag
    if flag is None:
        near = schema.closest(option)
        flag = schema.exact(near) if near is not None else None
        if ctx.beyond_schema and not _args.near_miss(option, near):
            return  # may be a field added after the newest release kimi-lsp knows
    guess = field_name(flag) if flag is not None and field_name(flag) != key else None
    fixes: tuple[Fix, ...] = ()
    if guess is not None:
        title = f"Did you mean `{guess}`?"
        edit = Edit(where.path, prob.token.span, guess)
        fixes = (_hint(ctx, Fix(title, (edit,), Applicability.UNSAFE), title),)
    hint = f" (did you mean `{guess}`?)" if guess else ""
    yield Violation(where, f"`{key}` is not a ServerArgs field: sglang raises `TypeError: Unexpected keyword argument '{key}'`{hint}", fixes=fixes)


def _retired_field(schema: Schema, gone: RetiredFlag) -> str:
    """How sglang's replacement for a retired flag is written as a ServerArgs keyword, when it can
    be written for this release."""
    if not gone.replacement or _blocker(schema, gone) is not None:
        return ""
    new = schema.exact(gone.replacement[0])
    if new is None:
        return ""
    name = field_name(new)
    if len(gone.replacement) == 2:
        return f"; use `{name}={gone.replacement[1]!r}`"
    return f"; use `{name}`" + (" (same values)" if gone.keeps_value and not gone.value_map else "")


def _list(options: tuple[str, ...]) -> str:
    return ", ".join(f"`{o}`" for o in options)


# -- retired flags: sglang's own replacement -------------------------------------------------


def _blocker(schema: Schema, gone: RetiredFlag) -> str | None:
    """Why sglang's replacement cannot be written for the pinned release (None: it can): the
    flag must exist, a named value be among its choices, and a valued flag get a value whose
    meaning carries over (a rename that keeps the value, or the value sglang named)."""
    new = " ".join(gone.replacement)
    flag = schema.exact(gone.replacement[0])
    if flag is None:
        return f"its replacement `{new}` is not an option of sglang {schema.version} either"
    if len(gone.replacement) == 2:
        value = gone.replacement[1]
        if not flag.takes_value or (flag.choices is not None and value not in {str(c) for c in flag.choices}):
            return f"its replacement `{new}` is not accepted by sglang {schema.version} either"
        return None
    if gone.keeps_value:
        return None if flag.takes_value else f"its replacement `{new}` takes no value in sglang {schema.version}"
    return f"sglang names `{new}`, whose value is yours to choose" if flag.takes_value else None


def _retired(ctx: LaunchContext, prob: ArgProblem, gone: RetiredFlag, what: str, where: Location) -> Violation:
    schema = ctx.launch.schema
    said = f' ({gone.last_seen}: "{gone.said}")' if gone.said else ""
    # last_seen is the newest release read that has it, not necessarily the last one that did
    text = f"{what}: sglang removed it (still in {gone.last_seen})"
    if not gone.replacement:
        return Violation(where, f"{text}{said}")
    blocker = _blocker(schema, gone)
    if blocker is not None:
        return Violation(where, f"{text}; {blocker}{said}")
    more = ""
    if gone.value_map:
        more = " (values renamed: " + ", ".join(f"{a} -> {b}" for a, b in gone.value_map.items()) + ")"
    elif gone.keeps_value:
        more = " (same values)"
    fix = _retired_key_fix(ctx, prob, gone) if prob.origin is Origin.CONFIG and prob.entry is not None and prob.token.span == prob.entry.key.span else _retired_cli_fix(ctx, prob, gone)
    return Violation(where, f"{text}; use `{' '.join(gone.replacement)}`{more}{said}", fixes=_offer(fix))


def _retired_cli_fix(ctx: LaunchContext, prob: ArgProblem, gone: RetiredFlag) -> Fix | None:
    launch = ctx.launch
    tok = prob.token
    head, eq, value = tok.value.partition("=")
    new_flag = gone.replacement[0]
    title = f"Replace with `{' '.join(gone.replacement)}`"
    if not gone.keeps_value:
        if eq:
            return None  # `--old-switch=x`: nothing sglang said covers a value here
        # one word, so that an exec-form list item stays one argv element
        new = new_flag if len(gone.replacement) == 1 else f"{new_flag}={gone.replacement[1]}"
        return _args.replace_token(ctx, tok, prob.origin, new, title, Applicability.SAFE)
    if eq:
        return _args.replace_token(ctx, tok, prob.origin, f"{new_flag}={gone.value_map.get(value, value)}", title, Applicability.SAFE)
    fix = _args.replace_prefix(ctx, tok, prob.origin, len(head), new_flag, title, Applicability.SAFE)
    if fix is None:
        return None
    value_tok = _next_word(launch.command.argv, tok)
    if value_tok is None or value_tok.value not in gone.value_map:
        return fix
    text = ctx.workspace.text(_args.origin_path(launch, prob.origin))
    span = replace_token_value(text, value_tok, value_tok.value) if text is not None and value_tok.exact else None
    if span is None:
        return None
    edit = Edit(_args.origin_path(launch, prob.origin), span, gone.value_map[value_tok.value])
    return Fix(title, (*fix.edits, edit), Applicability.SAFE)


def _retired_key_fix(ctx: LaunchContext, prob: ArgProblem, gone: RetiredFlag) -> Fix | None:
    entry = prob.entry
    if entry is None:
        return None
    new_key = gone.replacement[0][2:]
    title = f"Replace with `{new_key}: {gone.replacement[1]}`" if len(gone.replacement) == 2 else f"Rename the key to `{new_key}`"
    if not gone.keeps_value and entry.value is not True:
        return None  # the switch was off (or odd): what to write instead is the user's call
    rename = _args.key_rename_fix(ctx, entry, new_key, title, Applicability.SAFE)
    if rename is None:
        return None
    new_value = gone.replacement[1] if len(gone.replacement) == 2 else None
    if gone.keeps_value and isinstance(entry.value, str):
        new_value = gone.value_map.get(entry.value)
    if new_value is None:
        return rename
    value = _args.entry_value_fix(ctx, entry, new_value, title, Applicability.SAFE)
    if value is None:
        return None
    return Fix(title, (*rename.edits, *value.edits), Applicability.SAFE)


def _next_word(argv: tuple[Token, ...], tok: Token) -> Token | None:
    for i, t in enumerate(argv):
        if t.span == tok.span and i + 1 < len(argv):
            nxt = argv[i + 1]
            return None if nxt.value.startswith("-") else nxt
    return None


def _offer(fix: Fix | None) -> tuple[Fix, ...]:
    return (fix,) if fix is not None else ()


def _hint(ctx: LaunchContext, fix: Fix | None, title: str) -> Fix:
    """A did-you-mean from spelling alone: never applied by --fix (display-only), and carrying
    an edit only when the launch it leaves re-lints without a new error."""
    if fix is None:
        return Fix(title, (), Applicability.DISPLAY_ONLY)
    from kimi_lsp.rules._vet import leaves_new_error  # (a did-you-mean is rare: not imported at start-up)

    if leaves_new_error(ctx, fix):
        return Fix(title, (), Applicability.DISPLAY_ONLY)
    return Fix(title, fix.edits, Applicability.DISPLAY_ONLY)
