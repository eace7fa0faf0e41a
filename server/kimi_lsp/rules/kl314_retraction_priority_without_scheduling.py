from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL314", name="retraction-priority-without-scheduling", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """`--retraction-policy priority` without `--enable-priority-scheduling`.

    ## What it does
    Reports the priority retraction policy on a launch that does not schedule by priority, so
    requests carry no priority to retract by.

    ## Why is this bad?
    `ValueError: --retraction-policy priority requires --enable-priority-scheduling`.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --retraction-policy priority
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --retraction-policy priority --enable-priority-scheduling
    ```
    """
    launch = ctx.launch
    use = _args.explicit(launch, "retraction_policy")
    if use is None or use.value != "priority" or _args.flag_on(launch, "enable_priority_scheduling"):
        return
    yield Violation(
        _args.use_location(launch, use), "--retraction-policy priority requires --enable-priority-scheduling"
    )
