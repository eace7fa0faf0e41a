"""``workspace/diagnostic`` at scale (thousands of launch files).

- Sliced: the pass (walk, stat checks, lints) runs as many short jobs on the single lint thread,
  so a didChange, hover or completion that arrives during it waits for one slice, not the pass.
- Streamed: with a ``partialResultToken`` each slice's reports go out as ``$/progress`` and the
  final response is empty (LSP 3.17, partial results).
- Cheap when nothing changed: a file is re-linted only when it or what it read changed, and an
  unchanged report (cached per file in the session) is answered by its result id.
- Cancellable: ``$/cancelRequest`` cancels this coroutine at its next ``await``, between slices;
  the rest of the pass is never submitted.
- The index cap is said once to the user (window/showMessage), never only on stderr.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from lsprotocol import types as T

from kimi_lsp.lsp import session as S

if TYPE_CHECKING:
    from kimi_lsp.lsp.server import KimiLanguageServer
    from kimi_lsp.lsp.session import DocReport

log = logging.getLogger("kimi_lsp.lsp")
SLICE_SECONDS = 0.02  # an edit waits at most about this long behind the workspace pass


_UNCHANGED: dict[tuple[str, str], T.WorkspaceUnchangedDocumentDiagnosticReport] = {}


def to_item(r: DocReport, previous: dict[str, str]) -> T.WorkspaceDocumentDiagnosticReport:
    if previous.get(r.uri) == r.result_id:
        # the same few thousand on every re-poll: made once (values, never changed after)
        key = (r.uri, r.result_id)
        item = _UNCHANGED.get(key)
        if item is None:
            if len(_UNCHANGED) > 4 * S.MAX_INDEXED_FILES:
                _UNCHANGED.clear()
            item = _UNCHANGED[key] = T.WorkspaceUnchangedDocumentDiagnosticReport(
                uri=r.uri, version=None, result_id=r.result_id
            )
        return item
    return T.WorkspaceFullDocumentDiagnosticReport(uri=r.uri, version=None, items=r.items, result_id=r.result_id)


async def diagnose(ls: KimiLanguageServer, params: T.WorkspaceDiagnosticParams) -> T.WorkspaceDiagnosticReport:
    session = ls.session
    assert session is not None
    await ls.settled()
    if not session.editor.workspace_diagnostics:
        return T.WorkspaceDiagnosticReport(items=[])  # `workspaceDiagnostics: false`: open files only
    previous = {p.uri: p.value for p in params.previous_result_ids or ()}
    token = params.partial_result_token
    steps = session.workspace_pass(ls.snapshots())
    collected: list[T.WorkspaceDocumentDiagnosticReport] = []
    done, count, lints = False, 0, session.lint_count
    try:
        while not done:
            reports, done = await ls.on_lint_thread(S.advance, steps, SLICE_SECONDS)
            report_cap(ls)
            count += len(reports)
            items = [to_item(r, previous) for r in reports]
            if token is not None and items:
                ls.progress(T.ProgressParams(token=token, value=T.WorkspaceDiagnosticReportPartialResult(items=items)))
            elif token is None:
                collected.extend(items)
    except asyncio.CancelledError:
        log.info("workspace diagnostics cancelled after %d of %d files", count, len(session.files or ()))
        raise
    log.info("workspace diagnostics: %d files, %d lints", count, session.lint_count - lints)
    return T.WorkspaceDiagnosticReport(items=collected)


def report_cap(ls: KimiLanguageServer) -> None:
    """Once per session: the workspace has more launch-file candidates than are checked."""
    session = ls.session
    if session is None or not session.capped or ls.cap_reported:
        return
    ls.cap_reported = True
    total = len(session.files or ()) + session.capped
    message = (
        f"kimi-lsp: this workspace has {total} launch-file candidates; workspace diagnostics cover "
        f"the first {S.MAX_INDEXED_FILES} ({session.capped} not checked). Open a file to check it, "
        "or run `kimi-lsp --check` for the whole tree."
    )
    log.warning("%s", message)
    ls.window_show_message(T.ShowMessageParams(type=T.MessageType.Warning, message=message))
