"""What the stages ask of the host. Stages see only these protocols, so CPU tests can hand them
fakes; the real implementations live in static.py (stdlib) and adapters.py (torch, flashinfer)."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from kimi_lsp.verify.model import Comparison, DeviceInfo, Tolerance
from kimi_lsp.verify.shapes import Shapes


class PackageProbe(Protocol):
    def version(self, distribution: str) -> str | None:
        """Installed version from package metadata, without importing the package."""

    def package_dir(self, module: str) -> Path | None:
        """Where a top-level package's files are, without executing it."""


class DeviceProbe(Protocol):
    def probe(self) -> DeviceInfo:
        """The CUDA device verify runs on; raises Unavailable without torch or a device."""


class Numerics(Protocol):
    """Inputs, the pure reference, the rank merge and the comparison, on one device."""

    def make_case(self, shapes: Shapes, q_len: int, seed: int = 0) -> Any: ...

    def reference_rank(self, case: Any, rank: int) -> Any: ...

    def reference_global(self, case: Any) -> Any: ...

    def merge(self, parts: Sequence[Any]) -> Any: ...

    def compare(self, actual: Any, expected: Any, tol: Tolerance) -> Comparison: ...

    def kv_bytes(self, case: Any, rank: int) -> int:
        """KV bytes one rank's decode reads, for the bandwidth estimate."""


class KernelAdapter(Protocol):
    def signature(self) -> Sequence[str]:
        """sglang's runtime probe: import flashinfer.decode's function and list its parameters.
        Raises what that import / inspect.signature raise; Unavailable if flashinfer cannot be
        imported on this host at all (no torch)."""

    def decode(self, case: Any, rank: int, overrides: Mapping[str, object] | None = None) -> Any:
        """sglang's DCP decode call for one rank, with ``overrides`` replacing its kwargs."""

    def cute_dsl_arch_supported(self, capability: tuple[int, int]) -> bool | None:
        """flashinfer's own is_cute_dsl_arch_supported, or None when it cannot be asked."""


class Timer(Protocol):
    def wall(self, fn: Callable[[], Any]) -> tuple[Any, float]:
        """(result, seconds) for one call, device work included."""

    def per_call_us(self, fn: Callable[[], Any], warmup: int, iters: int) -> list[float]:
        """Microseconds per call for ``iters`` calls after ``warmup`` untimed ones."""


NumericsFactory = Callable[[str], Numerics]  # device ("cuda", "cpu") -> Numerics
Which = Callable[[str], "str | None"]
Environ = Mapping[str, str]
