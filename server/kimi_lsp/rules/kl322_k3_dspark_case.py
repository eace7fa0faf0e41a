from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Applicability, Severity
from kimi_lsp.rules import _args, _kimi
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule


@rule(code="KL322", name="k3-dspark-case", severity=Severity.WARNING, fix=FixAvailability.SOMETIMES, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """Kimi-K3 with `--speculative-algorithm dspark` spelt in other than upper case.

    ## What it does
    sglang upper-cases the speculative algorithm only after the Kimi-K3 override has compared it
    with `"DSPARK"`, so `dspark` or `DSpark` runs DSPARK without the Kimi-K3 specific settings
    (decode-mode speculative attention under DCP, the SM100 backend defaults, the ragged-verify
    check).

    ## Why is this bad?
    The launch starts, but not with the configuration the Kimi-K3 recipe expects; on Blackwell the
    verify step may run on a backend that cannot serve it.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --tp-size 8 --speculative-algorithm dspark
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --tp-size 8 --speculative-algorithm DSPARK
    ```

    ## Fix safety
    Upper-casing turns the Kimi-K3 DSPARK settings on, which changes how the model is served:
    unsafe.
    """
    launch = ctx.launch
    spec = _args.explicit(launch, "speculative_algorithm")
    if spec is None or not spec.values or (spec.value or "").upper() != "DSPARK" or spec.value == "DSPARK":
        return
    if not _kimi.model_facts(ctx).is_k3:
        return
    fix = _args.replace_token(ctx, spec.values[0], spec.origin, "DSPARK", "Write `DSPARK` in upper case", Applicability.UNSAFE)
    yield Violation(
        _args.use_location(launch, spec),
        f"Kimi-K3's override compares `DSPARK` case-sensitively: `{spec.value}` skips its DSPARK settings",
        fixes=(fix,) if fix is not None else (),
    )
