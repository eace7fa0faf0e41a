"""Replay of bench/differential: random launches whose outcome sglang's own code recorded.

Each case in tests/data/oracle/differential-<release>.json is a small project (launch.sh,
requirements.txt pinning the release, a `--config` YAML, model directories) and what sglang's
`prepare_server_args` (+ the DCP hook and the Kimi-K3 override on releases that have them) did
with it, run with torch/triton stubbed (scripts/sglang_oracle.py --batch). kimi-lsp must report an
error with one of the sample's compared codes exactly where sglang raised. No network, no oracle
venv: the outcomes are recorded. Regenerate with `bench/differential/run --save-sample ...`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kimi_lsp.cli.main import main

DATA = Path(__file__).resolve().parents[1] / "data" / "oracle"
SAMPLES = sorted(DATA.glob("differential-*.json"))


def _stage(diag: dict[str, Any], doc: dict[str, Any]) -> str | None:
    """The stage of sglang's code that checks what the diagnostic says (bench/differential/run's
    `stage_of`), or None for checks the oracle did not run."""
    facts = doc.get("facts", {})
    if diag["code"] == "KL330" and ("uvicorn" in diag["message"] or not facts.get("logging_in_prepare", True)):
        return None
    stage = doc["compared_codes"].get(diag["code"])
    if facts.get("resolves_in_post_init") and stage in ("dcp", "k3"):
        return None
    return stage


def test_samples_exist() -> None:
    # 0.4.x (no --config), the verbatim merger (0.5.5), the DeprecatedAction that errors (0.5.19), the newest
    assert {p.name for p in SAMPLES} >= {"differential-0.4.10.json", "differential-0.5.5.json",
                                         "differential-0.5.19.json", "differential-0.5.23.json"}


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_kimi_lsp_agrees_with_sglang(sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(sample.read_text())
    cases = doc["cases"]
    assert len(cases) >= 100
    for case in cases:
        for rel, text in case["files"].items():
            path = tmp_path / case["id"] / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    rc = main(["--check", "--format", "json", "--no-cache", "--jobs", "1", "."])
    assert rc in (0, 1)
    out = json.loads(capsys.readouterr().out)
    flagged: dict[str, list[str]] = {}
    for diag in out["diagnostics"]:
        if diag["severity"] == "error" and _stage(diag, doc) is not None:
            flagged.setdefault(diag["path"].split("/", 1)[0], []).append(f"{diag['code']} {diag['message']}")
    wrong = []
    for case in cases:
        fails = not case["sglang"]["ok"]
        if fails != (case["id"] in flagged):
            said = case["sglang"].get("message", "accepts")
            wrong.append(f"{case['id']}: sglang {said!r}; kimi-lsp {flagged.get(case['id'], 'silent')}")
    by_cat = {cat: sum(c["cat"] == cat for c in cases) for cat in ("cli", "config", "k3")}
    assert not wrong, f"{len(wrong)} of {len(cases)} cases ({by_cat}) disagree:\n" + "\n".join(wrong[:20])
