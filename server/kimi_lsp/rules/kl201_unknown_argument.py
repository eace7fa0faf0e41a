from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Applicability, Severity
from kimi_lsp.knowledge.schema import Flag
from kimi_lsp.launch import ArgProblem
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule
from kimi_lsp.surfaces.model import Entry


@rule(code="KL201", name="unknown-argument", severity=Severity.ERROR, fix="sometimes")
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """An sglang argument or `--config` key that the pinned sglang release does not define, or
    an abbreviation that matches several.

    ## What it does
    Replays sglang's argparse parser (`allow_abbrev` on) over the launch: a flag that is neither an
    option of the pinned release nor the unique prefix of one is unknown; a prefix that several
    options start with is ambiguous (`--pp` could be `--pp-size` or `--pp-max-micro-batch-size`).
    `--config` keys are checked the same way, because sglang passes each key as `--{key}`, so
    `tp: 8` works while `pp: 2` is ambiguous. A did-you-mean comes from the closest option.

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
    Replacing a misspelt flag with the closest known one is a guess: unsafe. Removing the leading
    dashes of a `--config` key written as `--tp-size:` is safe.
    """
    launch = ctx.launch
    for prob in launch.problems:
        if prob.kind not in ("unknown", "ambiguous") or not _args.is_literal(prob.token, prob.origin):
            continue
        if prob.origin == "cli" and launch.command.entry is Entry.NO_CONFIG:
            continue  # benchmark entry points add their own flags to the parser
        if prob.origin == "config" and prob.entry is not None and prob.token.span == prob.entry.key.span:
            yield from _config_key(ctx, prob)
        else:
            yield from _cli_word(ctx, prob)


def _cli_word(ctx: LaunchContext, prob: ArgProblem) -> Iterator[Violation]:
    launch = ctx.launch
    word = prob.token.value
    head = word.split("=", 1)[0]
    where = _args.problem_location(launch, prob)
    if prob.kind == "ambiguous":
        yield Violation(where, f"Ambiguous option `{head}` could match {_list(prob.candidates)}")
        return
    guess = launch.schema.closest(head)
    fixes = []
    if guess is not None:
        fix = _args.replace_prefix(ctx, prob.token, prob.origin, len(head), guess, f"Replace with `{guess}`")
        if fix is not None:
            fixes.append(fix)
    hint = f" (did you mean `{guess}`?)" if guess else ""
    yield Violation(where, f"Unknown sglang argument `{head}`{hint}", fixes=tuple(fixes))


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
        fixes = ()
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
    if prob.kind == "ambiguous":
        yield Violation(
            where,
            f"Ambiguous {what} `{key}`: sglang reads `{emitted}`, which could match {_list(prob.candidates)}",
        )
        return
    guess = launch.schema.closest(emitted)
    fixes = []
    if guess is not None:
        fix = _args.key_rename_fix(ctx, prob.entry, guess[2:], f"Rename the key to `{guess[2:]}`")
        if fix is not None:
            fixes.append(fix)
    hint = f" (did you mean `{guess[2:]}`?)" if guess else ""
    yield Violation(where, f"Unknown {what} `{key}`{hint}", fixes=tuple(fixes))


def _list(options: tuple[str, ...]) -> str:
    return ", ".join(f"`{o}`" for o in options)
