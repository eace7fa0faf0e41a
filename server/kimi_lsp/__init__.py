"""kimi-lsp: catch sglang launch failures while the launch is being written."""
from __future__ import annotations

__version__ = "0.1.0"
