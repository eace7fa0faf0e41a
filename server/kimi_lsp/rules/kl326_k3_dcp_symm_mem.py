from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args, _kimi
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL326", name="k3-dcp-symm-mem", severity=Severity.INFO, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """`--enable-symm-mem` on Kimi-K3 with decode context parallelism, where sglang turns it off.

    ## What it does
    Notes that sglang's Kimi-K3 override disables NCCL symmetric memory whenever `--dcp-size` > 1.

    ## Why is this bad?
    The flag has no effect: sglang logs `Kimi-K3 DCP disables --enable-symm-mem due to decode CUDA
    graph correctness issues.` and runs without it, so benchmarks that expect it are misleading.

    ## Example
    ```bash
    # requirements.txt: flashinfer-python==0.7.2
    python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --tp-size 8 --dcp-size 8 --enable-symm-mem
    ```

    Use instead:
    ```bash
    # requirements.txt: flashinfer-python==0.7.2
    python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --tp-size 8 --dcp-size 8
    ```
    """
    launch = ctx.launch
    use = _args.flag_on(launch, "enable_symm_mem")
    if use is None or _kimi.k3_dcp(ctx) is None:
        return
    yield Violation(
        _args.use_location(launch, use),
        "Kimi-K3 DCP disables --enable-symm-mem due to decode CUDA graph correctness issues",
    )
