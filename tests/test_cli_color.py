"""Text output on a terminal: codes coloured by severity, the severity named, the source line with
a caret under the span (ruff's, hadolint's way); NO_COLOR and FORCE_COLOR honoured; pipes, files
and CI logs keep the plain `path:line:col: CODE message` lines byte for byte."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kimi_lsp.cli.main import main
from kimi_lsp.cli.output import use_color

EXAMPLE = Path(__file__).parents[1] / "examples" / "k3-serving"


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(("env", "tty", "want"), [
    ({}, True, True),
    ({}, False, False),
    ({"NO_COLOR": "1"}, True, False),
    ({"NO_COLOR": ""}, True, True),  # an empty NO_COLOR does not count (no-color.org)
    ({"FORCE_COLOR": "1"}, False, True),
    ({"FORCE_COLOR": "0"}, False, False),
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False, True),
    ({"TERM": "dumb"}, True, False),
])
def test_when_colour_is_used(env: dict[str, str], tty: bool, want: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert use_color(_Stream(tty)) is want


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **env: str) -> str:
    root = tmp_path / "p"
    shutil.copytree(EXAMPLE, root)
    (root / ".git").mkdir(exist_ok=True)
    monkeypatch.chdir(root)
    for k in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert main(["--check", "--no-cache", "deploy/k3-dcp.yaml"]) == 1
    return capsys.readouterr().out


def test_a_pipe_gets_the_plain_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(tmp_path, monkeypatch, capsys)
    assert "\033" not in out and " | " not in out
    assert out.splitlines()[0].startswith("deploy/k3-dcp.yaml:3:1: KL329 [*] sglang 0.5.23 requires")


def test_a_terminal_gets_colour_severity_and_a_caret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(tmp_path, monkeypatch, capsys, FORCE_COLOR="1").splitlines()
    i = next(n for n, line in enumerate(out) if "KL101" in line)
    assert "\033[1;31mKL101\033[0m" in out[i] and "\033[1;31merror\033[0m: flashinfer-python==0.6.16.post4" in out[i]
    assert out[i + 1] == "  |"
    assert out[i + 2] == "8 | decode-attention-backend: cutedsl_mla"
    assert out[i + 3] == "  | \033[1;31m" + "^" * len("decode-attention-backend: cutedsl_mla") + "\033[0m"
