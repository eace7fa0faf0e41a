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


def test_multi_variant_base_and_each_variant_srtctl_runs_are_read() -> None:
    text = (
        "base:\n  model: {container: lmsysorg/sglang:v0.5.12}\n  frontend: {type: sglang}\n  backend:\n"
        "    sglang_config:\n      aggregated: {tp-size: 4}\n"
        "zip_override_a:\n  backend:\n    sglang_config:\n      aggregated:\n        cuda-graph-max-bs: [8, 16]\n"
    )
    agg, v0, v1 = read(text).launches
    assert agg.image is not None and [t.value for t in agg.argv] == ["--model-path", "/model", "--tp-size", "4"]
    # variant i: the base map with item i of each list set over it, each word where it is written
    assert words(text, v0)[2:] == [("--cuda-graph-max-bs", "cuda-graph-max-bs"), ("8", "8"), ("--tp-size", "tp-size"), ("4", "4")]
    assert words(text, v1)[3] == ("16", "16") and raw(text, v1.program.span) == "aggregated"


OVERRIDES = """\
base:
  model: {path: dsr1, container: "lmsysorg/sglang:v0.5.12"}
  frontend: {type: sglang}
  backend:
    decode_environment: {A: '1', B: '2'}
    sglang_config:
      prefill: {tp-size: 8}
      decode:
        tp-size: 8
        load-balance-method: round_robin
        enable-dp-attention: true
override_tag:
  model: {container: "lmsysorg/sglang:v0.5.13"}
zip_override_z:
  name: [x, y]
  resources: {decode_nodes: [1, 2]}
  backend:
    decode_environment: {B: null, C: ['3', '4']}
    sglang_config:
      decode:
        load-balance-method: null
        enable-dp-attention: false
        cuda-graph-bs: [[1, 2], [4]]
        dp-size: [2]
zip_override_resources_only:
  resources: {decode_nodes: [1, 2]}
"""


def test_a_variant_is_deep_merge_of_base_and_section() -> None:
    result = read(OVERRIDES)
    assert not result.problems
    base_p, base_d, tag_p, tag_d, z0, z1 = result.launches  # a section touching no role adds nothing
    # a new container: every role is a launch of the new release, its image where it is written
    assert tag_p.image is not None and tag_p.image.value == "lmsysorg/sglang:v0.5.13"
    assert raw(OVERRIDES, tag_p.image.span) == '"lmsysorg/sglang:v0.5.13"' and words(OVERRIDES, tag_d) == words(OVERRIDES, base_d)
    # null deletes a key, false replaces true and srtctl leaves it out, a one-item list is broadcast,
    # a list of lists gives each variant its list
    assert [t.value for t in z0.argv][4:] == ["--cuda-graph-bs", "1", "2", "--dp-size", "2", "--tp-size", "8"]
    assert [t.value for t in z1.argv][4:] == ["--cuda-graph-bs", "4", "--dp-size", "2", "--tp-size", "8"]
    assert raw(OVERRIDES, z1.argv[5].span) == "4" and raw(OVERRIDES, z1.argv[7].span) == "2"
    env = [[(v.name.value, v.value.value if v.value else None) for v in lc.env] for lc in (z0, z1)]
    assert env == [[("A", "1"), ("C", "3")], [("A", "1"), ("C", "4")]]


def test_a_zip_section_srtctl_refuses_is_a_problem_and_no_launch() -> None:
    for lists, why in (("[4, 8]\n        dp-size: [1, 2, 4]", "lengths 2, 3"), ("[]", "empty list")):
        text = OVERRIDES.split("zip_override_z")[0] + f"zip_override_bad:\n  backend:\n    sglang_config:\n      decode:\n        tp-size: {lists}\n"
        result = read(text)
        assert len(result.launches) == 4 and len(result.problems) == 1
        (problem,) = result.problems
        assert why in problem.message and raw(text, problem.span) == "zip_override_bad"


def test_a_key_written_twice_in_a_role_map_rides_on_the_launch_for_kl217() -> None:
    _, decode = read(RECIPE).launches
    assert decode.config is not None and decode.config.entries == ()
    ((later, earlier),) = decode.config.duplicates
    assert RECIPE.count("\n", 0, later.span.start) == RECIPE.count("\n", 0, earlier.span.start) + 1


SWEEP = """\
name: sweep
model: {path: dsr1, container: "lmsysorg/sglang:v0.5.12"}
frontend: {type: sglang}
backend:
  sglang_config:
    aggregated:
      tp-size: "{tp}"
      cuda-graph-bs: "{bs}"
      served-model-name: "m-{tp}"
sweep:
  tp: [4, 8]
  bs: [[1, 2]]
"""


def test_a_sweep_is_one_launch_per_combination_each_value_where_the_sweep_lists_it() -> None:
    a, b = read(SWEEP).launches
    assert words(SWEEP, a)[2:] == [("--cuda-graph-bs", "cuda-graph-bs"), ("1", "1"), ("2", "2"),
                                   ("--served-model-name", "served-model-name"), ("m-4", '"m-{tp}"'),
                                   ("--tp-size", "tp-size"), ("4", "4")]
    assert words(SWEEP, b)[-1] == ("8", "8") and not b.argv[-3].exact  # an embedded placeholder: no place to edit
    no_sweep = SWEEP.split("sweep:\n")[0]  # without srtctl's sweep the placeholder is the value
    (lone,) = read(no_sweep).launches
    assert words(no_sweep, lone)[-1] == ("{tp}", '"{tp}"')


def test_a_recipe_key_written_twice_is_its_last_value() -> None:
    text = RECIPE.replace('  container: "lmsysorg/sglang:v0.5.12"', '  container: "lmsysorg/sglang:v0.5.4"\n  container: "lmsysorg/sglang:v0.5.12"')
    prefill, _ = read(text).launches
    assert prefill.image is not None and raw(text, prefill.image.span) == '"lmsysorg/sglang:v0.5.12"'
