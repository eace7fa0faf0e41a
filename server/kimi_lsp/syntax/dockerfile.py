"""THE Dockerfile reader: instructions with exact offsets, heredocs, exec form, stages, ARG and ENV.

Instructions are read the way BuildKit reads them: a ``# escape=`` directive at the top picks
the line-continuation character; a continued instruction skips comment and blank lines; heredoc
bodies (``RUN <<EOF``, ``<<-EOF``, ``<<"EOF"``, several per line, any delimiter word such as
``END-RUN``) belong to their instruction. Continuations are handled on a masked copy of the text
that has the same length as the file (skipped lines become spaces), so offsets found in the copy
are file offsets. Shell text (``RUN``/``CMD``/``ENTRYPOINT`` shell form, ``ENV``/``ARG``/``FROM``
words) is lexed by ``syntax/shell.py``; nothing here splits words itself.
"""
from __future__ import annotations

import re

from kimi_lsp import _regex
from kimi_lsp._record import dataclass
from kimi_lsp.syntax import EnvVar, SyntaxProblem, Token
from kimi_lsp.syntax.shell import Command, FlatSource, MappedSource, Source, Word, heredocs, is_heredoc_end, lex
from kimi_lsp.text import Located, Span

_DIRECTIVE_RE = _regex.compile(r"#[ \t]*([A-Za-z][A-Za-z0-9_-]*)[ \t]*=[ \t]*(\S*)[ \t]*")
_INSTRUCTION_RE = _regex.compile(r"[ \t]*([A-Za-z]+)(?=[ \t]|$)")
KNOWN_INSTRUCTIONS = frozenset(
    {
        "FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT",
        "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL",
    }
)
_HEX4 = _regex.compile(r"[0-9A-Fa-f]{4}")
_JSON_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_VAR_RE = _regex.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


@dataclass(frozen=True, slots=True)
class HeredocBody:
    delimiter: str
    span: Span  # the body lines, without the delimiter line
    text: str
    script: bool  # the body runs as a shell script (``RUN <<EOF``, ``RUN bash <<EOF``)
    # ``RUN cat > /start.sh <<EOF``: the body is written to a file (a script run later, perhaps)
    written: bool = False


@dataclass(frozen=True, slots=True)
class Instruction:
    keyword: str  # upper case
    keyword_span: Span
    start: int  # file offset of the arguments
    args: str  # the arguments, masked: same length as text[start:span.end]
    span: Span
    heredocs: tuple[HeredocBody, ...] = ()

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
    unknown_seen = False
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
            # Docker stops at the first unknown instruction and reports that one: the lines after
            # it (a `RUN python -c "` whose script runs on without backslashes) are one defect
            if not unknown_seen:
                word = stripped.split(None, 1)[0] if stripped.split() else stripped
                at = start + (len(content) - len(stripped))
                problems.append(SyntaxProblem(f"unknown Dockerfile instruction: {word[:40]}", Span(at, at + len(word))))
                unknown_seen = True
            li = last + 1
            continue
        args_start = start + m.end(1)
        chars = list(text[args_start:end_offset])
        for offset, replacement in masks:
            for k, ch in enumerate(replacement):
                idx = offset - args_start + k
                if 0 <= idx < len(chars):
                    chars[idx] = ch
        args = "".join(chars)
        keyword_span = Span(start + m.start(1), start + m.end(1))
        li = last + 1
        bodies: list[HeredocBody] = []
        if keyword in ("RUN", "COPY", "ADD"):
            # BuildKit takes heredocs from the instruction's words: the shell lexer's are the same
            for mark in heredocs(FlatSource(args, args_start), escape=escape):
                body_start = lines[li][0] if li < len(lines) else len(text)
                found: HeredocBody | None = None
                while li < len(lines):
                    ls, le, _ = lines[li]
                    li += 1
                    if is_heredoc_end(text[ls:le], mark):
                        found = HeredocBody(mark.delimiter, Span(body_start, ls), text[body_start:ls], mark.is_script,
                                            mark.is_written)
                        break
                if found is None:
                    found = HeredocBody(mark.delimiter, Span(body_start, len(text)), text[body_start:], mark.is_script,
                                        mark.is_written)
                    problems.append(SyntaxProblem(f"unterminated heredoc <<{mark.delimiter}", mark.span))
                bodies.append(found)
        instruction = Instruction(
            keyword, keyword_span, args_start, args, Span(keyword_span.start, end_offset), tuple(bodies)
        )
        instructions.append(instruction)
    return escape, instructions, problems


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


def run_offset(args: str) -> int:
    """Skip ``RUN --mount=... --network=...`` flags."""
    i, n = 0, len(args)
    while True:
        while i < n and args[i] in " \t\r\n\\`":
            i += 1
        if not args.startswith("--", i):
            return i
        while i < n and args[i] not in " \t\r\n":
            i += 1


# ------------------------------------------------------------------------------------------------
# ENV, ARG and FROM
# ------------------------------------------------------------------------------------------------


def _lex_args(src: Source, escape: str, problems: list[SyntaxProblem]) -> list[Command]:
    commands, found = lex(src, escape=escape)
    problems.extend(found)
    return commands


def env_vars(ins: Instruction, escape: str, problems: list[SyntaxProblem]) -> list[EnvVar]:
    """``ENV A=1 B="x y"`` and the legacy ``ENV NAME value with spaces``, located."""
    commands = _lex_args(ins.source(), escape, problems)
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


def arg_vars(
    ins: Instruction, escape: str, problems: list[SyntaxProblem], defaults: dict[str, EnvVar]
) -> list[EnvVar]:
    """``ARG A=1 B``; a name without a default takes ``defaults`` (the global ARG of that name)."""
    out: list[EnvVar] = []
    for command in _lex_args(ins.source(), escape, problems):
        out.extend(command.assignments)
        for word in command.words:  # ARG NAME: the global default of that name, if any
            inherited = defaults.get(word.value)
            out.append(EnvVar(Located(word.value, word.token.span), inherited.value if inherited else None))
    return out


@dataclass(frozen=True, slots=True)
class FromLine:
    """``FROM [--platform=P] IMAGE[:TAG] [AS NAME]``."""

    image: Located[str] | None  # the image word as written; its span is the raw word
    name: str | None  # the stage name, lower case (Docker matches stage names case-insensitively)
    platform: Located[str] | None = None


def read_from(ins: Instruction, escape: str) -> FromLine:
    commands, _ = lex(ins.source(), escape=escape)
    words = [w for c in commands for w in c.words]
    platform: Located[str] | None = None
    args: list[Word] = []
    k = 0
    while k < len(words):
        v = words[k].value
        if v.startswith("--"):
            flag, eq, value = v.partition("=")
            if flag == "--platform":
                if eq:
                    platform = Located(value, words[k].token.span)
                elif k + 1 < len(words):
                    platform = Located(words[k + 1].value, words[k + 1].token.span)
                    k += 1
            k += 1
            continue
        args.append(words[k])
        k += 1
    image = Located(args[0].value, args[0].token.span) if args else None
    name = args[2].value.lower() if len(args) >= 3 and args[1].value.lower() == "as" else None
    return FromLine(image, name, platform)


def substitute_args(value: str, args: dict[str, EnvVar]) -> str | None:
    """``value`` with ``$NAME``/``${NAME}`` replaced by ARG defaults; None when one is unknown."""
    missing = False

    def one(m: re.Match[str]) -> str:
        nonlocal missing
        var = args.get(m.group(1) or m.group(2))
        if var is None or var.value is None:
            missing = True
            return m.group(0)
        return var.value.value

    out = _VAR_RE.sub(one, value)
    return None if missing else out
