from __future__ import annotations

from kimi_lsp.cli.main import entry

if __name__ == "__main__":
    entry()
