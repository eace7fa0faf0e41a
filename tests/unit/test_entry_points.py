"""Entry points that take server arguments plus options of their own (issue 31): the benchmarks,
compile_deep_gemm and the router's launch_server, per release (knowledge/entry_points.py)."""
from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from kimi_lsp.engine import Engine
from kimi_lsp.knowledge import entry_points as ep
from kimi_lsp.knowledge.schema import load_schema_exact, shipped_versions
from kimi_lsp.workspace import Workspace
from tests.unit._launch import lint_script


def test_every_shipped_release_has_its_entry_points() -> None:
    for version in shipped_versions():
        assert ep.entry_parser(version, "sglang.bench_one_batch_server") is not None, version
        has_gemm = Version(version) >= Version("0.4.5.post3")
        assert (ep.entry_parser(version, "sglang.compile_deep_gemm") is not None) is has_gemm, version


@pytest.mark.parametrize(("version", "module", "runs", "missing"), [
    ("0.4.0", "sglang.bench_one_batch", None, False),
    ("0.4.0", "sglang.compile_deep_gemm", None, True),  # came with 0.4.5.post3
    ("0.5.14", "sglang.benchmark.one_batch", None, True),
    ("0.5.16", "sglang.bench_one_batch", "sglang.benchmark.one_batch", False),  # a shim
    ("0.5.20", "sglang.bench_offline_throughput", "sglang.benchmark.offline_throughput", False),
    ("0.5.21", "sglang.bench_one_batch", None, True),
    ("0.5.23", "sglang.bench_one_batch_server", "sglang.benchmark.one_batch_server", False),
])
def test_modules_per_release(version: str, module: str, runs: str | None, missing: bool) -> None:
    parser = ep.entry_parser(version, module)
    assert ep.missing_module(version, module) is missing
    assert (parser is None) is missing
    if parser is not None:
        assert parser.runs == runs
        assert parser.complete  # every option string in BenchArgs / CompileArgs is a literal
        own = {o for f in parser.flags for o in f.options}
        assert "--batch-size" in own or "--num-prompts" in own or module.endswith("gemm")


def test_the_replacement_is_named() -> None:
    assert ep.replacement("0.5.23", "sglang.bench_one_batch") == "sglang.benchmark.one_batch"
    assert ep.replacement("0.5.23", "sglang.bench_offline_throughput") == "sglang.benchmark.offline_throughput"


def test_router_options_are_read_from_router_releases() -> None:
    parser = ep.entry_parser("0.5.23", ep.ROUTER_LAUNCH)
    assert parser is not None and parser.router
    options = {o for f in parser.flags for o in f.options}
    assert {"--router-policy", "--router-dp-worker-base-port", "--worker-urls"} <= options
    assert "--host" not in options  # exclude_host_port: the server's own --host/--port stay
    assert parser.accepts_unknown("--router-added-later") and not parser.accepts_unknown("--tp-sise")
    assert not ep.missing_module("0.5.23", "sglang_router.launch_router")  # not an entry point followed


def test_module_of_program() -> None:
    assert ep.module_of("python3 -m sglang.bench_one_batch") == "sglang.bench_one_batch"
    assert ep.module_of("python -msglang.compile_deep_gemm") == "sglang.compile_deep_gemm"
    assert ep.module_of("") == ""


def test_entry_schema_is_built_once_per_release_and_module() -> None:
    schema = load_schema_exact("0.5.23")
    assert schema is not None
    first = ep.entry_schema(schema, "sglang.benchmark.one_batch")
    assert first is ep.entry_schema(schema, "sglang.benchmark.one_batch")  # cached: not rebuilt per launch
    assert first.exact("--batch-size") is not None and first.exact("--tp-size") is not None
    assert schema.exact("--batch-size") is None  # the server's own schema is left as it was
    assert ep.entry_schema(schema, "sglang.launch_server") is schema


def test_bench_flags_pass_and_typos_are_named_with_the_parser(tmp_path: Path) -> None:
    diags = lint_script(tmp_path, "0.5.23", "\n".join([
        "python -m sglang.benchmark.one_batch --model-path m --batch-size 1 16 --input-len 10 --output-len 5",
        "python -m sglang.benchmark.one_batch --model-path m --batch-sise 1",
    ]))
    assert [(d.code, d.location.span.start > 0) for d in diags] == [("KL201", True)]
    assert "of `python -m sglang.benchmark.one_batch`" in diags[0].message and "BenchArgs" in diags[0].message


def test_old_module_name_on_a_release_without_it(tmp_path: Path) -> None:
    diags = lint_script(tmp_path, "0.5.21", "python -m sglang.bench_one_batch --model-path m --batch-size 1")
    assert [d.code for d in diags] == ["KL201"]
    assert "No module named sglang.bench_one_batch" in diags[0].message
    assert "sglang.benchmark.one_batch" in diags[0].message
    # 0.5.20 still has it: no failure there, but stale on today's release, with the module to use
    # (issue 30: said like a removed flag)
    stale = lint_script(tmp_path, "0.5.20", "python -m sglang.bench_one_batch --model-path m --batch-size 1")
    assert [d.code for d in stale] == ["KL240"]
    assert "runs on sglang 0.5.20" in stale[0].message and "sglang.benchmark.one_batch" in stale[0].message


def test_router_launch_router_is_no_server_launch(tmp_path: Path) -> None:
    script = "python -m sglang_router.launch_router --worker-urls http://a --policy cache_aware --frob 1"
    assert lint_script(tmp_path, "0.5.23", script) == []
