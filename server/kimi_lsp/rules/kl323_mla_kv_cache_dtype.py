from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Related, Severity
from kimi_lsp.rules import _args, _kimi
from kimi_lsp.rules._base import LaunchContext, Violation, rule

_CUTEDSL_KV = ("auto", "bf16", "bfloat16", "fp8_e4m3")
_TRTLLM_KV = ("auto", "bf16", "fp8_e4m3")  # `bfloat16` is not accepted here


@rule(code="KL323", name="mla-kv-cache-dtype", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A KV-cache dtype that the cutedsl_mla or trtllm_mla decode backend does not support.

    ## What it does
    When the decode attention backend resolves to `cutedsl_mla` (set explicitly, through
    `--attention-backend`, or filled in by sglang for Kimi-K3 with decode context parallelism),
    `--kv-cache-dtype` must be `auto`, `bf16`, `bfloat16` or `fp8_e4m3`; on `trtllm_mla` it must be
    `auto`, `bf16` or `fp8_e4m3` (not `bfloat16`). `tokenspeed_mla` forces `fp8_e4m3` and is not
    reported.

    ## Why is this bad?
    `ValueError: CuteDSL MLA backend only supports kv-cache-dtype of fp8_e4m3, bf16, or auto.`
    (or the TensorRT-LLM MLA equivalent) while resolving the launch.

    ## Example
    ```bash
    # requirements.txt: flashinfer-python==0.7.2
    python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --tp-size 8 --dcp-size 8 --kv-cache-dtype fp8_e5m2
    ```

    Use instead:
    ```bash
    # requirements.txt: flashinfer-python==0.7.2
    python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --tp-size 8 --dcp-size 8 --kv-cache-dtype fp8_e4m3
    ```
    """
    launch = ctx.launch
    kv_use = _args.explicit(launch, "kv_cache_dtype")
    if kv_use is None:
        return
    kv = kv_use.value
    _, (decode, decode_use) = _args.attention_backends(launch)
    if decode_use is not None and decode_use.value == "tokenspeed_mla":
        return  # sglang forces fp8_e4m3 for it
    why = ""
    if decode is None:
        k3 = _kimi.k3_dcp(ctx)
        if k3 is None:
            return
        decode, why = "cutedsl_mla", " (sglang's default decode backend for Kimi-K3 DCP)"
    if decode == "cutedsl_mla" and kv not in _CUTEDSL_KV:
        msg = f"CuteDSL MLA backend only supports kv-cache-dtype of fp8_e4m3, bf16, or auto: got `{kv}`{why}"
    elif decode == "trtllm_mla" and kv not in _TRTLLM_KV:
        msg = f"TensorRT-LLM MLA backend only supports kv-cache-dtype of fp8_e4m3, bf16, or auto: got `{kv}`"
    else:
        return
    related: tuple[Related, ...] = ()
    if decode_use is not None:
        related = (_args.related_use(launch, decode_use, f"the decode attention backend `{decode}` is chosen here"),)
    yield Violation(_args.use_location(launch, kv_use), msg, related=related)



