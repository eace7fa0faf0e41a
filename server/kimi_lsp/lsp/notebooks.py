"""Notebooks in a notebook editor (LSP 3.17 notebook synchronisation).

VS Code shows a ``.ipynb`` as cells, each a text document of its own (``vscode-notebook-cell:``
URIs); the file's JSON is never a text document there. The server rebuilds a notebook's JSON from
its cells (every cell, in order, its source one JSON string), lints that text as the ``.ipynb`` at
the notebook's path, through the same session, engine and readers as ``--check``, and hands each
diagnostic to the cell it sits in, at the cell's own line and column. Related locations in the
notebook (the ``!pip install`` line that names the release) point into their cells too.

Quick-fixes whose edits lie outside the notebook (the flashinfer-python bump in requirements.txt)
are offered on a cell; an edit of the notebook's own text would be an edit of JSON the editor does
not show, so such fixes (and "ignore" comments) are left to ``--fix`` and to the file opened as text.
"""

from __future__ import annotations

import bisect
import json
import logging
from pathlib import Path
from urllib.parse import unquote
from typing import TYPE_CHECKING

from lsprotocol import types as T

from kimi_lsp.lsp import convert
from kimi_lsp.lsp.session import DocReport, DocSnap, uri_to_path
from kimi_lsp.text import LineIndex

if TYPE_CHECKING:
    from kimi_lsp.lsp.server import KimiLanguageServer

log = logging.getLogger("kimi_lsp.lsp")

SYNC_OPTIONS = T.NotebookDocumentSyncOptions(
    notebook_selector=[T.NotebookDocumentFilterWithNotebook(notebook="jupyter-notebook")],
    save=True,
)


class NotebookView:
    """One open notebook: the JSON text rebuilt from its cells, and where each cell sits in it."""

    def __init__(self, uri: str, path: Path, version: int, cells: list[tuple[str, str, str, str]]) -> None:
        # cells: (cell uri, cell_type, language id, text)
        self.uri = uri
        self.path = path
        self.version = version
        self.cell_uris = [c[0] for c in cells]
        self.cell_texts = [c[3] for c in cells]
        code_langs = [c[2] for c in cells if c[1] == "code"]
        language = "python" if not code_langs or "python" in code_langs else code_langs[0]
        self.text = json.dumps(
            {
                "cells": [{"cell_type": kind, "metadata": {}, "source": text} for _, kind, _, text in cells],
                "metadata": {"kernelspec": {"language": language}},
                "nbformat": 4,
                "nbformat_minor": 5,
            },
            indent=1,
        )
        from kimi_lsp.syntax import notebook as nb  # the reader loads with the first notebook

        self.lines = LineIndex(self.text)
        self.book = nb.read(self.text)
        self.spans = [(c.span.start, c.span.end) for c in self.book.cells]
        self._cell_lines: dict[int, LineIndex] = {}
        self._snap = DocSnap(uri, version, self.text)

    def snap(self) -> DocSnap:
        return self._snap  # one object per version: the session's sync compares snapshots by identity

    def cell_lines(self, index: int) -> LineIndex:
        if index not in self._cell_lines:
            self._cell_lines[index] = LineIndex(self.cell_texts[index])
        return self._cell_lines[index]

    def locate(self, offset: int) -> tuple[int, int] | None:
        """(cell index, offset in that cell's text) of an offset of the rebuilt JSON."""
        for index, (a, b) in enumerate(self.spans):
            if a <= offset < b or (offset == b and index == len(self.spans) - 1):
                cell = self.book.cells[index]
                starts = cell.source.starts
                k = bisect.bisect_right(starts, offset) - 1
                if k < 0:
                    k = 0
                elif k < len(starts) and offset >= cell.source.ends[k]:
                    k += 1  # past the character's escape: the next one (the closing quote: the end)
                return index, min(k, len(cell.source.text))
        return None

    def to_cell(self, rng: T.Range, encoding: str) -> tuple[int, T.Range] | None:
        """A range of the rebuilt JSON as (cell index, the same range in the cell's text)."""
        start = self.locate(convert.offset_of(self.lines, rng.start, encoding))
        if start is None:
            return None
        end = self.locate(convert.offset_of(self.lines, rng.end, encoding))
        index, a = start
        b = end[1] if end is not None and end[0] == index else len(self.cell_texts[index])
        lines = self.cell_lines(index)
        return index, T.Range(convert.position(lines, a, encoding), convert.position(lines, max(a, b), encoding))

    def from_cell(self, index: int, rng: T.Range, encoding: str) -> T.Range:
        """A range of a cell's text in the rebuilt JSON (what the session's reports are in)."""
        cell = self.book.cells[index]
        lines = self.cell_lines(index)
        a = convert.offset_of(lines, rng.start, encoding)
        b = convert.offset_of(lines, rng.end, encoding)
        return T.Range(convert.position(self.lines, cell.source.start(a), encoding),
                       convert.position(self.lines, cell.source.start(b), encoding))

    def publish(self, ls: KimiLanguageServer, report: DocReport) -> None:
        """Push the notebook's report, cell by cell (a cell left without diagnostics is cleared)."""
        if report.version is not None and report.version != self.version:
            return  # computed for a notebook version the editor has left
        encoding = ls.session.encoding if ls.session is not None else convert.UTF16
        for cell_uri, items in self.split(report.items, encoding).items():
            ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=cell_uri, diagnostics=items))

    def split(self, items: list[T.Diagnostic], encoding: str) -> dict[str, list[T.Diagnostic]]:
        """The notebook's diagnostics, each on its cell's document at the cell's own position."""
        out: dict[str, list[T.Diagnostic]] = {u: [] for u in self.cell_uris}
        for d in items:
            placed = self.to_cell(d.range, encoding)
            if placed is None:  # about the notebook as a whole: shown on its first cell, never dropped
                if not self.cell_uris:
                    log.warning("a diagnostic on a notebook without cells: %s %s", d.code, d.message)
                    continue
                placed = (0, T.Range(T.Position(line=0, character=0), T.Position(line=0, character=0)))
            index, rng = placed
            related = []
            for r in d.related_information or ():
                where = self.to_cell(r.location.range, encoding) if r.location.uri == self.uri else None
                if where is not None:
                    r = T.DiagnosticRelatedInformation(
                        location=T.Location(uri=self.cell_uris[where[0]], range=where[1]), message=r.message)
                related.append(r)
            out[self.cell_uris[index]].append(
                T.Diagnostic(range=rng, message=d.message, severity=d.severity, code=d.code,
                             code_description=d.code_description, source=d.source,
                             related_information=related or None, tags=d.tags, data=d.data)
            )
        return out


def build(ls: KimiLanguageServer, notebook_uri: str) -> NotebookView | None:
    doc = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    path = uri_to_path(notebook_uri)
    if doc is None or path is None:
        return None
    cells = []
    for cell in doc.cells:
        docs = ls.workspace.text_documents  # pygls 2.0 keys them by the URI as sent, later ones unquoted
        text_doc = docs.get(cell.document) or docs.get(unquote(cell.document))
        if text_doc is None:
            continue
        kind = "code" if cell.kind == T.NotebookCellKind.Code else "markdown"
        cells.append((cell.document, kind, text_doc.language_id or "", text_doc.source))
    return NotebookView(notebook_uri, path, doc.version, cells)


def view_of_cell(ls: KimiLanguageServer, cell_uri: str) -> tuple[NotebookView, int] | None:
    for view in ls.notebooks.values():
        if cell_uri in view.cell_uris:
            return view, view.cell_uris.index(cell_uri)
    return None


async def cell_report(ls: KimiLanguageServer, cell_uri: str) -> list[T.Diagnostic] | None:
    """``textDocument/diagnostic`` for a cell: its share of the notebook's report (None: no cell)."""
    found = view_of_cell(ls, cell_uri)
    if found is None or ls.session is None:
        return None
    view, _ = found
    report = await ls.on_lint_thread(ls.session.document_report, view.path, ls.snapshots())
    return view.split(report.items, ls.session.encoding).get(cell_uri, [])


def cell_action_params(ls: KimiLanguageServer, params: T.CodeActionParams) -> tuple[T.CodeActionParams, Path] | None:
    """A code-action request on a cell, as the same request on the rebuilt notebook (and the
    notebook's path, whose own text no offered fix may edit)."""
    found = view_of_cell(ls, params.text_document.uri)
    if found is None or ls.session is None:
        return None
    view, index = found
    enc = ls.session.encoding
    diags = [
        T.Diagnostic(range=view.from_cell(index, d.range, enc), message=d.message, severity=d.severity,
                     code=d.code, source=d.source, data=d.data)
        for d in params.context.diagnostics
    ]
    return (
        T.CodeActionParams(
            text_document=T.TextDocumentIdentifier(uri=view.uri),
            range=view.from_cell(index, params.range, enc),
            context=T.CodeActionContext(diagnostics=diags, only=params.context.only, trigger_kind=params.context.trigger_kind),
        ),
        view.path,
    )


def _refresh(ls: KimiLanguageServer, notebook_uri: str, *, closed: bool = False) -> None:
    path = uri_to_path(notebook_uri)
    if path is None or ls.scheduler is None:
        return
    old = ls.notebooks.pop(path, None)
    ls.published.pop(notebook_uri, None)
    if not closed:
        view = build(ls, notebook_uri)
        if view is not None:
            ls.notebooks[path] = view
    elif old is not None and not ls.pull_diagnostics:
        for cell_uri in old.cell_uris:
            ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=cell_uri, diagnostics=[]))
    ls.scheduler.request({path}, disk=closed)


def register(ls: KimiLanguageServer) -> None:
    @ls.feature(T.NOTEBOOK_DOCUMENT_DID_OPEN, SYNC_OPTIONS)
    def did_open(ls: KimiLanguageServer, params: T.DidOpenNotebookDocumentParams) -> None:
        _refresh(ls, params.notebook_document.uri)

    @ls.feature(T.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def did_change(ls: KimiLanguageServer, params: T.DidChangeNotebookDocumentParams) -> None:
        _refresh(ls, params.notebook_document.uri)

    @ls.feature(T.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def did_close(ls: KimiLanguageServer, params: T.DidCloseNotebookDocumentParams) -> None:
        _refresh(ls, params.notebook_document.uri, closed=True)

