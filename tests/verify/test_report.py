"""Table and JSON rendering of a run."""
from __future__ import annotations

import json

from kimi_lsp.verify.report import RunInfo, render_json, render_table, summary
from kimi_lsp.verify.shapes import ShapeOverrides, derive_shapes
from kimi_lsp.verify.stages import exit_code, run_stages
from verify_fakes import H200, FakeDevice, FakeKernel, make_context

SHAPES = derive_shapes(None, ShapeOverrides())


def _run(**kwargs):
    results = run_stages(make_context(**kwargs))
    return results, exit_code(results)


def test_json_document_shape():
    results, code = _run()
    document = json.loads(render_json(results, code, RunInfo("0.1.0", SHAPES, "deploy/k3.yaml", 0, 2)))
    assert document["version"] == "0.1.0"
    assert [s["id"] for s in document["stages"]] == [
        "packages", "signature-static", "signature-runtime", "cuda", "arch", "offline", "contract", "kernel", "timing"]
    for stage in document["stages"]:
        assert set(stage) == {"id", "status", "reason", "evidence", "seconds"}
        assert stage["status"] in {"PASS", "FAIL", "WARN", "SKIP", "UNSUPPORTED"}
        assert isinstance(stage["reason"], str) and "\n" not in stage["reason"]
    s = document["summary"]
    assert s["verdict"] == "verified" and s["exit_code"] == 0
    assert s["dcp_signature"] is True
    assert s["device"] == "NVIDIA B200" and s["cc"] == [10, 0]
    assert s["flashinfer"] == "0.6.17"
    assert s["shapes"]["heads"] == 96 and s["launch"] == "deploy/k3.yaml" and s["launch_count"] == 2


def test_json_summary_on_h200():
    results, code = _run(kernel=FakeKernel(capability=(9, 0)), device=FakeDevice(H200))
    s = summary(results, code, RunInfo("0.1.0", SHAPES))
    assert (s["verdict"], s["exit_code"], s["cc"]) == ("unsupported architecture", 4, [9, 0])
    assert "requires SM100+" in s["message"]


def test_json_is_serialisable_with_odd_evidence():
    from kimi_lsp.verify.model import StageResult, Status

    odd = [StageResult("packages", Status.PASS, "x", {"path": __import__("pathlib").Path("/a"), "t": (1, 2)})]
    document = json.loads(render_json(odd, 3, RunInfo("0.1.0", None)))
    assert document["stages"][0]["evidence"] == {"path": "/a", "t": [1, 2]}
    assert document["summary"]["shapes"] is None


def test_table_lists_every_stage_with_status_time_and_reason():
    results, code = _run(device=FakeDevice(None))
    text = render_table(results, code, RunInfo("0.1.0", SHAPES, "k3.yaml", 1, 3))
    lines = text.splitlines()
    assert lines[0] == "kimi-lsp verify 0.1.0: k3.yaml (launch 2 of 3)"
    assert lines[1] == "shapes: H=96 W=2 page=64 kv=bf16 B=2 G=257,1000 q_len=1"
    rows = [line for line in lines if line.split(" ", 1)[0] in {r.id for r in results}]
    assert [row.split()[0] for row in rows] == [r.id for r in results]
    assert all(row.split()[1] in {"PASS", "SKIP", "WARN"} for row in rows)
    assert lines[-1].startswith("exit 3: not verifiable here (no CUDA device")
    assert "static checks: packages PASS, signature-static PASS, signature-runtime PASS, offline PASS" in lines[-1]


def test_table_evidence_is_indented_and_optional():
    results, code = _run()
    with_evidence = render_table(results, code, RunInfo("0.1.0", SHAPES))
    assert "                      flashinfer-python: 0.6.17" in with_evidence
    without = render_table(results, code, RunInfo("0.1.0", SHAPES), evidence=False)
    assert "flashinfer-python: 0.6.17" not in without
    assert without.splitlines()[-1] == (
        "exit 0: verified: the DCP decode kernel runs on this GPU and matches the reference")


def test_table_names_the_first_failure_and_strict_warnings():
    from verify_fakes import OldKernel

    results, code = _run(kernel=OldKernel())
    assert render_table(results, code, RunInfo("0.1.0", SHAPES)).splitlines()[-1].startswith(
        "exit 1: failed: signature-runtime: sglang raises")
    from verify_fakes import FakePackages

    results = run_stages(make_context(packages=FakePackages(versions={"flashinfer-python": "0.6.17"})))
    code = exit_code(results, strict=True)
    assert code == 1
    assert render_table(results, code, RunInfo("0.1.0", SHAPES, strict=True)).splitlines()[-1].startswith(
        "exit 1: failed (--strict): offline:")


def test_table_notes_and_internal_errors():
    import dataclasses

    results, _ = _run()
    results[2] = dataclasses.replace(results[2], internal=True, reason="internal error in verify: KeyError: 'x'")
    shapes = dataclasses.replace(SHAPES, notes=("sglang coerces page_size 16 to 64 for cutedsl_mla",))
    text = render_table(results, 2, RunInfo("0.1.0", shapes))
    assert "  note: sglang coerces page_size 16 to 64" in text
    assert text.splitlines()[-1] == "exit 2: signature-runtime: internal error in verify: KeyError: 'x'"
