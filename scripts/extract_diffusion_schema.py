#!/usr/bin/env python3
"""Extract, statically, the parser ``sglang serve`` hands a diffusion model to, per release.

    python3 scripts/extract_diffusion_schema.py                  every shipped release (wheels cached)
    python3 scripts/extract_diffusion_schema.py 0.5.24 --wheel W  add or refresh one release
    python3 scripts/extract_diffusion_schema.py 0.5.23 --dump     one release's document on stdout

From 0.5.5, ``sglang serve`` runs a diffusion model through ``sglang.multimodal_gen``: a plain
``argparse.ArgumentParser`` (``allow_abbrev`` on) filled by ``add_multimodal_gen_serve_args``
(``--config``, ``ServerArgs.add_cli_args`` and what it calls: the pipeline, VAE, DiT, encoder and
quantization configs, each under its prefix), then the selected pipeline's own options
(``add_pipeline_cli_args``, known only once the model is), then ``parse_known_args``, after which
``ServerArgs.from_cli_args`` takes off the per-component options it names by pattern
(``--<component>-path``, ``--component-quantizations.<c>`` ...) and, from 0.5.10, exits with
``error: unrecognized arguments`` for anything left (0.5.5-0.5.9 ignore the rest).

This script walks those functions with ``ast`` (the evaluator of ``extract_sglang_schema.py``,
plus conditions and call binding: a prefix parameter, ``if prefix_with_dot != ""``) and records
per release: every action (options, dest, action, nargs, type, choices), the pipeline options
(the union over every pipeline config: all are "known", whichever model is served), the
component patterns of ``from_cli_args``, whether unknown options are an error, and the model ids
the release's registry recognises (``hf_model_paths``, non-diffusers patterns) with whether
``sglang serve`` consults the registry at all. Nothing of sglang is imported.

Output: ``server/kimi_lsp/knowledge/data/sglang_diffusion.json`` (each distinct flag once, each
release a list of indices), checked by tests/unit/test_diffusion_schema.py against a committed dump
read off sglang's source.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(REPO / "scripts"))

from extract_sglang_schema import Module, Ref, Unresolvable, Wheel, fetch_wheel  # noqa: E402

OUT = REPO / "server" / "kimi_lsp" / "knowledge" / "data" / "sglang_diffusion.json"
SERVE = "sglang.multimodal_gen.runtime.entrypoints.cli.serve"


class _Parser:
    """The argparse parser being filled (a marker value in the evaluator's scope)."""

    def __repr__(self) -> str:
        return "PARSER"


PARSER: Any = _Parser()


class DWheel(Wheel):
    """The evaluator, plus the expressions the diffusion configs' option names use."""

    def eval(self, node: ast.expr, mod: Module, scope: dict[str, Any] | None = None) -> Any:
        scope = scope if scope is not None else {}
        if isinstance(node, ast.IfExp):
            return self.eval(node.body if self.eval(node.test, mod, scope) else node.orelse, mod, scope)
        if isinstance(node, ast.BoolOp):
            values = [self.eval(v, mod, scope) for v in node.values]
            if isinstance(node.op, ast.And):
                return all(values)
            return any(values)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = self.eval(node.left, mod, scope), self.eval(node.comparators[0], mod, scope)
            if isinstance(left, (Ref, _Parser)) or isinstance(right, (Ref, _Parser)):
                raise Unresolvable("comparison with a runtime value")
            op = node.ops[0]
            table = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
                     ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
                     ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b}
            fn = table.get(type(op))
            if fn is None:
                raise Unresolvable("comparison")
            return fn(left, right)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "choices" \
                and not node.args:
            base = self.eval(node.func.value, mod, scope)  # `Backend.choices()`: its `return`, cls bound
            if isinstance(base, Ref) and base.kind == "class":
                found = _function(self, base, "choices")
                if found is None:
                    raise Unresolvable("choices() not found")
                fmod, fn = found
                rets = [n for n in fn.body if isinstance(n, ast.Return) and n.value is not None]
                params = [*fn.args.posonlyargs, *fn.args.args]
                if len(rets) != 1 or len(params) != 1:
                    raise Unresolvable("choices() not a single return")
                return self.eval(rets[0].value, fmod, {params[0].arg: base})  # type: ignore[arg-type]
        return super().eval(node, mod, scope)

    def enum_members(self, ref: Ref) -> list[Any]:
        """An enum's members; a value the evaluator cannot know (`auto()`) leaves the name usable."""
        from extract_sglang_schema import EnumMember

        mod = self.module(ref.module)  # type: ignore[arg-type]
        cls = mod.classes[ref.name]  # type: ignore[union-attr]
        out = []
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                if name.startswith("_"):
                    continue
                try:
                    value = self.eval(stmt.value, mod)  # type: ignore[arg-type]
                except Unresolvable:
                    value = Ref("external", "?")
                out.append(EnumMember(name, value))
        return out

    def _attribute(self, base: Any, attr: str) -> Any:
        if isinstance(base, str) and attr in ("startswith", "endswith", "rstrip", "lstrip", "split"):
            return getattr(base, attr)
        return super()._attribute(base, attr)


def _function(wheel: DWheel, ref: Ref, attr: str | None) -> tuple[Module, ast.FunctionDef] | None:
    """The function a call names: a module function, or a method found on the class or its bases."""
    mod = wheel.module(ref.module) if ref.module else None
    if mod is None:
        return None
    if attr is None:
        fn = mod.functions.get(ref.name)
        return (mod, fn) if fn is not None else None
    cls = mod.classes.get(ref.name)
    if cls is None:
        return None
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == attr:
            return mod, stmt
    for base in cls.bases:
        try:
            bref = wheel.eval(base, mod)
        except Unresolvable:
            continue
        if isinstance(bref, Ref) and bref.kind == "class":
            found = _function(wheel, bref, attr)
            if found is not None:
                return found
    return None


class Walker:
    """Runs the parser-filling functions over the marker parser, recording each add_argument."""

    def __init__(self, wheel: DWheel) -> None:
        self.wheel = wheel
        self.records: list[dict[str, Any]] = []
        self.unresolved: list[str] = []
        self.depth = 0

    def run(self, mod: Module, fn: ast.FunctionDef, args: list[Any], kwargs: dict[str, Any]) -> None:
        if self.depth > 12:
            return
        scope: dict[str, Any] = {}
        params = [*fn.args.posonlyargs, *fn.args.args]
        defaults = [None] * (len(params) - len(fn.args.defaults)) + list(fn.args.defaults)
        for i, (p, d) in enumerate(zip(params, defaults)):
            if i < len(args):
                scope[p.arg] = args[i]
            elif p.arg in kwargs:
                scope[p.arg] = kwargs[p.arg]
            elif d is not None:
                scope[p.arg] = self._lenient(d, mod, scope)
        for p, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults):
            scope[p.arg] = kwargs.get(p.arg, self._lenient(d, mod, scope) if d is not None else None)
        self.depth += 1
        try:
            self.block(fn.body, mod, scope)
        finally:
            self.depth -= 1

    def _lenient(self, node: ast.expr, mod: Module, scope: dict[str, Any]) -> Any:
        try:
            return self.wheel.eval(node, mod, dict(scope))
        except (Unresolvable, Exception):  # noqa: BLE001 - any value the evaluator cannot know
            return Ref("external", "?")

    def block(self, body: list[ast.stmt], mod: Module, scope: dict[str, Any]) -> bool:
        """Run statements; False when a `return` ended the function."""
        for stmt in body:
            if isinstance(stmt, ast.Return):
                if stmt.value is not None:
                    self.expr(stmt.value, mod, scope)
                return False
            if isinstance(stmt, ast.Expr):
                self.expr(stmt.value, mod, scope)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                value = self.expr(stmt.value, mod, scope)
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        scope[t.id] = value
            elif isinstance(stmt, ast.If):
                try:
                    test = self.wheel.eval(stmt.test, mod, dict(scope))
                except (Unresolvable, Exception):  # noqa: BLE001 - a runtime condition: both branches
                    test = None
                if test is None or isinstance(test, Ref):
                    self.block(stmt.body, mod, scope)
                    self.block(stmt.orelse, mod, scope)
                elif not self.block(stmt.body if test else stmt.orelse, mod, scope):
                    return False
            elif isinstance(stmt, (ast.With, ast.Try)):
                self.block(stmt.body, mod, scope)
            elif isinstance(stmt, ast.For):
                self._loop(stmt, mod, scope)
        return True

    def _loop(self, stmt: ast.For, mod: Module, scope: dict[str, Any]) -> None:
        try:
            items = self.wheel._iterate(self.wheel.eval(stmt.iter, mod, dict(scope)))
        except (Unresolvable, Exception):  # noqa: BLE001
            items = None
        names = [stmt.target] if isinstance(stmt.target, ast.Name) else (
            list(stmt.target.elts) if isinstance(stmt.target, ast.Tuple) else [])
        if items is None or not names or not all(isinstance(n, ast.Name) for n in names):
            if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument"
                   for n in ast.walk(stmt)):
                self.unresolved.append(f"{mod.name}:{stmt.lineno}: loop over a runtime value")
            return
        for item in items:
            if isinstance(stmt.target, ast.Name):
                bound = {stmt.target.id: item}
            elif isinstance(item, (tuple, list)) and len(item) == len(names):
                bound = {n.id: v for n, v in zip(names, item)}  # type: ignore[attr-defined]
            else:
                self.unresolved.append(f"{mod.name}:{stmt.lineno}: loop item {item!r}")
                return
            self.block(stmt.body, mod, {**scope, **bound})

    def expr(self, node: ast.expr, mod: Module, scope: dict[str, Any]) -> Any:
        """A value for the scope; a call that fills the parser is followed or recorded."""
        if isinstance(node, ast.Name) and scope.get(node.id) is PARSER:
            return PARSER
        if not isinstance(node, ast.Call):
            return self._lenient(node, mod, scope)
        func = node.func
        if isinstance(func, ast.Attribute) and self._is_parser(func.value, scope):
            if func.attr == "add_argument":
                self._record(node, mod, scope)
                return None
            if func.attr in ("add_argument_group", "add_mutually_exclusive_group"):
                return PARSER
            return None
        if isinstance(func, ast.Attribute) and func.attr == "add_argument" and isinstance(func.value, ast.Name) \
                and func.value.id in ("parser", "group"):
            self.unresolved.append(f"{mod.name}:{node.lineno}: {func.value.id}.add_argument on an unbound name")
        args = [self.expr(a, mod, scope) if isinstance(a, ast.Name) else self._lenient(a, mod, scope)
                for a in node.args if not isinstance(a, ast.Starred)]
        if not any(a is PARSER for a in args) and not any(
                isinstance(k.value, ast.Name) and scope.get(k.value.id) is PARSER for k in node.keywords):
            return self._lenient(node, mod, scope)
        kwargs = {k.arg: (PARSER if isinstance(k.value, ast.Name) and scope.get(k.value.id) is PARSER
                          else self._lenient(k.value, mod, scope)) for k in node.keywords if k.arg}
        target = self._callee(func, mod, scope)
        if target is None:
            self.unresolved.append(f"{mod.name}:{node.lineno}: call {ast.unparse(func)} not followed")
            return PARSER
        fn = target[1]
        first = (fn.args.posonlyargs + fn.args.args)[:1]
        if isinstance(func, ast.Attribute) and first and first[0].arg in ("cls", "self") and not any(
                isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
            args = [None, *args]  # `Cls.method(parser)` of a classmethod: cls comes first
        self.run(target[0], fn, args, kwargs)
        return PARSER  # `parser = X.add_cli_args(parser)` returns the same parser

    def _is_parser(self, node: ast.expr, scope: dict[str, Any]) -> bool:
        return isinstance(node, ast.Name) and scope.get(node.id) is PARSER

    def _callee(self, func: ast.expr, mod: Module, scope: dict[str, Any]) -> tuple[Module, ast.FunctionDef] | None:
        try:
            if isinstance(func, ast.Attribute):
                base = self.wheel.eval(func.value, mod, dict(scope))
                if isinstance(base, Ref) and base.kind == "class":
                    return _function(self.wheel, base, func.attr)
                if isinstance(base, Ref) and base.kind == "module":
                    ref = self.wheel.lookup(base.name, func.attr)
                    return _function(self.wheel, ref, None) if isinstance(ref, Ref) and ref.kind == "func" else None
                return None
            ref = self.wheel.eval(func, mod, dict(scope))
        except Unresolvable:
            return None
        if isinstance(ref, Ref) and ref.kind == "func":
            return _function(self.wheel, ref, None)
        return None

    def _record(self, call: ast.Call, mod: Module, scope: dict[str, Any]) -> None:
        where = f"{mod.name}:{call.lineno}"
        try:
            options = [self.wheel.eval(a, mod, dict(scope)) for a in call.args]
        except Unresolvable as err:
            self.unresolved.append(f"{where}: option name {err}")
            return
        if not options or not all(isinstance(o, str) and o.startswith("-") for o in options):
            self.unresolved.append(f"{where}: option names {options!r}")
            return
        kw: dict[str, Any] = {}
        for k in call.keywords:
            if k.arg is None:
                self.unresolved.append(f"{where}: **kwargs")
                continue
            if k.arg in ("help", "default", "metavar"):
                continue  # not part of what a launch is checked against
            try:
                kw[k.arg] = self.wheel.eval(k.value, mod, dict(scope))
            except Unresolvable:
                kw[k.arg] = Ref("external", "?")
        self.records.append(make_record(self.wheel, options, kw, where, self.unresolved))


# Actions of sglang.multimodal_gen and what argparse holds for them
_STORE_NARGS = {"store": None, "append": None, "store_true": 0, "store_false": 0, "store_const": 0,
                "append_const": 0, "count": 0, "help": 0, "version": 0}


def _custom_nargs(wheel: DWheel, ref: Ref) -> Any:
    """The nargs a custom Action class passes to ``argparse.Action.__init__`` (None: the default)."""
    found = _function(wheel, ref, "__init__")
    if found is None:
        return None
    for node in ast.walk(found[1]):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__":
            for k in node.keywords:
                if k.arg == "nargs":
                    return wheel.eval(k.value, found[0])
    return None


def make_record(wheel: DWheel, options: list[str], kw: dict[str, Any], where: str, unresolved: list[str]) -> dict[str, Any]:
    action = kw.get("action", "store")
    nargs = kw.get("nargs")
    if isinstance(action, str):
        name = action
        if "nargs" not in kw:
            nargs = _STORE_NARGS.get(action)
    elif isinstance(action, Ref) and action.kind == "class":
        name = action.name
        if name == "BooleanOptionalAction":
            options = [x for o in options for x in ((o, "--no-" + o[2:]) if o.startswith("--") else (o,))]
            nargs = 0
        elif "nargs" not in kw:
            nargs = _custom_nargs(wheel, action)
    elif isinstance(action, Ref) and action.name.endswith("BooleanOptionalAction"):
        name = "BooleanOptionalAction"
        options = [x for o in options for x in ((o, "--no-" + o[2:]) if o.startswith("--") else (o,))]
        nargs = 0
    else:
        unresolved.append(f"{where}: action {action!r}")
        name, nargs = "store", nargs
    if isinstance(nargs, Ref):
        unresolved.append(f"{where}: nargs")
        nargs = "*"  # consume what follows, report nothing about it
    tp = kw.get("type")
    type_name = tp.name if isinstance(tp, Ref) and tp.kind == "type" and tp.name in ("int", "float", "str") else None
    choices = kw.get("choices")
    if isinstance(choices, (set, frozenset)):
        choices = sorted(choices)
    if isinstance(choices, (list, tuple)) and choices and all(isinstance(c, (str, int, float)) for c in choices):
        choices = list(choices)
    else:
        if choices is not None:
            unresolved.append(f"{where}: choices")
        choices = None  # unknown statically: no value is judged
    dest = kw.get("dest")
    if not isinstance(dest, str):
        longs = [o for o in options if o.startswith("--")]
        dest = (longs[0] if longs else options[0]).lstrip("-").replace("-", "_")
    return {"options": options, "dest": dest, "action": name, "nargs": nargs, "type": type_name, "choices": choices}


# -- from_cli_args: component patterns, unknown options ------------------------------------------------


def _server_args(wheel: DWheel) -> Module:
    for name in ("sglang.multimodal_gen.runtime.server_args.server_args", "sglang.multimodal_gen.runtime.server_args"):
        mod = wheel.module(name)
        if mod is not None and "ServerArgs" in mod.classes:
            return mod
    raise SystemExit(f"{wheel.path.name}: no multimodal_gen ServerArgs")


def component_patterns(wheel: DWheel) -> tuple[list[str], list[str], bool]:
    """(prefixes, suffixes, rejects_unknown) of ``from_cli_args``: each ``_extract_component_*``
    it calls takes off ``--<prefix><component>`` and ``--<component><suffix>`` (with a value)."""
    mod = _server_args(wheel)
    cls = mod.classes["ServerArgs"]
    methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
    fca = methods.get("from_cli_args")
    if fca is None:
        return [], [], False
    text = ast.unparse(fca)
    rejects = "unrecognized arguments" in text
    called = [n.func.attr for n in ast.walk(fca) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and n.func.attr.startswith("_extract_component")]
    prefixes: set[str] = set()
    suffixes: set[str] = set()
    for name in called:
        fn = methods.get(name)
        if fn is None:
            raise SystemExit(f"{wheel.path.name}: from_cli_args calls {name}, not found")
        for node in ast.walk(fn):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("--"):
                if node.value.endswith("."):
                    prefixes.add(node.value)
                elif node.value != "--":
                    raise SystemExit(f"{wheel.path.name}: {name}: {node.value!r} not understood")
            if isinstance(node, ast.keyword) and node.arg == "alias_suffix" and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, str):
                suffixes.add(node.value.value)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "endswith" \
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                suffixes.add(node.args[0].value)
    return sorted(prefixes), sorted(suffixes), rejects


# -- the registry ----------------------------------------------------------------------------------


def registry(wheel: DWheel) -> tuple[list[str], list[str], bool]:
    """(model ids, non-diffusers name patterns, consulted): every ``hf_model_paths=`` list of the
    release, the keys of ``KNOWN_NON_DIFFUSERS_DIFFUSION_MODEL_PATTERNS``, and whether ``sglang
    serve``'s detection asks the registry before looking for model_index.json."""
    ids: set[str] = set()
    patterns: set[str] = set()
    for rel in sorted(wheel.names):
        if not (rel.startswith("sglang/multimodal_gen/") and rel.endswith(".py")) or "/test/" in rel:
            continue
        src = wheel.source(rel)
        if "hf_model_paths" not in src and "KNOWN_NON_DIFFUSERS_DIFFUSION_MODEL_PATTERNS" not in src:
            continue
        modname = rel[:-3].replace("/", ".").removesuffix(".__init__")
        mod = wheel.module(modname)
        assert mod is not None
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.keyword) and node.arg == "hf_model_paths":
                try:
                    value = wheel.eval(node.value, mod)
                except Unresolvable:
                    continue
                if isinstance(value, (list, tuple)):
                    ids.update(v for v in value if isinstance(v, str))
        if "KNOWN_NON_DIFFUSERS_DIFFUSION_MODEL_PATTERNS" in mod.assigns:
            try:
                table = wheel.eval(mod.assigns["KNOWN_NON_DIFFUSERS_DIFFUSION_MODEL_PATTERNS"], mod)
            except Unresolvable:
                table = {}
            if isinstance(table, dict):
                patterns.update(k for k in table if isinstance(k, str))
    consulted = False
    if "sglang/cli/utils.py" in wheel.names:
        utils = wheel.source("sglang/cli/utils.py")
        consulted = "is_registered_diffusion_model_path" in utils or "_is_diffusion_model_from_registry" in utils
    return sorted(ids), sorted(patterns), consulted


# -- one release -----------------------------------------------------------------------------------


def extract(wheel_path: Path) -> dict[str, Any] | None:
    """One release's document, or None when the wheel has no diffusion server."""
    wheel = DWheel(wheel_path)
    serve = wheel.module(SERVE)
    if serve is None or "sglang/cli/serve.py" not in wheel.names:
        return None
    walker = Walker(wheel)
    walker.run(serve, serve.functions["add_multimodal_gen_serve_args"], [PARSER], {})
    records = walker.records
    # every pipeline's own options (add_pipeline_cli_args), whichever model is served
    pipeline: list[dict[str, Any]] = []
    for rel in sorted(wheel.names):
        if not (rel.startswith("sglang/multimodal_gen/configs/") and rel.endswith(".py")):
            continue
        if "add_pipeline_cli_args" not in wheel.source(rel):
            continue
        mod = wheel.module(rel[:-3].replace("/", ".").removesuffix(".__init__"))
        assert mod is not None
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.FunctionDef) and node.name == "add_pipeline_cli_args":
                pw = Walker(wheel)
                pw.run(mod, node, [PARSER] if node.args.args[0].arg not in ("cls", "self") else [None, PARSER], {})
                pipeline.extend(pw.records)
                walker.unresolved.extend(pw.unresolved)
    prefixes, suffixes, rejects = component_patterns(wheel)
    ids, patterns, consulted = registry(wheel)
    return {"flags": records, "pipeline_flags": pipeline, "component_prefixes": prefixes,
            "component_suffixes": suffixes, "rejects_unknown": rejects, "registry_ids": ids,
            "registry_patterns": patterns, "registry_consulted": consulted, "unresolved": walker.unresolved}


# -- the data file ---------------------------------------------------------------------------------


def pack(docs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each distinct flag and model id once; a release lists indices into those tables."""
    flags: list[dict[str, Any]] = []
    flag_index: dict[str, int] = {}
    names: list[str] = []
    name_index: dict[str, int] = {}

    def fi(rec: dict[str, Any]) -> int:
        key = json.dumps(rec, sort_keys=True)
        if key not in flag_index:
            flag_index[key] = len(flags)
            flags.append(rec)
        return flag_index[key]

    def ni(name: str) -> int:
        if name not in name_index:
            name_index[name] = len(names)
            names.append(name)
        return name_index[name]

    releases: dict[str, Any] = {}
    for v, d in docs.items():
        releases[v] = {
            "flags": [fi(r) for r in d["flags"]],
            "pipeline_flags": sorted({fi(r) for r in d["pipeline_flags"]}),
            "component_prefixes": d["component_prefixes"], "component_suffixes": d["component_suffixes"],
            "rejects_unknown": d["rejects_unknown"], "registry_ids": [ni(n) for n in d["registry_ids"]],
            "registry_patterns": d["registry_patterns"], "registry_consulted": d["registry_consulted"],
        }
    return {"format": 1, "flags": flags, "names": names, "releases": releases}


def unpack(data: dict[str, Any], version: str) -> dict[str, Any]:
    """One release of the data file, as ``extract`` wrote it (less what was not stored)."""
    r = data["releases"][version]
    return {"flags": [data["flags"][i] for i in r["flags"]],
            "pipeline_flags": [data["flags"][i] for i in r["pipeline_flags"]],
            **{k: r[k] for k in ("component_prefixes", "component_suffixes", "rejects_unknown",
                                 "registry_patterns", "registry_consulted")},
            "registry_ids": [data["names"][i] for i in r["registry_ids"]]}


def write(docs: dict[str, dict[str, Any]]) -> None:
    from kimi_lsp.knowledge.schema import _version_key

    ordered = {v: docs[v] for v in sorted(docs, key=_version_key)}
    OUT.write_text(json.dumps(pack(ordered), separators=(",", ":")) + "\n", "utf-8")


def read() -> dict[str, dict[str, Any]]:
    if not OUT.exists():
        return {}
    data = json.loads(OUT.read_text("utf-8"))
    return {v: unpack(data, v) for v in data["releases"]}


def shipped() -> list[str]:
    from build_launch_checks import shipped as schema_releases

    return schema_releases()


def add_release(version: str, wheel: Path | None = None) -> dict[str, Any] | None:
    """Extract ``version`` and store it with the others (None: the release has no diffusion server)."""
    doc = extract(wheel or fetch_wheel(version))
    docs = read()
    docs.pop(version, None)
    if doc is not None:
        docs[version] = doc
    write(docs)
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("versions", nargs="*", metavar="VERSION")
    ap.add_argument("--wheel", type=Path, help="one VERSION: read this wheel")
    ap.add_argument("--dump", action="store_true", help="print the VERSIONs' documents, store nothing")
    args = ap.parse_args(argv)
    if args.wheel and len(args.versions) != 1:
        ap.error("--wheel needs exactly one VERSION")
    wanted = args.versions or shipped()
    docs = {} if not args.versions else read()
    for v in wanted:
        doc = extract(args.wheel or fetch_wheel(v))
        if args.dump:
            print(json.dumps({v: doc}, indent=1))
            continue
        docs.pop(v, None)
        if doc is None:
            continue
        docs[v] = doc
        print(f"sglang {v}: {len(doc['flags'])} actions, {len(doc['pipeline_flags'])} pipeline options, "
              f"{len(doc['registry_ids'])} registry ids, unresolved {len(doc['unresolved'])}", file=sys.stderr)
        for u in doc["unresolved"]:
            print(f"  {u}", file=sys.stderr)
    if not args.dump:
        write(docs)
        print(f"{len(docs)} releases -> {OUT.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
