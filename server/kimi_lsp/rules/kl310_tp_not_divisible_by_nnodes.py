from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL310", name="tp-not-divisible-by-nnodes", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A multi-node launch whose tensor x pipeline parallel size is not a multiple of the number
    of nodes.

    ## What it does
    Checks `(--tp-size x --pp-size) % --nnodes == 0`, as sglang's `check_server_args` does
    (elastic expert parallelism, which may scale nodes, is exempt).

    ## Why is this bad?
    `AssertionError: tp_size must be divisible by number of nodes`, on every node, after the job
    has been scheduled across all of them.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 12 --nnodes 8 --node-rank 0
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 16 --nnodes 2 --node-rank 0
    ```
    """
    launch = ctx.launch
    nnodes_use = launch.last("nnodes")
    nnodes = _args.parse_int(nnodes_use.value) if nnodes_use is not None else None
    tp = _args.int_value(launch, "tp_size")
    pp = _args.int_value(launch, "pp_size")
    if pp is None and launch.schema.exact("--pp-size") is None:
        pp = 1  # before 0.4.6.post2 (no pipeline parallelism) sglang asserts tp_size % nnodes == 0
    if nnodes_use is None or not nnodes or nnodes <= 1 or tp is None or pp is None:
        return
    elastic = _args.str_value(launch, "elastic_ep_backend")
    if elastic not in (None, "none"):
        return
    if (tp * pp) % nnodes == 0:
        return
    tp_use = launch.last("tp_size")
    related = (_args.related_use(launch, tp_use, f"tp-size {tp} x pp-size {pp} = {tp * pp}"),) if tp_use else ()
    yield Violation(
        _args.use_location(launch, nnodes_use),
        f"tp_size must be divisible by number of nodes: tp-size {tp} x pp-size {pp} = {tp * pp} is not a multiple of nnodes {nnodes}",
        related=related,
    )
