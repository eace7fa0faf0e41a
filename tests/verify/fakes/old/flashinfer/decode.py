from .mla import trtllm_batch_decode_with_kv_cache_mla  # noqa: F401
