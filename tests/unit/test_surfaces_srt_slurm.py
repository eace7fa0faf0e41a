"""srt-slurm recipes: each role map under ``backend.sglang_config`` is a launch whose command line
is the one srtctl builds from the map, each word where the recipe writes it, with the recipe's
``model.container`` as its image."""
from __future__ import annotations

from pathlib import Path

from kimi_lsp.surfaces import detect_surface, read_surface
from kimi_lsp.surfaces.model import Entry, LaunchCommand, Surface, SurfaceResult
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText


def raw(text: str, span: Span) -> str:
    return text[span.start : span.end]


def read(text: str, name: str = "recipes/h200/disagg.yaml") -> SurfaceResult:
    result = read_surface(SourceText(Path("/repo") / name, text))
    assert not result.notes, result.notes
    return result


def words(text: str, launch: LaunchCommand) -> list[tuple[str, str]]:
    return [(t.value, raw(text, t.span)) for t in launch.argv]


RECIPE = """\
name: "disagg"
model:
  path: "dsr1"
  container: "lmsysorg/sglang:v0.5.12"   # é
frontend:
  type: sglang
backend:
  type: sglang
  decode_environment:
    SGLANG_X: '1'
  sglang_config:
    prefill:
      model-path: /model/
      tp_size: 8
      enable-dp-attention: false
      disable-radix-cache: true
      cuda-graph-bs: [1, 2]
      nccl-port: 1234
      chunked-prefill-size: null
    decode:
      tp-size: 8
      tp-size: 16
"""


def test_each_role_is_the_command_srtctl_builds() -> None:
    assert detect_surface(Path("/repo/r.yaml"), RECIPE) is Surface.SRT_SLURM
    result = read(RECIPE)
    assert not result.problems and result.is_launch_file
    prefill, decode = result.launches
    for launch, role in ((prefill, "prefill"), (decode, "decode")):
        assert launch.surface is Surface.SRT_SLURM and launch.entry is Entry.LAUNCH_SERVER and launch.doubt is None
        assert launch.program.value == "python3 -m sglang.launch_server" and raw(RECIPE, launch.program.span) == role
        assert launch.image is not None and raw(RECIPE, launch.image.span) == '"lmsysorg/sglang:v0.5.12"'
    # keys sorted, `_` made `-`; false and null left out, true a bare flag, a list its items;
    # model-path and nccl-port are srtctl's own (it passes /model); the role's disaggregation mode added
    assert words(RECIPE, prefill) == [
        ("--model-path", ""), ("/model", '"dsr1"'), ("--disaggregation-mode", ""), ("prefill", "prefill"),
        ("--cuda-graph-bs", "cuda-graph-bs"), ("1", "1"), ("2", "2"),
        ("--disable-radix-cache", "disable-radix-cache"), ("--tp-size", "tp_size"), ("8", "8"),
    ]
    assert [t.exact for t in prefill.argv][-2:] == [False, True]  # a rewritten key is no place to edit
    assert words(RECIPE, decode)[-2:] == [("--tp-size", "tp-size"), ("16", "16")]  # the YAML keeps the last
    assert prefill.env == () and [(v.name.value, v.value.value if v.value else None) for v in decode.env] == [("SGLANG_X", "1")]


def test_a_dynamo_worker_carries_the_dynamo_doubt_and_an_hf_model() -> None:
    text = RECIPE.replace("  type: sglang\nbackend", "  type: dynamo\nbackend").replace('"dsr1"', '"hf:Qwen/Qwen3-8B"')
    prefill, _ = read(text).launches
    assert prefill.program.value == "python3 -m dynamo.sglang" and prefill.doubt is not None
    assert words(text, prefill)[:2] == [("--model-path", ""), ("Qwen/Qwen3-8B", '"hf:Qwen/Qwen3-8B"')]
    no_frontend = RECIPE.replace("frontend:\n  type: sglang\n", "")
    assert all(lc.doubt is not None for lc in read(no_frontend).launches)  # srtctl's default frontend


def test_other_engines_and_lookalikes_are_not_recipes() -> None:
    trt = RECIPE.replace("  type: sglang\n  decode", "  type: trtllm\n  decode")
    assert read(trt).launches == ()
    helm = "backend:\n  image: lmsysorg/sglang:v0.5.12\n  sglang_config: null\n"
    assert read(helm).launches == ()


def test_multi_variant_base_is_read_and_zip_overrides_are_not() -> None:
    text = (
        "base:\n  model: {container: lmsysorg/sglang:v0.5.12}\n  frontend: {type: sglang}\n  backend:\n"
        "    sglang_config:\n      aggregated: {tp-size: 4}\n"
        "zip_override_a:\n  backend:\n    sglang_config:\n      aggregated:\n        cuda-graph-max-bs: [8, 16]\n"
    )
    (agg,) = read(text).launches
    assert agg.image is not None and [t.value for t in agg.argv] == ["--model-path", "/model", "--tp-size", "4"]
