from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Applicability, Fix, Severity
from kimi_lsp.launch import ArgUse
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule
from kimi_lsp.surfaces.model import Entry

# sglang sets up logging with `logging.basicConfig(level=getattr(logging, log_level.upper()))`
# (server_args.prepare_server_args and utils.configure_logger, 0.5.21-0.5.23): the upper-cased
# value must name one of the logging module's level constants. Its other upper-case attribute,
# BASIC_FORMAT, is a format string that basicConfig rejects as a level.
_LEVELS = ("CRITICAL", "FATAL", "ERROR", "WARN", "WARNING", "INFO", "DEBUG", "NOTSET")
# uvicorn's LOG_LEVELS (0.51-0.54; it lower-cases first): sglang's HTTP server passes it
# `--log-level-http or --log-level`, and uvicorn.Config looks the name up when it is built
_UVICORN = ("critical", "error", "warning", "info", "debug", "trace")
# logging's aliases of a uvicorn name: the same level (WARN is WARNING, FATAL is CRITICAL)
_SAME_LEVEL = {"warn": "warning", "fatal": "critical"}
# Level names of other tools that people carry over; the nearest logging level, as a suggestion
_NEAREST = {"VERBOSE": "debug", "TRACE": "debug", "WARNINGS": "warning", "ERR": "error", "FAILURE": "error"}


@rule(code="KL330", name="invalid-log-level", severity=Severity.ERROR, fix=FixAvailability.SOMETIMES, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A `--log-level` that Python's logging module (or the HTTP server's uvicorn) does not know.

    ## What it does
    Checks that `--log-level`, upper-cased, is one of the logging module's levels: `debug`,
    `info`, `warning` (or `warn`), `error`, `critical` (or `fatal`), `notset`, in any case.
    argparse accepts any string here; sglang looks the level up only when it sets up logging.
    For a server launch it also checks the level the HTTP server gets (`--log-level-http`, else
    `--log-level`) against uvicorn's names: `critical`, `error`, `warning`, `info`, `debug`,
    `trace`, so `warn`, `fatal` and `notset` only work with `--log-level-http` set (not checked
    with `--enable-http2` or a gRPC mode, which use other servers).

    ## Why is this bad?
    sglang calls `getattr(logging, log_level.upper())` right after parsing, before anything
    else: `--log-level verbose` stops the launch with
    `AttributeError: module 'logging' has no attribute 'VERBOSE'`. `--log-level warn` passes
    that, then the HTTP server fails to start with uvicorn's `KeyError: 'warn'`.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --log-level verbose
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --log-level debug
    ```

    ## Fix safety
    `warn` -> `warning` and `fatal` -> `critical` name the same level: safe. Replacing a level
    borrowed from another tool (`verbose`, `trace`) with the nearest logging level changes how
    much the server logs: unsafe.
    """
    launch = ctx.launch
    use = _literal(launch.last("log_level"))
    if use is not None and use.values[0].value.upper() not in _LEVELS:
        yield _not_a_logging_level(ctx, use)
        return
    yield from _http_level(ctx, use)


def _literal(use: ArgUse | None) -> ArgUse | None:
    if use is None or not use.values or not _args.is_literal(use.values[0], use.origin):
        return None
    return use


def _http_level(ctx: LaunchContext, log_level: ArgUse | None) -> Iterator[Violation]:
    launch = ctx.launch
    if launch.command.entry not in (Entry.LAUNCH_SERVER, Entry.SERVE, Entry.CONFIG_FILE):
        return  # no HTTP server
    if any(_args.flag_on(launch, d) for d in ("enable_http2", "smg_grpc_mode", "grpc_mode")):
        return  # granian or a gRPC server: not uvicorn's table
    http = launch.last("log_level_http")
    use = _literal(http) if http is not None and http.value else log_level
    if use is None or use.values[0].value.lower() in _UVICORN:
        return
    tok = use.values[0]
    flag = "--log-level-http" if use is not log_level else "--log-level"
    unset = "" if use is not log_level else ", which it uses while --log-level-http is unset"
    same = _SAME_LEVEL.get(tok.value.lower())
    fix = (
        _args.replace_token(ctx, tok, use.origin, same, f"Use `{flag} {same}` (the same level)", Applicability.SAFE)
        if same is not None
        else None
    )
    yield Violation(
        _args.value_location(launch, use, tok),
        f"`{flag} {tok.value}` is not a uvicorn log level: sglang's HTTP server{unset} fails to start with "
        f"`KeyError: {tok.value.lower()!r}` (use critical, error, warning, info, debug or trace)",
        fixes=(fix,) if fix is not None else (),
    )


def _not_a_logging_level(ctx: LaunchContext, use: ArgUse) -> Violation:
    launch = ctx.launch
    tok = use.values[0]
    level = tok.value.upper()
    what = (
        f"module 'logging' has no attribute {level!r}"
        if level != "BASIC_FORMAT"
        else "logging.BASIC_FORMAT is a format string, not a level"
    )
    nearest = _NEAREST.get(level)
    fixes: tuple[Fix, ...] = ()
    if nearest is not None:
        fix = _args.replace_token(ctx, tok, use.origin, nearest, f"Use `--log-level {nearest}`")
        fixes = (fix,) if fix is not None else ()
    return Violation(
        _args.value_location(launch, use, tok),
        f"`--log-level {tok.value}` is not a logging level: sglang's logging set-up fails with "
        f"`{what}` (use debug, info, warning, error or critical)",
        fixes=fixes,
    )
