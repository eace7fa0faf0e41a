"""Diagnostics and fixes as plain data, shared by the CLI and the language server.

A fix is data (ruff's model): a title, the edits, and how safe applying it is. Edits may target
another file than the diagnostic (the flashinfer bump edits the pin file, not the launch file).
"""
from __future__ import annotations

from pathlib import Path

from kimi_lsp._record import StrEnum, dataclass, field, str_enum
from kimi_lsp.text import Span

TYPE_CHECKING = False  # typing itself is not imported: see _record.py

if TYPE_CHECKING:
    # The wire form below: builtins only (path, start, end, ...), what marshal can store.
    LocWire = tuple[str, int, int]
    EditWire = tuple[str, int, int, str]
    FixWire = tuple[str, tuple[EditWire, ...], str, str | None]
    DiagnosticWire = tuple[
        str, str, LocWire, str, tuple[FixWire, ...], tuple[tuple[LocWire, str], ...], dict[str, object]
    ]


@str_enum
class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]


@str_enum
class Applicability(StrEnum):
    SAFE = "safe"  # applied by --fix and source.fixAll
    UNSAFE = "unsafe"  # opt-in: may change what the launch does
    DISPLAY_ONLY = "display-only"  # a suggestion, never applied automatically


@dataclass(frozen=True, slots=True)
class Location:
    path: Path  # absolute
    span: Span


@dataclass(frozen=True, slots=True)
class Edit:
    path: Path  # absolute; may differ from the diagnostic's file
    span: Span  # code-point offsets in that file's current text
    new_text: str


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    applicability: Applicability
    # What the user must run after applying (e.g. a re-lock command), or None.
    followup: str | None = None


@dataclass(frozen=True, slots=True)
class Related:
    location: Location
    message: str


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str
    location: Location
    severity: Severity
    fixes: tuple[Fix, ...] = ()
    related: tuple[Related, ...] = ()
    # Extra machine-readable facts for hovers and reporters (never needed for correctness).
    data: dict[str, object] = field(default_factory=dict, compare=False, hash=False)

    @property
    def path(self) -> Path:
        return self.location.path

    def sort_key(self) -> tuple[str, int, str]:
        return (str(self.location.path), self.location.span.start, self.code)


# -- a compact form of builtins, for the --check result cache (marshal) ------------------------


def _loc_wire(loc: Location) -> LocWire:
    return (str(loc.path), loc.span.start, loc.span.end)


def _loc_from(w: LocWire) -> Location:
    return Location(Path(w[0]), Span(w[1], w[2]))


def to_wire(d: Diagnostic) -> DiagnosticWire:
    fixes = tuple(
        (f.title, tuple((str(e.path), e.span.start, e.span.end, e.new_text) for e in f.edits), f.applicability.value, f.followup)
        for f in d.fixes
    )
    related = tuple((_loc_wire(r.location), r.message) for r in d.related)
    return (d.code, d.message, _loc_wire(d.location), d.severity.value, fixes, related, d.data)


def from_wire(w: DiagnosticWire) -> Diagnostic:
    code, message, loc, severity, fixes, related, data = w
    return Diagnostic(
        code=code,
        message=message,
        location=_loc_from(loc),
        severity=Severity(severity),
        fixes=tuple(
            Fix(title, tuple(Edit(Path(p), Span(a, b), t) for p, a, b, t in edits), Applicability(app), followup)
            for title, edits, app, followup in fixes
        ),
        related=tuple(Related(_loc_from(loc), m) for loc, m in related),
        data=data,
    )
