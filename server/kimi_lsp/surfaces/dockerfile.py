"""Dockerfiles and Containerfiles: the launch the image runs, and launches in ``RUN``.

Instructions are read the way BuildKit reads them: a ``# escape=`` directive at the top picks
the line-continuation character; a continued instruction skips comment and blank lines; heredoc
bodies (``RUN <<EOF``) belong to their instruction. Continuations are handled on a masked copy of
the text that has the same length as the file (skipped lines become spaces), so offsets found
in the copy are file offsets.

The image's launch follows Docker's rules for the final stage: exec-form ``ENTRYPOINT`` plus
``CMD`` (exec form appended, shell form appended as ``/bin/sh -c TEXT``), a shell-form
``ENTRYPOINT`` ignores ``CMD``, ``ENTRYPOINT`` resets a ``CMD`` inherited from a parent stage, the
last of each wins. ``ENV`` (inherited from a parent stage) is the launch's environment; ``RUN``
launches also see the stage's ``ARG`` defaults. The Dockerfile's own ``pip install`` lines govern
what its launches import, so every launch here has ``own_pins=True``.
"""
from __future__ import annotations

import re
from pathlib import Path

from kimi_lsp._record import dataclass, field
from kimi_lsp.surfaces.model import EnvVar, LaunchCommand, Surface, SurfaceResult, SyntaxProblem, Token
from kimi_lsp.surfaces.shell import (
    Command,
    FlatSource,
    LaunchContext,
    MappedSource,
    Source,
    Word,
    basename,
    launches_from_commands,
    launches_from_words,
    lex,
    mentions_sglang,
)
from kimi_lsp.text import Located, Span

_DIRECTIVE_RE = re.compile(r"#[ \t]*([A-Za-z][A-Za-z0-9_-]*)[ \t]*=[ \t]*(\S*)[ \t]*")
_INSTRUCTION_RE = re.compile(r"[ \t]*([A-Za-z]+)(?=[ \t]|$)")
_HEREDOC_RE = re.compile(r"<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_.-]*)\2")
KNOWN_INSTRUCTIONS = frozenset(
    {
        "FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT",
        "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL",
    }
)
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_JSON_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ash", "ksh"})


@dataclass
class Instruction:
    keyword: str  # upper case
    keyword_span: Span
    start: int  # file offset of the arguments
    args: str  # the arguments, masked: same length as text[start:span.end]
    span: Span
    heredocs: list[tuple[str, Span, str]] = field(default_factory=list)  # (delimiter, body span, body)

    def source(self) -> FlatSource:
        return FlatSource(self.args, self.start)


def _lines(text: str) -> list[tuple[int, int, int]]:
    """(start, content end without the line break, next line start) per physical line."""
    out: list[tuple[int, int, int]] = []
    i, n = 0, len(text)
    while i < n:
        nl = text.find("\n", i)
        nxt = n if nl < 0 else nl + 1
        end = n if nl < 0 else nl
        if end > i and text[end - 1] == "\r":
            end -= 1
        out.append((i, end, nxt))
        i = nxt
    return out


def parse(text: str) -> tuple[str, list[Instruction], list[SyntaxProblem]]:
    """The escape character, the instructions and the problems of a Dockerfile."""
    lines = _lines(text)
    escape = "\\"
    for start, end, _ in lines:  # parser directives: only before anything else
        m = _DIRECTIVE_RE.fullmatch(text, start, end)
        if m is None:
            break
        if m.group(1).lower() == "escape" and m.group(2) in ("\\", "`"):
            escape = m.group(2)
    instructions: list[Instruction] = []
    problems: list[SyntaxProblem] = []
    li = 0
    while li < len(lines):
        start, end, _ = lines[li]
        content = text[start:end]
        stripped = content.lstrip(" \t")
        if not stripped or stripped.startswith("#"):
            li += 1
            continue
        m = _INSTRUCTION_RE.match(content)
        keyword = m.group(1).upper() if m else ""
        masks: list[tuple[int, str]] = []  # (file offset, replacement of the same length)
        last = li
        while True:  # follow continuations
            s2, e2, nxt = lines[last]
            body = text[s2:e2].rstrip(" \t")
            if not body.endswith(escape):
                break
            esc = s2 + len(body) - 1
            if esc + 1 < e2:  # `\` then blanks: move the escape next to the line break
                masks.append((esc, " " * (e2 - esc - 1) + escape))
            nxt_line = last + 1
            while nxt_line < len(lines):
                ls, le, ln = lines[nxt_line]
                inner = text[ls:le].lstrip(" \t")
                if inner and not inner.startswith("#"):
                    break
                masks.append((ls, " " * (ln - ls)))  # comment or blank line inside: dropped
                nxt_line += 1
            if nxt_line >= len(lines):
                break
            last = nxt_line
        end_offset = lines[last][1]
        if m is None or keyword not in KNOWN_INSTRUCTIONS:
            word = stripped.split(None, 1)[0] if stripped.split() else stripped
            at = start + (len(content) - len(stripped))
            problems.append(SyntaxProblem(f"unknown Dockerfile instruction: {word[:40]}", Span(at, at + len(word))))
            li = last + 1
            continue
        args_start = start + m.end(1)
        chars = list(text[args_start:end_offset])
        for offset, replacement in masks:
            for k, ch in enumerate(replacement):
                idx = offset - args_start + k
                if 0 <= idx < len(chars):
                    chars[idx] = ch
        instruction = Instruction(
            keyword, Span(start + m.start(1), start + m.end(1)), args_start, "".join(chars), Span(start + m.start(1), end_offset)
        )
        li = last + 1
        if keyword in ("RUN", "COPY", "ADD"):
            for hm in _HEREDOC_RE.finditer(_blank_quoted(instruction.args)):
                delim, strip_tabs = hm.group(3), hm.group(1) == "-"
                body_start = lines[li][0] if li < len(lines) else len(text)
                found = False
                while li < len(lines):
                    ls, le, ln = lines[li]
                    line = text[ls:le]
                    li += 1
                    if (line.lstrip("\t") if strip_tabs else line) == delim:
                        instruction.heredocs.append((delim, Span(body_start, ls), text[body_start:ls]))
                        found = True
                        break
                if not found:
                    instruction.heredocs.append((delim, Span(body_start, len(text)), text[body_start:]))
                    at = args_start + hm.start()
                    problems.append(SyntaxProblem(f"unterminated heredoc <<{delim}", Span(at, args_start + hm.end())))
        instructions.append(instruction)
    return escape, instructions, problems


def _blank_quoted(args: str) -> str:
    """``args`` with quoted text blanked (same length): ``echo "a<<b"`` opens no heredoc."""
    out = list(args)
    quote = ""
    i, n = 0, len(args)
    while i < n:
        c = args[i]
        if quote:
            if c == "\\" and quote == '"':
                out[i] = " "
                if i + 1 < n:
                    out[i + 1] = " "
                i += 2
                continue
            if c == quote:
                quote = ""
            else:
                out[i] = " "
        elif c in "'\"" and args.endswith(("<<", "<<-"), 0, i):
            end = args.find(c, i + 1)  # a quoted heredoc delimiter (<<'EOF') stays
            i = n if end < 0 else end + 1
            continue
        elif c in "'\"":
            quote = c
        elif c == "\\":
            i += 1
        i += 1
    return "".join(out)


# ------------------------------------------------------------------------------------------------
# Argument forms
# ------------------------------------------------------------------------------------------------


@dataclass
class _Form:
    """An exec-form JSON array (``words``) or a shell-form command line (``shell``)."""

    instruction: Instruction
    words: list[Word] | None = None
    shell: Source | None = None


def _skip_json_space(s: str, i: int, escape: str) -> int:
    n = len(s)
    while i < n:
        if s[i] in " \t\r\n":
            i += 1
        elif s[i] == escape and i + 1 < n and s[i + 1] in "\r\n":
            i += 1
        else:
            break
    return i


def exec_form(ins: Instruction, escape: str, offset: int = 0) -> list[Word] | None:
    """Words of a JSON-array argument (from ``offset`` in the arguments), or None for shell form."""
    s, base = ins.args, ins.start
    n = len(s)
    i = _skip_json_space(s, offset, escape)
    if i >= n or s[i] != "[":
        return None
    i = _skip_json_space(s, i + 1, escape)
    words: list[Word] = []
    if i < n and s[i] == "]":
        return words if _skip_json_space(s, i + 1, escape) == n else None
    while True:
        if i >= n or s[i] != '"':
            return None
        j = i + 1
        units: list[tuple[str, int, int]] = []
        while j < n and s[j] != '"':
            c = s[j]
            if ord(c) < 0x20:
                return None  # JSON forbids raw control characters; Docker then uses shell form
            if c == "\\":
                nx = s[j + 1] if j + 1 < n else ""
                if nx in _JSON_ESCAPES:
                    units.append((_JSON_ESCAPES[nx], j, j + 2))
                    j += 2
                    continue
                if nx == "u" and _HEX4.fullmatch(s, j + 2, j + 6):
                    code, width = int(s[j + 2 : j + 6], 16), 6
                    if 0xD800 <= code < 0xDC00 and s.startswith("\\u", j + 6) and _HEX4.fullmatch(s, j + 8, j + 12):
                        low = int(s[j + 8 : j + 12], 16)
                        if 0xDC00 <= low < 0xE000:  # a surrogate pair is one character
                            code, width = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00), 12
                    units.append((chr(code), j, j + width))
                    j += width
                    continue
                return None
            units.append((c, j, j + 1))
            j += 1
        if j >= n:
            return None
        value = "".join(u[0] for u in units)
        chars = MappedSource(value, [base + u[1] for u in units], [base + u[2] for u in units], base + j)
        token = Token(value, Span(base + i, base + j + 1), chars.exact(0, len(value)))
        words.append(Word(token, chars))
        i = _skip_json_space(s, j + 1, escape)
        if i < n and s[i] == ",":
            i = _skip_json_space(s, i + 1, escape)
            continue
        if i < n and s[i] == "]":
            return words if _skip_json_space(s, i + 1, escape) == n else None
        return None


def _run_offset(args: str) -> int:
    """Skip ``RUN --mount=... --network=...`` flags."""
    i, n = 0, len(args)
    while True:
        while i < n and args[i] in " \t\r\n\\`":
            i += 1
        if not args.startswith("--", i):
            return i
        while i < n and args[i] not in " \t\r\n":
            i += 1


def _form(ins: Instruction, escape: str, offset: int = 0) -> _Form:
    words = exec_form(ins, escape, offset)
    if words is not None:
        return _Form(ins, words=words)
    return _Form(ins, shell=FlatSource(ins.args[offset:], ins.start + offset))


# ------------------------------------------------------------------------------------------------
# ENV / ARG
# ------------------------------------------------------------------------------------------------


def _commands(src: Source, escape: str, problems: list[SyntaxProblem]) -> list[Command]:
    commands, found = lex(src, escape=escape)
    problems.extend(found)
    return commands


def _env_instruction(ins: Instruction, escape: str, problems: list[SyntaxProblem]) -> list[EnvVar]:
    commands = _commands(ins.source(), escape, problems)
    if not commands:
        return []
    first = commands[0]
    if first.assignments and not first.words:  # ENV A=1 B="x y"
        return [env for c in commands for env in c.assignments]
    if first.words:  # legacy ENV NAME value with spaces
        name = first.words[0]
        rest_start = name.token.span.end - ins.start
        raw = ins.args[rest_start:]
        lead = len(raw) - len(raw.lstrip())
        value = raw.strip()
        at = ins.start + rest_start + lead
        return [EnvVar(Located(name.value, name.token.span), Located(value, Span(at, at + len(value))))]
    return list(first.assignments)


def _arg_instruction(
    ins: Instruction, escape: str, problems: list[SyntaxProblem], defaults: dict[str, EnvVar]
) -> list[EnvVar]:
    out: list[EnvVar] = []
    for command in _commands(ins.source(), escape, problems):
        out.extend(command.assignments)
        for word in command.words:  # ARG NAME: the global default of that name, if any
            inherited = defaults.get(word.value)
            out.append(EnvVar(Located(word.value, word.token.span), inherited.value if inherited else None))
    return out


# ------------------------------------------------------------------------------------------------
# Stages and launches
# ------------------------------------------------------------------------------------------------


@dataclass
class _Stage:
    name: str | None
    env: list[EnvVar] = field(default_factory=list)  # ENV, inherited from a parent stage
    build_env: list[EnvVar] = field(default_factory=list)  # ARG and ENV in order (what RUN sees)
    entrypoint: _Form | None = None
    cmd: _Form | None = None
    cmd_set: bool = False


def _from_instruction(ins: Instruction, escape: str, stages: list[_Stage]) -> _Stage:
    commands, _ = lex(ins.source(), escape=escape)
    words = [w.value for c in commands for w in c.words]
    args = [w for w in words if not w.startswith("--")]
    image = args[0].lower() if args else ""
    name = args[2].lower() if len(args) >= 3 and args[1].lower() == "as" else None
    parent = next((s for s in reversed(stages) if s.name is not None and s.name == image), None)
    if parent is None:
        return _Stage(name)
    return _Stage(name, env=list(parent.env), build_env=list(parent.env), entrypoint=parent.entrypoint, cmd=parent.cmd)


def _form_launches(form: _Form, ctx: LaunchContext, escape: str, env: list[EnvVar], head: int | None = None) -> list[LaunchCommand]:
    if form.words is not None:
        return launches_from_words(form.words, ctx, env, head)
    assert form.shell is not None
    commands, problems = lex(form.shell, escape=escape)
    ctx.problems.extend(problems)
    return launches_from_commands(commands, ctx, env)


def _image_launches(stage: _Stage, ctx: LaunchContext, escape: str) -> list[LaunchCommand]:
    ep, cmd = stage.entrypoint, stage.cmd
    env = list(stage.env)
    if ep is not None and ep.shell is not None:
        return _form_launches(ep, ctx, escape, env)  # shell-form ENTRYPOINT ignores CMD
    if ep is not None and ep.words is not None:
        words = list(ep.words)
        if cmd is not None and cmd.words is not None:
            words.extend(cmd.words)
        elif cmd is not None and cmd.shell is not None:
            # Docker appends a shell-form CMD as `/bin/sh -c "TEXT"`; the synthesized words sit
            # on the CMD keyword and are not exact.
            at = cmd.instruction.keyword_span
            text = cmd.shell.text.strip()
            lead = len(cmd.shell.text) - len(cmd.shell.text.lstrip())
            src = FlatSource(text, cmd.shell.start(0) + lead) if text else FlatSource("", at.end)
            words.append(Word(Token("/bin/sh", at, False), FlatSource("/bin/sh", at.start)))
            words.append(Word(Token("-c", at, False), FlatSource("-c", at.start)))
            words.append(Word(Token(text, src.span(0, len(text)), True), src))
        return launches_from_words(words, ctx, env)
    if cmd is not None:
        return _form_launches(cmd, ctx, escape, env)
    return []


def read_dockerfile(path: Path, text: str) -> SurfaceResult:
    escape, instructions, problems = parse(text)
    ctx = LaunchContext(path, Surface.DOCKERFILE, path.parent, own_pins=True)
    stages: list[_Stage] = []
    global_args: dict[str, EnvVar] = {}
    launches: list[LaunchCommand] = []
    for ins in instructions:
        kw = ins.keyword
        if kw == "FROM":
            stages.append(_from_instruction(ins, escape, stages))
            continue
        if not stages:
            if kw == "ARG":  # global ARG: visible to FROM and as a default for ARG in stages
                for env in _arg_instruction(ins, escape, problems, {}):
                    global_args[env.name.value] = env
            continue
        stage = stages[-1]
        if kw == "ENV":
            found = _env_instruction(ins, escape, problems)
            stage.env.extend(found)
            stage.build_env.extend(found)
        elif kw == "ARG":
            stage.build_env.extend(_arg_instruction(ins, escape, problems, global_args))
        elif kw == "RUN":
            launches.extend(_run_launches(ins, ctx, escape, stage.build_env))
        elif kw == "CMD":
            stage.cmd = _form(ins, escape)
            stage.cmd_set = True
        elif kw == "ENTRYPOINT":
            stage.entrypoint = _form(ins, escape)
            if not stage.cmd_set:
                stage.cmd = None
    if stages:
        launches.extend(_image_launches(stages[-1], ctx, escape))
    problems.extend(ctx.problems)
    return SurfaceResult(
        launches=tuple(launches),
        problems=tuple(problems),
        is_launch_file=bool(launches) or (bool(problems) and mentions_sglang(text)),
    )


def _run_launches(ins: Instruction, ctx: LaunchContext, escape: str, env: list[EnvVar]) -> list[LaunchCommand]:
    offset = _run_offset(ins.args)
    form = _form(ins, escape, offset)
    found = _form_launches(form, ctx, escape, list(env))
    if ins.heredocs and form.shell is not None:
        commands, _ = lex(form.shell, escape=escape)
        runner = [w.value for w in commands[0].words] if commands else []
        # `RUN <<EOF` and `RUN bash <<EOF` run the body as a script; `RUN python3 <<EOF` does not
        if not runner or basename(runner[0]) in _SHELLS:
            for _, body, body_text in ins.heredocs:
                src = FlatSource(body_text, body.start)
                found.extend(_form_launches(_Form(ins, shell=src), ctx, "\\", list(env)))
    return found
