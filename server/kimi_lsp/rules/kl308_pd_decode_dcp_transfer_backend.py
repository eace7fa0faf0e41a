from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule

_DCP_TRANSFER = ("mooncake", "nixl", "mori", "ascend", "fake")
# handle_pd_disaggregation rewrites `mooncake_tcp` to `mooncake` (forcing MC_FORCE_TCP=1) before
# its DCP check, in every release that has the check (0.5.21-0.5.23): it passes as mooncake
_REWRITES = {"mooncake_tcp": "mooncake"}


@rule(code="KL308", name="pd-decode-dcp-transfer-backend", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A PD-disaggregated decode server with decode context parallelism on a transfer backend that
    cannot move DCP-sharded KV.

    ## What it does
    With `--disaggregation-mode decode` and `--dcp-size` > 1, checks that
    `--disaggregation-transfer-backend` is mooncake, nixl, mori, ascend or fake. `mooncake_tcp`
    passes: sglang rewrites it to `mooncake` (TCP transport) before this check. Without plugins
    a value argparse rejects is KL202's alone (every value 0.5.21-0.5.23 accept passes); a
    backend that an `SGLANG_PLUGINS` plugin adds to the choices still fails this check.

    ## Why is this bad?
    `ValueError: PD decode DCP requires --disaggregation-transfer-backend mooncake, nixl, mori,
    ascend, or fake for synthetic benchmarking, got 'my_transfer'.`

    ## Example
    ```bash
    SGLANG_PLUGINS=my_transfer_plugin python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 8 --disaggregation-mode decode --disaggregation-transfer-backend my_transfer
    ```

    Use instead:
    ```bash
    SGLANG_PLUGINS=my_transfer_plugin python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 8 --disaggregation-mode decode --disaggregation-transfer-backend mooncake_tcp
    ```
    """
    launch = ctx.launch
    n, dcp_use = _args.dcp(launch)
    if n <= 1 or _args.str_value(launch, "disaggregation_mode") != "decode":
        return
    backend = _args.str_value(launch, "disaggregation_transfer_backend")
    if backend is None or _REWRITES.get(backend, backend) in _DCP_TRANSFER:
        return
    use = launch.last("disaggregation_transfer_backend") or launch.last("disaggregation_mode")
    assert use is not None
    choices = use.flag.choices if use.flag.dest == "disaggregation_transfer_backend" else None
    if choices is not None and backend not in choices and not _args.plugins_active(launch):
        return  # argparse stops the launch first: KL202 (a plugin may add a backend, not to this check)
    yield Violation(
        _args.use_location(launch, use),
        "PD decode DCP requires --disaggregation-transfer-backend mooncake, nixl, mori, ascend, or fake "
        f"for synthetic benchmarking, got {backend!r}",
        related=_args.dcp_related(launch, dcp_use, n),
    )
