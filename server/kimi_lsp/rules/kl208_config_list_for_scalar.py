from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Location, Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL208", name="config-list-for-scalar", severity=Severity.ERROR)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A `--config` key given a list although its flag takes a single value (or none).

    ## What it does
    sglang's config merger passes a YAML list as several words (`tp-size: [2, 4]` becomes
    `--tp-size 2 4`). That is right for flags that take several values (`cuda-graph-bs-decode`) and an
    error for any other flag with more than one item.

    ## Why is this bad?
    argparse gives the first item to the flag and rejects the rest:
    `error: unrecognized arguments: 4`. For a flag without a value every item is rejected.

    ## Example
    ```yaml
    model-path: Qwen/Qwen3-8B
    attention-backend: [fa3, triton]
    ```

    Use instead:
    ```yaml
    model-path: Qwen/Qwen3-8B
    prefill-attention-backend: fa3
    decode-attention-backend: triton
    ```
    """
    launch = ctx.launch
    if launch.config is None:
        return
    schema = launch.schema
    for entry in launch.config.entries:
        if _args.special_config_value(schema, entry) != "list":
            continue
        flag = _args.entry_flag(schema, entry.key.value)
        assert flag is not None and isinstance(entry.value, list)
        key = entry.key.value
        words = " ".join(str(v) for v in entry.value)
        if flag.takes_value:
            stray = " ".join(str(v) for v in entry.value[1:])
            what = f"`--{key}` takes one value"
        else:
            stray = words
            what = f"`--{key}` takes no value"
        yield Violation(
            Location(launch.config.path, entry.key.span.cover(entry.value_span)),
            f"`{key}` is a list of {len(entry.value)}, passed as `--{key} {words}`: {what} "
            f"(unrecognized arguments: {stray})",
        )
