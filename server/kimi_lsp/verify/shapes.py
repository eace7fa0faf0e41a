"""The decode shapes verify runs: Kimi-K3's MLA dims plus what the launch (or the flags) choose.

The numbers follow sglang 0.5.23's cutedsl_mla DCP decode (reference/gpu-verify.md §2.2-2.3):
the kernel sees ``96 / attn_tp * dcp`` query heads because q is gathered from the DCP ranks,
one KV head of 576 = 512 latent + 64 rope, and ``bmm1_scale = (qk_nope + qk_rope) ** -0.5``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class MlaDims:
    num_heads: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int

    @property
    def head_dim_qk(self) -> int:
        return self.kv_lora_rank + self.qk_rope_head_dim

    @property
    def softmax_scale(self) -> float:
        # sglang: layer.scaling = (qk_nope + qk_rope) ** -0.5; no rope_scaling on K3, so no mscale
        return float((self.qk_nope_head_dim + self.qk_rope_head_dim) ** -0.5)


KIMI_K3 = MlaDims(num_heads=96, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64)

# cute-dsl MLA kernel limits (mla_decode_fp16.py / mla_decode_fp8.py)
MAX_HEADS = 128
KV_DTYPES = ("bf16", "fp8_e4m3")
# sglang's accepted --kv-cache-dtype spellings for cutedsl_mla, mapped to what the kernel sees
_KV_DTYPE_OF = {None: "bf16", "auto": "bf16", "bf16": "bf16", "bfloat16": "bf16", "fp8_e4m3": "fp8_e4m3"}
KV_CACHE_DTYPE_CHOICES = ("auto", "bf16", "bfloat16", "fp8_e4m3")
DEFAULT_SEQ_LENS = (257, 1000)  # uneven, with partial pages and tails on every rank
DEFAULT_BATCH = 2
DEFAULT_DCP = 2  # the smallest W that compiles the rank-dependent mask; sglang never runs W=1


class ShapeError(ValueError):
    """The launch or the flags ask for something verify cannot turn into decode shapes."""


@dataclass(frozen=True)
class ShapeOverrides:
    """Command-line values; each one that is set beats the launch file."""

    dcp_size: int | None = None
    tp_size: int | None = None
    page_size: int | None = None
    kv_cache_dtype: str | None = None
    batch_size: int | None = None
    seq_lens: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Shapes:
    dcp_size: int
    tp_size: int
    attn_tp_size: int
    heads: int
    page_size: int
    kv_dtype: str
    batch_size: int
    seq_lens: tuple[int, ...]
    q_lens: tuple[int, ...]
    source: str
    notes: tuple[str, ...] = ()
    dims: MlaDims = KIMI_K3

    def problems(self) -> tuple[str, ...]:
        """Shapes the cute-dsl kernel refuses; a launch with them fails at its first decode."""
        found = []
        if self.dims.num_heads % self.attn_tp_size:
            found.append(
                f"{self.dims.num_heads} query heads do not split over attention TP {self.attn_tp_size}"
            )
        if not 1 <= self.heads <= MAX_HEADS:
            found.append(
                f"{self.heads} decode heads ({self.dims.num_heads}/attn_tp {self.attn_tp_size} "
                f"x dcp {self.dcp_size}) outside the kernel's 1..{MAX_HEADS}"
            )
        if self.page_size <= 1 or 128 % self.page_size:
            found.append(f"page size {self.page_size} must divide 128 and be > 1")
        if self.dcp_size < 1:
            found.append(f"dcp size {self.dcp_size} < 1")
        if self.kv_dtype not in KV_DTYPES:
            found.append(f"kv dtype {self.kv_dtype} not one of {', '.join(KV_DTYPES)}")
        return tuple(found)

    def describe(self) -> str:
        lens = ",".join(str(n) for n in self.seq_lens)
        qs = ",".join(str(q) for q in self.q_lens)
        return (
            f"H={self.heads} W={self.dcp_size} page={self.page_size} kv={self.kv_dtype} "
            f"B={self.batch_size} G={lens} q_len={qs}"
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "dcp_size": self.dcp_size,
            "tp_size": self.tp_size,
            "attn_tp_size": self.attn_tp_size,
            "heads": self.heads,
            "page_size": self.page_size,
            "kv_dtype": self.kv_dtype,
            "batch_size": self.batch_size,
            "seq_lens": list(self.seq_lens),
            "q_lens": list(self.q_lens),
            "notes": list(self.notes),
        }


# A fixed, valid shape for the argument-contract calls: the contract is about refusals, not the
# launch, and a launch with out-of-limit shapes must not turn every refusal into a shape error.
CONTRACT_SHAPES = Shapes(
    dcp_size=2, tp_size=2, attn_tp_size=2, heads=96, page_size=64, kv_dtype="bf16",
    batch_size=1, seq_lens=(128,), q_lens=(1,), source="contract",
)


def _int(settings: Mapping[str, object], key: str) -> int | None:
    value = settings.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ShapeError(f"{key.replace('_', '-')}: expected an integer, got {value!r}")
    try:
        # any YAML value: int() itself refuses what is not a number (as sglang's argparse type=int)
        number: int = int(value)  # type: ignore[call-overload]
        return number
    except (TypeError, ValueError):
        raise ShapeError(f"{key.replace('_', '-')}: expected an integer, got {value!r}") from None


def _speculative_width(settings: Mapping[str, object]) -> int | None:
    # Kimi-K3 hook: DSPARK (exact case) verifies q_len = num_draft_tokens or block_size+1 or 8
    if settings.get("speculative_algorithm") != "DSPARK":
        return None
    drafts = _int(settings, "speculative_num_draft_tokens")
    block = _int(settings, "dspark_block_size")
    return drafts or (block + 1 if block else None) or 8


def _uses_tokenspeed_alias(settings: Mapping[str, object]) -> bool:
    return "tokenspeed_mla" in (settings.get("decode_attention_backend"), settings.get("attention_backend"))


def derive_shapes(
    settings: Mapping[str, object] | None, overrides: ShapeOverrides, source: str = "defaults"
) -> Shapes:
    """Launch values (sglang dests) + flag overrides -> the shapes the decode kernel would see."""
    launch = settings or {}
    notes: list[str] = []

    dcp = overrides.dcp_size or _int(launch, "dcp_size")
    if dcp is None or (dcp <= 1 and overrides.dcp_size is None):
        if settings is not None:
            notes.append(f"the launch does not use DCP (dcp_size={dcp or 1}); verifying W={DEFAULT_DCP}")
        dcp = DEFAULT_DCP

    tp = overrides.tp_size or _int(launch, "tp_size")
    if tp is None:
        # Without a launch, assume DCP shards a TP group of its own size (96 heads at the kernel);
        # a launch that omits tp-size runs sglang's default of 1.
        tp = 1 if settings is not None else dcp
    attn_tp = tp
    if launch.get("enable_dp_attention") and (_int(launch, "dp_size") or 1) > 1:
        attn_tp = max(1, tp // (_int(launch, "dp_size") or 1))

    if overrides.page_size is not None:
        page = overrides.page_size
    else:
        page = _int(launch, "page_size") or 64
        if page not in (32, 64):
            # sglang coerces it (overrides.py:1164-1173) with a warning, not an error
            notes.append(f"sglang coerces page_size {page} to 64 for cutedsl_mla")
            page = 64

    raw_dtype: object = overrides.kv_cache_dtype
    if raw_dtype is None:
        raw_dtype = launch.get("kv_cache_dtype")
        if _uses_tokenspeed_alias(launch):
            notes.append("the tokenspeed_mla alias forces kv_cache_dtype=fp8_e4m3")
            raw_dtype = "fp8_e4m3"
    # a YAML list or mapping is not a dtype either (and cannot be looked up: unhashable)
    if not (raw_dtype is None or isinstance(raw_dtype, str)) or raw_dtype not in _KV_DTYPE_OF:
        raise ShapeError(
            f"kv-cache-dtype {raw_dtype!r}: cutedsl_mla supports only fp8_e4m3, bf16, bfloat16 or auto"
        )
    kv_dtype = _KV_DTYPE_OF[raw_dtype]

    batch = overrides.batch_size or DEFAULT_BATCH
    base_lens = overrides.seq_lens or DEFAULT_SEQ_LENS
    seq_lens = tuple(base_lens[i % len(base_lens)] for i in range(batch))

    width = _speculative_width(launch)
    q_lens = (1, width) if width and width > 1 else (1,)

    for name, value in (("batch size", batch), ("dcp size", dcp), ("tp size", tp)):
        if value < 1:
            raise ShapeError(f"{name} must be >= 1, got {value}")
    if min(seq_lens) < 1:
        raise ShapeError(f"sequence lengths must be >= 1, got {min(seq_lens)}")
    if max(q_lens) > min(seq_lens):
        raise ShapeError(f"sequence length {min(seq_lens)} is shorter than the query length {max(q_lens)}")

    heads = KIMI_K3.num_heads // attn_tp * dcp
    return Shapes(
        dcp_size=dcp, tp_size=tp, attn_tp_size=attn_tp, heads=heads, page_size=page,
        kv_dtype=kv_dtype, batch_size=batch, seq_lens=seq_lens, q_lens=q_lens,
        source=source, notes=tuple(notes),
    )


def pick_launch(launches: Sequence[Mapping[str, object]]) -> int | None:
    """The launch verify reproduces: the first one that uses DCP, else the first one."""
    for index, launch in enumerate(launches):
        dcp = launch.get("dcp_size")
        if isinstance(dcp, int) and not isinstance(dcp, bool) and dcp > 1:
            return index
    return 0 if launches else None


def read_launches(path: Path) -> list[dict[str, object]]:
    """Per launch in ``path``: sglang dests -> values, from the engine when it is there."""
    try:
        from kimi_lsp.engine import launch_settings
    except ImportError as exc:
        if exc.name != "kimi_lsp.engine":
            raise
        return read_config_yaml(path)
    launches = [dict(launch) for launch in launch_settings(path)]
    if not launches and path.suffix in (".yaml", ".yml"):
        # a bare sglang --config file names no command; read it as the launch it configures
        launches = [s for s in read_config_yaml(path) if "model_path" in s or "dcp_size" in s]
    return launches


# sglang aliases that a hand-written --config may use for the keys verify reads
_ALIASES = {
    "decode_context_parallel_size": "dcp_size",
    "tensor_parallel_size": "tp_size",
    "tp": "tp_size",
    "data_parallel_size": "dp_size",
    "dp": "dp_size",
}


def read_config_yaml(path: Path) -> list[dict[str, object]]:
    """Fallback reader: one sglang ``--config`` YAML file, top-level keys only.

    Used until the engine's launch_settings exists. sglang turns each key into ``--{key}``, so
    dashes and underscores name the same dest here (the linter, not verify, reports spelling).
    """
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ShapeError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        return []
    settings: dict[str, object] = {}
    for key, value in data.items():
        dest = str(key).strip().lstrip("-").replace("-", "_")
        settings[_ALIASES.get(dest, dest)] = value
    return [settings]
