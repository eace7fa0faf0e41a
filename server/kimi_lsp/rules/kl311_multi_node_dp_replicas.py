from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kimi_lsp.launch import ResolvedLaunch


@rule(code="KL311", name="multi-node-dp-replicas", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """Data-parallel replicas (`--dp-size` > 1) on a multi-node launch.

    ## What it does
    Reports `--dp-size` greater than 1 with `--nnodes` other than 1. Across nodes sglang supports
    attention data parallelism (`--attn-dp-size`), not whole-model replicas. (The deprecated
    `--enable-dp-attention` turns `--dp-size` into the attention DP size and is not reported.)
    Per release: before 0.5.22 there is no `--attn-dp-size`, and the remedy is `--enable-dp-attention`;
    before 0.4.1.post7 that is no remedy either (it sets the DP size to the TP size, which the same
    assertion refuses across nodes), and it is reported too.

    ## Why is this bad?
    `AssertionError: multi-node data-parallel replicas are not supported; use attention DP
    (--attn-dp-size) across nodes`.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 16 --dp-size 2 --nnodes 2 --node-rank 0
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 16 --attn-dp-size 2 --nnodes 2 --node-rank 0
    ```
    """
    launch = ctx.launch
    if not _args.release_at_least(launch, _DP_ATTENTION_EXEMPT):
        yield from _without_exemption(launch)
        return
    dp_use = launch.last("dp_size")
    dp = _args.parse_int(dp_use.value) if dp_use is not None else None
    nnodes = _args.int_value(launch, "nnodes")
    if dp_use is None or dp is None or dp <= 1 or nnodes in (None, 1):
        return
    if _args.flag_on(launch, "enable_dp_attention") is not None:
        return
    if launch.schema.exact("--attn-dp-size") is None:
        # before 0.5.22 there is no --attn-dp-size: attention DP is `--enable-dp-attention`,
        # and sglang's assertion says so (server_args.py / validation_hook.py)
        yield Violation(
            _args.use_location(launch, dp_use),
            "multi-node data parallel is not supported unless dp attention! (add `--enable-dp-attention`)",
        )
        return
    yield Violation(
        _args.use_location(launch, dp_use),
        "multi-node data-parallel replicas are not supported; use attention DP (--attn-dp-size) across nodes",
    )


# the first release whose assertion lets DP attention span nodes ("... unless dp attention!")
_DP_ATTENTION_EXEMPT = "0.4.1.post7"


def _without_exemption(launch: ResolvedLaunch) -> Iterator[Violation]:
    """0.4.0 to 0.4.1.post6: `assert not (self.dp_size > 1 and self.nnodes != 1), "multi-node data
    parallel is not supported"` (server_args.py `check_server_args`), and `--enable-dp-attention`
    is no way out: `__post_init__` sets `dp_size = tp_size` first."""
    nnodes = _args.int_value(launch, "nnodes")
    if nnodes in (None, 1):
        return
    dpa = _args.flag_on(launch, "enable_dp_attention")
    if dpa is not None:
        tp = _args.int_value(launch, "tp_size")
        if tp is None or tp <= 1:
            return
        yield Violation(
            _args.use_location(launch, dpa),
            f"multi-node data parallel is not supported (sglang {launch.schema.version}: `--enable-dp-attention` sets "
            f"the DP size to the TP size, {tp}; DP attention across nodes came with 0.4.1.post7)",
        )
        return
    dp_use = launch.last("dp_size")
    dp = _args.parse_int(dp_use.value) if dp_use is not None else None
    if dp_use is None or dp is None or dp <= 1:
        return
    yield Violation(_args.use_location(launch, dp_use), "multi-node data parallel is not supported")
