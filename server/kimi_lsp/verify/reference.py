"""Pure-torch reference for flashinfer's DCP MLA decode, the rank LSE merge, and the comparison.

Follows flashinfer's own DCP test (tests/attention/test_cute_dsl_mla_dcp.py at v0.6.17): rank r
holds global positions g with g % W == r, cyclically packed into fresh pages; query token t of S
sees g < G - (S - 1) + t; LSE is the natural log; a row with no visible key is O = 0, LSE = -inf.
torch is imported inside the functions, so importing this module costs nothing without it.
The packing arithmetic at the top is plain Python and is tested without torch.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kimi_lsp.verify.model import Comparison, Tolerance
from kimi_lsp.verify.shapes import Shapes

_SEED_SCALE = 0.1  # upstream: randn(...) * 0.1 for both query and KV


def local_len(global_len: int, world: int, rank: int) -> int:
    """Tokens of a length-``global_len`` sequence that rank ``rank`` of ``world`` stores."""
    return max(-(-(global_len - rank) // world), 0)


def pages_for(tokens: int, page_size: int) -> int:
    return -(-tokens // page_size)


def block_table_width(max_pages: int, page_size: int) -> int:
    """Columns of the block table: the public API needs a multiple of 128 / page_size
    (flashinfer _core.py:718-723) and sglang pads to it as well."""
    align = max(128 // page_size, 1)
    return max(-(-max_pages // align), 1) * align


def visible_positions(global_len: int, q_len: int, t: int, world: int, rank: int) -> range:
    """Global KV positions rank ``rank`` contributes to query token ``t`` (causal bound)."""
    bound = max(global_len - (q_len - 1) + t, 0)
    return range(rank, bound, world)


@dataclass(frozen=True)
class Attention:
    out: Any  # [B, S, H, kv_lora_rank]
    lse: Any  # [B, S, H] float32, natural log


@dataclass(frozen=True)
class RankInputs:
    kv_cache: Any  # [pages, 1, page_size, 576], sglang's paged_row_view(...).unsqueeze(1)
    block_tables: Any  # int32 [B, P]
    seq_lens: Any  # int32 [B], rank-local
    max_seq_len: int  # rank-local, at least 1 (the kernel refuses 0)
    local_lens: tuple[int, ...]


@dataclass(frozen=True)
class DecodeCase:
    shapes: Shapes
    q_len: int
    world: int
    scale: float
    seq_lens: tuple[int, ...]  # global lengths, the causal bound of the newest token
    query: Any  # [B, S, H, 576] in the kernel's dtype
    global_kv: Any  # [B, Gmax, 576] in the kernel's dtype
    causal: Any  # int32 [B] global lengths (causal_seqlens_kv_global)
    ranks: tuple[RankInputs, ...]


def torch_dtype(kv_dtype: str) -> Any:
    import torch

    return {"bf16": torch.bfloat16, "fp8_e4m3": torch.float8_e4m3fn}[kv_dtype]


def _pack_rank(kv32: Any, seq_lens: Sequence[int], world: int, rank: int, page_size: int, dtype: Any) -> RankInputs:
    import torch

    batch, _, dim = kv32.shape
    lens = tuple(local_len(g, world, rank) for g in seq_lens)
    pages = [pages_for(n, page_size) for n in lens]
    width = block_table_width(max(pages), page_size)
    # built in fp32 and cast once: the values are already representable in the kernel dtype,
    # and indexed writes into float8 tensors are not supported on every device
    cache = torch.zeros(max(sum(pages), 1), page_size, dim, dtype=torch.float32, device=kv32.device)
    table = torch.zeros(batch, width, dtype=torch.int32)
    next_page = 0
    for b, global_len in enumerate(seq_lens):
        tokens = kv32[b, rank:global_len:world]
        for p in range(pages[b]):
            chunk = tokens[p * page_size : (p + 1) * page_size]
            cache[next_page, : chunk.shape[0]] = chunk
            table[b, p] = next_page
            next_page += 1
    return RankInputs(
        kv_cache=cache.to(dtype).unsqueeze(1),
        block_tables=table.to(kv32.device).contiguous(),
        seq_lens=torch.tensor(lens, dtype=torch.int32, device=kv32.device),
        max_seq_len=max(1, max(lens)),
        local_lens=lens,
    )


def make_case(shapes: Shapes, q_len: int, device: str, seed: int = 0) -> DecodeCase:
    import torch

    dims = shapes.dims
    dtype = torch_dtype(shapes.kv_dtype)
    generator = torch.Generator(device="cpu").manual_seed(seed)
    batch, heads, dim = shapes.batch_size, shapes.heads, dims.head_dim_qk
    # round through the kernel dtype so the reference sees exactly the kernel's inputs
    query32 = (torch.randn(batch, q_len, heads, dim, generator=generator) * _SEED_SCALE).to(dtype).float()
    kv32 = (torch.randn(batch, max(shapes.seq_lens), dim, generator=generator) * _SEED_SCALE).to(dtype).float()
    query32, kv32 = query32.to(device), kv32.to(device)
    ranks = tuple(
        _pack_rank(kv32, shapes.seq_lens, shapes.dcp_size, r, shapes.page_size, dtype)
        for r in range(shapes.dcp_size)
    )
    return DecodeCase(
        shapes=shapes, q_len=q_len, world=shapes.dcp_size, scale=dims.softmax_scale,
        seq_lens=shapes.seq_lens, query=query32.to(dtype), global_kv=kv32.to(dtype),
        causal=torch.tensor(shapes.seq_lens, dtype=torch.int32, device=device), ranks=ranks,
    )


def reference(case: DecodeCase, world: int, rank: int) -> Attention:
    """fp32 attention over the positions rank ``rank`` of ``world`` holds."""
    import torch

    q = case.query.float()
    kv = case.global_kv.float()
    batch, q_len, heads, _ = q.shape
    latent = case.shapes.dims.kv_lora_rank
    out = torch.zeros(batch, q_len, heads, latent, dtype=torch.float32, device=q.device)
    lse = torch.full((batch, q_len, heads), float("-inf"), dtype=torch.float32, device=q.device)
    for b, global_len in enumerate(case.seq_lens):
        for t in range(q_len):
            visible = visible_positions(global_len, q_len, t, world, rank)
            if not len(visible):
                continue
            keys = kv[b, visible.start : visible.stop : visible.step]
            scores = (q[b, t] @ keys.T) * case.scale  # [H, n]
            lse[b, t] = torch.logsumexp(scores, dim=-1)
            out[b, t] = torch.softmax(scores, dim=-1) @ keys[:, :latent]
    return Attention(out, lse)


def merge(parts: Sequence[Attention]) -> Attention:
    """Combine rank states: w_r = exp(lse_r - max lse), out = sum w_r out_r / sum w_r."""
    import torch

    # the kernel hands LSE back as [B*S, H]; line it up with out's [B, S, H]
    lses = torch.stack([p.lse.float().reshape(p.out.shape[:-1]) for p in parts])  # [W, B, S, H]
    outs = torch.stack([p.out.float() for p in parts])  # [W, B, S, H, L]
    top = lses.max(dim=0).values
    safe_top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    weights = torch.where(torch.isfinite(lses), torch.exp(lses - safe_top), torch.zeros_like(lses))
    total = weights.sum(dim=0)
    out = (weights.unsqueeze(-1) * outs).sum(dim=0) / total.clamp_min(torch.finfo(torch.float32).tiny).unsqueeze(-1)
    out = torch.where((total > 0).unsqueeze(-1), out, torch.zeros_like(out))
    lse = torch.where(total > 0, safe_top + torch.log(total.clamp_min(torch.finfo(torch.float32).tiny)),
                      torch.full_like(total, float("-inf")))
    return Attention(out, lse)


def compare(actual: Attention, expected: Attention, tol: Tolerance) -> Comparison:
    import torch

    exp_out = expected.out.float()
    exp_lse = expected.lse.float()
    act_out = actual.out.float().reshape(exp_out.shape).to(exp_out.device)
    act_lse = actual.lse.float().reshape(exp_lse.shape).to(exp_lse.device)

    nans = int(torch.isnan(act_out).sum()) + int(torch.isnan(act_lse).sum())
    out_err = (act_out - exp_out).abs()
    out_bad = out_err > tol.out_atol + tol.out_rtol * exp_out.abs()

    exp_finite, act_finite = torch.isfinite(exp_lse), torch.isfinite(act_lse)
    # a row with no visible key must stay empty, and a row with keys must not become empty
    bad_empty = int((~exp_finite & act_finite).sum()) + int((exp_finite & ~act_finite & ~torch.isnan(act_lse)).sum())
    both = exp_finite & act_finite
    lse_err = torch.where(both, (act_lse - exp_lse).abs(), torch.zeros_like(exp_lse))
    lse_bad = both & (lse_err > tol.lse_atol + tol.lse_rtol * exp_lse.abs())

    finite_out_err = out_err[torch.isfinite(out_err)]
    return Comparison(
        out_max_abs_err=float(finite_out_err.max()) if finite_out_err.numel() else 0.0,
        lse_max_abs_err=float(lse_err.max()) if lse_err.numel() else 0.0,
        out_mismatches=int(out_bad.sum()),
        lse_mismatches=int(lse_bad.sum()),
        nans=nans,
        bad_empty_rows=bad_empty,
    )


class TorchNumerics:
    """The Numerics protocol on one torch device."""

    def __init__(self, device: str) -> None:
        self.device = device

    def make_case(self, shapes: Shapes, q_len: int, seed: int = 0) -> DecodeCase:
        return make_case(shapes, q_len, self.device, seed)

    def reference_rank(self, case: DecodeCase, rank: int) -> Attention:
        return reference(case, case.world, rank)

    def reference_global(self, case: DecodeCase) -> Attention:
        return reference(case, 1, 0)

    def merge(self, parts: Sequence[Attention]) -> Attention:
        return merge(parts)

    def compare(self, actual: Attention, expected: Attention, tol: Tolerance) -> Comparison:
        return compare(actual, expected, tol)

    def kv_bytes(self, case: DecodeCase, rank: int) -> int:
        item: int = case.global_kv.element_size()  # torch is untyped here (not installed where mypy runs)
        return sum(case.ranks[rank].local_lens) * case.shapes.dims.head_dim_qk * item
