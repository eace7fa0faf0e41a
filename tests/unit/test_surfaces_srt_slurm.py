"""srt-slurm recipes: each role map under ``backend.sglang_config`` is a launch, read as sglang's
own ``--config`` YAML, with the recipe's ``model.container`` as its image."""
from __future__ import annotations

from pathlib import Path

from kimi_lsp.surfaces import detect_surface, read_surface
from kimi_lsp.surfaces.model import Entry, Surface, SurfaceResult
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText


def raw(text: str, span: Span) -> str:
    return text[span.start : span.end]


def read(text: str, name: str = "recipes/h200/disagg.yaml") -> SurfaceResult:
    result = read_surface(SourceText(Path("/repo") / name, text))
    assert not result.notes, result.notes
    return result


RECIPE = """\
name: "disagg"
model:
  path: "dsr1"
  container: "lmsysorg/sglang:v0.5.12"   # é
backend:
  type: sglang
  decode_environment:
    SGLANG_X: '1'
  sglang_config:
    prefill:
      model-path: /model/
      tp_size: 8
    decode:
      model-path: /model/
      enable-dp-attention: true
      tp-size: 8
      tp-size: 16
"""


def test_each_role_is_a_launch_with_positions_image_and_env() -> None:
    assert detect_surface(Path("/repo/r.yaml"), RECIPE) is Surface.SRT_SLURM
    result = read(RECIPE)
    assert not result.problems and result.is_launch_file
    prefill, decode = result.launches
    for launch, role in ((prefill, "prefill"), (decode, "decode")):
        assert launch.surface is Surface.SRT_SLURM and launch.entry is Entry.CONFIG_FILE
        assert launch.program.value == f"sglang_config.{role}" and raw(RECIPE, launch.program.span) == role
        assert launch.image is not None and launch.image.value == "lmsysorg/sglang:v0.5.12"
        assert raw(RECIPE, launch.image.span) == '"lmsysorg/sglang:v0.5.12"'
        assert launch.doubt is None
    assert prefill.config is not None and decode.config is not None
    assert [(e.key.value, raw(RECIPE, e.key.span), e.value) for e in prefill.config.entries] == [
        ("model-path", "model-path", "/model/"), ("tp_size", "tp_size", 8)]
    assert [(e.key.value, e.value, raw(RECIPE, e.value_span)) for e in decode.config.entries] == [
        ("model-path", "/model/", "/model/"), ("enable-dp-attention", True, "true"), ("tp-size", 16, "16")]
    # the duplicate key is kept as sglang's reader keeps it: the later one, the earlier named
    (later, earlier), = decode.config.duplicates
    assert RECIPE.index("tp-size: 16") == later.span.start and RECIPE.index("tp-size: 8") == earlier.span.start
    assert prefill.env == () and [(v.name.value, v.value.value if v.value else None) for v in decode.env] == [("SGLANG_X", "1")]


def test_other_engines_and_lookalikes_are_not_recipes() -> None:
    trt = RECIPE.replace("type: sglang", "type: trtllm")
    assert read(trt).launches == ()
    # no sglang_config map: a Helm values file that happens to have a `backend:` key
    helm = "backend:\n  image: lmsysorg/sglang:v0.5.12\n  sglang_config: null\n"
    assert read(helm).launches == ()


def test_multi_variant_base_is_read_and_zip_overrides_are_not() -> None:
    text = (
        "base:\n  model: {container: lmsysorg/sglang:v0.5.12}\n  backend:\n    sglang_config:\n"
        "      aggregated: {model-path: /m, tp-size: 4}\n"
        "zip_override_a:\n  backend:\n    sglang_config:\n      aggregated:\n        cuda-graph-max-bs: [8, 16]\n"
    )
    (agg,) = read(text).launches
    assert agg.program.value == "sglang_config.aggregated" and agg.image is not None
    assert agg.config is not None and [e.key.value for e in agg.config.entries] == ["model-path", "tp-size"]
