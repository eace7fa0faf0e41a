"""YAML nodes without importing PyYAML: the types the YAML readers hand to the surfaces.

A document composed by PyYAML is made of ``yaml.nodes`` objects; one read by the scan of
``syntax.yaml_scan`` (the common shapes of a ``--config`` file, without loading PyYAML at all) is
made of the classes here. Both have the fields the readers use (``tag``, ``value``,
``start_mark.index``, ``end_mark.index``, ``style``, ``flow_style``) and the same class-level
``id``, and ``isinstance(node, ScalarNode)`` with the classes here is true of either kind: the
check goes by ``id``, so a reader never needs to know which parser composed a document.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (see kimi_lsp._record)
if TYPE_CHECKING:
    from typing import Any, ClassVar


class Mark:
    """Where a node starts or ends: a code-point offset into the text (all the readers use)."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"Mark({self.index})"


class _Kind(type):
    """``isinstance`` by the node's ``id``: true of these classes and of PyYAML's alike."""

    _ids: frozenset[str]

    def __instancecheck__(cls, obj: object) -> bool:
        return getattr(type(obj), "id", None) in cls._ids


class Node(metaclass=_Kind):
    _ids = frozenset(("scalar", "sequence", "mapping"))
    id: ClassVar[str] = ""
    __slots__ = ("tag", "value", "start_mark", "end_mark")

    tag: str
    value: Any
    start_mark: Mark
    end_mark: Mark


class ScalarNode(Node):
    _ids = frozenset(("scalar",))
    id: ClassVar[str] = "scalar"
    __slots__ = ("style",)
    value: str
    style: str | None

    def __init__(self, tag: str, value: str, start_mark: Mark, end_mark: Mark, style: str | None = None) -> None:
        self.tag, self.value, self.start_mark, self.end_mark, self.style = tag, value, start_mark, end_mark, style


class SequenceNode(Node):
    _ids = frozenset(("sequence",))
    id: ClassVar[str] = "sequence"
    __slots__ = ("flow_style",)
    value: list[Node]
    flow_style: bool | None

    def __init__(self, tag: str, value: list[Node], start_mark: Mark, end_mark: Mark, flow_style: bool | None = None) -> None:
        self.tag, self.value, self.start_mark, self.end_mark, self.flow_style = tag, value, start_mark, end_mark, flow_style


class MappingNode(Node):
    _ids = frozenset(("mapping",))
    id: ClassVar[str] = "mapping"
    __slots__ = ("flow_style",)
    value: list[tuple[Node, Node]]
    flow_style: bool | None

    def __init__(
        self, tag: str, value: list[tuple[Node, Node]], start_mark: Mark, end_mark: Mark, flow_style: bool | None = None
    ) -> None:
        self.tag, self.value, self.start_mark, self.end_mark, self.flow_style = tag, value, start_mark, end_mark, flow_style
