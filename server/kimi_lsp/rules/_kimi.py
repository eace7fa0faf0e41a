"""Shared facts for the Kimi-K3 rules: is this launch Kimi-K3 with DCP, and which decode backend.

Mirrors sglang's ``arg_groups/model_overrides/kimi_k3.py`` and ``model_override_base.py`` of each
release from 0.5.19 (``k3_dcp_backends``; 0.5.23 described here):
the override is registered for ``KimiK3ForConditionalGeneration`` only (``architectures[0]`` of
the HF config); it runs when ``dcp_size > 1``; the decode backend is
``--decode-attention-backend`` else ``--attention-backend`` (truthiness: "" is unset), after the
deprecated renames ``tokenspeed_mla -> cutedsl_mla`` and ``compressed -> dsv4``.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from kimi_lsp import _regex
from kimi_lsp._record import dataclass
from kimi_lsp.diagnostics import Location, Related
from kimi_lsp.launch import ArgUse, ResolvedLaunch
from kimi_lsp.rules._args import parse_int, use_location
from kimi_lsp.rules._base import LaunchContext
from kimi_lsp.text import Span
from kimi_lsp.workspace import touched

# sglang's Kimi-K3 DCP override by release, read in the released wheels
# (``arg_groups/model_overrides/kimi_k3.py``; the renames in ``serving_hook.py`` are in each
# release's schema as ``deprecated_values``): no override before 0.5.19; 0.5.19 accepts the
# cutedsl_mla and tokenspeed_mla decode backends (tokenspeed_mla its own kernel, with no
# flashinfer requirement); 0.5.20-0.5.22 add aiter; from 0.5.23 tokenspeed_mla is a deprecated
# alias of cutedsl_mla, renamed before the override runs.
_K3_OVERRIDE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("0.5.19", ("cutedsl_mla", "tokenspeed_mla")),
    ("0.5.20", ("cutedsl_mla", "tokenspeed_mla", "aiter")),
    ("0.5.23", ("cutedsl_mla", "aiter")),
)


def k3_dcp_backends(version: str) -> tuple[str, ...] | None:
    """The decode backends sglang ``version``'s Kimi-K3 DCP override accepts; None when that
    release has no such override (then no Kimi-K3 DCP check runs at all)."""
    from kimi_lsp.pep440 import InvalidVersion, Version

    try:
        v = Version(version)
    except InvalidVersion:
        return _K3_OVERRIDE[-1][1]
    allowed: tuple[str, ...] | None = None
    for since, backends in _K3_OVERRIDE:
        if v >= Version(since):
            allowed = backends
    return allowed


def backends_text(allowed: tuple[str, ...]) -> str:
    quoted = [f"'{b}'" for b in allowed]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


K3_ARCH = "KimiK3ForConditionalGeneration"
K3_TEXT_ARCH = "KimiK3LinearForCausalLM"
_K3_NAME = _regex.compile(r"kimi[-_ ]?k3", re.IGNORECASE)
_HUB_MODEL_ID = _regex.compile(r"[\w.-]+/[\w.-]+")  # `org/name`: a model the hub cache may hold
# Platform defaults that set --attention-backend before the model override (platform_hook.py)
_DEVICE_DEFAULT_BACKEND = {"cpu": "intel_amx or torch_native", "hpu": "torch_native", "npu": "ascend"}


@dataclass(frozen=True, slots=True)
class ModelFacts:
    arch: str | None  # architectures[0] when known
    evidence: str  # human-readable: where the architecture came from
    guessed: bool  # True when only the model name suggests Kimi-K3
    model: str | None  # the model path / repo id as written

    @property
    def is_k3(self) -> bool:
        return self.arch == K3_ARCH


@dataclass(frozen=True, slots=True)
class DecodeBackend:
    name: str | None  # resolved (after renames); None = unset -> sglang defaults to cutedsl_mla
    use: ArgUse | None  # the deciding flag occurrence
    written: str | None  # as written (tokenspeed_mla before the rename)
    from_device: str | None = None  # set by a --device platform default
    overridden: ArgUse | None = None  # the explicit backend flag that --device overrides


@dataclass(frozen=True, slots=True)
class K3Dcp:
    """A launch that reaches sglang's Kimi-K3 DCP override."""

    model: ModelFacts
    dcp_size: int
    dcp_use: ArgUse
    decode: DecodeBackend
    allowed: tuple[str, ...] = ("cutedsl_mla", "aiter")  # the decode backends the release accepts

    def anchor(self, launch: ResolvedLaunch) -> Location:
        """Where KL101/KL102/KL103 sit: the flag selecting the decode backend, else the DCP size."""
        # DESIGN.md: the flag that selects the decode backend, else the DCP size flag (a
        # --device platform default selects nothing on the command line)
        use = self.decode.use if self.decode.use is not None and not self.decode.from_device else self.dcp_use
        return use_location(launch, use)


def launched_from(launch: ResolvedLaunch, anchor: Location) -> tuple[Related, ...]:
    """When a diagnostic sits in a --config YAML, point back at the command that loads it."""
    cmd = launch.command
    if anchor.path == cmd.path:
        return ()
    return (Related(Location(cmd.path, cmd.program.span), f"launched here with `--config {launch.config_token.value if launch.config_token else anchor.path.name}`"),)


def decode_backend(launch: ResolvedLaunch) -> DecodeBackend:
    """The decode backend the Kimi-K3 hook sees, replaying sglang's resolution order
    (arg_groups/pipeline.py): the deprecated renames, then the platform hooks, then
    ``decode_attention_backend or attention_backend`` (attention_backends_of)."""
    explicit: dict[str, tuple[ArgUse, str]] = {}
    for dest in ("decode_attention_backend", "attention_backend"):
        use = launch.last(dest)
        if use is not None and use.value is not None:
            explicit[dest] = (use, use.value)
    device = launch.value("device") or ""
    # platform_hook.py / npu set_default_server_args: npu sets all three backends to ascend and
    # hpu sets attention_backend to torch_native, both over explicit values; cpu fills
    # attention_backend only when it is None
    if device == "npu":
        overridden = explicit.get("decode_attention_backend") or explicit.get("attention_backend")
        return _from_device(launch, "ascend", device, overridden)
    decode = explicit.get("decode_attention_backend")
    if decode is not None and decode[1]:
        return _explicit(launch, *decode)
    attention = explicit.get("attention_backend")
    if device == "hpu":
        return _from_device(launch, _DEVICE_DEFAULT_BACKEND[device], device, attention)
    if device == "cpu" and attention is None:
        return _from_device(launch, _DEVICE_DEFAULT_BACKEND[device], device, None)
    if attention is not None and attention[1]:
        return _explicit(launch, *attention)
    return DecodeBackend(None, None, None)


def _explicit(launch: ResolvedLaunch, use: ArgUse, written: str) -> DecodeBackend:
    # sglang's deprecated value renames (tokenspeed_mla -> cutedsl_mla from 0.5.23, compressed ->
    # dsv4) run before the Kimi hook: the release's schema says which it has
    renames = launch.schema.deprecated_values.get(use.flag.dest, {})
    return DecodeBackend(renames.get(written, written), use, written)


def _from_device(launch: ResolvedLaunch, name: str, device: str, overridden: tuple[ArgUse, str] | None) -> DecodeBackend:
    return DecodeBackend(
        name, launch.last("device"), None, from_device=device,
        overridden=overridden[0] if overridden is not None else None,
    )


def k3_dcp(ctx: LaunchContext) -> K3Dcp | None:
    """The launch's Kimi-K3 DCP facts, or None when sglang's override would not run."""

    def compute() -> K3Dcp | None:
        launch = ctx.launch
        dcp_use = launch.last("dcp_size")
        dcp = parse_int(dcp_use.value) if dcp_use is not None else None
        if dcp_use is None or dcp is None or dcp <= 1:
            return None
        model = model_facts(ctx)
        if not model.is_k3:
            return None
        allowed = k3_dcp_backends(launch.schema.version)
        if allowed is None:
            return None  # a release without the Kimi-K3 DCP override
        return K3Dcp(model, dcp, dcp_use, decode_backend(launch), allowed)

    return ctx.memo("k3_dcp", compute)


# -- which model -------------------------------------------------------------------------


def model_facts(ctx: LaunchContext) -> ModelFacts:
    return ctx.memo("model_facts", lambda: _model_facts(ctx))


def _model_facts(ctx: LaunchContext) -> ModelFacts:
    launch = ctx.launch
    model = launch.value("model_path")
    # --json-model-override-args '{"architectures": ...}' wins over everything
    override = launch.value("json_model_override_args")
    if override:
        import json  # here, not at start-up: only an override or a local config.json needs it

        try:
            data = json.loads(override)
        except ValueError:
            data = None
        if isinstance(data, dict) and "architectures" in data:
            return ModelFacts(_override_arch(data["architectures"]), _override_evidence(data["architectures"]), False, model)
    if model is None or model.lower() in ("none", "dummy"):
        # sglang skips every model-specific check for these
        return ModelFacts(None, "no model path", False, model)
    if launch.value("load_format") == "expert_pack":
        # expert_pack GGUF metadata rewrites the architecture to the text-only class
        return ModelFacts(K3_TEXT_ARCH, "--load-format expert_pack rewrites architectures", False, model)
    found = _config_json_arch(ctx, model)
    if found is not None:
        return found
    if _K3_NAME.search(model) and "linear" not in model.lower():
        return ModelFacts(K3_ARCH, f"the model name `{model}` (no config.json found)", True, model)
    return ModelFacts(None, "unknown model", False, model)


def _override_arch(value: object) -> str | None:
    """``architectures[0]`` after sglang's override: it setattr()s the JSON value onto the HF
    config as it is (utils/hf_transformers/config.py), so a string's first entry is its first
    character, and an empty or null value has none (sglang then fails to index it)."""
    if isinstance(value, (list, str)) and value:
        return str(value[0])
    return None


def _override_evidence(value: object) -> str:
    if isinstance(value, str):
        return "--json-model-override-args sets architectures to a string (sglang reads its first character)"
    return "--json-model-override-args sets architectures"


def _config_json_arch(ctx: LaunchContext, model: str) -> ModelFacts | None:
    """The architecture in the model's ``config.json``: beside the launch (or the repository
    root), else in the local Hugging Face cache."""
    ws = ctx.workspace
    local = ws.remembered(("config-json-local", ctx.launch.command.base_dir, model), lambda: _local_config_arch(ctx, model))
    if local is not None:
        return local
    if not _HUB_MODEL_ID.fullmatch(model):
        return None
    # the hub cache does not depend on where the launch is: once per model and cache settings
    return ws.remembered(("config-json-hub", model, _hub_env(ctx)), lambda: _hub_config_arch(ctx, model))


def _local_config_arch(ctx: LaunchContext, model: str) -> ModelFacts | None:
    ws = ctx.workspace
    bases = [ctx.launch.command.base_dir, ws.root]
    expanded = os.path.expanduser(model)
    candidates: list[Path] = []
    p = Path(expanded)
    if p.is_absolute():
        candidates.append(p / "config.json")
    else:
        candidates.extend(b / p / "config.json" for b in bases)
    for cfg in candidates:
        if ws.exists(cfg):
            arch = _read_arch(ws.text(cfg))
            if arch is not None:
                return ModelFacts(arch, f"`{_short(cfg, ws.root)}`", False, model)
    return None


def _hub_config_arch(ctx: LaunchContext, model: str) -> ModelFacts | None:
    """A Hugging Face repo id: its snapshots in the local hub cache."""
    ws = ctx.workspace
    for hub in _hub_dirs(ctx):
        snap = hub / f"models--{model.replace('/', '--')}" / "snapshots"
        touched(snap)
        try:
            snaps = sorted(snap.iterdir()) if snap.is_dir() else []
        except OSError:
            snaps = []
        for s in snaps:
            cfg = s / "config.json"
            if ws.exists(cfg):
                arch = _read_arch(ws.text(cfg))
                if arch is not None:
                    return ModelFacts(arch, "the Hugging Face cache snapshot's config.json", False, model)
    return None


def _read_arch(text: str | None) -> str | None:
    import json  # not at start-up: only an override or a local config.json needs it

    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    archs = data.get("architectures") if isinstance(data, dict) else None
    if isinstance(archs, list) and archs:
        return str(archs[0])
    return None


_HUB_VARS = ("HF_HUB_CACHE", "HF_HOME", "HUGGINGFACE_HUB_CACHE")


def _hub_env(ctx: LaunchContext) -> tuple[str, ...]:
    """What the hub caches depend on: those variables (the launch's own first), XDG_CACHE_HOME."""
    return (*(ctx.launch.env_value(name) or os.environ.get(name) or "" for name in _HUB_VARS),
            os.environ.get("XDG_CACHE_HOME") or "")


def _hub_dirs(ctx: LaunchContext) -> list[Path]:
    env = dict(zip((*_HUB_VARS, "XDG_CACHE_HOME"), _hub_env(ctx)))
    dirs: list[Path] = []
    if env.get("HF_HUB_CACHE"):
        dirs.append(Path(env["HF_HUB_CACHE"]).expanduser())
    if env.get("HUGGINGFACE_HUB_CACHE"):
        dirs.append(Path(env["HUGGINGFACE_HUB_CACHE"]).expanduser())
    if env.get("HF_HOME"):
        dirs.append(Path(env["HF_HOME"]).expanduser() / "hub")
    if not dirs:
        xdg = env.get("XDG_CACHE_HOME")
        base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
        dirs.append(base / "huggingface" / "hub")
    # a relative cache path on the launch is taken from where kimi-lsp runs (the repository)
    return [d if d.is_absolute() else ctx.workspace.root / d for d in dirs]


def _short(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def empty_span_at(span: Span) -> Span:
    return Span(span.start, span.start)
