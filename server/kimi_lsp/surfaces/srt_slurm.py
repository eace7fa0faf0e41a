"""srt-slurm (``srtctl``) recipes: disaggregated / multi-node sglang launches written as YAML maps.

A recipe names the worker roles' sglang options as maps under
``backend.sglang_config.{prefill,decode,aggregated}`` (keys are sglang option names, dashes or
underscores, values as a ``--config`` YAML gives them), their environment under
``backend.<role>_environment``, and the container under ``model.container``. ``srtctl`` turns each
role's map into the worker's command line, so each role is one launch, read exactly as sglang's
own ``--config`` YAML (``yaml_config.config_entries``): the same keys, values and positions.

A multi-variant recipe keeps the shared recipe under ``base:``; its ``zip_override_*`` sections
hold per-variant lists (``cuda-graph-max-bs: [28, 8, 12]``) that are not launches on their own and
are not read.
"""
from __future__ import annotations

from pathlib import Path

from kimi_lsp.surfaces.model import (
    ConfigFile,
    Entry,
    EnvVar,
    LaunchCommand,
    Surface,
    SurfaceResult,
    SyntaxProblem,
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
            for k, kspan, v, vspan in y.map_items(config):
                if not isinstance(k, ScalarNode) or k.value not in ROLES or not isinstance(v, MappingNode):
                    continue
                entries, duplicates = config_entries(y, v, problems)
                launches.append(
                    LaunchCommand(
                        path=path,
                        surface=Surface.SRT_SLURM,
                        entry=Entry.CONFIG_FILE,
                        program=Located(f"sglang_config.{k.value}", kspan),
                        argv=(),
                        span=Span(kspan.start, max(kspan.end, vspan.end)),
                        base_dir=path.parent,
                        env=_env(y, _child(backend, f"{k.value}_environment")),
                        config=ConfigFile(path=path, format="yaml", entries=tuple(entries),
                                          duplicates=tuple(duplicates)),
                        image=image,
                    )
                )
    return SurfaceResult(launches=tuple(launches), problems=tuple(problems), is_launch_file=True)
