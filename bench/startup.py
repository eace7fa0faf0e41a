#!/usr/bin/env python3
"""Start-up benchmark: one launch file, a fresh process per run (run it through ``bench/run --startup``).

The pre-commit case of issue 16: ``kimi-lsp --check FILE`` on one sglang ``--config`` YAML (a
Kimi-K3 DCP launch, so the pin rules run) in two projects, one pinned by a hand-written
``requirements.txt`` and one by the real 359 KB ``uv.lock`` of ``tests/pins_fixtures/uv-lock/
sglang-only``. Per project, interleaved (so that load changes hit every command alike):

- the floor ``python -c "import yaml"``;
- ``kimi-lsp --check FILE``, a result-cache hit (the warm-up runs fill the cache);
- ``kimi-lsp --check --no-cache FILE`` (every run lints);
- ``yamllint FILE``.

Prints a markdown table with medians and each figure as a ratio to the floor and to yamllint, and
the targets of issue 16 (no-cache <= 1.2x floor and <= 0.7x yamllint; cache hit <= 1.05x floor).
``--baseline KIMI_LSP`` adds another installed ``kimi-lsp`` (e.g. a venv built from main) to the
same interleaved runs, so that a before/after comparison sees the same machine load.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402  (bench/ is not a package)

PINS = harness.REPO / "tests" / "pins_fixtures"

CONFIG = """\
# sglang --config for the Kimi-K3 deployment
model-path: moonshotai/Kimi-K3
tp-size: 8
dcp-size: 8
decode-attention-backend: cutedsl_mla
mem-fraction-static: 0.88
port: 30000
max-running-requests: 128
trust-remote-code: true
"""

REQUIREMENTS = "# serving stack\nsglang==0.5.23\nflashinfer-python==0.6.16.post4\ntorch==2.9.1\n"


def make_projects(root: Path) -> dict[str, Path]:
    """Two repositories, each with ``deploy/k3.yaml``: one pinned by requirements.txt, one by uv.lock."""
    out: dict[str, Path] = {}
    for name in ("requirements", "uv-lock"):
        proj = root / name
        (proj / ".git").mkdir(parents=True)  # a repository root for pin discovery; empty
        (proj / "deploy").mkdir()
        (proj / "deploy" / "k3.yaml").write_text(CONFIG, "utf-8")
        if name == "requirements":
            (proj / "requirements.txt").write_text(REQUIREMENTS, "utf-8")
        else:
            for f in ("uv.lock", "pyproject.toml"):
                shutil.copyfile(PINS / "uv-lock" / "sglang-only" / f, proj / f)
        out[name] = proj
    return out


def measure(proj: Path, repeat: int, baseline: str | None = None) -> dict[str, dict[str, float]]:
    py = str(harness.BIN / "python") if (harness.BIN / "python").exists() else sys.executable
    rel = "deploy/k3.yaml"
    cmds = {
        "floor": [py, "-c", "import yaml"],
        "kimi-hit": [harness.tool("kimi-lsp"), "--check", rel],
        "kimi-nocache": [harness.tool("kimi-lsp"), "--check", "--no-cache", rel],
        "yamllint": [harness.tool("yamllint"), rel],
    }
    if baseline:
        cmds["base-hit"] = [baseline, "--check", rel]
        cmds["base-nocache"] = [baseline, "--check", "--no-cache", rel]
    return harness.interleaved(cmds, proj, repeat, warmup=3)


def report(results: dict[str, dict[str, dict[str, float]]], repeat: int, argv: str) -> str:
    m = harness.machine()
    lines = [
        f"Recorded {time.strftime('%Y-%m-%d %H:%M %Z')} by `{argv}`: {m['cpu']}, {m['cores']} cores, "
        f"load average {', '.join(f'{x:.2f}' for x in m['loadavg_start'])}; {repeat} interleaved runs each, medians of wall time.",
        "",
        "| project | floor | yamllint | `--check` (cache hit) | `--check --no-cache` | hit / floor | no-cache / floor | no-cache / yamllint |",
        "|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for name, res in results.items():
        f, y, h, n = (res[k]["wall"] for k in ("floor", "yamllint", "kimi-hit", "kimi-nocache"))
        lines.append(
            f"| {name} | {f * 1000:.0f} ms | {y * 1000:.0f} ms | {h * 1000:.0f} ms | {n * 1000:.0f} ms "
            f"| {h / f:.2f}x | {n / f:.2f}x | {n / y:.2f}x |"
        )
        said = lambda ok: "met" if ok else "not met"  # noqa: E731
        verdicts.append(f"{name}: cache hit <= 1.05x floor **{said(h / f <= 1.05)}**; no-cache <= 1.2x floor "
                        f"**{said(n / f <= 1.2)}**; no-cache <= 0.7x yamllint **{said(n / y <= 0.7)}**.")
    if any("base-hit" in res for res in results.values()):
        lines += ["", "Baseline (`--baseline`), same interleaved runs:", "",
                  "| project | baseline hit | baseline no-cache | hit / floor | no-cache / floor | no-cache / yamllint | this tree / baseline (hit, no-cache) |",
                  "|---|---|---|---|---|---|---|"]
        for name, res in results.items():
            f, y = res["floor"]["wall"], res["yamllint"]["wall"]
            bh, bn = res["base-hit"]["wall"], res["base-nocache"]["wall"]
            lines.append(f"| {name} | {bh * 1000:.0f} ms | {bn * 1000:.0f} ms | {bh / f:.2f}x | {bn / f:.2f}x | {bn / y:.2f}x "
                         f"| {res['kimi-hit']['wall'] / bh:.2f}x, {res['kimi-nocache']['wall'] / bn:.2f}x |")
    lines += ["", *verdicts, ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="kimi-lsp one-file start-up benchmark (use bench/run --startup)")
    p.add_argument("--runs", type=int, default=21, help="interleaved runs per command (default 21)")
    p.add_argument("--baseline", default=None, metavar="KIMI_LSP", help="another kimi-lsp executable to time alongside")
    ns = p.parse_args(argv)
    # a private cache directory: the hit runs must not read entries of another checkout
    with tempfile.TemporaryDirectory(prefix="kimi-startup-") as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        projects = make_projects(Path(tmp))
        # The result cache stores no answer that depends on a file changed (mtime or ctime) within
        # the 2 s before its run (cache.py's racy rule): the projects and the cache directory the
        # first run makes must be older than that, or the first project's "hits" are misses
        # until 2 s have passed, and its median depends on --runs.
        # The first run also writes what kimi-lsp keeps next to its bytecode (kimi_lsp/_imports.py,
        # _kept.py), as it does for a user: this environment sets PYTHONDONTWRITEBYTECODE=1, under
        # which nothing is written and every run would import each module the slow way.
        prime_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for proj in projects.values():
            for exe in (harness.tool("kimi-lsp"), *([ns.baseline] if ns.baseline else [])):
                subprocess.run([exe, "--check", "deploy/k3.yaml"], cwd=proj, capture_output=True, env=prime_env)
        time.sleep(2.5)
        results = {name: measure(proj, ns.runs, ns.baseline) for name, proj in projects.items()}
    args = sys.argv[1:] if argv is None else argv
    print(report(results, ns.runs, "bench/run --startup " + " ".join(args)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
