"""Suite-wide setup.

The ``--check`` result cache (kimi_lsp/cache.py) is off for every test, and for every process a
test starts, so that one test's run cannot answer another's; tests/test_cache.py turns it on
where it is the subject.
"""
import os

os.environ["KIMI_LSP_NO_CACHE"] = "1"
