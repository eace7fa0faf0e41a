"""The rule registry is the rule files, each once, in code order (rules/__init__.py ``_MODULES``).

How their bytecode is read (one kept file, ``_imports.py``) is tested in test_imports.py.
"""
from __future__ import annotations

from pathlib import Path

import kimi_lsp.rules as rules


def test_every_rule_file_is_registered_once_in_order() -> None:
    files = sorted(p.stem for p in Path(rules.__file__).parent.glob("kl*.py"))
    assert list(rules._MODULES) == files  # the explicit list is the files, in code order
    assert [r.code for r in rules.LAUNCH_RULES] == sorted(r.code for r in rules.LAUNCH_RULES)
