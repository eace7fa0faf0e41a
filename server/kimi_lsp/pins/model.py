"""What every dependency-pin reader produces: located requirements of one file."""
from __future__ import annotations

from pathlib import Path

from kimi_lsp._record import StrEnum, dataclass, field, str_enum
from kimi_lsp.text import Located, Span

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any


@dataclass(frozen=True, slots=True)
class Pin:
    """One requirement or locked package entry for one distribution."""

    name: str  # canonical PEP 503 name, e.g. "flashinfer-python"
    written_name: Located[str]  # as written in the file ("flashinfer_python", "Flashinfer.Python")
    specifier: str  # PEP 440 specifier as written, whitespace removed ("==0.6.16.post4", ">=0.6.10,<0.7"); "" = any
    version: str | None  # the exact version: a lock's version, or the version of a sole ``==``/``===`` clause
    span: Span  # the whole requirement / package entry (where ``related`` points)
    # Text span that a bump replaces (the specifier or the version string, without quotes);
    # None when no safe text edit exists here (lockfiles, hashed requirements, URLs, ${VAR}).
    spec_span: Span | None
    extras: tuple[str, ...] = ()
    marker: str | None = None
    group: str | None = None  # optional extra / dependency group / Pipfile category; None = main
    hashed: bool = False  # pinned with --hash (compiled output): never edit the text
    override: bool = False  # uv override-dependencies / pdm resolution.overrides: replaces others
    constraint: bool = False  # constraints file / [tool.uv] constraint-dependencies: intersects
    # How the spec is written when it is not PEP 440 (poetry "^0.6.10"), for messages and edits.
    native_spec: str | None = None


@dataclass(frozen=True, slots=True)
class PinProblem:
    message: str
    span: Span


@str_enum
class PinFormat(StrEnum):
    """The kind of file a ``PinSource`` was read from: which reader, and what a pin there means."""

    REQUIREMENTS = "requirements"
    CONSTRAINTS = "constraints"
    PYPROJECT = "pyproject"
    UV_LOCK = "uv.lock"
    POETRY_LOCK = "poetry.lock"
    PDM_LOCK = "pdm.lock"
    PIPFILE = "Pipfile"
    PIPFILE_LOCK = "Pipfile.lock"
    PYLOCK = "pylock"
    ENVIRONMENT_YML = "environment.yml"
    CONDA_LOCK = "conda-lock"
    DOCKERFILE = "dockerfile"  # the RUN pip install lines of a Dockerfile
    SHELL = "shell"  # the pip install lines of a shell script
    IMAGE = "image"  # an official sglang image's own pins (release.image_pin_source)


# PinSource.format of every lock pins/locks.py reads (here, so that asking whether a file is a lock
# loads no lock reader).
LOCK_FORMATS = (PinFormat.UV_LOCK, PinFormat.POETRY_LOCK, PinFormat.PDM_LOCK, PinFormat.PIPFILE_LOCK, PinFormat.PYLOCK,
                PinFormat.CONDA_LOCK)


@dataclass(frozen=True, slots=True)
class PinSource:
    """One file's pins."""

    path: Path
    format: PinFormat
    is_lock: bool
    pins: tuple[Pin, ...]
    tool: str | None = None  # uv, poetry, pdm, pipenv, pip-tools, pip, conda
    # Command that regenerates this lock after its manifest changed, with ``{name}`` for the
    # package, e.g. "uv lock --upgrade-package {name}". None for manifests.
    relock_command: str | None = None
    problems: tuple[PinProblem, ...] = ()
    # Files this one includes (-r/-c) that were read as part of it.
    includes: tuple[Path, ...] = ()
    # ``pins`` by name, made on the first ``pins_for`` (not part of the value: never compared)
    _by_name: dict[str, tuple[Pin, ...]] | None = field(default=None, init=False, repr=False, compare=False)
    # Where the pins come from when they are made on demand (``on_demand``); None when given
    _lazy: LazyPins | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def on_demand(cls, path: Path, format: PinFormat, is_lock: bool, pins: LazyPins,  # noqa: A002
                  tool: str | None = None, relock_command: str | None = None,
                  problems: tuple[PinProblem, ...] = ()) -> PinSource:
        """A source whose pins are made when asked for: ``pins_for`` makes those of one name,
        and the first read of ``pins`` (comparing, printing or pickling the source reads it too)
        makes them all. The value is the same as if ``pins`` had been given."""
        source = _OnDemand(path, format, is_lock, (), tool=tool, relock_command=relock_command, problems=problems)
        _PINS_SLOT.__delete__(source)  # unset: the first read of ``pins`` makes them
        object.__setattr__(source, "_lazy", pins)
        return source

    def pins_for(self, name: str) -> tuple[Pin, ...]:
        """The pins of ``name`` in file order (asked for every launch: a lock of 200 packages is
        indexed by name once)."""
        index = self._by_name
        if index is None:
            lazy = self._lazy
            if lazy is not None:
                return lazy.for_name(name)
            grouped: dict[str, list[Pin]] = {}
            for p in self.pins:
                grouped.setdefault(p.name, []).append(p)
            index = {k: tuple(v) for k, v in grouped.items()}
            object.__setattr__(self, "_by_name", index)
        return index.get(name, ())


_PINS_SLOT: Any = PinSource.__dict__["pins"]  # the slot's own descriptor (the record's generated class)


class _OnDemand(PinSource):
    """A ``PinSource.on_demand`` source: a ``PinSource`` whose ``pins`` slot is filled on its first
    read. Only ``pins`` is a property here; every other attribute is the plain slot (a
    ``__getattr__`` on PinSource itself would slow every attribute read of every source)."""

    __slots__ = ()
    __qualname__ = "PinSource"  # (its repr is a PinSource's)

    if not TYPE_CHECKING:  # (for mypy, ``pins`` stays PinSource's field)

        @property
        def pins(self) -> tuple[Pin, ...]:
            try:
                return _PINS_SLOT.__get__(self, PinSource)  # type: ignore[no-any-return]
            except AttributeError:
                lazy = self._lazy
                if lazy is None:
                    raise
                made = lazy.all()
                _PINS_SLOT.__set__(self, made)
                return made

    def __eq__(self, other: object) -> bool:
        # the same value as the PinSource given these pins (the record's own __eq__ compares
        # sources of one class only)
        if isinstance(other, PinSource):
            key = PinSource.__record_cmp__  # type: ignore[attr-defined]
            return key(self) == key(other)  # type: ignore[no-any-return]
        return NotImplemented

    __hash__ = PinSource.__hash__

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (and copied) as the PinSource given its made pins (``make`` may be a closure
        over the file's text)."""
        return (PinSource, (self.path, self.format, self.is_lock, self.pins, self.tool, self.relock_command,
                            self.problems, self.includes))


class LazyPins:
    """The pins of a file that was read in full, each made when first asked for (a 359 KB
    uv.lock has ~200 entries, of which a launch asks for a handful: sglang, flashinfer and its
    companions). ``names`` holds each entry's canonical name in file order; ``make(i)`` makes
    the pin of entry ``i``. A pin is made once: ``for_name`` and ``all`` give the same objects."""

    __slots__ = ("_names", "_make", "_made", "_index")

    def __init__(self, names: Sequence[str], make: Callable[[int], Pin]) -> None:
        self._names = names
        self._make = make
        self._made: dict[int, Pin] = {}
        self._index: dict[str, list[int]] | None = None

    def _pin(self, i: int) -> Pin:
        pin = self._made.get(i)
        if pin is None:  # (setdefault: two threads asking at once get the same pin)
            pin = self._made.setdefault(i, self._make(i))
        return pin

    def for_name(self, name: str) -> tuple[Pin, ...]:
        index = self._index
        if index is None:
            index = {}
            for i, n in enumerate(self._names):
                index.setdefault(n, []).append(i)
            self._index = index
        return tuple(self._pin(i) for i in index.get(name, ()))

    def all(self) -> tuple[Pin, ...]:
        return tuple(self._pin(i) for i in range(len(self._names)))
