from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Location, Related, Severity
from kimi_lsp.rules._base import LaunchContext, Violation, rule
from kimi_lsp.workspace import SourceText


@rule(code="KL217", name="duplicate-config-key", severity=Severity.WARNING)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A key written twice in a `--config` YAML file.

    ## What it does
    Reports the earlier of two identical top-level keys. sglang reads the file with
    `yaml.safe_load`, which keeps the last value without a word.

    ## Why is this bad?
    The value a reader sees first is not the one sglang uses; after a merge of two edits the file
    silently runs with the other setting.

    ## Example
    ```yaml
    model-path: Qwen/Qwen3-8B
    tp-size: 4
    tp-size: 8
    ```

    Use instead:
    ```yaml
    model-path: Qwen/Qwen3-8B
    tp-size: 8
    ```
    """
    # an srt-slurm recipe's role map carries its duplicates on the command (srtctl, not sglang's
    # merger, reads the map: the launch has no --config file)
    config = ctx.launch.config or ctx.launch.command.config
    if config is None or not config.duplicates:
        return
    src = ctx.workspace.read(config.path)
    for later, earlier in config.duplicates:
        line = f" on line {src.lines.line_of(later.span.start) + 1}" if isinstance(src, SourceText) else " later"
        yield Violation(
            Location(config.path, earlier.span),
            f"`{earlier.value}` is set again{line}: YAML keeps the last value, so this one is ignored",
            related=(Related(Location(config.path, later.span), "the value sglang uses"),),
        )
