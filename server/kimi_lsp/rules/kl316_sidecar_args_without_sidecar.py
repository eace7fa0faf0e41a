from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL316", name="sidecar-args-without-sidecar", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """`--sidecar-args` without `--sidecar`.

    ## What it does
    Reports arguments for a sidecar module on a launch that starts no sidecar.

    ## Why is this bad?
    `ValueError: --sidecar-args requires --sidecar.`

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --grpc-port 31000 --sidecar-args '["--verbose"]'
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --grpc-port 31000 --sidecar my_router --sidecar-args '["--verbose"]'
    ```
    """
    launch = ctx.launch
    use = _args.explicit(launch, "sidecar_args")
    if use is None or _args.explicit(launch, "sidecar") is not None:
        return
    yield Violation(_args.use_location(launch, use), "--sidecar-args requires --sidecar")
