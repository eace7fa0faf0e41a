"""Shared helpers for the manifest readers: located PEP 508 strings, names, offset maps.

Every reader ends up with a requirement string somewhere in a file (a requirements line, a TOML
string, a YAML scalar, a shell word). ``scan_requirement`` splits such a string into name,
extras, specifier and marker *with positions*, because a bump must replace exactly the written
specifier text: ``str(SpecifierSet(...))`` reorders clauses and cannot be searched for.
"""
from __future__ import annotations

import re
from pathlib import Path

from kimi_lsp import _regex
from kimi_lsp._record import dataclass
from kimi_lsp.pep440 import InvalidSpecifier, InvalidVersion, SpecifierSet
from kimi_lsp.pins.model import Pin, PinFormat, PinProblem, PinSource
from kimi_lsp.text import Located, Span

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any

    from kimi_lsp.workspace import SourceText

_CANON = _regex.compile(r"[-_.]+")

# The flashinfer trio: their versions must agree at runtime (flashinfer checks cubin/jit-cache).
FLASHINFER = "flashinfer-python"
COMPANIONS = ("flashinfer-cubin", "flashinfer-jit-cache")

_NAME_RE = _regex.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_WS_RE = _regex.compile(r"\s+")


def canonical(name: str) -> str:
    return _CANON.sub("-", name).lower()  # packaging.utils.canonicalize_name, without packaging.tags


def normalize_spec(spec_text: str) -> str:
    """Whitespace removed, clause order kept (never ``str(SpecifierSet)``, which sorts)."""
    return _WS_RE.sub("", spec_text)


def sole_version(specifier: str) -> str | None:
    """The version of a sole ``==``/``===`` clause that is not a wildcard."""
    if not specifier or "," in specifier or "|" in specifier:
        return None
    for op in ("===", "=="):
        if specifier.startswith(op):
            ver = specifier[len(op) :]
            if ver and not ver.endswith(".*") and "$" not in ver:
                return ver
            return None
    return None


def valid_specifier(spec: str) -> bool:
    try:
        SpecifierSet(spec)
    except InvalidSpecifier:
        return False
    return True


def version_from_filename(url_or_path: str) -> tuple[str, str] | None:
    """(canonical name, version) from a wheel or sdist file name at the end of a URL/path."""
    base = url_or_path.split("#", 1)[0].split("?", 1)[0].rstrip("/")
    base = base.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    try:
        if base.endswith(".whl"):
            from packaging.utils import parse_wheel_filename

            name, ver, _build, _tags = parse_wheel_filename(base)
            return str(name), str(ver)
        if base.endswith((".tar.gz", ".zip")):
            from packaging.utils import parse_sdist_filename

            name, ver = parse_sdist_filename(base)
            return str(name), str(ver)
    except ValueError:  # InvalidWheelFilename, InvalidSdistFilename, InvalidVersion
        return None
    return None


def egg_name(url: str) -> str | None:
    """``#egg=name`` fragment of a VCS/archive URL (pip's legacy way to name it)."""
    m = re.search(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)", url)
    return m.group(1) if m else None


# -- offset maps ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Piece:
    start: int  # offset in the logical string
    file_start: int  # offset in the file
    length: int


class OffsetMap:
    """Maps offsets of an assembled string (joined continuation lines, unquoted shell words,
    expanded variables) back to the file. Characters outside every piece are synthetic."""

    __slots__ = ("pieces",)

    def __init__(self, pieces: list[Piece] | None = None) -> None:
        self.pieces: list[Piece] = pieces or []

    @classmethod
    def identity(cls, file_start: int, length: int) -> OffsetMap:
        return cls([Piece(0, file_start, length)])

    def add(self, start: int, file_start: int, length: int) -> None:
        if length <= 0:
            return
        if self.pieces:
            last = self.pieces[-1]
            # merge adjacent pieces so contiguous text stays one piece
            if last.start + last.length == start and last.file_start + last.length == file_start:
                self.pieces[-1] = Piece(last.start, last.file_start, last.length + length)
                return
        self.pieces.append(Piece(start, file_start, length))

    def extend(self, other: OffsetMap, at: int) -> None:
        for p in other.pieces:
            self.add(at + p.start, p.file_start, p.length)

    def span(self, a: int, b: int) -> Span | None:
        """File span of ``[a, b)`` when that text sits contiguously in the file, else None.
        An empty range maps to an empty span where its neighbour character sits."""
        for p in self.pieces:
            if p.start <= a and b <= p.start + p.length and (a < b or p.start <= a <= p.start + p.length):
                return Span(p.file_start + a - p.start, p.file_start + b - p.start)
        if a == b:
            for p in self.pieces:
                if a == p.start + p.length:
                    off = p.file_start + p.length
                    return Span(off, off)
        return None

    def overlapping(self, a: int, b: int) -> list[Piece]:
        return [p for p in self.pieces if p.start < b and a < p.start + p.length]

    def cover(self, a: int, b: int) -> Span | None:
        """Smallest file span covering whatever of ``[a, b)`` maps to the file."""
        spans = []
        for p in self.overlapping(a, b):
            lo = max(a, p.start)
            hi = min(b, p.start + p.length)
            spans.append(Span(p.file_start + lo - p.start, p.file_start + hi - p.start))
        if not spans:
            return None
        out = spans[0]
        for s in spans[1:]:
            out = out.cover(s)
        return out


# -- located requirement strings --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReqParts:
    """A PEP 508 string split at its parts; offsets are relative to the scanned string."""

    name: str
    name_range: tuple[int, int]
    extras: tuple[str, ...]
    spec_text: str  # exact written clauses, stripped ("" when none)
    spec_range: tuple[int, int]  # empty range at the insertion point when there is no specifier
    marker: str | None
    url: str | None
    range: tuple[int, int]  # the whole requirement, stripped
    error: str | None  # packaging's complaint, when the string is not a valid requirement


def scan_requirement(s: str) -> ReqParts | None:
    """Split ``s`` (one requirement, nothing else) into located parts; None if no name."""
    i = len(s) - len(s.lstrip())
    m = _NAME_RE.match(s, i)
    if not m:
        return None
    name_range = (m.start(), m.end())
    pos = m.end()
    end_of_name = pos
    extras: tuple[str, ...] = ()
    j = _skip_ws(s, pos)
    if j < len(s) and s[j] == "[":
        close = s.find("]", j)
        if close < 0:
            return _with_error(s, name_range, "unterminated extras '['")
        extras = tuple(e.strip() for e in s[j + 1 : close].split(",") if e.strip())
        pos = end_of_name = close + 1
        j = _skip_ws(s, pos)
    url: str | None = None
    marker: str | None = None
    spec_range = (end_of_name, end_of_name)
    end = len(s.rstrip())
    if j < len(s) and s[j] == "@":
        k = _skip_ws(s, j + 1)
        u = k
        while u < len(s) and not s[u].isspace():
            u += 1
        url = s[k:u]
        rest = s[u:]
        semi = rest.find(";")
        if semi >= 0:
            marker = rest[semi + 1 :].strip() or None
    else:
        if j < len(s) and s[j] == "(":
            close = s.find(")", j)
            if close < 0:
                return _with_error(s, name_range, "unterminated '('")
            inner_a, inner_b = _strip_range(s, j + 1, close)
            spec_range = (inner_a, inner_b)
            after = close + 1
        else:
            semi = s.find(";", j)
            stop = semi if semi >= 0 else len(s)
            a, b = _strip_range(s, j, stop)
            if a < b:
                spec_range = (a, b)
            after = stop
        semi = s.find(";", after)
        if semi >= 0:
            marker = s[semi + 1 :].strip() or None
    return ReqParts(
        name=s[name_range[0] : name_range[1]],
        name_range=name_range,
        extras=extras,
        spec_text=s[spec_range[0] : spec_range[1]],
        spec_range=spec_range,
        marker=marker,
        url=url,
        range=(i, max(end, name_range[1])),
        error=requirement_error(s),
    )


_OP = r"(?:===|==|!=|~=|<=|>=|<|>)"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
# name, extras, clauses. Every run of whitespace is matched by one ``\s*`` that a non-space token
# must follow (or the end): two ``\s*`` around an optional group that is absent can split one run
# between them in n ways each, and three made a name followed by 2,000 spaces and a letter take
# minutes to refuse (cubic backtracking). The language and the ``spec`` group are the same as
# ``\s*NAME\s*(EXTRAS)?\s*(SPEC)?\s*``'s (tests/unit/test_requirements_linear.py holds them equal).
_SIMPLE_REQUIREMENT = _regex.compile(
    rf"\s*{_NAME}"
    rf"(?:\s*\[(?:\s*{_NAME}(?:\s*,\s*{_NAME})*)?\s*\])?"
    rf"(?:\s*(?P<spec>{_OP}\s*[^\s,;()\[\]]+(?:\s*,\s*{_OP}\s*[^\s,;()\[\]]+)*))?\s*"
)


def requirement_error(s: str) -> str | None:
    """packaging's complaint about a PEP 508 string, or None when it is a valid requirement.

    The common shape (name, extras, clauses; no marker or URL) is checked with SpecifierSet
    alone: ``packaging.requirements`` pulls in markers, tags and platform (~15 ms at start-up)
    and is imported only for the other shapes and for the exact wording of an error.
    """
    # (``===`` takes any text as its version: packaging's requirement grammar and its
    # SpecifierSet cut such a clause differently in some releases (23.0: ``0===, ===``), so a
    # requirement with one is always asked of the grammar itself)
    simple = _SIMPLE_REQUIREMENT.fullmatch(s) if "===" not in s else None
    if simple is not None:
        try:
            SpecifierSet(simple.group("spec") or "")
            return None
        except (InvalidSpecifier, InvalidVersion, ValueError):
            pass
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        Requirement(s.strip())
    except (InvalidRequirement, InvalidSpecifier, InvalidVersion, ValueError) as exc:
        # packaging raises InvalidSpecifier (not InvalidRequirement) for some bad clauses
        return str(exc).splitlines()[0] if str(exc) else "invalid requirement"
    return None


def _with_error(s: str, name_range: tuple[int, int], msg: str) -> ReqParts:
    end = len(s.rstrip())
    return ReqParts(
        s[name_range[0] : name_range[1]], name_range, (), "", (name_range[1], name_range[1]),
        None, None, (name_range[0], end), msg,
    )


def _skip_ws(s: str, i: int) -> int:
    while i < len(s) and s[i].isspace():
        i += 1
    return i


def _strip_range(s: str, a: int, b: int) -> tuple[int, int]:
    while a < b and s[a].isspace():
        a += 1
    while b > a and s[b - 1].isspace():
        b -= 1
    return a, b


@dataclass(frozen=True, slots=True)
class PinDraft:
    pin: Pin | None
    problem: PinProblem | None = None


def pin_from_string(
    s: str,
    where: OffsetMap,
    fallback: Span,
    *,
    group: str | None = None,
    constraint: bool = False,
    override: bool = False,
    hashed: bool = False,
    editable: bool = True,
) -> PinDraft:
    """A Pin for the PEP 508 string ``s`` whose characters sit in the file per ``where``.

    ``fallback`` locates the pin when parts of ``s`` do not map 1:1 onto the file (escapes,
    expanded variables); such pins get no ``spec_span``. ``editable`` False (hashes, compiled
    output) also withholds it.
    """
    parts = scan_requirement(s)
    if parts is None:
        return PinDraft(None, PinProblem(f"not a requirement: {s.strip()[:80]!r}", fallback))
    span = where.cover(*parts.range) or fallback
    name_span = where.span(*parts.name_range) or span
    spec = normalize_spec(parts.spec_text)
    version = sole_version(spec)
    spec_span = where.span(*parts.spec_range) if editable else None
    problem = None
    if parts.url is not None:
        # a direct reference: the file name tells the version, but no specifier to edit
        spec_span = None
        found = version_from_filename(parts.url)
        if found is not None and found[0] == canonical(parts.name):
            version = found[1]
            spec = f"=={version}"
        else:
            version = None
            spec = ""
    elif "$" in parts.spec_text:
        spec_span = None
        version = None
        problem = PinProblem(
            f"the version of {parts.name} comes from an environment variable ({parts.spec_text.strip()}) "
            "and cannot be determined from this file",
            span,
        )
    elif parts.error is not None:
        problem = PinProblem(f"invalid requirement {s.strip()!r}: {parts.error}", span)
        if not parts.spec_text or not valid_specifier(spec):
            # keep the pin only when its specifier is what is wrong; then it still locates
            if not parts.spec_text or parts.spec_text[:1] not in "=<>!~":
                return PinDraft(None, problem)
    pin = Pin(
        name=canonical(parts.name),
        written_name=Located(parts.name, name_span),
        specifier=spec,
        version=version,
        span=span,
        spec_span=spec_span,
        extras=parts.extras,
        marker=parts.marker,
        group=group,
        hashed=hashed,
        override=override,
        constraint=constraint,
    )
    return PinDraft(pin, problem)


YAML_MAX_FLOW_DEPTH = 100


def yaml_flow_too_deep(text: str, limit: int = YAML_MAX_FLOW_DEPTH) -> int | None:
    """Offset where ``[``/``{`` (outside quotes and comments) first nest ``limit`` deep, else None.

    PyYAML's pure-Python scanner is quadratic in flow nesting (it re-checks every open level's
    possible simple key per token): a 5,000-deep ``[[[...`` takes it ~10 s before its composer
    overflows the stack. No lockfile nests like that, so such text is refused up front."""
    if text.count("[") + text.count("{") < limit:
        return None
    depth, i, n, quote = 0, 0, len(text), ""
    while i < n:
        c = text[i]
        if quote:
            if quote == '"' and c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "#" and (i == 0 or text[i - 1] in " \t\r\n"):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif c in "[{":
            depth += 1
            if depth >= limit:
                return i
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return None


def failed_source(path: Path, fmt: PinFormat, message: str, *, is_lock: bool = False) -> PinSource:
    return PinSource(path, fmt, is_lock, (), problems=(PinProblem(message, Span(0, 0)),))


def parse_toml(source: SourceText) -> dict[str, Any] | PinProblem:
    """A TOML pin file's tables, or its syntax problem (as ``syntax/toml.py`` words and places it)."""
    from kimi_lsp.syntax import SyntaxProblem
    from kimi_lsp.syntax.toml import parse  # lazily: a YAML-only run never loads tomllib

    data = parse(source.text)
    if isinstance(data, SyntaxProblem):
        return PinProblem(f"{source.path.name}: {data.message}", data.span)
    return data
