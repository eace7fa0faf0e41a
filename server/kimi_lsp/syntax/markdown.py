"""Code blocks in documentation: Markdown/MDX fences and reStructuredText code-block directives.

Nothing in prose is a launch; only code blocks are read. A block is not parsed here: ``code_view``
turns the document into text of the same length in which every character outside the chosen
blocks is a space (newlines kept), so the shell, YAML and Dockerfile readers run on it unchanged
and every offset they report is the document's own. In shell blocks, console prompts (``$ ``)
are blanked, lines of output after a prompted command are blanked, and placeholders people write
for values (``<model-path>``, ``...``) become unknown words (``$____``) instead of redirections.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from kimi_lsp import _regex
from kimi_lsp._record import dataclass
from kimi_lsp.text import Span, line_spans

SHELL_LANGS = frozenset({
    "", "sh", "bash", "shell", "zsh", "ksh", "console", "shell-session", "shellsession", "terminal",
    "shell-script", "bash-session", "sh-session",
})
YAML_LANGS = frozenset({"yaml", "yml"})
# Python as docs and notebook twins (``.mdx``) write it: ``launch_server_cmd("...")``, ``sgl.Engine(...)``
PYTHON_LANGS = frozenset({"python", "py", "python3", "ipython", "ipython3", "jupyter"})
# systemd units shown in docs (``ExecStart=`` read as the unit's launch)
UNIT_LANGS = frozenset({"ini", "systemd", "service", "desktop"})
# Blocks labelled as plain text that often hold a command to copy (or its output: a doubt)
TEXT_LANGS = frozenset({"text", "txt", "plaintext", "plain", "none", "cmd", "command"})
TOML_LANGS = frozenset({"toml"})
DOCKERFILE_LANGS = frozenset({"dockerfile", "docker", "containerfile"})
# Console sessions: a prompt, then the command; everything else in the block is output.
_PROMPT = _regex.compile(r"[ \t]*(?:\([\w.\-]+\)[ \t]*)?(?:[\w.\-]+@[\w.\-]+(?::[^\s$#]*)?)?\$(?: |$)")
# `<model-path>`, `<your model>`: a value someone is to fill in (not `<<EOF`, `< in.txt`, `2>&1`)
_ANGLE = _regex.compile(r"(?<![<\w\\])<([A-Za-z_][\w.\-/: ]{0,80})>(?![>&])")
_ELLIPSIS = _regex.compile(r"(?<!\S)(?:\.\.\.|…)(?!\S)")
# `[your normal SGLang parameters...]`, `[OPTIONS]` (not `[ -f x ]`, `[[`, `arr[0]`, `${a[@]}`)
_BRACKETS = _regex.compile(r"(?<![\w$\[\]])\[[A-Za-z][^\[\]\n]*\](?![\w\]])")
# `{model_path}`, `your_port`, `YOUR-MODEL` (not `${VAR}`, not brace expansion `{a,b}`)
_BRACES = _regex.compile(r"(?<![\w$])\{[A-Za-z_][\w\- ]*\}")
_YOUR = _regex.compile(r"(?<![\w$/.\-])(?:your|YOUR|Your)[_\-][\w\-]*")
# a YAML document written in a block tagged as shell (a manifest to `kubectl apply`)
_YAML_START = _regex.compile(r"[ \t]*(?:---[ \t]*$|[A-Za-z_][\w.\-]*:(?:[ \t]|$))")
# a line of options after a command line that does not end in `\`: a continuation whose
# backslash the author left out (a command copied out of a folded YAML value)
_OPTION_LINE = _regex.compile(r"[ \t]*--?[A-Za-z]")

_FENCE_OPEN = _regex.compile(r"([ \t]*)(`{3,}|~{3,})[ \t]*([^\n]*?)[ \t]*$")
_RST_DIRECTIVE = _regex.compile(r"([ \t]*)\.\.[ \t]+(?:code-block|code|sourcecode)::[ \t]*([^\s]*)[ \t]*$")


@dataclass(frozen=True, slots=True)
class CodeBlock:
    lang: str  # the info string's first word (Markdown) or the directive's argument, lowercased
    body: Span  # from the first line after the opening line to the end of the last body line
    indent: int  # columns of indentation the block's lines carry (not part of the code)
    closed: bool  # a Markdown fence that runs to the end of the document is not


def _lang(info: str) -> str:
    word = info.split(None, 1)[0] if info.split() else ""
    word = word.strip("{}.").split(",", 1)[0]  # ```{bash}, ```.sh, ```bash,ignore
    return word.lower()


def fences(text: str) -> list[CodeBlock]:
    """Fenced code blocks of a Markdown/MDX document (CommonMark: a run of three or more
    backticks or tildes opens, a run of the same character at least as long closes; an unclosed
    fence runs to the end of the document)."""
    if "```" not in text and "~~~" not in text:
        return []
    lines = line_spans(text)
    out: list[CodeBlock] = []
    i = 0
    while i < len(lines):
        a, b = lines[i]
        m = _FENCE_OPEN.fullmatch(text, a, b)
        if m is None or (m.group(2)[0] == "`" and "`" in m.group(3)):
            i += 1
            continue
        indent, marker = len(m.group(1).expandtabs(4)), m.group(2)
        j = i + 1
        while j < len(lines):
            ca, cb = lines[j]
            line = text[ca:cb].strip()
            if line and set(line) == {marker[0]} and len(line) >= len(marker):
                break
            j += 1
        closed = j < len(lines)
        if j > i + 1:
            out.append(CodeBlock(_lang(m.group(3)), Span(lines[i + 1][0], lines[j - 1][1]), indent, closed))
        i = j + 1
    return out


def rst_blocks(text: str) -> list[CodeBlock]:
    """``.. code-block:: LANG`` (also ``code``, ``sourcecode``) directives of a reStructuredText
    document: options (``:linenos:``), a blank line, then the lines indented past the directive."""
    if ".." not in text:
        return []
    lines = line_spans(text)
    out: list[CodeBlock] = []
    i = 0
    while i < len(lines):
        a, b = lines[i]
        m = _RST_DIRECTIVE.fullmatch(text, a, b)
        i += 1
        if m is None:
            continue
        base = len(m.group(1).expandtabs(4))
        while i < len(lines) and text[lines[i][0] : lines[i][1]].strip().startswith(":"):
            i += 1  # directive options
        first = last = None
        while i < len(lines):
            la, lb = lines[i]
            line = text[la:lb]
            if line.strip():
                if len(line) - len(line.lstrip(" \t")) <= base:
                    break
                first = i if first is None else first
                last = i
            i += 1
        if first is not None and last is not None:
            body_lines = [text[la:lb] for la, lb in lines[first : last + 1] if text[la:lb].strip()]
            indent = min(len(s) - len(s.lstrip(" \t")) for s in body_lines)
            out.append(CodeBlock(m.group(2).lower(), Span(lines[first][0], lines[last][1]), indent, True))
    return out


def code_blocks(text: str, rst: bool = False) -> list[CodeBlock]:
    return rst_blocks(text) if rst else fences(text)


def code_view(text: str, blocks: Iterable[CodeBlock], *, shell: bool = False, window: Span | None = None) -> str:
    """``text`` with everything outside ``blocks`` blanked (same length, newlines kept). With
    ``shell``: prompts and command output blanked, placeholders made unknown words. ``window``:
    only that part of the view (one block's body, read at its own offset)."""
    origin, end = (window.start, window.end) if window is not None else (0, len(text))
    out = [c if c in "\r\n" else " " for c in text[origin:end]]
    for block in blocks:
        _copy_block(text, block, out, shell, origin)
    return "".join(out)


def _copy_block(text: str, block: CodeBlock, out: list[str], shell: bool, origin: int) -> None:
    body = text[block.body.start : block.body.end]
    base = block.body.start
    spans = [(a + base, b + base) for a, b in line_spans(body)]
    prompted = shell and any(_PROMPT.match(text, a, b) for a, b in spans)
    continues = False
    previous: int | None = None
    for a, b in spans:
        start = a
        # the block's own indentation (a fence in a list item) is not code
        k = 0
        while start < b and k < block.indent and text[start] in " \t":
            start += 1
            k += 1
        if prompted:
            m = _PROMPT.match(text, start, b)
            if m is not None:
                start = m.end()
            elif not continues:
                continue  # output of the command above
        line = text[start:b]
        if shell:
            line = _placeholders(line)
            if _OPTION_LINE.match(line) and previous is not None:
                out[previous - origin] = " "  # join: the line above goes on with these options
        out[start - origin : b - origin] = line
        stripped = line.rstrip()
        continues = prompted and stripped.endswith("\\")
        # where a following line of options would join this one (a command, not a comment)
        previous = b if stripped and not stripped.endswith("\\") and not stripped.lstrip().startswith("#") and b < len(text) and text[b] == "\n" else None


def _placeholders(line: str) -> str:
    def unknown(m: re.Match[str]) -> str:
        return "$" + "_" * (len(m.group(0)) - 1) if len(m.group(0)) > 1 else " "

    for pattern in (_ANGLE, _BRACKETS, _BRACES, _YOUR, _ELLIPSIS):
        line = pattern.sub(unknown, line)
    return line


def looks_like_yaml(text: str, block: CodeBlock) -> bool:
    """A block tagged as shell whose first line of code is a YAML key (``apiVersion: v1``) or
    ``---``: no shell command starts that way."""
    for a, b in line_spans(text[block.body.start : block.body.end]):
        line = text[block.body.start + a : block.body.start + b]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        return bool(_YAML_START.match(line))
    return False


def blocks_of(blocks: Sequence[CodeBlock], langs: frozenset[str]) -> list[CodeBlock]:
    return [b for b in blocks if b.lang in langs]


def shell_view(text: str, rst: bool = False) -> str:
    """The document with only its shell blocks kept (prompts, output and placeholders handled):
    what its ``pip install`` lines are read from."""
    return code_view(text, blocks_of(code_blocks(text, rst), SHELL_LANGS), shell=True)
