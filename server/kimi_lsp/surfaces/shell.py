"""Shell command lines with positions, and the launch matcher every surface shares.

The lexer is POSIX-ish: quotes (``'...'``, ``"..."``, ``$'...'``), backslash escapes, ``\\``-newline
continuations, comments, the operators that split commands (``;`` ``&&`` ``||`` ``|`` ``&``,
newlines, subshell parens), redirections (dropped from the words, heredoc bodies skipped),
``$(...)``/``${...}``/backticks kept verbatim inside a word, ``VAR=x`` prefixes and ``export VAR=x``
as assignments. It never runs anything and never raises on bad input: an unterminated quote
becomes a ``SyntaxProblem`` and the rest of the text is taken as the token.

Text does not always sit in the file character for character (a YAML scalar folds lines and
strips indentation, a JSON string has escapes), so the lexer works on a ``Source``: a string plus
the file span of each of its characters. Every ``Token.span`` slices the file to the token's raw
text; ``exact`` says whether that raw text is the value with nothing but quotes around it.

The launch matcher (``launches_from_words``) recognises ``python -m sglang.launch_server``,
``sglang serve`` and the benchmark entry points behind the usual wrappers (``exec``, ``env``,
``nohup``, ``srun``, ``mpirun``, ``torchrun``, ``timeout``, ``numactl``, ``taskset``, ``sudo``,
``uv run``, ``conda run`` ...) and follows ``sh -c SCRIPT`` into the script.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from kimi_lsp._record import dataclass, field
from kimi_lsp.surfaces.model import (
    Entry,
    EnvVar,
    LaunchCommand,
    Surface,
    SurfaceResult,
    SyntaxProblem,
    Token,
)
from kimi_lsp.text import Located, Span

# --------------------------------------------------------------------------------------------
# Sources: a string and where each character sits in the file
# --------------------------------------------------------------------------------------------


class Source:
    """A string to lex, with the file span of each of its characters."""

    __slots__ = ("text",)
    text: str

    def start(self, i: int) -> int:
        raise NotImplementedError

    def end(self, i: int) -> int:
        raise NotImplementedError

    def anchor(self) -> int:
        """File offset just past the last character (where an empty token at the end sits)."""
        raise NotImplementedError

    def exact(self, i: int, j: int) -> bool:
        """Whether the file text under characters ``[i, j)`` is exactly ``text[i:j]``."""
        raise NotImplementedError

    def span(self, i: int, j: int) -> Span:
        if j <= i:
            p = self.start(i) if i < len(self.text) else self.anchor()
            return Span(p, p)
        a = self.start(i)
        return Span(a, max(a, self.end(j - 1)))

    def sub(self, text: str, units: Sequence[tuple[int, int]], anchor: int | None = None) -> MappedSource:
        """A new source for ``text`` whose k-th character came from characters ``units[k]`` here."""
        starts = [self.start(a) for a, _ in units]
        ends = [self.end(b - 1) if b > a else self.start(a) for a, b in units]
        if anchor is None:
            anchor = ends[-1] if ends else self.anchor()
        return MappedSource(text, starts, ends, anchor)


class FlatSource(Source):
    """Text that sits in the file verbatim, starting at ``base``."""

    __slots__ = ("base",)

    def __init__(self, text: str, base: int = 0) -> None:
        self.text = text
        self.base = base

    def start(self, i: int) -> int:
        return self.base + i

    def end(self, i: int) -> int:
        return self.base + i + 1

    def anchor(self) -> int:
        return self.base + len(self.text)

    def exact(self, i: int, j: int) -> bool:
        return True


class MappedSource(Source):
    """Text whose characters map to arbitrary file spans (folded YAML, JSON escapes, ...).

    A character with a zero-width span could not be located (e.g. a space produced by YAML line
    folding); a character spanning two or more file characters came from an escape sequence.
    """

    __slots__ = ("starts", "ends", "_anchor", "_verbatim")

    def __init__(self, text: str, starts: Sequence[int], ends: Sequence[int], anchor: int) -> None:
        self.text = text
        # written verbatim (character k at a+k): ``exact`` needs no per-character walk
        self._verbatim = (
            isinstance(starts, range) and isinstance(ends, range) and starts.step == 1 and ends.step == 1
            and len(starts) == len(ends) == len(text) and (not text or ends[0] == starts[0] + 1)
        )
        self.starts = list(starts)
        self.ends = list(ends)
        self._anchor = anchor

    def start(self, i: int) -> int:
        return self.starts[i] if i < len(self.starts) else self._anchor

    def end(self, i: int) -> int:
        return self.ends[i]

    def anchor(self) -> int:
        return self._anchor

    def exact(self, i: int, j: int) -> bool:
        if self._verbatim and 0 <= i <= j <= len(self.text):
            return True
        starts, ends = self.starts, self.ends
        for k in range(i, j):
            if ends[k] - starts[k] != 1:
                return False
            if k + 1 < j and starts[k + 1] != ends[k]:
                return False
        return True


# --------------------------------------------------------------------------------------------
# Lexer output
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    words: tuple[Token, ...]
    assignments: tuple[EnvVar, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Word:
    """A token plus the located characters of its value, so a ``sh -c`` script can be lexed again."""

    token: Token
    chars: Source  # chars.text == token.value

    @property
    def value(self) -> str:
        return self.token.value


@dataclass(frozen=True, slots=True)
class Command:
    """A simple command with located words (the richer form of ``SimpleCommand``)."""

    words: tuple[Word, ...]
    assignments: tuple[EnvVar, ...]
    span: Span

    def simple(self) -> SimpleCommand:
        return SimpleCommand(tuple(w.token for w in self.words), self.assignments, self.span)


_META = frozenset(" \t\f\v\r\n;&|()<>")
_PLAIN_RUN = re.compile(r"[^ \t\f\v\r\n;&|()<>\\'\"$`]+")  # characters that stand for themselves
_DQ_RUN = re.compile(r"[^\"\\$`]+")
_BLANKS = " \t\f\v\r"  # a lone \r (CRLF files) is blank to us; bash would keep it in the word
_ASSIGN_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATOR_RE = re.compile(r";;&|;;|;&|&&|\|\||\|&|[;&|()]")
_REDIRECT_RE = re.compile(r"&>>|&>|<<<|<<-|<<|<>|<&|>&|>>|>\||<|>")
# Words that open or close compound commands; the command proper starts after them.
_RESERVED = frozenset({"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac"})
_DECLARE = frozenset({"export", "declare", "typeset", "local", "readonly"})
_ANSI_NUMERIC_RE = re.compile(r"x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}")
_ANSI_SIMPLE = {
    "n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
    "e": "\x1b", "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?",
}


@dataclass(slots=True)
class _RawWord:
    start: int  # source indices of the raw text
    end: int
    pieces: list[str]  # the value, in pieces
    # Per piece: (a, b, verbatim). Verbatim: the piece is s[a:b]; else one character made from s[a:b].
    segs: list[tuple[int, int, bool]]
    exact: bool  # no escapes, no expansions

    def keep(self, s: str, i: int, j: int) -> None:
        if j > i:
            self.pieces.append(s[i:j])
            self.segs.append((i, j, True))

    def add(self, ch: str, a: int, b: int) -> None:
        self.pieces.append(ch)
        self.segs.append((a, b, False))

    def value(self) -> str:
        return "".join(self.pieces)


def _units(segs: Sequence[tuple[int, int, bool]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b, verbatim in segs:
        if verbatim:
            out.extend((k, k + 1) for k in range(a, b))
        else:
            out.append((a, b))
    return out


class _LazySource(Source):
    """A word's characters, mapped only when someone asks (most words are never re-lexed)."""

    __slots__ = ("_parent", "_segs", "_anchor", "_mapped")

    def __init__(self, text: str, parent: Source, segs: list[tuple[int, int, bool]], anchor: int) -> None:
        self.text = text
        self._parent = parent
        self._segs = segs
        self._anchor = anchor
        self._mapped: MappedSource | None = None

    def _m(self) -> MappedSource:
        if self._mapped is None:
            self._mapped = self._parent.sub(self.text, _units(self._segs), anchor=self._anchor)
        return self._mapped

    def start(self, i: int) -> int:
        return self._m().start(i)

    def end(self, i: int) -> int:
        return self._m().end(i)

    def anchor(self) -> int:
        return self._anchor

    def exact(self, i: int, j: int) -> bool:
        return self._m().exact(i, j)


class _Lexer:
    def __init__(self, src: Source, escape: str) -> None:
        self.src = src
        self.s = src.text
        self.n = len(self.s)
        self.escape = escape
        self.problems: list[SyntaxProblem] = []

    # -- helpers ------------------------------------------------------------------------------
    def _problem(self, message: str, i: int) -> None:
        i = max(0, min(i, self.n))
        self.problems.append(SyntaxProblem(message, self.src.span(i, min(i + 1, self.n))))

    def _newline_len(self, i: int) -> int:
        if i < self.n and self.s[i] == "\n":
            return 1
        if self.s.startswith("\r\n", i):
            return 2
        return 0

    def _continuation(self, i: int) -> int:
        """Length of an escape-newline line continuation at ``i`` (0 when there is none)."""
        c = self.s[i]
        if c == "\\" or c == self.escape:
            k = self._newline_len(i + 1)
            if k:
                return 1 + k
        return 0

    def _skip_quoted(self, i: int) -> int:
        """``s[i]`` is a quote inside ``$(...)``/``${...}``: the index after its closing quote."""
        q = self.s[i]
        j = i + 1
        while j < self.n:
            c = self.s[j]
            if c == "\\" and q != "'":
                j += 2
                continue
            if c == q:
                return j + 1
            j += 1
        return self.n

    def _balanced(self, i: int, opening: str, closing: str, what: str) -> int:
        """``s[i] == opening``: the index after the matching ``closing``."""
        depth = 0
        j = i
        s, n = self.s, self.n
        while j < n:
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c in "'\"`":
                j = self._skip_quoted(j)
                continue
            if c == opening:
                depth += 1
            elif c == closing:
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        self._problem(f"unterminated {what}", i - 1 if i > 0 else i)
        return n

    def _backtick(self, i: int) -> int:
        j = i + 1
        while j < self.n:
            c = self.s[j]
            if c == "\\":
                j += 2
                continue
            if c == "`":
                return j + 1
            j += 1
        self._problem("unterminated backquote command substitution", i)
        return self.n

    def _expansion(self, i: int) -> int:
        """``s[i] == '$'``: the end of the expansion it starts, or ``i`` for a literal dollar."""
        s, n = self.s, self.n
        nx = s[i + 1] if i + 1 < n else ""
        if nx == "(":
            return self._balanced(i + 1, "(", ")", "command substitution")
        if nx == "{":
            if s.startswith("{{", i + 1):  # GitHub Actions / Jinja-style ${{ expr }}
                k = s.find("}}", i + 3)
                if k < 0:
                    self._problem("unterminated ${{ expression", i)
                    return n
                return k + 2
            return self._balanced(i + 1, "{", "}", "parameter expansion")
        if nx == "_" or nx.isalpha():
            m = _NAME_RE.match(s, i + 1)
            return m.end() if m else i + 1
        if nx.isdigit() or (nx and nx in "@*#?$!-"):
            return i + 2
        return i

    def _keep(self, i: int, j: int, w: _RawWord) -> None:
        w.keep(self.s, i, j)

    # -- words ---------------------------------------------------------------------------------
    def _dquote(self, i: int, w: _RawWord) -> int:
        s, n = self.s, self.n
        j = i + 1
        while j < n:
            c = s[j]
            if c == '"':
                return j + 1
            if c == "\\" or c == self.escape:
                k = self._continuation(j)
                if k:
                    j += k
                    w.exact = False
                    continue
                if c == "\\" and j + 1 < n and s[j + 1] in '$`"\\':
                    w.add(s[j + 1], j, j + 2)
                    w.exact = False
                    j += 2
                    continue
            if c == "$":
                e = self._expansion(j)
                if e > j:
                    self._keep(j, e, w)
                    w.exact = False
                    j = e
                    continue
            if c == "`" and self.escape != "`":
                e = self._backtick(j)
                self._keep(j, e, w)
                w.exact = False
                j = e
                continue
            m = _DQ_RUN.match(s, j)
            e = m.end() if m else j + 1
            w.keep(s, j, e)
            j = e
        self._problem("unterminated double quote", i)
        w.exact = False
        return n

    def _ansi_c(self, i: int, w: _RawWord) -> int:
        """``$'...'``: ANSI-C quoting; ``s[i] == '$'``."""
        s, n = self.s, self.n
        j = i + 2
        w.exact = False  # the leading $ is not a plain quote character
        while j < n:
            c = s[j]
            if c == "'":
                return j + 1
            if c == "\\" and j + 1 < n:
                nx = s[j + 1]
                if nx in _ANSI_SIMPLE:
                    w.add(_ANSI_SIMPLE[nx], j, j + 2)
                    j += 2
                    continue
                m = _ANSI_NUMERIC_RE.match(s, j + 1)
                if m:
                    digits = m.group(0)
                    try:
                        ch = chr(int(digits, 8) if digits[0].isdigit() else int(digits[1:], 16))
                    except (ValueError, OverflowError):
                        ch = "\ufffd"
                    w.add(ch, j, m.end())
                    j = m.end()
                    continue
            w.keep(s, j, j + 1)
            j += 1
        self._problem("unterminated $'...' quote", i)
        return n

    def _word(self, i: int) -> _RawWord:
        s, n = self.s, self.n
        w = _RawWord(i, i, [], [], True)
        while i < n:
            m = _PLAIN_RUN.match(s, i)
            if m is not None:
                e = m.end()
                w.keep(s, i, e)
                i = e
                if s[e - 1] == "=" and i < n and s[i] == "(" and _ASSIGN_RE.fullmatch(w.value()):
                    # NAME=(a b c): an array assignment; keep the parenthesised list verbatim
                    e = self._balanced(i, "(", ")", "array assignment")
                    self._keep(i, e, w)
                    w.exact = False
                    i = e
                continue
            c = s[i]
            if c in _META:
                break
            if c == "\\" or c == self.escape:
                k = self._continuation(i)
                if k:  # the word goes on after the line break
                    i += k
                    w.exact = False
                    continue
            if c == "\\":
                if i + 1 < n:
                    w.add(s[i + 1], i, i + 2)
                    w.exact = False
                    i += 2
                else:
                    w.keep(s, i, i + 1)
                    i += 1
                continue
            if c == "'":
                j = s.find("'", i + 1)
                if j < 0:
                    self._problem("unterminated single quote", i)
                    j = n
                    w.exact = False
                self._keep(i + 1, j, w)
                i = min(j + 1, n)
                continue
            if c == '"':
                i = self._dquote(i, w)
                continue
            if c == "$":
                nx = s[i + 1] if i + 1 < n else ""
                if nx == "'":
                    i = self._ansi_c(i, w)
                    continue
                if nx == '"':  # $"..." (locale translation): the text of a double-quoted string
                    w.exact = False
                    i = self._dquote(i + 1, w)
                    continue
                e = self._expansion(i)
                if e > i:
                    self._keep(i, e, w)
                    w.exact = False
                    i = e
                    continue
            if c == "`" and self.escape != "`":
                e = self._backtick(i)
                self._keep(i, e, w)
                w.exact = False
                i = e
                continue
            w.keep(s, i, i + 1)
            i += 1
        w.end = i
        return w

    def _to_word(self, w: _RawWord) -> Word:
        value = w.value()
        span = self.src.span(w.start, w.end)
        token = Token(value, span, w.exact and self.src.exact(w.start, w.end))
        return Word(token, _LazySource(value, self.src, w.segs, span.end))

    def _assignment(self, w: _RawWord, *, quoted_ok: bool) -> EnvVar | None:
        """``NAME=value``; the shell needs NAME= unquoted, ``export`` takes ``"NAME=value"`` too."""
        m = _ASSIGN_RE.match(self.s, w.start)
        if m is not None and m.end() <= w.end:
            value = w.value()
            prefix = m.group(0)
            if value.startswith(prefix):
                name = m.group(1)
                return EnvVar(
                    Located(name, self.src.span(w.start, w.start + len(name))),
                    Located(value[len(prefix) :], self.src.span(m.end(), w.end)),
                )
        if quoted_ok:
            return _env_from_word(self._to_word(w))
        return None

    def _skip_heredocs(self, i: int, pending: list[tuple[str, bool]]) -> int:
        s, n = self.s, self.n
        for delim, strip_tabs in pending:
            while i < n:
                eol = s.find("\n", i)
                line_end = n if eol < 0 else eol
                line = s[i:line_end].rstrip("\r")
                if strip_tabs:
                    line = line.lstrip("\t")
                i = n if eol < 0 else eol + 1
                if line == delim:
                    break
        return i

    # -- commands ------------------------------------------------------------------------------
    def run(self) -> list[Command]:
        s, n = self.s, self.n
        out: list[Command] = []
        words: list[Word] = []
        assigns: list[EnvVar] = []
        first = last = -1  # source indices of the current command's extent
        heredocs: list[tuple[str, bool]] = []
        want_target = False  # the next word is a redirection target, not an argument

        def flush() -> None:
            nonlocal words, assigns, first, last, want_target
            if words or assigns:
                out.append(Command(tuple(words), tuple(assigns), self.src.span(first, last)))
            words, assigns, first, last, want_target = [], [], -1, -1, False

        def extend(a: int, b: int) -> None:
            nonlocal first, last
            if first < 0:
                first = a
            last = b

        i = 0
        while i < n:
            c = s[i]
            if c in _BLANKS:
                i += 1
                continue
            if c == "\\" or c == self.escape:
                k = self._continuation(i)
                if k:
                    i += k
                    continue
            if c == "\n":
                flush()
                i += 1
                if heredocs:
                    i = self._skip_heredocs(i, heredocs)
                    heredocs = []
                continue
            if c == "#":
                eol = s.find("\n", i)
                i = n if eol < 0 else eol
                continue
            if c in "<>" and i + 1 < n and s[i + 1] == "(":
                # process substitution <(cmd) / >(cmd): one opaque argument
                e = self._balanced(i + 1, "(", ")", "process substitution")
                raw = _RawWord(i, e, [s[i:e]], [(i, e, True)], False)
                words.append(self._to_word(raw))
                extend(i, e)
                i = e
                continue
            if c in "<>" or (c == "&" and s.startswith("&>", i)):
                m = _REDIRECT_RE.match(s, i)
                op = m.group(0) if m else c
                extend(i, i + len(op))
                i += len(op)
                if op in ("<<", "<<-"):
                    while i < n and s[i] in " \t":
                        i += 1
                    if i < n and s[i] not in _META:
                        d = self._word(i)
                        heredocs.append((d.value(), op == "<<-"))
                        extend(d.start, d.end)
                        i = d.end
                else:
                    want_target = True
                continue
            if c in ";&|()":
                m = _OPERATOR_RE.match(s, i)
                flush()
                i += len(m.group(0)) if m else 1
                continue
            raw = self._word(i)
            if raw.end == i:  # cannot happen (c is not a metacharacter); guard against a stall
                i += 1
                continue
            i = raw.end
            extend(raw.start, raw.end)
            if want_target:
                want_target = False
                continue
            text = s[raw.start : raw.end]
            if text.isdigit() and i < n and s[i] in "<>":
                continue  # an IO number: 2>&1
            if not words and not assigns and text in _RESERVED:
                first = -1  # the command proper starts after the keyword
                continue
            declaring = bool(words) and words[0].value in _DECLARE and words[0].token.exact
            if not words or declaring:
                env = self._assignment(raw, quoted_ok=declaring)
                if env is not None:
                    assigns.append(env)
                    continue
            words.append(self._to_word(raw))
        flush()
        return out


def lex(src: Source, *, escape: str = "\\") -> tuple[list[Command], list[SyntaxProblem]]:
    """Split ``src`` into simple commands; problems are unterminated quotes and substitutions."""
    lexer = _Lexer(src, escape)
    commands = lexer.run()
    return commands, lexer.problems


def iter_commands(text: str, base: int = 0, *, escape: str = "\\") -> Iterator[SimpleCommand]:
    """The simple commands of a shell text; ``base`` is added to every span."""
    commands, _ = lex(FlatSource(text, base), escape=escape)
    for command in commands:
        yield command.simple()


# --------------------------------------------------------------------------------------------
# Launch matching
# --------------------------------------------------------------------------------------------

LAUNCH_MODULES: dict[str, Entry] = {
    "sglang.launch_server": Entry.LAUNCH_SERVER,
    # These register --config with the server flags but never read the file.
    "sglang.bench_one_batch_server": Entry.NO_CONFIG,
    "sglang.benchmark.one_batch_server": Entry.NO_CONFIG,
    "sglang.benchmark.one_batch": Entry.NO_CONFIG,
    "sglang.benchmark.offline_throughput": Entry.NO_CONFIG,
    "sglang.compile_deep_gemm": Entry.NO_CONFIG,
}
_SERVE_MODULES = frozenset({"sglang.cli.main"})  # python -m sglang.cli.main serve ...
_TORCHRUN_MODULES = frozenset({"torch.distributed.run", "torch.distributed.launch"})
_PYTHON_RE = re.compile(r"python(?:\d+(?:\.\d+)*)?t?(?:-dbg)?(?:\.exe)?")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"})
_PIP_RE = re.compile(r"pip(?:\d+(?:\.\d+)*)?")
MAX_NESTING = 8  # sh -c "sh -c '...'" levels followed


@dataclass(frozen=True)
class _Wrapper:
    """A command that runs another command after its own options."""

    with_value: frozenset[str] = frozenset()  # options whose value is the next word
    two_values: frozenset[str] = frozenset()  # options followed by two words (mpirun --mca k v)
    positionals: int = 0  # words before the wrapped command (timeout DURATION)
    subcommand: str | None = None  # uv run, conda run
    env_words: bool = False  # NAME=value words before the command set the environment (env, sudo)


def _opts(*names: str) -> frozenset[str]:
    return frozenset(names)


_SRUN_VALUES = _opts(
    "-A", "-b", "-c", "-C", "-d", "-D", "-e", "-G", "-i", "-J", "-L", "-m", "-n", "-N", "-o", "-p",
    "-q", "-r", "-S", "-t", "-T", "-w", "-W", "-x",
    "--account", "--acctg-freq", "--begin", "--bcast", "--chdir", "--comment", "--constraint",
    "--container", "--container-image", "--container-mounts", "--container-workdir",
    "--container-name", "--container-env", "--cores-per-socket", "--cpu-bind", "--cpu-freq",
    "--cpus-per-gpu", "--cpus-per-task", "--dependency", "--distribution", "--epilog", "--error",
    "--exclude", "--export", "--gid", "--gpu-bind", "--gpus", "--gpus-per-node", "--gpus-per-socket",
    "--gpus-per-task", "--gres", "--gres-flags", "--het-group", "--hint", "--input", "--job-name",
    "--jobid", "--licenses", "--mcs-label", "--mem", "--mem-bind", "--mem-per-cpu", "--mem-per-gpu",
    "--mincpus", "--mpi", "--network", "--nodefile", "--nodelist", "--nodes", "--ntasks",
    "--ntasks-per-core", "--ntasks-per-gpu", "--ntasks-per-node", "--ntasks-per-socket", "--output",
    "--partition", "--prolog", "--qos", "--reservation", "--signal", "--slurmd-debug",
    "--sockets-per-node", "--switches", "--task-epilog", "--task-prolog", "--threads-per-core",
    "--time", "--time-min", "--tmp", "--uid", "--wait", "--wckey",
)
_MPI_VALUES = _opts(
    "-np", "-n", "-c", "-N", "-H", "-host", "--host", "-hostfile", "--hostfile", "-machinefile",
    "--machinefile", "-f", "-x", "--map-by", "-map-by", "--bind-to", "-bind-to", "--rank-by",
    "-rank-by", "-ppn", "--npernode", "-npernode", "--npersocket", "-wdir", "--wdir", "-wd",
    "--prefix", "-prefix", "-output-filename", "--output-filename", "-bootstrap", "-iface",
    "-genvlist", "-envlist", "--app", "-launcher", "-rmk", "-hosts",
)
_MPI_TWO = _opts("--mca", "-mca", "-gmca", "--gmca", "-genv", "-env", "--genv")
_TORCHRUN_VALUES = frozenset(
    spelling
    for name in (
        "nnodes", "nproc-per-node", "rdzv-backend", "rdzv-endpoint", "rdzv-id", "rdzv-conf",
        "max-restarts", "monitor-interval", "start-method", "role", "log-dir", "redirects", "tee",
        "local-ranks-filter", "node-rank", "master-addr", "master-port", "local-addr", "logs-specs",
        "numa-binding", "event-log-handler", "signals-to-handle",
    )
    for spelling in (f"--{name}", f"--{name.replace('-', '_')}")
) | _opts("-r", "-t")
_TORCHRUN_MODULE_FLAGS = _opts("-m", "--module")

_WRAPPERS: dict[str, _Wrapper] = {
    "exec": _Wrapper(_opts("-a")),
    "env": _Wrapper(_opts("-u", "--unset", "-C", "--chdir", "-S", "--split-string"), env_words=True),
    "nohup": _Wrapper(),
    "setsid": _Wrapper(),
    "unbuffer": _Wrapper(),
    "command": _Wrapper(),
    "builtin": _Wrapper(),
    "time": _Wrapper(_opts("-o", "-f", "--output", "--format")),
    "timeout": _Wrapper(_opts("-s", "--signal", "-k", "--kill-after"), positionals=1),
    "nice": _Wrapper(_opts("-n", "--adjustment")),
    "ionice": _Wrapper(_opts("-c", "-n", "--class", "--classdata")),
    "chrt": _Wrapper(positionals=1),
    "numactl": _Wrapper(
        _opts(
            "-N", "-m", "-C", "-i", "-p", "-P", "--cpunodebind", "--membind", "--physcpubind",
            "--interleave", "--preferred", "--preferred-many", "--weighted-interleave",
        )
    ),
    "taskset": _Wrapper(positionals=1),
    "sudo": _Wrapper(
        _opts(
            "-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group", "--host",
            "--prompt", "--close-from", "--chdir", "--role", "--type", "--other-user",
            "--command-timeout",
        ),
        env_words=True,
    ),
    "stdbuf": _Wrapper(_opts("-i", "-o", "-e", "--input", "--output", "--error")),
    "srun": _Wrapper(_SRUN_VALUES),
    "mpirun": _Wrapper(_MPI_VALUES, _MPI_TWO),
    "mpiexec": _Wrapper(_MPI_VALUES, _MPI_TWO),
    "mpiexec.hydra": _Wrapper(_MPI_VALUES, _MPI_TWO),
    "uv": _Wrapper(
        _opts(
            "--with", "--with-editable", "--with-requirements", "--python", "-p", "--project",
            "--directory", "--env-file", "--extra", "--group", "--only-group", "--no-group", "--index",
            "--default-index", "--index-url", "--extra-index-url", "-i", "--package", "--config-file",
            "--cache-dir", "--python-preference", "--find-links", "-f", "--index-strategy",
            "--keyring-provider", "--resolution", "--prerelease", "--exclude-newer", "--link-mode",
            "-C", "--config-setting", "--refresh-package", "--upgrade-package", "-P",
            "--reinstall-package", "--no-binary-package", "--no-build-package", "--color",
            "--allow-insecure-host", "--python-platform", "--no-extra",
        ),
        subcommand="run",
    ),
    "conda": _Wrapper(_opts("-n", "--name", "-p", "--prefix", "--cwd"), subcommand="run"),
    "mamba": _Wrapper(_opts("-n", "--name", "-p", "--prefix", "--cwd"), subcommand="run"),
    "micromamba": _Wrapper(
        _opts("-n", "--name", "-p", "--prefix", "--cwd", "-r", "--root-prefix", "-a", "--attach"),
        subcommand="run",
    ),
    "poetry": _Wrapper(_opts("-C", "--directory", "-P", "--project"), subcommand="run"),
    "pdm": _Wrapper(_opts("-p", "--project"), subcommand="run"),
    "pipenv": _Wrapper(subcommand="run"),
    "pixi": _Wrapper(_opts("-e", "--environment", "--manifest-path"), subcommand="run"),
    "apptainer": _Wrapper(
        _opts("-B", "--bind", "--env", "--env-file", "-H", "--home", "-W", "--workdir", "--pwd", "-o", "--overlay"),
        positionals=1,
        subcommand="exec",
    ),
    "singularity": _Wrapper(
        _opts("-B", "--bind", "--env", "--env-file", "-H", "--home", "-W", "--workdir", "--pwd", "-o", "--overlay"),
        positionals=1,
        subcommand="exec",
    ),
}


@dataclass
class LaunchContext:
    """What a launch found in a file needs besides its words."""

    path: Path
    surface: Surface
    base_dir: Path
    own_pins: bool = False
    problems: list[SyntaxProblem] = field(default_factory=list)
    depth: int = 0


def basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _cover(spans: Sequence[Span]) -> Span:
    return Span(min(s.start for s in spans), max(s.end for s in spans))


def _env_from_word(word: Word) -> EnvVar | None:
    m = _ASSIGN_RE.match(word.value)
    if m is None:
        return None
    name = m.group(1)
    value = word.value[m.end():]
    chars = word.chars
    return EnvVar(
        Located(name, chars.span(0, len(name))),
        Located(value, chars.span(m.end(), len(word.value))),
    )


def _make_launch(
    words: Sequence[Word],
    first: int,
    prog_start: int,
    prog_end: int,
    argv_start: int,
    entry: Entry,
    ctx: LaunchContext,
    env: Sequence[EnvVar],
    head: int | None,
) -> LaunchCommand:
    prog_words = words[prog_start : prog_end + 1]
    program = Located(" ".join(w.value for w in prog_words), _cover([w.token.span for w in prog_words]))
    argv = tuple(w.token for w in words[argv_start:])
    spans = [w.token.span for w in words[first:]]
    span = _cover(spans)
    if head is not None and head <= span.start:
        span = Span(head, span.end)
    return LaunchCommand(
        path=ctx.path,
        surface=ctx.surface,
        entry=entry,
        program=program,
        argv=argv,
        span=span,
        base_dir=ctx.base_dir,
        env=tuple(env),
        own_pins=ctx.own_pins,
    )


def _skip_wrapper(words: Sequence[Word], i: int, spec: _Wrapper, env: list[EnvVar]) -> int:
    """Index of the command a wrapper at ``words[i]`` runs (``len(words)`` when there is none)."""
    n = len(words)
    j = i + 1
    if spec.subcommand is not None:
        if j >= n or words[j].value != spec.subcommand:
            return n
        j += 1
    while j < n:
        v = words[j].value
        if v == "--":
            j += 1
            break
        if spec.env_words and _ASSIGN_RE.match(v):
            found = _env_from_word(words[j])
            if found is not None:
                env.append(found)
            j += 1
            continue
        if not v.startswith("-") or v == "-":
            break
        name, eq, _ = v.partition("=")
        if eq and name.startswith("--"):
            j += 1
        elif v in spec.two_values:
            if v in ("-genv", "-env", "--genv") and j + 2 < n:
                nm, val = words[j + 1], words[j + 2]
                env.append(EnvVar(Located(nm.value, nm.token.span), Located(val.value, val.token.span)))
            j += 3
        elif v in spec.with_value:
            if v == "-x" and j + 1 < n:  # mpirun -x NAME=value exports to the ranks
                found = _env_from_word(words[j + 1])
                if found is not None:
                    env.append(found)
            j += 2
        else:
            j += 1
    if spec is _WRAPPERS["taskset"] and any(w.value in ("-p", "--pid") for w in words[i + 1 : j]):
        return n  # taskset -p changes a running process
    return j + spec.positionals


def _python_launch(
    words: Sequence[Word], i: int, first: int, ctx: LaunchContext, env: list[EnvVar], head: int | None
) -> list[LaunchCommand]:
    n = len(words)
    j = i + 1
    module: str | None = None
    module_idx = -1
    while j < n:
        v = words[j].value
        if v == "-m":
            if j + 1 < n:
                module, module_idx = words[j + 1].value, j + 1
            break
        if v.startswith("-m") and not v.startswith("--"):
            module, module_idx = v[2:], j  # -msglang.launch_server
            break
        if v in ("-X", "-W", "--check-hash-based-pycs"):
            j += 2
            continue
        if v.startswith("--"):
            j += 1
            continue
        if v.startswith("-") and len(v) > 1:
            flags = v[1:]
            if flags[0] in "XW":
                j += 1
                continue
            if "c" in flags:
                return []  # inline code
            if flags.endswith("m"):  # -um MODULE
                if j + 1 < n:
                    module, module_idx = words[j + 1].value, j + 1
                break
            j += 1
            continue
        return []  # a script path or "-" (stdin)
    if module is None:
        return []
    entry = LAUNCH_MODULES.get(module)
    if entry is not None:
        return [_make_launch(words, first, i, module_idx, module_idx + 1, entry, ctx, env, head)]
    if module in _SERVE_MODULES and module_idx + 1 < n and words[module_idx + 1].value == "serve":
        return [_make_launch(words, first, i, module_idx + 1, module_idx + 2, Entry.SERVE, ctx, env, head)]
    if module in _TORCHRUN_MODULES:
        return _torchrun_launch(words, module_idx + 1, first, i, ctx, env, head)
    return []


def _torchrun_launch(
    words: Sequence[Word], j: int, first: int, prog: int, ctx: LaunchContext, env: list[EnvVar], head: int | None
) -> list[LaunchCommand]:
    n = len(words)
    as_module = no_python = False
    while j < n:
        v = words[j].value
        if v == "--":
            j += 1
            break
        if not v.startswith("-"):
            break
        if v in _TORCHRUN_MODULE_FLAGS:
            as_module = True
        elif v in ("--no-python", "--no_python"):
            no_python = True
        elif "=" not in v and v in _TORCHRUN_VALUES:
            j += 1
        j += 1
    if j >= n:
        return []
    if no_python:
        return launches_from_words(words[j:], ctx, env, head)
    entry = LAUNCH_MODULES.get(words[j].value) if as_module else None
    if entry is None:
        return []
    return [_make_launch(words, first, prog, j, j + 1, entry, ctx, env, head)]


def _shell_c_launches(words: Sequence[Word], i: int, ctx: LaunchContext, env: list[EnvVar]) -> list[LaunchCommand]:
    n = len(words)
    j = i + 1
    has_c = False
    while j < n:
        v = words[j].value
        if v == "--":
            j += 1
            break
        if v.startswith("--"):
            j += 2 if v in ("--rcfile", "--init-file") else 1
            continue
        if len(v) > 1 and v[0] in "-+":
            cluster = v[1:]
            if v[0] == "-" and "c" in cluster:
                has_c = True
            j += 2 if ("o" in cluster or "O" in cluster) else 1
            continue
        break
    if not has_c or j >= n or ctx.depth >= MAX_NESTING:
        return []
    return launches_in_source(words[j].chars, ctx, env, nested=True)


def launches_from_words(
    words: Sequence[Word], ctx: LaunchContext, env: Sequence[EnvVar] = (), head: int | None = None
) -> list[LaunchCommand]:
    """The launches one command (its argv as words) runs, looking through wrappers and ``sh -c``.

    ``head`` is the file offset where the command starts (prefix assignments included).
    """
    env_list = list(env)
    n = len(words)
    i = 0
    for _ in range(32):  # each round strips one wrapper
        if i >= n:
            return []
        w = words[i]
        b = basename(w.value)
        if _PYTHON_RE.fullmatch(b) or (
            # "$PYTHON" -m sglang.launch_server: an interpreter we cannot name, but the module says it
            not w.token.exact
            and "$" in w.value
            and i + 2 < n
            and words[i + 1].value == "-m"
            and words[i + 2].value in LAUNCH_MODULES
        ):
            return _python_launch(words, i, 0, ctx, env_list, head)
        if b == "sglang":
            if i + 1 < n and words[i + 1].value == "serve":
                return [_make_launch(words, 0, i, i + 1, i + 2, Entry.SERVE, ctx, env_list, head)]
            return []
        if b in _SHELLS:
            return _shell_c_launches(words, i, ctx, env_list)
        if b == "torchrun":
            return _torchrun_launch(words, i + 1, 0, i, ctx, env_list, head)
        spec = _WRAPPERS.get(b)
        if spec is None:
            return []
        i = _skip_wrapper(words, i, spec, env_list)
    return []


def is_pip_install(words: Sequence[Word]) -> bool:
    """``pip install``, ``python -m pip install``, ``uv pip install`` (the pin readers read them)."""
    values = [basename(w.value) for w in words[:8]]
    if "install" not in values:
        return False
    return any(_PIP_RE.fullmatch(v) for v in values[: values.index("install")])


def launches_from_commands(
    commands: Sequence[Command], ctx: LaunchContext, env: Sequence[EnvVar] = ()
) -> list[LaunchCommand]:
    """Launches of a script, in order; ``export``/``VAR=x`` lines feed the env of later launches."""
    # One value per name, in the order of the latest assignment: what the launch will see.
    running: dict[str, EnvVar] = {}
    for var in env:
        _assign(running, var)
    out: list[LaunchCommand] = []
    for command in commands:
        words = command.words
        if not words or (words[0].value in _DECLARE and words[0].token.exact):
            for var in command.assignments:
                _assign(running, var)
            continue
        first = words[0]
        if first.value == "unset":
            for w in words[1:]:
                running.pop(w.value, None)
            continue
        if first.value == "cd" and len(words) == 2 and words[1].token.exact:
            target = words[1].value
            if target and target[0] not in "/~-$":  # relative: we know where that is
                ctx.base_dir = Path(os.path.normpath(ctx.base_dir / target))
            continue
        if is_pip_install(words):
            ctx.own_pins = True
        out.extend(launches_from_words(words, ctx, [*running.values(), *command.assignments], command.span.start))
    return out


def _assign(running: dict[str, EnvVar], var: EnvVar) -> None:
    running.pop(var.name.value, None)
    running[var.name.value] = var


def launches_in_source(
    src: Source, ctx: LaunchContext, env: Sequence[EnvVar] = (), *, escape: str = "\\", nested: bool = False
) -> list[LaunchCommand]:
    """Lex ``src`` as a script and return its launches; lexer problems go to ``ctx.problems``."""
    commands, problems = lex(src, escape=escape)
    ctx.problems.extend(problems)
    if nested:
        ctx.depth += 1
        try:
            return launches_from_commands(commands, ctx, env)
        finally:
            ctx.depth -= 1
    return launches_from_commands(commands, ctx, env)


def find_launches(
    text: str, path: Path, surface: Surface, base: int = 0, env: tuple[EnvVar, ...] = ()
) -> list[LaunchCommand]:
    """The launches in a shell text (a script, or a script embedded at ``base`` in another file)."""
    ctx = LaunchContext(path, surface, path.parent)
    return launches_in_source(FlatSource(text, base), ctx, env)


def mentions_sglang(text: str) -> bool:
    return "sglang" in text.lower()


def read_shell(path: Path, text: str) -> SurfaceResult:
    """A whole shell script (``*.sh``, ``*.sbatch``, a file with a shell shebang)."""
    ctx = LaunchContext(path, Surface.SHELL, path.parent)
    launches = launches_in_source(FlatSource(text), ctx)
    problems = tuple(ctx.problems)
    return SurfaceResult(
        launches=tuple(launches),
        problems=problems,
        is_launch_file=bool(launches) or (bool(problems) and mentions_sglang(text)),
    )
