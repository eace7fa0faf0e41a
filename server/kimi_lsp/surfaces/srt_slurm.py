"""srt-slurm (``srtctl``) recipes: disaggregated / multi-node sglang launches written as YAML maps.

A recipe names the worker roles' sglang options as maps under
``backend.sglang_config.{prefill,decode,aggregated}`` (keys are sglang option names, dashes or
underscores), their environment under ``backend.<role>_environment``, and the container under
``model.container``. Each role map is one launch. The map is read with sglang's own ``--config``
reader (``yaml_config.config_entries``: the same keys, values and positions) and turned into the
command line the way ``srtctl`` builds the worker's: keys sorted, ``_`` made ``-``, ``true`` a bare
flag, ``false`` and ``null`` left out, a list a flag and its items, anything else a flag and its
value; ``model-path``, ``nccl-port`` and ``grpc-port`` are srtctl's own (it passes ``--model-path``
itself: ``/model``, or the model id of an ``hf:`` path) and it adds ``--disaggregation-mode`` for
the prefill and decode roles. The worker is ``python3 -m sglang.launch_server`` behind an sglang
frontend, ``python3 -m dynamo.sglang`` behind Dynamo's (srtctl's default): Dynamo takes flags of
its own, so those launches carry the same doubt a written ``dynamo.sglang`` launch does.

A multi-variant recipe keeps the shared recipe under ``base:`` and its variants in ``override_<name>:``
and ``zip_override_<name>:`` sections; srtctl (``src/srtctl/core/config.py`` of srt-slurm:
``_expand_override_variants``, ``expand_zip_override``, ``_apply_zip_slice``, ``deep_merge``) runs
each variant as a job of its own and the base only when asked (``file.yaml:base``). An
``override_*`` section is one variant; a ``zip_override_*`` section is N: every list anywhere in the
section is a zip dimension, a one-item list is broadcast, all other lists must have the same length
N (else srtctl refuses the file), and variant i takes item i of each list (an item that is itself a
list is a literal list). The variant is ``deep_merge(base, section)``: maps merge key by key, any
other value (lists too) replaces the base's, ``null`` deletes the key. So a role's variant launch
is the base role map with the section's keys set (or deleted) over it, read here entry by entry:
each value sits where it is written, a base entry at the base, a zip item at its item. A role gets
a variant launch when the section touches what its launch is made of (its role map or
environment, ``model``, ``frontend``, ``backend.type``); otherwise the variant runs the base's
launch, already read. Diagnostics of a base entry are the same in every variant and are merged
into one by the engine (same place, code and message). A key written twice in a role map keeps
its last value (srtctl reads the file with ``yaml.safe_load``): one entry.

A recipe with a top-level ``sweep:`` (``src/srtctl/core/sweep.py``: ``generate_sweep_configs``,
``expand_template``) is one job per combination of its lists (a Cartesian product, the first
256 read): each string's ``{param}`` is replaced by the combination's value, a string that is
only the placeholder becomes the value itself (then it sits where the sweep lists it).
"""
from __future__ import annotations

import itertools
from pathlib import Path

from kimi_lsp.surfaces.model import (
    ConfigEntry,
    ConfigFile,
    Entry,
    EnvVar,
    LaunchCommand,
    Surface,
    SurfaceResult,
    SyntaxProblem,
    Token,
)
from kimi_lsp.surfaces.yaml_config import _pairs, as_problem, config_entries
from kimi_lsp.syntax.yaml import ConstructError, Loaded, YamlText, construct
from kimi_lsp.syntax.ynodes import MappingNode, Node, ScalarNode, SequenceNode
from kimi_lsp.text import Located, Span

# The worker roles srtctl launches from ``sglang_config`` (``aggregated``: one server doing both).
ROLES = ("prefill", "decode", "aggregated")
_NULL = "tag:yaml.org,2002:null"


def _child(node: Node | None, key: str) -> Node | None:
    if node is None or node.id != "mapping":
        return None
    # ``yaml.safe_load`` (srtctl's reader) keeps the last of a key written twice
    for k, v in reversed(node.value):
        if k.id == "scalar" and k.value == key:
            return v  # type: ignore[no-any-return]
    return None


def _recipes(doc: Node) -> list[MappingNode]:
    """The recipe mappings of one document: the root, and a multi-variant file's ``base:``."""
    if not isinstance(doc, MappingNode):
        return []
    base = _child(doc, "base")
    return [doc] + ([base] if isinstance(base, MappingNode) else [])


def _sglang_config(recipe: MappingNode) -> MappingNode | None:
    backend = _child(recipe, "backend")
    kind = _child(backend, "type")
    if isinstance(kind, ScalarNode) and kind.tag != _NULL and kind.value.lower() != "sglang":
        return None  # a TRT-LLM / vLLM recipe: its maps are that engine's options
    config = _child(backend, "sglang_config")
    return config if isinstance(config, MappingNode) else None


def is_recipe(docs: list[Node]) -> bool:
    """Whether a YAML file's documents hold an srt-slurm recipe with sglang worker maps."""
    if any(_sglang_config(r) is not None for d in docs for r in _recipes(d)):
        return True
    # an override file may keep the role maps in its sections only
    return any(
        isinstance(_child(d, "base"), MappingNode)
        and any(
            isinstance(k, ScalarNode) and k.value.startswith(("override_", "zip_override_"))
            and isinstance(_child(_child(v, "backend"), "sglang_config"), MappingNode)
            for k, v in d.value
        )
        for d in docs
        if isinstance(d, MappingNode)
    )


def _env(y: YamlText, node: Node | None) -> tuple[EnvVar, ...]:
    if not isinstance(node, MappingNode):
        return ()
    out = []
    for k, kspan, v, vspan in y.map_items(node):
        if not isinstance(k, ScalarNode):
            continue
        value = Located(v.value, vspan) if isinstance(v, ScalarNode) and v.tag != _NULL else None
        out.append(EnvVar(Located(k.value, kspan), value))
    return tuple(out)


# keys srtctl pops from the map and passes itself (or not at all)
_SRTCTL_OWN = frozenset({"model-path", "nccl-port", "grpc-port"})
_SGLANG_FRONTENDS = frozenset({"sglang", "sidecar"})


def _word(text: str, value: object, span: Span) -> Token:
    shown = str(value)
    return Token(shown, span, exact=text[span.start : span.end] == shown)


def _argv(text: str, entries: list[ConfigEntry]) -> list[Token]:
    """The flags srtctl's ``_config_to_cli_args`` makes of a role map, each where it is written."""
    out: list[Token] = []
    for e in sorted(entries, key=lambda e: e.key.value):
        name = e.key.value.replace("_", "-")
        if name in _SRTCTL_OWN:
            continue
        flag = Token(f"--{name}", e.key.span, exact=False)
        value = e.value
        if isinstance(value, bool):
            if value:
                out.append(flag)
        elif isinstance(value, list):
            out.append(flag)
            spans = e.item_spans if len(e.item_spans) == len(value) else (e.value_span,) * len(value)
            out.extend(_word(text, v, sp) for v, sp in zip(value, spans))
        elif value is not None:
            out.extend([flag, _word(text, value, e.value_span)])
    return out


def _model_words(y: YamlText, node: Node | None, at: Span) -> list[Token]:
    """``--model-path`` as srtctl passes it: the model id of an ``hf:`` path, else ``/model``."""
    where = y.span(node) if isinstance(node, ScalarNode) else Span(at.start, at.start)
    value = "/model"
    if isinstance(node, ScalarNode) and node.value.startswith("hf:"):
        value = node.value[3:]
    return [Token("--model-path", Span(at.start, at.start), exact=False), Token(value, where, exact=False)]


def _frontend(node: Node | None) -> str:
    return node.value.lower() if isinstance(node, ScalarNode) and node.tag != _NULL else "dynamo"


def _image_at(y: YamlText, node: Node | None) -> Located[str] | None:
    if not isinstance(node, ScalarNode) or node.tag == _NULL or not node.value.strip():
        return None
    return Located(node.value, y.span(node))


_Duplicates = list[tuple[Located[str], Located[str]]]
# a ``sweep:`` parameter's value in one combination: the value, where it is written, its items' places
_Swept = tuple[object, Span, tuple[Span, ...]]
# srtctl runs every combination of a sweep (a Cartesian product); past this many, the first are read
_MAX_SWEEP = 256


def _launch(path: Path, y: YamlText, role: str, at: Span, span: Span, entries: list[ConfigEntry],
            recipe: _View, duplicates: _Duplicates) -> LaunchCommand:
    """The worker command srtctl builds for one role map (``entries``: the map as it is read)."""
    dynamo = _frontend(recipe.get("frontend", "type")) not in _SGLANG_FRONTENDS
    module = "dynamo.sglang" if dynamo else "sglang.launch_server"
    argv = _model_words(y, recipe.get("model", "path"), at)
    if role != "aggregated":
        argv += [Token("--disaggregation-mode", Span(at.start, at.start), exact=False), Token(role, at, exact=False)]
    argv += _argv(y.text, entries)
    launch = LaunchCommand(
        path=path,
        surface=Surface.SRT_SLURM,
        entry=Entry.LAUNCH_SERVER,
        program=Located(f"python3 -m {module}", at),
        argv=tuple(argv),
        span=span,
        base_dir=path.parent,
        env=recipe.env(f"{role}_environment"),
        image=_swept_image(recipe, _image_at(y, recipe.get("model", "container"))),
        # srtctl reads the recipe with ``yaml.safe_load``: a key written twice in a role map keeps its
        # last value silently (KL217). Only the duplicates ride here: the entries are the argv above,
        # not a ``--config`` file's (sglang's merger never sees them).
        config=ConfigFile(path, "yaml", (), tuple(duplicates)) if duplicates else None,
    )
    if dynamo:
        from kimi_lsp.surfaces.shell import dynamo_worker  # with the first Dynamo recipe

        launch = dynamo_worker(launch)
    return launch


def _swept_image(recipe: _View, image: Located[str] | None) -> Located[str] | None:
    if image is None or not recipe.sweep or "{" not in image.value:
        return image
    value, span, _ = recipe.expand(image.value)
    return Located(str(value), span or image.span)


def _sweep_combinations(y: YamlText, recipe: MappingNode) -> list[dict[str, _Swept]]:
    """srtctl's ``generate_sweep_configs``: every combination of a ``sweep:`` section's lists
    (``src/srtctl/core/sweep.py``); a recipe without one is one combination of nothing."""
    sweep = _child(recipe, "sweep")
    if not isinstance(sweep, MappingNode):
        return [{}]
    params: list[tuple[str, list[_Swept]]] = []
    for pair in _pairs(y, sweep):
        if not isinstance(pair.key, ScalarNode) or not isinstance(pair.value, SequenceNode):
            continue  # not a list of values: its placeholders are left as written
        values: list[_Swept] = []
        for item, span in y.seq_items(pair.value):
            try:
                value = construct(item, y.text, span)
            except ConstructError:
                continue
            inner = tuple(s for _, s in y.seq_items(item)) if isinstance(item, SequenceNode) else ()
            values.append((value, span, inner))
        params.append((pair.key.value, values))
    out: list[dict[str, _Swept]] = []
    for combination in itertools.product(*(values for _, values in params)):
        out.append({name: v for (name, _), v in zip(params, combination)})
        if len(out) >= _MAX_SWEEP:
            break
    return out


def _is_null(node: Node | None) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _NULL


class _View:
    """A recipe as srtctl runs it: ``deep_merge(base, section)``, the section sliced at variant
    ``index`` for a ``zip_override_*`` (``None``: the base itself, or an ``override_*``)."""

    def __init__(self, y: YamlText, base: MappingNode, section: MappingNode | None = None, index: int | None = None,
                 sweep: dict[str, _Swept] | None = None) -> None:
        self.y, self.base, self.section, self.index = y, base, section, index
        self.sweep = sweep or {}  # one combination of a ``sweep:`` recipe's parameters

    def expand(self, value: str) -> tuple[object, Span | None, tuple[Span, ...]]:
        """srtctl's ``expand_template`` for one string: each ``{param}`` replaced by this combination's
        value (a whole-string placeholder of a list: the list); with the value's place when the
        string is nothing but the placeholder (``None``: the string's own place)."""
        out = value
        for name, (swept, span, items) in self.sweep.items():
            placeholder = "{" + name + "}"
            if placeholder not in out:
                continue
            if out == placeholder:
                if isinstance(swept, list):
                    return swept, span, items
                return str(swept), span, ()
            out = out.replace(placeholder, ",".join(map(str, swept)) if isinstance(swept, list) else str(swept))
        return out, None, ()

    def swept(self, entry: ConfigEntry) -> ConfigEntry:
        if not self.sweep or not isinstance(entry.value, str) or "{" not in entry.value:
            return entry
        value, span, items = self.expand(entry.value)
        if span is None:
            return ConfigEntry(entry.key, value, entry.value_span, ())
        return ConfigEntry(entry.key, value, span, items)

    def at(self, node: Node) -> tuple[Node, Span]:
        """A section's value in this variant, with where it is written (a zip list: its item)."""
        if self.index is not None and isinstance(node, SequenceNode) and node.value:
            return self.y.seq_items(node)[0 if len(node.value) == 1 else self.index]
        return node, self.y.span(node)

    def over(self, *keys: str) -> tuple[bool, Node | None]:
        """Whether the section sets ``keys`` (or deletes or replaces a map on the way), and the value."""
        node: Node | None = self.section
        for key in keys:
            child = _child(node, key)
            if child is None:
                return False, None
            node, _ = self.at(child)
            if _is_null(node) or (not isinstance(node, MappingNode) and key != keys[-1]):
                return True, None  # ``null`` deletes the key; a scalar replaces the whole map
        return True, node

    def get(self, *keys: str) -> Node | None:
        """The value at ``keys`` in the variant (the section's where it sets one, else the base's)."""
        touched, node = self.over(*keys)
        if touched:
            return node
        found: Node | None = self.base
        for key in keys:
            found = _child(found, key)
        return found

    def env(self, key: str) -> tuple[EnvVar, ...]:
        merged = {v.name.value: v for v in _env(self.y, _child(_child(self.base, "backend"), key))}
        touched, node = self.over("backend", key)
        if touched and node is None:
            return ()
        if isinstance(node, MappingNode):
            for k, kspan, v, _vspan in self.y.map_items(node):
                if not isinstance(k, ScalarNode):
                    continue
                value, where = self.at(v)
                if _is_null(value):
                    merged.pop(k.value, None)
                else:
                    shown = Located(value.value, where) if isinstance(value, ScalarNode) else None
                    merged[k.value] = EnvVar(Located(k.value, kspan), shown)
        return tuple(merged.values())

    def touches(self, role: str) -> bool:
        """Whether this variant's ``role`` launch differs from the base's (the base's is read already)."""
        if self.section is None:
            return True
        paths = [("backend", "sglang_config", role), ("backend", f"{role}_environment"), ("backend", "type"),
                 ("model", "container"), ("model", "path"), ("frontend", "type")]
        return any(self.over(*p)[0] for p in paths)

    def duplicates(self, role: str) -> _Duplicates:
        """Keys written twice in the role map this launch reads them from (the section's, in a variant)."""
        if self.section is None:
            node = _child(_child(_child(self.base, "backend"), "sglang_config"), role)
        else:
            _, node = self.over("backend", "sglang_config", role)
        return config_entries(self.y, node, [])[1] if isinstance(node, MappingNode) else []

    def role_entries(self, role: str, problems: list[SyntaxProblem]) -> list[ConfigEntry]:
        """The role map's entries in this variant: the base's, the section's set over them by key."""
        base_map = _child(_child(_child(self.base, "backend"), "sglang_config"), role)
        merged: dict[str, ConfigEntry] = {}
        if isinstance(base_map, MappingNode):
            # the base's own problems were reported with the base's launch
            merged = {e.key.value: e for e in config_entries(self.y, base_map, [])[0]}
        _, over = self.over("backend", "sglang_config", role)
        if isinstance(over, MappingNode):
            for pair in _pairs(self.y, over):
                if not isinstance(pair.key, ScalarNode):
                    continue
                value, where = self.at(pair.value)
                if _is_null(value):
                    merged.pop(pair.key.value, None)  # deep_merge: ``null`` deletes the key
                    continue
                try:
                    constructed = construct(value, self.y.text, where)
                except ConstructError as exc:
                    problems.append(as_problem(exc.problem))
                    continue
                items = tuple(s for _, s in self.y.seq_items(value)) if isinstance(value, SequenceNode) else ()
                merged[pair.key.value] = ConfigEntry(Located(pair.key.value, pair.key_span), constructed, where, items)
        return [self.swept(e) for e in merged.values()]


def _list_lengths(y: YamlText, node: MappingNode, depth: int = 0) -> list[int]:
    """srtctl's ``_collect_list_lengths``: the length of every list in the section, maps recursed."""
    out: list[int] = []
    for pair in _pairs(y, node):
        if isinstance(pair.value, SequenceNode):
            out.append(len(pair.value.value))
        elif isinstance(pair.value, MappingNode) and depth < 32:
            out.extend(_list_lengths(y, pair.value, depth + 1))
    return out


def _zip_length(lengths: list[int]) -> int | str:
    """srtctl's ``_determine_zip_length``: N, or why srtctl refuses the section."""
    if not lengths:
        return "it holds no list, so there is nothing to zip"
    if 0 in lengths:
        return "it holds an empty list, which cannot be zipped"
    sizes = sorted({n for n in lengths if n != 1})
    if len(sizes) > 1:
        return f"its lists have lengths {', '.join(map(str, sizes))}: each must have the same length, or length 1"
    return sizes[0] if sizes else 1


def _variants(y: YamlText, doc: Node, problems: list[SyntaxProblem]) -> list[tuple[Span, _View]]:
    """Each variant srtctl runs from an override file: the section's key and the merged recipe."""
    base = _child(doc, "base")
    if not isinstance(doc, MappingNode) or not isinstance(base, MappingNode):
        return []
    out: list[tuple[Span, _View]] = []
    for k, kspan, v, _vspan in y.map_items(doc):
        if not isinstance(k, ScalarNode) or not isinstance(v, MappingNode):
            continue
        if k.value.startswith("override_"):
            out.append((kspan, _View(y, base, v)))
        elif k.value.startswith("zip_override_"):
            n = _zip_length(_list_lengths(y, v))
            if isinstance(n, str):
                problems.append(SyntaxProblem(f"srtctl refuses `{k.value}`: {n}", kspan))
                continue
            out.extend((kspan, _View(y, base, v, i)) for i in range(n))
    return out


def _role_launches(path: Path, y: YamlText, view: _View, where: Span, problems: list[SyntaxProblem]) -> list[LaunchCommand]:
    """One launch per role map of a recipe (a variant: per role whose launch it changes)."""
    kind = view.get("backend", "type")
    if isinstance(kind, ScalarNode) and kind.tag != _NULL and kind.value.lower() != "sglang":
        return []  # a TRT-LLM / vLLM recipe: its maps are that engine's options
    config = view.get("backend", "sglang_config")
    if not isinstance(config, MappingNode):
        return []
    out: list[LaunchCommand] = []
    for role in ROLES:
        if not view.touches(role) or not isinstance(view.get("backend", "sglang_config", role), MappingNode):
            continue
        base_role = _role_key(y, _child(_child(view.base, "backend"), "sglang_config"), role)
        over_role = _role_key(y, _child(_child(view.section, "backend"), "sglang_config"), role)
        at = over_role or base_role or where
        span = at if view.section is not None else Span(at.start, max(at.end, _role_end(y, config, role)))
        out.append(_launch(path, y, role, at, span, view.role_entries(role, problems), view, view.duplicates(role)))
    return out


def _role_key(y: YamlText, config: Node | None, role: str) -> Span | None:
    if not isinstance(config, MappingNode):
        return None
    spans = [kspan for k, kspan, _v, _vs in y.map_items(config) if isinstance(k, ScalarNode) and k.value == role]
    return spans[-1] if spans else None


def _role_end(y: YamlText, config: MappingNode, role: str) -> int:
    ends = [vspan.end for k, _ks, _v, vspan in y.map_items(config) if isinstance(k, ScalarNode) and k.value == role]
    return ends[-1] if ends else 0


def read_recipe(path: Path, text: str, loaded: Loaded) -> SurfaceResult:
    """One launch per role map of every recipe in the file (``is_recipe`` said there is one), and
    per role a variant of an override file changes."""
    y = YamlText(text)
    problems: list[SyntaxProblem] = [as_problem(p) for p in loaded.problems]
    launches: list[LaunchCommand] = []
    for doc in loaded.docs:
        for recipe in _recipes(doc):
            config = _sglang_config(recipe)
            if config is None:
                continue
            for k, _kspan, v, _vspan in y.map_items(config):
                if isinstance(k, ScalarNode) and k.value in ROLES and isinstance(v, MappingNode):
                    config_entries(y, v, problems)  # the map's own problems, once
            # a ``sweep:`` recipe (srtctl's sweep.py) is one launch per combination; its values
            # sit where the sweep lists them
            combinations = _sweep_combinations(y, recipe) if recipe is doc else [{}]
            for combination in combinations:
                launches += _role_launches(path, y, _View(y, recipe, sweep=combination), Span(0, 0), problems)
        variant_problems: list[SyntaxProblem] = []
        for where, view in _variants(y, doc, variant_problems):
            launches += _role_launches(path, y, view, where, variant_problems)
        # a section's bad value is the same problem in each of its variants: reported once
        seen: set[tuple[str, Span]] = set()
        for p in variant_problems:
            if (p.message, p.span) not in seen:
                seen.add((p.message, p.span))
                problems.append(p)
    return SurfaceResult(launches=tuple(launches), problems=tuple(problems), is_launch_file=True)
