"""The language server under load, over stdio with a raw JSON-RPC client (no pygls on this side,
so malformed traffic can be sent as-is).

- 1,000 rapid ``didChange`` notifications: the server keeps up, publishes diagnostics for the
  last version, and still answers requests;
- ``$/cancelRequest``: a cancelled request gets its result or RequestCancelled (-32800), never
  silence, and the server stays up;
- invalid params, unknown methods (requests get MethodNotFound -32601; notifications are
  ignored), malformed JSON: an error per the protocol and the server stays up;
- a client that disappears (stdin closed without shutdown/exit): the server exits on its own;
- memory: RSS after a second round of 1,000 changes stays close to after the first.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ._support import make_repo

pytest.importorskip("pygls", reason="the language server needs pygls")
try:
    import kimi_lsp.lsp.server  # noqa: F401
except ImportError as exc:  # pragma: no cover - until the server module exists
    pytest.skip(f"kimi_lsp.lsp.server is not there yet: {exc}", allow_module_level=True)

SERVER = Path(__file__).resolve().parents[2] / "server"
K3 = "model-path: moonshotai/Kimi-K3\ntp-size: 8\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"


class Client:
    """A minimal LSP client: Content-Length framing, a reader thread, requests by id."""

    def __init__(self, root: Path, env_extra: dict[str, str] | None = None) -> None:
        env = dict(os.environ, PYTHONPATH=str(SERVER), **(env_extra or {}))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kimi_lsp", "serve"], cwd=root, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.root = root
        self.next_id = 0
        self.responses: dict[int | str, dict] = {}
        self.notifications: queue.Queue[dict] = queue.Queue()
        self.cond = threading.Condition()
        self.closed = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # -- wire ---------------------------------------------------------------------------------
    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                headers = {}
                while True:
                    line = out.readline()
                    if not line:
                        raise EOFError
                    line = line.strip()
                    if not line:
                        break
                    k, _, v = line.decode("ascii").partition(":")
                    headers[k.strip().lower()] = v.strip()
                body = out.read(int(headers["content-length"]))
                msg = json.loads(body)
                if "id" in msg and "method" in msg:  # a request from the server: answer null
                    self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                elif "id" in msg:
                    with self.cond:
                        self.responses[msg["id"]] = msg
                        self.cond.notify_all()
                else:
                    self.notifications.put(msg)
        except (EOFError, ValueError, OSError):
            with self.cond:
                self.closed = True
                self.cond.notify_all()

    def raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg: dict) -> None:
        body = json.dumps(msg).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: object) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: object) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def wait(self, rid: int | str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        with self.cond:
            while rid not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    raise AssertionError(f"no response to {rid} (closed={self.closed}): {b''.join(self.stderr[-20:]).decode(errors='replace')}")
                self.cond.wait(left)
            return self.responses.pop(rid)

    def call(self, method: str, params: object, timeout: float = 30) -> dict:
        return self.wait(self.request(method, params), timeout)

    def diagnostics_for(self, uri: str, version: int | None, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no publishDiagnostics for {uri} v{version}")
            try:
                msg = self.notifications.get(timeout=left)
            except queue.Empty:
                continue
            if msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
                if version is None or msg["params"].get("version") in (version, None):
                    return msg["params"]

    # -- session ------------------------------------------------------------------------------
    def initialize(self, capabilities: dict | None = None) -> dict:
        res = self.call("initialize", {
            "processId": os.getpid(), "rootUri": self.root.as_uri(),
            "workspaceFolders": [{"uri": self.root.as_uri(), "name": "ws"}],
            "capabilities": capabilities or {"textDocument": {"publishDiagnostics": {"versionSupport": True}}},
        }, timeout=60)
        assert "result" in res, res
        self.notify("initialized", {})
        return res["result"]

    def rss_kib(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def close(self) -> None:
        try:
            if self.proc.poll() is None and not self.closed:
                rid = self.request("shutdown", None)
                self.wait(rid, timeout=10)
                self.notify("exit", None)
                self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - cleanup
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=10)


@pytest.fixture
def client(tmp_path: Path):
    root = make_repo(tmp_path / "ws")
    (root / "requirements.txt").write_text("sglang==0.5.23\nflashinfer-python==0.6.16.post4\n", "utf-8")
    (root / "k3.yaml").write_text(K3, "utf-8")
    c = Client(root)
    c.initialize()
    yield c
    c.close()


def _open(c: Client, name: str = "k3.yaml", text: str = K3) -> str:
    uri = (c.root / name).as_uri()
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
    return uri


def _change_burst(c: Client, uri: str, first: int, n: int) -> int:
    version = first
    for i in range(n):
        version += 1
        text = K3 + f"# edit {i}\n" + ("context-length: 8192\n" if i % 2 else "")
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": text}],
        })
    return version


def test_thousand_rapid_changes_then_still_responsive(client: Client) -> None:
    uri = _open(client)
    client.diagnostics_for(uri, 1, timeout=300)
    last = _change_burst(client, uri, 1, 1000)
    pub = client.diagnostics_for(uri, last, timeout=300)  # (a hang guard, not a speed limit)
    assert any(d.get("code") == "KL101" for d in pub["diagnostics"]), pub
    res = client.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 3}})
    assert "result" in res or "error" in res
    assert client.proc.poll() is None


def test_memory_does_not_grow_without_bound(client: Client) -> None:
    uri = _open(client)
    client.diagnostics_for(uri, 1, timeout=60)
    v = _change_burst(client, uri, 1, 1000)
    client.diagnostics_for(uri, v, timeout=60)
    after_first = client.rss_kib()
    v = _change_burst(client, uri, v, 1000)
    client.diagnostics_for(uri, v, timeout=60)
    v = _change_burst(client, uri, v, 1000)
    client.diagnostics_for(uri, v, timeout=60)
    after_third = client.rss_kib()
    assert after_third - after_first < 40 * 1024, (after_first, after_third)


def test_cancel_request(client: Client) -> None:
    uri = _open(client)
    client.diagnostics_for(uri, 1, timeout=60)
    ids = []
    for _ in range(20):
        rid = client.request("textDocument/completion", {"textDocument": {"uri": uri}, "position": {"line": 4, "character": 0}})
        client.notify("$/cancelRequest", {"id": rid})
        ids.append(rid)
    for rid in ids:
        res = client.wait(rid)
        assert "result" in res or res.get("error", {}).get("code") in (-32800, -32803), res
    client.notify("$/cancelRequest", {"id": 987654})  # cancelling what never existed: ignored
    assert "result" in client.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})


INVALID_PARAMS = [
    ("textDocument/hover", {}),
    ("textDocument/hover", {"textDocument": {"uri": "U"}, "position": {"line": -5, "character": "x"}}),
    ("textDocument/completion", None),
    ("textDocument/codeAction", {"textDocument": {"uri": "file:///nope.yaml"}, "range": 7, "context": {}}),
]


PULL = {"textDocument": {"diagnostic": {}}, "workspace": {"diagnostics": {"refreshSupport": True}}}


def _progress(c: Client, token: str, timeout: float) -> dict | None:
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            msg = c.notifications.get(timeout=left)
        except queue.Empty:
            return None
        if msg.get("method") == "$/progress" and msg["params"]["token"] == token:
            return msg["params"]
    return None


def test_cancel_stops_a_workspace_pass(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    (root / "requirements.txt").write_text("flashinfer-python==0.6.16.post4\n", "utf-8")
    for i in range(800):
        (root / f"s{i:04d}.sh").write_text(
            f"python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --dcp-size 8 --tp-size {1 + i % 8}\n"
        )
    c = Client(root, {"KIMI_LSP_LOG": "INFO"})
    try:
        c.initialize(PULL)
        rid = c.request("workspace/diagnostic", {"previousResultIds": [], "partialResultToken": "w"})
        assert _progress(c, "w", 60) is not None
        c.notify("$/cancelRequest", {"id": rid})
        res = c.wait(rid)
        assert res.get("error", {}).get("code") == -32800, res
        # the pass stopped: no slice after the cancelled one, and the log says where it stopped
        while _progress(c, "w", 0.5) is not None:
            pass  # at most the slice that was running when the cancel arrived
        assert _progress(c, "w", 1.0) is None
        deadline = time.monotonic() + 10
        while not any(b"cancelled after" in line for line in c.stderr) and time.monotonic() < deadline:
            time.sleep(0.05)
        (line,) = [ln.decode() for ln in c.stderr if b"cancelled after" in ln]
        done, total = map(int, line.split("cancelled after ")[1].split(" files")[0].split(" of "))
        assert done < total == 800
        assert "result" in c.call("workspace/diagnostic", {"previousResultIds": []}, timeout=120)
    finally:
        c.close()


def test_invalid_params_and_unknown_methods_keep_the_server_up(client: Client) -> None:
    uri = _open(client)
    for method, params in INVALID_PARAMS:
        client.request(method, json.loads(json.dumps(params).replace('"U"', json.dumps(uri))))
    for method, params in [
        ("textDocument/hover", {"textDocument": {"uri": "not a uri"}, "position": {"line": 0, "character": 0}}),
        ("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 10**9, "character": 10**9}}),
        ("textDocument/hover", {"textDocument": {"uri": "file:///no/such/file.yaml"}, "position": {"line": 0, "character": 0}}),
    ]:
        res = client.call(method, params)
        assert "result" in res or "error" in res, res
    res = client.call("kimi/doesNotExist", {"x": 1})
    assert res.get("error", {}).get("code") == -32601, res
    client.notify("kimi/unknownNotification", {"x": 1})  # ignored
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri}})  # missing fields
    client.notify("textDocument/didOpen", {"garbage": True})
    client.send({"jsonrpc": "2.0", "id": "str-id", "method": "textDocument/hover",
                 "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}})
    assert "result" in client.wait("str-id")
    # malformed JSON: the server must survive it (a parse error response is allowed)
    client.raw(b"Content-Length: 9\r\n\r\n{not json")
    res = client.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
    assert "result" in res, res
    assert client.proc.poll() is None


def test_invalid_params_get_an_error_response(client: Client) -> None:
    uri = _open(client)
    for method, params in INVALID_PARAMS:
        res = client.call(method, json.loads(json.dumps(params).replace('"U"', json.dumps(uri))), timeout=2)
        assert res.get("error", {}).get("code") == -32602 or "result" in res, res


def test_client_disappears(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    (root / "k3.yaml").write_text(K3, "utf-8")
    c = Client(root)
    try:
        c.initialize()
        uri = _open(c)
        _change_burst(c, uri, 1, 50)
        assert c.proc.stdin is not None
        c.proc.stdin.close()  # gone: no shutdown, no exit
        c.proc.wait(timeout=30)
        assert c.proc.returncode is not None
    finally:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait()
            pytest.fail("the server kept running after its client went away")
