from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL302", name="dcp-with-prefill-cp", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """Decode context parallelism combined with prefill context parallelism.

    ## What it does
    Reports `--enable-prefill-cp` on a launch with `--dcp-size` greater than 1 (sglang 0.5.22 and
    later; earlier releases accept the pair).

    ## Why is this bad?
    sglang refuses the combination while resolving the arguments:
    `ValueError: --dcp-size > 1 does not support --enable-prefill-cp.`

    ## Example
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 8 --enable-prefill-cp --cp-strategy zigzag
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 8
    ```
    """
    launch = ctx.launch
    if not _args.release_at_least(launch, "0.5.22"):
        return  # sglang's parallel_hook refuses the pair from 0.5.22 (read in the wheels)
    n, dcp_use = _args.dcp(launch)
    cp = _args.flag_on(launch, "enable_prefill_cp")
    if n <= 1 or cp is None:
        return
    yield Violation(
        _args.use_location(launch, cp),
        "--dcp-size > 1 does not support --enable-prefill-cp",
        related=_args.dcp_related(launch, dcp_use, n),
    )
