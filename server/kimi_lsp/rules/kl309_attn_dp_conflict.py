from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL309", name="attn-dp-conflict", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """An attention data-parallel size below 1, or attention data parallelism combined with
    data-parallel replicas.

    ## What it does
    Reports `--attn-dp-size` < 1, and `--attn-dp-size` > 1 together with `--dp-size` > 1. (With
    the deprecated `--enable-dp-attention`, sglang moves `--dp-size` to the attention DP size
    instead, so that spelling is not reported here; KL204 suggests the new one.)

    ## Why is this bad?
    `ValueError: --attn-dp-size must be positive (got 0).` / `--dp-size 2 with --attn-dp-size 4:
    data-parallel replicas combined with attention data parallelism are not supported.`

    ## Example
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dp-size 2 --attn-dp-size 8
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --attn-dp-size 8
    ```
    """
    launch = ctx.launch
    attn_use = launch.last("attn_dp_size")
    attn = _args.parse_int(attn_use.value) if attn_use is not None else None
    if attn_use is None or attn is None:
        return
    where = _args.use_location(launch, attn_use)
    if attn < 1:
        yield Violation(where, f"--attn-dp-size must be positive (got {attn})")
        return
    dp_use = launch.last("dp_size")
    dp = _args.int_value(launch, "dp_size") or 1
    if attn > 1 and dp > 1 and dp_use is not None and _args.flag_on(launch, "enable_dp_attention") is None:
        yield Violation(
            where,
            f"--dp-size {dp} with --attn-dp-size {attn}: data-parallel replicas combined with attention data "
            "parallelism are not supported",
            related=(_args.related_use(launch, dp_use, "data-parallel replicas are requested here"),),
        )
