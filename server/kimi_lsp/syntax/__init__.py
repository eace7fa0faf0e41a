"""The one reader per language, with positions: shell, Dockerfile, YAML, TOML.

Everything above this floor (``surfaces/`` asks "where is the launch", ``pins/`` asks "which words
are pins", ``config.py``) reads text through these modules and never lexes it again. Modules here
import only the standard library, PyYAML/tomllib, and ``kimi_lsp.text`` / ``kimi_lsp.diagnostics``.
"""
