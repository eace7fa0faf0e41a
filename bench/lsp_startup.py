"""Language-server start-up: process start to the first ``publishDiagnostics`` of a 30-line
Kimi-K3 ``--config`` YAML, against the floor ``python -c "import pygls.lsp.server"`` (process
start to exit), fresh processes, interleaved, medians.

    PYTHONPATH=server python bench/lsp_startup.py [--runs 21] [--importtime FILE]

The client is raw JSON-RPC over a pipe (no pygls in the client): it writes ``initialize``,
``initialized`` and ``didOpen`` at once and answers the server's requests
(``workspace/configuration``, ``client/registerCapability``) as an editor would. Both commands run
the same interpreter with the same environment; modules should be compiled to bytecode first
(``python -m compileall -q server``), as an installed kimi-lsp is. ``--importtime FILE`` writes
the server's ``-X importtime`` up to its first publish (what a start-up imports).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from lsp_latency import SMALL_30 as CONFIG_30  # noqa: E402  (the same 30-line config the latency run edits)

PIN = "sglang==0.5.23\nflashinfer-python==0.6.16.post4\n"


def make_project(root: Path) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "requirements.txt").write_text(PIN)
    path = root / "k3.yaml"
    path.write_text(CONFIG_30)
    return path


def env() -> dict[str, str]:
    e = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO / "server"), os.environ.get("PYTHONPATH")) if p))
    e.pop("KIMI_LSP_LOG", None)
    return e


def frame(msg: dict[str, object]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_msg(out) -> dict | None:  # type: ignore[no-untyped-def]
    headers = {}
    while True:
        line = out.readline()
        if not line:
            return None
        if not line.strip():
            break
        k, _, v = line.decode("ascii").partition(":")
        headers[k.strip().lower()] = v.strip()
    return json.loads(out.read(int(headers["content-length"])))


def time_server(path: Path, extra: list[str] | None = None, stderr: int | None = subprocess.DEVNULL) -> float:
    """Seconds from spawning ``python -m kimi_lsp serve`` to the first publish for ``path``."""
    root = path.parent
    uri = path.as_uri()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *(extra or []), "-m", "kimi_lsp", "serve"], cwd=root, env=env(),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
    )
    assert proc.stdin is not None and proc.stdout is not None
    caps = {
        "workspace": {"configuration": True, "didChangeWatchedFiles": {"dynamicRegistration": True}},
        "textDocument": {"publishDiagnostics": {"versionSupport": True}},
    }
    proc.stdin.write(
        frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": caps}})
        + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        + frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "yaml", "version": 1, "text": path.read_text()}}})
    )
    proc.stdin.flush()
    elapsed = float("nan")
    while True:
        msg = read_msg(proc.stdout)
        if msg is None:
            break
        if "id" in msg and "method" in msg:  # a request of the server's
            n = len(msg.get("params", {}).get("items", [])) if msg["method"] == "workspace/configuration" else 0
            result: object = [{} for _ in range(n)] if msg["method"] == "workspace/configuration" else None
            proc.stdin.write(frame({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
            proc.stdin.flush()
        elif msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
            elapsed = time.perf_counter() - t0
            assert msg["params"]["diagnostics"], "the launch should carry KL101"
            break
    proc.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) + frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.flush()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    return elapsed


FLOOR = "import pygls.lsp.server"
# the floor as the server imports it: with the collector off (cli/main.py `_serve`), for comparison
FLOOR_NO_GC = "import gc; gc.disable(); import pygls.lsp.server"


def time_floor(code: str = FLOOR) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env(), check=True)
    return time.perf_counter() - t0


def cpu_children() -> float:
    ru = os.times()
    return ru.children_user + ru.children_system


def measure(runs: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"floor": [], "server": [], "floor_cpu": [], "server_cpu": [], "floor_nogc": []}
    with tempfile.TemporaryDirectory(prefix="kimi-lsp-start-") as tmp:
        path = make_project(Path(tmp).resolve())
        time.sleep(0.1)
        for _ in range(2):  # warm the page cache
            time_floor(), time_server(path)
        for _ in range(runs):
            c0 = cpu_children()
            out["floor"].append(time_floor())
            c1 = cpu_children()
            out["server"].append(time_server(path))
            c2 = cpu_children()
            out["floor_nogc"].append(time_floor(FLOOR_NO_GC))
            out["floor_cpu"].append(c1 - c0)
            out["server_cpu"].append(c2 - c1)
    return out


def report(m: dict[str, list[float]]) -> list[str]:
    med = {k: statistics.median(v) * 1000 for k, v in m.items()}
    ratios = sorted(s / f for s, f in zip(m["server"], m["floor"]))
    return [
        f"floor `python -c \"import pygls.lsp.server\"`   median {med['floor']:7.1f} ms  (CPU {med['floor_cpu']:6.1f} ms)",
        f"start -> first publishDiagnostics (30 lines)  median {med['server']:7.1f} ms  (CPU {med['server_cpu']:6.1f} ms)",
        f"ratio to the floor: {med['server'] / med['floor']:.2f}x of medians (wall), "
        f"{med['server_cpu'] / med['floor_cpu']:.2f}x (CPU); per-run ratio median {statistics.median(ratios):.2f}x  "
        f"(target <= 1.15x; n={len(m['server'])})",
        f"  (the floor with the collector off, as `kimi-lsp serve` imports: median {med['floor_nogc']:7.1f} ms; "
        f"ratio {med['server'] / med['floor_nogc']:.2f}x)",
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=21)
    p.add_argument("--importtime", type=Path)
    ns = p.parse_args(argv)
    if ns.importtime:
        with tempfile.TemporaryDirectory(prefix="kimi-lsp-start-") as tmp:
            path = make_project(Path(tmp).resolve())
            with open(ns.importtime, "w") as fh:
                time_server(path, ["-X", "importtime"], stderr=fh.fileno())
        print(f"imports up to the first publish: {ns.importtime}")
        return 0
    print(f"kimi-lsp start-up ({os.cpu_count()} CPUs; Python {sys.version.split()[0]})")
    for line in report(measure(ns.runs)):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
