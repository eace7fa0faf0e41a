from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Location, Related, Severity
from kimi_lsp.launch import config_path_token
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL214", name="multiple-config-files", severity=Severity.ERROR)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """More than one `--config` on one command line.

    ## What it does
    Counts the words `--config` on a `sglang serve` or `python -m sglang.launch_server` command
    line. sglang merges exactly one config file and refuses a second instead of layering them.

    ## Why is this bad?
    The launch fails with `ValueError: Multiple config files specified! Only one allowed.`

    ## Example
    ```bash
    python -m sglang.launch_server --config base.yaml --config k3.yaml
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-size 8
    ```
    """
    launch = ctx.launch
    cmd = launch.command
    if not _args.merges_config(launch):
        return
    _, flags = config_path_token(cmd)
    if len(flags) < 2:
        return
    first = flags[0]
    for tok in flags[1:]:
        yield Violation(
            Location(cmd.path, tok.span),
            "Multiple config files specified! Only one allowed",
            related=(Related(Location(cmd.path, first.span), "the first `--config`"),),
        )
