from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL305", name="dcp-with-kv-cache-sharding", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """KV-cache sharding combined with decode context parallelism.

    ## What it does
    Reports `--enable-kv-cache-sharding` on a launch with `--dcp-size` greater than 1: both widen
    the KV allocator's index space and sglang allows only one of them.

    ## Why is this bad?
    `ValueError: --enable-kv-cache-sharding and decode context parallelism (--dcp-size) are
    mutually exclusive users of the widened allocator index space.`

    ## Example
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 8 --enable-kv-cache-sharding
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 8
    ```
    """
    launch = ctx.launch
    n, dcp_use = _args.dcp(launch)
    use = _args.flag_on(launch, "enable_kv_cache_sharding")
    if n <= 1 or use is None:
        return
    yield Violation(
        _args.use_location(launch, use),
        "--enable-kv-cache-sharding and decode context parallelism (--dcp-size) are mutually exclusive "
        "users of the widened allocator index space",
        related=_args.dcp_related(launch, dcp_use, n),
    )
