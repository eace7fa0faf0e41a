"""kimi_lsp._record behaves like the dataclasses features it replaces (cheap start-up, same semantics)."""
from __future__ import annotations

import copy
import dataclasses
import pickle
from pathlib import Path
from typing import ClassVar, Generic, TypeVar

import pytest
from kimi_lsp import _record
from kimi_lsp._record import FrozenInstanceError, dataclass, field, fields, replace

T = TypeVar("T")


@dataclass(frozen=True, slots=True, order=True)
class Point:
    """A doc."""

    x: int
    y: int = 0
    LIMIT: ClassVar[int] = 10

    def __post_init__(self) -> None:
        if self.x < 0:
            raise ValueError("negative")

    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)


@dataclass
class Bag:
    name: str
    items: list[int] = field(default_factory=list)
    note: str = field(default="", compare=False, repr=False)
    cache: dict[str, int] = field(default_factory=dict, init=False)


@dataclass(frozen=True)
class Base:
    a: int


@dataclass(frozen=True)
class Child(Base):
    b: str = "b"


@dataclass(frozen=True, eq=False)
class Identity:
    v: int


@dataclass(frozen=True, slots=True)
class Box(Generic[T]):
    value: T


def test_init_defaults_repr_and_post_init() -> None:
    assert Point(1) == Point(1, 0)
    assert repr(Point(1, 2)) == "Point(x=1, y=2)"
    assert Point.__doc__ == "A doc."
    assert Point.LIMIT == 10 and [f.name for f in fields(Point(1))] == ["x", "y"]
    with pytest.raises(ValueError):
        Point(-1)
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]


def test_frozen_slots_order_hash() -> None:
    p = Point(1, 2)
    with pytest.raises(FrozenInstanceError):
        p.x = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del p.y  # type: ignore[misc]
    assert isinstance(FrozenInstanceError("x"), AttributeError)
    assert not hasattr(p, "__dict__") and Point.__slots__ == ("x", "y")
    assert sorted([Point(2), Point(1, 5), Point(1, 3)]) == [Point(1, 3), Point(1, 5), Point(2)]
    assert len({Point(1, 2), Point(1, 2), Point(2, 1)}) == 2
    assert Point(1, 2) != (1, 2) and Point(1).norm1() == 1


def test_mutable_factories_compare_and_unhashable() -> None:
    a, b = Bag("n"), Bag("n")
    a.items.append(1)
    assert b.items == [] and a.cache == {} and a.cache is not b.cache
    assert Bag("n", [1], note="x") == Bag("n", [1], note="y")  # note is compare=False
    assert repr(Bag("n")) == "Bag(name='n', items=[], cache={})"
    with pytest.raises(TypeError):
        hash(Bag("n"))


def test_inheritance_identity_and_generic() -> None:
    assert Child(1) == Child(1, "b") and Child(1).a == 1 and repr(Child(1)) == "Child(a=1, b='b')"
    assert Child(1) != Base(1)
    assert Identity(1) != Identity(1)  # eq=False: identity
    i = Identity(1)
    assert i == i and {i: 1}[i] == 1
    assert Box(3).value == 3 and Box[int](4).value == 4


def test_replace_and_copy_and_pickle() -> None:
    assert replace(Point(1, 2), y=5) == Point(1, 5)
    with pytest.raises(ValueError):
        replace(Point(1, 2), x=-1)  # __post_init__ runs again
    with pytest.raises(ValueError):
        replace(Bag("n"), cache={})
    for value in (Point(1, 2), Bag("n", [1]), Child(2, "c"), Box((1, 2))):
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.copy(value) == value and copy.deepcopy(value) == value


def test_module_never_imports_dataclasses_at_runtime() -> None:
    source = open(_record.__file__, encoding="utf-8").read()
    assert "from dataclasses import" in source  # only under TYPE_CHECKING
    assert _record.dataclass is not dataclasses.dataclass


def test_generated_methods_are_compiled_once_and_kept_like_bytecode(tmp_path, monkeypatch) -> None:
    """The code objects of generated methods are cached by their source (a changed class is a new
    key, so nothing stale is ever used); a missing or corrupt cache file only means compiling."""
    from kimi_lsp import _kept, _record

    monkeypatch.setattr(_kept, "_kept_dir", [str(tmp_path / "cache" / "kept" / "this")])
    monkeypatch.setattr(_kept, "_chains", {})
    monkeypatch.setattr(_record, "_codes", _kept.Kept("methods"))
    path = Path(str(_record._codes._path))

    @_record.dataclass(frozen=True, slots=True)
    class P:
        x: int
        y: int = 2

    _record._codes.save()
    assert path.exists()
    monkeypatch.setattr(_record, "_codes", _kept.Kept("methods"))  # the next run reads the file
    compiled: list[str] = []
    real_compile = compile
    monkeypatch.setattr("builtins.compile", lambda src, *a: compiled.append(src) or real_compile(src, *a))

    @_record.dataclass(frozen=True, slots=True)
    class Q:  # same fields: the same generated source, found in the file
        x: int
        y: int = 2

    assert compiled == [] and Q(1) == Q(1, 2) and Q(1) != Q(3)

    @_record.dataclass(frozen=True)
    class R:  # another shape: compiled
        z: str

    assert len(compiled) == 1 and R("a").z == "a"
    path.write_bytes(b"\x00not marshal")
    monkeypatch.setattr(_record, "_codes", _kept.Kept("methods"))

    @_record.dataclass
    class S:
        w: int

    assert S(1).w == 1  # a corrupt file is ignored


def test_a_frozen_record_without_slots_writes_its_fields_as_setattr_would() -> None:
    """Its __init__ fills the instance dict directly, which is what object.__setattr__ does for a
    plain attribute; a field that is a data descriptor in the class's MRO still goes through it."""

    @dataclass(frozen=True)
    class Plain:
        a: int
        b: tuple[int, ...] = ()

    p = Plain(1, (2,))
    assert vars(p) == {"a": 1, "b": (2,)} and p == Plain(1, (2,)) and hash(p) == hash(Plain(1, (2,)))
    with pytest.raises(FrozenInstanceError):
        p.a = 2  # type: ignore[misc]
    assert copy.copy(p) == p and copy.deepcopy(p) == p and replace(p, a=3).a == 3

    class Seen:
        def __init__(self) -> None:
            self.sets: list[object] = []

        def __get__(self, obj: object, owner: type | None = None) -> object:
            return "described" if obj is not None else self

        def __set__(self, obj: object, value: object) -> None:
            self.sets.append(value)

    seen = Seen()

    class Base:
        x = seen

    @dataclass(frozen=True)
    class Described(Base):
        x: int  # a data descriptor in the MRO: object.__setattr__ calls it

    Described(5)
    assert seen.sets == [5]


def test_a_records_shape_decides_its_methods_source() -> None:
    """Generated methods are kept by the class's shape, not by their source: every record class
    of the package, decorated afresh, must give one source per shape (else a kept entry could
    serve a class the methods of another)."""
    import subprocess
    import sys
    from pathlib import Path

    code = """
import importlib, pkgutil
import kimi_lsp
from kimi_lsp import _record
made, last = {}, []
def source(*args):
    last.append(_record_source(*args))
    return last[-1]
class Fresh:
    def get(self, key):
        return None
    def put(self, key, value):
        assert made.setdefault(key, last[-1]) == last[-1], key
_record_source = _record._source
_record._source = source
_record._codes = Fresh()
for mod in pkgutil.walk_packages(kimi_lsp.__path__, "kimi_lsp."):
    if not mod.name.startswith(("kimi_lsp.__main__", "kimi_lsp.verify.gpu")):
        importlib.import_module(mod.name)
print(len(made), len(last))
"""
    server = Path(__file__).resolve().parents[2] / "server"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": str(server), "PATH": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    shapes, classes = map(int, out.stdout.split())
    assert classes >= 80 and 0 < shapes <= classes  # 93 record classes today


# -- @str_enum ---------------------------------------------------------------------------------

_ENUM_BODY = '''
    """What a member stands for."""

    ERROR = "error"
    WARNING = "warning"
    DISPLAY_ONLY = "display-only"
    ALIAS = "error"  # an alias of ERROR, as in a class statement

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2}.get(self.value, 1)
'''


def _enum_pair(name: str) -> tuple[type, type]:
    """The same body as a ``(str, enum.Enum)`` class statement and as a ``@str_enum`` class, both
    made module attributes (``Usual<name>``, ``<name>``: pickling finds a member's class by name)."""
    import enum

    ns = globals()
    ns.update(enum=enum, StrEnum=_record.StrEnum, str_enum=_record.str_enum)
    exec(f"class Usual{name}(str, enum.Enum):{_ENUM_BODY}", ns)  # noqa: S102 - the reference
    exec(f"@str_enum\nclass {name}(StrEnum):{_ENUM_BODY}", ns)  # noqa: S102
    return ns[f"Usual{name}"], ns[name]  # type: ignore[return-value]


def test_a_str_enum_is_the_enum_its_class_statement_makes() -> None:
    import enum
    import json

    usual, fast = _enum_pair("Level")
    assert isinstance(fast, enum.EnumMeta) and issubclass(fast, str) and issubclass(fast, enum.Enum)
    assert [(m.name, m.value) for m in fast] == [(m.name, m.value) for m in usual]
    assert list(fast.__members__) == list(usual.__members__) and len(fast) == len(usual)
    assert fast.ALIAS is fast.ERROR and fast("error") is fast.ERROR and fast["WARNING"] is fast.WARNING
    assert (fast.__doc__, fast.__module__) == (usual.__doc__, usual.__module__)
    assert fast.__qualname__ == fast.__name__ == usual.__name__[len("Usual"):]
    for a, b in zip(usual, fast):
        assert type(b) is fast and isinstance(b, str) and isinstance(b, enum.Enum)
        named = usual.__name__, fast.__name__  # (the two classes' names differ by "Usual")
        assert (repr(b), str(b), f"{b}", f"{b!s}", format(b, ">40").lstrip(), b + "!", json.dumps(b)) == tuple(
            x.replace(*named) for x in (repr(a), str(a), f"{a}", f"{a!s}", format(a, ">40").lstrip(), a + "!", json.dumps(a)))
        assert b == a.value and hash(b) == hash(a.value) and b in {a.value} and b.rank == a.rank
        assert pickle.loads(pickle.dumps(b)) is b and copy.copy(b) is b and copy.deepcopy(b) is b
    assert sorted(fast) == sorted(fast, key=lambda m: m.value)
    # each member (an alias too) sits in the class's own dict, as the class statement puts it: a
    # member read is a dict entry, not a descriptor call
    for name in usual.__members__:
        assert type(usual.__dict__[name]) is usual and fast.__dict__[name] is fast[name]
    with pytest.raises(ValueError) as got:
        fast("nothing")
    with pytest.raises(ValueError) as want:
        usual("nothing")
    assert str(got.value) == str(want.value).replace(usual.__name__, fast.__name__)


def test_a_str_enum_member_named_like_a_base_property_is_made_the_usual_way() -> None:
    """``name`` is a property of Enum: the class statement keeps no member under that name in the
    class dict (3.11 puts a redirecting descriptor there, 3.10 nothing), and neither does
    ``str_enum``."""
    import enum

    ns: dict[str, object] = {"enum": enum, "StrEnum": _record.StrEnum, "str_enum": _record.str_enum}
    exec('class Usual(str, enum.Enum):\n    name = "n"\n    other = "o"\n', ns)  # noqa: S102 - the reference
    exec('@str_enum\nclass Fast(StrEnum):\n    name = "n"\n    other = "o"\n', ns)  # noqa: S102
    usual, fast = ns["Usual"], ns["Fast"]
    assert fast["name"].value == "n" and fast.other is fast("o") and fast("n").name == "name"
    for cls in (usual, fast):
        assert not isinstance(cls.__dict__.get("name"), cls) and cls.__dict__["other"] is cls["other"]  # type: ignore[attr-defined,index]


def test_str_enum_wants_its_base() -> None:
    with pytest.raises(TypeError):
        _record.str_enum(type("Plain", (str,), {"A": "a"}))


def test_str_enum_uses_no_private_enum_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    """``enum._simple_enum`` (private, and a 5 % regression once) is not what makes the class."""
    import enum

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("enum._simple_enum called")

    monkeypatch.setattr(enum, "_simple_enum", refuse, raising=False)
    _usual, fast = _enum_pair("LevelWithoutSimpleEnum")
    assert fast.ERROR.value == "error" and fast("warning") is fast.WARNING


# -- MadeOnRead / KeptOnRead ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["MadeOnRead", "KeptOnRead"])
def test_a_table_made_on_read_is_the_mapping_of_its_made_values(kind: str) -> None:
    made: list[int] = []

    def make(raw: int) -> str:
        made.append(raw)
        return f"v{raw}"

    table = getattr(_record, kind)({"a": 1, "b": 2}, make)
    assert not made  # nothing is made before it is read
    assert table["a"] == "v1" and table.get("b") == "v2" and table.get("c") is None and table.get("c", 0) == 0
    with pytest.raises(KeyError):
        table["c"]
    assert "a" in table and "c" not in table and len(table) == 2 and list(table) == ["a", "b"]
    assert dict(table.items()) == {"a": "v1", "b": "v2"} and table == {"a": "v1", "b": "v2"}
    if kind == "KeptOnRead":  # each value made once, the same object on every read
        assert sorted(made) == [1, 2] and table["a"] is table.get("a")
    else:  # made on every read (the TOML locator's tables: each read once)
        assert len(made) > 2
