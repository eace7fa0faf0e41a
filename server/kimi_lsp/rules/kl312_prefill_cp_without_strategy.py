from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL312", name="prefill-cp-without-strategy", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """`--enable-prefill-cp` without `--cp-strategy`.

    ## What it does
    Reports prefill context parallelism enabled without choosing how the sequence is sharded
    (`zigzag` or `interleave`).

    ## Why is this bad?
    `ValueError: --cp-strategy must be set when --enable-prefill-cp is enabled.`

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-235B-A22B --tp-size 8 --enable-prefill-cp
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-235B-A22B --tp-size 8 --enable-prefill-cp --cp-strategy zigzag
    ```
    """
    launch = ctx.launch
    cp = _args.flag_on(launch, "enable_prefill_cp")
    if cp is None or _args.explicit(launch, "cp_strategy") is not None:
        return
    yield Violation(_args.use_location(launch, cp), "--cp-strategy must be set when --enable-prefill-cp is enabled")
