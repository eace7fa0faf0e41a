"""Pipfile (TOML): ``[packages]``, ``[dev-packages]`` and custom categories.

Values are ``"==0.6.10"``, ``"*"``, or ``{version = "==0.6.10", extras = [...], markers = "..."}``
(lockfiles.md §4.6). Pins of ``[packages]`` have group None; other categories keep their name.
"""
from __future__ import annotations

from kimi_lsp.pins._pep508 import failed_source, parse_toml
from kimi_lsp.pins.model import PinFormat, PinProblem, PinSource
from kimi_lsp.pins.pyproject import _Collector
from kimi_lsp.workspace import SourceText, Workspace

# Top-level tables of a Pipfile that are not package categories.
_NOT_CATEGORIES = {"source", "requires", "pipenv", "scripts"}


def read_pipfile(source: SourceText, workspace: Workspace | None = None) -> PinSource:
    from kimi_lsp.syntax.toml import locate

    data = parse_toml(source)
    if isinstance(data, PinProblem):
        return PinSource(source.path, PinFormat.PIPFILE, False, (), tool="pipenv", problems=(data,))
    try:
        c = _Collector(source, locate(source.text))
        for category, table in data.items():
            if category in _NOT_CATEGORIES or not isinstance(table, dict):
                continue
            group = None if category == "packages" else category
            for name, value in table.items():
                c.keyed((category,), name, value, poetry=False, group=group)
        return PinSource(source.path, PinFormat.PIPFILE, False, tuple(c.pins), tool="pipenv", problems=tuple(c.problems))
    except Exception as exc:
        return failed_source(source.path, PinFormat.PIPFILE, f"could not read {source.path.name}: {exc}")
