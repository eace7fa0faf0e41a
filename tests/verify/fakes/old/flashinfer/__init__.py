"""A fake flashinfer 0.6.16.post4 for kimi-lsp verify tests (signature only, not flashinfer code).
FAKE_FLASHINFER_TORCH_FREE=1 lets it import without torch."""
import os

if not os.environ.get("FAKE_FLASHINFER_TORCH_FREE"):
    import torch  # noqa: F401

__version__ = "0.6.16.post4"
