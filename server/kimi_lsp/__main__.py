"""``python -m kimi_lsp``: the same entry point as the ``kimi-lsp`` script.

``python -m`` puts the working directory first on ``sys.path``. Run from a repository (as editors
and pre-commit do), a ``yaml/``, ``packaging/``, ``torch/`` or ``flashinfer/`` directory there
would be imported in place of the real package: code from the linted repository would run. The
working directory is taken off the path before anything else is imported. (A ``kimi_lsp/``
directory there is imported before this file runs; only ``python -P`` or a working directory
outside the repository avoids that, see docs/editors.md.)
"""
from __future__ import annotations

import os
import sys


def _without_working_directory(path: list[str]) -> list[str]:
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:  # a deleted working directory: nothing of it can be imported anyway
        cwd = None
    out = []
    for entry in path:
        if entry in ("", "."):
            continue
        try:
            if cwd is not None and os.path.realpath(entry) == cwd:
                continue
        except (OSError, ValueError):
            pass
        out.append(entry)
    return out


if __name__ == "__main__":
    sys.path[:] = _without_working_directory(sys.path)
    from kimi_lsp.cli.main import entry

    entry()
