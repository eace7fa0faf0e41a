from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Location, Related, Severity
from kimi_lsp.launch import Origin, ResolvedLaunch
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule
from kimi_lsp.surfaces.model import Entry, Surface

TYPE_CHECKING = False  # (the serve table is loaded for `sglang serve` launches only)
if TYPE_CHECKING:
    from kimi_lsp.knowledge.launch_checks import ServeModel



@rule(code="KL216", name="missing-model-path", severity=Severity.ERROR, whole_launch=True)
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
    if cmd.entry is Entry.CONFIG_FILE or not _args.argv_is_known(launch):
        return
    if launch.is_set("help") and (cmd.entry is not Entry.SERVE or any(t.value in ("-h", "--help") for t in cmd.argv)):
        # `--help` prints the options and exits before anything is required; `sglang serve`
        # looks for the exact words only, and wants a model before argparse sees `--hel`
        return
    if _open_entrypoint(ctx):
        return  # `docker run IMAGE --model-path ...` appends the rest
    where = Location(cmd.path, cmd.program.span)
    if cmd.entry is Entry.SERVE:
        if launch.diffusion:
            return  # the diffusion server's own requirements
        from kimi_lsp.knowledge.launch_checks import serve_model

        serve = serve_model(launch.schema.version)
        if serve is None:
            return  # a release without `sglang serve` (KL201 says so)
        words = serve.model_options
        if launch.model_path is not None or any(
            t.value in words or t.value.startswith(tuple(w + "=" for w in words)) for t in cmd.argv
        ):
            return
        in_config = launch.last("model_path")
        related: tuple[Related, ...] = ()
        tail = ""
        if in_config is not None and in_config.origin is Origin.CONFIG:
            tail = " (`sglang serve` looks for it on its command line only, not in the `--config` file)"
            related = (_args.related_use(launch, in_config, "the model path in the config file does not count"),)
        if not tail:
            tail = _serve_tail(launch, serve)
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


def _serve_tail(launch: ResolvedLaunch, serve: ServeModel) -> str:
    """Why a model that is written down is not found: `sglang serve` of this release looks for
    fewer spellings than argparse accepts (cli/utils.py ``get_model_path``)."""
    argv = launch.command.argv
    words = " or ".join(f"`{w} MODEL`" for w in serve.model_options)
    release = f"sglang {launch.schema.version}'s `sglang serve`"
    if argv and not argv[0].value.startswith("-") and not serve.positional:
        return f" ({release} reads the model only from {words}, not from a bare first word `{argv[0].value}`)"
    use = launch.last("model_path")
    if use is not None and use.origin is Origin.CLI:
        return f" ({release} reads the model only from {words}, not from `{use.option.value}`)"
    return ""


def _open_entrypoint(ctx: LaunchContext) -> bool:
    """A Dockerfile ENTRYPOINT: whoever runs the image passes the remaining arguments."""
    cmd = ctx.launch.command
    if cmd.surface is not Surface.DOCKERFILE:
        return False
    text = ctx.source.text
    start = text.rfind("\n", 0, cmd.span.start) + 1
    return text[start : cmd.span.start + 1].lstrip().upper().startswith("ENTRYPOINT")
