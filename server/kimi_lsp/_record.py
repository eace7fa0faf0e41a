"""A start-up-cheap stand-in for the part of :mod:`dataclasses` kimi-lsp uses.

``kimi-lsp --check FILE`` runs once per pre-commit invocation, so import time is most of what a
user waits for. The standard decorator costs about 1 ms per class (several ``exec`` calls, a second
class object for ``slots=True``, ``inspect.signature`` for the docstring) plus ~8 ms to import
``dataclasses`` and ``inspect``; the ~60 records on the ``--check`` path made that the largest
single cost of a cold run. This module generates the same methods with one ``exec`` per class
(~0.2 ms) and imports nothing heavy.

Supported, with the standard semantics: ``frozen``, ``slots``, ``eq``, ``order``, ``repr``,
defaults, ``field(default=, default_factory=, init=, repr=, compare=, hash=)``, ``__post_init__``,
``ClassVar`` annotations (skipped), inheritance from other records, pickling, and methods the
class defines itself (never overwritten). ``replace`` and ``fields`` work as their namesakes.
Not supported (and not used): ``kw_only``, ``InitVar``, ``match_args``, ``unsafe_hash``.

Type checkers see :func:`dataclasses.dataclass` itself (``TYPE_CHECKING`` below), so annotations
and generated signatures are checked exactly as before.

Two more helpers live here: ``MadeOnRead``, a mapping whose values are made as they are read,
and ``str_enum``, which makes a ``(str, Enum)`` class from a body mypy reads as one.
"""
from __future__ import annotations

import enum
import os
from collections.abc import Iterator, Mapping
from operator import attrgetter

from kimi_lsp._kept import Kept

# The modules a result-cache hit loads (this one, text, diagnostics, workspace, cache, cli.main,
# cli.check, cli.output) do not import typing at run time: it costs about a tenth of a whole hit
# (~2.5 ms). mypy reads a module-level ``TYPE_CHECKING`` as true whatever its value, so the names
# it needs are imported under ``if TYPE_CHECKING:`` exactly as with typing.TYPE_CHECKING.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar

    _K = TypeVar("_K")
    _R = TypeVar("_R")
    _V = TypeVar("_V")
else:  # TypeVars for mypy only: collections.abc's generics take any argument at run time
    _K, _R, _V = "_K", "_R", "_V"

__all__ = ["FrozenInstanceError", "KeptOnRead", "MadeOnRead", "StrEnum", "dataclass", "field", "fields", "replace", "str_enum"]


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a frozen record (same role as dataclasses.FrozenInstanceError)."""


_MISSING: Any = type("_MISSING", (), {"__repr__": lambda self: "MISSING"})()


class Field:
    __slots__ = ("name", "default", "default_factory", "init", "repr", "compare", "hash")

    def __init__(self, default: Any = _MISSING, default_factory: Any = _MISSING, init: bool = True,
                 repr: bool = True, compare: bool = True, hash: bool | None = None) -> None:  # noqa: A002
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare
        self.hash = hash

    def __repr__(self) -> str:
        return f"Field(name={self.name!r})"


def _field(*, default: Any = _MISSING, default_factory: Any = _MISSING, init: bool = True,
           repr: bool = True, compare: bool = True, hash: bool | None = None) -> Any:  # noqa: A002
    return Field(default, default_factory, init, repr, compare, hash)


def _is_classvar(annotation: object) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return getattr(annotation, "__origin__", None) is not None and "ClassVar" in repr(annotation)


def _collect(cls: type) -> list[Field]:
    by_name: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in getattr(base, "__record_fields__", ()):
            by_name[f.name] = f
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        value = cls.__dict__.get(name, _MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        f.name = name
        by_name[name] = f
    return list(by_name.values())


# Only ``__init__`` is generated per class (its signature and its speed matter: records are made
# by the million in a large run). Compiling it is most of what a record costs at start-up, so its
# code object is kept across runs (_kept.py), keyed by the class's shape: everything the source is
# made from (each field's name and options, the decorator's flags), in a file that says which
# generator made it (this module's size and mtime: ``_source`` lives here) and which interpreter
# (``_kept``: its version and magic number), so an entry is never another generator's or another
# bytecode's. The other methods are shared functions that read the
# class's own field getters (``operator.attrgetter``, C code): decoding and binding a dozen
# generated methods per class was ~40 us of each record's ~50 us at start-up.
def _generator() -> object:
    """What made the kept code objects: this module as it is on disk (None under a zipapp: the
    module is no file, its code objects are made each run)."""
    try:
        st = os.stat(__file__)
    except (OSError, TypeError, ValueError):
        return None
    return ("_record", st.st_size, st.st_mtime_ns)


_GENERATOR = _generator()
_codes = Kept("_record_init", _GENERATOR, bytecode=True)

_OWN_METHODS = ("__repr__", "__eq__", "__lt__", "__le__", "__gt__", "__ge__")


def _source(flds: list[Field], own: Any, frozen: bool, slots: bool, eq: bool, order: bool, want_repr: bool,
            explicit_hash: bool, post_init: bool, direct: bool) -> str:
    """The generated ``__init__``'s source (it depends on nothing but the arguments: the class's
    shape)."""
    params, body = ["self"], []
    if direct:
        body.append("  _d = self.__dict__")
    seen_default = False
    for f in flds:
        value_src = f.name
        if f.default_factory is not _MISSING:
            if f.init:
                params.append(f"{f.name}=_MISSING")
                value_src = f"_factory_{f.name}() if {f.name} is _MISSING else {f.name}"
            else:
                value_src = f"_factory_{f.name}()"
            seen_default = True
        elif f.init:
            if f.default is not _MISSING:
                params.append(f"{f.name}=_default_{f.name}")
                seen_default = True
            elif seen_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
            else:
                params.append(f.name)
        elif f.default is not _MISSING:
            value_src = f"_default_{f.name}"
        else:
            continue  # init=False without a default: left unset, as dataclasses does
        if frozen and slots:  # the slot's own setter: skips __setattr__'s lookup (hot: Span, Token)
            body.append(f"  _slot_{f.name}(self, {value_src})")
        elif frozen and direct:  # the instance dict itself: what object.__setattr__ would write
            body.append(f"  _d[{f.name!r}] = {value_src}")
        elif frozen:
            body.append(f"  _set(self, {f.name!r}, {value_src})")
        else:
            body.append(f"  self.{f.name} = {value_src}")
    if post_init:
        body.append("  self.__post_init__()")
    return f"def __init__({', '.join(params)}):\n" + ("\n".join(body) or "  pass") + "\n"


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of an instance's ``names`` (as the tuples dataclasses compares and hashes)."""
    if len(names) >= 2:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


# The shared methods. Each reads its class's getters (set by _build) through ``__class__``: a
# record subclass has its own, a plain subclass its record parent's (as generated code had).
def _repr(self: Any) -> str:
    cls = self.__class__
    shown = ", ".join(f"{name}={value!r}" for name, value in zip(cls.__record_repr_names__, cls.__record_repr__(self)))
    return f"{cls.__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        key = self.__class__.__record_cmp__
        return key(self) == key(other)
    return NotImplemented


def _lt(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        key = self.__class__.__record_cmp__
        return key(self) < key(other)
    return NotImplemented


def _le(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        key = self.__class__.__record_cmp__
        return key(self) <= key(other)
    return NotImplemented


def _gt(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        key = self.__class__.__record_cmp__
        return key(self) > key(other)
    return NotImplemented


def _ge(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        key = self.__class__.__record_cmp__
        return key(self) >= key(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self.__class__.__record_hash__(self))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> tuple[Any, ...]:
    return self.__class__.__record_state__(self)  # type: ignore[no-any-return]


def _setstate(self: Any, state: tuple[Any, ...]) -> None:
    for name, value in zip(self.__class__.__record_names__, state):
        object.__setattr__(self, name, value)


_ORDER = (("__lt__", _lt), ("__le__", _le), ("__gt__", _gt), ("__ge__", _ge))


def _build(cls: type, frozen: bool, slots: bool, eq: bool, order: bool, want_repr: bool) -> type:
    flds = _collect(cls)
    own = cls.__dict__
    # A frozen record without slots writes its fields into the instance dict in one go (~2x
    # faster than object.__setattr__ per field: 530 flags a schema), unless a field's name is a
    # data descriptor somewhere in the class's MRO, which object.__setattr__ would call instead.
    direct = frozen and not slots and not any(
        hasattr(type(getattr(cls, f.name, None)), "__set__") for f in flds)
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    post_init = hasattr(cls, "__post_init__")
    shape = (tuple((f.name, f.default is not _MISSING, f.default_factory is not _MISSING, f.init) for f in flds),
             frozen, slots, direct, post_init)
    ns: dict[str, Any] = {"_MISSING": _MISSING, "_set": object.__setattr__}
    for f in flds:
        if f.default_factory is not _MISSING:
            ns[f"_factory_{f.name}"] = f.default_factory
        elif f.default is not _MISSING:
            ns[f"_default_{f.name}"] = f.default
    code = _codes.get(shape)
    if code is None:
        code = compile(_source(flds, own, frozen, slots, eq, order, want_repr, explicit_hash, post_init, direct),
                       "<kimi_lsp._record>", "exec")
        _codes.put(shape, code)
    names = [f.name for f in flds]
    exec(code, ns)  # noqa: S102 - source built by _source from the class's own field names

    methods: dict[str, Any] = {"__init__": ns["__init__"]}
    if want_repr and "__repr__" not in own:
        methods["__repr__"] = _repr
    if eq and "__eq__" not in own:
        methods["__eq__"] = _eq
    if order:
        for op, fn in _ORDER:
            if op not in own:
                methods[op] = fn
    if eq and frozen and not explicit_hash:
        methods["__hash__"] = _hash
    if frozen:
        methods["__setattr__"] = _frozen_setattr
        methods["__delattr__"] = _frozen_delattr
    if slots:
        methods["__getstate__"] = _getstate
        methods["__setstate__"] = _setstate
        body_dict = {k: v for k, v in own.items() if k not in names and k not in ("__dict__", "__weakref__")}
        inherited = {s for base in cls.__mro__[1:] for s in getattr(base, "__slots__", ())}
        body_dict["__slots__"] = tuple(n for n in names if n not in inherited)
        body_dict.update(methods)
        cls = type(cls)(cls.__name__, cls.__bases__, body_dict)
        if frozen:  # the generated __init__ finds these in its globals when it runs
            for n in names:
                ns[f"_slot_{n}"] = getattr(cls, n).__set__
    else:
        for f in flds:  # a Field() left as the class attribute would shadow nothing useful
            if isinstance(own.get(f.name), Field):
                if f.default is _MISSING:
                    delattr(cls, f.name)
                else:
                    setattr(cls, f.name, f.default)
        for name, fn in methods.items():
            setattr(cls, name, fn)
    ns["__init__"].__qualname__ = f"{cls.__qualname__}.__init__"
    if eq and not frozen and not explicit_hash:
        cls.__hash__ = None  # type: ignore[assignment]  # mutable and compared by value: unhashable
    cls.__record_fields__ = tuple(flds)  # type: ignore[attr-defined]  # the record's own bookkeeping (fields, replace)
    cls.__record_names__ = tuple(names)  # type: ignore[attr-defined]
    cls.__record_state__ = _getter(names)  # type: ignore[attr-defined]
    cls.__record_cmp__ = _getter([f.name for f in flds if f.compare])  # type: ignore[attr-defined]
    cls.__record_hash__ = _getter([f.name for f in flds if (f.compare if f.hash is None else f.hash)])  # type: ignore[attr-defined]
    repr_names = [f.name for f in flds if f.repr]
    cls.__record_repr_names__ = tuple(repr_names)  # type: ignore[attr-defined]
    cls.__record_repr__ = _getter(repr_names)  # type: ignore[attr-defined]
    return cls


def _dataclass(cls: type | None = None, /, *, frozen: bool = False, slots: bool = False, eq: bool = True,
               order: bool = False, repr: bool = True) -> Any:  # noqa: A002
    def wrap(c: type) -> type:
        return _build(c, frozen, slots, eq, order, repr)

    return wrap if cls is None else wrap(cls)


def _fields(obj: Any) -> tuple[Field, ...]:
    flds: tuple[Field, ...] = obj.__record_fields__
    return flds


def _replace(obj: Any, /, **changes: Any) -> Any:
    flds = obj.__record_fields__
    for f in flds:
        if not f.init and f.name in changes:
            raise ValueError(f"field {f.name!r} is declared with init=False and cannot be replaced")
    kwargs = {f.name: getattr(obj, f.name) for f in flds if f.init and f.name not in changes}
    kwargs.update(changes)
    return obj.__class__(**kwargs)


class MadeOnRead(Mapping[_K, _V]):
    """A read-only mapping whose values are made as they are read, ``make(raw[key])``: for tables
    a run reads a few entries of (a kept schema's ~530 flags, a lock's thousands of TOML
    positions). ``make`` may remember what it made; this mapping does not."""

    __slots__ = ("_make", "_raw")

    def __init__(self, raw: Mapping[_K, _R], make: Callable[[_R], _V]) -> None:
        self._raw = raw
        self._make = make

    def __getitem__(self, key: _K) -> _V:
        return self._make(self._raw[key])

    def get(self, key: _K, default: Any = None) -> Any:
        raw = self._raw.get(key, _MISSING)
        return default if raw is _MISSING else self._make(raw)

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def __iter__(self) -> Iterator[_K]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


class KeptOnRead(MadeOnRead[_K, _V]):
    """A ``MadeOnRead`` that keeps what it made by key, for tables a run reads the same entries
    of again and again (a schema's flags: ~60 looked up, hundreds of times over a large run): a
    second read is one dict lookup."""

    __slots__ = ("_kept",)

    def __init__(self, raw: Mapping[_K, _R], make: Callable[[_R], _V]) -> None:
        super().__init__(raw, make)
        self._kept: dict[_K, _V] = {}

    def __getitem__(self, key: _K) -> _V:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value  # type: ignore[no-any-return]

    def get(self, key: _K, default: Any = None) -> Any:
        value = self._kept.get(key, _MISSING)
        if value is _MISSING:
            raw = self._raw.get(key, _MISSING)
            if raw is _MISSING:
                return default
            value = self._kept.setdefault(key, self._make(raw))
        return value


# -- (str, Enum) classes -------------------------------------------------------------------
#
# Written as
#
#     @str_enum
#     class Severity(StrEnum):
#         ERROR = "error"
#
# (``StrEnum`` here is ``(str, Enum)``, not 3.11's ``enum.StrEnum``, whose ``str()`` is the value)
# it is for mypy a ``(str, Enum)`` class (``StrEnum`` is one under TYPE_CHECKING) and at run time
# the ``(str, enum.Enum)`` class the class statement makes (EnumMeta itself: members, values,
# lookups, repr, str, format, pickling and methods are the class statement's; tests/unit/
# test_record.py holds them to it). It was made by CPython's private ``enum._simple_enum`` once:
# that bought ~0.7 ms a run (3.3 M instructions) and leaned on an interpreter internal, so it went.

if TYPE_CHECKING:

    class StrEnum(str, enum.Enum):
        """The base of a ``@str_enum`` class, as type checkers see it."""

    def str_enum(cls: _K) -> _K: ...
else:

    class StrEnum(str):
        """The base of a ``@str_enum`` class at run time: only the holder of its body."""

        __slots__ = ()

    def str_enum(holder: type) -> type:
        """The ``(str, enum.Enum)`` class ``holder``'s body describes, made by EnumMeta."""
        if not issubclass(holder, StrEnum):
            raise TypeError(f"@str_enum class {holder.__name__} must derive from StrEnum")
        body = enum.EnumMeta.__prepare__(holder.__name__, (str, enum.Enum))
        for name, value in holder.__dict__.items():
            if name not in ("__dict__", "__weakref__"):
                body[name] = value
        body["__qualname__"] = holder.__qualname__
        return enum.EnumMeta(holder.__name__, (str, enum.Enum), body)


if TYPE_CHECKING:
    from dataclasses import dataclass, field, fields, replace
else:
    dataclass: Callable[..., Any] = _dataclass
    field = _field
    fields = _fields
    replace = _replace
