from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePath

from kimi_lsp.diagnostics import Location, Severity
from kimi_lsp.launch import config_path_token, resolve_config_path
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule
from kimi_lsp.surfaces.model import Surface

# Launches that run from the checkout: their relative paths point into the project. Images and
# clusters (Dockerfile, Kubernetes, compose) mount or copy files that need not exist here.
_CHECKOUT_SURFACES = (Surface.SHELL, Surface.CI_YAML)


@rule(code="KL213", name="config-file-not-found", severity=Severity.ERROR)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A `--config` path, relative to the launch script or the project, that does not exist.

    ## What it does
    For launches written in shell scripts and CI steps (which run from the checkout), looks for
    the `--config` file next to the launch file and at the project root. Absolute paths and
    launches inside images or clusters (Dockerfile, Kubernetes, compose), whose files are copied or
    mounted elsewhere, are not checked. A diffusion launch's `--config` (`.json` too) is looked for
    the same way.

    ## Why is this bad?
    sglang fails at once with `ValueError: Config file not found: conf/k3.yaml`, usually from a
    renamed or misspelt file; and nothing in the config can be checked.

    ## Example
    ```bash
    python -m sglang.launch_server --config conf/missing-k3.yaml
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B
    ```
    """
    launch = ctx.launch
    cmd = launch.command
    if not (_args.merges_config(launch) or launch.diffusion) or cmd.surface not in _CHECKOUT_SURFACES:
        return
    path_tok, flags = config_path_token(cmd)
    if path_tok is None or not path_tok.exact or len(flags) > 1:
        return
    value = path_tok.value
    if "$" in value or "`" in value or value.startswith(("~", "/")) or PurePath(value).is_absolute():
        return
    if launch.diffusion:
        if not value.endswith((".json", ".yaml", ".yml")):
            return  # KL212: the diffusion server's load_config_file checks the suffix first
    elif PurePath(value).suffix.lower() not in (".yaml", ".yml"):
        return  # KL212: sglang checks the suffix first
    if resolve_config_path(value, cmd, ctx.workspace.root, ctx.workspace.exists) is not None:
        return
    yield Violation(Location(cmd.path, flags[0].span.cover(path_tok.span)), f"Config file not found: {value}")
