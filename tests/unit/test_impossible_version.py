"""A version that is no version at all is not "a release newer than the data" (issue 30): as a
setting it is KL002 (the project file) or a usage error (the command line); as a pin it is named
as no version, never as possibly newer than the newest release kimi-lsp knows."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_lsp.cli.main import main
from kimi_lsp.knowledge.schema import shipped_versions
from kimi_lsp.pep440 import Version

IMPOSSIBLE = ["banana", "0.0.0.dev-x"]
LAUNCH = "python -m sglang.launch_server --model-path m --frobnicate 3\n"


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "run.sh").write_text(LAUNCH)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, object]], str]:
    rc = main(["--check", "--no-cache", "--format", "json", *args])
    out, err = capsys.readouterr()
    return rc, (json.loads(out)["diagnostics"] if out.strip() else []), err


@pytest.mark.parametrize("version", IMPOSSIBLE)
def test_an_impossible_version_setting_is_kl002(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str], version: str) -> None:
    _project(tmp_path, monkeypatch, {"kimi-lsp.toml": f'sglang-version = "{version}"\n'})
    rc, diags, _ = _check(capsys, ".")
    assert rc == 1
    assert [(d["path"], d["code"]) for d in diags if d["code"] == "KL002"] == [("kimi-lsp.toml", "KL002")]
    assert any(d["code"] == "KL201" for d in diags)  # the launch is still checked, never a silent pass


@pytest.mark.parametrize("version", IMPOSSIBLE)
def test_an_impossible_version_on_the_command_line_is_a_usage_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], version: str) -> None:
    _project(tmp_path, monkeypatch, {})
    assert main(["--check", "--no-cache", "--sglang-version", version, "."]) == 2
    assert "--sglang-version" in capsys.readouterr().err


@pytest.mark.parametrize("version", IMPOSSIBLE)
def test_an_impossible_pin_is_named_as_no_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str], version: str) -> None:
    _project(tmp_path, monkeypatch, {"requirements.txt": f"sglang=={version}\n"})
    _, diags, _ = _check(capsys, ".")
    (d,) = [d for d in diags if d["code"] == "KL201"]
    assert f"`{version}` is not a version" in str(d["message"])
    assert "may be newer" not in str(d["message"])


def test_a_release_newer_than_the_data_is_still_said_to_be_maybe_newer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    newest = shipped_versions()[-1]
    major, minor = Version(newest).release[:2]
    _project(tmp_path, monkeypatch, {"requirements.txt": f"sglang=={major}.{minor + 1}.0\n"})
    _, diags, _ = _check(capsys, ".")
    (d,) = [d for d in diags if d["code"] == "KL201"]
    assert f"it may be newer than sglang {newest}" in str(d["message"])
