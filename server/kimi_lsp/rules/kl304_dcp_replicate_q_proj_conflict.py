from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL304", name="dcp-replicate-q-proj-conflict", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """`--dcp-replicate-q-proj` without decode context parallelism, or with the `ag_rs`
    communication backend.

    ## What it does
    Reports `--dcp-replicate-q-proj` when `--dcp-size` is 1 (or unset), and when
    `--dcp-comm-backend ag_rs` is chosen explicitly: replicating the Q projection only applies to
    the all-to-all backends.

    ## Why is this bad?
    sglang refuses the launch: `ValueError: --dcp-replicate-q-proj requires --dcp-size > 1.` or
    `--dcp-replicate-q-proj only applies to the a2a/fi_a2a DCP communication backend (...); got
    --dcp-comm-backend=ag_rs.`

    ## Example
    ```bash
    # requirements.txt: flashinfer-python==0.7.2
    python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --tp-size 8 --dcp-size 8 --dcp-comm-backend ag_rs --dcp-replicate-q-proj
    ```

    Use instead:
    ```bash
    # requirements.txt: flashinfer-python==0.7.2
    python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --tp-size 8 --dcp-size 8 --dcp-comm-backend a2a --dcp-replicate-q-proj
    ```
    """
    launch = ctx.launch
    use = _args.flag_on(launch, "dcp_replicate_q_proj")
    if use is None:
        return
    n, dcp_use = _args.dcp(launch)
    if n < 1:
        return  # KL301
    where = _args.use_location(launch, use)
    if n == 1:
        yield Violation(where, "--dcp-replicate-q-proj requires --dcp-size > 1")
        return
    comm = _args.explicit(launch, "dcp_comm_backend")
    if comm is not None and comm.value == "ag_rs":
        yield Violation(
            where,
            "--dcp-replicate-q-proj only applies to the a2a/fi_a2a DCP communication backend; got --dcp-comm-backend=ag_rs",
            related=(_args.related_use(launch, comm, "the all-gather/reduce-scatter backend is chosen here"),),
        )
    elif comm is None and _args.default(launch.schema, "dcp_comm_backend") == "ag_rs":
        # 0.5.17-0.5.19 default the backend to ag_rs in the schema itself (later ones resolve it)
        yield Violation(
            where,
            "--dcp-replicate-q-proj only applies to the a2a/fi_a2a DCP communication backend; got --dcp-comm-backend=ag_rs"
            " (this release's default: set `--dcp-comm-backend a2a`)",
        )
