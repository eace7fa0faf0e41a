"""``re.compile`` whose compiled programs are kept across runs (``_kept.py``).

Compiling the ~60 regular expressions a one-file ``--check`` uses is ~6 ms of each start: ``re``
parses and compiles patterns in Python. The program it produces for a pattern is a list of ints
that only the interpreter's version decides, so it is kept, keyed by the pattern, its flags and
the interpreter (version and ``_sre.MAGIC``), and handed straight to ``_sre.compile`` on the next
start, which validates it.

A program is kept only after the pattern it builds compares equal to ``re.compile``'s own (Pattern
equality covers the flags, the pattern and the whole program). The program comes from ``re``'s
private compiler, so this runs only where ``_kept.FAST`` says so (the CPython versions it was
tested on, without ``KIMI_LSP_PLAIN_STARTUP=1``); elsewhere, or should anything here fail,
``compile`` is ``re.compile``.
"""
from __future__ import annotations

import re
import sys

from kimi_lsp import _kept

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any, AnyStr

_TAG: Any = None
if _kept.FAST:
    try:
        import _sre  # type: ignore[import-not-found]  # CPython's regex engine (no stub)

        _TAG = (sys.version, _sre.MAGIC, _sre.CODESIZE)
    except (ImportError, AttributeError):  # pragma: no cover - not CPython
        pass

_programs = _kept.Kept("regex_programs", _TAG)


def compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:  # noqa: A001 - re.compile's stand-in
    """``re.compile(pattern, flags)``, its program read from the previous runs when kept."""
    if _TAG is None:
        return re.compile(pattern, flags)
    key = (_TAG, pattern, int(flags))
    entry = _programs.get(key)
    if entry is not None:
        try:
            return _sre.compile(pattern, *entry)  # type: ignore[no-any-return]
        except Exception:  # noqa: BLE001 - a program this interpreter refuses: compile it anew
            pass
    compiled = re.compile(pattern, flags)
    entry = _program(pattern, int(flags))
    if entry is not None:
        try:
            if _sre.compile(pattern, *entry) == compiled:
                _programs.put(key, entry)
        except Exception:  # noqa: BLE001,S110 - not kept: re.compile's pattern is used either way
            pass
    return compiled


def _program(pattern: Any, flags: int) -> tuple[Any, ...] | None:
    """What ``re``'s compiler passes to ``_sre.compile`` for this pattern (3.10-3.13 alike)."""
    try:
        try:
            from re import _compiler, _parser  # type: ignore[attr-defined]
        except ImportError:  # Python 3.10
            import sre_compile as _compiler
            import sre_parse as _parser
        parsed = _parser.parse(pattern, flags)
        code = _compiler._code(parsed, flags)
        groupindex = parsed.state.groupdict
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, i in groupindex.items():
            indexgroup[i] = name
        # plain ints: the compiler's opcodes are int subclasses, which marshal does not keep
        return (int(flags | parsed.state.flags), [int(op) for op in code], int(parsed.state.groups - 1),
                {str(k): int(v) for k, v in groupindex.items()}, tuple(indexgroup))
    except Exception:  # noqa: BLE001 - internals that changed: nothing is kept
        return None
