from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL315", name="watermark-config-without-watermark", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """`--watermark-config` without `--enable-watermark`.

    ## What it does
    Reports watermark settings on a launch that does not turn watermarking on.

    ## Why is this bad?
    `ValueError: --watermark-config requires --enable-watermark`.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --watermark-config '{"key": 42}'
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --enable-watermark --watermark-config '{"key": 42}'
    ```
    """
    launch = ctx.launch
    use = _args.explicit(launch, "watermark_config")
    if use is None or _args.flag_on(launch, "enable_watermark"):
        return
    yield Violation(_args.use_location(launch, use), "--watermark-config requires --enable-watermark")
