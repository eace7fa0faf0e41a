from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Applicability, Fix, Severity
from kimi_lsp.knowledge.schema import Flag
from kimi_lsp.launch import ArgProblemKind, Origin
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule


@rule(code="KL205", name="config-key-underscore", severity=Severity.ERROR, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A `--config` YAML key written with underscores (`tp_size`).

    ## What it does
    Finds keys of an sglang `--config` YAML file that contain `_` and that argparse then rejects.
    sglang normalises the key only to look it up, and passes it on as `--{key}` exactly as
    written, so `tp_size: 8` becomes `--tp_size 8`. TOML launch profiles (kimi-lsp's own format)
    accept underscores and are not reported.

    ## Why is this bad?
    The launch fails with `error: unrecognized arguments: --tp_size 8`, or for a boolean key
    (`disable_radix_cache: true`) with `unrecognized arguments: --disable_radix_cache`. The
    underscore spelling looks right because it is the field name in `ServerArgs`.

    ## Example
    ```yaml
    model-path: Qwen/Qwen3-8B
    tp_size: 2
    ```

    Use instead:
    ```yaml
    model-path: Qwen/Qwen3-8B
    tp-size: 2
    ```

    ## Fix safety
    Rewriting the key with dashes is safe when the dashed key names exactly one flag; otherwise
    there is no fix.
    """
    launch = ctx.launch
    if not _args.is_yaml_config(launch):
        return
    seen: set[int] = set()
    for prob in launch.problems:
        entry = prob.entry
        if prob.kind not in (ArgProblemKind.UNKNOWN, ArgProblemKind.AMBIGUOUS) or prob.origin is not Origin.CONFIG or entry is None:
            continue
        key = entry.key.value
        if prob.token.span != entry.key.span or "_" not in key or key.startswith("-") or id(entry) in seen:
            continue
        seen.add(id(entry))
        dashed = key.replace("_", "-")
        target = launch.schema.match("--" + dashed)
        fixes: tuple[Fix, ...] = ()
        if isinstance(target, Flag):
            fix = _args.key_rename_fix(ctx, entry, dashed, f"Write the key as `{dashed}`", Applicability.SAFE)
            fixes = (fix,) if fix is not None else ()
            tail = ""
        elif isinstance(target, tuple):
            tail = f"; `{dashed}` would be ambiguous too"
        else:
            guess = launch.schema.closest("--" + dashed)
            tail = f"; `{dashed}` is not an sglang flag either" + (f" (did you mean `{guess[2:]}`?)" if guess else "")
        yield Violation(
            _args.problem_location(launch, prob),
            f"`--config` key `{key}` is written with underscores: sglang passes it as `--{key}`, "
            f"which argparse rejects{tail}",
            fixes=fixes,
        )
