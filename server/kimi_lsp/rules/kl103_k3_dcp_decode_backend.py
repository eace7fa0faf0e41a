from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Location, Severity
from kimi_lsp.rules import _kimi
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule
from kimi_lsp.rules._fixes import set_value_fix


@rule(code="KL103", name="k3-dcp-decode-backend", severity=Severity.ERROR, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """Kimi-K3 with decode context parallelism only runs on the cutedsl_mla or aiter decode backends.

    ## What it does
    Flags Kimi-K3 launches with `--dcp-size` > 1 whose decode attention backend resolves to anything
    else: `--decode-attention-backend X`, or `--attention-backend X` with the decode backend unset
    (so `--attention-backend trtllm_mla` counts), or the one a `--device` platform hook sets:
    `--device cpu` fills an unset `--attention-backend`, `--device hpu` replaces it even when
    explicit (so only `--decode-attention-backend` survives), `--device npu` replaces all three.
    `aiter` is accepted only where its gluon MLA kernel exists (ROCm): with a declared NVIDIA
    `target-gpu` it is reported too.

    ## Why is this bad?
    sglang's Kimi-K3 override asserts at start-up:
    `AssertionError: Decode attention backend for Kimi-K3 DCP must be 'cutedsl_mla' or 'aiter', got 'trtllm_mla'.`
    For `aiter` on CUDA it raises `RuntimeError: Kimi-K3 DCP with decode_attention_backend='aiter'
    requires the aiter gluon mla kernel, which is unavailable.`

    ## Example
    ```yaml
    model-path: moonshotai/Kimi-K3
    dcp-size: 8
    attention-backend: trtllm_mla
    ```

    Use instead:
    ```yaml
    model-path: moonshotai/Kimi-K3
    dcp-size: 8
    decode-attention-backend: cutedsl_mla
    ```

    ## Fix safety
    Switching the backend to `cutedsl_mla` changes which kernels serve the model: unsafe.
    """
    k3 = _kimi.k3_dcp(ctx)
    if k3 is None or k3.decode.name is None or k3.decode.name in k3.allowed and k3.decode.name != "aiter":
        return
    d = k3.decode
    anchor = k3.anchor(ctx.launch)
    if d.name == "aiter" and "aiter" in k3.allowed:
        yield from _aiter_on_cuda(ctx, k3, anchor)
        return
    if d.from_device and d.overridden is not None:
        flag = d.overridden.option.value.split("=", 1)[0].lstrip("-")
        how = f"`--device {d.from_device}` overrides `{flag} {d.overridden.value}` with `{d.name}`"
    elif d.from_device:
        how = f"`--device {d.from_device}` fills --attention-backend with `{d.name}`"
    else:
        assert d.use is not None
        how = f"from `{d.use.option.value.lstrip('-')}`"
    fixes = []
    if d.use is not None and not d.from_device:
        f = set_value_fix(ctx.launch, d.use, "cutedsl_mla", "Use the cutedsl_mla decode backend", ctx.workspace)
        if f is not None:
            fixes.append(f)
    yield Violation(
        anchor,
        f"Decode attention backend for Kimi-K3 DCP must be {_kimi.backends_text(k3.allowed)}, got '{d.name}' ({how})",
        fixes=tuple(fixes),
        related=_kimi.launched_from(ctx.launch, anchor),
    )


def _aiter_on_cuda(ctx: LaunchContext, k3: _kimi.K3Dcp, anchor: Location) -> Iterator[Violation]:
    """sglang accepts `aiter` only after probing aiter's gluon MLA kernel, which exists on ROCm
    alone: a declared NVIDIA target (an SM number) cannot pass the probe."""
    sm = ctx.settings.target_sm
    if sm is None:
        return  # ROCm or undeclared: aiter may well be there
    assert k3.decode.use is not None
    fixes = []
    f = set_value_fix(ctx.launch, k3.decode.use, "cutedsl_mla", "Use the cutedsl_mla decode backend", ctx.workspace)
    if f is not None:
        fixes.append(f)
    yield Violation(
        anchor,
        "Kimi-K3 DCP with decode_attention_backend='aiter' requires the aiter gluon mla kernel, which is "
        f"unavailable: aiter is ROCm-only and the target GPU is {ctx.settings.target_gpu} (SM{sm})",
        fixes=tuple(fixes),
        related=_kimi.launched_from(ctx.launch, anchor),
    )
