"""Pull diagnostics: ``textDocument/diagnostic`` (result ids) and ``workspace/diagnostic``
(launch files that are not open; streamed, sliced and cancellable: see workspace.py), for clients
that pull and can be told to pull again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as T

from kimi_lsp.lsp import session as S
from kimi_lsp.lsp import workspace_diagnostics

if TYPE_CHECKING:
    from kimi_lsp.lsp.server import KimiLanguageServer

IDENTIFIER = "kimi-lsp"


def register(ls: KimiLanguageServer) -> None:
    options = T.DiagnosticOptions(identifier=IDENTIFIER, inter_file_dependencies=True, workspace_diagnostics=True)

    @ls.feature(T.TEXT_DOCUMENT_DIAGNOSTIC, options)
    async def document_diagnostic(
        ls: KimiLanguageServer, params: T.DocumentDiagnosticParams
    ) -> T.RelatedFullDocumentDiagnosticReport | T.RelatedUnchangedDocumentDiagnosticReport:
        path = ls.path_of(params.text_document.uri)
        if path is None and ls.notebooks:  # a notebook cell: its share of the notebook's report
            from kimi_lsp.lsp import notebooks

            cell_items = await notebooks.cell_report(ls, params.text_document.uri)
            if cell_items is not None:
                rid = S.result_id(cell_items)
                if params.previous_result_id == rid:
                    return T.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
                return T.RelatedFullDocumentDiagnosticReport(items=cell_items, result_id=rid)
        if path is None or ls.session is None:
            return T.RelatedFullDocumentDiagnosticReport(items=[])
        report = await ls.on_lint_thread(ls.session.document_report, path, ls.snapshots())
        if params.previous_result_id == report.result_id:
            return T.RelatedUnchangedDocumentDiagnosticReport(result_id=report.result_id)
        return T.RelatedFullDocumentDiagnosticReport(items=report.items, result_id=report.result_id)

    @ls.feature(T.WORKSPACE_DIAGNOSTIC)
    async def workspace_diagnostic(ls: KimiLanguageServer, params: T.WorkspaceDiagnosticParams) -> T.WorkspaceDiagnosticReport:
        if ls.session is None:
            return T.WorkspaceDiagnosticReport(items=[])
        return await workspace_diagnostics.diagnose(ls, params)
