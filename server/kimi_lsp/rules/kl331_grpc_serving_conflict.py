from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.launch import ArgUse, ResolvedLaunch
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule

# Options that the native gRPC server (``--grpc-port``) does not wire into, with sglang's words.
_NATIVE_GRPC_CONFLICTS = (
    ("use_ray", "--grpc-port is not supported with --use-ray: the Ray serve launch path does not start "
                "the native gRPC server"),
    ("encoder_only", "--grpc-port is not supported with --encoder-only: encoder disaggregation uses its own server"),
)


@rule(code="KL331", name="grpc-serving-conflict", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """gRPC and sidecar settings that sglang's serving checks refuse at start-up.

    ## What it does
    Replays the checks sglang runs on its gRPC options (from 0.5.16, where `--grpc-port` and
    `--sidecar` appeared; `--grpc-response-timeout-secs` from 0.5.21):

    - `--grpc-response-timeout-secs` must be positive;
    - `--grpc-port` (or `SGLANG_GRPC_PORT` set on the launch) must be between 1 and 65535;
    - `--sidecar` must not be empty, needs the native gRPC server (`--grpc-port` or
      `SGLANG_GRPC_PORT`), and cannot be combined with the legacy `--smg-grpc-mode`/`--grpc-mode`;
    - the native gRPC server does not work with `--use-ray`, `--encoder-only`,
      `--tokenizer-worker-num` above 1, or `--api-key`/`--admin-api-key`.

    ## Why is this bad?
    sglang raises a `ValueError` while resolving the arguments, e.g.
    `ValueError: --sidecar requires --grpc-port or SGLANG_GRPC_PORT.`

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --sidecar my_router
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --grpc-port 31000 --sidecar my_router
    ```
    """
    launch = ctx.launch
    yield from _timeout(launch)
    port, port_known = _grpc_port(launch)
    legacy = _args.flag_on(launch, "smg_grpc_mode") or _args.flag_on(launch, "grpc_mode")
    sidecar = launch.last("sidecar")
    if sidecar is not None and sidecar.flag.takes_value and _literal(sidecar):
        value = sidecar.value or ""
        where = _args.use_location(launch, sidecar)
        if not value.strip():
            yield Violation(where, "--sidecar must not be empty")
        elif legacy is not None:
            yield Violation(
                where,
                "--sidecar requires SGLang's native gRPC server; it cannot be combined with --smg-grpc-mode/--grpc-mode",
                related=(_args.related_use(launch, legacy, "the legacy gRPC mode is turned on here"),),
            )
        elif port is None and port_known:
            yield Violation(where, "--sidecar requires --grpc-port or SGLANG_GRPC_PORT")
    if legacy is not None:
        http = _args.int_value(launch, "port")
        if port is None and http is not None and http + 10000 > 65535:  # the legacy server's own default
            yield Violation(_args.use_location(launch, legacy),
                            f"--grpc-port / SGLANG_GRPC_PORT ({http + 10000}, --port + 10000) must be between 1 and 65535")
        return
    if port is None:
        return
    use = launch.last("grpc_port")
    anchor = _args.use_location(launch, use) if use is not None else _args.launch_anchor(launch)
    number = _args.parse_int(port)
    if number is not None and not 1 <= number <= 65535:
        yield Violation(anchor, f"--grpc-port / SGLANG_GRPC_PORT ({number}) must be between 1 and 65535")
        return
    for dest, message in _NATIVE_GRPC_CONFLICTS:
        on = _args.flag_on(launch, dest)
        if on is not None:
            yield Violation(_args.use_location(launch, on), message,
                            related=(_args.related_use(launch, use, "the native gRPC server"),) if use else ())
    workers = _args.int_value(launch, "tokenizer_worker_num")
    workers_use = launch.last("tokenizer_worker_num")
    if workers is not None and workers > 1 and workers_use is not None and _literal(workers_use):
        yield Violation(_args.use_location(launch, workers_use),
                        "Native gRPC does not yet support --tokenizer-worker-num > 1")
    for dest in ("api_key", "admin_api_key"):
        key = _args.explicit(launch, dest)
        if key is not None:
            yield Violation(
                _args.use_location(launch, key),
                "--grpc-port is incompatible with --api-key/--admin-api-key: the native gRPC listener bypasses "
                "HTTP auth middleware",
            )
            break


def _literal(use: ArgUse) -> bool:
    return all(_args.is_literal(t, use.origin) for t in use.values)


def _timeout(launch: ResolvedLaunch) -> Iterator[Violation]:
    use = _args.explicit(launch, "grpc_response_timeout_secs")
    if use is None or not _literal(use):
        return
    try:
        seconds = float(use.value or "")
    except ValueError:
        return  # KL203 speaks for a value that is not a number
    if seconds <= 0:
        yield Violation(_args.use_location(launch, use), "--grpc-response-timeout-secs must be positive")


def _grpc_port(launch: ResolvedLaunch) -> tuple[str | None, bool]:
    """The gRPC port sglang ends up with (the option, else ``SGLANG_GRPC_PORT``) and whether that
    is known: a launch whose environment may hold ``SGLANG_GRPC_PORT`` unseen is not judged."""
    use = _args.explicit(launch, "grpc_port")
    if use is not None:
        return (use.value, True) if _literal(use) else (None, False)
    if _args.env_present(launch, "SGLANG_GRPC_PORT"):
        value = launch.env_value("SGLANG_GRPC_PORT")
        return (value, True) if value is not None and "$" not in value else (None, False)
    return None, _args.argv_is_known(launch)
