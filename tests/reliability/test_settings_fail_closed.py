"""A setting that would make a *safe* fix wrong is refused (issue 33): `flashinfer-target` must
name a flashinfer-python release the table shows with `enable_dcp`. "0.1.0" made the bump fix a
safe downgrade (KL101 stayed), "9.9.9" a pin no index has. The project file and the editor
validate through the same function (config.check_setting)."""
from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from kimi_lsp import config
from kimi_lsp.knowledge import flashinfer as fi
from kimi_lsp.lsp import settings as editor
from kimi_lsp.workspace import SourceText

from ._support import make_repo

K3 = "model-path: moonshotai/Kimi-K3\ntp-size: 8\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"
OLD_PIN = "flashinfer-python==0.6.16.post4\n"


def project(text: str) -> config.Settings:
    return config.parse_settings(SourceText(Path("/proj/kimi-lsp.toml"), text))


BAD = ["0.1.0", "9.9.9", "0.6.16.post4", "0.6.16"]


@pytest.mark.parametrize("target", BAD)
def test_a_target_without_enable_dcp_is_kl002_and_left_unset(target: str) -> None:
    s = project(f'flashinfer-target = "{target}"\n')
    assert s.flashinfer_target is None  # the fix's own target stands
    assert len(s.problems) == 1 and "`flashinfer-target`" in s.problems[0].message
    assert target in s.problems[0].message and fi.first_good_final() in s.problems[0].message


@pytest.mark.parametrize("target", BAD)
def test_the_editor_refuses_the_same_targets(target: str) -> None:
    e = editor.parse({"kimi-lsp": {"flashinferTarget": target}})
    assert "flashinfer_target" not in e.overrides
    assert len(e.problems) == 1 and target in e.problems[0]


@pytest.mark.parametrize("target", ["0.6.17", "0.6.17rc1", str(fi.releases()[-1])])
def test_a_release_with_enable_dcp_is_accepted(target: str) -> None:
    assert fi.has_enable_dcp(target)
    assert project(f'flashinfer-target = "{target}"\n').flashinfer_target == target
    assert editor.parse({"kimi-lsp": {"flashinfer-target": target}}).overrides["flashinfer_target"] == target


def test_check_reports_kl002_and_keeps_the_safe_bump_correct(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "pyproject.toml").write_text('[tool.kimi-lsp]\nflashinfer-target = "0.1.0"\n', "utf-8")
    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("KIMI_LSP_NO_CACHE", "1")
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        rc = config_main(["--check", "--format", "json", "."])
    diags = json.loads(out.getvalue())["diagnostics"]
    assert rc == 1
    assert [(d["path"], d["code"], d["severity"]) for d in diags if d["code"] == "KL002"] == [("pyproject.toml", "KL002", "error")]
    kl101 = next(d for d in diags if d["code"] == "KL101")
    safe = [e["new_text"] for f in kl101["fixes"] if f["applicability"] == "safe" for e in f["edits"]]
    assert safe and all(fi.has_enable_dcp(t.lstrip("=")) for t in safe), safe  # never the 0.1.0 downgrade


def config_main(argv: list[str]) -> int:
    from kimi_lsp.cli.main import main

    return main(argv)
