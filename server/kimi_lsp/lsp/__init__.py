"""The kimi-lsp language server (pygls 2): ``kimi_lsp.lsp.server.run`` is the entry point."""
