"""THE shell lexer: words with exact spans and unquoted values, split into simple commands.

POSIX-ish: quotes (``'...'``, ``"..."``, ``$'...'``), backslash escapes, ``\\``-newline
continuations, comments, the operators that split commands (``;`` ``&&`` ``||`` ``|`` ``&``,
newlines, subshell parens), redirections (dropped from the words, heredoc bodies skipped, ``<<-``
and quoted delimiters included), ``$(...)``/``${...}``/backticks kept verbatim inside a word and
marking it not exact, ``VAR=x`` prefixes and ``export VAR=x`` as assignments, bash arrays
``A=( ... )`` (comments inside them included). It never runs anything and never raises on bad
input: an unterminated quote becomes a ``SyntaxProblem`` and the rest of the text is the token.

Text does not always sit in the file character for character (a YAML scalar folds lines and
strips indentation, a JSON string has escapes), so the lexer works on a ``Source``: a string plus
the file span of each of its characters. Every ``Token.span`` slices the file to the token's raw
text; ``exact`` says whether that raw text is the value with nothing but quotes around it.

Nothing here knows what a launch or a pin is: ``surfaces/shell.py`` and ``pins/install_cmds.py``
read the commands this module produces.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from kimi_lsp import _regex
from kimi_lsp._record import dataclass
from kimi_lsp.syntax import EnvVar, SyntaxProblem, Token
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

    def offsets(self, i: int, j: int) -> tuple[int, ...]:
        """``end(k) - 1`` for each character ``k`` in ``[i, j)``: where each one's last file
        character sits (the subclasses answer without a call per character)."""
        return tuple(self.end(k) - 1 for k in range(i, j))

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

    def offsets(self, i: int, j: int) -> tuple[int, ...]:
        return tuple(range(self.base + i, self.base + max(i, j)))

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
        # written verbatim (character k at a+k): ``exact`` needs no per-character walk, and the
        # ranges themselves serve as the offsets (immutable: no list of them is made)
        verbatim = self._verbatim = (
            type(starts) is range and type(ends) is range and starts.step == 1 and ends.step == 1
            and len(starts) == len(ends) == len(text) and (not text or ends[0] == starts[0] + 1)
        )
        self.starts: Sequence[int] = starts if verbatim else list(starts)
        self.ends: Sequence[int] = ends if verbatim else list(ends)
        self._anchor = anchor

    def start(self, i: int) -> int:
        return self.starts[i] if i < len(self.starts) else self._anchor

    def end(self, i: int) -> int:
        return self.ends[i]

    def offsets(self, i: int, j: int) -> tuple[int, ...]:
        if 0 <= i and j <= len(self.ends):
            return tuple(e - 1 for e in self.ends[i:j])
        return super().offsets(i, j)

    def anchor(self) -> int:
        return self._anchor

    def exact(self, i: int, j: int) -> bool:
        if self._verbatim and 0 <= i <= j <= len(self.text):
            return True
        starts, ends = self.starts, self.ends
        if 0 <= i < j <= len(starts):
            # character k at a+k for every k: compared a slice at a time (a word of a script in a
            # `run: |` block, whose lines are verbatim but not the block as a whole)
            a = starts[i]
            return starts[i:j] == list(range(a, a + j - i)) and ends[i:j] == list(range(a + 1, a + 1 + j - i))
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
    # ``$…``/backquote substitutions kept verbatim in the value: ``[a, b)`` ranges of it (what
    # ``shell_expand`` may expand; a ``$`` outside them is a literal dollar)
    substitutions: tuple[tuple[int, int], ...] = ()

    @property
    def value(self) -> str:
        return self.token.value


@dataclass(frozen=True, slots=True)
class ArrayAssignment:
    """``NAME=(a b c)`` (``append``: ``NAME+=(...)``); each element keeps the span where it is written."""

    name: Located[str]
    words: tuple[Word, ...]
    append: bool


@dataclass(frozen=True, slots=True)
class Command:
    """A simple command with located words (the richer form of ``SimpleCommand``)."""

    words: tuple[Word, ...]
    assignments: tuple[EnvVar, ...]
    span: Span
    arrays: tuple[ArrayAssignment, ...] = ()  # NAME=( ... ) / NAME+=( ... ) among the assignments
    # Runs only on some paths: inside ``if``/``while``/``for`` bodies, or after ``&&``/``||``.
    conditional: bool = False
    assignment_words: tuple[Word, ...] = ()  # the words of ``assignments``, one each, in order
    # The branches the command sits in, outermost first: one offset per open ``if``/``elif``/``else``
    # branch, loop body or ``case`` branch (two commands share a path when one's ``block`` starts
    # the other's), and what the innermost branch needs to run (``when `[ -n "$X" ]` holds``).
    block: tuple[int, ...] = ()
    condition: str = ""
    and_or: bool = False  # follows ``&&``/``||``: runs on some paths inside its block too

    def simple(self) -> SimpleCommand:
        return SimpleCommand(tuple(w.token for w in self.words), self.assignments, self.span)


_META = frozenset(" \t\f\v\r\n;&|()<>")
_PLAIN_RUN = _regex.compile(r"[^ \t\f\v\r\n;&|()<>\\'\"$`]+")  # characters that stand for themselves
_DQ_RUN = _regex.compile(r"[^\"\\$`]+")
_BLANKS = " \t\f\v\r"  # a lone \r (CRLF files) is blank to us; bash would keep it in the word
ASSIGN_RE = _regex.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=")
_NAME_RE = _regex.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATOR_RE = _regex.compile(r";;&|;;|;&|&&|\|\||\|&|[;&|()]")
_REDIRECT_RE = _regex.compile(r"&>>|&>|<<<|<<-|<<|<>|<&|>&|>>|>\||<|>")
# Words that open or close compound commands; the command proper starts after them.
_RESERVED = frozenset({"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"})
DECLARE = frozenset({"export", "declare", "typeset", "local", "readonly"})
_ANSI_NUMERIC_RE = _regex.compile(r"x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}")
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
    array: list[Word] | None = None  # NAME=( ... ): the elements
    size: int = 0  # len(value())
    subs: list[tuple[int, int]] | None = None  # value ranges of the substitutions kept verbatim

    def keep(self, s: str, i: int, j: int) -> None:
        if j > i:
            self.pieces.append(s[i:j])
            self.segs.append((i, j, True))
            self.size += j - i

    def add(self, ch: str, a: int, b: int) -> None:
        self.pieces.append(ch)
        self.segs.append((a, b, False))
        self.size += len(ch)

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

    def offsets(self, i: int, j: int) -> tuple[int, ...]:
        parent = self._parent
        if self._mapped is None and isinstance(parent, FlatSource) and 0 <= i:
            # what the mapping would hold, straight from the segments: a verbatim piece's
            # characters sit where they are written, a made character at its piece's last one
            base = parent.base
            out: list[int] = []
            for a, b, verbatim in self._segs:
                if verbatim:
                    out.extend(range(base + a, base + b))
                else:
                    out.append(base + b - 1 if b > a else base + a - 1)
            if len(out) == len(self.text) and j <= len(out):
                return tuple(out[i:j])
        return self._m().offsets(i, j)

    def anchor(self) -> int:
        return self._anchor

    def exact(self, i: int, j: int) -> bool:
        return self._m().exact(i, j)


@dataclass(frozen=True, slots=True)
class Heredoc:
    """A ``<<DELIM`` / ``<<-DELIM`` redirection: the body is the lines after the command's line."""

    delimiter: str  # unquoted (``<<"EOF"`` and ``<<'EOF'`` give EOF)
    strip_tabs: bool  # ``<<-``: leading tabs of body lines (and of the delimiter line) dropped
    span: Span  # the operator and the delimiter word
    runner: str | None = None  # the command's first word when it has one (``python3 <<EOF``)

    @property
    def is_script(self) -> bool:
        """Whether the body runs as a shell script (``RUN <<EOF``, ``RUN bash <<EOF``)."""
        return self.runner is None or basename(self.runner) in SHELLS

    @property
    def is_written(self) -> bool:
        """Whether the body is written to a file (``cat > start.sh <<EOF``, ``tee start.sh <<EOF``)."""
        return self.runner is not None and basename(self.runner) in WRITERS


WRITERS = frozenset({"cat", "tee"})


def is_heredoc_end(line: str, heredoc: Heredoc) -> bool:
    """Whether ``line`` (no line break) closes ``heredoc``."""
    return (line.lstrip("\t") if heredoc.strip_tabs else line).rstrip("\r") == heredoc.delimiter


class _Lexer:
    def __init__(self, src: Source, escape: str) -> None:
        self.src = src
        self.s = src.text
        self.n = len(self.s)
        self.escape = escape
        self.problems: list[SyntaxProblem] = []
        self.heredocs: list[Heredoc] = []  # the heredocs the commands open, in order

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
        """``s[i] == opening``: the index after the matching ``closing``.

        Inside parentheses (``$( ... )``, ``A=( ... )``, ``<( ... )``) the text is shell code:
        a comment (``# the model's own layer``) and a heredoc body (``<<EOF`` ... ``EOF``) are
        text whose quotes and parentheses do not count.
        """
        depth = 0
        j = i
        s, n = self.s, self.n
        code = opening == "(" and not self.s.startswith("((", i)  # $(( a << 2 )) is arithmetic
        pending: list[tuple[str, bool]] = []  # heredocs opened on the current line
        while j < n:
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c in "'\"`":
                j = self._skip_quoted(j)
                continue
            if code:
                if c == "#" and (j == i + 1 or s[j - 1] in " \t\r\n;&|("):
                    eol = s.find("\n", j)
                    j = n if eol < 0 else eol
                    continue
                if c == "\n" and pending:
                    j = self._skip_heredocs(j + 1, pending)
                    pending = []
                    continue
                if c == "<" and s.startswith("<<", j) and not s.startswith("<<<", j):
                    j = self._heredoc_operator(j, pending)
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

    def _heredoc_operator(self, j: int, pending: list[tuple[str, bool]]) -> int:
        """``s[j:]`` starts with ``<<``: note the heredoc it opens; the index after its delimiter."""
        s, n = self.s, self.n
        strip_tabs = s.startswith("<<-", j)
        k = j + (3 if strip_tabs else 2)
        while k < n and s[k] in " \t":
            k += 1
        if k >= n or s[k] in _META:
            return k
        d = self._word(k)
        pending.append((d.value(), strip_tabs))
        return max(d.end, k + 1)

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

    def _substitution(self, i: int, w: _RawWord) -> int:
        """A ``$…`` expansion or a backquoted command substitution at ``i``, kept whole in ``w``
        (its value is not known until run time); the index after it, or ``i`` when there is none."""
        c = self.s[i]
        if c == "$":
            e = self._expansion(i)
        elif c == "`" and self.escape != "`":
            e = self._backtick(i)
        else:
            return i
        if e > i:
            at = w.size
            self._keep(i, e, w)
            w.exact = False
            if w.subs is None:
                w.subs = []
            w.subs.append((at, w.size))
        return e

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
            e = self._substitution(j, w)
            if e > j:
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
                if s[e - 1] == "=" and i < n and s[i] == "(" and ASSIGN_RE.fullmatch(w.value()):
                    # NAME=(a b c): an array assignment; keep the parenthesised list verbatim
                    e = self._balanced(i, "(", ")", "array assignment")
                    w.array = self._array_words(i + 1, e - 1 if s[e - 1 : e] == ")" else e)
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
            e = self._substitution(i, w)
            if e > i:
                i = e
                continue
            w.keep(s, i, i + 1)
            i += 1
        w.end = i
        return w

    def _array_words(self, i: int, end: int) -> list[Word]:
        """The elements of an array assignment written in ``s[i:end]`` (comments skipped)."""
        s = self.s
        out: list[Word] = []
        while i < end:
            c = s[i]
            if c in " \t\f\v\r\n":
                i += 1
                continue
            if c == "\\" or c == self.escape:
                k = self._continuation(i)
                if k:
                    i += k
                    continue
            if c == "#":
                eol = s.find("\n", i, end)
                i = end if eol < 0 else eol
                continue
            raw = self._word(i)
            if raw.end <= i:  # a metacharacter bash would reject here: skip it
                i += 1
                continue
            out.append(self._to_word(raw))
            i = raw.end
        return out

    def _to_word(self, w: _RawWord) -> Word:
        value = w.value()
        span = self.src.span(w.start, w.end)
        token = Token(value, span, w.exact and self.src.exact(w.start, w.end))
        return Word(token, _LazySource(value, self.src, w.segs, span.end), tuple(w.subs) if w.subs else ())

    def _assignment(self, w: _RawWord, *, quoted_ok: bool) -> EnvVar | None:
        """``NAME=value``; the shell needs NAME= unquoted, ``export`` takes ``"NAME=value"`` too."""
        m = ASSIGN_RE.match(self.s, w.start)
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
            return env_from_word(self._to_word(w))
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
        assign_words: list[Word] = []
        first = last = -1  # source indices of the current command's extent
        heredocs: list[tuple[str, bool]] = []
        want_target = False  # the next word is a redirection target, not an argument
        arrays: list[ArrayAssignment] = []
        blocks = 0  # open if/while/until/for bodies
        after_and_or = False  # the command follows && or ||
        branches: list[tuple[int, str]] = []  # the open branches: where each starts, what it needs
        tests: list[str] = []  # the test of each open `if` (as branches), for its `else`
        test_at = -1  # where the test of the `if`/`elif` being read starts

        def flush() -> None:
            nonlocal words, assigns, assign_words, first, last, want_target, arrays
            if words or assigns:
                conditional = blocks > 0 or after_and_or
                span = self.src.span(first, last)
                out.append(
                    Command(tuple(words), tuple(assigns), span, tuple(arrays), conditional, tuple(assign_words),
                            tuple(at for at, _ in branches), branches[-1][1] if branches else "", after_and_or)
                )
            words, assigns, assign_words, first, last, want_target, arrays = [], [], [], -1, -1, False, []

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
                after_and_or = False
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
                raw = _RawWord(i, e, [s[i:e]], [(i, e, True)], False, size=e - i)
                words.append(self._to_word(raw))
                extend(i, e)
                i = e
                continue
            if c in "<>" or (c == "&" and s.startswith("&>", i)):
                m = _REDIRECT_RE.match(s, i)
                op = m.group(0) if m else c
                op_at = i
                extend(i, i + len(op))
                i += len(op)
                if op in ("<<", "<<-"):
                    while i < n and s[i] in " \t":
                        i += 1
                    if i < n and s[i] not in _META:
                        d = self._word(i)
                        heredocs.append((d.value(), op == "<<-"))
                        self.heredocs.append(
                            Heredoc(
                                d.value(), op == "<<-", self.src.span(op_at, d.end),
                                words[0].value if words else None,
                            )
                        )
                        extend(d.start, d.end)
                        i = d.end
                else:
                    want_target = True
                continue
            if c in ";&|()":
                m = _OPERATOR_RE.match(s, i)
                op = m.group(0) if m else c
                flush()
                if op in (";;", ";&", ";;&") and branches:
                    branches[-1] = (i, branches[-1][1])  # the next `case` pattern's branch
                after_and_or = op in ("&&", "||")
                i += len(op)
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
                if text in ("if", "do"):  # while/until bodies open with `do`
                    blocks += 1
                    branches.append((raw.start, "in a loop" if text == "do" else "on some paths"))
                    tests.append("")
                elif text in ("fi", "done", "esac") and blocks:
                    blocks -= 1
                    if branches:
                        branches.pop()
                        tests.pop()
                if text in ("if", "elif"):
                    test_at = raw.end
                elif text == "then" and branches:
                    tests[-1] = _test_label(s[test_at:raw.start]) if test_at >= 0 else ""
                    test_at = -1
                    branches[-1] = (raw.start, f"when `{tests[-1]}` holds" if tests[-1] else "on some paths")
                elif text == "else" and branches:
                    branches[-1] = (raw.start, f"when `{tests[-1]}` fails" if tests[-1] else "on some paths")
                continue
            declaring = bool(words) and words[0].value in DECLARE and words[0].token.exact
            if not words or declaring:
                env = self._assignment(raw, quoted_ok=declaring)
                if env is not None:
                    assigns.append(env)
                    assign_words.append(self._to_word(raw))
                    if raw.array is not None:
                        append = s.startswith("+=", raw.start + len(env.name.value))
                        arrays.append(ArrayAssignment(env.name, tuple(raw.array), append))
                    continue
            if not words and text == "case":
                blocks += 1  # each `pattern)` branch runs on some paths only
                branches.append((raw.start, "in one `case` branch"))
                tests.append("")
            words.append(self._to_word(raw))
        flush()
        return out


def _test_label(text: str) -> str:
    """An ``if`` test as a doubt names it: one line, without the ``;`` before ``then``, cut short."""
    label = " ".join(text.split()).rstrip(";").strip()
    return label if len(label) <= 60 else label[:57] + "..."


def lex(src: Source, *, escape: str = "\\") -> tuple[list[Command], list[SyntaxProblem]]:
    """Split ``src`` into simple commands; problems are unterminated quotes and substitutions."""
    if type(src) is FlatSource:
        # A script is lexed once for its launches and once more for its install lines
        # (pins/install_cmds): the same text at the same offset gives the same commands, which
        # are immutable, so the last few answers are kept (each caller gets its own lists).
        key = (src.text, src.base, escape)
        hit = _recent.get(key)
        if hit is None:
            lexer = _Lexer(src, escape)
            hit = (lexer.run(), lexer.problems)
            if len(_recent) >= _RECENT_MAX:
                _recent.clear()  # one call, so a second thread (the server's) cannot trip over it
            _recent[key] = hit
        return list(hit[0]), list(hit[1])
    lexer = _Lexer(src, escape)
    commands = lexer.run()
    return commands, lexer.problems


_RECENT_MAX = 4
_recent: dict[tuple[str, int, str], tuple[list[Command], list[SyntaxProblem]]] = {}


def heredocs(src: Source, *, escape: str = "\\") -> list[Heredoc]:
    """The heredocs that the commands of ``src`` open (a Dockerfile ``RUN`` line), in order."""
    lexer = _Lexer(src, escape)
    lexer.run()
    return lexer.heredocs


def iter_commands(text: str, base: int = 0, *, escape: str = "\\") -> Iterator[SimpleCommand]:
    """The simple commands of a shell text; ``base`` is added to every span."""
    commands, _ = lex(FlatSource(text, base), escape=escape)
    for command in commands:
        yield command.simple()


def basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


# `name() {`, `function name {`, `function name() {` at the start of a line (the brace may be on the next)
_FUNCTION_RE = _regex.compile(
    r"^[ \t]*(?:function[ \t]+([A-Za-z_][\w:.-]*)(?:[ \t]*\(\))?|([A-Za-z_][\w:.-]*)[ \t]*\(\))[ \t]*\n?[ \t]*\{",
    re.MULTILINE,
)


MAX_FUNCTIONS = 256
_BRACE_RE = _regex.compile(r"[{}]")


def function_spans(src: Source) -> list[tuple[str, Span]]:
    """Shell functions defined in ``src``: each name and the file span of its definition (the
    header to the closing brace, matched by counting braces: ``${VAR}`` pairs balance). One pass
    over the text however many headers there are."""
    text = src.text
    if "(" not in text and "function" not in text:
        return []
    heads: dict[int, tuple[str, int]] = {}  # the header's `{` -> (name, header start)
    for m in _FUNCTION_RE.finditer(text):
        if len(heads) == MAX_FUNCTIONS:
            break  # a hostile file's thousands of headers: the first ones are followed
        heads[m.end() - 1] = (m.group(1) or m.group(2), m.start())
    if not heads:
        return []
    out: list[tuple[str, Span]] = []
    stack: list[int] = []
    first = min(heads)
    for b in _BRACE_RE.finditer(text, first):
        k = b.start()
        if text[k] == "{":
            stack.append(k)
        elif stack:
            opened = stack.pop()
            head = heads.get(opened)
            if head is not None:
                out.append((head[0], src.span(head[1], k + 1)))
    out.sort(key=lambda f: f[1].start)
    return out


def env_from_word(word: Word) -> EnvVar | None:
    """``NAME=value`` (or ``NAME+=value``) as an assignment with located name and value."""
    m = ASSIGN_RE.match(word.value)
    if m is None:
        return None
    name = m.group(1)
    value = word.value[m.end():]
    chars = word.chars
    return EnvVar(
        Located(name, chars.span(0, len(name))),
        Located(value, chars.span(m.end(), len(word.value))),
    )


# --------------------------------------------------------------------------------------------
# Notes saved as scripts
# --------------------------------------------------------------------------------------------

# A sentence lexed as a command: capitalised first word, plain words, closing punctuation
# ("Then start the decode node:"), or any word in a non-Latin script ("Запрос с метриками:").
_SENTENCE_WORD = _regex.compile(r"[A-Za-z][A-Za-z'’-]*[,;]?")
_SENTENCE_END = _regex.compile(r"[A-Za-z][A-Za-z'’-]*[.:!?]")
_PROSE_MIN = 2  # sentences before a file without a shebang counts as notes


def prose_lines(text: str, commands: Sequence[Command]) -> list[int]:
    """0-based lines of the commands that are sentences, not commands: what a person pastes
    into a ``.sh`` file used as a notebook (prose, URLs, logs around a few launches). Empty for
    a file with a shebang: a file that says how it runs is a script, whatever it holds."""
    if text.startswith("#!"):
        return []
    out: list[int] = []
    for cmd in commands:
        if cmd.assignments or not cmd.words or not _is_sentence([w.value for w in cmd.words]):
            continue
        out.append(text.count("\n", 0, cmd.span.start))
    return out if len(out) >= _PROSE_MIN else []


def _is_sentence(words: Sequence[str]) -> bool:
    first = words[0]
    if first.startswith(("http://", "https://")):
        return True
    if any(ch.isalpha() and not ch.isascii() for ch in first):
        return True
    if len(words) < 3 or not first[:1].isupper() or not first[1:2].islower():
        return False
    *body, last = words
    return all(_SENTENCE_WORD.fullmatch(w) for w in body) and bool(_SENTENCE_END.fullmatch(last))
