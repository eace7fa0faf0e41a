"""The diffusion server ``sglang serve`` hands a diffusion model to (``sglang.multimodal_gen``), per release.

``data/sglang_diffusion.json`` is made by ``scripts/extract_diffusion_schema.py`` from the wheels
(0.5.5 on): the argparse actions of ``add_multimodal_gen_serve_args``, the options every pipeline
config may add once the model is known (all treated as known: the model decides which), the
per-component options ``ServerArgs.from_cli_args`` takes off what argparse left, whether it then
rejects the rest (0.5.10 on; 0.5.5-0.5.9 ignore it), and the model ids its registry recognises.
Loaded only when a ``sglang serve`` launch is one of a diffusion model: every other run skips it.
"""
from __future__ import annotations

import os
from functools import cache

from kimi_lsp._record import dataclass
from kimi_lsp.knowledge import _compiled
from kimi_lsp.knowledge.schema import Flag, Schema

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any

_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sglang_diffusion.json")
# argparse adds it to every parser built with add_help (the diffusion one is)
_HELP = Flag("help", ("-h", "--help"), "help", None, None, None, 0, None, False, None, False, None, None)


@dataclass(frozen=True, slots=True)
class DiffusionRelease:
    """What one release's diffusion server makes of a command line."""

    version: str  # the release whose data this is (a newer one gets the newest known)
    schema: Schema
    pipeline_options: frozenset[str]  # known whatever the model (`--flux3-alpha`: FLUX.3 only)
    component_prefixes: tuple[str, ...]  # `--component-paths.<c>`: taken off with a value
    component_suffixes: tuple[str, ...]  # `--<c>-path`, `--<c>-quantization`
    rejects_unknown: bool  # from_cli_args: `error: unrecognized arguments` (0.5.10 on)
    registry_ids: tuple[str, ...]  # model ids the registry knows (`black-forest-labs/FLUX.1-dev`)
    registry_patterns: tuple[str, ...]  # non-diffusers name patterns of the registry
    registry_consulted: bool  # `sglang serve` asks the registry before the hub

    def is_component_option(self, option: str) -> bool:
        return option.startswith(self.component_prefixes) or (
            option.startswith("--") and option.endswith(self.component_suffixes))

    def registered(self, model: str) -> bool:
        """Whether the registry recognises ``model`` the way ``_match_registered_hf_path`` does:
        an exact id, a registered short name inside the model's short name, a local HF cache
        path of a registered id, or a non-diffusers name pattern."""
        low = model.lower().replace("\\", "/")
        short = low.rstrip("/").split("/")[-1]
        for rid in self.registry_ids:
            r = rid.lower()
            if low == r or r.split("/")[-1] in short or f"models--{r.replace('/', '--')}" in low:
                return True
        for pat in self.registry_patterns:
            p = pat.lower()
            if ("/" not in p and p in low) or ("/" in p and (low == p or short == p.split("/")[-1])):
                return True
        return False


@cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = _compiled.load_json(_DATA)
    return data


def releases() -> tuple[str, ...]:
    """The releases whose diffusion server is in the data."""
    return tuple(_data()["releases"])


def _flag(raw: dict[str, Any]) -> Flag:
    choices = tuple(raw["choices"]) if raw["choices"] is not None else None
    return Flag(raw["dest"], tuple(raw["options"]), raw["action"], raw["type"], choices, None, raw["nargs"], None,
                False, None, False, None, None)


def diffusion_release(version: str) -> DiffusionRelease | None:
    """The diffusion server of ``version``; a release newer than the data gets the newest one's;
    None where the release has none (before 0.5.5)."""
    from kimi_lsp.knowledge.schema import release_in

    hit = release_in(version, _data()["releases"])
    return None if hit is None else _build(hit)


@cache
def _build(hit: str) -> DiffusionRelease:
    data = _data()
    r = data["releases"][hit]
    flags = [_HELP, *(_flag(data["flags"][i]) for i in r["flags"])]
    seen = {o for f in flags for o in f.options}
    pipeline: set[str] = set()
    for i in r["pipeline_flags"]:
        f = _flag(data["flags"][i])
        pipeline.update(f.options)
        if not seen.intersection(f.options):
            flags.append(f)
            seen.update(f.options)
    # no `--config` merger: the diffusion server reads its `--config` file itself (from_cli_args)
    schema = Schema(hit, tuple(flags), {}, config_merger=False)
    return DiffusionRelease(hit, schema, frozenset(pipeline), tuple(r["component_prefixes"]),
                            tuple(r["component_suffixes"]), bool(r["rejects_unknown"]),
                            tuple(data["names"][i] for i in r["registry_ids"]), tuple(r["registry_patterns"]),
                            bool(r["registry_consulted"]))
