"""The entry points other than ``sglang.launch_server`` that build their parser from
``ServerArgs.add_cli_args`` plus options of their own, per sglang release: the benchmarks
(``python -m sglang.bench_one_batch``, ``sglang.bench_offline_throughput``,
``sglang.bench_one_batch_server``, their ``sglang.benchmark.*`` homes from 0.5.14/0.5.15) and
``sglang.compile_deep_gemm``, and the router's ``sglang_router.launch_server``. Read from the
released wheels by ``scripts/build_entry_points.py``.

Each of them parses with ``parser.parse_args()``: an option neither ServerArgs nor the entry
point's own options class knows ends the run with ``unrecognized arguments``. None reads
``--config`` (they register it with the server options but never merge the file).

The router comes from the separate sglang-router package, whose release a launch seldom names:
its options are the union of the sglang-router releases read, and any ``--router-*`` option is
accepted (a newer router may have added it).
"""
from __future__ import annotations

import os
from functools import cache

from kimi_lsp._record import dataclass
from kimi_lsp.knowledge.schema import Flag, Schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sglang_entry_points.json")
ROUTER_LAUNCH = "sglang_router.launch_server"
ROUTER_PREFIX = "--router-"
_TYPES = {"int": "int", "float": "float", "str": "str"}  # type=bool reads any word: no check


@dataclass(frozen=True)
class EntryParser:
    """One entry point's own options on top of ServerArgs, for one release."""

    module: str  # as written after ``-m``
    runs: str | None  # the module a back-compat shim runs (``sglang.benchmark.one_batch``)
    flags: tuple[Flag, ...]
    complete: bool  # every option string was a literal: an option not among them is unknown
    router: bool = False  # sglang_router.launch_server: ``--router-*`` options of any router release pass

    @property
    def options_class(self) -> str:
        if self.router:
            return "RouterArgs"
        return "CompileArgs" if self.module.endswith("compile_deep_gemm") else "BenchArgs"

    def accepts_unknown(self, option: str) -> bool:
        """An option this table cannot judge: the table is incomplete, or a router option of a
        router release not read."""
        return not self.complete or (self.router and option.startswith(ROUTER_PREFIX))

    def judges_ambiguity(self, candidates: tuple[str, ...]) -> bool:
        """Whether an ambiguous prefix among ``candidates`` is one on the parser that runs: the
        router's options are a union of releases, where a prefix unique in one may look ambiguous."""
        if not self.router:
            return self.complete
        own = {o for f in self.flags for o in f.options}
        return not any(c in own or c.startswith(ROUTER_PREFIX) for c in candidates)


@cache
def _data() -> dict[str, Any]:
    from kimi_lsp.knowledge import _compiled  # a launch of one of these entry points reads the table

    try:
        data = _compiled.load_json(_DATA)
        if not isinstance(data, dict) or data.get("format") != 1:
            return {}
        return data
    except (OSError, ValueError):  # a damaged data file: the entry points are read as before (unchecked)
        return {}


def module_of(program: str) -> str:
    """The module of a launch's program text (``python3 -m sglang.bench_one_batch``, ``-msglang.x``)."""
    last = program.split()[-1] if program.split() else ""
    return last[2:] if last.startswith("-m") else last


def _flag(row: list[Any]) -> Flag:
    dest, options, action, type_, nargs, choices = row
    switch = action in ("store_true", "store_false")
    return Flag(dest=dest, options=tuple(options), action=action, type=_TYPES.get(type_) if type_ else None,
                choices=tuple(choices) if choices is not None else None, default=None,
                nargs=0 if switch else nargs, const=None, required=False, help=None, hidden=False,
                deprecated=None, config_refused=None)


def _router_flag(option: str) -> Flag:
    # only the names are read: any number of values is taken, so that a router switch or a
    # valued option never makes the words after it look wrong
    return Flag(dest=option[2:].replace("-", "_"), options=(option,), action="store", type=None, choices=None,
                default=None, nargs="*", const=None, required=False, help=None, hidden=False, deprecated=None,
                config_refused=None)


@cache
def entry_parser(version: str, module: str) -> EntryParser | None:
    """What ``module`` adds to ServerArgs on ``version``; None when the data does not say (a
    release or an entry point not read, or the module is absent: see ``missing_module``)."""
    data = _data()
    if module == ROUTER_LAUNCH:
        router = data.get("router")
        if not isinstance(router, dict):
            return None
        return EntryParser(module, None, tuple(_router_flag(o) for o in router.get("options", ())),
                           bool(router.get("complete")), router=True)
    row = data.get("releases", {}).get(version, {}).get(module)
    if not isinstance(row, dict) or row.get("known_args"):
        return None
    try:
        flags = tuple(_flag(r) for r in data["option_sets"][row["options"]])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    return EntryParser(module, row.get("runs"), flags, bool(row.get("complete")))


def missing_module(version: str, module: str) -> bool:
    """Whether release ``version`` (one the data read) has no module ``module`` of the entry
    points it lists: ``python -m`` then ends with ``No module named``."""
    data = _data()
    releases = data.get("releases", {})
    if module == ROUTER_LAUNCH or version not in releases:
        return False
    if not any(module in row for row in releases.values()):
        return False  # not an entry point the data follows
    return module not in releases[version]


def replacement(version: str, module: str) -> str | None:
    """The module that replaced ``module`` in ``version`` (``sglang.bench_one_batch`` ->
    ``sglang.benchmark.one_batch``): the one a shim of an earlier release ran."""
    for row in _data().get("releases", {}).values():
        runs = row.get(module, {}).get("runs") if isinstance(row.get(module), dict) else None
        if runs and entry_parser(version, runs) is not None:
            return str(runs)
    return None


@cache
def entry_schema(schema: Schema, module: str) -> Schema:
    """``schema`` with the entry point's own options added (one argparse parser holds both, so an
    abbreviation is matched against all of them); the schema itself when nothing is known."""
    parser = entry_parser(schema.version, module)
    if parser is None or not parser.flags:
        return schema
    taken = {o for f in schema.flags for o in f.options}
    extra = tuple(f for f in parser.flags if not taken.intersection(f.options))
    return Schema(schema.version, (*schema.flags, *extra), schema.deprecated_values,
                  deprecated_flags=schema.deprecated_flags, config_store_true_keys=schema.config_store_true_keys,
                  config_refused_keys=schema.config_refused_keys, config_long_keys=schema.config_long_keys,
                  config_merger=schema.config_merger, config_verbatim=schema.config_verbatim,
                  choice_lists=schema.choice_lists)
