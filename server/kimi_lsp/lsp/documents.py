"""didOpen/didChange/didSave/didClose, and the scheduler that lints off the event loop.

Linting is throttled rather than purely debounced: the first change after a quiet spell is linted
at once (so a single edit shows its diagnostics in a few milliseconds), and changes that arrive
within ``DELAY`` of the last lint are coalesced into one lint at the end of that window. A
result computed for a document version the editor has already left is dropped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as T

from kimi_lsp.lsp import adapters

if TYPE_CHECKING:
    from kimi_lsp.lsp.server import KimiLanguageServer
    from kimi_lsp.lsp.session import DocReport

log = logging.getLogger("kimi_lsp.lsp")
DELAY = 0.1


class Scheduler:
    def __init__(self, ls: KimiLanguageServer) -> None:
        self.ls = ls
        self.pending: set[Path] = set()
        self.disk: set[Path] = set()  # changed on disk: drop cached reads first
        self.everything = False
        self.structural = False  # files came or went: every cached result and the walk are stale
        self.task: asyncio.Task[None] | None = None
        self.last_start = float("-inf")

    def request(
        self, paths: Iterable[Path], *, disk: bool = False, everything: bool = False, structural: bool = False
    ) -> None:
        paths = set(paths)
        self.pending |= paths
        if disk:
            self.disk |= paths
        self.everything = self.everything or everything or structural
        self.structural = self.structural or structural
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._drain())

    async def idle(self) -> None:
        while self.task is not None and not self.task.done():
            await asyncio.shield(self.task)

    async def _drain(self) -> None:
        while self.pending or self.everything:
            wait = self.last_start + DELAY - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            batch, disk, everything, structural = self.pending, self.disk, self.everything, self.structural
            self.pending, self.disk, self.everything, self.structural = set(), set(), False, False
            self.last_start = time.monotonic()
            if not self.ls.connected:
                return
            try:
                await self._run(batch, disk, everything, structural)
            except Exception:
                log.exception("internal error while linting %s", ", ".join(sorted(map(str, batch))))

    async def _run(self, batch: set[Path], disk: set[Path], everything: bool, structural: bool) -> None:
        ls = self.ls
        session = ls.session
        assert session is not None
        snaps = ls.snapshots()
        if everything:
            batch = batch | set(snaps)
        refresh = ls.pull_diagnostics  # pull clients are told to pull again, push clients get pushes

        def job() -> list[DocReport] | None:
            if structural:
                session.touch_all(files_changed=True)
            for p in disk:
                session.invalidate(p)
            if refresh:
                session.sync(snaps)
                return None
            return session.lint_paths(batch, snaps)

        reports = await ls.on_lint_thread(job)
        if reports is None:
            ls.workspace_diagnostic_refresh(None)
        else:
            ls.publish(reports)


def _matters_to_others(ls: KimiLanguageServer, path: Path) -> bool:
    session = ls.session
    return session is not None and (bool(session.dependents.get(path)) or adapters.is_dependency_file(path))


def changed(ls: KimiLanguageServer, uri: str, *, opened: bool = False) -> None:
    path = ls.path_of(uri)
    if path is None or ls.scheduler is None:
        return
    if ls.pull_diagnostics and (opened or not _matters_to_others(ls, path)):
        return  # the client pulls this document's diagnostics itself
    # a pin file nobody depends on yet may be new: it can govern any open launch
    new_pin = adapters.is_dependency_file(path) and not (ls.session and ls.session.dependents.get(path))
    ls.scheduler.request({path}, everything=new_pin)


async def index_workspace(ls: KimiLanguageServer) -> None:
    """Find which YAML files are ``--config`` files of other launches, as the CLI does."""
    session = ls.session
    if session is None:
        return
    from kimi_lsp.lsp import workspace_diagnostics as wsd
    from kimi_lsp.lsp.session import advance

    before = set(session.engine.referenced_configs)
    steps = session.index_steps()
    try:
        # in slices: the first edits and hovers of a session must not wait for a large walk
        while not (await ls.on_lint_thread(advance, steps, wsd.SLICE_SECONDS))[1]:
            pass
    except Exception:
        log.exception("internal error while indexing the workspace")
        return
    wsd.report_cap(ls)
    if session.engine.referenced_configs != before:
        ls.scheduler.request(session.engine.referenced_configs - before, everything=True)


def register(ls: KimiLanguageServer) -> None:
    @ls.feature(T.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: KimiLanguageServer, params: T.DidOpenTextDocumentParams) -> None:
        changed(ls, params.text_document.uri, opened=True)

    @ls.feature(T.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: KimiLanguageServer, params: T.DidChangeTextDocumentParams) -> None:
        changed(ls, params.text_document.uri)

    @ls.feature(T.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: KimiLanguageServer, params: T.DidSaveTextDocumentParams) -> None:
        path = ls.path_of(params.text_document.uri)
        if path is not None and ls.scheduler is not None and _matters_to_others(ls, path):
            ls.scheduler.request({path}, disk=True)

    @ls.feature(T.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: KimiLanguageServer, params: T.DidCloseTextDocumentParams) -> None:
        if not ls.pull_diagnostics:
            ls.clear(params.text_document.uri)
        path = ls.path_of(params.text_document.uri)
        if path is None or ls.scheduler is None:
            return
        if not ls.pull_diagnostics or _matters_to_others(ls, path):
            ls.scheduler.request({path}, disk=True)
