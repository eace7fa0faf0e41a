from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Location, Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule


@rule(code="KL210", name="config-false-no-effect", severity=Severity.INFO, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A boolean `--config` key set to `false`, which sglang's merger simply leaves out.

    ## What it does
    For a flag without a value, the merger emits `--flag` for `true` and nothing at all for
    `false`. The key then has no effect: the flag keeps sglang's default. For the flags whose
    default is "decide while resolving" (`None`), sglang may still turn the feature on.

    ## Why is this bad?
    `enable-symm-mem: false` reads as "off", but YAML cannot force a flag off; when a command
    line elsewhere sets it, or sglang's resolution does, it is on.

    ## Example
    ```yaml
    model-path: Qwen/Qwen3-8B
    enable-metrics: false
    ```

    Use instead:
    ```yaml
    model-path: Qwen/Qwen3-8B
    ```

    ## Fix safety
    Removing the key changes nothing sglang does, but it removes what may be documentation:
    unsafe.
    """
    launch = ctx.launch
    config = launch.config
    if config is None:
        return
    schema = launch.schema
    for entry in config.entries:
        if entry.value is not False or not _args.is_store_true_key(schema, entry.key.value):
            continue
        flag = _args.entry_flag(schema, entry.key.value)
        if flag is None or _args.is_refused_key(schema, entry.key.value):
            continue
        key = entry.key.value
        if flag.default is None:
            tail = "sglang may still turn it on while resolving the launch"
        else:
            tail = f"sglang keeps its default ({str(flag.default).lower()})"
        fix = _args.delete_entry_fix(ctx, entry, f"Remove `{key}: false`")
        yield Violation(
            Location(config.path, entry.key.span.cover(entry.value_span)),
            f"`{key}: false` has no effect: the config merger leaves out flags set to false, so {tail}",
            fixes=(fix,) if fix is not None else (),
        )
