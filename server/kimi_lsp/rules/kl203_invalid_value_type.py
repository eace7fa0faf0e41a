from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.knowledge.schema import check_value
from kimi_lsp.launch import ArgProblem, ArgProblemKind, ArgUse, Origin
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule
from kimi_lsp.surfaces.model import Entry, Token

_YAML_BOOL = " (YAML reads `true`/`false`/`yes`/`no`/`on`/`off` as booleans)"


@rule(code="KL203", name="invalid-value-type", severity=Severity.ERROR)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A value argparse cannot convert to the flag's type, a flag without its value, or a word
    that no flag consumes.

    ## What it does
    Converts every value the way the pinned sglang release does: `int`, `float`, sglang's
    human-readable integers (`128k`, `1Mi`; decimals are not allowed with IEC suffixes), JSON,
    JSON lists and the CUDA-graph parsers (`tc_piecewise` was removed). It also reports a flag
    written last without its value, a value given to a flag that takes none
    (`--trust-remote-code=true`, `--enable-metrics yes`), and extra values after a single-value
    flag (`--tp-size 2 4`).

    ## Why is this bad?
    argparse exits at start-up: `argument --tp-size/--tensor-parallel-size: invalid int value:
    '8.0'`, `expected one argument`, `ignored explicit argument 'true'` or
    `unrecognized arguments: 4`.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-size 2.0 --context-length 32K
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-size 2 --context-length 32k
    ```
    """
    launch = ctx.launch
    schema = launch.schema
    for use in launch.uses:
        if use.entry is not None and _args.special_config_value(schema, use.entry) is not None:
            continue  # KL207/KL208/KL209 explain what the config merger made of the value
        for tok in use.values:
            if not _args.is_literal(tok, use.origin):
                continue
            msg = check_value(use.flag, tok.value)
            if msg is None or msg.startswith("invalid choice"):
                continue
            msg = msg.rstrip(".")
            note = _YAML_BOOL if use.origin is Origin.CONFIG and isinstance(use.entry and use.entry.value, bool) else ""
            yield Violation(
                _args.value_location(launch, use, tok),
                f"Invalid value `{tok.value}` for `{_args.flag_text(use)}`: {msg}{note}",
            )
    first = _first_exit(launch.problems)
    for prob in launch.problems:
        if not _args.is_literal(prob.token, prob.origin):
            continue  # e.g. `"$@"` or `$EXTRA_ARGS`: whatever they expand to is unknown here
        if prob.kind is ArgProblemKind.MISSING_VALUE:
            yield Violation(_args.problem_location(launch, prob), _missing(prob) + _reported_first(prob, first))
        elif prob.kind is ArgProblemKind.EXPLICIT_VALUE:
            assert prob.flag is not None
            word = prob.token.value
            if "=" not in word and not word.startswith("--"):
                # `-hx`: argparse reads a single-dash word as its first two letters and the rest
                head, value = word[:2], word[2:]
                yield Violation(
                    _args.problem_location(launch, prob),
                    f"`{word}` is `{head}` followed by `{value}`, and `{head}` takes no value "
                    f"(argparse: ignored explicit argument {value!r}){_reported_first(prob, first)}",
                )
                continue
            head, _, value = word.partition("=")
            yield Violation(
                _args.problem_location(launch, prob),
                f"`{head}` takes no value, so `={value}` is an error (argparse: ignored explicit argument {value!r})"
                f"{_reported_first(prob, first)}",
            )
        elif prob.kind is ArgProblemKind.EXTRA_VALUE:
            if prob.origin is Origin.CLI and launch.command.entry is Entry.NO_CONFIG and not _own_options_known(ctx):
                continue  # a benchmark's own flag and its value
            if prob.entry is not None and _args.special_config_value(schema, prob.entry) is not None:
                continue
            if prob.entry is not None and any(
                p.entry is prob.entry and p.kind is not ArgProblemKind.EXTRA_VALUE for p in launch.problems
            ):
                continue  # the value of an unknown or refused key: KL201/KL205/KL206 speak for it
            msg = _extra(ctx, prob)
            if msg is not None:
                yield Violation(_args.problem_location(launch, prob), msg)


def _first_exit(problems: tuple[ArgProblem, ...]) -> ArgProblem | None:
    """The error sglang prints on Python 3.10, 3.11 and 3.12 up to 3.12.7 (Ubuntu 22.04 ships
    3.10.12, 24.04 3.12.3): argparse classifies every word before consuming any and raises at the
    first ambiguous option then, so it wins over a missing or explicit value before it; otherwise
    the first of those (argparse exits at it). From 3.12.8 and 3.13.1 (CPython gh-58573) the
    ambiguity is raised as the option is consumed: the first of all three in argv order. The
    replay reads on past each (launch.parse_words)."""
    exits = (ArgProblemKind.MISSING_VALUE, ArgProblemKind.EXPLICIT_VALUE)
    return (next((p for p in problems if p.kind is ArgProblemKind.AMBIGUOUS), None)
            or next((p for p in problems if p.kind in exits), None))


def _reported_first(prob: ArgProblem, first: ArgProblem | None) -> str:
    """What sglang says instead of this error, when it says another first (fixing that one would
    make sglang report this one next)."""
    if first is None or first is prob:
        return ""
    head = first.token.value.split("=", 1)[0]
    if first.kind is ArgProblemKind.AMBIGUOUS:
        # later Pythons report in argv order (_first_exit): say which ones report the ambiguity
        return f" (sglang reports the ambiguous `{head}` first, on Python up to 3.12.7)"
    return f" (sglang stops at `{head}` first)"


def _missing(prob: ArgProblem) -> str:
    flag = prob.flag
    assert flag is not None
    lo, hi = flag.arity
    want = "at least one value" if hi is None else ("one value" if lo == 1 else f"{lo} values")
    where = f"`--config` key `{prob.entry.key.value}`" if prob.entry is not None else f"`{prob.token.value}`"
    return f"{where} expects {want} but none follows (argparse: {prob.message.split(': ', 1)[-1]})"


def _extra(ctx: LaunchContext, prob: ArgProblem) -> str | None:
    launch = ctx.launch
    word = prob.token.value
    if word == "--":
        # nothing in sglang's parser is positional, so argparse keeps the '--' as an extra
        return ("`--` is an unrecognized argument: sglang's parser takes no positional arguments, so argparse "
                "rejects `--` and every word after it")
    before = _word_before(launch.command.argv, prob)
    if before is not None:
        if any(p.token.span == before.span for p in launch.problems):
            return None  # the stray value of an unknown flag: KL201 speaks for both
        for use in launch.uses:
            last = use.values[-1] if use.values else use.option
            if use.origin is Origin.CLI and last.span.end == before.span.end:
                if not use.flag.takes_value:
                    return f"`{use.option.value}` takes no value, so `{word}` is an unrecognized argument"
                return f"`{use.option.value}` takes {_takes(use)}, so `{word}` is an unrecognized argument"
    if launch.command.entry is Entry.LAUNCH_SERVER and launch.last("model_path") is None:
        return f"Unexpected positional argument `{word}` (the model path goes after `--model-path`)"
    return f"Unexpected argument `{word}` (argparse: unrecognized arguments)"


def _takes(use: ArgUse) -> str:
    lo, hi = use.flag.arity
    return "one value" if hi == 1 else f"{hi} values"


def _word_before(argv: tuple[Token, ...], prob: ArgProblem) -> Token | None:
    if prob.origin is not Origin.CLI:
        return None
    for i, tok in enumerate(argv):
        if tok.span == prob.token.span:
            return argv[i - 1] if i > 0 else None
    return None


def _own_options_known(ctx: LaunchContext) -> bool:
    """Whether every option of a benchmark entry point's own options class is known for this
    release (the router's are not: a newer sglang-router may add options)."""
    from kimi_lsp.knowledge.entry_points import entry_parser, module_of

    own = entry_parser(ctx.launch.schema.version, module_of(ctx.launch.command.program.value))
    return own is not None and own.complete and not own.router
