from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL313", name="served-model-name-colon", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A `--served-model-name` containing a colon.

    ## What it does
    Reports a served model name with `:` in it (sglang uses the colon to address LoRA adapters as
    `model:adapter`).

    ## Why is this bad?
    `AssertionError: served_model_name cannot contain a colon (':') character. ...` at start-up.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --served-model-name qwen3:8b
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --served-model-name qwen3-8b
    ```
    """
    launch = ctx.launch
    use = _args.explicit(launch, "served_model_name")
    if use is None or ":" not in (use.value or ""):
        return
    yield Violation(
        _args.use_location(launch, use),
        f"served_model_name cannot contain a colon (':') character: `{use.value}`",
    )
