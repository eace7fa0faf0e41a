"""The pure-torch reference, the rank merge and the comparison on CPU torch; then whole runs with
torch numerics, including the real FlashinferKernel adapter against the fake flashinfer tree.
Skipped cleanly where torch is not installed (CI)."""
from __future__ import annotations

import dataclasses
import importlib.util
import sys

import pytest

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from kimi_lsp.verify.model import TOLERANCES, Status  # noqa: E402
from kimi_lsp.verify.reference import (  # noqa: E402
    Attention,
    TorchNumerics,
    compare,
    make_case,
    merge,
    reference,
)
from kimi_lsp.verify.shapes import MlaDims  # noqa: E402
from kimi_lsp.verify.stages import exit_code, run_stages  # noqa: E402
from verify_fakes import (  # noqa: E402
    B200,
    FAKES,
    H200,
    FakeDevice,
    FakeKernel,
    FakePackages,
    FakeTimer,
    default_shapes,
    make_context,
)

SMALL = MlaDims(num_heads=4, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8)


def small_shapes(**changes):
    base = default_shapes(dims=SMALL, heads=4, seq_lens=(37, 100), page_size=8)
    return dataclasses.replace(base, **changes)


def _fake_core():
    path = FAKES / "new" / "flashinfer" / "mla" / "_core.py"
    spec = importlib.util.spec_from_file_location("fake_flashinfer_core", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _paged_call(case, rank):
    """The fake flashinfer, computing from the paged rank inputs, called as sglang calls it."""
    fn = _fake_core().trtllm_batch_decode_with_kv_cache_mla
    inputs = case.ranks[rank]
    dims = case.shapes.dims
    out, lse = fn(query=case.query, kv_cache=inputs.kv_cache, workspace_buffer=None,
                  qk_nope_head_dim=dims.qk_nope_head_dim, kv_lora_rank=dims.kv_lora_rank,
                  qk_rope_head_dim=dims.qk_rope_head_dim, block_tables=inputs.block_tables,
                  seq_lens=inputs.seq_lens, max_seq_len=inputs.max_seq_len, bmm1_scale=case.scale,
                  backend="cute-dsl", enable_dcp=True, cp_world=case.world, cp_rank=rank,
                  causal_seqlens_kv_global=case.causal, return_lse=True)
    b, s, h = case.query.shape[:3]
    return Attention(out.view(b, s, h, -1), lse.view(b, s, h))


# --- inputs ---------------------------------------------------------------------------------------
def test_case_layout_matches_sglang_and_the_public_api():
    shapes = default_shapes(dcp_size=4)
    case = make_case(shapes, q_len=2, device="cpu")
    assert case.query.shape == (2, 2, shapes.heads, 576) and case.query.dtype == torch.bfloat16
    assert case.causal.dtype == torch.int32 and case.causal.tolist() == [257, 1000]
    for rank, inputs in enumerate(case.ranks):
        assert inputs.kv_cache.dim() == 4 and inputs.kv_cache.shape[1:] == (1, 64, 576)
        assert inputs.block_tables.dtype == torch.int32 and inputs.block_tables.shape[1] % 2 == 0
        assert inputs.seq_lens.tolist() == [-(-(257 - rank) // 4), -(-(1000 - rank) // 4)]
        assert inputs.max_seq_len == max(inputs.seq_lens.tolist())


@pytest.mark.parametrize("page_size", [32, 64])
def test_pages_hold_the_cyclic_split(page_size):
    case = make_case(default_shapes(dcp_size=3, page_size=page_size), q_len=1, device="cpu")
    for rank, inputs in enumerate(case.ranks):
        pages = inputs.kv_cache.squeeze(1).float()
        for b, global_len in enumerate(case.seq_lens):
            n = inputs.local_lens[b]
            used = inputs.block_tables[b, : -(-n // page_size)].long()
            gathered = pages[used].reshape(-1, 576)[:n]
            assert torch.equal(gathered, case.global_kv[b, rank:global_len:3].float())


def test_fp8_case_is_fp8_throughout():
    case = make_case(default_shapes(kv_dtype="fp8_e4m3"), q_len=1, device="cpu")
    assert case.query.dtype == torch.float8_e4m3fn
    assert all(r.kv_cache.dtype == torch.float8_e4m3fn for r in case.ranks)


def test_inputs_are_seeded():
    a = make_case(small_shapes(), 1, "cpu", seed=3)
    b = make_case(small_shapes(), 1, "cpu", seed=3)
    assert torch.equal(a.query.float(), b.query.float())


# --- reference vs an independent paged computation ------------------------------------------------
@pytest.mark.parametrize(("kv_dtype", "q_len", "world", "page_size"),
                         [("bf16", 1, 2, 64), ("bf16", 4, 3, 32), ("fp8_e4m3", 1, 2, 64), ("fp8_e4m3", 8, 4, 32)])
def test_reference_matches_the_paged_fake(kv_dtype, q_len, world, page_size):
    shapes = small_shapes(kv_dtype=kv_dtype, dcp_size=world, page_size=page_size)
    case = make_case(shapes, q_len, "cpu")
    for rank in range(world):
        ref = reference(case, world, rank)
        got = _paged_call(case, rank)
        comparison = compare(got, ref, TOLERANCES[kv_dtype])
        assert comparison.ok, comparison


def test_rows_without_keys_are_zero_and_minus_inf():
    shapes = small_shapes(dcp_size=4, seq_lens=(2, 5))
    case = make_case(shapes, q_len=1, device="cpu")
    ref = reference(case, 4, 3)  # rank 3 holds nothing of G=2 and position 3 of G=5
    assert torch.isneginf(ref.lse[0]).all() and (ref.out[0] == 0).all()
    assert torch.isfinite(ref.lse[1]).all()


# --- merge ----------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, 80), min_size=1, max_size=3), st.integers(1, 6), st.integers(1, 4), st.integers(0, 99))
def test_merge_of_rank_references_is_the_single_rank_reference(lens, world, q_len, seed):
    lens = [max(n, q_len) for n in lens]
    shapes = small_shapes(dcp_size=world, seq_lens=tuple(lens), batch_size=len(lens))
    case = make_case(shapes, q_len, "cpu", seed=seed)
    merged = merge([reference(case, world, r) for r in range(world)])
    single = reference(case, 1, 0)
    assert torch.allclose(merged.out, single.out, atol=1e-5, rtol=1e-5)
    assert torch.allclose(merged.lse, single.lse, atol=1e-5, rtol=1e-5)


def test_merge_of_all_empty_rows_stays_empty():
    empty = Attention(torch.zeros(1, 1, 2, 3), torch.full((1, 1, 2), float("-inf")))
    merged = merge([empty, empty])
    assert torch.isneginf(merged.lse).all() and (merged.out == 0).all() and not torch.isnan(merged.out).any()


# --- compare --------------------------------------------------------------------------------------
def test_compare_catches_corruption_nans_and_wrong_empty_rows():
    case = make_case(small_shapes(dcp_size=4, seq_lens=(2, 50)), 1, "cpu")
    ref = reference(case, 4, 3)
    tol = TOLERANCES["bf16"]
    assert compare(Attention(ref.out.to(torch.bfloat16), ref.lse.reshape(-1, 4)), ref, tol).ok

    noisy = ref.out.clone()
    noisy[1, 0, 0, :5] += 0.5
    c = compare(Attention(noisy, ref.lse), ref, tol)
    assert not c.ok and c.out_mismatches == 5 and c.out_max_abs_err == pytest.approx(0.5, abs=1e-3)

    nan = ref.out.clone()
    nan[1, 0, 0, 0] = float("nan")
    assert compare(Attention(nan, ref.lse), ref, tol).nans == 1

    filled = ref.lse.clone()
    filled[0] = 0.0  # row 0 has no visible key on rank 3
    assert compare(Attention(ref.out, filled), ref, tol).bad_empty_rows == 4

    shifted = ref.lse.clone()
    shifted[1] += 0.5
    assert compare(Attention(ref.out, shifted), ref, tol).lse_mismatches == 4


# --- whole runs with torch numerics ---------------------------------------------------------------
def _reference_kernel(case, rank):
    ref = reference(case, case.world, rank)
    b, s, h = case.query.shape[:3]
    return Attention(ref.out.to(torch.bfloat16), ref.lse.reshape(b * s, h))


def _corrupt_kernel(case, rank):
    got = _reference_kernel(case, rank)
    return Attention(got.out + (0.2 if rank == 1 else 0.0), got.lse) if rank == 1 else got


def test_stages_with_a_kernel_computing_the_reference():
    ctx = make_context(kernel=FakeKernel(compute=_reference_kernel), numerics=TorchNumerics("cpu"),
                       shapes=small_shapes(q_lens=(1, 4)))
    results = run_stages(ctx)
    by_id = {r.id: r for r in results}
    assert by_id["kernel"].status is Status.PASS, by_id["kernel"].reason
    assert by_id["timing"].status is Status.PASS
    assert exit_code(results) == 0


def test_stages_with_a_corrupting_kernel():
    ctx = make_context(kernel=FakeKernel(compute=_corrupt_kernel), numerics=TorchNumerics("cpu"), shapes=small_shapes())
    by_id = {r.id: r for r in run_stages(ctx)}
    assert by_id["kernel"].status is Status.FAIL
    assert "cp_rank 1 (q_len 1)" in by_id["kernel"].reason


# --- the real adapter against the fake flashinfer package -----------------------------------------
@pytest.fixture
def fake_flashinfer(monkeypatch):
    """Put a fake flashinfer tree first on sys.path for one test, then forget it again."""

    def install(tree: str):
        for name in [m for m in sys.modules if m == "flashinfer" or m.startswith("flashinfer.")]:
            monkeypatch.delitem(sys.modules, name)
        monkeypatch.syspath_prepend(str(FAKES / tree))

    yield install
    for name in [m for m in sys.modules if m == "flashinfer" or m.startswith("flashinfer.")]:
        del sys.modules[name]


def _adapter_run(device, shapes=None, packages=None):
    from kimi_lsp.verify.adapters import FlashinferKernel

    numerics = TorchNumerics("cpu")
    ctx = make_context(kernel=FlashinferKernel(), device=FakeDevice(device), numerics=numerics,
                       shapes=shapes or default_shapes(seq_lens=(130, 257)), packages=packages)
    ctx = dataclasses.replace(ctx, timer=FakeTimer())
    results = run_stages(ctx)
    return {r.id: r for r in results}, exit_code(results)


def test_flashinfer_adapter_on_the_new_fake(fake_flashinfer, monkeypatch):
    fake_flashinfer("new")
    monkeypatch.delenv("FAKE_FLASHINFER_CC", raising=False)
    by_id, code = _adapter_run(B200)
    assert by_id["signature-runtime"].status is Status.PASS
    assert by_id["arch"].evidence["is_cute_dsl_arch_supported"] is True
    assert by_id["contract"].status is Status.PASS, by_id["contract"].evidence
    assert by_id["kernel"].status is Status.PASS, by_id["kernel"].reason
    assert code == 0


def test_flashinfer_adapter_on_the_new_fake_as_h200(fake_flashinfer, monkeypatch):
    fake_flashinfer("new")
    monkeypatch.setenv("FAKE_FLASHINFER_CC", "9.0")
    by_id, code = _adapter_run(H200)
    assert by_id["contract"].status is Status.PASS
    assert "requires SM100+, got SM90" in by_id["contract"].evidence["valid_call_below_sm100"]["got"]
    assert code == 4


def test_flashinfer_adapter_on_the_old_fake(fake_flashinfer):
    fake_flashinfer("old")
    packages = FakePackages(versions={"flashinfer-python": "0.6.16.post4"}, flashinfer_dir=FAKES / "old" / "flashinfer")
    by_id, code = _adapter_run(B200, packages=packages)
    assert by_id["signature-runtime"].status is Status.FAIL
    assert "got an unexpected keyword argument 'enable_dcp'" in by_id["contract"].reason
    assert code == 1


def test_flashinfer_adapter_on_the_mismatch_fake(fake_flashinfer):
    fake_flashinfer("mismatch")
    by_id, code = _adapter_run(B200)
    assert by_id["signature-runtime"].status is Status.FAIL
    assert "does not match flashinfer version" in by_id["signature-runtime"].reason
    assert code == 1
