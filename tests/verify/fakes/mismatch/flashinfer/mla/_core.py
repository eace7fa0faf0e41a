"""Fake 0.6.17 MLA decode: the 31-parameter signature, DCP argument checks in flashinfer's order
with messages containing flashinfer's phrases, and an fp32 torch computation from the paged
cache (independent of kimi-lsp's reference, which works from the unpaged KV)."""
import os


def _capability():
    major, minor = os.environ.get("FAKE_FLASHINFER_CC", "10.0").split(".")
    return int(major), int(minor)


def trtllm_batch_decode_with_kv_cache_mla(
    query,
    kv_cache,
    workspace_buffer,
    qk_nope_head_dim,
    kv_lora_rank,
    qk_rope_head_dim,
    block_tables,
    seq_lens,
    max_seq_len,
    sparse_mla_top_k=0,
    out=None,
    bmm1_scale=1.0,
    bmm2_scale=1.0,
    sinks=None,
    skip_softmax_threshold_scale_factor=None,
    enable_pdl=None,
    backend="auto",
    is_var_seq=True,
    uses_shared_paged_kv_idx=True,
    lse=None,
    return_lse=False,
    cute_dsl_impl="auto",
    kv_scale_format="auto",
    cum_seq_lens_q=None,
    max_q_len=None,
    multi_ctas_kv_counter_buffer=None,
    sparse_mla_top_k_lens=None,
    enable_dcp=False,
    cp_world=1,
    cp_rank=0,
    causal_seqlens_kv_global=None,
):
    if not enable_dcp:
        if cp_world != 1 or cp_rank != 0 or causal_seqlens_kv_global is not None:
            raise ValueError("DCP arguments require enable_dcp=True")
        raise NotImplementedError("fake flashinfer: only the DCP path is modelled")
    if query.ndim != 4:
        raise ValueError("enable_dcp=True requires a 4-D query")
    if not 0 <= cp_rank < cp_world:
        raise ValueError(f"cp_rank must be in [0, cp_world), got {cp_rank} for cp_world={cp_world}")
    if backend not in ("auto", "cute-dsl"):
        raise ValueError("enable_dcp=True is only supported by backend='cute-dsl'")
    if not return_lse:
        raise ValueError("enable_dcp=True requires return_lse=True: DCP returns rank-local states")
    if sinks is not None or cum_seq_lens_q is not None or max_q_len is not None:
        raise ValueError("enable_dcp=True does not support sinks or variable q lengths")
    if causal_seqlens_kv_global is None:
        raise ValueError("enable_dcp=True requires causal_seqlens_kv_global")
    if skip_softmax_threshold_scale_factor is not None:
        raise ValueError("cute-dsl does not support skip_softmax_threshold_scale_factor")
    if not isinstance(bmm1_scale, float) or not isinstance(bmm2_scale, float):
        raise TypeError("cute-dsl needs Python float scales")
    if max_seq_len <= 0:
        raise ValueError("max_seq_len must be > 0")
    page_size = kv_cache.shape[-2]
    if block_tables.shape[1] % (128 // page_size):
        raise ValueError("block_tables width must be a multiple of 128 / page_size")
    major, minor = _capability()
    if major < 10:
        raise ValueError(f"cute-dsl backend (MLA decode kernel) requires SM100+, got SM{major}{minor}")

    import torch

    q = query.float()
    batch, q_len, heads, dim = q.shape
    cache = kv_cache.reshape(-1, page_size, dim).float()
    result = torch.zeros(batch, q_len, heads, kv_lora_rank, dtype=torch.float32)
    lse_out = torch.full((batch, q_len, heads), float("-inf"), dtype=torch.float32)
    for b in range(batch):
        local = int(seq_lens[b])
        bound_newest = int(causal_seqlens_kv_global[b])
        pages = block_tables[b, : -(-local // page_size)].long()
        keys = cache[pages].reshape(-1, dim)[:local]
        positions = torch.arange(local) * cp_world + cp_rank
        for t in range(q_len):
            selected = keys[positions < bound_newest - (q_len - 1) + t]
            if selected.shape[0] == 0:
                continue
            scores = (q[b, t] @ selected.T) * bmm1_scale
            lse_out[b, t] = torch.logsumexp(scores, dim=-1)
            result[b, t] = torch.softmax(scores, dim=-1) @ selected[:, :kv_lora_rank] * bmm2_scale
    return result.to(torch.bfloat16), lse_out.reshape(batch * q_len, heads)
