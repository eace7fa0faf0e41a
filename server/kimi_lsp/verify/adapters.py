"""The real probes behind the stages: torch and flashinfer, imported only when a method runs.

Constructing these objects imports nothing, so ``kimi-lsp verify`` on a host without torch pays
for torch only as far as a ``find_spec`` lookup.
"""
from __future__ import annotations

import importlib.util
import inspect
import time
from collections.abc import Callable, Mapping
from typing import Any

from kimi_lsp.verify.model import DeviceInfo, Unavailable

WORKSPACE_BYTES = 150 * 1024 * 1024  # sglang's dedicated cute-dsl workspace (trtllm_mla_backend.py:91)


def _torch() -> Any:
    if importlib.util.find_spec("torch") is None:
        raise Unavailable("torch is not installed (pip install 'kimi-lsp[verify]')")
    import torch

    return torch


def _driver_version() -> str | None:
    try:
        import pynvml  # optional; nvidia-ml-py
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        version = pynvml.nvmlSystemGetDriverVersion()
    except Exception:  # noqa: BLE001 - the driver version is evidence, never a verdict
        return None
    return version.decode() if isinstance(version, bytes) else str(version)


class TorchDevice:
    """DeviceProbe: the current CUDA device as torch sees it."""

    def probe(self) -> DeviceInfo:
        torch = _torch()
        if not torch.cuda.is_available():
            raise Unavailable(f"no CUDA device (torch {torch.__version__}, CUDA build {torch.version.cuda})")
        index = torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        return DeviceInfo(
            name=str(props.name),
            capability=(int(props.major), int(props.minor)),
            torch_version=str(torch.__version__),
            cuda_version=torch.version.cuda,
            sm_count=int(props.multi_processor_count),
            driver=_driver_version(),
        )


def _is_torch_missing(exc: ImportError) -> bool:
    name = exc.name or ""
    return name == "torch" or name.startswith("torch.")


class FlashinferKernel:
    """KernelAdapter over the installed flashinfer, calling it exactly as sglang 0.5.23 does."""

    def __init__(self) -> None:
        self._function: Callable[..., Any] | None = None
        self._workspaces: dict[str, Any] = {}

    def signature(self) -> tuple[str, ...]:
        # sglang, arg_groups/model_overrides/kimi_k3.py:20-38, minus its exception translation
        try:
            from flashinfer.decode import trtllm_batch_decode_with_kv_cache_mla
        except ImportError as exc:
            if _is_torch_missing(exc):
                raise Unavailable("flashinfer cannot be imported here: torch is not installed") from exc
            raise
        parameters = inspect.signature(trtllm_batch_decode_with_kv_cache_mla).parameters
        self._function = trtllm_batch_decode_with_kv_cache_mla
        return tuple(parameters)

    def _decode_function(self) -> Callable[..., Any]:
        if self._function is None:
            from flashinfer.decode import trtllm_batch_decode_with_kv_cache_mla

            self._function = trtllm_batch_decode_with_kv_cache_mla
        return self._function

    def _workspace(self, device: Any) -> Any:
        torch = _torch()
        key = str(device)
        if key not in self._workspaces:
            # zeroed and dedicated, like sglang's: cute-dsl split-KV partials live here
            self._workspaces[key] = torch.zeros(WORKSPACE_BYTES, dtype=torch.int8, device=device)
        return self._workspaces[key]

    def decode(self, case: Any, rank: int, overrides: Mapping[str, object] | None = None) -> Any:
        from kimi_lsp.verify.reference import Attention

        fn = self._decode_function()
        dims = case.shapes.dims
        inputs = case.ranks[rank]
        # sglang 0.5.23 cutedsl_mla_backend.py:120-143; the rest (is_var_seq, cute_dsl_impl,
        # bmm2_scale, enable_pdl) stays at flashinfer's defaults, as in sglang
        kwargs: dict[str, object] = dict(
            query=case.query,
            kv_cache=inputs.kv_cache,
            workspace_buffer=self._workspace(case.query.device),
            qk_nope_head_dim=dims.qk_nope_head_dim,
            kv_lora_rank=dims.kv_lora_rank,
            qk_rope_head_dim=dims.qk_rope_head_dim,
            block_tables=inputs.block_tables,
            seq_lens=inputs.seq_lens,
            max_seq_len=inputs.max_seq_len,
            bmm1_scale=case.scale,
            skip_softmax_threshold_scale_factor=None,  # SGLANG_SKIP_SOFTMAX_DECODE_THRESHOLD_SCALE_FACTOR default
            backend="cute-dsl",
            enable_dcp=True,
            cp_world=case.world,
            cp_rank=rank,
            causal_seqlens_kv_global=case.causal,
            return_lse=True,
        )
        kwargs.update(overrides or {})
        out, lse = fn(**kwargs)
        batch, q_len, heads = case.query.shape[:3]
        return Attention(out.view(batch, q_len, heads, -1), lse.view(batch, q_len, heads))

    def cute_dsl_arch_supported(self, capability: tuple[int, int]) -> bool | None:
        try:
            from flashinfer.cute_dsl.utils import is_cute_dsl_arch_supported
        except Exception:  # noqa: BLE001 - absent in some builds; then the policy alone decides
            return None
        return bool(is_cute_dsl_arch_supported(*capability))


class CudaTimer:
    """Timer: wall time around a synchronised call; CUDA events for the per-call numbers."""

    def wall(self, fn: Callable[[], Any]) -> tuple[Any, float]:
        torch = _torch()
        torch.cuda.synchronize()
        started = time.perf_counter()
        result = fn()
        torch.cuda.synchronize()
        return result, time.perf_counter() - started

    def per_call_us(self, fn: Callable[[], Any], warmup: int, iters: int) -> list[float]:
        torch = _torch()
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        samples = []
        for _ in range(iters):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1000.0)  # ms -> us
        return samples


def torch_numerics(device: str) -> Any:
    from kimi_lsp.verify.reference import TorchNumerics

    _torch()
    return TorchNumerics(device)
