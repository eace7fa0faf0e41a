"""`kimi-lsp verify`: check on this host the flashinfer DCP MLA decode kernel a Kimi-K3 launch uses.

Importing this package imports neither torch nor flashinfer; only verify/adapters.py does, lazily.
The command's entry point is kimi_lsp.verify.cli:main.
"""
