"""The real adapters where this host allows: no torch, CPU torch. The GPU side is test_gpu.py."""
from __future__ import annotations

import importlib.util
import sys

import pytest
from kimi_lsp.verify.adapters import FlashinferKernel, TorchDevice, torch_numerics
from kimi_lsp.verify.model import Unavailable

HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_FLASHINFER = importlib.util.find_spec("flashinfer") is not None


@pytest.mark.skipif(HAS_TORCH, reason="torch is installed here")
def test_without_torch_the_device_and_numerics_are_unavailable():
    with pytest.raises(Unavailable, match="torch is not installed"):
        TorchDevice().probe()
    with pytest.raises(Unavailable, match="torch is not installed"):
        torch_numerics("cuda")
    assert "torch" not in sys.modules


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_cpu_torch_has_no_cuda_device():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(Unavailable, match="no CUDA device"):
        TorchDevice().probe()
    assert torch_numerics("cpu").device == "cpu"


@pytest.mark.skipif(HAS_FLASHINFER, reason="flashinfer is installed here")
def test_without_flashinfer_the_probe_raises_module_not_found():
    kernel = FlashinferKernel()
    with pytest.raises(ModuleNotFoundError) as caught:
        kernel.signature()
    assert caught.value.name == "flashinfer"
    assert kernel.cute_dsl_arch_supported((10, 0)) is None
