"""kimi-lsp: catch sglang launch failures while the launch is being written."""
from __future__ import annotations

__version__ = "0.1.0"

import sys as _sys

# The console script's short commands (``--check``, ``rules``, ``explain``, ``export``) run with
# the cyclic collector paused (``cli.main.entry``: importing allocates much and frees little, two
# collections here cost ~0.3 ms of a ~30 ms check). Paused already where the package is first
# imported, for exactly the runs ``entry`` pauses it for: the ``kimi-lsp`` script, neither
# ``serve`` nor ``verify`` (which collect as usual), and not a bare ``kimi-lsp``.
_main_file = getattr(_sys.modules.get("__main__"), "__file__", None) or ""
if (_main_file.replace("\\", "/").rpartition("/")[2] in ("kimi-lsp", "kimi-lsp-script.py", "kimi-lsp-script.pyw")
        and _sys.argv[1:2] and _sys.argv[1] not in ("serve", "verify")):
    import gc as _gc

    _gc.disable()
del _main_file

from kimi_lsp import _imports  # noqa: E402

_imports.install()  # the package's bytecode from one file (start-up time: see _imports.py)
_imports.pathlib_without_urllib()
