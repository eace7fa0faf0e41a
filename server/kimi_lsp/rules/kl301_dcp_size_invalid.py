from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL301", name="dcp-size-invalid", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A decode context parallel size below 1.

    ## What it does
    Reports `--dcp-size` / `--decode-context-parallel-size` set to 0 or a negative number.

    ## Why is this bad?
    sglang refuses the launch while resolving the arguments:
    `ValueError: Decode context parallel size (--dcp-size / --decode-context-parallel-size) must
    be >= 1, but got dcp_size=0.` Use 1 to turn decode context parallelism off.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 0
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 1
    ```
    """
    launch = ctx.launch
    n, use = _args.dcp(launch)
    if use is None or n >= 1:
        return
    yield Violation(
        _args.use_location(launch, use),
        f"Decode context parallel size (--dcp-size / --decode-context-parallel-size) must be >= 1, but got dcp_size={n}",
    )
