"""A notebook open in a notebook editor (LSP 3.17 notebook sync, as VS Code sends it): each cell is a
text document of its own, and each diagnostic sits on its cell at the cell's own line and column."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as T

from .conftest import OLD_PIN, apply_workspace_edit, diagnostics, eventually, lsp, make_project, pull_capabilities, push_capabilities, uri

pytestmark = pytest.mark.asyncio

INSTALL = '!pip install "sglang==0.5.23"'
LAUNCH = (
    "import os\n"
    "!python -m sglang.launch_server --model-path moonshotai/Kimi-K3 \\\n"
    "    --dcp-size 8 --decode-attention-backend cutedsl_mla"
)

TYPO = "!python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-sise 2"


def with_notebooks(caps: T.ClientCapabilities) -> T.ClientCapabilities:
    caps.notebook_document = T.NotebookDocumentClientCapabilities(
        synchronization=T.NotebookDocumentSyncClientCapabilities()
    )
    return caps


def cell_uri(nb: Path, k: int) -> str:
    return f"vscode-notebook-cell:{nb.as_posix()}#W{k}sZmlsZQ%3D%3D"  # as VS Code writes them: percent-encoded


def open_notebook(client, nb: Path, cells: list[tuple[T.NotebookCellKind, str, str]]) -> list[str]:
    uris = [cell_uri(nb, k) for k in range(len(cells))]
    client.notebook_document_did_open(
        T.DidOpenNotebookDocumentParams(
            notebook_document=T.NotebookDocument(
                uri=uri(nb), notebook_type="jupyter-notebook", version=1,
                cells=[T.NotebookCell(kind=kind, document=u) for (kind, _, _), u in zip(cells, uris)],
            ),
            cell_text_documents=[
                T.TextDocumentItem(uri=u, language_id=lang, version=1, text=text)
                for (_, lang, text), u in zip(cells, uris)
            ],
        )
    )
    return uris


CELLS = [
    (T.NotebookCellKind.Markup, "markdown", "# Serve Kimi-K3\n\n`python -m sglang.launch_server` in prose is no launch."),
    (T.NotebookCellKind.Code, "python", INSTALL),
    (T.NotebookCellKind.Code, "python", LAUNCH),
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj", {"k3.yaml": "", "requirements.txt": OLD_PIN})


async def test_diagnostics_sit_on_their_cell_and_the_bump_fixes_the_pin(project: Path) -> None:
    nb = project / "serve.ipynb"
    async with lsp(project, with_notebooks(push_capabilities())) as client:
        assert client.init_result.capabilities.notebook_document_sync is not None
        uris = open_notebook(client, nb, CELLS)
        diags = await diagnostics(client, uris[2], lambda ds: any(d.code == "KL101" for d in ds))
        (d,) = [d for d in diags if d.code == "KL101"]
        # line 2 of the cell, on `--decode-attention-backend` (the cell's own coordinates)
        assert d.range.start == T.Position(line=2, character=17), d.range
        assert d.range.end == T.Position(line=2, character=55)
        assert all(u in client.diagnostics and not client.diagnostics[u] for u in uris[:2])  # the other cells: cleared
        assert uri(nb) not in client.diagnostics  # nothing on the file's JSON, which is not shown

        actions = await client.text_document_code_action_async(
            T.CodeActionParams(text_document=T.TextDocumentIdentifier(uri=uris[2]), range=d.range,
                               context=T.CodeActionContext(diagnostics=[d]))
        )
        titles = [a.title for a in actions or ()]
        assert not any(t.startswith("Ignore") for t in titles), titles  # an edit of the JSON: not offered
        bump = next(a for a in actions if a.title.startswith("Bump flashinfer-python"))
        resolved = await client.code_action_resolve_async(bump)
        (tde,) = resolved.edit.document_changes
        assert tde.text_document.uri == uri(project / "requirements.txt")
        apply_workspace_edit(resolved.edit)
        assert (project / "requirements.txt").read_text() == "flashinfer-python==0.7.2\n"  # what sglang 0.5.23 (the install cell) needs
        client.workspace_did_change_watched_files(
            T.DidChangeWatchedFilesParams(
                changes=[T.FileEvent(uri=uri(project / "requirements.txt"), type=T.FileChangeType.Changed)]
            )
        )
        await diagnostics(client, uris[2], lambda ds: not any(x.code == "KL101" for x in ds))


async def test_a_cell_edit_relints_the_notebook(project: Path) -> None:
    nb = project / "serve.ipynb"
    async with lsp(project, with_notebooks(push_capabilities())) as client:
        uris = open_notebook(client, nb, CELLS)
        await diagnostics(client, uris[2], lambda ds: any(d.code == "KL101" for d in ds))
        # a typo typed into the launch cell: a new option, where the cell has it
        client.notebook_document_did_change(
            T.DidChangeNotebookDocumentParams(
                notebook_document=T.VersionedNotebookDocumentIdentifier(uri=uri(nb), version=2),
                change=T.NotebookDocumentChangeEvent(
                    cells=T.NotebookDocumentCellChanges(
                        text_content=[
                            T.NotebookDocumentCellContentChanges(
                                document=T.VersionedTextDocumentIdentifier(uri=uris[2], version=2),
                                changes=[T.TextDocumentContentChangeWholeDocument(text=TYPO)],
                            )
                        ]
                    )
                ),
            )
        )
        (d,) = await diagnostics(client, uris[2], lambda ds: [d.code for d in ds] == ["KL201"])
        assert d.range.start == T.Position(line=0, character=TYPO.index("--tp-sise"))
        # the release comes from the install cell: the related location points into that cell
        (rel,) = d.related_information or ()
        assert rel.location.uri == uris[1]
        assert rel.location.range.start == T.Position(line=0, character=INSTALL.index('"sglang'))  # the quoted word
        client.notebook_document_did_close(
            T.DidCloseNotebookDocumentParams(
                notebook_document=T.NotebookDocumentIdentifier(uri=uri(nb)),
                cell_text_documents=[T.TextDocumentIdentifier(uri=u) for u in uris],
            )
        )
        await eventually(lambda: not client.diagnostics[uris[2]], what="the closed notebook's cells cleared")


async def test_a_pulling_client_pulls_each_cell(project: Path) -> None:
    nb = project / "serve.ipynb"
    async with lsp(project, with_notebooks(pull_capabilities())) as client:
        uris = open_notebook(client, nb, CELLS)

        async def pull(k: int) -> T.DocumentDiagnosticReport:
            return await client.text_document_diagnostic_async(
                T.DocumentDiagnosticParams(text_document=T.TextDocumentIdentifier(uri=uris[k]))
            )

        async def codes() -> list[str]:
            report = await pull(2)
            return [d.code for d in report.items]

        got: list[str] = []
        for _ in range(100):
            got = await codes()
            if got:
                break
        assert got == ["KL101"]
        report = await pull(1)
        assert not report.items
        again = await client.text_document_diagnostic_async(
            T.DocumentDiagnosticParams(text_document=T.TextDocumentIdentifier(uri=uris[1]), previous_result_id=report.result_id)
        )
        assert isinstance(again, T.RelatedUnchangedDocumentDiagnosticReport)
        assert uri(nb) not in client.diagnostics  # a pulling client gets no pushes


async def test_a_change_naming_an_unknown_cell_still_lints_what_it_added(project: Path) -> None:
    """Red team L1: pygls raised at the text of a cell never opened, after adding a new cell, and
    the notebook was not rebuilt: the new cell's launch was never linted."""
    nb = project / "serve.ipynb"
    async with lsp(project, with_notebooks(push_capabilities())) as client:
        uris = open_notebook(client, nb, CELLS[:2])
        await eventually(lambda: uris[1] in client.diagnostics, what="first diagnostics")
        new = cell_uri(nb, 7)
        client.notebook_document_did_change(T.DidChangeNotebookDocumentParams(
            notebook_document=T.VersionedNotebookDocumentIdentifier(uri=uri(nb), version=2),
            change=T.NotebookDocumentChangeEvent(cells=T.NotebookDocumentCellChanges(
                structure=T.NotebookDocumentCellChangeStructure(
                    array=T.NotebookCellArrayChange(start=2, delete_count=0, cells=[T.NotebookCell(kind=T.NotebookCellKind.Code, document=new)]),
                    did_open=[T.TextDocumentItem(uri=new, language_id="python", version=1, text=LAUNCH)]),
                text_content=[T.NotebookDocumentCellContentChanges(
                    document=T.VersionedTextDocumentIdentifier(uri=cell_uri(nb, 42), version=2),
                    changes=[T.TextDocumentContentChangeWholeDocument(text="x = 1\n")])],
            )),
        ))
        diags = await diagnostics(client, new, lambda ds: any(d.code == "KL101" for d in ds))
        assert any(d.code == "KL101" for d in diags)
