"""Launches written in Python, read from the AST (``syntax.python``); nothing is imported or run.

Three forms, as sglang's own docs and cookbooks write them:

- a string literal holding a whole launch command, read with the shell reader: the argument of
  sglang's doc helper ``launch_server_cmd("python3 -m sglang.launch_server ...")``, a command given
  to ``subprocess.Popen(cmd, shell=True)``, a command assigned to a name. Implicit concatenation is
  one string; f-string fields and ``str.format``/``%`` placeholders are unknown values. A string
  that is part of an expression (``"python -m sglang.launch_server " + args``) is not a complete
  command, and a docstring or a bare string statement is prose: neither is read.
- an argv list given to ``subprocess.run/Popen/call/check_call/check_output``, ``os.exec*``,
  ``os.spawnv*`` or ``asyncio.create_subprocess_exec``: each literal item is a word where it is
  written, anything else an unknown word; a name bound once in the scope to a literal list (or
  an item name bound once to a literal string) is followed.
- an argv list display that spells a launch, wherever it is (returned by a helper, joined into a
  string, handed on): read where it is written, with what the statements after it add in order
  (``.append``/``.extend``/``+=`` of literals; anything added under a condition, in a loop or by
  an expression is an unknown word where it comes). An f-string field naming a string bound
  once a few lines up (``args = "--tp 8"``) reads as that string, where it is written.
- ``sglang.Engine(...)`` / ``sgl.Engine(...)`` / ``ServerArgs(...)`` / ``sgl.Runtime(...)`` (names resolved through the
  module's imports): the keyword arguments are ServerArgs fields, handed on as an ``Entry.ENGINE``
  launch whose ``config`` holds them (``launch.engine_tokens`` maps them onto the flags); ``**opts``
  of a literal dict bound once in the scope is read too, other ``**`` make the launch a doubt.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from kimi_lsp import _regex
from kimi_lsp.surfaces.model import (
    ConfigEntry,
    ConfigFile,
    Entry,
    LaunchCommand,
    Surface,
    SurfaceResult,
    Token,
    Unknown,
)
from kimi_lsp.surfaces.shell import FlatSource, LaunchContext, Source, Word, launches_from_words, launches_in_source
from kimi_lsp.syntax import python as py
from kimi_lsp.syntax.shell import MappedSource
from kimi_lsp.text import Located, Span

_NAMES_SGLANG = _regex.compile("sglang", re.IGNORECASE)
# which calls run an argv list, and where the list is: (index of the positional, keyword name);
# index -1: the positionals themselves are the words (asyncio.create_subprocess_exec)
_ARGV_CALLS: dict[str, tuple[int, str | None]] = {
    **{f"subprocess.{f}": (0, "args") for f in ("run", "Popen", "call", "check_call", "check_output")},
    **{f"os.{f}": (1, None) for f in ("execv", "execve", "execvp", "execvpe")},
    **{f"os.{f}": (2, None) for f in ("spawnv", "spawnve", "spawnvp", "spawnvpe")},
    "asyncio.create_subprocess_exec": (-1, None),
}
# sglang.Runtime (the frontend language's server) hands its keywords to ServerArgs too, but for its own
# `launch_timeout` (a parameter since 0.5.21; before, ServerArgs refuses it: said nothing of either way)
_RUNTIME_CALLS = frozenset({"sglang.Runtime", "sglang.api.Runtime", "sglang.lang.api.Runtime",
                            "sglang.lang.backend.runtime_endpoint.Runtime"})
_RUNTIME_OWN = frozenset({"launch_timeout"})
_ENGINE_CALLS = frozenset({
    "sglang.Engine", "sglang.srt.entrypoints.engine.Engine", "sglang.api.Engine",
    "sglang.srt.server_args.ServerArgs", "sglang.ServerArgs",
    *_RUNTIME_CALLS,
})
_MUTATORS = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse", "update", "setdefault"})
# str.format / printf placeholders in a plain string: values filled in when it runs
_FORMAT_FIELD = _regex.compile(r"\{[A-Za-z0-9_.\[\]]*(?:![rsa])?(?::[^{}]*)?\}|%(?:\([A-Za-z_]\w*\))?[-#0 +]*\d*(?:\.\d+)?[sdifrx]")
_UNKNOWN = "$_"
# calls whose string arguments are text to compare or search, not commands
# (`line.startswith("sglang serve --model-path ")`, `self.assertIn("--tp 8", cmd)`, `re.search(...)`)
_TEXT_METHODS = frozenset({
    "startswith", "endswith", "find", "rfind", "index", "rindex", "count", "replace", "split", "rsplit",
    "partition", "rpartition", "strip", "lstrip", "rstrip", "removeprefix", "removesuffix", "join",
    "match", "fullmatch", "search", "sub", "subn", "findall", "finditer", "compile", "escape",
})


def mentions_sglang(text: str) -> bool:
    return _NAMES_SGLANG.search(text) is not None


def read_python(path: Path, text: str) -> SurfaceResult:
    """The launches of a Python file (read only when its text names sglang)."""
    if not mentions_sglang(text):
        return SurfaceResult()
    launches = python_launches(path, text, FlatSource(text), Surface.PYTHON)
    return SurfaceResult(launches=tuple(launches), is_launch_file=bool(launches))


def python_launches(path: Path, code: str, src: Source, surface: Surface) -> list[LaunchCommand]:
    """Launches of the Python ``code``; ``src`` locates its characters in the file (``src.text``
    has the same length as ``code``: a notebook cell whose IPython lines ``code`` blanks)."""
    module = py.parse(code)
    if module is None:
        return []
    reader = _Reader(path, code, src, surface)
    reader.imports(module)
    reader.block(module.body, {}, set())
    return reader.out


class _Reader:
    def __init__(self, path: Path, code: str, src: Source, surface: Surface) -> None:
        self.path = path
        self.code = code
        self.src = src
        self.surface = surface
        self.lines = py.Lines(code)
        self.names: dict[str, str] = {}  # local name -> qualified name, from the imports
        self.out: list[LaunchCommand] = []
        self.argv_lists: set[int] = set()  # list displays read as launches where they are written

    # -- positions ----------------------------------------------------------------------------
    def span(self, node: ast.AST) -> Span:
        a, b = self.lines.span(node)
        return self.src.span(a, b)

    def chars(self, value: str, units: Sequence[tuple[int, int]]) -> Source:
        if not units:
            return MappedSource("", [], [], self.src.anchor())
        return self.src.sub(value, units)

    # -- names --------------------------------------------------------------------------------
    def imports(self, module: ast.Module) -> None:
        for node in ast.walk(module):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.names[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".", 1)[0]
                        self.names[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        self.names[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def qualname(self, func: ast.expr) -> str | None:
        parts: list[str] = []
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name):
            return None
        base = self.names.get(func.id)
        if base is None:
            return None
        return ".".join([base, *reversed(parts)])

    # -- scopes -------------------------------------------------------------------------------
    def block(self, body: list[ast.stmt], outer: dict[str, ast.expr], outer_grown: set[str]) -> None:
        """One scope (the module, a function, a class body): names bound once to a literal are
        followed; a name bound twice, in a loop, or mutated is not known (or not complete)."""
        stores: dict[str, int] = {}
        values: dict[str, ast.expr] = {}
        grown: set[str] = set()
        # `cmd += ["--flag", x]` (often under an `if`) grows the list where we do not follow it:
        # the list stays known, with an unknown tail, instead of becoming unknown (issue 31)
        extended = {id(n.target) for n in _scope_nodes(body)
                    if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and isinstance(n.target, ast.Name)}
        augmented: dict[str, int] = {}
        for node in _scope_nodes(body):
            if isinstance(node, ast.Name) and id(node) in extended:
                augmented[node.id] = augmented.get(node.id, 0) + 1
            elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                stores[node.id] = stores.get(node.id, 0) + 1
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                values[node.targets[0].id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                values[node.target.id] = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
                if isinstance(node.func.value, ast.Name):
                    grown.add(node.func.value.id)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name):
                grown.add(node.value.id)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                        stores[inner.id] = stores.get(inner.id, 0) + 1  # bound on each turn
        for name, count in augmented.items():
            if isinstance(values.get(name), ast.List) and stores.get(name) == 1:
                grown.add(name)  # a known list with more items after it
            else:
                stores[name] = stores.get(name, 0) + count  # `n += 1`, `s += "x"`: rebound
        env = {k: v for k, v in outer.items() if k not in stores}
        env.update({k: v for k, v in values.items() if stores.get(k) == 1})
        grown = grown | {k for k in outer_grown if k not in stores}
        self.argv_sites(body, env)
        for node in _scope_nodes(body):
            if isinstance(node, ast.Call):
                self.call(node, env, grown)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.block(node.body, env, grown)
            elif isinstance(node, ast.Lambda):
                continue
        for node, parent in _string_sites(body):
            self.string(node, parent, env)

    def text_of(self, node: ast.expr, env: dict[str, ast.expr]) -> tuple[str, list[tuple[int, int]]] | None:
        """The located text of a string literal, an f-string, or a ``+`` of them and of names
        bound once to one (None: a part is not known)."""
        parts = _operands(node)
        if len(parts) > 1:
            value = ""
            units: list[tuple[int, int]] = []
            for part in parts:
                if isinstance(part, ast.Name) and isinstance(env.get(part.id), (ast.Constant, ast.JoinedStr)):
                    part = env[part.id]
                got = self.text_of(part, env) if not isinstance(part, ast.BinOp) else None
                if got is None:
                    return None
                value, units = value + got[0], units + got[1]
            return value, units
        sv = py.string_value(self.code, self.lines, node)
        if sv is None:
            return None
        if sv.placeholders:
            return self.fill_fields(sv.value, list(sv.units), env)
        return _format_fields(sv.value, list(sv.units))

    def fill_fields(self, value: str, units: list[tuple[int, int]],
                    env: dict[str, ast.expr]) -> tuple[str, list[tuple[int, int]]]:
        """An f-string's ``{name}`` field whose name is bound once in the scope to a plain string
        (``args = "--tp 8 --dp 2"`` a few lines up) reads as that string, each character where
        it is written there; any other field stays an unknown value (``$___``)."""
        out_chars: list[str] = []
        out_units: list[tuple[int, int]] = []
        k = 0
        while k < len(value):
            unit = units[k]
            end = k
            while end < len(value) and units[end] == unit:
                end += 1
            field = self.code[unit[0] : unit[1]] if value[k] == "$" and end - k > 1 else ""
            inner = field[1:-1].strip() if field.startswith("{") and field.endswith("}") else ""
            bound = env.get(inner) if inner.isidentifier() else None
            sv = py.string_value(self.code, self.lines, bound) if isinstance(bound, ast.Constant) else None
            number = _number_text(self.code, self.lines, bound)
            if sv is not None and not sv.placeholders:
                out_chars.append(sv.value)
                out_units.extend(sv.units)
            elif number is not None:  # `tp = 8` a few lines up: `{tp}` is 8, where it is written
                out_chars.append(number[0])
                out_units.extend(number[1])
            else:
                out_chars.append(value[k:end])
                out_units.extend(units[k:end])
            k = end
        return "".join(out_chars), out_units

    # -- argv lists built where they are written (issue 31) -----------------------------------
    def argv_sites(self, body: list[ast.stmt], env: dict[str, ast.expr]) -> None:
        """A list display spelling a launch (``["python", "-m", "sglang.launch_server", ...]``) is
        read where it is written, whatever runs it later (returned, joined into a string, handed
        to a helper): the items added to it by the statements after it in the same block
        (``.append(x)``, ``.extend([...])``, ``+= [...]``) are read in order, each literal where it
        is written; items added under a condition or a loop, or by an expression we do not read,
        are one unknown word each, where they come."""
        growth = _Growth(body)
        compared = _compared(body)
        for node in _scope_nodes(body):
            if not isinstance(node, (ast.List, ast.Tuple)) or id(node) in self.argv_lists:
                continue
            if not any(isinstance(e, ast.Constant) and isinstance(e.value, str) and mentions_sglang(e.value)
                       for e in node.elts):
                continue
            words = [self.word(e, env) for e in node.elts]
            ctx = LaunchContext(self.path, self.surface, self.path.parent)
            if not launches_from_words(words, ctx, (), self.span(node).start):
                continue  # not a launch (a list of module names, a command of something else)
            if id(node) in compared:
                continue  # an expected value in a test (`assert cmd == [...]`), not a command
            for item in growth.steps(node):
                words.extend(self.grown_words(item, env))
            self.argv_lists.add(id(node))
            self.out.extend(launches_from_words(words, ctx, (), self.span(node).start))

    def grown_words(self, step: tuple[str, ast.AST], env: dict[str, ast.expr]) -> list[Word]:
        """The words one growth step adds: a literal list's items, one item, or one unknown word."""
        kind, node = step
        if kind == "items" and isinstance(node, (ast.List, ast.Tuple)):
            return [self.word(e, env) for e in node.elts]
        if kind == "one" and isinstance(node, ast.expr) and not isinstance(node, ast.Starred):
            return [self.word(node, env)]
        return [self.unknown(node)]

    # -- the three forms ----------------------------------------------------------------------
    def string(self, node: ast.expr, parent: ast.AST, env: dict[str, ast.expr]) -> None:
        if isinstance(node, ast.Constant) and (not isinstance(node.value, str) or not mentions_sglang(node.value)):
            return
        got = self.text_of(node, env)
        if got is None or not mentions_sglang(got[0]):
            return
        value, units = got
        ctx = LaunchContext(self.path, self.surface, self.path.parent)
        self.out.extend(launches_in_source(self.chars(value, units), ctx))

    def call(self, node: ast.Call, env: dict[str, ast.expr], grown: set[str]) -> None:
        name = self.qualname(node.func)
        if name is None:
            return
        if name in _ENGINE_CALLS:
            self.engine(node, name, env)
            return
        where = _ARGV_CALLS.get(name)
        if where is None:
            return
        index, keyword = where
        if index < 0:
            words = [self.word(arg, env) for arg in node.args]
        else:
            arg = node.args[index] if index < len(node.args) else None
            if arg is None and keyword is not None:
                arg = next((k.value for k in node.keywords if k.arg == keyword), None)
            if arg is None:
                return
            words = self.argv(arg, env, grown)
        if not words or not any(mentions_sglang(w.value) for w in words):
            return
        ctx = LaunchContext(self.path, self.surface, self.path.parent)
        self.out.extend(launches_from_words(words, ctx, (), self.span(node).start))

    def argv(self, arg: ast.expr, env: dict[str, ast.expr], grown: set[str]) -> list[Word]:
        tail: list[Word] = []
        if isinstance(arg, ast.Name) and arg.id in env:
            if arg.id in grown:
                tail = [self.unknown(arg)]  # items added where we do not follow
            arg = env[arg.id]
        if not isinstance(arg, (ast.List, ast.Tuple)) or id(arg) in self.argv_lists:
            return []  # (a list read where it is written is one launch, not two)
        return [self.word(elt, env) for elt in arg.elts] + tail

    def word(self, node: ast.expr, env: dict[str, ast.expr]) -> Word:
        target = node
        if isinstance(node, ast.Name) and isinstance(env.get(node.id), (ast.Constant, ast.JoinedStr)):
            target = env[node.id]
        sv = py.string_value(self.code, self.lines, target)
        if sv is None:
            return self.unknown(node)
        chars = self.chars(sv.value, sv.units)
        span = self.span(target)
        return Word(Token(sv.value, span, sv.exact and chars.exact(0, len(sv.value))), chars)

    def unknown(self, node: ast.AST) -> Word:
        span = self.span(node)
        return Word(Token(_UNKNOWN, span, exact=False), MappedSource(_UNKNOWN, [span.start] * 2, [span.end] * 2, span.end))

    def engine(self, node: ast.Call, name: str, env: dict[str, ast.expr]) -> None:
        if node.args or any(k.arg == "server_args" for k in node.keywords):
            return  # positional arguments are a TypeError; a ServerArgs given whole is read where it is made
        runtime = name in _RUNTIME_CALLS
        entries: list[ConfigEntry] = []
        unknown: list[Token] = []
        doubts: list[str] = []
        for kw in node.keywords:
            if runtime and kw.arg in _RUNTIME_OWN:
                continue
            if kw.arg is not None:
                entries.append(self.entry(kw.arg, self._keyword_name_span(kw), kw.value, env))
                continue
            mapping = kw.value
            shown = ast.get_source_segment(self.code, mapping) or "..."
            if isinstance(mapping, ast.Name) and isinstance(env.get(mapping.id), ast.Dict):
                mapping = env[mapping.id]
            got = self.dict_entries(mapping, env) if isinstance(mapping, ast.Dict) else None
            if got is None:
                unknown.append(self.unknown(kw.value).token)
                doubts.append(f"the keyword arguments of `**{shown}` are known only when it runs")
                continue
            entries.extend(got)
        span = self.span(node)
        short = name.rsplit(".", 1)[-1]
        self.out.append(
            LaunchCommand(
                path=self.path,
                surface=self.surface,
                entry=Entry.ENGINE,
                program=Located(f"sglang.{short}" if short in ("Engine", "Runtime") else short, self.span(node.func)),
                argv=tuple(unknown),
                span=span,
                base_dir=self.path.parent,
                config=ConfigFile(self.path, "python", tuple(entries)),
                doubt="; ".join(doubts) or None,
            )
        )

    def _keyword_name_span(self, kw: ast.keyword) -> Span:
        a, _ = self.lines.span(kw)
        name = kw.arg or ""
        if self.code.startswith(name, a):
            return self.src.span(a, a + len(name))
        return self.span(kw)

    def dict_entries(self, node: ast.Dict, env: dict[str, ast.expr]) -> list[ConfigEntry] | None:
        out: list[ConfigEntry] = []
        for key, value in zip(node.keys, node.values):
            if key is None:
                return None  # {**other}
            sv = py.string_value(self.code, self.lines, key)
            if sv is None or sv.placeholders:
                return None
            out.append(self.entry(sv.value, self.span(key), value, env))
        return out

    def entry(self, key: str, key_span: Span, node: ast.expr, env: dict[str, ast.expr]) -> ConfigEntry:
        if isinstance(node, ast.Name) and isinstance(env.get(node.id), ast.Constant):
            node = env[node.id]
        value, items = self.literal(node)
        return ConfigEntry(Located(key, key_span), value, self.span(node), items)

    def literal(self, node: ast.expr) -> tuple[object, tuple[Span, ...]]:
        """The value a literal stands for (Unknown for anything else) and, for a list, each item's span."""
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                sv = py.string_value(self.code, self.lines, node)
                return (sv.value if sv is not None else node.value), ()
            if node.value is None or isinstance(node.value, (bool, int, float)):
                return node.value, ()
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            v = node.operand.value
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return -v, ()
        if isinstance(node, (ast.List, ast.Tuple)):
            values = [self.literal(e)[0] for e in node.elts]
            if all(not isinstance(v, (list, dict)) for v in values):
                return values, tuple(self.span(e) for e in node.elts)
        return Unknown(ast.get_source_segment(self.code, node) or "..."), ()


def _scope_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of a scope's statements, the nested function and class statements themselves
    included but not their bodies (their own scopes), nor lambda bodies."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner: list[ast.AST] = [*node.decorator_list]
            if not isinstance(node, ast.ClassDef):
                inner.extend(d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None)
            else:
                inner.extend(node.bases)
            stack.extend(reversed(inner))
            continue
        if isinstance(node, ast.Lambda):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


_Step = tuple[str, ast.AST]  # ("items", a list display) | ("one", an item) | ("unknown", what adds we know not what)
_GROW = frozenset({"append", "extend"})


def _statement_lists(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """The scope's statement lists: its body and every block nested in it (not nested scopes)."""
    yield body
    for node in _scope_nodes(body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        for name in ("body", "orelse", "finalbody"):  # (an except clause's and a match case's too)
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _operands(node: ast.expr) -> list[ast.expr]:
    """``a + b + c`` as [a, b, c]; anything else as [node]."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*_operands(node.left), node.right]
    return [node]


def _concat_steps(rest: list[ast.expr]) -> list[_Step]:
    return [("items", r) if isinstance(r, (ast.List, ast.Tuple)) else ("unknown", r) for r in rest]


def _mutation(node: ast.AST, name: str) -> _Step | None:
    """The growth a statement-level node makes to the list bound to ``name``, when it is one we
    read (``name.append(x)``, ``name.extend([...])``, ``name += [...]``)."""
    if isinstance(node, ast.Expr):
        node = node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
            and node.func.value.id == name and node.func.attr in _GROW and len(node.args) == 1 and not node.keywords:
        arg = node.args[0]
        if node.func.attr == "append":
            return ("one", arg)
        return _concat_steps([arg])[0]
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name) \
            and node.target.id == name:
        return _concat_steps([node.value])[0]
    return None


class _Growth:
    """What is added to a list display after it is written, in order: the other operands of the
    ``+`` chain it starts, and, for a list bound to a name, the changes to that name after the
    binding. A change that is a statement of the binding's own block (``cmd.append(x)``,
    ``cmd.extend([...])``, ``cmd += [...]``) is read; any other (under an ``if``, in a loop, a
    method we do not read) is one unknown word where it comes, so that the list is never taken
    for complete when it may not be. Indexed in one pass over the scope; each launch list then
    looks at the changes of its own name only."""

    def __init__(self, body: list[ast.stmt]) -> None:
        self.concat: dict[int, list[_Step]] = {}  # list display -> the rest of its `+` chain
        self.bound: dict[int, tuple[str, ast.stmt]] = {}  # list display -> (name, binding statement)
        self.block_of: dict[int, int] = {}  # statement -> the id of the statement list holding it
        self.stmt_of: dict[int, ast.stmt] = {}  # node -> the innermost statement holding it
        self.changes: dict[str, list[ast.AST]] = {}
        self.binds: dict[str, list[ast.stmt]] = {}
        for block in _statement_lists(body):
            for st in block:
                self.block_of[id(st)] = id(block)
                for n in ast.walk(st):
                    self.stmt_of[id(n)] = st  # inner blocks come later and take their own nodes
                name = _bound_name(st)
                if name:
                    self.binds.setdefault(name, []).append(st)
                    value = st.value if isinstance(st, (ast.Assign, ast.AnnAssign)) else None
                    ops = _operands(value) if value is not None else []
                    if ops and isinstance(ops[0], (ast.List, ast.Tuple)):
                        self.bound[id(ops[0])] = (name, st)
                else:
                    # `words += [...launch...]`, `words.extend([...])`: the launch is the tail of a
                    # list that later statements grow like one bound to it
                    grown = _extended_by(st)
                    if grown is not None:
                        self.bound[id(grown[1])] = (grown[0], st)
        for node in _scope_nodes(body):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                ops = _operands(node)
                if isinstance(ops[0], (ast.List, ast.Tuple)) and id(ops[0]) not in self.concat:
                    self.concat[id(ops[0])] = _concat_steps(ops[1:])
            changed = _changed_name(node)
            if changed is not None:
                self.changes.setdefault(changed, []).append(node)

    def steps(self, node: ast.expr) -> list[_Step]:
        out = list(self.concat.get(id(node), ()))
        if id(node) not in self.bound:
            return out
        name, binding = self.bound[id(node)]
        after = _pos(binding)
        rebind = min((b for b in self.binds.get(name, ()) if _pos(b) > after), key=_pos, default=None)
        done: set[int] = set()
        for change in sorted(self.changes.get(name, ()), key=_pos):
            if _pos(change) <= after:
                continue
            if rebind is not None and _pos(change) > _pos(rebind):
                if self.block_of.get(id(rebind)) != self.block_of.get(id(binding)):
                    out.append(("unknown", change))  # rebound only on some paths
                break
            st = self.stmt_of.get(id(change), binding)
            if id(st) in done:
                continue
            done.add(id(st))
            step = _mutation(st, name) if self.block_of.get(id(st)) == self.block_of.get(id(binding)) else None
            out.append(step if step is not None else ("unknown", change))
        return out


def _number_text(code: str, lines: py.Lines, node: ast.AST | None) -> tuple[str, list[tuple[int, int]]] | None:
    """An int or float literal as an f-string field shows it (``str``), located where it is
    written when it is written so (``8``, ``0.85``); None for anything else."""
    if not isinstance(node, ast.Constant) or isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
        return None
    text = str(node.value)
    a, b = lines.span(node)
    if code[a:b] != text:
        return None  # `1e3`, `0x10`, `1_000`: shown otherwise than written
    return text, [(a + k, a + k + 1) for k in range(len(text))]


def _pos(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _changed_name(n: ast.AST) -> str | None:
    """The name whose list ``n`` changes: a mutating method, ``+=``, an item assignment."""
    target: ast.AST | None = None
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _MUTATORS:
        target = n.func.value
    elif isinstance(n, ast.AugAssign):
        target = n.target
    elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store):
        target = n.value
    return target.id if isinstance(target, ast.Name) else None


def _extended_by(st: ast.stmt) -> tuple[str, ast.expr] | None:
    """(name, list display) of ``name += [...]`` or ``name.extend([...])`` as a statement."""
    if isinstance(st, ast.AugAssign) and isinstance(st.op, ast.Add) and isinstance(st.target, ast.Name):
        ops = _operands(st.value)
        return (st.target.id, ops[0]) if ops and isinstance(ops[0], (ast.List, ast.Tuple)) else None
    call = st.value if isinstance(st, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "extend" \
            and isinstance(call.func.value, ast.Name) and len(call.args) == 1 and not call.keywords \
            and isinstance(call.args[0], (ast.List, ast.Tuple)):
        return call.func.value.id, call.args[0]
    return None


def _bound_name(st: ast.stmt) -> str:
    targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AnnAssign) else []
    return targets[0].id if len(targets) == 1 and isinstance(targets[0], ast.Name) else ""


def _compared(body: list[ast.stmt]) -> set[int]:
    """List displays that are compared or asserted on (a test's expected argv), not run."""
    out: set[int] = set()
    for node in _scope_nodes(body):
        inside: list[ast.AST] = []
        if isinstance(node, (ast.Compare, ast.Assert)):
            inside = [node]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.startswith("assert"):
            inside = [*node.args, *(k.value for k in node.keywords)]
        for part in inside:
            out.update(id(n) for n in ast.walk(part) if isinstance(n, (ast.List, ast.Tuple)))
    return out


def _string_sites(body: list[ast.stmt]) -> Iterator[tuple[ast.expr, ast.AST]]:
    """String literals that stand whole where a command goes: a call's argument, a keyword's
    value, an assigned or returned value, a dict value. Not a docstring or bare string (prose),
    not a piece of a larger expression (an incomplete command)."""
    for node in _scope_nodes(body):
        children: list[ast.expr] = []
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and (node.func.attr in _TEXT_METHODS or node.func.attr.startswith("assert")):
                continue
            children = [a for a in node.args if not isinstance(a, ast.Starred)]
            children.extend(k.value for k in node.keywords)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.Return)) and node.value is not None:
            children = [node.value]
        elif isinstance(node, ast.Dict):
            children = list(node.values)
        for child in children:
            if isinstance(child, (ast.Constant, ast.JoinedStr)):
                yield child, node
            elif isinstance(child, ast.BinOp) and isinstance(child.op, ast.Add) and all(
                isinstance(o, (ast.Constant, ast.JoinedStr, ast.Name)) for o in _operands(child)
            ):
                yield child, node  # `"python -m sglang.launch_server " + ARGS`: read when every part is known


def _format_fields(value: str, units: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """``{model}`` / ``%s`` in a plain string (filled by ``.format``/``%`` when it runs): unknown words."""
    if "{" not in value and "%" not in value:
        return value, units
    chars = list(value)
    out_units = list(units)
    for m in _FORMAT_FIELD.finditer(value):
        a, b = m.start(), m.end()
        chars[a:b] = "$" + "_" * (b - a - 1)
        whole = (units[a][0], units[b - 1][1])
        out_units[a:b] = [whole] * (b - a)
    return "".join(chars), out_units
