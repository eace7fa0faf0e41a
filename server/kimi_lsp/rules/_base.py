"""Rule metadata and the context a rule's ``check`` receives.

A rule is one module: metadata in the ``@rule`` decorator, documentation in the docstring,
logic in a generator of ``Violation``s. The engine, not the rule, stamps the final severity,
applies select/ignore and suppressions.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

from kimi_lsp._record import StrEnum, dataclass, field, str_enum
from kimi_lsp.diagnostics import Fix, Location, Related, Severity

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import TypeVar

    from kimi_lsp.config import Settings
    from kimi_lsp.launch import ArgUse, ResolvedLaunch
    from kimi_lsp.pins.discovery import Governing
    from kimi_lsp.workspace import SourceText, Workspace

    _T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Violation:
    location: Location
    message: str
    fixes: tuple[Fix, ...] = ()
    related: tuple[Related, ...] = ()
    severity: Severity | None = None  # None: the rule's default
    data: dict[str, object] | None = None


@str_enum
class FixAvailability(StrEnum):
    """Whether the rule's diagnostics carry a fix (ruff's "Fix is always/sometimes available")."""

    ALWAYS = "always"
    SOMETIMES = "sometimes"
    NEVER = "never"


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    default_severity: Severity
    docstring: str = field(repr=False)  # as written; ``doc`` and ``summary`` are read from it
    fix: FixAvailability
    check: Callable[..., Iterator[Violation]] = field(repr=False)

    # Cleaned only when asked for (`explain`, `rules`, SARIF, the catalogue, hover): a lint never
    # reads them, and cleaning 55 docstrings is ~0.4 ms of a one-file check's start-up.
    @property
    def doc(self) -> str:
        """The whole docstring (markdown), indentation removed."""
        got: str | None = self.__dict__.get("_doc")
        if got is None:
            got = self.__dict__["_doc"] = _cleandoc(self.docstring)
        return got

    @property
    def summary(self) -> str:
        """One line: the docstring's first paragraph."""
        return self.doc.split("\n\n", 1)[0].replace("\n", " ").strip()


def rule(
    *, code: str, name: str, severity: Severity, fix: FixAvailability = FixAvailability.NEVER,
    whole_launch: bool = False,
) -> Callable[[Callable[..., Iterator[Violation]]], Rule]:
    """Register a rule. ``whole_launch``: the check reads arguments together (cross-argument
    and override checks). When argparse exits at an ambiguous option or a missing or explicit
    value, the check reads the launch without that word (what sglang checks once it is fixed),
    and says nothing when it asks for an option the word may set (``_after_whole_parse``)."""

    def wrap(fn: Callable[..., Iterator[Violation]]) -> Rule:
        return Rule(code, name, severity, fn.__doc__ or "", fix, _after_whole_parse(fn) if whole_launch else fn)

    return wrap


def fatal_parse(launch: ResolvedLaunch) -> bool:
    """argparse exits at an ambiguous option or a missing or explicit value: sglang never gets
    past parsing (the replay reads on without the word, ``launch.parse_words``)."""
    hit = launch.__dict__.get("_fatal_parse")
    if hit is None:  # asked by every whole-launch rule: once per launch
        from kimi_lsp.launch import ArgProblemKind

        fatal = (ArgProblemKind.AMBIGUOUS, ArgProblemKind.MISSING_VALUE, ArgProblemKind.EXPLICIT_VALUE)
        hit = launch.__dict__["_fatal_parse"] = any(p.kind in fatal for p in launch.problems)
    return bool(hit)


def unsettled_dests(launch: ResolvedLaunch) -> frozenset[str] | None:
    """The options whose value the words argparse exits at leave open: every option an ambiguous
    prefix could expand to, the option written without its value or with one it takes none of.
    None when the parse has no such word, or when one cannot be told (fail closed: the caller
    then reads nothing of the launch)."""
    if not fatal_parse(launch):
        return None
    got = launch.__dict__.get("_unsettled")
    if got is None:
        from kimi_lsp.launch import ArgProblemKind, field_name

        dests: set[str] = set()
        for p in launch.problems:
            if p.kind is ArgProblemKind.AMBIGUOUS:
                flags = [launch.schema.exact(c) for c in p.candidates]
                if not flags or any(f is None for f in flags):
                    dests.add(_ANY)
                # rules ask by argparse's dest or the ServerArgs field (`tp_size`: up to 0.5.13
                # argparse's is `tensor_parallel_size`)
                dests.update(name for f in flags if f is not None for name in (f.dest, field_name(f)))
            elif p.kind in (ArgProblemKind.MISSING_VALUE, ArgProblemKind.EXPLICIT_VALUE):
                dests.update((p.flag.dest, field_name(p.flag)) if p.flag is not None else (_ANY,))
        got = launch.__dict__["_unsettled"] = frozenset(dests)
    return got


_ANY = "\0any"  # an unsettled word whose options are unknown: every read depends on it


def _after_whole_parse(fn: Callable[..., Iterator[Violation]]) -> Callable[..., Iterator[Violation]]:
    def check(ctx: LaunchContext) -> Iterator[Violation]:
        unsettled = unsettled_dests(ctx.launch)
        if unsettled is None:
            return fn(ctx)
        if _ANY in unsettled:
            return iter(())
        return iter(_unless_it_reads(fn, ctx, unsettled))

    check.__doc__ = fn.__doc__
    return check


def _unless_it_reads(fn: Callable[..., Iterator[Violation]], ctx: LaunchContext,
                     unsettled: frozenset[str]) -> list[Violation]:
    """``fn``'s violations on the launch read past the words argparse exits at, or none when it
    asked for an option one of them may set: its answer would depend on that word. The rule
    runs on a view of the launch that notes each option asked for, with a memo of its own (a
    value another rule memoised would hide the reads that made it)."""
    reads: set[str] = set()
    view = _reading_view(ctx.launch, reads)
    own = LaunchContext(view, ctx.workspace, ctx.settings, ctx.source, _governing_fn=lambda: ctx.governing,
                        cache={_VETTING: True} if is_vetting(ctx) else {}, beyond_schema=ctx.beyond_schema)
    found = list(fn(own))
    return [] if reads & unsettled else found


def _reading_view(launch: ResolvedLaunch, reads: set[str]) -> ResolvedLaunch:
    """The same launch, noting in ``reads`` each option a rule asks for (every question about an
    option goes through ``ResolvedLaunch.last``: ``value`` and ``is_set`` ask it too)."""
    from kimi_lsp.launch import ResolvedLaunch as _Launch

    class _Reading(_Launch):
        def last(self, dest: str) -> ArgUse | None:
            reads.add(dest)
            return super().last(dest)

    view = object.__new__(_Reading)
    view.__dict__.update(launch.__dict__)  # the record's fields (frozen: set past __setattr__)
    return view


_VETTING = "_vetting"  # LaunchContext.cache key: this context is a vetting re-lint (rules/_vet.py)


def unvetted() -> dict[str, object]:
    """A ``LaunchContext.cache`` whose fixes are not vetted: for a run whose diagnostics are
    only compared with another run's (where they sit), never shown or applied."""
    return {_VETTING: True}


def is_vetting(ctx: LaunchContext) -> bool:
    return bool(ctx.cache.get(_VETTING))


@dataclass
class LaunchContext:
    """Everything a launch-scoped rule may look at. Built once per launch by the engine."""

    launch: ResolvedLaunch
    workspace: Workspace
    settings: Settings
    source: SourceText  # the file the launch is written in
    _governing: Governing | None = None
    _governing_fn: Callable[[], Governing] | None = None
    cache: dict[str, object] = field(default_factory=dict)
    # The launch may run code newer than ``launch.schema`` (sglang's main, a release after every
    # shipped schema): an option or choice unlike every known one may be new there, not a mistake.
    beyond_schema: bool = False

    @property
    def governing(self) -> Governing:
        if self._governing is None:
            assert self._governing_fn is not None
            self._governing = self._governing_fn()
        return self._governing

    def memo(self, key: str, fn: Callable[[], _T]) -> _T:
        if key not in self.cache:
            self.cache[key] = fn()
        return self.cache[key]  # type: ignore[return-value]  # what fn() made under this key


def _cleandoc(doc: str) -> str:
    """inspect.cleandoc without importing inspect at start-up (via dataclasses it is there anyway
    today; this keeps rules from adding to it)."""
    lines = doc.expandtabs().split("\n")
    indents = [len(ln) - len(ln.lstrip()) for ln in lines[1:] if ln.lstrip()]
    margin = min(indents) if indents else 0
    lines = [lines[0].lstrip()] + [ln[margin:] for ln in lines[1:]]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)
