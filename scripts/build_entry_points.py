#!/usr/bin/env python3
"""Write knowledge/data/sglang_entry_points.json: per sglang release, which of the entry points that
take server arguments exist (``python -m sglang.bench_one_batch``, ``sglang.bench_offline_throughput``,
``sglang.bench_one_batch_server``, their ``sglang.benchmark.*`` homes, ``sglang.compile_deep_gemm``)
and the options each adds to ``ServerArgs.add_cli_args`` on its one parser (``BenchArgs`` /
``CompileArgs.add_cli_args``). Read from the released wheels' source (no code run): a back-compat
shim (``from sglang.benchmark.one_batch import cli_main``) is followed to the module it runs, and a
``BenchArgs`` imported from another module (``sglang.test.bench_one_batch_server_internal``) is
read there.

Every one of these modules parses with ``parser.parse_args()`` (an unknown option is an error);
a module that does not is recorded with ``"known_args": true`` (the checker then accepts what it
does not know). An ``add_argument`` whose option string is not a literal leaves the module's set
incomplete (``"complete": false``): the checker then reports no unknown option for it.

The router (``python -m sglang_router.launch_server``: ServerArgs plus ``RouterArgs.add_cli_args(parser,
use_router_prefix=True, exclude_host_port=True)`` plus its own ``--router-dp-worker-base-port``) comes
from the separate sglang-router package, whose release a launch rarely names: the union of the
options of the sglang-router wheels given after ``--router`` is written.

Usage: python scripts/build_entry_points.py /path/to/wheels/sglang-*.whl [--router sglang_router-*.whl]
       python scripts/build_entry_points.py --add sglang-X.Y.Z-....whl   (one more release, the rest kept)
"""
from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "server" / "kimi_lsp" / "knowledge" / "data" / "sglang_entry_points.json"
MODULES = (
    "sglang.bench_one_batch", "sglang.bench_offline_throughput", "sglang.bench_one_batch_server",
    "sglang.benchmark.one_batch", "sglang.benchmark.offline_throughput", "sglang.benchmark.one_batch_server",
    "sglang.compile_deep_gemm",
)
_ARGS_CLASSES = ("BenchArgs", "CompileArgs")


def _path(module: str) -> str:
    return module.replace(".", "/") + ".py"


def _flag(call: ast.Call) -> list[Any] | None:
    """[dest, options, action, type, nargs, choices] of one ``add_argument``; None: not literal."""
    options: list[str] = []
    for a in call.args:
        if not (isinstance(a, ast.Constant) and isinstance(a.value, str)):
            return None
        options.append(a.value)
    kw: dict[str, Any] = {}
    for k in call.keywords:
        if k.arg is None:
            return None
        if k.arg in ("action", "nargs", "dest"):
            if not isinstance(k.value, ast.Constant):
                return None
            kw[k.arg] = k.value.value
        elif k.arg == "type":
            kw["type"] = ast.unparse(k.value)
        elif k.arg == "choices":
            try:
                kw["choices"] = list(ast.literal_eval(k.value))
            except ValueError:
                kw["choices"] = None  # a computed list: any value is accepted by the checker
    longs = [o for o in options if o.startswith("--")]
    dest = kw.get("dest") or (longs[0] if longs else options[0]).lstrip("-").replace("-", "_")
    return [dest, options, kw.get("action", "store"), kw.get("type"), kw.get("nargs"), kw.get("choices")]


def _class_flags(tree: ast.Module, name: str) -> tuple[list[list[Any]], bool] | None:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            flags: list[list[Any]] = []
            complete = True
            for n in ast.walk(node):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument":
                    row = _flag(n)
                    if row is None:
                        complete = False
                    else:
                        flags.append(row)
            return flags, complete
    return None


def _imported_from(tree: ast.Module, name: str) -> str | None:
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and any(a.name == name for a in node.names):
            return node.module
    return None


def _entry(z: zipfile.ZipFile, names: set[str], module: str, depth: int = 0) -> dict[str, Any] | None:
    path = _path(module)
    if path not in names or depth > 3:
        return None
    source = z.read(path).decode("utf-8", "replace")
    tree = ast.parse(source)
    arg_classes = [
        ast.unparse(n.func.value) for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_cli_args"
    ]
    if "ServerArgs" not in arg_classes:
        # a back-compat shim: `from sglang.benchmark.one_batch import cli_main` run under __main__
        for runner in ("cli_main", "main"):
            target = _imported_from(tree, runner)
            if target is not None:
                found = _entry(z, names, target, depth + 1)
                if found is not None:
                    return {**found, "runs": found.get("runs", target)}
        return None
    flags: list[list[Any]] = []
    complete = True
    for cls in (c for c in arg_classes if c in _ARGS_CLASSES):
        read = _class_flags(tree, cls)
        if read is None:
            home = _imported_from(tree, cls)
            if home is not None and _path(home) in names:
                read = _class_flags(ast.parse(z.read(_path(home)).decode("utf-8", "replace")), cls)
        if read is None:
            complete = False
            continue
        flags.extend(read[0])
        complete = complete and read[1]
    extra = set(arg_classes) - {"ServerArgs", *_ARGS_CLASSES}
    if extra:
        complete = False  # another options class on the same parser: not read
    known = re.search(r"\.parse_known_args\(", source) is not None
    out: dict[str, Any] = {"flags": flags, "complete": complete}
    if known:
        out["known_args"] = True
    return out


def _version_of(wheel: str) -> tuple[int, ...]:
    # 0.5.10 after 0.5.9, a .postN after its release
    parts = re.findall(r"\d+", Path(wheel).name.split("-")[1])
    return tuple(int(p) for p in parts)


def _render(node: ast.expr) -> str | None:
    """An option string: a literal, or an f-string over ``prefix`` (``f"--{prefix}policy"``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = ""
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                out += part.value
            elif isinstance(part, ast.FormattedValue) and ast.unparse(part.value) == "prefix":
                out += "router-"
            else:
                return None
        return out
    return None


def _router_calls(node: ast.AST) -> list[ast.Call]:
    """``add_argument`` calls under ``node``, leaving out ``if not exclude_host_port:`` blocks."""
    out: list[ast.Call] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and "exclude_host_port" in ast.unparse(child.test):
            out.extend(c for o in child.orelse for c in _router_calls(o))
            continue
        if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr == "add_argument":
            out.append(child)
        out.extend(_router_calls(child))
    return out


def _router_options(wheel: str) -> tuple[set[str], bool]:
    options: set[str] = set()
    complete = True
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for path in ("sglang_router/router_args.py", "sglang_router/launch_router.py", "sglang_router/launch_server.py"):
            if path not in names:
                continue
            tree = ast.parse(z.read(path).decode("utf-8", "replace"))
            for node in ast.walk(tree):
                is_args = isinstance(node, ast.ClassDef) and node.name == "RouterArgs"
                is_main = path.endswith("launch_server.py") and isinstance(node, ast.FunctionDef) and node.name == "main"
                if not (is_args or is_main):
                    continue
                for call in _router_calls(node):
                    for a in call.args:
                        text = _render(a)
                        if text is None:
                            complete = False
                        else:
                            options.add(text)
    return options, complete


def _release_row(wheel: str, sets: list[list[list[Any]]]) -> dict[str, Any]:
    """module -> what it adds, for one release; new option tables are appended to ``sets``."""
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        row: dict[str, Any] = {}
        for module in MODULES:
            found = _entry(z, names, module)
            if found is None:
                continue
            flags = found.pop("flags")
            if flags not in sets:
                sets.append(flags)
            found["options"] = sets.index(flags)
            row[module] = found
    return row


def add(wheels: list[str]) -> int:
    """Add (or replace) the releases of ``wheels`` in the data file, keeping the others and the router's."""
    data = json.loads(OUT.read_text("utf-8"))
    for w in wheels:
        data["releases"][Path(w).name.split("-")[1]] = _release_row(w, data["option_sets"])
    data["releases"] = dict(sorted(data["releases"].items(), key=lambda kv: _version_of(f"x-{kv[0]}-")))
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n", "utf-8")
    print(f"{len(wheels)} release(s) added -> {OUT.relative_to(ROOT)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    wheels = sys.argv[1:] if argv is None else argv
    router_wheels: list[str] = []
    if "--router" in wheels:
        k = wheels.index("--router")
        wheels, router_wheels = wheels[:k], wheels[k + 1 :]
    if not wheels:
        print(__doc__, file=sys.stderr)
        return 2
    if wheels[:1] == ["--add"]:
        return add(wheels[1:])
    sets: list[list[list[Any]]] = []  # distinct option tables, shared between releases
    releases: dict[str, dict[str, Any]] = {}
    for w in sorted(wheels, key=_version_of):
        releases[Path(w).name.split("-")[1]] = _release_row(w, sets)
    router: set[str] = set()
    router_complete = True
    for w in sorted(router_wheels, key=_version_of):
        found, complete = _router_options(w)
        router |= found
        router_complete = router_complete and complete
    data: dict[str, Any] = {"format": 1, "option_sets": sets, "releases": releases}
    if router_wheels:
        data["router"] = {"read": [Path(w).name.split("-")[1] for w in sorted(router_wheels, key=_version_of)],
                          "complete": router_complete, "options": sorted(router)}
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n", "utf-8")
    print(f"{len(releases)} releases, {len(sets)} distinct option tables -> {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
