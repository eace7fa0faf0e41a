from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.launch import ArgUse
from kimi_lsp.rules import _args, _kimi
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL325", name="mla-backend-gpu", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """An MLA attention backend that the project's target GPU cannot run (needs `target-gpu`).

    ## What it does
    Only when the project declares its GPU (`target-gpu = "h200"` in `[tool.kimi-lsp]`):
    `cutedsl_mla` needs Blackwell SM100 (B200/B300/GB200/GB300) and `trtllm_mla` Blackwell SM100 or
    SM12x. The decode backend counts whether it is set explicitly, through `--attention-backend`,
    through `tokenspeed_mla`, or filled in by sglang for Kimi-K3 with decode context parallelism,
    which therefore cannot run on Hopper except with `aiter` on ROCm.

    ## Why is this bad?
    `ValueError: CuteDSL MLA backend is only supported on Blackwell GPUs (SM100). Please use a
    different backend.` on the GPU node, after the model download.

    ## Example
    ```bash
    # kimi-lsp.toml: target-gpu = "h200"
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --decode-attention-backend cutedsl_mla
    ```

    Use instead:
    ```bash
    # kimi-lsp.toml: target-gpu = "h200"
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --decode-attention-backend flashmla
    ```
    """
    sm = ctx.settings.target_sm
    launch = ctx.launch
    if sm is None:
        return
    gpu = f"{ctx.settings.target_gpu} (SM{sm})"
    prefill, decode = _args.attention_backends(launch)
    d_name, d_use = decode
    p_name, p_use = prefill
    k3 = _kimi.k3_dcp(ctx)
    k3_default = False
    if d_name is None and k3 is not None:
        d_name, d_use, k3_default = "cutedsl_mla", k3.dcp_use, True
    if d_name == "cutedsl_mla" and sm // 10 != 10:
        how = " (sglang's decode backend for Kimi-K3 DCP)" if k3_default else ""
        yield _finding(
            ctx, d_use,
            f"CuteDSL MLA backend{how} is only supported on Blackwell GPUs (SM100), but the target GPU is {gpu}",
        )
        return
    for name, use in ((d_name, d_use), (p_name, p_use)):
        if name == "trtllm_mla" and sm // 10 not in (10, 12):
            yield _finding(
                ctx, use,
                f"TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x), but the target GPU is {gpu}",
            )
            return


def _finding(ctx: LaunchContext, use: ArgUse | None, msg: str) -> Violation:
    launch = ctx.launch
    where = _args.use_location(launch, use) if use is not None else _args.launch_anchor(launch)
    return Violation(where, msg)
