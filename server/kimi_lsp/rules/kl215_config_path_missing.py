from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Location, Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL215", name="config-path-missing", severity=Severity.ERROR)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """`--config` as the last word of the command line, with no path after it.

    ## What it does
    Reports a `--config` that ends a `sglang serve` or `python -m sglang.launch_server` command
    line, typically left over when a variable holding the path expanded to nothing or a line
    continuation was lost.

    ## Why is this bad?
    The launch fails with `ValueError: No config file specified after --config flag!`

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --config
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B
    ```
    """
    launch = ctx.launch
    cmd = launch.command
    if not _args.merges_config(launch) or not cmd.argv:
        return
    last = cmd.argv[-1]
    if last.value != "--config":
        return
    if sum(1 for t in cmd.argv if t.value == "--config") > 1:
        return  # sglang reports the second --config first (KL214)
    yield Violation(Location(cmd.path, last.span), "No config file specified after --config flag!")
