"""Push diagnostics and the cross-file quick-fix, end to end over stdio (VS Code 1.65 client)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kimi_lsp.catalogue import doc_url
from kimi_lsp.rules import BY_CODE
from lsprotocol import types as T

from .conftest import apply_workspace_edit, diagnostics, lsp, open_doc, push_capabilities, uri

pytestmark = pytest.mark.asyncio


async def test_kl101_quickfix_bumps_the_pin_and_clears(project: Path) -> None:
    async with lsp(project, push_capabilities()) as client:
        u = open_doc(client, project / "k3.yaml")
        diags = await diagnostics(client, u)
        (d,) = diags
        assert d.code == "KL101" and d.source == "kimi-lsp"
        assert d.severity == T.DiagnosticSeverity.Error
        assert d.range.start == T.Position(line=2, character=0)
        assert d.code_description.href == doc_url(BY_CODE["KL101"])
        (rel,) = d.related_information
        assert rel.location.uri == uri(project / "requirements.txt")
        assert rel.location.range.start.line == 0

        # the file watchers were registered dynamically (the client supports it)
        assert any(r.method == T.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in client.registrations)

        actions = await client.text_document_code_action_async(
            T.CodeActionParams(
                text_document=T.TextDocumentIdentifier(uri=u),
                range=d.range,
                context=T.CodeActionContext(diagnostics=diags),
            )
        )
        titles = [a.title for a in actions]
        bump = next(a for a in actions if a.title.startswith("Bump flashinfer-python"))
        assert bump.is_preferred and bump.kind == T.CodeActionKind.QuickFix
        assert bump.edit is None  # computed lazily
        assert "Ignore KL101 on this line" in titles
        assert sum(1 for a in actions if a.is_preferred) == 1

        resolved = await client.code_action_resolve_async(bump)
        (tde,) = resolved.edit.document_changes
        assert tde.text_document.uri == uri(project / "requirements.txt")
        assert tde.text_document.version is None  # not open in the editor
        apply_workspace_edit(resolved.edit)
        assert (project / "requirements.txt").read_text() == "flashinfer-python==0.6.17\n"

        client.workspace_did_change_watched_files(
            T.DidChangeWatchedFilesParams(
                changes=[T.FileEvent(uri=uri(project / "requirements.txt"), type=T.FileChangeType.Changed)]
            )
        )
        assert await diagnostics(client, u, lambda ds: ds == []) == []


async def test_pin_file_open_in_editor_updates_launch(project: Path) -> None:
    """Fallback for clients without file watching: edits of an open pin file re-lint dependents."""
    async with lsp(project, push_capabilities()) as client:
        u = open_doc(client, project / "k3.yaml")
        await diagnostics(client, u)
        req = project / "requirements.txt"
        ru = open_doc(client, req, "pip-requirements")
        client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                text_document=T.VersionedTextDocumentIdentifier(uri=ru, version=2),
                content_changes=[T.TextDocumentContentChangeWholeDocument(text="flashinfer-python==0.7.2\n")],
            )
        )
        await diagnostics(client, u, lambda ds: ds == [])
        # the edit of the open pin file carries its version
        client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                text_document=T.VersionedTextDocumentIdentifier(uri=ru, version=3),
                content_changes=[T.TextDocumentContentChangeWholeDocument(text=req.read_text())],
            )
        )
        diags = await diagnostics(client, u, lambda ds: len(ds) == 1)
        actions = await client.text_document_code_action_async(
            T.CodeActionParams(
                text_document=T.TextDocumentIdentifier(uri=u),
                range=diags[0].range,
                context=T.CodeActionContext(diagnostics=diags),
            )
        )
        bump = await client.code_action_resolve_async(next(a for a in actions if a.title.startswith("Bump")))
        (tde,) = bump.edit.document_changes
        assert tde.text_document.version == 3


_NOTEBOOK = json.dumps(
    {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                "source": ["!python -m sglang.launch_server --model-path moonshotai/Kimi-K3 \\\n",
                           "    --dcp-size 8 --decode-attention-backend cutedsl_mla"]}],
     "metadata": {"kernelspec": {"language": "python", "name": "python3"}}, "nbformat": 4, "nbformat_minor": 5},
    indent=1,
)
_NOTEBOOK_PIN_LINE = next(k for k, line in enumerate(_NOTEBOOK.splitlines()) if "cutedsl_mla" in line)


@pytest.mark.parametrize(("name", "language", "text", "pin_line", "severity"), [
    # a Markdown deploy guide: the launch in a console block, the pin in the project's
    # requirements.txt (a guess at what its reader installs: a warning, the bump still offered)
    ("DEPLOY.md", "markdown",
     "# Deploy\n\n```console\n$ python -m sglang.launch_server --model-path moonshotai/Kimi-K3 \\\n"
     "    --dcp-size 8 --decode-attention-backend cutedsl_mla\n```\n", 4, T.DiagnosticSeverity.Warning),
    # Python: sglang.Engine keywords, run in the project's environment
    ("serve.py", "python",
     'import sglang as sgl\n\nengine = sgl.Engine(model_path="moonshotai/Kimi-K3", dcp_size=8,\n'
     '                    decode_attention_backend="cutedsl_mla")\n', 3, T.DiagnosticSeverity.Error),
    # Python: an argv list given to subprocess
    ("launch.py", "python",
     'import subprocess\n\nsubprocess.run(["python", "-m", "sglang.launch_server", "--model-path",\n'
     '                "moonshotai/Kimi-K3", "--dcp-size", "8",\n'
     '                "--decode-attention-backend", "cutedsl_mla"], check=True)\n', 4, T.DiagnosticSeverity.Error),
    # a notebook opened as its JSON text: a `!python -m` line of a code cell
    ("serve.ipynb", "json", _NOTEBOOK, _NOTEBOOK_PIN_LINE, T.DiagnosticSeverity.Error),
])
async def test_kl101_quickfix_from_documentation_and_code(
    project: Path, name: str, language: str, text: str, pin_line: int, severity: T.DiagnosticSeverity
) -> None:
    (project / name).write_text(text)
    async with lsp(project, push_capabilities()) as client:
        u = open_doc(client, project / name, language)
        diags = await diagnostics(client, u, lambda ds: any(d.code == "KL101" for d in ds))
        d = next(d for d in diags if d.code == "KL101")
        assert d.severity == severity and d.range.start.line == pin_line
        actions = await client.text_document_code_action_async(
            T.CodeActionParams(text_document=T.TextDocumentIdentifier(uri=u), range=d.range,
                               context=T.CodeActionContext(diagnostics=[d]))
        )
        bump = next(a for a in actions if a.title.startswith("Bump flashinfer-python"))
        resolved = await client.code_action_resolve_async(bump)
        (tde,) = resolved.edit.document_changes
        assert tde.text_document.uri == uri(project / "requirements.txt")
        apply_workspace_edit(resolved.edit)
        assert (project / "requirements.txt").read_text() == "flashinfer-python==0.6.17\n"
        client.workspace_did_change_watched_files(
            T.DidChangeWatchedFilesParams(
                changes=[T.FileEvent(uri=uri(project / "requirements.txt"), type=T.FileChangeType.Changed)]
            )
        )
        await diagnostics(client, u, lambda ds: not any(x.code == "KL101" for x in ds))
