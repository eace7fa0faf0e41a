from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL318", name="mis-requires-flashinfer", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """Multi-item scoring with an attention backend other than flashinfer.

    ## What it does
    Reports `--enable-mis` when the prefill or decode attention backend is set to something other
    than `flashinfer` (via `--attention-backend` or the phase flags); multi-item scoring needs
    flashinfer's custom attention masks.

    ## Why is this bad?
    `AssertionError: Multi-item scoring requires flashinfer attention backend for custom attention
    mask support. Please set --attention-backend flashinfer when using --enable-mis.`

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-Reranker-8B --enable-mis --attention-backend fa3
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-Reranker-8B --enable-mis --attention-backend flashinfer
    ```
    """
    launch = ctx.launch
    mis = _args.flag_on(launch, "enable_mis")
    if mis is None:
        return
    for phase, (name, use) in zip(("prefill", "decode"), _args.attention_backends(launch)):
        if name is None or name == "flashinfer" or use is None:
            continue
        yield Violation(
            _args.use_location(launch, use),
            "Multi-item scoring requires flashinfer attention backend for custom attention mask support: "
            f"the {phase} attention backend is `{name}`",
            related=(_args.related_use(launch, mis, "multi-item scoring is enabled here"),),
        )
        return
