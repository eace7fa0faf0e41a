from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args, _kimi
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL324", name="cutedsl-mla-prefill", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """`--prefill-attention-backend cutedsl_mla`: the CuteDSL MLA kernels only decode.

    ## What it does
    Reports `cutedsl_mla` chosen explicitly as the prefill attention backend. (The deprecated
    `tokenspeed_mla` becomes `trtllm_mla` for prefill, and the Kimi-K3 DCP override replaces the
    prefill backend with `trtllm_mla`; neither is reported.)

    ## Why is this bad?
    `AssertionError: CuteDSL MLA only supports decoding for now` while resolving the launch.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --prefill-attention-backend cutedsl_mla
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --prefill-attention-backend trtllm_mla --decode-attention-backend cutedsl_mla
    ```
    """
    launch = ctx.launch
    use = _args.explicit(launch, "prefill_attention_backend")
    if use is None or use.value != "cutedsl_mla":
        return
    k3 = _kimi.k3_dcp(ctx)
    if k3 is not None and k3.decode.name in (None, "cutedsl_mla"):
        return  # the Kimi-K3 override sets prefill to trtllm_mla
    yield Violation(_args.use_location(launch, use), "CuteDSL MLA only supports decoding for now")
