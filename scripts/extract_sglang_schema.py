#!/usr/bin/env python3
"""Extract sglang's CLI argument schema, statically, from the released wheels.

Adding a new sglang release: `scripts/add_sglang_release.py 0.5.24 [--wheel PATH]` runs `--add` below
and writes every other per-release file from the same one wheel (launch checks, build date, release
table row, retired flags). This script alone stores only the schema:

    python3 scripts/extract_sglang_schema.py --add 0.5.24

Other uses:

    python3 scripts/extract_sglang_schema.py 0.5.23 [--wheel PATH] [--out PATH]   one release's document
    python3 scripts/extract_sglang_schema.py --rebuild     re-extract every shipped release
    python3 scripts/extract_sglang_schema.py --verify      re-extract all, compare with the store

Wheels are fetched with `pip download --no-deps` into ~/.cache/kimi-lsp/wheels (never into the
repository) and read straight from the zip with `ast`: nothing of sglang is imported, so neither
torch nor any other heavy dependency is needed. The recipe follows shared/reference/sglang.md
§2.2 and covers both generations of sglang's parser: the hand-written `parser.add_argument` calls
of the dataclass `ServerArgs.add_cli_args` (0.4.x to 0.5.20) and `add_cli_args_from_dataclass`
over the msgspec namespaces (0.5.21 on), with the `--config` merger of each release (none in
0.4.x; the verbatim `boolean_actions` merger of 0.5.1-0.5.7; dest-keyed from 0.5.8; dest and long
options from 0.5.23). It records what argparse would hold for every action.

`--add`/`--rebuild` pack every release into the one store kimi-lsp ships,
server/kimi_lsp/knowledge/data/sglang-schemas.tsv (format: scripts/sglang_schema_store.py), and
write the sha256 of each release's extractor document to tests/data/oracle/extractor-digests.json,
so that tests/unit/test_schema_store.py proves the store unpacks to exactly that. A release the
extractor cannot reproduce exactly is left out of the store (reason on stderr, exit status 1),
never shipped as a guess. Shipped: every release on the index from 0.4.0 to 0.5.23, .postN
included (92); none had to be left out.

`scripts/sglang_oracle.py` dumps the same shape from sglang's real parser; tests/unit/test_schema.py
compares the two for the releases with committed dumps (0.4.0, 0.4.10.post2, 0.5.5, 0.5.10,
0.5.21-0.5.23). Run once over the whole range, the oracle worked for 71 of the 92 releases and
matched the extractor on every flag and section of all 71; the other 21 (0.4.3.post1-0.4.4.post1,
0.5.4, 0.5.4.post1, 0.5.11-0.5.20) need a transformers or pydantic of their own day, which the
oracle venv does not build, so they are checked by the extractor's structural rules only.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))

from kimi_lsp.knowledge.schema import (  # noqa: E402  (the path is set up just above)
    ACTION_NAMES,
    HELP_ACTION,
    SUPPRESS,
    TYPE_NAMES,
)

CACHE = Path(os.environ.get("KIMI_LSP_CACHE", Path.home() / ".cache" / "kimi-lsp"))
DATA = REPO / "server" / "kimi_lsp" / "knowledge" / "data"
STORE = DATA / "sglang-schemas.tsv"
# sha256 of each release's extractor document: what the packed store must unpack to.
DIGESTS = REPO / "tests" / "data" / "oracle" / "extractor-digests.json"


# ---------------------------------------------------------------------------------------------
# Fetching and reading the wheel
# ---------------------------------------------------------------------------------------------


def fetch_wheel(version: str) -> Path:
    """The cached wheel of `version`, downloaded once; the index is whatever pip is set up with."""
    dest = CACHE / "wheels"
    dest.mkdir(parents=True, exist_ok=True)
    found = sorted(dest.glob(f"sglang-{version}-*.whl"))
    if found:
        return found[0]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         f"sglang=={version}", "-d", str(dest)],
        check=True,
    )
    found = sorted(dest.glob(f"sglang-{version}-*.whl"))
    if not found:
        raise SystemExit(f"pip did not leave a wheel of sglang {version} in {dest}")
    return found[0]


class Unresolvable(Exception):
    """A value that cannot be known without running sglang (f-string over a runtime value, ...)."""


@dataclass(frozen=True)
class Ref:
    """A name that is not a plain value: a type, a function, a class, a module or a foreign name."""

    kind: str  # "type" | "func" | "class" | "module" | "external"
    name: str  # type name; qualified name for external ones
    module: str | None = None  # the sglang module that defines a func/class


@dataclass(frozen=True)
class EnumMember:
    name: str
    value: object


@dataclass
class Module:
    name: str
    tree: ast.Module
    assigns: dict[str, ast.expr] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # alias -> (module, name)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)  # `from M import *`, in order


# Standard-library constants that appear as defaults; the values are those of the 64-bit
# CPython sglang runs on.
STDLIB_CONSTANTS: dict[str, Any] = {"sys.maxsize": 2**63 - 1}

BUILTIN_TYPES = {"str", "int", "float", "bool", "list", "dict", "tuple", "set", "frozenset"}


class Wheel:
    """The sglang package inside a wheel, module by module, plus a small constant evaluator."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zip = zipfile.ZipFile(path)
        self.names = set(self.zip.namelist())
        self._modules: dict[str, Module | None] = {}
        self._evaluating: set[tuple[str, str]] = set()

    def source(self, relpath: str) -> str:
        return self.zip.read(relpath).decode("utf-8")

    def module(self, name: str) -> Module | None:
        if name in self._modules:
            return self._modules[name]
        base = name.replace(".", "/")
        mod = None
        for rel in (base + ".py", base + "/__init__.py"):
            if rel in self.names:
                mod = self._index(name, ast.parse(self.source(rel)), package=rel.endswith("__init__.py"))
                break
        self._modules[name] = mod
        return mod

    @staticmethod
    def _index(name: str, tree: ast.Module, package: bool) -> Module:
        mod = Module(name, tree)
        pkg = name if package else name.rpartition(".")[0]
        for node in tree.body:
            for sub in _flatten_module_stmt(node):
                if isinstance(sub, ast.Assign):
                    for target in sub.targets:
                        if isinstance(target, ast.Name):
                            mod.assigns[target.id] = sub.value
                elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name) and sub.value:
                    mod.assigns[sub.target.id] = sub.value
                elif isinstance(sub, ast.ImportFrom):
                    src = _absolute(sub, pkg)
                    for alias in sub.names:
                        if alias.name == "*":
                            mod.star_imports.append(src)
                        else:
                            mod.imports[alias.asname or alias.name] = (src, alias.name)
                elif isinstance(sub, ast.Import):
                    for alias in sub.names:
                        if alias.asname:
                            mod.imports[alias.asname] = (alias.name, None)
                        else:
                            top = alias.name.split(".")[0]
                            mod.imports[top] = (top, None)
                elif isinstance(sub, ast.ClassDef):
                    mod.classes[sub.name] = sub
                elif isinstance(sub, ast.FunctionDef):
                    mod.functions[sub.name] = sub
        return mod

    # -- names ---------------------------------------------------------------------------------

    def lookup(self, modname: str, name: str) -> Any:
        """The value a module-level name has in `modname` (following imports)."""
        mod = self.module(modname)
        if mod is None:
            return Ref("external", f"{modname}.{name}")
        if name in mod.assigns:
            key = (modname, name)
            if key in self._evaluating:
                raise Unresolvable(f"recursive definition of {modname}.{name}")
            self._evaluating.add(key)
            try:
                return self.eval(mod.assigns[name], mod)
            finally:
                self._evaluating.discard(key)
        if name in mod.classes:
            return Ref("class", name, modname)
        if name in mod.functions:
            return Ref("func", name, modname)
        if name in mod.imports:
            src, orig = mod.imports[name]
            if orig is None:
                return Ref("module", src)
            sub = self.module(f"{src}.{orig}")
            if sub is not None and self.module(src) is not None and orig not in self.module(src).assigns:
                return Ref("module", f"{src}.{orig}")
            return self.lookup(src, orig)
        for src in reversed(mod.star_imports):  # the last star import that defines it wins
            star = self.module(src)
            if star is not None and (name in star.assigns or name in star.classes or name in star.functions
                                     or name in star.imports):
                return self.lookup(src, name)
        if name in BUILTIN_TYPES:
            return Ref("type", name)
        raise Unresolvable(f"{modname}.{name}")

    def class_attr(self, ref: Ref, attr: str) -> Any:
        """A class attribute whose class-body definition may use earlier class attributes."""
        mod = self.module(ref.module)  # type: ignore[arg-type]
        cls = mod.classes[ref.name]  # type: ignore[union-attr]
        scope: dict[str, Any] = {}
        for stmt in cls.body:
            targets = []
            if isinstance(stmt, ast.Assign):
                targets = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
                targets = [stmt.target.id]
            if not targets:
                continue
            try:
                value = self.eval(stmt.value, mod, scope)  # type: ignore[arg-type]
            except Unresolvable:
                continue
            for t in targets:
                scope[t] = value
            if attr in targets:
                return value
        raise Unresolvable(f"{ref.name}.{attr}")

    def enum_members(self, ref: Ref) -> list[EnumMember]:
        mod = self.module(ref.module)  # type: ignore[arg-type]
        cls = mod.classes[ref.name]  # type: ignore[union-attr]
        members = []
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                if not name.startswith("_"):
                    members.append(EnumMember(name, self.eval(stmt.value, mod)))
        return members

    def call_function(self, ref: Ref) -> Any:
        """A no-argument choice function: evaluate its last `return`, with its local imports.

        The functions in question (`_reasoning_parser_choices`, ...) first look at sys.modules
        for a registry a plugin may have imported, then fall back to a static list; the
        fallback is what a fresh process gets, so that is the one evaluated."""
        mod = self.module(ref.module)  # type: ignore[arg-type]
        fn = mod.functions[ref.name]  # type: ignore[union-attr]
        scope: dict[str, Any] = {}
        ret: ast.Return | None = None
        pkg = mod.name.rpartition(".")[0]  # type: ignore[union-attr]
        for stmt in fn.body:
            if isinstance(stmt, ast.ImportFrom):
                src = _absolute(stmt, pkg)
                for alias in stmt.names:
                    scope[alias.asname or alias.name] = self.lookup(src, alias.name)
            elif isinstance(stmt, ast.Return):
                ret = stmt
        if ret is None or ret.value is None:
            raise Unresolvable(f"no return in {ref.name}")
        return self.eval(ret.value, mod, scope)  # type: ignore[arg-type]

    # -- expressions ---------------------------------------------------------------------------

    def eval(self, node: ast.expr, mod: Module, scope: dict[str, Any] | None = None) -> Any:
        scope = scope if scope is not None else {}
        ev = lambda n: self.eval(n, mod, scope)  # noqa: E731
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.List):
            return self._elements(node.elts, mod, scope)
        if isinstance(node, ast.Tuple):
            return tuple(self._elements(node.elts, mod, scope))
        if isinstance(node, ast.Set):
            return set(self._elements(node.elts, mod, scope))
        if isinstance(node, ast.Subscript):  # `CHOICES[0]` as a default
            base, index = ev(node.value), ev(node.slice)
            if isinstance(base, (list, tuple, dict, str)) and isinstance(index, (int, str)):
                try:
                    return base[index]
                except (IndexError, KeyError, TypeError) as err:
                    raise Unresolvable(f"subscript {err}") from None
            raise Unresolvable("subscript of a runtime value")
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise Unresolvable("dict unpacking")
            return {ev(k): ev(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
        if isinstance(node, ast.BinOp):
            left, right = ev(node.left), ev(node.right)
            ops = {ast.Add: lambda a, b: a + b, ast.Mult: lambda a, b: a * b,
                   ast.Sub: lambda a, b: a - b, ast.Pow: lambda a, b: a ** b,
                   ast.FloorDiv: lambda a, b: a // b, ast.Div: lambda a, b: a / b,
                   ast.LShift: lambda a, b: a << b}
            op = ops.get(type(node.op))
            if op is None or isinstance(left, Ref) or isinstance(right, Ref):
                raise Unresolvable(ast.dump(node))
            return op(left, right)
        if isinstance(node, ast.UnaryOp):
            val = ev(node.operand)
            if isinstance(node.op, ast.USub):
                return -val
            if isinstance(node.op, ast.UAdd):
                return +val
            if isinstance(node.op, ast.Not):
                return not val
            raise Unresolvable(ast.dump(node))
        if isinstance(node, ast.Name):
            if node.id in scope:
                return scope[node.id]
            return self.lookup(mod.name, node.id)
        if isinstance(node, ast.Attribute):
            return self._attribute(ev(node.value), node.attr)
        if isinstance(node, ast.Call):
            return self._call(node, mod, scope)
        if isinstance(node, ast.JoinedStr):
            return "".join(self._fstring_part(v, mod, scope) for v in node.values)
        if isinstance(node, ast.ListComp) and len(node.generators) == 1:
            gen = node.generators[0]
            if not isinstance(gen.target, ast.Name):
                raise Unresolvable("comprehension target")
            out = []
            for item in self._iterate(ev(gen.iter)):
                inner = {**scope, gen.target.id: item}
                if all(self.eval(cond, mod, inner) for cond in gen.ifs):
                    out.append(self.eval(node.elt, mod, inner))
            return out
        raise Unresolvable(ast.dump(node)[:80])

    def _elements(self, elts: list[ast.expr], mod: Module, scope: dict[str, Any]) -> list[Any]:
        out: list[Any] = []
        for e in elts:
            if isinstance(e, ast.Starred):  # `[*QUANTIZATION_CHOICES, "x"]`
                out.extend(self._iterate(self.eval(e.value, mod, scope)))
            else:
                out.append(self.eval(e, mod, scope))
        return out

    def _fstring_part(self, node: ast.expr, mod: Module, scope: dict[str, Any]) -> str:
        if isinstance(node, ast.Constant):
            return str(node.value)
        assert isinstance(node, ast.FormattedValue)
        value = self.eval(node.value, mod, scope)
        if isinstance(value, (Ref, EnumMember)):
            raise Unresolvable("runtime object in f-string")
        if node.conversion == ord("r"):
            value = repr(value)
        elif node.conversion == ord("s"):
            value = str(value)
        elif node.conversion == ord("a"):
            value = ascii(value)
        spec = self.eval(node.format_spec, mod, scope) if node.format_spec else ""
        return format(value, spec)

    def _iterate(self, value: Any) -> list[Any]:
        if isinstance(value, Ref) and value.kind == "class":
            return self.enum_members(value)
        if isinstance(value, (list, tuple, set, frozenset, dict, type({}.keys()), type({}.values()))):
            return list(value)
        raise Unresolvable("not iterable statically")

    def _attribute(self, base: Any, attr: str) -> Any:
        if isinstance(base, Ref):
            if base.kind == "external" or (base.kind == "module" and self.module(base.name) is None):
                qual = f"{base.name}.{attr}"
                if qual == "argparse.SUPPRESS":
                    return SUPPRESS
                if qual in STDLIB_CONSTANTS:
                    return STDLIB_CONSTANTS[qual]
                return Ref("external", qual)
            if base.kind == "module":
                return self.lookup(base.name, attr)
            if base.kind == "class":
                return self.class_attr(base, attr)
            if base.kind == "func" and attr == "__doc__":
                fn = self.module(base.module).functions[base.name]  # type: ignore[union-attr]
                return ast.get_docstring(fn, clean=False)
        if isinstance(base, EnumMember) and attr in ("name", "value"):
            return getattr(base, attr)
        if isinstance(base, str) and attr in ("lower", "upper", "strip", "replace", "join", "format"):
            return getattr(base, attr)
        if isinstance(base, dict) and attr in ("keys", "values"):  # `list(Parser.DetectorMap.keys())`
            return getattr(base, attr)
        raise Unresolvable(f"attribute {attr} of {base!r}")

    def _call(self, node: ast.Call, mod: Module, scope: dict[str, Any]) -> Any:
        ev = lambda n: self.eval(n, mod, scope)  # noqa: E731
        func = ev(node.func)
        if callable(func) and not isinstance(func, Ref):  # a bound str method
            return func(*[ev(a) for a in node.args])
        if not isinstance(func, Ref):
            raise Unresolvable("call of a value")
        kwargs = {kw.arg: node_ for kw in node.keywords for node_ in [kw.value] if kw.arg}
        if func.kind == "type" and func.name in ("set", "frozenset", "list", "tuple") and len(node.args) <= 1:
            items = self._iterate(ev(node.args[0])) if node.args else []
            return {"set": set, "frozenset": frozenset, "list": list, "tuple": tuple}[func.name](items)
        if func.kind == "type" and func.name == "sorted" and len(node.args) == 1:
            return sorted(self._iterate(ev(node.args[0])))
        if func.kind == "external" and func.name in ("msgspec.field", "dataclasses.field"):
            if "default_factory" in kwargs:
                node_f = kwargs["default_factory"]
                if isinstance(node_f, ast.Lambda) and not node_f.args.args:
                    return ev(node_f.body)  # `default_factory=lambda: list(DEFAULTS)`
                factory = ev(node_f)
                if isinstance(factory, Ref) and factory.kind == "type" and factory.name in ("list", "dict", "set"):
                    return {"list": [], "dict": {}, "set": set()}[factory.name]
                raise Unresolvable("default_factory")
            if "default" in kwargs:
                return ev(kwargs["default"])
            return MISSING
        if func.kind == "class" and func.name == "Arg":
            return ArgMeta(func.module, kwargs, mod, scope)
        if func.kind == "func" and not node.args and not node.keywords:
            return self.call_function(func)
        raise Unresolvable(f"call of {func}")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class ArgMeta:
    """`Arg(...)` keyword arguments, evaluated one by one so that only what fails is lost."""

    def __init__(self, module: str | None, kwargs: dict[str, ast.expr], mod: Module, scope: dict[str, Any]) -> None:
        self.kwargs = kwargs
        self.mod = mod
        self.scope = scope

    def get(self, wheel: Wheel, key: str, default: Any = None, *, lenient: bool = False) -> Any:
        if key not in self.kwargs:
            return default
        try:
            return wheel.eval(self.kwargs[key], self.mod, dict(self.scope))
        except Unresolvable:
            if lenient:
                return UNRESOLVED
            raise


class _Unresolved:
    def __repr__(self) -> str:
        return "UNRESOLVED"


UNRESOLVED: Any = _Unresolved()


def _absolute(node: ast.ImportFrom, pkg: str) -> str:
    if not node.level:
        return node.module or ""
    parts = pkg.split(".")
    if node.level > 1:
        parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _flatten_module_stmt(node: ast.stmt) -> Iterator[ast.stmt]:
    """Module-level statements, looking into `try:`/`if TYPE_CHECKING:` bodies as well."""
    if isinstance(node, ast.Try):
        for sub in node.body:
            yield from _flatten_module_stmt(sub)
    elif isinstance(node, ast.If):
        for sub in node.body:
            yield from _flatten_module_stmt(sub)
    else:
        yield node


# ---------------------------------------------------------------------------------------------
# Type annotations (typing forms, as `get_type_hints` would see them)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TypeForm:
    kind: str  # "name" | "none" | "union" | "list" | "literal" | "generic"
    name: str = ""
    args: tuple[Any, ...] = ()


NONE_FORM = TypeForm("none")
LIST_NAMES = {"List", "list"}


def type_form(wheel: Wheel, node: ast.expr, mod: Module) -> TypeForm:
    if isinstance(node, ast.Constant):
        if node.value is None:
            return NONE_FORM
        if isinstance(node.value, str):  # a forward reference
            return type_form(wheel, ast.parse(node.value, mode="eval").body, mod)
    if isinstance(node, ast.Name):
        return TypeForm("name", node.id)
    if isinstance(node, ast.Attribute):
        return TypeForm("name", node.attr)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([type_form(wheel, node.left, mod), type_form(wheel, node.right, mod)])
    if isinstance(node, ast.Subscript):
        base = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", "")
        elts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base == "Optional":
            return _union([type_form(wheel, elts[0], mod), NONE_FORM])
        if base == "Union":
            return _union([type_form(wheel, e, mod) for e in elts])
        if base in LIST_NAMES:
            return TypeForm("list", "list", (type_form(wheel, elts[0], mod),))
        if base == "Literal":
            values: list[Any] = []
            for e in elts:
                values.append(wheel.eval(e, mod))
            return TypeForm("literal", "Literal", tuple(values))
        if base in ("Annotated", "A"):
            return type_form(wheel, elts[0], mod)
        return TypeForm("generic", base, tuple(type_form(wheel, e, mod) for e in elts))
    raise Unresolvable(f"type annotation {ast.dump(node)[:80]}")


def _union(members: list[TypeForm]) -> TypeForm:
    # typing flattens nested unions and drops duplicates, keeping first occurrences.
    flat: list[TypeForm] = []
    for m in members:
        for sub in (m.args if m.kind == "union" else (m,)):
            if sub not in flat:
                flat.append(sub)
    if len(flat) == 1:
        return flat[0]
    return TypeForm("union", "Union", tuple(flat))


def unwrap_optional(tp: TypeForm) -> TypeForm:
    if tp.kind == "union":
        non_none = [a for a in tp.args if a != NONE_FORM and a != TypeForm("name", "None")]
        if len(non_none) == 1:
            return non_none[0]
    return tp


def infer_type_name(tp: TypeForm) -> str:
    # arg_utils._infer_type_func: str/int/float map to themselves, everything else to str.
    if tp.kind == "name" and tp.name in ("str", "int", "float"):
        return tp.name
    return "str"


# ---------------------------------------------------------------------------------------------
# Building argparse records
# ---------------------------------------------------------------------------------------------


def action_name(value: Any) -> str:
    if isinstance(value, str):
        return {"store_true": "store_true", "store_false": "store_false", "store": "store",
                "store_const": "store_const", "append": "append", "count": "count"}[value]
    if isinstance(value, Ref):
        cls = value.name.rpartition(".")[2]
        if cls in ACTION_NAMES:
            return ACTION_NAMES[cls]
    raise Unresolvable(f"action {value!r}")


def action_class(value: Any) -> str:
    """The class name sglang's config merger would print for this action."""
    if isinstance(value, str):
        return {"store_true": "_StoreTrueAction", "store_false": "_StoreFalseAction",
                "store": "_StoreAction", "store_const": "_StoreConstAction",
                "append": "_AppendAction", "count": "_CountAction"}[value]
    assert isinstance(value, Ref)
    return value.name.rpartition(".")[2]


def type_name(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, Ref):
        key = value.name if value.kind == "external" else value.name
        return TYPE_NAMES.get(key, key.rpartition(".")[2])
    raise Unresolvable(f"type {value!r}")


def derive_dest(options: list[str], dest: str | None) -> str:
    """argparse's `_get_optional_kwargs`: the first long option, dashes to underscores."""
    if dest is not None:
        return dest
    longs = [o for o in options if len(o) > 1 and o[1] == "-"]
    chosen = longs[0] if longs else options[0]
    return chosen.lstrip("-").replace("-", "_")


def make_record(options: list[str], kw: dict[str, Any]) -> dict[str, Any]:
    """What argparse stores for `add_argument(*options, **kw)` (for the action kinds sglang uses)."""
    action = kw.get("action", "store")
    kind = action_name(action)
    cls = action_class(action)
    dest = derive_dest(options, kw.get("dest"))
    help_ = kw.get("help")
    rec: dict[str, Any] = {
        "dest": dest, "options": list(options), "action": kind, "type": type_name(kw.get("type")),
        "choices": None, "default": kw.get("default"), "nargs": kw.get("nargs"), "const": kw.get("const"),
        "required": bool(kw.get("required", False)), "help": help_, "hidden": help_ == SUPPRESS,
        "deprecated": kw.get("new_flag"), "config_refused": None, "_class": cls,
        # DeprecatedAction(error_message=...) (0.5.18 on): parser.error at parse time. Not part
        # of the schema document; scripts/build_launch_checks.py reads it.
        "_error_message": kw.get("error_message"),
    }
    if "choices" in kw and kw["choices"] is not None:
        choices = kw["choices"]
        # A set has no order argparse could keep (hash randomisation): record it sorted.
        rec["choices"] = sorted(choices) if isinstance(choices, (set, frozenset)) else list(choices)
    if kind in ("store_true", "store_false"):
        rec["nargs"], rec["const"] = 0, kind == "store_true"
        if "default" not in kw:
            rec["default"] = kind == "store_false"
    elif kind == "boolean_optional":
        expanded = []
        for opt in options:
            expanded.append(opt)
            if opt.startswith("--"):
                expanded.append("--no-" + opt[2:])
        rec["options"], rec["nargs"] = expanded, 0
    elif kind == "deprecated_store_true":
        rec["nargs"] = kw.get("nargs", 0)
        rec["const"] = kw.get("const", True)
        rec["default"] = kw.get("default", False)
    elif kind == "deprecated_store_const":
        rec["nargs"] = kw.get("nargs", 0)
        rec["const"] = kw.get("const_value")  # what the action stores (argparse's own const stays None)
        rec["default"] = kw.get("default", None)
    elif kind == "deprecated":
        rec["nargs"] = kw.get("nargs", 0)
    if rec["hidden"]:
        rec["help"] = None
    return rec


HELP_RECORD: dict[str, Any] = {
    "dest": "help", "options": ["-h", "--help"], "action": HELP_ACTION, "type": None, "choices": None,
    "default": SUPPRESS, "nargs": 0, "const": None, "required": False,
    "help": "show this help message and exit", "hidden": False, "deprecated": None,
    "config_refused": None, "_class": "_HelpAction",
}


@dataclass
class FieldDecl:
    name: str
    annotation: ast.expr
    default: Any
    module: Module


def collect_fields(wheel: Wheel) -> list[FieldDecl]:
    """ServerArgs' record fields, in `collect_input_fields` order."""
    sa = wheel.module("sglang.srt.server_args")
    assert sa is not None
    ns_list = sa.assigns.get("_INPUT_NAMESPACES")
    if not isinstance(ns_list, ast.List):
        # Before the msgspec namespaces (up to 0.5.x), ServerArgs is one plain dataclass whose
        # flags are all registered by hand; its fields only serve `ServerArgs.x` defaults.
        cls = sa.classes.get("ServerArgs")
        return _class_body_fields(wheel, cls, sa, lenient=True) if cls is not None else []
    fields: dict[str, FieldDecl] = {}
    for elt in ns_list.elts:
        ref = wheel.eval(elt, sa)
        assert isinstance(ref, Ref) and ref.kind == "class", ref
        for decl in class_fields(wheel, ref):
            if decl.name in fields:
                raise SystemExit(f"field {decl.name} declared twice")
            fields[decl.name] = decl
    order_mod = wheel.module("sglang.srt.arg_groups.field_order")
    positional = list(wheel.lookup(order_mod.name, "POSITIONAL_FIELD_ORDER")) if order_mod else []
    pos_set = set(positional)
    ordered = [n for n in positional if n in fields] + [n for n in fields if n not in pos_set]
    result = [fields[n] for n in ordered]
    # ServerArgs' own class-body annotations come after (or replace) the collected ones.
    cls = sa.classes.get("ServerArgs")
    if cls is not None:
        own = [d for d in _class_body_fields(wheel, cls, sa)]
        names = [d.name for d in result]
        for d in own:
            if d.name in names:
                result[names.index(d.name)] = d
            else:
                result.append(d)
    return result


def class_fields(wheel: Wheel, ref: Ref) -> list[FieldDecl]:
    mod = wheel.module(ref.module)  # type: ignore[arg-type]
    cls = mod.classes[ref.name]  # type: ignore[union-attr]
    out: list[FieldDecl] = []
    for base in cls.bases:  # msgspec puts base-class fields first
        b = wheel.eval(base, mod)  # type: ignore[arg-type]
        if isinstance(b, Ref) and b.kind == "class":
            out.extend(class_fields(wheel, b))
    out.extend(_class_body_fields(wheel, cls, mod))  # type: ignore[arg-type]
    return out


def _class_body_fields(wheel: Wheel, cls: ast.ClassDef, mod: Module, *, lenient: bool = False) -> list[FieldDecl]:
    out = []
    for stmt in cls.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        ann = stmt.annotation
        if isinstance(ann, ast.Subscript) and getattr(ann.value, "id", None) == "ClassVar":
            continue
        try:
            default = MISSING if stmt.value is None else wheel.eval(stmt.value, mod)
        except Unresolvable:
            if not lenient:
                raise
            default = UNRESOLVED  # only an error if a registration really uses it
        out.append(FieldDecl(stmt.target.id, ann, default, mod))
    return out


def field_arg(wheel: Wheel, decl: FieldDecl) -> tuple[ast.expr, ArgMeta | None] | None:
    """(`T`, Arg) of `A[T, Arg(...)]` / `A[T, "help"]`; None for fields without CLI metadata."""
    ann = decl.annotation
    if not (isinstance(ann, ast.Subscript) and getattr(ann.value, "id", None) in ("A", "Annotated")):
        return None
    elts = list(ann.slice.elts) if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    for meta in elts[1:]:
        if isinstance(meta, ast.Constant) and isinstance(meta.value, str):
            return elts[0], ArgMeta(None, {"help": meta}, decl.module, {})
        if isinstance(meta, (ast.JoinedStr, ast.BinOp)):  # a computed help string
            return elts[0], ArgMeta(None, {"help": meta}, decl.module, {})
        if isinstance(meta, ast.Call) and getattr(meta.func, "id", None) == "Arg":
            kwargs = {kw.arg: kw.value for kw in meta.keywords if kw.arg}
            return elts[0], ArgMeta(None, kwargs, decl.module, {})
    return elts[0], None


def auto_records(wheel: Wheel, fields: list[FieldDecl]) -> list[dict[str, Any]]:
    """`add_cli_args_from_dataclass`, rule for rule (arg_utils.py)."""
    out = []
    for decl in fields:
        found = field_arg(wheel, decl)
        if found is None or found[1] is None:
            continue
        tnode, meta = found
        if meta.get(wheel, "no_cli", False):
            continue
        help_ = meta.get(wheel, "help", "", lenient=True)
        help_ = None if help_ is UNRESOLVED else help_
        cli_name = meta.get(wheel, "cli_name") or "--" + decl.name.replace("_", "-")
        names = [cli_name] + list(meta.get(wheel, "aliases") or [])
        auto_dest = cli_name.lstrip("-").replace("-", "_")
        dest_kw = {"dest": decl.name} if decl.name != auto_dest else {}
        default = decl.default
        with_default = {} if default is MISSING else {"default": default}
        type_parser = meta.get(wheel, "type_parser")
        const = meta.get(wheel, "const")
        choices_meta = meta.get(wheel, "choices")
        nargs_meta = meta.get(wheel, "nargs")

        action = meta.get(wheel, "action")
        if action is not None:
            kw = {"action": action, "help": help_, **dest_kw, **with_default}
            for k, v in (meta.get(wheel, "action_kwargs") or {}).items():
                kw[k] = v
            out.append(make_record(names, kw))
            continue

        tp = unwrap_optional(type_form(wheel, tnode, decl.module))
        if tp.kind == "literal":
            literals = list(tp.args)
            choices = choices_meta or literals
            first_type = type(literals[0]).__name__ if literals else "str"
            tparse = type_parser or Ref("type", first_type if first_type in ("str", "int", "float") else "str")
            kw = {"type": tparse, "choices": choices, "help": help_, **dest_kw, **with_default}
            if const is not None:
                kw["const"] = const
            out.append(make_record(names, kw))
            continue
        if tp.kind == "list" and type_parser is None:
            kw = {"type": Ref("type", infer_type_name(tp.args[0])), "nargs": nargs_meta or "+",
                  "help": help_, **dest_kw}
            if choices_meta:
                kw["choices"] = choices_meta
            kw.update(with_default)
            if const is not None:
                kw["const"] = const
            out.append(make_record(names, kw))
            continue
        if tp == TypeForm("name", "bool"):
            out.append(make_record(names, {"action": "store_true", "help": help_, **dest_kw, **with_default}))
            continue
        kw = {"type": type_parser or Ref("type", infer_type_name(tp)), "help": help_, **dest_kw}
        if choices_meta:
            kw["choices"] = choices_meta
        if nargs_meta:
            kw["nargs"] = nargs_meta
        kw.update(with_default)
        if const is not None:
            kw["const"] = const
        required = meta.get(wheel, "required")
        if (required is True or (required is None and default is MISSING)) and any(
            n.startswith("-") for n in names
        ):
            kw["required"] = True
        out.append(make_record(names, kw))
    return out


def manual_records(wheel: Wheel, fields: list[FieldDecl]) -> list[dict[str, Any]]:
    """Walk `ServerArgs.add_cli_args`: the dataclass call, local assignments, `add_argument`s."""
    sa = wheel.module("sglang.srt.server_args")
    fn = next(s for s in sa.classes["ServerArgs"].body  # type: ignore[union-attr]
              if isinstance(s, ast.FunctionDef) and s.name == "add_cli_args")
    defaults = {d.name: d.default for d in fields}
    scope: dict[str, Any] = {}
    out: list[dict[str, Any]] = []
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            scope[stmt.targets[0].id] = wheel.eval(stmt.value, sa, scope)  # type: ignore[arg-type]
            continue
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            continue  # `if envs.X.get(): ...` adds env-dependent choices: a fresh env has none
        call = stmt.value
        fname = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        if fname == "add_cli_args_from_dataclass":
            out.extend(auto_records(wheel, fields))
            continue
        if fname != "add_argument":
            raise SystemExit(f"add_cli_args: unexpected call {fname} at line {stmt.lineno}")
        options = [wheel.eval(a, sa, scope) for a in call.args]  # type: ignore[arg-type]
        kw: dict[str, Any] = {}
        for k in call.keywords:
            if k.arg is None:
                raise SystemExit("add_cli_args: **kwargs in add_argument")
            v = k.value
            if isinstance(v, ast.Call) and getattr(v.func, "id", None) == "_declared_default":
                kw[k.arg] = defaults[wheel.eval(v.args[0], sa)]  # type: ignore[arg-type]
                continue
            try:
                kw[k.arg] = wheel.eval(v, sa, scope)  # type: ignore[arg-type]
            except Unresolvable:
                if k.arg != "help":
                    raise
                kw[k.arg] = None
        out.append(make_record(options, kw))
    return out


# ---------------------------------------------------------------------------------------------
# The --config merger, deprecated values, the rest
# ---------------------------------------------------------------------------------------------


def config_rule(wheel: Wheel) -> dict[str, str]:
    """Which generation of `ConfigArgumentMerger` this release has (see reference §1.2).

    Up to 0.5.22 it looks keys up by `dest` only and refuses every action that is neither
    _StoreTrueAction nor _StoreAction; from 0.5.23 on it also reads each long option
    (`_config_keys`) and accepts any single-value action (`_takes_one_value`)."""
    found = sorted(n for n in wheel.names if n.startswith("sglang/") and n.endswith("/server_args_config_parser.py"))
    if not found:
        return {"keys": "none", "accepts": "none"}  # before `--config` existed: no merger at all
    mod = wheel.module(found[0][:-3].replace("/", "."))
    assert mod is not None
    if _legacy_merger_call(wheel):
        # Up to 0.5.7 prepare_server_args builds `ConfigArgumentMerger(boolean_actions=...)` from
        # actions that have an `.action` attribute -- no argparse action has one, so the list is
        # empty: the merger looks nothing up, writes `--key` for `key: true`, nothing for
        # `false`, `--key value` otherwise, and refuses nothing.
        return {"keys": "verbatim", "accepts": "any"}
    keys = "dest_and_long_options" if "_config_keys" in mod.functions else "dest"
    accepts = "store_true_or_single_value" if "_takes_one_value" in mod.functions else "store_true_or_store"
    return {"keys": keys, "accepts": accepts}


def _legacy_merger_call(wheel: Wheel) -> bool:
    sa = wheel.module("sglang.srt.server_args")
    for node in ast.walk(sa.tree):  # type: ignore[union-attr]
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ConfigArgumentMerger":
            return any(kw.arg == "boolean_actions" for kw in node.keywords)
    return False


def config_keys_of(rec: dict[str, Any], rule: dict[str, str]) -> list[str]:
    keys = [rec["dest"]]
    if rule["keys"] == "dest_and_long_options":
        for opt in rec["options"]:
            if opt.startswith("--") and opt[2:].replace("-", "_") not in keys:
                keys.append(opt[2:].replace("-", "_"))
    return keys


def config_supported(rec: dict[str, Any], rule: dict[str, str]) -> bool:
    if rec["_class"] in ("_StoreTrueAction", "_StoreAction"):
        return True
    return rule["accepts"] == "store_true_or_single_value" and rec["nargs"] is None


def apply_config_rule(records: list[dict[str, Any]], rule: dict[str, str]) -> dict[str, Any]:
    """Mirror `ConfigArgumentMerger.__init__`: the store-true keys and the refused keys."""
    if rule["keys"] in ("none", "verbatim"):
        return {**rule, "store_true_keys": [], "refused_keys": {}}
    store_true = sorted({k for r in records if r["_class"] == "_StoreTrueAction" for k in config_keys_of(r, rule)})
    supported_keys = {k for r in records if config_supported(r, rule) for k in config_keys_of(r, rule)}
    refused: dict[str, int] = {}  # key -> index of the record sglang's dict keeps (the last)
    for i, r in enumerate(records):
        if not r["options"] or config_supported(r, rule):
            continue
        if "--config" in r["options"] or "--help" in r["options"] or "-h" in r["options"]:
            continue
        for k in config_keys_of(r, rule):
            if rule["keys"] == "dest" or k not in supported_keys:
                refused[k] = i
    for i in set(refused.values()):
        records[i]["config_refused"] = records[i]["_class"]
    refused_names = {k: records[i]["_class"] for k, i in sorted(refused.items())}
    return {**rule, "store_true_keys": store_true, "refused_keys": refused_names}


def hook_deprecations(wheel: Wheel, records: list[dict[str, Any]]) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """Deprecated values and flags that `handle_deprecated_args` (serving_hook.py) rewrites."""
    mod = wheel.module("sglang.srt.arg_groups.serving_hook")
    fn = mod.functions.get("handle_deprecated_args") if mod else None
    if fn is None:
        return {}, {}
    values: dict[str, dict[str, str]] = {}
    tables: dict[str, dict[str, str]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and isinstance(node.targets[0], ast.Name):
            try:
                table = wheel.eval(node.value, mod)  # type: ignore[arg-type]
            except Unresolvable:
                continue
            if all(isinstance(k, str) and isinstance(v, str) for k, v in table.items()):
                tables[node.targets[0].id] = table
    for node in ast.walk(fn):
        # `if cfg.tool_call_parser in deprecated_tool_call_parsers:`
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In):
            right = node.comparators[0]
            if isinstance(node.left, ast.Attribute) and isinstance(right, ast.Name) and right.id in tables:
                values.setdefault(node.left.attr, {}).update(tables[right.id])
        # `for attr in ("attention_backend", ...): old = getattr(...); if old in aliases:`
        if isinstance(node, ast.For) and isinstance(node.iter, (ast.Tuple, ast.List)):
            names = [e.value for e in node.iter.elts if isinstance(e, ast.Constant)]
            for sub in ast.walk(node):
                if (isinstance(sub, ast.Compare) and isinstance(sub.ops[0], ast.In)
                        and isinstance(sub.comparators[0], ast.Name) and sub.comparators[0].id in tables):
                    for n in names:
                        values.setdefault(n, {}).update(tables[sub.comparators[0].id])
                # Up to 0.5.22: `if getattr(server_args, attr, None) == "compressed": renamed[attr] = "dsv4"`
                if (isinstance(sub, ast.If) and isinstance(sub.test, ast.Compare)
                        and isinstance(sub.test.ops[0], ast.Eq) and isinstance(sub.test.comparators[0], ast.Constant)):
                    old = sub.test.comparators[0].value
                    for stmt in sub.body:
                        if (isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Subscript)
                                and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)):
                            for n in names:
                                values.setdefault(n, {})[old] = stmt.value.value
    by_option = {o: r["dest"] for r in records for o in r["options"]}
    flags: dict[str, str] = {}
    pattern = re.compile(r"(--[a-z0-9-]+) is deprecated.*?\b[Uu]se '?(--[a-z0-9-]+(?:=[\w.-]+)?)", re.S)
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "warning":
            text = "".join(_string_parts(node.args[0])) if node.args else ""
            m = pattern.search(text)
            if m and m.group(1) in by_option:
                flags[by_option[m.group(1)]] = m.group(2)
    known = {r["dest"] for r in records}
    return {k: v for k, v in values.items() if k in known}, flags


def _string_parts(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.JoinedStr):
        for v in node.values:
            yield from _string_parts(v)
    elif isinstance(node, ast.BinOp):
        yield from _string_parts(node.left)
        yield from _string_parts(node.right)


def choice_lists(wheel: Wheel) -> dict[str, list[Any]]:
    """The named choice lists of `choices.py` (Kimi-K3 rules need e.g. the draft backends)."""
    mod = wheel.module("sglang.srt.arg_groups.choices")
    out: dict[str, list[Any]] = {}
    if mod is None:
        return out
    for name in mod.assigns:
        if name.isupper() and name.endswith("CHOICES") or name.startswith("RADIX_SUPPORTED"):
            try:
                value = wheel.lookup(mod.name, name)
            except Unresolvable:
                continue
            if isinstance(value, (list, tuple)):
                out[name] = list(value)
            elif isinstance(value, (set, frozenset)):
                out[name] = sorted(value)
    return out


def type_data(wheel: Wheel) -> dict[str, Any]:
    """Tables the ported type parsers need (they differ between releases)."""
    out: dict[str, Any] = {}
    mod = wheel.module("sglang.srt.model_executor.cuda_graph_config")
    if mod is not None and "ALLOWED_KEYS_PER_PHASE" in mod.assigns:
        allowed = wheel.lookup(mod.name, "ALLOWED_KEYS_PER_PHASE")
        phases = wheel.class_attr(Ref("class", "Phase", mod.name), "ALL")
        parser_fn = mod.functions.get("parse_cuda_graph_config_arg")
        # Up to 0.5.21 the JSON form still accepted backend "tc_piecewise".
        checks_backend = parser_fn is not None and any(
            isinstance(n, ast.Call) and getattr(n.func, "id", None) == "parse_cuda_graph_backend_arg"
            for n in ast.walk(parser_fn))
        out["cuda_graph_config"] = {"phases": list(phases), "allowed_keys": {k: list(v) for k, v in allowed.items()},
                                    "rejects_tc_piecewise": checks_backend}
    return out


class CannotStore(SystemExit):
    pass


def jsonable(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(jsonable(v) for v in value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise CannotStore(f"cannot store {value!r} in JSON")


def _jsonable_record(rec: dict[str, Any]) -> dict[str, Any]:
    try:
        return {k: jsonable(v) for k, v in rec.items()}
    except CannotStore as err:
        raise CannotStore(f"{rec['options']}: {err}") from None


def extract(version: str, wheel_path: Path) -> dict[str, Any]:
    wheel = Wheel(wheel_path)
    fields = collect_fields(wheel)
    records = [dict(HELP_RECORD)] + manual_records(wheel, fields)
    rule = config_rule(wheel)
    config = apply_config_rule(records, rule)
    dep_values, dep_flags = hook_deprecations(wheel, records)
    for r in records:
        r.pop("_class")
        r.pop("_error_message", None)
    return {
        "format": 1,
        "version": version,
        "source": wheel_path.name,
        "flags": [_jsonable_record(r) for r in records],
        "config": config,
        "deprecated_values": dep_values,
        "deprecated_flags": dep_flags,
        "choice_lists": jsonable(choice_lists(wheel)),
        "type_data": type_data(wheel),
    }


def canonical(doc: dict[str, Any]) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(doc: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(doc).encode("utf-8")).hexdigest()


def shipped_documents() -> list[dict[str, Any]]:
    """Every release of the shipped store, unpacked back to extractor documents."""
    from kimi_lsp.knowledge import _schema_store
    from kimi_lsp.knowledge.schema import shipped_versions

    return [_schema_store._unpack_release(v) for v in shipped_versions()]


def write_store(docs: list[dict[str, Any]]) -> Path:
    """Pack `docs` into the store and record the extractor digest of each release, so that the
    tests can prove that unpacking gives back exactly what the extractor produced."""
    from sglang_schema_store import dump, pack

    text = dump(pack(docs))
    STORE.write_text(text, encoding="utf-8")
    digests = {d["version"]: digest(d) for d in docs}
    from kimi_lsp.knowledge.schema import _version_key

    ordered = {v: digests[v] for v in sorted(digests, key=_version_key)}
    DIGESTS.write_text(json.dumps(ordered, indent=1) + "\n", encoding="utf-8")
    return STORE


def extract_release(version: str, wheel: Path | None = None) -> dict[str, Any] | None:
    """The document of one release, or None (with the reason on stderr) when it cannot be exact."""
    try:
        return extract(version, wheel or fetch_wheel(version))
    except (Unresolvable, SystemExit, KeyError, StopIteration, AssertionError) as err:
        print(f"sglang {version}: not extractable exactly, left out: {err}", file=sys.stderr)
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("versions", nargs="*", metavar="VERSION")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--add", action="store_true",
                      help="extract VERSION(s) and add them to the shipped store (replacing the same release)")
    mode.add_argument("--rebuild", action="store_true",
                      help="re-extract every shipped release (and VERSIONs) and rewrite the store")
    mode.add_argument("--verify", action="store_true",
                      help="re-extract every shipped release and compare it with the store; exit 1 on a difference")
    ap.add_argument("--wheel", type=Path, help="one VERSION: use this wheel instead of downloading one")
    ap.add_argument("--out", type=Path, help="one VERSION without --add: write its document here (default stdout)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO / "scripts"))
    if args.wheel and len(args.versions) != 1:
        ap.error("--wheel needs exactly one VERSION")
    if args.verify:
        bad = 0
        for doc in shipped_documents():
            fresh = extract_release(doc["version"])
            if fresh is None or canonical(fresh) != canonical(doc):
                print(f"sglang {doc['version']}: the store differs from the extractor", file=sys.stderr)
                bad += 1
        print(f"{len(shipped_documents()) - bad} releases equal, {bad} differ", file=sys.stderr)
        return 1 if bad else 0
    if args.add or args.rebuild:
        if args.add and not args.versions:
            ap.error("--add needs at least one VERSION")
        docs = {d["version"]: d for d in shipped_documents()}
        wanted = list(args.versions) + (list(docs) if args.rebuild else [])
        failed = []
        for v in dict.fromkeys(wanted):
            doc = extract_release(v, args.wheel)
            if doc is None:
                failed.append(v)
                docs.pop(v, None)  # never ship a guessed or stale schema for it
                continue
            docs[v] = doc
            print(f"sglang {v}: {len(doc['flags'])} flags", file=sys.stderr)
        out = write_store(list(docs.values()))
        print(f"{out}: {len(docs)} releases, {out.stat().st_size} bytes", file=sys.stderr)
        return 1 if failed else 0
    if len(args.versions) != 1:
        ap.error("give one VERSION (or --add/--rebuild/--verify)")
    data = extract(args.versions[0], args.wheel or fetch_wheel(args.versions[0]))
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        print(f"{args.out}: {len(data['flags'])} flags", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
