"""kimi-lsp: catch sglang launch failures while the launch is being written."""
from __future__ import annotations

__version__ = "0.1.0"

from kimi_lsp import _imports

_imports.install()  # the package's bytecode from one file (start-up time: see _imports.py)
_imports.pathlib_without_urllib()
