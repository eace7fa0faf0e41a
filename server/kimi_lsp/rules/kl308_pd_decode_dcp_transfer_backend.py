from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule

_DCP_TRANSFER = ("mooncake", "nixl", "mori", "ascend", "fake")


@rule(code="KL308", name="pd-decode-dcp-transfer-backend", severity=Severity.ERROR)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A PD-disaggregated decode server with decode context parallelism on a transfer backend that
    cannot move DCP-sharded KV.

    ## What it does
    With `--disaggregation-mode decode` and `--dcp-size` > 1, checks that
    `--disaggregation-transfer-backend` is mooncake, nixl, mori, ascend or fake.

    ## Why is this bad?
    `ValueError: PD decode DCP requires --disaggregation-transfer-backend mooncake, nixl, mori,
    ascend, or fake for synthetic benchmarking, got 'mooncake_tcp'.`

    ## Example
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 8 --disaggregation-mode decode --disaggregation-transfer-backend mooncake_tcp
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 8 --disaggregation-mode decode --disaggregation-transfer-backend mooncake
    ```
    """
    launch = ctx.launch
    if _args.fatal_parse(launch):
        return
    n, dcp_use = _args.dcp(launch)
    if n <= 1 or _args.str_value(launch, "disaggregation_mode") != "decode":
        return
    backend = _args.str_value(launch, "disaggregation_transfer_backend")
    if backend is None or backend in _DCP_TRANSFER:
        return
    use = launch.last("disaggregation_transfer_backend") or launch.last("disaggregation_mode")
    assert use is not None
    yield Violation(
        _args.use_location(launch, use),
        "PD decode DCP requires --disaggregation-transfer-backend mooncake, nixl, mori, ascend, or fake "
        f"for synthetic benchmarking, got {backend!r}",
        related=_args.dcp_related(launch, dcp_use, n),
    )
