"""The import layering of docs/architecture.md, enforced.

Every module of ``kimi_lsp`` belongs to a unit (``syntax``, ``surfaces``, ``pins``, ``engine``, …)
and every unit sits on a floor. A unit may import from units on lower floors only — module-level
and function-level imports alike, since a lazy import is still a dependency. That keeps the
readers (syntax) ignorant of what reads them, keeps the engine the one place that joins
surfaces, pins and rules, and keeps pygls out of everything but the language server.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "kimi_lsp"

# floor -> units. Lower floors know nothing of higher ones.
FLOORS: dict[int, tuple[str, ...]] = {
    0: ("_kept", "_toml"),
    1: ("_imports", "_record", "_regex"),
    2: ("kimi_lsp", "text", "pep440", "markers"),  # the package root holds __version__ and installs _imports
    3: ("diagnostics", "workspace", "settings_schema"),
    4: ("syntax", "suppression", "walk", "gitdate"),
    5: ("knowledge", "surfaces"),
    6: ("pins", "launch", "cache"),
    7: ("config", "fixes", "evidence"),
    8: ("rules", "release"),
    9: ("engine", "catalogue"),
    10: ("batch", "verify", "launch_info"),
    11: ("lsp",),
    12: ("cli",),
    13: ("__main__",),
}
FLOOR = {unit: floor for floor, units in FLOORS.items() for unit in units}

# The one upward edge, and why: settings validate `select`/`ignore` against the rule registry,
# and the registry's rules read settings. The import is lazy (inside the validator), so loading
# settings never loads the rules.
EXCEPTIONS = {("config", "rules")}

# Only the language server speaks LSP; `kimi-lsp --check` must not even find pygls on its path.
LSP_ONLY = ("pygls", "lsprotocol")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _unit(module: str) -> str:
    parts = module.split(".")
    return "kimi_lsp" if len(parts) == 1 else parts[1]


def _is_submodule(name: str) -> bool:
    return (PACKAGE / f"{name}.py").exists() or (PACKAGE / name / "__init__.py").exists()


def _imports(path: Path) -> list[tuple[str, int]]:
    """(absolute module name, line) of every import in the file, relative ones resolved."""
    mod = _module_name(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            out.extend((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "kimi_lsp":  # `from kimi_lsp import suppression`: the submodule is the dependency
                out.extend((f"kimi_lsp.{a.name}" if _is_submodule(a.name) else target, node.lineno) for a in node.names)
            else:
                out.append((target, node.lineno))
    return out


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_unit_has_a_floor() -> None:
    units = {_unit(_module_name(p)) for p in MODULES}
    assert units <= set(FLOOR), f"units without a floor in docs/architecture.md: {sorted(units - set(FLOOR))}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path: Path) -> None:
    src = _unit(_module_name(path))
    upward = []
    for target, line in _imports(path):
        if not target.startswith("kimi_lsp."):
            continue
        dst = _unit(target)
        if dst == src or (src, dst) in EXCEPTIONS:
            continue
        if FLOOR.get(dst, 99) >= FLOOR[src]:
            upward.append(f"line {line}: {src} (floor {FLOOR[src]}) imports {target} (floor {FLOOR.get(dst)})")
    assert not upward, "\n".join(upward)


@pytest.mark.parametrize("path", [p for p in MODULES if _unit(_module_name(p)) != "lsp"],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_the_language_server_imports_pygls(path: Path) -> None:
    bad = [f"line {line}: {t}" for t, line in _imports(path) if t.split(".")[0] in LSP_ONLY]
    assert not bad, "\n".join(bad)


def test_the_test_can_fail() -> None:
    """The checker itself sees an upward import (a guard against a vacuous pass)."""
    imports = dict(_imports(PACKAGE / "engine.py"))
    assert any(t.startswith("kimi_lsp.rules") for t in imports)
    assert FLOOR["rules"] < FLOOR["engine"]  # so rules importing the engine would be reported
