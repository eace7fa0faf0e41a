from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Applicability, Fix, Severity
from kimi_lsp.launch import ArgProblemKind
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule


@rule(code="KL206", name="config-key-refused", severity=Severity.ERROR, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A `--config` key whose flag sglang's config merger refuses.

    ## What it does
    sglang's `--config` merger supports only plain store and store-true flags. It raises for a key
    whose flag uses another argparse action: the `--x/--no-x` flags (`BooleanOptionalAction`, such
    as `dcp-replicate-q-proj` and `enable-tf32-matmul`), the deprecated `disable-cuda-graph` and
    `enable-dp-attention`, and `lora-paths`. The set differs between releases; the pinned
    release's own list is used.

    ## Why is this bad?
    The launch fails before parsing anything else:
    `ValueError: Unsupported config option 'dcp_replicate_q_proj' with action 'BooleanOptionalAction'`.

    ## Example
    ```yaml
    model-path: moonshotai/Kimi-K3
    dcp-replicate-q-proj: true
    ```

    Use instead:
    ```yaml
    model-path: moonshotai/Kimi-K3
    # on the command line: sglang serve --config k3.yaml --dcp-replicate-q-proj
    ```

    ## Fix safety
    The suggestion to move the flag to the command line (or to use the replacement of a deprecated
    flag) is shown but never applied: the command line lives in another file.
    """
    launch = ctx.launch
    for prob in launch.problems:
        if prob.kind is not ArgProblemKind.CONFIG_REFUSED or prob.entry is None or prob.flag is None:
            continue
        flag = prob.flag
        key = prob.entry.key.value
        if flag.deprecated:
            hint = f"Use `{flag.deprecated}` instead"
        elif flag.action == "boolean_optional":
            option = next((o for o in flag.options if o.replace("-", "_").lstrip("_") == key.replace("-", "_")), flag.options[0])
            hint = f"Pass `{option}` on the command line instead"
        else:
            hint = f"Pass `{flag.options[0]}` on the command line instead"
        yield Violation(
            _args.problem_location(launch, prob),
            prob.message,
            fixes=(Fix(hint, (), Applicability.DISPLAY_ONLY),),
        )
