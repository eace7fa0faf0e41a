from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL320", name="dflash-requirements", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """DFLASH speculative decoding without a draft model, or with pipeline parallelism.

    ## What it does
    With `--speculative-algorithm DFLASH` (any case), requires `--speculative-draft-model-path`
    and a pipeline-parallel size of 1.

    ## Why is this bad?
    `ValueError: DFLASH speculative decoding requires setting --speculative-draft-model-path.` /
    `Currently DFLASH speculative decoding only supports pp_size == 1.`

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --speculative-algorithm DFLASH --pp-size 2
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --speculative-algorithm DFLASH --speculative-draft-model-path z-lab/Qwen3-8B-DFlash
    ```
    """
    launch = ctx.launch
    use = _args.explicit(launch, "speculative_algorithm")
    if use is None or (use.value or "").upper() != "DFLASH":
        return
    where = _args.use_location(launch, use)
    if _args.explicit(launch, "speculative_draft_model_path") is None:
        yield Violation(where, "DFLASH speculative decoding requires setting --speculative-draft-model-path")
    pp = _args.int_value(launch, "pp_size")
    pp_use = launch.last("pp_size")
    if pp is not None and pp != 1 and pp_use is not None:
        yield Violation(
            where,
            f"Currently DFLASH speculative decoding only supports pp_size == 1 (pp-size is {pp})",
            related=(_args.related_use(launch, pp_use, "pipeline parallelism is set here"),),
        )
