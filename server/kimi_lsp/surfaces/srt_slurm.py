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

A multi-variant recipe keeps the shared recipe under ``base:``; its ``zip_override_*`` sections
hold per-variant lists (``cuda-graph-max-bs: [28, 8, 12]``) that are not launches on their own and
are not read.
"""
from __future__ import annotations

from pathlib import Path

from kimi_lsp.surfaces.model import (
    ConfigEntry,
    Entry,
    EnvVar,
    LaunchCommand,
    Surface,
    SurfaceResult,
    SyntaxProblem,
    Token,
)
from kimi_lsp.surfaces.yaml_config import as_problem, config_entries
from kimi_lsp.syntax.yaml import Loaded, YamlText
from kimi_lsp.syntax.ynodes import MappingNode, Node, ScalarNode
from kimi_lsp.text import Located, Span

# The worker roles srtctl launches from ``sglang_config`` (``aggregated``: one server doing both).
ROLES = ("prefill", "decode", "aggregated")
_NULL = "tag:yaml.org,2002:null"


def _child(node: Node | None, key: str) -> Node | None:
    if node is None or node.id != "mapping":
        return None
    for k, v in node.value:
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
    return any(_sglang_config(r) is not None for d in docs for r in _recipes(d))


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


def _image(y: YamlText, recipe: MappingNode) -> Located[str] | None:
    node = _child(_child(recipe, "model"), "container")
    if not isinstance(node, ScalarNode) or node.tag == _NULL or not node.value.strip():
        return None
    return Located(node.value, y.span(node))


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


def _model_words(y: YamlText, recipe: MappingNode, at: Span) -> list[Token]:
    """``--model-path`` as srtctl passes it: the model id of an ``hf:`` path, else ``/model``."""
    node = _child(_child(recipe, "model"), "path")
    where = y.span(node) if isinstance(node, ScalarNode) else Span(at.start, at.start)
    value = "/model"
    if isinstance(node, ScalarNode) and node.value.startswith("hf:"):
        value = node.value[3:]
    return [Token("--model-path", Span(at.start, at.start), exact=False), Token(value, where, exact=False)]


def _frontend(recipe: MappingNode) -> str:
    node = _child(_child(recipe, "frontend"), "type")
    return node.value.lower() if isinstance(node, ScalarNode) and node.tag != _NULL else "dynamo"


def read_recipe(path: Path, text: str, loaded: Loaded) -> SurfaceResult:
    """One launch per role map of every recipe in the file (``is_recipe`` said there is one)."""
    y = YamlText(text)
    problems: list[SyntaxProblem] = [as_problem(p) for p in loaded.problems]
    launches: list[LaunchCommand] = []
    for doc in loaded.docs:
        for recipe in _recipes(doc):
            config = _sglang_config(recipe)
            if config is None:
                continue
            backend = _child(recipe, "backend")
            image = _image(y, recipe)
            dynamo = _frontend(recipe) not in _SGLANG_FRONTENDS
            module = "dynamo.sglang" if dynamo else "sglang.launch_server"
            for k, kspan, v, vspan in y.map_items(config):
                if not isinstance(k, ScalarNode) or k.value not in ROLES or not isinstance(v, MappingNode):
                    continue
                entries, _duplicates = config_entries(y, v, problems)
                argv = _model_words(y, recipe, kspan)
                if k.value != "aggregated":
                    argv += [Token("--disaggregation-mode", Span(kspan.start, kspan.start), exact=False),
                             Token(k.value, kspan, exact=False)]
                argv += _argv(text, entries)
                launch = LaunchCommand(
                    path=path,
                    surface=Surface.SRT_SLURM,
                    entry=Entry.LAUNCH_SERVER,
                    program=Located(f"python3 -m {module}", kspan),
                    argv=tuple(argv),
                    span=Span(kspan.start, max(kspan.end, vspan.end)),
                    base_dir=path.parent,
                    env=_env(y, _child(backend, f"{k.value}_environment")),
                    image=image,
                )
                if dynamo:
                    from kimi_lsp.surfaces.shell import dynamo_worker  # with the first Dynamo recipe

                    launch = dynamo_worker(launch)
                launches.append(launch)
    return SurfaceResult(launches=tuple(launches), problems=tuple(problems), is_launch_file=True)
