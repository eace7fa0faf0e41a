"""Fakes for the verify probes. Torch-free, so every stage runs in CPU CI without torch.

FakeNumerics stands in for tensors with small tokens: an output "is" the reference of the rank
it claims to be, unless it is marked corrupt. With torch installed, the same fake kernels take a
``compute`` that returns real tensors (see test_reference.py).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kimi_lsp.verify.model import Comparison, DeviceInfo, Tolerance, Unavailable
from kimi_lsp.verify.shapes import DEFAULT_SEQ_LENS, ShapeOverrides, Shapes, derive_shapes
from kimi_lsp.verify.stages import Context, Options

HERE = Path(__file__).resolve().parent
FAKES = HERE / "fakes"
DATA = HERE / "data"

OLD_PARAMS = (
    "query", "kv_cache", "workspace_buffer", "qk_nope_head_dim", "kv_lora_rank", "qk_rope_head_dim",
    "block_tables", "seq_lens", "max_seq_len", "sparse_mla_top_k", "out", "bmm1_scale", "bmm2_scale",
    "sinks", "skip_softmax_threshold_scale_factor", "enable_pdl", "backend", "is_var_seq",
    "uses_shared_paged_kv_idx", "lse", "return_lse", "cute_dsl_impl", "kv_scale_format", "cum_seq_lens_q",
    "max_q_len", "multi_ctas_kv_counter_buffer",
)
NEW_PARAMS = OLD_PARAMS + ("sparse_mla_top_k_lens", "enable_dcp", "cp_world", "cp_rank", "causal_seqlens_kv_global")
MISMATCH_MESSAGE = (
    "flashinfer-cubin version (0.6.16.post4) does not match flashinfer version (0.6.17). Please install "
    "the same version of both packages. Set FLASHINFER_DISABLE_VERSION_CHECK=1 to bypass this check."
)

B200 = DeviceInfo("NVIDIA B200", (10, 0), "2.13.0", "12.9", 148, "580.1")
H200 = DeviceInfo("NVIDIA H200", (9, 0), "2.13.0", "12.9", 132, "580.1")


@dataclass
class FakePackages:
    versions: Mapping[str, str | None] = field(default_factory=lambda: {
        "flashinfer-python": "0.6.17", "flashinfer-cubin": "0.6.17", "flashinfer-jit-cache": "0.6.17+cu129",
        "nvidia-cutlass-dsl": "4.8.0", "apache-tvm-ffi": "0.1.11", "torch": "2.13.0", "sglang": "0.5.23",
    })
    flashinfer_dir: Path | None = FAKES / "new" / "flashinfer"

    def version(self, distribution: str) -> str | None:
        return self.versions.get(distribution)

    def package_dir(self, module: str) -> Path | None:
        return self.flashinfer_dir if module == "flashinfer" else None


@dataclass
class FakeDevice:
    info: DeviceInfo | None = B200
    why: str = "no CUDA device (torch 2.13.0+cpu)"

    def probe(self) -> DeviceInfo:
        if self.info is None:
            raise Unavailable(self.why)
        return self.info


@dataclass(frozen=True)
class FakeCase:
    shapes: Shapes
    q_len: int


@dataclass(frozen=True)
class FakeOut:
    rank: int | None  # None: the single-rank (global) result
    q_len: int
    corrupt: bool = False
    nan: bool = False


class FakeNumerics:
    def __init__(self, device: str = "cuda") -> None:
        self.device = device
        self.cases: list[FakeCase] = []

    def make_case(self, shapes: Shapes, q_len: int, seed: int = 0) -> FakeCase:
        case = FakeCase(shapes, q_len)
        self.cases.append(case)
        return case

    def reference_rank(self, case: FakeCase, rank: int) -> FakeOut:
        return FakeOut(rank, case.q_len)

    def reference_global(self, case: FakeCase) -> FakeOut:
        return FakeOut(None, case.q_len)

    def merge(self, parts: list[FakeOut]) -> FakeOut:
        return FakeOut(None, parts[0].q_len, corrupt=any(p.corrupt for p in parts), nan=any(p.nan for p in parts))

    def compare(self, actual: FakeOut, expected: FakeOut, tol: Tolerance) -> Comparison:
        wrong = actual.corrupt or actual.rank != expected.rank or actual.q_len != expected.q_len
        return Comparison(
            out_max_abs_err=0.5 if wrong else 0.001, lse_max_abs_err=0.0,
            out_mismatches=7 if wrong else 0, lse_mismatches=0, nans=3 if actual.nan else 0, bad_empty_rows=0,
        )

    def kv_bytes(self, case: FakeCase, rank: int) -> int:
        return 1_000_000


def fake_compute(case: FakeCase, rank: int) -> FakeOut:
    return FakeOut(rank, case.q_len)


@dataclass
class FakeKernel:
    """flashinfer >= 0.6.17: refuses invalid DCP calls with flashinfer's phrases, SM100+ only."""

    capability: tuple[int, int] = (10, 0)
    compute: Callable[[Any, int], Any] = fake_compute
    params: tuple[str, ...] = NEW_PARAMS
    arch_supported: bool | None = True
    calls: list[tuple[int, dict[str, object]]] = field(default_factory=list)
    environ_seen: list[dict[str, str]] = field(default_factory=list)

    def signature(self) -> tuple[str, ...]:
        return self.params

    def decode(self, case: Any, rank: int, overrides: Mapping[str, object] | None = None) -> Any:
        import os

        self.environ_seen.append({k: v for k, v in os.environ.items() if k.startswith("FLASHINFER_")})
        args = {"enable_dcp": True, "backend": "cute-dsl", "return_lse": True, **(overrides or {})}
        self.calls.append((rank, dict(overrides or {})))
        if not args["enable_dcp"]:
            raise ValueError("DCP arguments require enable_dcp=True")
        if args["backend"] not in ("auto", "cute-dsl"):
            raise ValueError("enable_dcp=True is only supported by backend='cute-dsl'")
        if not args["return_lse"]:
            raise ValueError("enable_dcp=True requires return_lse=True")
        major, minor = self.capability
        if major < 10:
            raise ValueError(f"cute-dsl backend (MLA decode kernel) requires SM100+, got SM{major}{minor}")
        return self.compute(case, rank)

    def cute_dsl_arch_supported(self, capability: tuple[int, int]) -> bool | None:
        return self.arch_supported


@dataclass
class OldKernel(FakeKernel):
    """flashinfer 0.6.16.post4: no enable_dcp at all."""

    params: tuple[str, ...] = OLD_PARAMS

    def decode(self, case: Any, rank: int, overrides: Mapping[str, object] | None = None) -> Any:
        raise TypeError("trtllm_batch_decode_with_kv_cache_mla() got an unexpected keyword argument 'enable_dcp'")


@dataclass
class CorruptKernel(FakeKernel):
    """Right signature, wrong numbers on one rank."""

    bad_rank: int = 1
    nan: bool = False

    def decode(self, case: Any, rank: int, overrides: Mapping[str, object] | None = None) -> Any:
        good = super().decode(case, rank, overrides)
        if rank != self.bad_rank:
            return good
        return FakeOut(good.rank, good.q_len, corrupt=not self.nan, nan=self.nan)


@dataclass
class BrokenImportKernel(FakeKernel):
    """``import flashinfer`` fails: the cubin version check, or any ImportError."""

    error: BaseException = field(default_factory=lambda: RuntimeError(MISMATCH_MESSAGE))

    def signature(self) -> tuple[str, ...]:
        raise self.error


@dataclass
class AcceptEverythingKernel(FakeKernel):
    """A build that forgot its argument checks: every call is accepted."""

    def decode(self, case: Any, rank: int, overrides: Mapping[str, object] | None = None) -> Any:
        return self.compute(case, rank)


@dataclass
class FakeTimer:
    first_call_s: float = 1.5

    def wall(self, fn: Callable[[], Any]) -> tuple[Any, float]:
        return fn(), self.first_call_s

    def per_call_us(self, fn: Callable[[], Any], warmup: int, iters: int) -> list[float]:
        for _ in range(warmup + iters):
            fn()
        return [10.0 + i for i in range(iters)]


def default_shapes(**changes: object) -> Shapes:
    shapes = derive_shapes(None, ShapeOverrides())
    assert shapes.seq_lens == DEFAULT_SEQ_LENS
    import dataclasses

    return dataclasses.replace(shapes, **changes) if changes else shapes


def make_context(
    *,
    kernel: Any = None,
    device: Any = None,
    packages: Any = None,
    numerics: Any = None,
    shapes: Shapes | None = None,
    environ: Mapping[str, str] | None = None,
    which: Callable[[str], str | None] = lambda name: None,
    home: Path = HERE / "no-such-home",
    classify: Callable[[str], bool | None] = lambda version: None,
    options: Options | None = None,
) -> Context:
    numerics_obj = numerics or FakeNumerics()
    return Context(
        packages=packages or FakePackages(),
        kernel=kernel or FakeKernel(),
        device=device or FakeDevice(),
        numerics=lambda dev: numerics_obj,
        timer=FakeTimer(),
        shapes=shapes or default_shapes(),
        environ=dict(environ or {}),
        which=which,
        home=home,
        classify_version=classify,
        options=options or Options(iters=5, warmup=1),
    )
