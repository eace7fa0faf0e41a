"""Launch values + flags -> the decode shapes; the fallback --config reader."""
from __future__ import annotations

import pytest
from kimi_lsp.verify.shapes import (
    CONTRACT_SHAPES,
    KIMI_K3,
    ShapeError,
    ShapeOverrides,
    derive_shapes,
    pick_launch,
    read_config_yaml,
    read_launches,
)
from verify_fakes import DATA


def test_kimi_k3_dims():
    assert KIMI_K3.head_dim_qk == 576
    assert KIMI_K3.softmax_scale == pytest.approx(192 ** -0.5)
    assert round(KIMI_K3.softmax_scale, 4) == 0.0722


def test_defaults_without_a_launch():
    shapes = derive_shapes(None, ShapeOverrides())
    assert (shapes.heads, shapes.dcp_size, shapes.page_size, shapes.kv_dtype) == (96, 2, 64, "bf16")
    assert shapes.seq_lens == (257, 1000)
    assert shapes.q_lens == (1,)
    assert shapes.notes == ()
    assert shapes.problems() == ()
    assert shapes.source == "defaults"


def test_tp8_dcp8_fp8_launch():
    [settings] = read_config_yaml(DATA / "k3-dcp8-fp8.yaml")
    shapes = derive_shapes(settings, ShapeOverrides(), "k3.yaml")
    assert (shapes.heads, shapes.dcp_size, shapes.tp_size, shapes.kv_dtype) == (96, 8, 8, "fp8_e4m3")
    assert shapes.describe() == "H=96 W=8 page=64 kv=fp8_e4m3 B=2 G=257,1000 q_len=1"


def test_aliases_page_32_and_dspark_width():
    [settings] = read_config_yaml(DATA / "k3-dcp4-dspark.yaml")
    assert settings["tp_size"] == 8 and settings["dcp_size"] == 4
    shapes = derive_shapes(settings, ShapeOverrides())
    assert (shapes.heads, shapes.page_size, shapes.kv_dtype, shapes.q_lens) == (48, 32, "bf16", (1, 4))


@pytest.mark.parametrize(
    ("settings", "q_lens"),
    [
        ({"speculative_algorithm": "DSPARK"}, (1, 8)),
        ({"speculative_algorithm": "DSPARK", "dspark_block_size": 3}, (1, 4)),
        ({"speculative_algorithm": "dspark"}, (1,)),  # sglang compares case-sensitively
        ({"speculative_algorithm": "EAGLE", "speculative_num_draft_tokens": 4}, (1,)),
    ],
)
def test_speculative_widths(settings, q_lens):
    assert derive_shapes({"dcp_size": 2, "tp_size": 2, **settings}, ShapeOverrides()).q_lens == q_lens


def test_launch_without_dcp_uses_w2_and_coerces_page_size():
    [settings] = read_config_yaml(DATA / "k3-no-dcp.yaml")
    shapes = derive_shapes(settings, ShapeOverrides())
    assert shapes.dcp_size == 2 and shapes.heads == 24 and shapes.page_size == 64
    assert any("does not use DCP" in note for note in shapes.notes)
    assert any("coerces page_size 16 to 64" in note for note in shapes.notes)


def test_flags_override_the_launch():
    [settings] = read_config_yaml(DATA / "k3-dcp8-fp8.yaml")
    overrides = ShapeOverrides(dcp_size=4, tp_size=4, page_size=32, kv_cache_dtype="bf16", batch_size=3,
                               seq_lens=(100, 200))
    shapes = derive_shapes(settings, overrides)
    assert (shapes.dcp_size, shapes.tp_size, shapes.heads, shapes.page_size, shapes.kv_dtype) == (4, 4, 96, 32, "bf16")
    assert shapes.seq_lens == (100, 200, 100)


def test_flag_page_size_is_taken_verbatim():
    shapes = derive_shapes(None, ShapeOverrides(page_size=16))
    assert shapes.page_size == 16 and shapes.problems() == ()


def test_tokenspeed_alias_forces_fp8():
    [settings] = read_config_yaml(DATA / "k3-tokenspeed.yaml")
    shapes = derive_shapes(settings, ShapeOverrides())
    assert shapes.kv_dtype == "fp8_e4m3"
    assert derive_shapes(settings, ShapeOverrides(kv_cache_dtype="bf16")).kv_dtype == "bf16"


def test_dp_attention_divides_attention_tp():
    shapes = derive_shapes({"tp_size": 8, "dp_size": 2, "enable_dp_attention": True, "dcp_size": 4}, ShapeOverrides())
    assert shapes.attn_tp_size == 4 and shapes.heads == 96


def test_launch_that_omits_tp_uses_sglang_default_and_exceeds_the_kernel():
    shapes = derive_shapes({"dcp_size": 8}, ShapeOverrides())
    assert shapes.tp_size == 1 and shapes.heads == 768
    assert any("768 decode heads" in p for p in shapes.problems())


@pytest.mark.parametrize(
    ("settings", "overrides", "message"),
    [
        ({"kv_cache_dtype": "fp8_e5m2"}, ShapeOverrides(), "fp8_e5m2"),
        ({"kv_cache_dtype": ["fp8_e4m3"]}, ShapeOverrides(), "kv-cache-dtype"),  # a YAML list: unhashable
        ({"dcp_size": "eight"}, ShapeOverrides(), "dcp-size: expected an integer"),
        ({"tp_size": True}, ShapeOverrides(), "tp-size: expected an integer"),
        (None, ShapeOverrides(seq_lens=(4,)), None),
    ],
)
def test_shape_errors(settings, overrides, message):
    if message is None:
        derive_shapes(settings, overrides)  # 4 tokens are enough for q_len 1
        return
    with pytest.raises(ShapeError, match=message):
        derive_shapes(settings, overrides)


def test_sequence_shorter_than_the_speculative_width_is_an_error():
    with pytest.raises(ShapeError, match="shorter than the query length 8"):
        derive_shapes({"speculative_algorithm": "DSPARK"}, ShapeOverrides(seq_lens=(5,)))


@pytest.mark.parametrize(
    ("changes", "phrase"),
    [
        ({"heads": 0}, "outside the kernel's 1..128"),
        ({"page_size": 1}, "page size 1"),
        ({"page_size": 256}, "page size 256"),
        ({"attn_tp_size": 5}, "do not split over attention TP 5"),
    ],
)
def test_kernel_limit_problems(changes, phrase):
    import dataclasses

    shapes = dataclasses.replace(derive_shapes(None, ShapeOverrides()), **changes)
    assert any(phrase in problem for problem in shapes.problems())


def test_contract_shapes_are_valid():
    assert CONTRACT_SHAPES.problems() == ()


def test_pick_launch_prefers_the_dcp_one():
    assert pick_launch([{"tp_size": 8}, {"dcp_size": 8}, {"dcp_size": 4}]) == 1
    assert pick_launch([{"tp_size": 8}]) == 0
    assert pick_launch([]) is None


def test_read_config_yaml_edge_cases(tmp_path):
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    assert read_config_yaml(tmp_path / "list.yaml") == []
    with pytest.raises(ShapeError, match="not valid YAML"):
        read_config_yaml(DATA / "broken.yaml")


def test_read_launches_uses_the_engine_or_the_fallback():
    # whichever reader answers, the plain sglang --config keys come through as dests
    try:
        import kimi_lsp.engine  # noqa: F401
    except ImportError as exc:
        if exc.name != "kimi_lsp.engine":
            pytest.skip(f"kimi_lsp.engine does not import right now: {exc}")
    settings = read_launches(DATA / "k3-dcp8-fp8.yaml")[0]
    assert settings["dcp_size"] == 8 and settings["tp_size"] == 8


def test_read_launches_falls_back_only_when_the_engine_is_missing(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "kimi_lsp.engine", None)  # import -> ImportError(name=kimi_lsp.engine)
    assert read_launches(DATA / "k3-dcp8-fp8.yaml")[0]["kv_cache_dtype"] == "fp8_e4m3"
