"""Workspace diagnostics at scale: a generated workspace of N launch files (bench/gen_corpus.py,
projects of 10 files, each with its own pin files), a client that pulls like VS Code does
(``workspace/diagnostic`` with a ``partialResultToken``, then re-polls with the result ids), and
an open document edited while the first pass runs.

    PYTHONPATH=server python bench/lsp_workspace.py [--files 5000] [--polls 10] [--edits 40]

Reports: time to the first partial result and to the (empty) final response of the first pass,
the bytes it streamed; didChange -> textDocument/diagnostic and hover latency *during* that pass;
an unchanged re-poll's wall time and server CPU; the server's CPU while a client re-polls every
2 s with nothing changing (VS Code's rhythm). The client is raw JSON-RPC over stdio (threads, no
pygls), so the client's own cost stays out of the server's CPU figures (read from /proc).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from gen_corpus import generate  # noqa: E402

PULL_CAPS = {
    "textDocument": {"diagnostic": {}, "publishDiagnostics": {"versionSupport": True}, "hover": {}},
    "workspace": {"diagnostics": {"refreshSupport": True}},
}
OPEN = "model-path: moonshotai/Kimi-K3\ntp-size: 8\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"


class Client:
    def __init__(self, root: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(REPO / "server"))
        env.pop("KIMI_LSP_LOG", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kimi_lsp", "serve"], cwd=root, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.responses: dict[int, tuple[float, dict]] = {}
        self.progress: "queue.Queue[tuple[float, int, dict]]" = queue.Queue()
        self.cond = threading.Condition()
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    return
                if not line.strip():
                    break
                k, _, v = line.decode("ascii").partition(":")
                headers[k.strip().lower()] = v.strip()
            n = int(headers["content-length"])
            body = out.read(n)
            now = time.perf_counter()
            msg = json.loads(body)
            if "id" in msg and "method" in msg:
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            elif "id" in msg:
                with self.cond:
                    self.responses[msg["id"]] = (now, msg)
                    self.cond.notify_all()
            elif msg.get("method") == "$/progress":
                self.progress.put((now, n, msg["params"]))

    def send(self, msg: dict) -> None:
        body = json.dumps(msg).encode()
        assert self.proc.stdin is not None
        with self.lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def notify(self, method: str, params: object) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: object) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def wait(self, rid: int, timeout: float = 600) -> tuple[float, dict]:
        with self.cond:
            self.cond.wait_for(lambda: rid in self.responses, timeout)
            return self.responses.pop(rid)

    def call(self, method: str, params: object) -> tuple[float, dict]:
        t0 = time.perf_counter()
        done, msg = self.wait(self.request(method, params))
        return done - t0, msg

    def cpu_s(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        try:
            self.wait(self.request("shutdown", None), 10)
            self.notify("exit", None)
            self.proc.wait(10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def ms(xs: list[float]) -> str:
    return f"n={len(xs):<4d} p50={pct(xs, 50) * 1000:8.1f} ms  p95={pct(xs, 95) * 1000:8.1f} ms  max={max(xs) * 1000:8.1f} ms"


def run(files: int, polls: int, edits: int, idle_cycles: int = 5) -> list[str]:
    out: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kimi-ws-") as tmp:
        root = Path(tmp).resolve()
        generate(root, files, seed=0, per_project=10)
        (root / "open.yaml").write_text(OPEN, "utf-8")
        pins = sum(1 for p in root.rglob("*") if p.name in (
            "uv.lock", "pyproject.toml", "poetry.lock", "pdm.lock", "Pipfile", "Pipfile.lock", "pylock.toml",
            "conda-lock.yml", "environment.yml", "requirements.txt", "requirements.in", "constraints.txt"))
        out.append(f"workspace: {files} launch files + {pins} pin files in {files // 10} projects")
        time.sleep(2.1)  # files this new are not trusted by their signature (racy window)

        c = Client(root)
        t0 = time.perf_counter()
        _, init = c.call("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}], "capabilities": PULL_CAPS,
        })
        c.notify("initialized", {})
        uri = (root / "open.yaml").as_uri()
        c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": OPEN}})
        c.call("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        out.append(f"initialize + first textDocument/diagnostic   {(time.perf_counter() - t0) * 1000:8.1f} ms")

        # -- the first pass, with edits and hovers while it runs --------------------------------
        cpu0 = c.cpu_s()
        t_pass = time.perf_counter()
        rid = c.request("workspace/diagnostic", {"previousResultIds": [], "partialResultToken": "ws"})
        first_at, size, _ = c.progress.get(timeout=600)
        edit_lat: list[float] = []
        hover_lat: list[float] = []
        version = 1
        while rid not in c.responses and len(edit_lat) < edits:
            version += 1
            text = OPEN.replace("dcp-size: 8", f"dcp-size: {1 if version % 2 else 8}")
            t = time.perf_counter()
            c.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]})
            done, _ = c.wait(c.request("textDocument/diagnostic", {"textDocument": {"uri": uri}}))
            edit_lat.append(done - t)
            dt, _ = c.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 3}})
            hover_lat.append(dt)
            time.sleep(0.1)
        edits_in_pass = rid not in c.responses
        done_at, final = c.wait(rid)
        cpu_pass = c.cpu_s() - cpu0
        batches, streamed, items = 1, size, []
        while not c.progress.empty():
            _, n, params = c.progress.get()
            batches += 1
            streamed += n
        previous: dict[str, str] = {}
        # re-read: count items from the partials we drained above is enough for the summary
        out.append(f"first pass: first partial result            {(first_at - t_pass) * 1000:8.1f} ms")
        out.append(f"first pass: final (empty) response          {(done_at - t_pass) * 1000:8.1f} ms   "
                   f"server CPU {cpu_pass:.2f} s, {batches} partial results, {streamed / 1e6:.1f} MB streamed, "
                   f"final response {len(json.dumps(final))} bytes")
        out.append(f"didChange -> textDocument/diagnostic during the pass  {ms(edit_lat)}"
                   + ("" if edits_in_pass else "  (the pass ended first)"))
        out.append(f"hover during the pass                       {ms(hover_lat)}")

        # -- re-polls: every id known, nothing changed ------------------------------------------
        _, full = c.call("workspace/diagnostic", {"previousResultIds": []})
        items = full["result"]["items"]
        previous = {i["uri"]: i["resultId"] for i in items}
        ids = [{"uri": u, "value": v} for u, v in previous.items()]
        out.append(f"files reported: {len(items)} (full response without a token {len(json.dumps(full)) / 1e6:.1f} MB)")
        walls, cpus = [], []
        for _ in range(polls):
            cpu0 = c.cpu_s()
            dt, msg = c.call("workspace/diagnostic", {"previousResultIds": ids})
            cpus.append(c.cpu_s() - cpu0)
            walls.append(dt)
            assert all(i["kind"] == "unchanged" for i in msg["result"]["items"])
        out.append(f"unchanged re-poll (wall)                    {ms(walls)}   {len(json.dumps(msg)) / 1e3:.0f} KB")
        out.append(f"unchanged re-poll (server CPU)              {ms(cpus)}")
        cpu0, t = c.cpu_s(), time.perf_counter()
        for _ in range(idle_cycles):
            c.call("workspace/diagnostic", {"previousResultIds": ids})
            time.sleep(2.0)
        idle = (c.cpu_s() - cpu0) / (time.perf_counter() - t)
        out.append(f"idle CPU, a client re-polling every 2 s     {idle * 100:8.1f} % of a core "
                   f"({idle_cycles} cycles, {time.perf_counter() - t:.0f} s)")
        c.close()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--files", type=int, default=5000)
    p.add_argument("--polls", type=int, default=10)
    p.add_argument("--edits", type=int, default=40)
    p.add_argument("--idle-cycles", type=int, default=5, help="re-poll + 2 s pauses for the idle CPU figure")
    ns = p.parse_args(argv)
    print(f"kimi-lsp workspace diagnostics ({os.cpu_count()} CPUs; Python {sys.version.split()[0]})")
    for line in run(ns.files, ns.polls, ns.edits, ns.idle_cycles):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
