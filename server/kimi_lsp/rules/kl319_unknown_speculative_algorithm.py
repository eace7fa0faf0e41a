from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp import _regex
from kimi_lsp.diagnostics import Applicability, Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule

# the release's help text lists its built-in algorithms; fall back to 0.5.23's list
_BUILTINS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO")
_HELP = _regex.compile(r"Builtins:\s*([A-Z0-9_, ]+)")


def builtins(help_text: str | None) -> tuple[str, ...]:
    m = _HELP.search(help_text or "")
    if not m:
        return _BUILTINS
    return tuple(x.strip() for x in m.group(1).split(",") if x.strip())


@rule(code="KL319", name="unknown-speculative-algorithm", severity=Severity.ERROR, fix=FixAvailability.SOMETIMES, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A `--speculative-algorithm` that is not one of sglang's built-in algorithms.

    ## What it does
    `--speculative-algorithm` has no argparse choices: sglang upper-cases the name while resolving
    the launch and looks it up among its built-ins (EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM, DFLASH,
    DSPARK, UNO in 0.5.23) and the algorithms plugins registered. When `SGLANG_PLUGINS` is set on
    the launch, an unknown name is a warning.

    ## Why is this bad?
    `ValueError: Unknown speculative algorithm name: EAGEL`, after the model config was loaded.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm EAGEL --speculative-draft-model-path yuhuili/EAGLE-LLaMA3.1-Instruct-8B
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE --speculative-draft-model-path yuhuili/EAGLE-LLaMA3.1-Instruct-8B
    ```

    ## Fix safety
    The closest built-in name is a guess: unsafe.
    """
    launch = ctx.launch
    use = _args.explicit(launch, "speculative_algorithm")
    if use is None or not use.values or not _args.is_literal(use.values[0], use.origin):
        return  # `--speculative-algorithm $ALGO`: known only when it runs
    known = builtins(use.flag.help)
    name = use.value or ""
    if name.upper() in known:
        return
    guess = _args.closest_choice(name.upper(), known)
    fixes = []
    if guess is not None:
        fix = _args.replace_token(ctx, use.values[0], use.origin, guess, f"Replace with `{guess}`", Applicability.UNSAFE)
        if fix is not None:
            fixes.append(fix)
    plugins = _args.plugins_active(launch)
    hint = f" (did you mean `{guess}`?)" if guess else ""
    tail = " (`SGLANG_PLUGINS` is set: a plugin may register it)" if plugins else ""
    yield Violation(
        _args.use_location(launch, use),
        f"Unknown speculative algorithm name: `{name}`{hint}{tail}",
        fixes=tuple(fixes),
        severity=Severity.WARNING if plugins else None,
    )
