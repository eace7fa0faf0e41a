"""Launches in three more kinds of file: systemd units, VS Code debug configurations, text files.

- A systemd unit (``*.service``, or an ``ini``/``systemd`` block in documentation): ``ExecStart=``
  (its ``-@:+!`` prefixes dropped, ``\\`` continuation lines joined) is read with the shell reader
  on a view of the file in which everything else is blank (positions are the file's own), with the
  ``Environment=`` assignments of the unit as its environment.
- ``.vscode/launch.json``: a Python debug configuration (``"type": "debugpy"``/``"python"``) whose
  ``"module"`` is an sglang entry point (or whose ``"program"`` is ``sglang/launch_server.py``);
  ``"args"`` (a list: each item a word where it is written; a string: read with the shell reader)
  and ``"env"``. Comments and trailing commas (JSON with comments) are blanked before reading.
- A ``.txt`` file of commands, read with the shell reader; a file that is not mostly the launches'
  lines (notes, logs around a command) makes its launches a doubt.
- A Makefile (``Makefile``, ``makefile``, ``GNUmakefile``, ``*.mk``): its recipe lines (a tab first,
  and the ``\\`` continuation lines after one) are the shell make runs; they are read with the shell
  reader on a view in which every other line is blank and make's ``@``/``-``/``+`` prefixes are
  spaces. ``$(VAR)`` and ``$(or ...)`` are make's, read as words whose value is not known.
"""
from __future__ import annotations

from pathlib import Path

from kimi_lsp import _regex
from kimi_lsp._record import replace
from kimi_lsp.surfaces.model import Entry, EnvVar, LaunchCommand, Surface, SurfaceResult, Token
from kimi_lsp.surfaces.shell import LAUNCH_MODULES, LaunchContext, launches_from_commands
from kimi_lsp.syntax.shell import FlatSource, env_from_word, lex, prose_lines
from kimi_lsp.text import Located, Span, line_spans

_LAUNCH_WORDS = _regex.compile(r"sglang\.(?:launch_server|bench_one_batch_server|benchmark\.|compile_deep_gemm|cli\.main)|sglang['\"]?\s+serve\b")
_UNIT_KEY = _regex.compile(r"[ \t]*(ExecStart|Environment)[ \t]*=[ \t]*")
_EXEC_PREFIX = "-@:+!|"
_TEXT_DOUBT = "kimi-lsp only guesses this is a launch: the text file it is in is not mostly commands"


def read(kind: Surface, path: Path, text: str) -> SurfaceResult:
    if not _LAUNCH_WORDS.search(text):
        return SurfaceResult()
    if kind is Surface.SYSTEMD:
        launches = unit_launches(path, text, Span(0, len(text)), Surface.SYSTEMD)
    elif kind is Surface.VSCODE:
        launches = vscode_launches(path, text)
    elif kind is Surface.MAKEFILE:
        launches = makefile_launches(path, text)
    else:
        launches = text_launches(path, text)
    return SurfaceResult(launches=tuple(launches), is_launch_file=bool(launches))


# -- Makefile ---------------------------------------------------------------------------------------


def makefile_launches(path: Path, text: str) -> list[LaunchCommand]:
    """The launches of a Makefile's recipes: the recipe lines, everything else blank."""
    view = [c if c in "\r\n" else " " for c in text]
    recipe = continued = False
    for a, b in line_spans(text):
        line = text[a:b].rstrip("\r")
        if not (continued or (recipe and line.startswith("\t"))):
            # a rule line (`target: prerequisites`) opens a recipe; an assignment or a directive
            # closes it; a blank or comment line between recipe lines leaves it as it is
            if line.strip() and not line.lstrip().startswith("#"):
                recipe = ":" in line and not _MAKE_ASSIGN.match(line)
            continued = False
            continue
        view[a:b] = text[a:b]
        k = a + len(line) - len(line.lstrip("\t "))
        while not continued and k < b and text[k] in "@-+":  # make's echo/ignore/always prefixes
            view[k] = " "
            k += 1
        continued = line.endswith("\\")
    src = FlatSource("".join(view))
    ctx = LaunchContext(path, Surface.MAKEFILE, path.parent)
    commands, _problems = lex(src)  # make, not the shell, decides what a recipe is: no syntax claims
    return launches_from_commands(commands, ctx)


_MAKE_ASSIGN = _regex.compile(r"\s*(?:export\s+|override\s+)?[A-Za-z_][\w.-]*\s*(?:[:+?!]?=|::=)")


# -- systemd ---------------------------------------------------------------------------------------


def unit_launches(path: Path, text: str, window: Span, surface: Surface, base: int = 0) -> list[LaunchCommand]:
    """The ``ExecStart=`` launches of the unit written in ``text[window]`` (a file, a block of a
    document, a heredoc body); ``text[0]`` sits at file offset ``base``."""
    body = text[window.start : window.end]
    view = [c if c in "\r\n" else " " for c in body]
    env_view = list(view)
    found_exec = False
    lines = line_spans(body)
    i = 0
    while i < len(lines):
        a, b = lines[i]
        i += 1
        m = _UNIT_KEY.match(body, a, b)
        if m is None:
            continue
        start = m.end()
        is_exec = m.group(1) == "ExecStart"
        if is_exec:
            while start < b and body[start] in _EXEC_PREFIX:
                start += 1
        target = view if is_exec else env_view
        found_exec = found_exec or is_exec
        target[start:b] = body[start:b]
        # a line ending in a backslash goes on on the next one (systemd joins them)
        while body[start:b].rstrip().endswith("\\") and i < len(lines):
            a, b = lines[i]
            i += 1
            start = a
            target[a:b] = body[a:b]
    if not found_exec:
        return []
    at = base + window.start
    env: list[EnvVar] = []
    env_commands, _ = lex(FlatSource("".join(env_view), at))
    for command in env_commands:
        for word in (*command.assignment_words, *command.words):
            var = env_from_word(word)
            if var is not None:
                env.append(var)
    commands, _problems = lex(FlatSource("".join(view), at))
    ctx = LaunchContext(path, surface, path.parent)
    return launches_from_commands(commands, ctx, env)


# -- VS Code ---------------------------------------------------------------------------------------

_PY_DEBUG_TYPES = frozenset({"debugpy", "python"})
_PROGRAM_SCRIPTS = {"sglang/launch_server.py": Entry.LAUNCH_SERVER}


def vscode_launches(path: Path, text: str) -> list[LaunchCommand]:
    from kimi_lsp.syntax import notebook as nb  # the located JSON reader

    data, problem = nb.load(_blank_jsonc(text))
    if problem is not None or not isinstance(data, dict):
        return []
    configs = data.get("configurations")
    out: list[LaunchCommand] = []
    for conf in configs if isinstance(configs, list) else []:
        if not isinstance(conf, dict):
            continue
        kind = conf.get("type")
        if not isinstance(kind, nb.JString) or kind.value not in _PY_DEBUG_TYPES:
            continue
        program = conf.get("module")
        entry = LAUNCH_MODULES.get(program.value) if isinstance(program, nb.JString) else None
        if entry is None:
            program = conf.get("program")
            if isinstance(program, nb.JString):
                entry = next((e for s, e in _PROGRAM_SCRIPTS.items() if program.value.endswith(s)), None)
        if entry is None or not isinstance(program, nb.JString):
            continue
        args = conf.get("args")
        argv = _json_args(path, text, args)
        if argv is None:
            continue
        env: list[EnvVar] = []
        raw_env = conf.get("env")
        if isinstance(raw_env, dict):
            for name, value in raw_env.items():
                if isinstance(value, nb.JString):
                    env.append(EnvVar(Located(name, value.span), Located(value.value, value.span)))
        ends = [t.span.end for t in argv] + [program.span.end]
        out.append(LaunchCommand(
            path=path,
            surface=Surface.VSCODE,
            entry=entry,
            program=Located(program.value, program.span),
            argv=tuple(argv),
            span=Span(program.span.start, max(ends)),
            base_dir=path.parent.parent,  # ${workspaceFolder}, the debugger's default working directory
            env=tuple(env),
        ))
    return out


def _json_args(path: Path, text: str, args: object) -> list[Token] | None:
    """``"args"``: a list of strings (each a word, located on the JSON string), or one string the
    debugger splits as a shell would; None for anything else (not read rather than misread)."""
    from kimi_lsp.syntax import notebook as nb

    if args is None:
        return []
    if isinstance(args, list):
        out = []
        for item in args:
            if not isinstance(item, nb.JString):
                return None
            inner = Span(item.span.start + 1, item.span.end - 1)
            out.append(Token(item.value, item.span if item.escaped else inner, exact=not item.escaped))
        return out
    if isinstance(args, nb.JString) and not args.escaped:
        commands, _ = lex(FlatSource(args.value, args.span.start + 1))
        return [w.token for c in commands for w in c.words]
    return None


def _blank_jsonc(text: str) -> str:
    """JSON with comments made JSON, same length: ``//`` and ``/* */`` comments outside strings
    and commas before a closing bracket become spaces."""
    out = list(text)
    i, n = 0, len(text)
    last_comma = -1
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            last_comma = -1
            continue
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = " " * (j - i)
            i = j
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out[i:j] = [ch if ch in "\r\n" else " " for ch in text[i:j]]
            i = j
            continue
        if c == ",":
            last_comma = i
        elif c in "]}" and last_comma >= 0:
            out[last_comma] = " "
            last_comma = -1
        elif not c.isspace():
            last_comma = -1
        i += 1
    return "".join(out)


# -- text files ------------------------------------------------------------------------------------


def text_launches(path: Path, text: str) -> list[LaunchCommand]:
    src = FlatSource(text)
    commands, _problems = lex(src)  # a text file's shell syntax is nobody's claim
    launches = launches_from_commands(commands, LaunchContext(path, Surface.TEXT, path.parent))
    if not launches:
        return []
    if prose_lines(text, commands) or not _mostly(text, launches):
        launches = [lc if lc.doubt is not None else replace(lc, doubt=_TEXT_DOUBT) for lc in launches]
    return launches


def _mostly(text: str, launches: list[LaunchCommand]) -> bool:
    """Whether the launches' lines are at least half of the file's lines of text (comments and
    blank lines aside)."""
    content = 0
    covered = 0
    spans = sorted((lc.span.start, lc.span.end) for lc in launches)
    k = 0
    for a, b in line_spans(text):
        line = text[a:b].strip()
        if not line or line.startswith("#"):
            continue
        content += 1
        while k < len(spans) and spans[k][1] < a:
            k += 1
        if k < len(spans) and spans[k][0] < b and a <= spans[k][1]:
            covered += 1
    return covered * 2 >= content
