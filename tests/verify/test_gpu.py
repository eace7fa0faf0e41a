"""On a CUDA machine: the real flashinfer, the real device, the real kernel (or its refusal).

Run with `pytest -m gpu tests/verify` (scripts/gpu-check.sh does). Everything here is skipped
without torch, a CUDA device or flashinfer, so CI never runs it. What each architecture must give
(reference/gpu-verify.md §1.5, §4.4): below SM100 (H100/H200) exit 4 with the contract checked
and flashinfer's 'requires SM100+' refusal; on SM100/SM103 exit 0 with the kernel matching the
reference; an old flashinfer exit 1 anywhere.
"""
from __future__ import annotations

import importlib.util
import json

import pytest
from kimi_lsp.verify.cli import main
from verify_fakes import DATA

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    if importlib.util.find_spec("flashinfer") is None:
        pytest.skip("flashinfer is not installed")
    return torch.cuda.get_device_capability()


def _verify(capsys, *argv):
    code = main(["--json", "--iters", "20", *argv])
    document = json.loads(capsys.readouterr().out)
    return code, document, {s["id"]: s for s in document["stages"]}


def _expected(stages, capability):
    if stages["signature-static"]["status"] == "FAIL" or stages["signature-runtime"]["status"] == "FAIL":
        return 1
    if capability[0] < 10 or capability[0] >= 12:
        return 4
    return 0


def test_default_shapes(cuda, capsys):
    code, document, stages = _verify(capsys)
    assert stages["cuda"]["status"] == "PASS"
    assert document["summary"]["cc"] == list(cuda)
    assert code == _expected(stages, cuda), json.dumps(document, indent=1)[:6000]
    if code == 1:
        return
    assert stages["contract"]["status"] == "PASS", stages["contract"]
    if cuda[0] < 10:
        # the H200 story: sglang's probe passes, flashinfer refuses before any compile
        assert stages["arch"]["status"] == "UNSUPPORTED"
        assert "requires SM100+" in stages["contract"]["evidence"]["valid_call_below_sm100"]["got"]
        assert stages["kernel"]["status"] == "SKIP"
    elif code == 0:
        assert stages["kernel"]["status"] == "PASS"
        assert stages["timing"]["evidence"]["median_us"] > 0


def test_launch_file_shapes(cuda, capsys):
    code, document, stages = _verify(capsys, str(DATA / "k3-dcp8-fp8.yaml"))
    assert document["summary"]["shapes"]["dcp_size"] == 8
    assert code == _expected(stages, cuda), json.dumps(document, indent=1)[:6000]
    if cuda[0] == 10 and code == 0:
        assert len(stages["kernel"]["evidence"]["ranks"]) == 8


def test_reference_and_merge_on_the_gpu(cuda):
    """Harness only: the reference and merge agree on the GPU too; the kernel is not exercised."""
    import torch
    from kimi_lsp.verify.reference import TorchNumerics
    from kimi_lsp.verify.shapes import ShapeOverrides, derive_shapes

    numerics = TorchNumerics("cuda")
    shapes = derive_shapes(None, ShapeOverrides(dcp_size=4, tp_size=4, seq_lens=(257, 1000)))
    case = numerics.make_case(shapes, q_len=4)
    merged = numerics.merge([numerics.reference_rank(case, r) for r in range(4)])
    single = numerics.reference_global(case)
    assert torch.allclose(merged.out, single.out, atol=1e-4, rtol=1e-4)
    assert torch.allclose(merged.lse, single.lse, atol=1e-4, rtol=1e-4)


def test_cuda_event_timer(cuda):
    import torch
    from kimi_lsp.verify.adapters import CudaTimer

    x = torch.randn(1024, 1024, device="cuda")
    samples = CudaTimer().per_call_us(lambda: x @ x, warmup=2, iters=5)
    assert len(samples) == 5 and all(s > 0 for s in samples)
