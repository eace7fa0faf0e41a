from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL317", name="grpc-port-equals-port", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """The native gRPC server on the same port as the HTTP server.

    ## What it does
    Compares `--grpc-port` with `--port` (default 30000). The legacy SMG gRPC mode
    (`--smg-grpc-mode`, `--grpc-mode`), which replaces the HTTP server, is exempt.

    ## Why is this bad?
    `ValueError: --grpc-port (30000) must differ from --port (30000)`.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --grpc-port 30000
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --grpc-port 31000
    ```
    """
    launch = ctx.launch
    use = _args.explicit(launch, "grpc_port")
    if use is None:
        return
    if _args.flag_on(launch, "smg_grpc_mode") or _args.flag_on(launch, "grpc_mode"):
        return
    grpc = _args.parse_int(use.value)
    port = _args.int_value(launch, "port")
    if grpc is None or port is None or grpc != port:
        return
    port_use = launch.last("port")
    related = (_args.related_use(launch, port_use, "the HTTP port"),) if port_use is not None else ()
    yield Violation(
        _args.use_location(launch, use),
        f"--grpc-port ({grpc}) must differ from --port ({port})",
        related=related,
    )
