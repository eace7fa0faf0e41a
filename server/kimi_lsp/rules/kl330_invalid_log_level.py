from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule

# sglang sets up logging with `logging.basicConfig(level=getattr(logging, log_level.upper()))`
# (server_args.prepare_server_args and utils.configure_logger, 0.5.21-0.5.23): the upper-cased
# value must name one of the logging module's level constants. Its other upper-case attribute,
# BASIC_FORMAT, is a format string that basicConfig rejects as a level.
_LEVELS = ("CRITICAL", "FATAL", "ERROR", "WARN", "WARNING", "INFO", "DEBUG", "NOTSET")
# Level names of other tools that people carry over; the nearest logging level, as a suggestion
_NEAREST = {"VERBOSE": "debug", "TRACE": "debug", "WARNINGS": "warning", "ERR": "error", "FAILURE": "error"}


@rule(code="KL330", name="invalid-log-level", severity=Severity.ERROR, fix="sometimes")
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A `--log-level` that Python's logging module does not know.

    ## What it does
    Checks that `--log-level`, upper-cased, is one of the logging module's levels: `debug`,
    `info`, `warning` (or `warn`), `error`, `critical` (or `fatal`), `notset`, in any case.
    argparse accepts any string here; sglang looks the level up only when it sets up logging.

    ## Why is this bad?
    sglang calls `getattr(logging, log_level.upper())` right after parsing, before anything
    else: `--log-level verbose` stops the launch with
    `AttributeError: module 'logging' has no attribute 'VERBOSE'`.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --log-level verbose
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --log-level debug
    ```

    ## Fix safety
    Replacing a level borrowed from another tool (`verbose`, `trace`) with the nearest logging
    level changes how much the server logs: unsafe.
    """
    launch = ctx.launch
    if _args.fatal_parse(launch):
        return
    use = launch.last("log_level")
    if use is None or not use.values or not _args.is_literal(use.values[0], use.origin):
        return
    tok = use.values[0]
    level = tok.value.upper()
    if level in _LEVELS:
        return
    what = (
        f"module 'logging' has no attribute {level!r}"
        if level != "BASIC_FORMAT"
        else "logging.BASIC_FORMAT is a format string, not a level"
    )
    nearest = _NEAREST.get(level)
    fixes = ()
    if nearest is not None:
        fix = _args.replace_token(ctx, tok, use.origin, nearest, f"Use `--log-level {nearest}`")
        fixes = (fix,) if fix is not None else ()
    yield Violation(
        _args.value_location(launch, use, tok),
        f"`--log-level {tok.value}` is not a logging level: sglang's logging set-up fails with "
        f"`{what}` (use debug, info, warning, error or critical)",
        fixes=fixes,
    )
