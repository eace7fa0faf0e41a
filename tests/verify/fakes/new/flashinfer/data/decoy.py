# Bundled third-party trees live under data/; verify's static scan must never read them.
def trtllm_batch_decode_with_kv_cache_mla(query):
    raise NotImplementedError
