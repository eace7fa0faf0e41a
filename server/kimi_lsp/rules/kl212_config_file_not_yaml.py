from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePath

from kimi_lsp.diagnostics import Applicability, Fix, Location, Severity
from kimi_lsp.launch import config_path_token
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule


@rule(code="KL212", name="config-file-not-yaml", severity=Severity.ERROR, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A `--config` file whose name does not end in `.yaml` or `.yml`.

    ## What it does
    sglang checks the suffix of the `--config` path before anything else (case-insensitively) and
    accepts only `.yaml` and `.yml`. A TOML launch profile, a JSON file or a file without a suffix
    is refused even when its content would parse. The diffusion server that `sglang serve` hands
    a diffusion model to reads its `--config` itself: `.json`, `.yaml` or `.yml` (case-sensitive).

    ## Why is this bad?
    The launch fails with `ValueError: Config file must be YAML format, got: .toml`. kimi-lsp's
    TOML launch profiles are not sglang configs: convert them with `kimi-lsp export --to yaml`.

    ## Example
    ```bash
    python -m sglang.launch_server --config profiles/k3.toml
    ```

    Use instead:
    ```bash
    # k3.yaml: model-path: moonshotai/Kimi-K3
    kimi-lsp export --to yaml profiles/k3.toml > k3.yaml
    python -m sglang.launch_server --config k3.yaml
    ```

    ## Fix safety
    The conversion command is shown, never run.
    """
    launch = ctx.launch
    cmd = launch.command
    if not _args.merges_config(launch) and not launch.diffusion:
        return
    path_tok, flags = config_path_token(cmd)
    if path_tok is None or not path_tok.exact or "$" in path_tok.value or len(flags) > 1:
        return
    suffix = PurePath(path_tok.value).suffix
    if launch.diffusion:
        # the diffusion server's ServerArgs.load_config_file (0.5.5 on): `.json`, `.yaml` or
        # `.yml` (str.endswith, so case-sensitive), else ValueError at start-up
        if path_tok.value.endswith((".json", ".yaml", ".yml")):
            return
        yield Violation(Location(cmd.path, flags[0].span.cover(path_tok.span)),
                        f"Unsupported config file format: {path_tok.value} (sglang's diffusion server reads a"
                        " `--config` file only when its name ends in `.json`, `.yaml` or `.yml`)")
        return
    if suffix.lower() in (".yaml", ".yml"):
        return
    fixes: tuple[Fix, ...] = ()
    extra = ""
    if suffix.lower() == ".toml":
        fixes = (Fix(f"Convert it with `kimi-lsp export --to yaml {path_tok.value}`", (), Applicability.DISPLAY_ONLY),)
        extra = " (a kimi-lsp TOML launch profile must be exported to YAML first)"
    yield Violation(
        Location(cmd.path, flags[0].span.cover(path_tok.span)),
        f"Config file must be YAML format, got: {suffix}{extra}",
        fixes=fixes,
    )
