from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL306", name="dcp-with-hicache", severity=Severity.ERROR, whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """Hierarchical cache with decode context parallelism, in one of the combinations sglang does
    not implement.

    ## What it does
    With `--enable-hierarchical-cache` (`--enable-hicache`) and `--dcp-size` > 1, reports a
    speculative algorithm other than DSPARK, `--enable-lmcache`, `--enable-hisparse`, and a
    storage backend with `--hicache-host-memory-mode buffer_only`.

    ## Why is this bad?
    sglang raises `NotImplementedError` while resolving the arguments, for example
    `HiCache with --dcp-size > 1 only supports DSPARK speculative decoding; ...`.

    ## Example
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 8 --enable-hicache --speculative-algorithm EAGLE
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --dcp-size 8 --enable-hicache
    ```
    """
    launch = ctx.launch
    n, dcp_use = _args.dcp(launch)
    hicache = _args.flag_on(launch, "enable_hierarchical_cache")
    if n <= 1 or hicache is None:
        return
    where = _args.use_location(launch, hicache)
    spec = _args.explicit(launch, "speculative_algorithm")
    if spec is not None and (spec.value or "").upper() != "DSPARK":
        yield Violation(
            where,
            f"HiCache with --dcp-size > 1 only supports DSPARK speculative decoding; got `{spec.value}`",
            related=(_args.related_use(launch, spec, "the speculative algorithm is chosen here"),),
        )
    for dest, what in (("enable_lmcache", "--enable-lmcache"), ("enable_hisparse", "--enable-hisparse")):
        other = _args.flag_on(launch, dest)
        if other is not None:
            yield Violation(
                where,
                f"HiCache with --dcp-size > 1 does not support {what}",
                related=(_args.related_use(launch, other, f"{what} is set here"),),
            )
    storage = _args.explicit(launch, "hicache_storage_backend")
    mode = _args.explicit(launch, "hicache_host_memory_mode")
    if storage is not None and mode is not None and mode.value == "buffer_only":
        yield Violation(
            where,
            "HiCache with --dcp-size > 1 does not support a storage backend with --hicache-host-memory-mode buffer_only",
            related=(_args.related_use(launch, mode, "the buffer-only host memory mode is chosen here"),),
        )
