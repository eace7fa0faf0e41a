from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Location, Related, Severity
from kimi_lsp.rules import _args, _kimi
from kimi_lsp.rules._base import LaunchContext, Violation, rule

ENV = "SGLANG_RAGGED_VERIFY_MODE"
_MODES = ("static", "cap-accept", "compact")


@rule(code="KL321", name="k3-dcp-dspark-ragged-verify", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """Kimi-K3 with decode context parallelism and DSPARK speculative decoding, with
    `SGLANG_RAGGED_VERIFY_MODE` set to anything but `static`.

    ## What it does
    For `KimiK3ForConditionalGeneration` with `--dcp-size` > 1 and `--speculative-algorithm DSPARK`
    (sglang's Kimi-K3 override compares the exact upper-case name), reads
    `SGLANG_RAGGED_VERIFY_MODE` from the launch's environment (shell prefix, `export`, Dockerfile
    `ENV`, Kubernetes `env`, `[sglang.env]`). Only `static` (the default) is validated under DCP.

    ## Why is this bad?
    sglang raises `ValueError: Kimi-K3 DCP + DSPARK currently requires
    SGLANG_RAGGED_VERIFY_MODE=static; compact/cap-accept are not validated under DCP (got
    'compact').` (or `invalid SGLANG_RAGGED_VERIFY_MODE='x'` for an unknown mode). The check runs
    before the flashinfer check of KL101, so it is the error a launch with both problems shows
    first.

    ## Example
    ```bash
    # requirements.txt: flashinfer-python==0.7.2
    SGLANG_RAGGED_VERIFY_MODE=compact python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --tp-size 8 --dcp-size 8 --speculative-algorithm DSPARK
    ```

    Use instead:
    ```bash
    # requirements.txt: flashinfer-python==0.7.2
    SGLANG_RAGGED_VERIFY_MODE=static python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --tp-size 8 --dcp-size 8 --speculative-algorithm DSPARK
    ```
    """
    launch = ctx.launch
    k3 = _kimi.k3_dcp(ctx)
    spec = _args.explicit(launch, "speculative_algorithm")
    if k3 is None or spec is None or spec.value != "DSPARK":
        return
    var = launch.env.get(ENV)
    if var is None or var.value is None:
        return
    mode = var.value.value
    if mode == "static":
        return
    if mode in _MODES:
        msg = (
            f"Kimi-K3 DCP + DSPARK currently requires {ENV}=static; compact/cap-accept are not validated "
            f"under DCP (got {mode!r})"
        )
    else:
        msg = f"invalid {ENV}={mode!r}; expected one of 'static', 'cap-accept', 'compact'"
    yield Violation(
        _args.use_location(launch, spec),
        msg,
        related=(Related(Location(launch.command.path, var.value.span), f"{ENV} is set here"),),
    )
