from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Applicability, Edit, Fix, Severity
from kimi_lsp.launch import ArgUse, Origin
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule
from kimi_lsp.surfaces.model import Entry, Surface
from kimi_lsp.text import Span

# surfaces where one shell word may be rewritten as two
_SPLITTABLE = (Surface.SHELL, Surface.CI_YAML, Surface.DOCKERFILE)


@rule(code="KL211", name="config-flag-ignored", severity=Severity.ERROR, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A `--config` that sglang parses but never reads: `--config=PATH`, an abbreviation such as
    `--conf PATH`, or `--config` on an entry point that ignores it.

    ## What it does
    sglang merges the config file only when the exact word `--config` is on the command line
    (`"--config" in argv`). argparse still accepts `--config=x.yaml` and any unique prefix
    (`--conf x.yaml`) into an unused field, and the benchmark entry points
    (`sglang.bench_one_batch_server`, `sglang.compile_deep_gemm`, ...) register `--config`
    without ever reading it. A `config:` key inside a config file is ignored the same way.

    ## Why is this bad?
    No error and no warning: the server starts with none of the file's settings (no DCP, the
    default backend, one GPU), which shows up much later as wrong performance or a
    wrong-answer model.

    ## Example
    ```bash
    # k3.yaml: model-path: moonshotai/Kimi-K3
    python -m sglang.launch_server --config=k3.yaml
    ```

    Use instead:
    ```bash
    # k3.yaml: model-path: moonshotai/Kimi-K3
    python -m sglang.launch_server --config k3.yaml
    ```

    ## Fix safety
    Writing `--config PATH` as two words (or the abbreviation in full) on a shell command line is
    safe; in exec-form lists the fix is not offered.
    """
    launch = ctx.launch
    cmd = launch.command
    for use in launch.uses:
        if use.flag.dest != "config":
            continue
        where = _args.use_location(launch, use)
        path = use.value or ""
        if use.origin is Origin.CONFIG:
            yield Violation(where, f"A `config` key inside a `--config` file is ignored (`{path}` is never read)")
            continue
        if cmd.entry is Entry.NO_CONFIG:
            yield Violation(
                where,
                f"`{cmd.program.value}` registers `--config` but never reads it: `{path}` is silently ignored",
            )
            continue
        if cmd.entry not in _args.MERGING_ENTRIES:
            continue
        if use.option.value == "--config" and not use.inline:
            continue  # a second `--config PATH`: KL214
        written = f"{use.option.value}={path}" if use.inline else f"{use.option.value} {path}"
        fix = _fix(ctx, use)
        yield Violation(
            where,
            f"`{written}` is silently ignored: sglang merges a config file only for the exact word "
            f"`--config` followed by the path",
            fixes=(fix,) if fix is not None else (),
        )


def _fix(ctx: LaunchContext, use: ArgUse) -> Fix | None:
    launch = ctx.launch
    text = ctx.workspace.text(launch.command.path)
    if text is None or not use.option.exact or not use.values:
        return None
    if not use.inline:
        return _args.replace_token(ctx, use.option, Origin.CLI, "--config", "Write `--config` in full", Applicability.SAFE)
    if launch.command.surface not in _SPLITTABLE:
        return None
    span = Span(use.option.span.start, use.values[-1].span.end)
    raw = text[span.start : span.end]
    value = use.values[-1].value
    if raw != f"{use.option.value}={value}":
        return None  # quoted or escaped: leave it
    return Fix(
        "Write `--config PATH` as two words",
        (Edit(launch.command.path, span, f"--config {value}"),),
        Applicability.SAFE,
    )
