"""Fake 0.6.16.post4 MLA decode: the 26-parameter signature, before DCP. Signature only."""


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
):
    raise NotImplementedError("fake flashinfer 0.6.16.post4: signature only")
