"""`kimi-lsp export`: a TOML launch profile becomes an sglang --config YAML or a command line that
kimi-lsp (and sglang) read the same way as the profile."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PROFILE = """\
[sglang]
model-path = "moonshotai/Kimi-K3"
tp_size = 8
dcp-size = 8
decode-attention-backend = "cutedsl_mla"
enable-metrics = true
disable-radix-cache = false
cuda-graph-bs-decode = [1, 2, 4]
json-model-override-args = { architectures = ["KimiK3ForConditionalGeneration"] }

[sglang.env]
SGLANG_RAGGED_VERIFY_MODE = "static"
"""


def export(tmp: Path, to: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "server"))
    return subprocess.run(
        [sys.executable, "-m", "kimi_lsp", "export", "--to", to, str(tmp / "k3.toml")],
        env=env, text=True, capture_output=True, timeout=60,
    )


def check_codes(root: Path, *paths: str) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "server"), HF_HOME=str(root / ".hf"))
    r = subprocess.run(
        [sys.executable, "-m", "kimi_lsp", "--check", "-q", *paths], cwd=root, env=env, text=True, capture_output=True, timeout=60
    )
    return sorted(line.split()[1] for line in r.stdout.splitlines() if ": KL" in line)


def project(tmp: Path) -> Path:
    (tmp / ".git").mkdir()
    (tmp / "k3.toml").write_text(PROFILE)
    (tmp / "requirements.txt").write_text("flashinfer-python==0.6.16.post4\n")
    return tmp


def test_yaml_export_is_an_sglang_config_that_lints_like_the_profile(tmp_path: Path) -> None:
    root = project(tmp_path)
    r = export(root, "yaml")
    assert r.returncode == 0, r.stderr
    data = yaml.safe_load(r.stdout)
    assert data["tp-size"] == 8 and "tp_size" not in data  # sglang needs dashes
    assert data["cuda-graph-bs-decode"] == [1, 2, 4]
    assert "SGLANG_RAGGED_VERIFY_MODE=static" in r.stdout  # env is named, as a comment
    (root / "k3.yaml").write_text(r.stdout)
    # `disable-radix-cache = false` does nothing in either form (KL210, info)
    assert check_codes(root, "k3.yaml") == check_codes(root, "k3.toml") == ["KL101", "KL210"]


def test_args_export_is_a_command_line_that_lints_like_the_profile(tmp_path: Path) -> None:
    root = project(tmp_path)
    r = export(root, "args")
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip()
    assert line.startswith("SGLANG_RAGGED_VERIFY_MODE=static python3 -m sglang.launch_server ")
    assert "--enable-metrics" in line and "--disable-radix-cache" not in line
    (root / "serve.sh").write_text("#!/bin/sh\n" + line + "\n")
    assert check_codes(root, "serve.sh") == ["KL101"]


def test_export_reports_a_broken_profile(tmp_path: Path) -> None:
    (tmp_path / "k3.toml").write_text("[sglang]\ntp-size = \n")
    r = export(tmp_path, "yaml")
    assert r.returncode == 2 and "k3.toml:2:" in r.stderr
