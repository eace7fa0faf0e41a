"""A fake flashinfer 0.6.17 for kimi-lsp verify tests, not flashinfer code: the DCP MLA decode
signature, the argument checks verify's contract stage expects, and a slow pure-torch stand-in
for the kernel. FAKE_FLASHINFER_TORCH_FREE=1 lets it import without torch (CI);
FAKE_FLASHINFER_CC="9.0" makes it behave as on that compute capability."""
import os

if not os.environ.get("FAKE_FLASHINFER_TORCH_FREE"):
    import torch  # noqa: F401  - the real package cannot be imported without torch

__version__ = "0.6.17"
