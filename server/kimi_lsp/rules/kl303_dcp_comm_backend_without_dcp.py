from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL303", name="dcp-comm-backend-without-dcp", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """`--dcp-comm-backend a2a` or `fi_a2a` without decode context parallelism.

    ## What it does
    Reports an all-to-all DCP communication backend on a launch whose `--dcp-size` is 1 (or
    unset).

    ## Why is this bad?
    sglang refuses it while resolving the arguments: `ValueError: --dcp-comm-backend a2a only
    affects the decode context-parallel attention reduction and therefore requires --dcp-size /
    --decode-context-parallel-size > 1, but got dcp_size=1.`

    ## Example
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-comm-backend a2a
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 8 --dcp-comm-backend a2a
    ```
    """
    launch = ctx.launch
    n, _ = _args.dcp(launch)
    use = _args.explicit(launch, "dcp_comm_backend")
    if use is None or n > 1 or n < 1 or use.value not in ("a2a", "fi_a2a"):
        return  # n < 1: sglang stops earlier (KL301)
    yield Violation(
        _args.use_location(launch, use),
        f"--dcp-comm-backend {use.value} only affects the decode context-parallel attention reduction and "
        f"therefore requires --dcp-size / --decode-context-parallel-size > 1, but got dcp_size={n}",
    )
