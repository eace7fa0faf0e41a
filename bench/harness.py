#!/usr/bin/env python3
"""Benchmark harness for ``kimi-lsp --check`` (run it through ``bench/run``).

Runs, in one go and side by side:

1. one launch file, cold: ``kimi-lsp --check FILE`` vs ``yamllint FILE`` vs the floor
   ``python -c "import yaml"`` (runs interleaved, medians of wall and CPU time);
2. corpora of 1, 10, 100, 1,000 and 10,000 launch files (``bench/gen_corpus.py``):
   ``kimi-lsp --check DIR`` (files/s), and ``kimi-lsp --check`` vs ``yamllint`` on the same list
   of YAML files (the throughput ratio);
3. the language server's latency through ``bench/lsp_latency.py`` when that script exists;
4. how each figure grows from 1 to 10,000 files (time per file at each size).

Every command runs from the bench virtualenv, where ``pip install .`` compiled kimi-lsp (and
yamllint, PyYAML) to bytecode as an installed package is. Results go to stdout as markdown and,
with ``--record``, to ``bench/RESULTS.md`` (plus the raw numbers in ``bench/results.json``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import gen_corpus  # noqa: E402  (bench/ is not a package)

BIN = Path(sys.executable).parent
ANALYSIS_MARKER = "<!-- analysis: kept when bench/run --record rewrites the figures above -->"


def tool(name: str) -> str:
    found = BIN / name
    return str(found) if found.exists() else (shutil.which(name) or name)


# -- measuring ----------------------------------------------------------------------------------


class Run:
    __slots__ = ("wall", "cpu", "rc", "out")

    def __init__(self, wall: float, cpu: float, rc: int, out: str) -> None:
        self.wall, self.cpu, self.rc, self.out = wall, cpu, rc, out


def run(cmd: list[str], cwd: Path, timeout: float = 1800) -> Run:
    """Wall and CPU (user+sys of the process and its children) of one command."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the venv's installed kimi-lsp, not the source tree
    env.pop("GITHUB_ACTIONS", None)
    before = os.times()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    wall = time.perf_counter() - t0
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return Run(wall, cpu, proc.returncode, proc.stdout.decode("utf-8", "replace"))


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def interleaved(cmds: dict[str, list[str]], cwd: Path, repeat: int, warmup: int = 2) -> dict[str, dict[str, float]]:
    """Run each command ``repeat`` times, round-robin (so load changes hit all alike)."""
    for _ in range(warmup):  # page cache, venv .pyc files
        for cmd in cmds.values():
            run(cmd, cwd)
    walls: dict[str, list[float]] = {k: [] for k in cmds}
    cpus: dict[str, list[float]] = {k: [] for k in cmds}
    rcs: dict[str, int] = {}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            r = run(cmd, cwd)
            walls[name].append(r.wall)
            cpus[name].append(r.cpu)
            rcs[name] = r.rc
    return {
        k: {"wall": median(walls[k]), "wall_min": min(walls[k]), "cpu": median(cpus[k]), "rc": rcs[k], "runs": repeat}
        for k in cmds
    }


def checked_files(out: str) -> int | None:
    m = re.search(r"in (\d+) files? checked", out)
    return int(m.group(1)) if m else None


# -- the benchmark ------------------------------------------------------------------------------


def corpus(size: int, cache: Path, seed: int) -> tuple[Path, list[Path]]:
    root = cache / f"corpus-{size}-s{seed}"
    stamp = root / ".bench-stamp"
    want = json.dumps({"size": size, "seed": seed, "gen": (HERE / "gen_corpus.py").stat().st_mtime_ns})
    if not (stamp.exists() and stamp.read_text() == want):
        gen_corpus.generate(root, size, seed)
        stamp.write_text(want)
    yaml_files = sorted(p.relative_to(root) for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    return root, yaml_files


def one_file(cache: Path, seed: int, repeat: int) -> dict:
    root, _ = corpus(8, cache, seed)
    target = next(p for p in sorted(root.rglob("config-*.yaml")))
    rel = str(target.relative_to(root))
    py = str(BIN / "python") if (BIN / "python").exists() else sys.executable
    cmds = {
        "floor": [py, "-c", "import yaml"],
        "kimi": [tool("kimi-lsp"), "--check", rel],
        "kimi-nocache": [tool("kimi-lsp"), "--check", "--no-cache", rel],
        "yamllint": [tool("yamllint"), rel],
    }
    # the warm-up runs fill the result cache; "kimi" is then the repeat run pre-commit makes
    res = interleaved(cmds, root, repeat, warmup=3)
    res["file"] = rel
    floor = res["floor"]["wall"]
    res["target_wall"] = 1.2 * floor + 0.060
    for name in ("kimi", "kimi-nocache"):
        res[f"{name}-meets_floor_target"] = res[name]["wall"] <= res["target_wall"]
        res[f"{name}-faster_than_yamllint"] = res[name]["wall"] < res["yamllint"]["wall"]
    return res


def sizes_bench(sizes: list[int], cache: Path, seed: int, repeat_for, jobs: list[str]) -> list[dict]:
    rows = []
    for n in sizes:
        root, yaml_files = corpus(n, cache, seed)
        listfile = [str(p) for p in yaml_files]
        reps = repeat_for(n)
        cmds: dict[str, list[str]] = {}
        for j in jobs:
            flag = [] if j == "auto" else ["--jobs", j]
            cmds[f"kimi-dir-j{j}"] = [tool("kimi-lsp"), "--check", "-q", "--no-cache", *flag, "."]
        if listfile:  # --no-cache: throughput means linting, not answering from the result cache
            cmds["kimi-yaml"] = [tool("kimi-lsp"), "--check", "-q", "--no-cache", *listfile]
            cmds["yamllint-yaml"] = [tool("yamllint"), "-f", "parsable", *listfile]
        res = interleaved(cmds, root, reps, warmup=1 if n <= 1000 else 0)
        probe = run([tool("kimi-lsp"), "--check", "."], root)
        row = {"size": n, "checked": checked_files(probe.out) or n, "yaml": len(listfile), "runs": reps, **res}
        rows.append(row)
        print(f"  size {n}: " + ", ".join(f"{k} {v['wall']:.3f}s" for k, v in res.items()), file=sys.stderr, flush=True)
    return rows


def lsp_latency(_cache: Path) -> dict | str:
    script = HERE / "lsp_latency.py"
    if not script.exists():
        return "skipped (bench/lsp_latency.py not present)"
    # it builds its own workspace and drives `python -m kimi_lsp serve` (this venv's install)
    r = run([sys.executable, str(script)], REPO, timeout=900)
    return {"rc": r.rc, "output": r.out[-4000:]}


# -- reporting ----------------------------------------------------------------------------------


def versions() -> dict[str, str]:
    def ver(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60).stdout.decode().strip().splitlines()[0]
        except Exception as exc:  # noqa: BLE001 - a report line, not a failure
            return f"unknown ({exc})"

    py = str(BIN / "python")
    return {
        "python": platform.python_version(),
        "kimi-lsp": ver([tool("kimi-lsp"), "--version"]),
        "yamllint": ver([tool("yamllint"), "--version"]),
        "pyyaml": ver([py, "-c", "import yaml; print(yaml.__version__, 'libyaml' if yaml.__with_libyaml__ else 'pure-python')"]),
    }


def machine() -> dict[str, object]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 0
    return {"cpu": cpu, "cores": cores, "platform": platform.platform(), "loadavg_start": os.getloadavg()}


def markdown(report: dict) -> str:
    m, v, one = report["machine"], report["versions"], report["one_file"]
    ms = lambda s: f"{s * 1000:.0f} ms"  # noqa: E731
    lines = [
        "# Benchmark results",
        "",
        f"Recorded {report['when']} by `bench/run` ({report['argv']}).",
        "",
        f"- Machine: {m['cpu']}, {m['cores']} cores, {m['platform']}; load average at start "
        f"{', '.join(f'{x:.2f}' for x in m['loadavg_start'])}, at end {', '.join(f'{x:.2f}' for x in report['loadavg_end'])}.",
        f"- Versions: Python {v['python']}, {v['kimi-lsp']}, {v['yamllint']}, PyYAML {v['pyyaml']}.",
        "- kimi-lsp, yamllint and PyYAML are `pip install`ed into `bench/.venv`, so every module runs from",
        "  compiled bytecode as an installed package does (the environment sets PYTHONDONTWRITEBYTECODE=1,",
        "  which would make a source checkout recompile every module on every start).",
        "- Figures are medians of interleaved runs (wall clock; CPU = user+sys of the process tree).",
        "",
        "## One launch file, cold",
        "",
        f"File: `{one['file']}` (an sglang `--config` YAML in a uv project); {one['kimi']['runs']} runs each.",
        "",
        "| command | wall (median) | wall (min) | CPU |",
        "|---|---|---|---|",
    ]
    for name, label in (
        ("floor", '`python -c "import yaml"` (floor)'),
        ("kimi", "`kimi-lsp --check FILE`, repeat run (result cache warm)"),
        ("kimi-nocache", "`kimi-lsp --check --no-cache FILE` (every run lints)"),
        ("yamllint", "`yamllint FILE`"),
    ):
        r = one[name]
        lines.append(f"| {label} | {ms(r['wall'])} | {ms(r['wall_min'])} | {ms(r['cpu'])} |")
    lines += [""]
    for name, label in (("kimi", "Repeat run (cache warm)"), ("kimi-nocache", "Every run lints (`--no-cache`)")):
        lines.append(
            f"{label}: target at most 1.2 x floor + 60 ms = {ms(one['target_wall'])}: "
            f"**{'met' if one[f'{name}-meets_floor_target'] else 'not met'}**; faster than yamllint: "
            f"**{'yes' if one[f'{name}-faster_than_yamllint'] else 'no'}**."
        )
    lines += [
        "",
        "## Corpora (1 to 10,000 launch files)",
        "",
        "`kimi-lsp --check -q --jobs J DIR` walks the corpus (launch files plus the pin files the walk",
        "also picks up, e.g. pyproject.toml); `yaml list` rows run both tools on the same explicit list",
        "of the corpus's YAML files.",
        "",
    ]
    rows = report["sizes"]
    keys = [k for k in rows[-1] if k.startswith(("kimi-", "yamllint-"))]
    lines.append("| files | " + " | ".join(f"{k} wall" for k in keys) + " | kimi dir files/s | kimi yaml files/s | yamllint files/s | ratio (kimi/yamllint, yaml list) |")
    lines.append("|---" * (len(keys) + 5) + "|")
    best_dir = [k for k in keys if k.startswith("kimi-dir")]
    for r in rows:
        dir_best = min(r[k]["wall"] for k in best_dir)
        fps = r["checked"] / dir_best
        ky = r.get("kimi-yaml")
        yl = r.get("yamllint-yaml")
        kfs = r["yaml"] / ky["wall"] if ky else float("nan")
        yfs = r["yaml"] / yl["wall"] if yl else float("nan")
        ratio = (yl["wall"] / ky["wall"]) if ky and yl else float("nan")
        cells = " | ".join(f"{r[k]['wall']:.2f} s" if k in r else "-" for k in keys)
        lines.append(f"| {r['checked']} ({r['yaml']} YAML) | {cells} | {fps:.0f} | {kfs:.0f} | {yfs:.0f} | {ratio:.2f}x |")
    lines += ["", "### Growth (time per file, relative to the 1,000-file corpus)", ""]
    base = next((r for r in rows if r["size"] == 1000), rows[-1])
    lines.append("| files | " + " | ".join(f"{k} ms/file" for k in keys) + " |")
    lines.append("|---" * (len(keys) + 1) + "|")
    for r in rows:
        cells = []
        for k in keys:
            n = r["yaml"] if k.endswith("-yaml") else r["checked"]
            cells.append(f"{1000 * r[k]['wall'] / max(1, n):.2f}" if k in r else "-")
        lines.append(f"| {r['checked']} | " + " | ".join(cells) + " |")
    big = next((r for r in rows if r["size"] == 10000), None)
    if big is not None:
        per_big = min(big[k]["wall"] for k in best_dir) / big["checked"]
        per_base = min(base[k]["wall"] for k in best_dir) / base["checked"]
        lines += ["", f"10,000 vs 1,000 files: {per_big / per_base:.2f}x the time per file "
                  f"({'linear or better' if per_big <= per_base * 1.15 else 'WORSE than linear'})."]
        ky, yl = big.get("kimi-yaml"), big.get("yamllint-yaml")
        if ky and yl:
            lines.append(f"10,000 files: kimi-lsp {yl['wall'] / ky['wall']:.2f}x yamllint's throughput on the same YAML files "
                         f"(target 3x: **{'met' if yl['wall'] / ky['wall'] >= 3 else 'not met'}**); whole corpus "
                         f"{big['checked'] / min(big[k]['wall'] for k in best_dir):.0f} files/s.")
    lines += ["", "## Language server", ""]
    lsp = report["lsp"]
    if isinstance(lsp, str):
        lines.append(lsp)
    else:
        lines += ["```", lsp["output"].strip(), "```"]
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="kimi-lsp --check benchmark (use bench/run)")
    p.add_argument("--sizes", default="1,10,100,1000,10000")
    p.add_argument("--one-file-runs", type=int, default=21)
    p.add_argument("--repeat", type=int, default=0, help="runs per corpus size (default: 5 up to 100 files, 3 above)")
    p.add_argument("--jobs", default="1,auto", help="--jobs values for the directory runs ('auto' = default)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache", type=Path, default=HERE / ".cache")
    p.add_argument("--record", action="store_true", help="write bench/RESULTS.md and bench/results.json")
    p.add_argument("--skip-one-file", action="store_true", help="only 3 one-file runs (quick looks)")
    ns = p.parse_args(argv)
    ns.cache.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in ns.sizes.split(",") if s]
    jobs = [j.strip() for j in ns.jobs.split(",") if j.strip()]

    def repeat_for(n: int) -> int:
        if ns.repeat:
            return ns.repeat
        return 5 if n <= 100 else 3  # medians of three even at 10,000 files: this box is noisy

    report: dict = {
        "when": time.strftime("%Y-%m-%d %H:%M %Z"),
        "argv": "bench/run " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine(),
        "versions": versions(),
    }
    print("one file ...", file=sys.stderr, flush=True)
    report["one_file"] = one_file(ns.cache, ns.seed, 3 if ns.skip_one_file else ns.one_file_runs)
    print("corpora ...", file=sys.stderr, flush=True)
    report["sizes"] = sizes_bench(sizes, ns.cache, ns.seed, repeat_for, jobs)
    print("language server ...", file=sys.stderr, flush=True)
    report["lsp"] = lsp_latency(ns.cache)
    report["loadavg_end"] = os.getloadavg()
    md = markdown(report)
    print(md)
    if ns.record:
        # hand-written analysis below the marker survives re-recording
        old = HERE / "RESULTS.md"
        keep = ""
        if old.exists() and ANALYSIS_MARKER in old.read_text("utf-8"):
            keep = old.read_text("utf-8").split(ANALYSIS_MARKER, 1)[1]
        old.write_text(md + ("\n" + ANALYSIS_MARKER + keep if keep else ""), "utf-8")
        (HERE / "results.json").write_text(json.dumps(report, indent=1, default=str), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
