"""``kimi-lsp launches``: every launch read, its form, the release it is judged by with the evidence,
and the pins that govern it (README "Command line")."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kimi_lsp.cli.main import main

FIXTURES = Path(__file__).parent / "fixtures"


def _case(name: str, tmp_path: Path) -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    (root / ".git").mkdir(exist_ok=True)
    return root


def test_json_lists_each_launch_with_release_evidence_and_pins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    root = _case("release_evidence_matrix", tmp_path)
    monkeypatch.chdir(root)
    assert main(["launches", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    launches = doc["launches"]
    assert [(x["path"], x["line"], x["column"], x["form"]) for x in launches] == [
        ("benchmarks/dsr1_fp8_mi355x.sh", 4, 1, "shell"), ("benchmarks/dsr1_fp8_mi355x.sh", 7, 1, "shell")]
    first = launches[0]
    assert first["release"] is None and first["judged_by"] == ["0.5.12"] and first["doubt"] is None
    assert first["evidence"] == [{"path": "configs/amd-master.yaml", "line": 4, "column": 10,
                                  "says": "image `lmsysorg/sglang:v0.5.12-rocm700-mi35x` names sglang 0.5.12"}]
    assert first["pins"] == []
    assert doc["summary"] == {"files": 2, "launches": 2}


def test_text_names_release_and_pins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "p"
    shutil.copytree(Path(__file__).parents[1] / "examples" / "k3-serving", root)
    (root / ".git").mkdir(exist_ok=True)
    monkeypatch.chdir(root)
    assert main(["launches", "deploy"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "deploy/k3-dcp.yaml:3:1: config-yaml config-file: sglang 0.5.23"
    assert "  pin: flashinfer-python==0.6.16.post4 (requirements.txt:4)" in out
    assert out[-1] == "1 launch in 1 file."


def test_a_missing_path_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["launches", "--format", "json", "nowhere"]) == 2
    assert json.loads(capsys.readouterr().out)["run_errors"]


def test_why_names_release_evidence_pins_config_and_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    (root / "requirements.txt").write_text("sglang==0.5.23\nflashinfer-python==0.7.2\n")
    (root / "conf.yaml").write_text("tp-size: 8\n")
    (root / "kimi-lsp.toml").write_text('ignore = ["KL240"]\n')
    (root / "s.sh").write_text("#!/bin/bash\necho hi\npython -m sglang.launch_server --model-path m --config conf.yaml\n")
    monkeypatch.chdir(root)
    assert main(["why", "s.sh:3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "s.sh:3:1: shell launch (launch_server)"
    assert "  release: sglang 0.5.23: sglang 0.5.23, from `sglang==0.5.23` at requirements.txt:1" in out
    assert "  governed by: flashinfer-python==0.7.2 (requirements.txt:2)" in out
    assert "  reads --config conf.yaml" in out
    assert "settings: from kimi-lsp.toml" in out and "  ignore = ('KL240',)" in out
    assert main(["why", "s.sh:1"]) == 0
    assert capsys.readouterr().out == "s.sh: no sglang launch read on line 1\n"
