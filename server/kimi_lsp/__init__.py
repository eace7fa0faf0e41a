"""kimi-lsp: catch sglang launch failures while the launch is being written."""
from __future__ import annotations

__version__ = "0.1.0"

import sys as _sys


def _short_command(args: list[str]) -> bool:
    """Whether the console script's arguments ask for a short command (``--check``, ``rules``,
    ``explain``, ``export``), which ``cli.main.entry`` runs with the cyclic collector paused;
    not the server or ``verify``, which collect as usual, nor a bare ``kimi-lsp``."""
    return bool(args) and args[0] not in ("serve", "verify")


# Paused already where the package is first imported, when the process is the ``kimi-lsp``
# script running a short command: importing allocates much and frees little, and two collections
# before ``entry`` runs cost ~0.1 ms of a ~30 ms check.
_main_file = getattr(_sys.modules.get("__main__"), "__file__", None) or ""
if (_main_file.replace("\\", "/").rpartition("/")[2] in ("kimi-lsp", "kimi-lsp-script.py", "kimi-lsp-script.pyw")
        and _short_command(_sys.argv[1:])):
    import gc as _gc

    _gc.disable()
del _main_file

from kimi_lsp import _imports  # noqa: E402

_imports.install()  # the package's bytecode from one file (start-up time: see _imports.py)
_imports.pathlib_without_urllib()
