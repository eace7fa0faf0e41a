"""Debian's Neovim 0.7 as a real editor client, headless (skipped only when ``nvim`` is absent)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
NVIM = shutil.which("nvim")

pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not on PATH (CI installs Debian's neovim)")


def test_neovim_quickfix_edits_pin_file_and_clears(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "k3.yaml").write_text(
        "model-path: moonshotai/Kimi-K3\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"
    )
    (root / "requirements.txt").write_text("flashinfer-python==0.6.16.post4\n")
    out = tmp_path / "result.txt"
    env = dict(os.environ)
    env.update(
        KIMI_ROOT=str(root),
        KIMI_OUT=str(out),
        KIMI_PYTHON=sys.executable,
        PYTHONPATH=os.pathsep.join(p for p in (str(REPO / "server"), env.get("PYTHONPATH")) if p),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    proc = subprocess.run(
        [NVIM, "--headless", "--clean", "-n", "-c", f"luafile {HERE / 'kimi_quickfix.lua'}"],
        env=env,
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = out.read_text() if out.exists() else ""
    assert proc.returncode == 0, f"nvim exited {proc.returncode}\n{report}\n{proc.stdout}\n{proc.stderr}"
    lines = report.splitlines()
    assert "diagnostic 2:0 kimi-lsp KL101 severity 2" in lines, report  # severity from the editor settings
    assert "action Bump flashinfer-python to 0.6.17 in requirements.txt (preferred)" in lines, report
    assert "requirements flashinfer-python==0.6.17|" in lines, report
    assert "cleared true" in lines, report
    assert "hover `--dcp-size`" in lines, report
    assert (root / "requirements.txt").read_text() == "flashinfer-python==0.6.17\n"
