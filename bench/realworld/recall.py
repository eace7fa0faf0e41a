"""Launch recall on the real-world corpus: did kimi-lsp read every launch a person sees by reading?

    python bench/realworld/recall.py CORPUS [--repos A,B] [--verdicts FILE] [--misses] [--json]

A person reading a repository sees a launch wherever one of sglang's entry points is written: the
module names (`sglang.launch_server`, the benchmark modules that take server arguments,
`sglang_router.launch_server`), `sglang serve`, the Python front ends (`sgl.Engine(`,
`launch_server_cmd(`, `sglang.Runtime(`) and srt-slurm recipes (`sglang_config:`). Every such line
of every tracked text file is a *candidate*. `kimi-lsp launches REPO --format json` is what the
product found. A candidate is *read* when a found launch starts on its line or a few lines above it
(a command continued over lines, a YAML list, a `docker run` whose command follows the image);
each found launch accounts for one candidate (nearest first), a recipe's `sglang_config:` for any
launch after it in the file.

A candidate nobody found is a *miss*; the verdicts file (TSV: repo, path, line, verdict, note)
says what each one is on reading it: `launch` (a real launch kimi-lsp should read: a true miss)
or `not` (prose, an import, a log line, a test of sglang's own parser, a comment...). Misses without
a verdict are listed as untriaged, and the recall is not claimed while any are left.

    recall = found / (found + true misses)

where `found` counts the launches kimi-lsp reports (its launch precision is judged apart, by the
diagnostics' verdicts in bench/realworld/verdicts.tsv). The marker-only recall, read / (read + true
misses), is printed too: it leaves out the launches no marker names (recipes' roles, args-only
containers), which only kimi-lsp can count.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

MARKERS = re.compile(
    r"sglang\.(?:launch_server|bench_one_batch(?:_server)?|bench_offline_throughput|compile_deep_gemm"
    r"|benchmark\.(?:one_batch(?:_server)?|offline_throughput))\b"
    r"|sglang_router\.launch_server\b"
    r"|\bsglang(?:\.cli\.main)?['\"]?\s+serve\b"
    r"|\b(?:sgl|sglang)\.(?:Engine|Runtime)\("
    r"|\blaunch_server_cmd\("
)
RECIPE = re.compile(r"^\s*sglang_config\s*:")
WINDOW_ABOVE = 12  # lines a launch may start above its marker (continued commands, YAML lists)
WINDOW_BELOW = 2
MAX_BYTES = 2_000_000


@dataclass
class Candidate:
    path: str
    line: int
    text: str
    recipe: bool = False
    read: bool = False


def tracked_files(repo: Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo), "ls-files", "-z"], capture_output=True, check=False)
    names = [p for p in out.stdout.decode("utf-8", "surrogateescape").split("\0") if p]
    if out.returncode != 0 or not names:  # not a checkout (a snapshot, or an index left out): every file
        return [str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts]
    return names


def candidates(repo: Path) -> list[Candidate]:
    found: list[Candidate] = []
    for rel in tracked_files(repo):
        p = repo / rel
        try:
            if p.is_symlink() or not p.is_file() or p.stat().st_size > MAX_BYTES:
                continue
            data = p.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192] or (b"sglang" not in data and b"launch_server_cmd" not in data):
            continue
        text = data.decode("utf-8", "replace")
        for n, line in enumerate(text.splitlines(), 1):
            if RECIPE.match(line):
                found.append(Candidate(rel, n, line.strip()[:160], recipe=True))
            elif MARKERS.search(line):
                found.append(Candidate(rel, n, line.strip()[:160]))
    return found


def launches(repo: Path) -> list[tuple[str, int]]:
    cmd = [sys.executable, "-m", "kimi_lsp", "launches", ".", "--format", "json"]
    out = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, check=False,
                         env={**os.environ, "NO_COLOR": "1"})
    try:
        doc = json.loads(out.stdout)
    except ValueError:
        raise SystemExit(f"{repo.name}: kimi-lsp launches failed (exit {out.returncode}): {out.stderr[-400:]}")
    return [(item["path"], int(item["line"])) for item in doc["launches"]]


def match(cands: list[Candidate], found: list[tuple[str, int]]) -> None:
    by_file: dict[str, list[int]] = defaultdict(list)
    for path, line in found:
        by_file[path].append(line)
    per_file: dict[str, list[Candidate]] = defaultdict(list)
    for c in cands:
        per_file[c.path].append(c)
    for path, cs in per_file.items():
        lines = sorted(by_file.get(path, []))
        used = [False] * len(lines)
        for c in cs:
            if c.recipe:
                c.read = any(ln > c.line for ln in lines)
        # nearest pairs first, so that two launches close together each take their own marker
        pairs = sorted(
            (abs(c.line - ln) + (0 if ln <= c.line else 0.5), ci, li)
            for ci, c in enumerate(cs) if not c.recipe
            for li, ln in enumerate(lines)
            if c.line - WINDOW_ABOVE <= ln <= c.line + WINDOW_BELOW
        )
        for _d, ci, li in pairs:
            if cs[ci].read or used[li]:
                continue
            cs[ci].read = used[li] = True


def load_verdicts(path: Path | None) -> dict[tuple[str, str, int], tuple[str, str]]:
    verdicts: dict[tuple[str, str, int], tuple[str, str]] = {}
    if path is None or not path.exists():
        return verdicts
    for raw in path.read_text("utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        parts = raw.split("\t")
        repo, rel, line, verdict = parts[:4]
        verdicts[(repo, rel, int(line))] = (verdict, parts[4] if len(parts) > 4 else "")
    return verdicts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--repos", help="comma-separated owner+name directories (default: all)")
    ap.add_argument("--verdicts", type=Path, default=Path(__file__).with_name("recall_verdicts.tsv"))
    ap.add_argument("--misses", action="store_true", help="list every miss with its verdict")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    names = args.repos.split(",") if args.repos else sorted(
        d.name for d in args.corpus.iterdir() if (d / ".git").exists())
    verdicts = load_verdicts(args.verdicts)
    rows = []
    totals: Counter[str] = Counter()
    miss_forms: Counter[str] = Counter()
    for name in names:
        repo = args.corpus / name
        cands = candidates(repo)
        found = launches(repo)
        match(cands, found)
        row = Counter(found=len(found), candidates=len(cands), read=sum(c.read for c in cands))
        for c in cands:
            if c.read:
                continue
            verdict, note = verdicts.get((name, c.path, c.line), ("untriaged", ""))
            kind = verdict.split(":", 1)[0]
            row[{"launch": "true_miss", "not": "not_launch"}.get(kind, "untriaged")] += 1
            if kind == "launch":
                miss_forms[note or "?"] += 1
            if args.misses and kind != "not":
                print(f"{verdict}\t{name}\t{c.path}\t{c.line}\t{c.text}", file=sys.stderr)
        rows.append((name, row))
        totals.update(row)
    if args.json:
        json.dump({"repos": {n: dict(r) for n, r in rows}, "totals": dict(totals),
                   "miss_forms": dict(miss_forms)}, sys.stdout, indent=1)
        print()
        return 0
    print(f"{'repository':52} {'found':>6} {'marks':>6} {'read':>6} {'miss':>5} {'not':>5} {'untri':>5}")
    for name, r in rows:
        print(f"{name:52} {r['found']:6} {r['candidates']:6} {r['read']:6} {r['true_miss']:5} "
              f"{r['not_launch']:5} {r['untriaged']:5}")
    t = totals
    print(f"{'total':52} {t['found']:6} {t['candidates']:6} {t['read']:6} {t['true_miss']:5} "
          f"{t['not_launch']:5} {t['untriaged']:5}")
    if t["untriaged"]:
        print(f"\n{t['untriaged']} misses untriaged: no recall claimed (run with --misses, judge them in {args.verdicts.name})")
    denominator = t["found"] + t["true_miss"]
    if denominator:
        print(f"recall: {t['found']}/{denominator} = {100 * t['found'] / denominator:.1f} %"
              f"   (markers only: {t['read']}/{t['read'] + t['true_miss']} = "
              f"{100 * t['read'] / max(1, t['read'] + t['true_miss']):.1f} %)")
    for form, n in miss_forms.most_common():
        print(f"  missed {n:4}  {form}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
