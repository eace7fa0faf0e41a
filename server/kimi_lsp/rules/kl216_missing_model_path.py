from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Location, Related, Severity
from kimi_lsp.launch import Origin
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule
from kimi_lsp.surfaces.model import Entry, Surface

# what `sglang serve`'s dispatcher looks for in argv (cli/utils.py)
_SERVE_MODEL_WORDS = ("--model-path", "--model")


@rule(code="KL216", name="missing-model-path", severity=Severity.ERROR)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A launch command without a model path, or `sglang serve` with the model path only in its
    `--config` file.

    ## What it does
    After merging the `--config` file, checks that `--model-path` (or `--model`) is set on
    `python -m sglang.launch_server` and the benchmark entry points. `sglang serve` looks for the
    model on its own command line before any merging (a first bare word, `--model-path` or
    `--model`), so a `model-path:` in its config file does not count. A standalone config file is
    not checked: the command line that uses it may pass the model; neither is a Dockerfile
    `ENTRYPOINT`, to which `docker run` appends the arguments.

    ## Why is this bad?
    argparse exits with `the following arguments are required: --model-path/--model`;
    `sglang serve --config k3.yaml` fails with
    `Error: --model-path is required. Please provide the path to the model.` even though
    `k3.yaml` sets `model-path`.

    ## Example
    ```bash
    python -m sglang.launch_server --tp-size 8 --port 30000
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-size 8 --port 30000
    ```
    """
    launch = ctx.launch
    cmd = launch.command
    if cmd.entry is Entry.CONFIG_FILE or not _args.argv_is_known(launch) or _args.fatal_parse(launch):
        return
    if launch.is_set("help"):
        return  # `--help` prints the options and exits before anything is required
    if _open_entrypoint(ctx):
        return  # `docker run IMAGE --model-path ...` appends the rest
    where = Location(cmd.path, cmd.program.span)
    if cmd.entry is Entry.SERVE:
        if launch.model_path is not None or any(
            t.value in _SERVE_MODEL_WORDS or t.value.startswith(tuple(w + "=" for w in _SERVE_MODEL_WORDS))
            for t in cmd.argv
        ):
            return
        in_config = launch.last("model_path")
        related: tuple[Related, ...] = ()
        tail = ""
        if in_config is not None and in_config.origin is Origin.CONFIG:
            tail = " (`sglang serve` looks for it on its command line only, not in the `--config` file)"
            related = (_args.related_use(launch, in_config, "the model path in the config file does not count"),)
        yield Violation(
            where,
            f"Error: --model-path is required. Please provide the path to the model{tail}",
            related=related,
        )
        return
    if launch.last("model_path") is not None:
        return
    if launch.config_token is not None and launch.config is None:
        return  # the config file could not be read: it may hold the model path
    if cmd.entry is Entry.ENGINE:
        yield Violation(where, f"`{cmd.program.value}(...)` without `model_path`: sglang raises `TypeError: Missing required argument 'model_path'`")
        return
    yield Violation(where, "the following arguments are required: --model-path/--model")


def _open_entrypoint(ctx: LaunchContext) -> bool:
    """A Dockerfile ENTRYPOINT: whoever runs the image passes the remaining arguments."""
    cmd = ctx.launch.command
    if cmd.surface is not Surface.DOCKERFILE:
        return False
    text = ctx.source.text
    start = text.rfind("\n", 0, cmd.span.start) + 1
    return text[start : cmd.span.start + 1].lstrip().upper().startswith("ENTRYPOINT")
