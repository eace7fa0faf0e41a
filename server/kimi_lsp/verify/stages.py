"""The verify stages, cheap to heavy, as plain functions over injected probes.

Each stage reads the Context and the results of the stages before it and returns a StageResult;
the runner times it and turns an escaping exception into an internal error (exit 2). Nothing
here imports torch or flashinfer: that happens behind the probes (adapters.py).
"""
from __future__ import annotations

import dataclasses
import os
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from kimi_lsp.verify.model import TOLERANCES, Comparison, DeviceInfo, StageResult, Status, Unavailable
from kimi_lsp.verify.probes import (
    DeviceProbe,
    Environ,
    KernelAdapter,
    Numerics,
    NumericsFactory,
    PackageProbe,
    Timer,
    Which,
)
from kimi_lsp.verify.shapes import CONTRACT_SHAPES, Shapes
from kimi_lsp.verify.static import DCP_KWARGS, DISTRIBUTIONS, FUNCTION, SGLANG_KWARGS, find_signature

# sglang 0.5.23, arg_groups/model_overrides/kimi_k3.py:20-38: the two messages its probe raises
SGLANG_IMPORT_MESSAGE = (
    "Kimi-K3 DCP with decode_attention_backend='cutedsl_mla' requires FlashInfer 0.6.17 or newer "
    "with trtllm_batch_decode_with_kv_cache_mla exposing enable_dcp."
)
SGLANG_SIGNATURE_MESSAGE = (
    "Kimi-K3 DCP with decode_attention_backend='cutedsl_mla' requires enable_dcp in the signature "
    "of flashinfer.decode.trtllm_batch_decode_with_kv_cache_mla; upgrade to FlashInfer 0.6.17 or newer."
)
OFFLINE_ENV = {"FLASHINFER_NO_DOWNLOAD": "1", "FLASHINFER_DISABLE_JIT": "1"}
# The stages that must pass for exit 0 (reference/gpu-verify.md §4.3).
REQUIRED = ("signature-static", "signature-runtime", "contract", "kernel")


def version_has_enable_dcp(version: str) -> bool | None:
    """The release table's answer, or None when it is unknown or the table is not there."""
    try:
        from kimi_lsp.knowledge.flashinfer import has_enable_dcp
    except ImportError:
        return None
    try:
        return has_enable_dcp(version)
    except ValueError:  # an unparsable version is "unknown", never a crash of verify
        return None


@dataclass(frozen=True)
class Options:
    strict: bool = False
    allow_network: bool = False
    iters: int = 50
    warmup: int = 3


@dataclass(frozen=True)
class Context:
    packages: PackageProbe
    kernel: KernelAdapter
    device: DeviceProbe
    numerics: NumericsFactory
    timer: Timer
    shapes: Shapes
    environ: Environ = field(default_factory=lambda: dict(os.environ))
    which: Which = lambda name: None
    home: Path = field(default_factory=Path.home)
    classify_version: Callable[[str], bool | None] = version_has_enable_dcp
    options: Options = field(default_factory=Options)


Done = Mapping[str, StageResult]


def _result(stage: str, status: Status, reason: str, evidence: Mapping[str, object] | None = None,
            payload: object = None) -> StageResult:
    return StageResult(stage, status, reason, dict(evidence or {}), payload=payload)


def _exc_line(exc: BaseException, limit: int = 240) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    line = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _version_at_least(version: str, minimum: str) -> bool:
    from kimi_lsp.pep440 import InvalidVersion, Version

    try:
        return Version(version) >= Version(minimum)
    except InvalidVersion:
        return False


# --- S0 ------------------------------------------------------------------------------------------
def stage_packages(ctx: Context, done: Done) -> StageResult:
    versions = {name: ctx.packages.version(name) for name in DISTRIBUTIONS}
    flashinfer = versions["flashinfer-python"]
    listed = ", ".join(f"{name} {v or 'not installed'}" for name, v in versions.items()
                       if name in ("flashinfer-python", "torch", "sglang"))
    if flashinfer is None:
        # Nothing to verify in this environment (a CPU dev box, CI): not verifiable, not failed.
        # The pins that govern the real launch are `kimi-lsp --check`'s business.
        return _result("packages", Status.SKIP,
                       "flashinfer-python is not installed here; a launch from this environment would raise "
                       f"sglang's: {SGLANG_IMPORT_MESSAGE}", versions)
    problems = []
    if not ctx.environ.get("FLASHINFER_DISABLE_VERSION_CHECK"):
        # flashinfer/jit/env.py: import flashinfer raises RuntimeError on either mismatch
        cubin, jit_cache = versions["flashinfer-cubin"], versions["flashinfer-jit-cache"]
        if cubin is not None and cubin != flashinfer:
            problems.append(f"flashinfer-cubin {cubin} != flashinfer-python {flashinfer}")
        if jit_cache is not None and not jit_cache.startswith(flashinfer):
            problems.append(f"flashinfer-jit-cache {jit_cache} does not match flashinfer-python {flashinfer}")
    if problems:
        return _result("packages", Status.WARN,
                       "; ".join(problems) + ": `import flashinfer` will raise RuntimeError", versions)
    return _result("packages", Status.PASS, listed, versions)


# --- S1 ------------------------------------------------------------------------------------------
def stage_signature_static(ctx: Context, done: Done) -> StageResult:
    version = ctx.packages.version("flashinfer-python")
    package = ctx.packages.package_dir("flashinfer")
    if package is None:
        return _result("signature-static", Status.SKIP, "flashinfer is not installed here",
                       {"flashinfer-python": version})
    found = find_signature(package)
    if found is None:
        return _result("signature-static", Status.FAIL, f"{FUNCTION} is not defined under {package}",
                       {"package": str(package), "flashinfer-python": version})
    missing = found.missing(SGLANG_KWARGS)
    table_says = ctx.classify_version(version) if version else None
    evidence: dict[str, object] = {
        "definition": f"{found.path}:{found.line}",
        "parameters": len(found.parameters),
        "enable_dcp": "enable_dcp" in found.parameters,
        "missing": list(missing),
        "flashinfer-python": version,
        "release_table_has_enable_dcp": table_says,
    }
    label = f"flashinfer-python {version}" if version else "flashinfer (version unknown)"
    if missing:
        # enable_dcp first: it is the one sglang's probe names
        ordered = sorted(missing, key=lambda name: (name != "enable_dcp", SGLANG_KWARGS.index(name)))
        return _result("signature-static", Status.FAIL,
                       f"{label}: {FUNCTION} has no {', '.join(ordered)}; sglang's Kimi-K3 DCP check fails",
                       evidence)
    if table_says is False:
        return _result("signature-static", Status.WARN,
                       f"{label} predates enable_dcp by the release table, yet the installed signature has "
                       "it (a nightly or local build?)", evidence)
    return _result("signature-static", Status.PASS,
                   f"{label}: {FUNCTION} has {', '.join(DCP_KWARGS)} and every kwarg sglang passes", evidence)


# --- S2 ------------------------------------------------------------------------------------------
def stage_signature_runtime(ctx: Context, done: Done) -> StageResult:
    """sglang's _require_kimi_k3_cutedsl_dcp_support, step for step."""
    try:
        parameters = tuple(ctx.kernel.signature())
    except Unavailable as exc:
        return _result("signature-runtime", Status.SKIP, str(exc))
    except ModuleNotFoundError as exc:
        if exc.name == "flashinfer":
            return _result("signature-runtime", Status.SKIP, "flashinfer is not installed here")
        return _result("signature-runtime", Status.FAIL, f"sglang raises: {SGLANG_IMPORT_MESSAGE}",
                       {"cause": _exc_line(exc, 2000)})
    except RuntimeError as exc:
        # e.g. the flashinfer-cubin version check at import: sglang does not catch it either
        return _result("signature-runtime", Status.FAIL, f"import flashinfer raised {_exc_line(exc)}",
                       {"error": _exc_line(exc, 2000)})
    except (ImportError, TypeError, ValueError) as exc:
        return _result("signature-runtime", Status.FAIL, f"sglang raises: {SGLANG_IMPORT_MESSAGE}",
                       {"cause": _exc_line(exc, 2000)})
    except Exception as exc:  # noqa: BLE001 - whatever flashinfer's import raises, the launch dies with it
        return _result("signature-runtime", Status.FAIL, f"importing flashinfer.decode raised {_exc_line(exc)}",
                       {"error": _exc_line(exc, 2000)})
    evidence: dict[str, object] = {"parameters": len(parameters), "enable_dcp": "enable_dcp" in parameters}
    static = done.get("signature-static")
    static_has = static.evidence.get("enable_dcp") if static is not None else None
    if isinstance(static_has, bool) and static_has != evidence["enable_dcp"]:
        evidence["note"] = "the static and runtime signatures disagree: two flashinfer installs on the path?"
    if "enable_dcp" not in parameters:
        return _result("signature-runtime", Status.FAIL, f"sglang raises: {SGLANG_SIGNATURE_MESSAGE}",
                       evidence, payload=parameters)
    return _result("signature-runtime", Status.PASS,
                   "sglang's probe passes: flashinfer.decode.trtllm_batch_decode_with_kv_cache_mla has enable_dcp",
                   evidence, payload=parameters)


# --- S3 ------------------------------------------------------------------------------------------
def stage_cuda(ctx: Context, done: Done) -> StageResult:
    try:
        info = ctx.device.probe()
    except Unavailable as exc:
        return _result("cuda", Status.SKIP, str(exc))
    evidence = {
        "device": info.name, "cc": list(info.capability), "cuda": info.cuda_version,
        "torch": info.torch_version, "sm_count": info.sm_count, "driver": info.driver,
    }
    major, minor = info.capability
    return _result("cuda", Status.PASS,
                   f"{info.name}, {info.sm} (cc {major}.{minor}), CUDA {info.cuda_version}, torch {info.torch_version}",
                   evidence, payload=info)


# --- S4 ------------------------------------------------------------------------------------------
def _cuda_tuple(version: str | None) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in (version or "").split(".")[:2])
    except ValueError:
        return ()


def arch_policy(capability: tuple[int, int], cuda_version: str | None, kv_dtype: str = "bf16") -> tuple[Status, str]:
    """Where flashinfer's cute-dsl DCP MLA decode is known to run (reference §1.5)."""
    major, minor = capability
    sm = f"SM{major}{minor}"
    if major < 10:
        return Status.UNSUPPORTED, (
            f"{sm}: flashinfer's cute-dsl MLA, the only DCP decode backend, requires SM100+; sglang's "
            f"Kimi-K3 DCP check (the enable_dcp probe) passes here, but the first decode raises "
            f"'cute-dsl backend (MLA decode kernel) requires SM100+, got {sm}'"
        )
    if major >= 12:
        return Status.UNSUPPORTED, (
            f"{sm}: passes flashinfer's SM100+ check, but the DCP kernel has no arch branch for it and "
            "flashinfer's DCP tests skip it; treated as unsupported"
        )
    needs = (12, 8) if major == 10 else (13, 0)  # is_sm100a_supported / is_sm110a_supported
    have = _cuda_tuple(cuda_version)
    old_cuda = bool(have) and have < needs
    cuda_note = ""
    if old_cuda:
        cuda_note = f"; torch's CUDA {cuda_version} < {needs[0]}.{needs[1]}, which flashinfer's tests require"
    if major == 10 and minor in (0, 3):
        status = Status.WARN if old_cuda else Status.PASS
        return status, f"{sm}: validated by flashinfer's DCP tests (B200/GB200/B300/GB300){cuda_note}"
    if major == 11:
        path = "the BF16 path has no sm_110 branch" if kv_dtype == "bf16" else "the FP8 path lists sm_110"
        return Status.WARN, f"{sm}: flashinfer's DCP tests allow it but {path}; unverified{cuda_note}"
    return Status.WARN, f"{sm}: an SM10x part other than SM100/SM103; not covered by flashinfer's DCP tests{cuda_note}"


def stage_arch(ctx: Context, done: Done) -> StageResult:
    cuda = done.get("cuda")
    if cuda is None or cuda.status is not Status.PASS or not isinstance(cuda.payload, DeviceInfo):
        return _result("arch", Status.SKIP, "no CUDA device")
    info = cuda.payload
    status, reason = arch_policy(info.capability, info.cuda_version, ctx.shapes.kv_dtype)
    evidence: dict[str, object] = {"cc": list(info.capability), "cuda": info.cuda_version}
    if status is not Status.UNSUPPORTED:
        try:
            supported = ctx.kernel.cute_dsl_arch_supported(info.capability)
        except Exception:  # noqa: BLE001 - an unanswerable question is not a verdict
            supported = None
        evidence["is_cute_dsl_arch_supported"] = supported
        if supported is False:
            return _result("arch", Status.UNSUPPORTED,
                           f"{info.sm}: flashinfer's is_cute_dsl_arch_supported{info.capability} is False",
                           evidence)
    return _result("arch", status, reason, evidence)


# --- S5 ------------------------------------------------------------------------------------------
def _populated(path: Path) -> bool:
    try:
        return path.is_dir() and any(path.iterdir())
    except OSError:
        return False


def stage_offline(ctx: Context, done: Done) -> StageResult:
    """Will the kernels of a Kimi-K3 DCP launch load without a download or nvcc?"""
    flashinfer = ctx.packages.version("flashinfer-python")
    if flashinfer is None:
        return _result("offline", Status.SKIP, "flashinfer-python is not installed")
    problems: list[str] = []

    # decode: cute-dsl compiles in-process with the cutlass DSL's bundled toolchain (no nvcc)
    cutlass, tvm = ctx.packages.version("nvidia-cutlass-dsl"), ctx.packages.version("apache-tvm-ffi")
    if cutlass is None or not _version_at_least(cutlass, "4.5.0"):
        problems.append(f"decode needs nvidia-cutlass-dsl>=4.5.0 (found {cutlass or 'none'})")
    if tvm is None:
        problems.append("decode needs apache-tvm-ffi (not installed)")

    # prefill: Kimi-K3 DCP forces trtllm_mla, which needs FMHA cubins and a launcher .so
    cubin_dir = ctx.environ.get("FLASHINFER_CUBIN_DIR")
    cubin_pkg = ctx.packages.version("flashinfer-cubin")
    cache = ctx.home / ".cache" / "flashinfer" / "cubins"
    cubins: str | None = None
    if cubin_dir:
        cubins = f"FLASHINFER_CUBIN_DIR={cubin_dir}"
        if not _populated(Path(cubin_dir)):
            problems.append(f"FLASHINFER_CUBIN_DIR={cubin_dir} is empty")
    elif cubin_pkg == flashinfer:
        cubins = f"flashinfer-cubin {cubin_pkg}"
    elif _populated(cache):
        cubins = f"{cache} (downloaded earlier; version not checked)"
    else:
        problems.append("prefill (trtllm_mla) would download FMHA cubins at first use")

    jit_cache = ctx.packages.version("flashinfer-jit-cache")
    package = ctx.packages.package_dir("flashinfer")
    cuda_home = ctx.environ.get("CUDA_HOME") or ctx.environ.get("CUDA_PATH")
    home_nvcc = Path(cuda_home) / "bin" / "nvcc" if cuda_home else None
    nvcc = ctx.which("nvcc") or (str(home_nvcc) if home_nvcc is not None and home_nvcc.is_file() else None)
    launcher: str | None = None
    if jit_cache is not None and jit_cache.startswith(flashinfer):
        launcher = f"flashinfer-jit-cache {jit_cache}"
    elif package is not None and (package / "data" / "aot").is_dir():
        launcher = f"AOT modules in {package / 'data' / 'aot'}"
    elif nvcc:
        problems.append("prefill launcher would be JIT-built with nvcc at first use (no flashinfer-jit-cache)")
    else:
        problems.append("prefill launcher cannot be built: no flashinfer-jit-cache and no nvcc")

    evidence = {
        "nvidia-cutlass-dsl": cutlass, "apache-tvm-ffi": tvm, "cubins": cubins, "launcher": launcher,
        "nvcc": nvcc, "how_to_prepare": "pip install flashinfer-cubin==V flashinfer-jit-cache==V "
        "(V = flashinfer-python's version), or `flashinfer download-cubin` while online",
    }
    if problems:
        return _result("offline", Status.WARN, "; ".join(problems), evidence)
    return _result("offline", Status.PASS,
                   f"no download or nvcc needed: cutlass DSL {cutlass}, cubins from {cubins}, launcher from {launcher}",
                   evidence)


# --- S6 ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ContractCase:
    name: str
    overrides: Mapping[str, object]
    expect: str  # a phrase of flashinfer's own message (_validate_mla_dcp_args, _core.py:2146-2236)


CONTRACT_CASES = (
    ContractCase("return_lse_false", {"return_lse": False}, "requires return_lse=True"),
    ContractCase("backend_trtllm_gen", {"backend": "trtllm-gen"}, "only supported by backend='cute-dsl'"),
    ContractCase("dcp_args_without_enable_dcp", {"enable_dcp": False}, "require enable_dcp=True"),
)
ARCH_CASE = ContractCase("valid_call_below_sm100", {}, "requires SM100+")


def _refusal(case: ContractCase, exc: BaseException | None) -> tuple[bool, str]:
    if exc is None:
        return False, "accepted; flashinfer must refuse it"
    line = _exc_line(exc)
    if isinstance(exc, TypeError) and "unexpected keyword" in str(exc):
        return False, line
    if case.expect in str(exc):
        return True, line
    return False, f"refused with a different error: {line}"


def stage_contract(ctx: Context, done: Done) -> StageResult:
    cuda = done.get("cuda")
    if cuda is None or cuda.status is not Status.PASS or not isinstance(cuda.payload, DeviceInfo):
        return _result("contract", Status.SKIP, "needs a CUDA device")
    runtime = done.get("signature-runtime")
    if runtime is None or runtime.payload is None:
        return _result("contract", Status.SKIP, "flashinfer.decode does not import (see signature-runtime)")
    info = cuda.payload
    cases = CONTRACT_CASES + ((ARCH_CASE,) if info.capability[0] < 10 else ())
    case_input = ctx.numerics("cuda").make_case(CONTRACT_SHAPES, 1)
    evidence: dict[str, object] = {}
    failures: list[str] = []
    for case in cases:
        try:
            ctx.kernel.decode(case_input, 0, case.overrides)
            raised: BaseException | None = None
        except Exception as exc:  # noqa: BLE001 - the refusal is the observation
            raised = exc
        ok, got = _refusal(case, raised)
        evidence[case.name] = {"expected": case.expect, "got": got, "ok": ok}
        if not ok:
            failures.append(f"{case.name}: {got}")
    if failures:
        missing_kwarg = next((f for f in failures if "unexpected keyword" in f), None)
        if missing_kwarg:
            return _result("contract", Status.FAIL, f"flashinfer does not take the DCP kwargs ({missing_kwarg})",
                           evidence)
        return _result("contract", Status.FAIL, "; ".join(failures), evidence)
    refused = f"refuses the {len(CONTRACT_CASES)} invalid DCP calls with its own messages"
    if info.capability[0] < 10:
        refused += f", and refuses {info.sm}: 'requires SM100+'"
    return _result("contract", Status.PASS, f"flashinfer {refused}", evidence)


# --- S7 ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KernelRun:
    """What the timing stage reuses: the compiled specialisation's inputs and its first call."""

    numerics: Numerics
    case: object
    q_len: int
    first_call_s: float


def stage_kernel(ctx: Context, done: Done) -> StageResult:
    arch = done.get("arch")
    if arch is None or arch.status not in (Status.PASS, Status.WARN):
        why = "no CUDA device" if arch is None or arch.status is Status.SKIP else f"architecture: {arch.reason}"
        return _result("kernel", Status.SKIP, why)
    runtime = done.get("signature-runtime")
    if runtime is None or runtime.status is not Status.PASS:
        return _result("kernel", Status.SKIP, "sglang's probe does not pass; the launch never reaches the kernel")
    shapes = ctx.shapes
    problems = shapes.problems()
    if problems:
        return _result("kernel", Status.FAIL, "launch shapes outside the kernel's limits: " + "; ".join(problems),
                       {"shapes": shapes.as_dict()})
    numerics = ctx.numerics("cuda")
    tol = TOLERANCES[shapes.kv_dtype]
    first_call: dict[str, float] = {}
    ranks: list[dict[str, object]] = []
    merges: list[dict[str, object]] = []
    evidence: dict[str, object] = {"tolerance": dataclasses.asdict(tol), "first_call_s": first_call,
                                   "ranks": ranks, "merged": merges}
    failures: list[str] = []
    timed: KernelRun | None = None
    for q_len in shapes.q_lens:
        case = numerics.make_case(shapes, q_len)
        parts = []
        for rank in range(shapes.dcp_size):
            try:
                if rank == 0:
                    # the first call compiles this specialisation (dtype, q_len, W, H, page size)
                    got, seconds = ctx.timer.wall(partial(ctx.kernel.decode, case, 0))
                    first_call[str(q_len)] = round(seconds, 3)
                    timed = timed or KernelRun(numerics, case, q_len, seconds)
                else:
                    got = ctx.kernel.decode(case, rank)
            except Exception as exc:  # noqa: BLE001 - a launch error is the finding
                return _result("kernel", Status.FAIL,
                               f"decode (q_len {q_len}, cp_rank {rank}) raised {_exc_line(exc)}", evidence)
            comparison = numerics.compare(got, numerics.reference_rank(case, rank), tol)
            ranks.append({"q_len": q_len, "cp_rank": rank, **comparison.summary()})
            if not comparison.ok:
                failures.append(_mismatch(f"cp_rank {rank}", q_len, comparison))
            parts.append(got)
        merged = numerics.compare(numerics.merge(parts), numerics.reference_global(case), tol)
        merges.append({"q_len": q_len, **merged.summary()})
        if not merged.ok:
            failures.append(_mismatch("LSE merge vs single-rank reference", q_len, merged))
    if failures:
        return _result("kernel", Status.FAIL, "; ".join(failures[:3]), evidence)
    return _result("kernel", Status.PASS,
                   f"{shapes.dcp_size} ranks match their references and the LSE merge matches the single-rank "
                   f"reference ({shapes.kv_dtype}: out {tol.out_atol}/{tol.out_rtol}, "
                   f"lse {tol.lse_atol}/{tol.lse_rtol})",
                   evidence, payload=timed)


def _mismatch(what: str, q_len: int, c: Comparison) -> str:
    return (f"{what} (q_len {q_len}): {c.out_mismatches} out / {c.lse_mismatches} lse values off, "
            f"{c.nans} NaN, {c.bad_empty_rows} wrong empty rows, max err {c.out_max_abs_err:.3g}")


# --- S8 ------------------------------------------------------------------------------------------
def _percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(fraction * (len(ordered) - 1)))))
    return ordered[index]


def stage_timing(ctx: Context, done: Done) -> StageResult:
    kernel = done.get("kernel")
    if kernel is None or kernel.status is not Status.PASS or not isinstance(kernel.payload, KernelRun):
        return _result("timing", Status.SKIP, "needs a passing kernel stage")
    run = kernel.payload
    samples = ctx.timer.per_call_us(partial(ctx.kernel.decode, run.case, 0), ctx.options.warmup, ctx.options.iters)
    median, p90 = _percentile(samples, 0.5), _percentile(samples, 0.9)
    gbps = run.numerics.kv_bytes(run.case, 0) / (median * 1e-6) / 1e9 if median > 0 else None
    evidence = {
        "median_us": round(median, 2), "p90_us": round(p90, 2), "iters": len(samples),
        "warmup": ctx.options.warmup, "q_len": run.q_len, "first_call_s": round(run.first_call_s, 3),
        "kv_gb_per_s": round(gbps, 1) if gbps is not None else None,
    }
    return _result("timing", Status.PASS,
                   f"median {median:.1f} us, p90 {p90:.1f} us per call (cp_rank 0, q_len {run.q_len}, "
                   f"{len(samples)} calls); first call (compile) {run.first_call_s:.2f} s", evidence)


STAGES: tuple[tuple[str, Callable[[Context, Done], StageResult]], ...] = (
    ("packages", stage_packages),
    ("signature-static", stage_signature_static),
    ("signature-runtime", stage_signature_runtime),
    ("cuda", stage_cuda),
    ("arch", stage_arch),
    ("offline", stage_offline),
    ("contract", stage_contract),
    ("kernel", stage_kernel),
    ("timing", stage_timing),
)


@contextmanager
def offline_environment(environ: MutableMapping[str, str], allow_network: bool) -> Iterator[None]:
    """FLASHINFER_NO_DOWNLOAD / FLASHINFER_DISABLE_JIT for the duration of the run, so a kernel PASS
    also proves that nothing was downloaded or built; the caller's values come back afterwards."""
    if allow_network:
        yield
        return
    saved = {key: environ.get(key) for key in OFFLINE_ENV}
    environ.update(OFFLINE_ENV)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                environ.pop(key, None)
            else:
                environ[key] = value


def run_stages(ctx: Context, stages: Sequence[tuple[str, Callable[[Context, Done], StageResult]]] = STAGES,
               clock: Callable[[], float] = time.perf_counter) -> list[StageResult]:
    done: dict[str, StageResult] = {}
    for stage_id, stage in stages:
        started = clock()
        try:
            result = stage(ctx, done)
        except Exception as exc:  # noqa: BLE001 - a bug in verify must not hide the other stages
            result = StageResult(stage_id, Status.FAIL, f"internal error in verify: {_exc_line(exc)}",
                                 {"traceback": traceback.format_exc()}, internal=True)
        done[stage_id] = dataclasses.replace(result, seconds=round(clock() - started, 4))
    return list(done.values())


def exit_code(results: Sequence[StageResult], strict: bool = False) -> int:
    """0 verified, 1 failed, 2 internal error, 3 not verifiable here, 4 unsupported architecture."""
    by_id = {r.id: r for r in results}
    if any(r.internal for r in results):
        return 2
    if any(r.status is Status.FAIL for r in results):
        return 1
    if strict and any(r.status is Status.WARN for r in results):
        return 1
    if by_id.get("arch") is not None and by_id["arch"].status is Status.UNSUPPORTED:
        return 4
    if all(r in by_id and by_id[r].status in (Status.PASS, Status.WARN) for r in REQUIRED):
        return 0
    return 3
