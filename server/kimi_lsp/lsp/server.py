"""The kimi-lsp language server (pygls 2): one module per feature, this one only wires them.

``build_server()`` returns a fresh server with every handler registered (tests build their own;
there is no module singleton). ``run()`` is what ``kimi-lsp serve`` calls.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types as T
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification
from pygls.protocol.language_server import lsp_method

from kimi_lsp import __version__
from kimi_lsp.lsp import logs
from kimi_lsp.lsp.session import DocReport, DocSnap, Session, Snaps, uri_to_path

if TYPE_CHECKING:
    from concurrent.futures import Future

    from kimi_lsp.lsp.notebooks import NotebookView

    from pygls.protocol.json_rpc import RPCMessage

log = logging.getLogger("kimi_lsp.lsp")
R = TypeVar("R")


class KimiProtocol(LanguageServerProtocol):
    """Prefers UTF-8 positions when the client offers them (pygls takes the client's first), and
    answers a request whose params do not fit its method with JSON-RPC's -32602 (pygls 2 only
    logs it, leaving the client waiting forever)."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcInvalidParams:
            if not (isinstance(data, dict) and "id" in data and "method" in data):
                raise
            self._send_response(
                data["id"],
                error=T.ResponseError(code=-32602, message=f"invalid params for {data['method']}"),
            )
            # hand pygls something it ignores quietly in place of the broken request
            return JsonRPCNotification(method="$/kimi-lsp/invalidParams", jsonrpc="2.0", params=None)

    def _execute_handler(
        self,
        msg_id: str | int,
        handler: Callable[..., Any],
        callback: Callable[[Future[Any]], None],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        if callback == self._check_handler_result:
            # a notification: pygls files its future under a fresh id that nobody will ever
            # cancel or answer, and never removes it (~2 KB per keystroke, without bound)
            future = self._request_futures.get(msg_id)
            if future is not None:
                future.add_done_callback(lambda _f: self._request_futures.pop(msg_id, None))

    # -- lifecycle (LSP 3.17 "Server lifetime"), which pygls leaves to the server ----------------
    _initialize_seen = False

    def handle_message(self, message: RPCMessage) -> None:
        # pygls drops everything after shutdown without a word; a request still gets an answer
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        if getattr(self, "_shutdown", False) and method not in (None, T.EXIT) and msg_id is not None:
            error = T.ResponseError(code=-32600, message=f"{method} after shutdown: only exit is accepted")
            self._send_response(msg_id, error=error)  # InvalidRequest
            return
        super().handle_message(message)

    def _handle_request(self, msg_id: str | int, method_name: str, params: Any) -> None:
        if not self._initialize_seen and method_name != T.INITIALIZE:
            error = T.ResponseError(code=-32002, message=f"{method_name} before initialize")  # ServerNotInitialized
            self._send_response(msg_id, error=error)
            return
        super()._handle_request(msg_id, method_name, params)

    def _handle_notification(self, method_name: str, params: Any) -> None:
        if not self._initialize_seen and method_name != T.EXIT:
            return  # notifications before initialize are dropped, exit excepted
        super()._handle_notification(method_name, params)

    @lsp_method(T.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        # pygls cancels pending requests while iterating its request table, and a cancelled
        # future's done-callback (``_execute_handler`` above) removes itself from that table:
        # iterate over a copy, or shutdown answers "dictionary changed size during iteration".
        if (user_handler := self.fm.features.get(T.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current = getattr(self, "msg_id", None)
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()
        self._shutdown = True
        return None

    @lsp_method(T.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(self, params: T.DidChangeNotebookDocumentParams) -> Generator[Any, Any, None]:
        # pygls applies the change and raises at the first part that names an unknown notebook or
        # cell (text for a cell never opened), skipping the handler that rebuilds the notebook's
        # view: what it had applied by then (new cells, their text) was never linted. The client
        # is out of step either way; the view is rebuilt from what pygls holds.
        try:
            self.workspace.update_notebook_document(params)
        except (KeyError, IndexError, ValueError) as exc:
            log.warning("notebookDocument/didChange applied in part (%s: %s)", type(exc).__name__, exc)
        if (user_handler := self.fm.features.get(T.NOTEBOOK_DOCUMENT_DID_CHANGE)) is not None:
            yield user_handler, (params,), None

    @lsp_method(T.INITIALIZE)
    def lsp_initialize(self, params: T.InitializeParams) -> Generator[Any, Any, T.InitializeResult]:
        self._initialize_seen = True
        general = params.capabilities.general
        encodings = list(general.position_encodings or []) if general else []
        if general is not None and T.PositionEncodingKind.Utf8 in encodings:
            general.position_encodings = [T.PositionEncodingKind.Utf8]
        result = yield from super().lsp_initialize(params)
        if not client_pulls(params.capabilities):
            # Push or pull, never both: a client that pulls but cannot be told to pull again
            # (Neovim 0.10/0.11) would show every pushed diagnostic twice and keep a pulled one
            # after a pushed clear. It is not offered pull diagnostics, so it only gets pushes.
            result.capabilities.diagnostic_provider = None
        return result


def client_pulls(caps: T.ClientCapabilities | None) -> bool:
    """Pull diagnostics only for a client that pulls and honours ``workspace/diagnostic/refresh``
    (the server must be able to say "pull again" when a pin file changes)."""
    text = caps.text_document if caps is not None else None
    ws = caps.workspace if caps is not None else None
    diagnostics = ws.diagnostics if ws is not None else None
    return (
        text is not None and text.diagnostic is not None
        and diagnostics is not None and bool(diagnostics.refresh_support)
    )


class KimiLanguageServer(LanguageServer):
    def __init__(self) -> None:
        from kimi_lsp.lsp.notebooks import SYNC_OPTIONS

        super().__init__(
            "kimi-lsp", __version__, protocol_cls=KimiProtocol, max_workers=2, notebook_document_sync=SYNC_OPTIONS
        )
        self.session: Session | None = None
        self.ready: asyncio.Event | None = None
        self.loop_ref: asyncio.AbstractEventLoop | None = None
        self.connected = False
        self.scheduler: Any = None  # documents.Scheduler, set on initialize
        self.poller: asyncio.Future[None] | None = None  # watch.poll_disk, for clients that cannot watch
        self.published: dict[str, tuple[int | None, str]] = {}  # uri -> (version, result id) last pushed
        self.cap_reported = False  # the index cap was told to the user (once per session)
        self.notebooks: dict[Path, NotebookView] = {}  # open in a notebook editor, by the .ipynb's path
        self.frozen_at_start = False  # run() froze the start-up objects without collecting first
        self._uri_paths: dict[str, Path | None] = {}
        self._snap_by_uri: dict[str, DocSnap] = {}
        self._snaps: Snaps | None = None

    # -- client capabilities ------------------------------------------------------------------
    def cap(self, dotted: str) -> Any:
        """``cap("workspace.diagnostics.refresh_support")``: None where any part is missing."""
        obj: Any = self.client_capabilities
        for part in dotted.split("."):
            obj = getattr(obj, part, None) if obj is not None else None
        return obj

    @property
    def pull_diagnostics(self) -> bool:
        return client_pulls(self.client_capabilities)

    # -- the lint thread ----------------------------------------------------------------------
    def snapshots(self) -> Snaps:
        """The open documents as of now, for the lint thread (a new dict every time; never
        changed after). With thousands open, an edit must not resolve every URI's path again
        (``Path.resolve`` is a few system calls) nor rebuild every entry: paths are resolved
        once per URI, unchanged documents keep their ``DocSnap``, and when no document came or
        went the previous dict is copied (same keys, same order: ``Session.sync`` then only
        looks at the entries whose snapshot is new)."""
        docs = self.workspace.text_documents
        by_uri = self._snap_by_uri
        fresh: list[tuple[str, DocSnap]] = []
        same_set = len(docs) == len(by_uri)
        for uri, doc in list(docs.items()):
            snap = by_uri.get(uri)
            source = doc.source
            if snap is not None and snap.version == doc.version and snap.text is source:
                continue
            same_set = same_set and snap is not None
            fresh.append((uri, DocSnap(uri, doc.version, source)))
        for uri, snap in fresh:
            by_uri[uri] = snap
        if same_set and self._snaps is not None:
            snaps = dict(self._snaps)
            for uri, snap in fresh:
                path = self.path_of(uri)
                if path is not None:
                    snaps[path] = snap
        else:
            for uri in [u for u in by_uri if u not in docs]:
                del by_uri[uri]
            snaps = {}
            for uri, snap in by_uri.items():
                path = self.path_of(uri)
                if path is not None:
                    snaps[path] = snap
        self._snaps = snaps
        if self.notebooks:  # each open notebook as its JSON, rebuilt from the cells
            snaps = dict(snaps)
            for path, view in self.notebooks.items():
                snaps[path] = view.snap()
        return snaps

    def path_of(self, uri: str) -> Path | None:
        """``uri_to_path``, remembered per URI (forgotten when files come or go on disk)."""
        try:
            return self._uri_paths[uri]
        except KeyError:
            path = self._uri_paths[uri] = uri_to_path(uri)
            return path

    def forget_paths(self) -> None:
        self._uri_paths.clear()
        self._snap_by_uri.clear()
        self._snaps = None

    async def settled(self) -> None:
        """Wait (at most 5 s) for the editor's settings, asked for after ``initialized``."""
        if self.ready is not None and not self.ready.is_set():
            try:
                await asyncio.wait_for(self.ready.wait(), timeout=5)
            except asyncio.TimeoutError:
                log.warning("settings did not arrive in time; linting with the project's configuration")
                self.ready.set()

    async def on_lint_thread(self, fn: Callable[..., R], *args: Any) -> R:
        assert self.session is not None
        await self.settled()
        return await asyncio.get_running_loop().run_in_executor(self.session.pool, fn, *args)

    def publish(self, reports: list[DocReport]) -> None:
        """Push diagnostics, dropping reports computed for a version the editor has left and
        reports the client already has (a re-lint that changed nothing)."""
        for r in reports:
            path = self.path_of(r.uri) if self.notebooks else None
            view = self.notebooks.get(path) if path is not None else None
            if view is not None:
                if self.published.get(r.uri) != (r.version, r.result_id):
                    self.published[r.uri] = (r.version, r.result_id)
                    view.publish(self, r)
                continue
            doc = self.workspace.text_documents.get(r.uri)
            if doc is None or (r.version is not None and doc.version != r.version):
                continue
            if self.published.get(r.uri) == (r.version, r.result_id):
                continue
            self.published[r.uri] = (r.version, r.result_id)
            self.text_document_publish_diagnostics(
                T.PublishDiagnosticsParams(uri=r.uri, version=r.version, diagnostics=r.items)
            )

    def clear(self, uri: str) -> None:
        self.published.pop(uri, None)
        self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def report_server_error(self, error: Exception, source: Any) -> None:
        # out-of-band errors go to the log, not to a pop-up on every keystroke
        log.error("kimi-lsp internal error (%s): %s", getattr(source, "__name__", source), error, exc_info=error)


def make_session(ls: KimiLanguageServer, params: T.InitializeParams) -> Session:
    folders = [p for f in (params.workspace_folders or []) if (p := uri_to_path(f.uri)) is not None]
    root = folders[0] if folders else None
    if root is None and params.root_uri:
        root = uri_to_path(params.root_uri)
    if root is None and params.root_path:
        root = Path(params.root_path).resolve()
    root = root or Path.cwd().resolve()
    negotiated = ls.workspace.position_encoding
    encoding = str(getattr(negotiated, "value", negotiated) or "utf-16")
    tag_set = ls.cap("text_document.publish_diagnostics.tag_support.value_set") or ()
    return Session(root, folders or [root], encoding=encoding, tags_supported=bool(tag_set))


STARTUP_COLLECT_DELAY = 3.0


def collect_startup_garbage() -> None:
    import gc

    gc.unfreeze()
    gc.collect()
    gc.freeze()


def build_server() -> KimiLanguageServer:
    # completion, hover and code actions load on their first request (features.py)
    from kimi_lsp.lsp import commands, configuration, documents, features, notebooks, pull, watch

    ls = KimiLanguageServer()

    @ls.feature(T.INITIALIZE)
    def initialize(ls: KimiLanguageServer, params: T.InitializeParams) -> None:
        ls.loop_ref = asyncio.get_running_loop()
        ls.session = make_session(ls, params)
        ls.ready = asyncio.Event()
        ls.scheduler = documents.Scheduler(ls)
        configuration.from_initialization_options(ls, params.initialization_options)

    @ls.feature(T.INITIALIZED)
    async def initialized(ls: KimiLanguageServer, _: T.InitializedParams) -> None:
        ls.connected = True
        await configuration.load(ls)
        if not await watch.register_watchers(ls):
            ls.poller = asyncio.ensure_future(watch.poll_disk(ls))
        elif ls.session is not None:
            ls.session.client_watches = True
        await documents.index_workspace(ls)
        if ls.frozen_at_start:
            # what the imports left as garbage (~7 MiB) was frozen with them to save start-up
            # time: collect it once, after the first diagnostics are out (~30 ms, once)
            asyncio.get_running_loop().call_later(STARTUP_COLLECT_DELAY, collect_startup_garbage)

    @ls.feature(T.SHUTDOWN)
    def shutdown(ls: KimiLanguageServer, *_: Any) -> None:
        ls.connected = False
        if ls.poller is not None:
            ls.poller.cancel()
        if ls.session is not None:
            ls.session.pool.shutdown(wait=False, cancel_futures=True)

    for module in (documents, notebooks, pull, watch, configuration, features, commands):
        module.register(ls)
    return ls


def run(tcp: bool = False, host: str = "127.0.0.1", port: int = 2087, log_level: str = "WARNING") -> int:
    logs.setup(log_level)
    from kimi_lsp.lsp import framing

    framing.install()
    server = build_server()
    handler = logs.attach(server)
    # Everything imported so far lives as long as the server: keep it out of the collector's
    # full passes, which otherwise rescan it after every lint of a large file (p95 latency).
    # `kimi-lsp serve` imports with the collector off (cli/main.py: its passes over ~400,000
    # objects that all stay cost ~15-20 ms of start-up): the garbage among them is collected once,
    # after the first diagnostics (`initialized`, collect_startup_garbage).
    import gc

    gc.freeze()
    server.frozen_at_start = True
    # A lint of a 2,000-line YAML allocates ~40,000 short-lived objects (nodes, spans, tokens):
    # with the default gen-0 threshold (700) the collector runs dozens of times per keystroke and
    # its occasional full pass lands in the p95. Collect young objects every 50,000 allocations.
    gc.set_threshold(50_000, 20, 20)
    gc.enable()
    try:
        if tcp:
            server.start_tcp(host, port)
        else:
            server.start_io()
    except KeyboardInterrupt:
        return 130
    except OSError as exc:  # a host that does not resolve, a port in use or not ours to bind
        import sys

        print(f"kimi-lsp: error: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    finally:
        logs.detach(handler)
    # LSP: `exit` without a `shutdown` before it (or a client that vanished) ends with code 1
    return 0 if getattr(server.protocol, "_shutdown", False) else 1
