"""The shipped sglang schemas against sglang's own argparse parser (tests/data/oracle/).

The oracle files are dumps made by scripts/sglang_oracle.py from the real
`ServerArgs.add_cli_args` of a spread of releases (0.4.0, late 0.4.x, 0.5.5, 0.5.10, 0.5.21-0.5.23); the
shipped schemas are made statically by scripts/extract_sglang_schema.py for every release.
Equality of the two is what lets kimi-lsp trust the static data.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kimi_lsp.knowledge import _schema_store
from kimi_lsp.knowledge import schema as schema_mod
from kimi_lsp.knowledge.schema import Flag, check_value, load_schema, load_schema_exact, shipped_versions

ORACLE = Path(__file__).resolve().parents[1] / "data" / "oracle"
VERSIONS = shipped_versions()
ORACLE_VERSIONS = tuple(sorted((p.name[len("sglang-"):-len(".json")] for p in ORACLE.glob("sglang-*.json")),
                               key=schema_mod._version_key))
COMPARED_SECTIONS = ("config", "choice_lists", "type_data")


def _raw_schema(version: str) -> dict[str, Any]:
    return _schema_store._unpack_release(version)


def _oracle(name: str) -> dict[str, Any]:
    return json.loads((ORACLE / name).read_text(encoding="utf-8"))


def _probes(version: str, kind: str) -> list[dict[str, Any]]:
    return [p for p in _oracle(f"argparse-probes-{version}.json")["probes"] if p["kind"] == kind]


def test_every_release_from_0_4_0_is_shipped() -> None:
    # (the newest shipped release is whatever the store holds last: adding one changes no test)
    assert VERSIONS[0] == "0.4.0" and list(VERSIONS) == sorted(VERSIONS, key=schema_mod._version_key)
    assert {"0.4.0.post1", "0.4.10.post2", "0.5.1", "0.5.5", "0.5.15.post1", "0.5.21", "0.5.22", "0.5.23"} <= set(VERSIONS)
    assert len(VERSIONS) >= 92  # every 0.4.x/0.5.x release on the index, .postN included


def test_the_oracle_spans_old_and_new_releases() -> None:
    # The differential test below is only as good as its spread: hand-registered 0.4.x parsers
    # without `--config`, the verbatim merger (0.5.5), the dest-keyed one (0.5.10), and the
    # msgspec namespaces of 0.5.21+.
    assert {"0.4.0", "0.4.10.post2", "0.5.5", "0.5.10", "0.5.21", "0.5.22", "0.5.23"} <= set(ORACLE_VERSIONS)
    assert set(ORACLE_VERSIONS) <= set(VERSIONS)


@pytest.mark.parametrize("version", ORACLE_VERSIONS)
def test_static_schema_equals_oracle(version: str) -> None:
    static, oracle = _raw_schema(version), _oracle(f"sglang-{version}.json")
    assert [f["options"] for f in static["flags"]] == [f["options"] for f in oracle["flags"]]
    for mine, real in zip(static["flags"], oracle["flags"]):
        if mine["help"] is None and real["help"] is not None and not real["hidden"]:
            # The one documented exception: a help text built at run time (an f-string over a
            # runtime value) may be unknown statically. Everything else must match.
            real = {**real, "help": None}
        assert mine == real, mine["dest"]
    for section in COMPARED_SECTIONS:
        assert static[section] == oracle[section], section


@pytest.mark.parametrize("version", VERSIONS)
def test_loaded_flags_round_trip(version: str) -> None:
    schema, raw = load_schema(version), _raw_schema(version)
    assert schema.version == version
    assert len(schema.flags) == len(raw["flags"])
    for flag, entry in zip(schema.flags, raw["flags"]):
        assert flag.dest == entry["dest"] and list(flag.options) == entry["options"]
        assert flag.takes_value == (entry["nargs"] != 0)


@pytest.mark.parametrize("version", ORACLE_VERSIONS)
def test_match_agrees_with_argparse(version: str) -> None:
    schema = load_schema(version)
    probes = _probes(version, "match")
    assert len(probes) > 100
    for probe in probes:
        got = schema.match(probe["token"])
        if probe["result"] == "flag":
            assert isinstance(got, Flag), probe
            assert got.dest == probe["dest"] and probe["option"] in got.options, probe
        elif probe["result"] == "ambiguous":
            assert got == tuple(probe["matches"]), probe
        else:  # "unknown" (argparse: unrecognized), "positional" or "end_of_options"
            assert got is None, probe


@pytest.mark.parametrize("version", ORACLE_VERSIONS)
def test_check_value_agrees_with_argparse(version: str) -> None:
    schema = load_schema(version)
    probes = _probes(version, "value")
    assert len(probes) > 100
    for probe in probes:
        flag = schema.exact(probe["option"])
        assert flag is not None, probe
        got = check_value(flag, probe["value"])
        if probe["error"] is None:
            assert got is None, probe
        else:
            prefix = f"argument {flag.argparse_name}: "
            assert probe["error"].startswith(prefix), probe
            assert got == probe["error"][len(prefix):], probe


@pytest.mark.parametrize("version", ORACLE_VERSIONS)
def test_config_key_agrees_with_the_merger(version: str) -> None:
    schema = load_schema(version)
    for probe in _probes(version, "config"):
        if len(probe["yaml"]) != 1:
            continue
        (key, value), = probe["yaml"].items()
        flag = schema.config_key(key)
        error = probe["error"] or ""
        if error.startswith("Unsupported config option"):
            assert flag is not None and flag.config_refused, probe
            assert error.endswith(f"with action '{flag.config_refused}'"), probe
            continue
        assert flag is None or not flag.config_refused, probe
        if isinstance(value, bool):
            # store-true keys: `true` -> `--key`, `false` -> nothing; any other key -> `--key true`
            # (the verbatim merger of 0.5.1-0.5.7 writes every boolean that way)
            store_true = probe["merged"] in ([f"--{key}"], [])
            assert store_true == (schema.config_verbatim or (flag is not None and flag.action == "store_true")), probe


def test_config_refused_keys_0_5_23() -> None:
    schema = load_schema("0.5.23")
    assert len(schema.config_refused_keys) == 27
    assert schema.config_key("dcp-replicate-q-proj").config_refused == "BooleanOptionalAction"
    assert schema.config_key("no_dcp_replicate_q_proj").dest == "dcp_replicate_q_proj"
    assert schema.config_key("lora-paths").config_refused == "LoRAPathAction"
    assert schema.config_key("enable-hicache").dest == "enable_hierarchical_cache"
    assert schema.config_key("tp") is None  # no prefix matching in the merger's own lookup


def test_config_keys_were_dest_only_before_0_5_23() -> None:
    old = load_schema("0.5.22")
    assert old.config_key("tensor-parallel-size") is None
    assert old.config_key("tp-size").dest == "tp_size"
    assert old.config_key("enable-hicache") is None  # an alias: `enable-hicache: true` -> `--enable-hicache true`
    assert old.config_key("enable-hierarchical-cache").action == "store_true"


def test_known_prefixes_and_values() -> None:
    schema = load_schema("0.5.23")
    assert schema.match("--tp").dest == "tp_size"  # type: ignore[union-attr]
    assert schema.match("--tp-size=8").dest == "tp_size"  # type: ignore[union-attr]
    assert schema.match("--dcp") == ("--dcp-size", "--dcp-comm-backend", "--dcp-replicate-q-proj")
    assert schema.match("--no-such-flag") is None
    tp = schema.exact("--tp-size")
    assert tp is not None and check_value(tp, "x") == "invalid int value: 'x'"
    ctx = schema.exact("--context-length")
    assert ctx is not None and check_value(ctx, "128k") is None and check_value(ctx, "1Mi") is None
    assert check_value(schema.exact("--cuda-graph-backend-decode"), "tc_piecewise") == (  # type: ignore[arg-type]
        "tc_piecewise was removed; select breakable, full, or disabled")


def test_flags_and_deprecations_0_5_23() -> None:
    schema = load_schema("0.5.23")
    assert len(schema.flags) == 532  # 531 arguments + -h/--help
    assert schema.deprecated_values["decode_attention_backend"]["tokenspeed_mla"] == "cutedsl_mla"
    assert schema.deprecated_values["attention_backend"]["compressed"] == "dsv4"
    assert dict(schema.deprecated_values["tool_call_parser"]) == {"qwen25": "qwen", "glm45": "glm"}
    assert schema.exact("--enable-dp-attention").deprecated == "--attn-dp-size <dp-size>"  # type: ignore[union-attr]
    assert schema.deprecated_flags["grpc_mode"] == "--smg-grpc-mode"
    monokernel = schema.exact("--monokernel-backend")
    assert monokernel is not None and monokernel.takes_value and monokernel.dest == "enable_amd_monokernel"
    boolean = schema.exact("--no-dcp-replicate-q-proj")
    assert boolean is not None and not boolean.takes_value and boolean.action == "boolean_optional"
    assert schema.exact("--forward-pass-metrics-ipc-name").hidden  # type: ignore[union-attr]
    assert "cutedsl_mla" in schema.choice_lists["ATTENTION_BACKEND_CHOICES"]


def test_closest() -> None:
    schema = load_schema("0.5.23")
    assert schema.closest("--tp-szie") == "--tp-size"
    assert schema.closest("--attention-backends") == "--attention-backend"
    assert schema.closest("--decode-atention-backend=cutedsl_mla") == "--decode-attention-backend"
    assert schema.closest("tp_size") == "--tp-size"
    assert schema.closest("--zzzzqqqqxxxx") is None


def test_version_resolution() -> None:
    assert load_schema().version == VERSIONS[-1]
    assert load_schema("0.5.22.post1").version == "0.5.22"
    assert load_schema("0.5.23rc0").version == "0.5.22"
    assert load_schema("99.0").version == VERSIONS[-1]
    assert load_schema("0.0.1").version == VERSIONS[0]
    assert load_schema("0.4.1.post8").version == "0.4.1.post7"
    assert load_schema("0.5.0").version == "0.4.10.post2"  # there is no 0.5.0 on the index
    assert list(VERSIONS) == sorted(VERSIONS, key=schema_mod._version_key)


def test_load_schema_exact() -> None:
    assert load_schema_exact("0.5.5").version == "0.5.5"  # type: ignore[union-attr]
    assert load_schema_exact("v0.5.5") is load_schema("0.5.5")
    assert load_schema_exact("0.4.10.post2").version == "0.4.10.post2"  # type: ignore[union-attr]
    assert load_schema_exact("0.5.0") is None  # never released: no nearest-match here
    assert load_schema_exact("0.5.22.post1") is None
    assert load_schema_exact("99.0") is None
    assert load_schema_exact("latest") is None and load_schema_exact("") is None


def test_old_releases_have_their_own_flags_and_choices() -> None:
    old, new = load_schema("0.4.0"), load_schema("0.5.23")
    # A flag of 0.4.0 that later releases dropped, and the alias order of its day.
    assert old.exact("--disable-flashinfer") is not None and new.exact("--disable-flashinfer") is None
    assert old.exact("--tp-size").options == ("--tensor-parallel-size", "--tp-size")  # type: ignore[union-attr]
    # Choices that grew: cutedsl_mla is not a valid backend before 0.5.2x.
    assert old.exact("--attention-backend").choices == ("flashinfer", "triton", "torch_native")  # type: ignore[union-attr]
    assert "cutedsl_mla" not in load_schema("0.5.5").exact("--attention-backend").choices  # type: ignore[union-attr]
    assert "cutedsl_mla" in new.exact("--attention-backend").choices  # type: ignore[union-attr]
    assert check_value(old.exact("--attention-backend"), "fa3") is not None  # type: ignore[arg-type]
    assert check_value(load_schema("0.5.5").exact("--attention-backend"), "fa3") is None  # type: ignore[arg-type]
    # No `--config` and no merger before it existed.
    assert not old.config_merger and old.exact("--config") is None and not old.config_refused_keys
    mid = load_schema("0.5.5")  # `--config` with the first, verbatim merger
    assert mid.config_merger and mid.config_verbatim and mid.exact("--config") is not None
    assert mid.config_key("disable-radix-cache").action == "store_true"  # type: ignore[union-attr]
    assert mid.config_key("tp-size") is None  # emitted as `--tp-size 2`, argparse judges it
    assert new.config_merger and not new.config_verbatim and new.exact("--config") is not None


def test_load_time() -> None:
    from tests.reliability._support import work

    load_schema("0.5.23")
    schema_mod._load.cache_clear()
    # Counted, not timed (a 0.2 s limit flaked on a busy machine): ~85 calls, the schema read as
    # kept; building it again makes objects for each of sglang's ~650 options.
    assert work(lambda: load_schema("0.5.23")) < 1_000
