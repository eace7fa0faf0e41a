from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL307", name="dcp-with-lmcache", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """LMCache, or the host-pool retraction backup of PD decode, with decode context parallelism.

    ## What it does
    Reports `--enable-lmcache` and `--disaggregation-decode-retraction-backup host_pool` on a
    launch with `--dcp-size` greater than 1.

    ## Why is this bad?
    sglang refuses both while resolving the KV-cache arguments: `--enable-lmcache with
    --dcp-size > 1 is not supported: LMCache has no DCP-aware index translation`, and the host pool
    retraction backup `does not support --dcp-size > 1`.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 8 --enable-lmcache
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 8
    ```
    """
    launch = ctx.launch
    n, dcp_use = _args.dcp(launch)
    if n <= 1:
        return
    related = _args.dcp_related(launch, dcp_use, n)
    lmcache = _args.flag_on(launch, "enable_lmcache")
    if lmcache is not None:
        yield Violation(
            _args.use_location(launch, lmcache),
            "--enable-lmcache with --dcp-size > 1 is not supported: LMCache has no DCP-aware index translation",
            related=related,
        )
    backup = _args.explicit(launch, "disaggregation_decode_retraction_backup")
    if backup is not None and backup.value == "host_pool":
        yield Violation(
            _args.use_location(launch, backup),
            "--disaggregation-decode-retraction-backup host_pool does not support --dcp-size > 1",
            related=related,
        )
