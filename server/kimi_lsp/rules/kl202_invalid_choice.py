from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Applicability, Severity
from kimi_lsp.knowledge.schema import check_value
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule

# sglang adds this sampling backend only when the env var is set (server_args.py)
_ENV_CHOICES = {("sampling_backend", "token_oracle"): "SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE"}


@rule(code="KL202", name="invalid-choice", severity=Severity.ERROR, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A value that is not among the flag's choices in the pinned sglang release.

    ## What it does
    Checks every value of a flag with a fixed list of choices (attention backends, MoE runners,
    parsers, quantization methods ...) against that release's list, on the command line and in the
    `--config` file, and names the closest choice. When `SGLANG_PLUGINS` is set on the launch the
    finding is a warning, because sglang plugins may add choices at start-up.

    ## Why is this bad?
    argparse rejects the launch at once:
    `error: argument --attention-backend: invalid choice: 'flashinfer_mla' (choose from ...)`.

    ## Example
    ```yaml
    model-path: deepseek-ai/DeepSeek-V3
    attention-backend: flash_infer
    ```

    Use instead:
    ```yaml
    model-path: deepseek-ai/DeepSeek-V3
    attention-backend: flashinfer
    ```

    ## Fix safety
    Replacing a value that differs from a choice only in letter case, or a deprecated value that
    the release no longer lists by its replacement, is safe; any other closest choice is a guess
    by spelling alone (`encode` is one letter from `decode`, and means the opposite role), so it is
    only shown, never applied, not even with `--unsafe-fixes`.
    """
    launch = ctx.launch
    schema = launch.schema
    severity = Severity.WARNING if _args.plugins_active(launch) else None
    for use in launch.uses:
        flag = use.flag
        if flag.choices is None or not use.values:
            continue
        if use.entry is not None and _args.special_config_value(schema, use.entry) == "null":
            continue  # KL207 explains what `null` turns into
        for tok in use.values:
            if not _args.is_literal(tok, use.origin):
                continue
            msg = check_value(flag, tok.value)
            if msg is None or not msg.startswith("invalid choice"):
                continue
            env = _ENV_CHOICES.get((flag.dest, tok.value))
            if env is not None and _args.env_present(launch, env):
                continue
            renamed = schema.deprecated_values.get(flag.dest, {}).get(tok.value)
            guess = renamed or _args.closest_choice(tok.value, flag.choices)
            if ctx.beyond_schema and renamed is None and not _args.near_miss(tok.value, guess):
                continue  # may be a choice added after the newest release kimi-lsp knows
            fixes = []
            if guess is not None:
                safe = renamed is not None or guess.lower() == tok.value.lower()
                fix = _args.replace_token(
                    ctx, tok, use.origin, guess, f"Replace with `{guess}`",
                    Applicability.SAFE if safe else Applicability.DISPLAY_ONLY,
                )
                if fix is not None:
                    fixes.append(fix)
            hint = f"; did you mean `{guess}`?" if guess else ""
            plugin = " (`SGLANG_PLUGINS` is set: a plugin may add it)" if severity else ""
            yield Violation(
                _args.value_location(launch, use, tok),
                f"Invalid choice `{tok.value}` for `{_args.flag_text(use)}` "
                f"(choose from {_args.show_choices(flag.choices)}){hint}{plugin}",
                fixes=tuple(fixes),
                severity=severity,
            )
