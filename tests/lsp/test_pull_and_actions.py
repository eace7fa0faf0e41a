"""Pull diagnostics (document + workspace, result ids, refresh) and the other code actions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types as T
from pytest_lsp import client_capabilities

from .conftest import (
    REPO,
    apply_text_edits,
    apply_workspace_edit,
    diagnostics,
    eventually,
    lsp,
    make_project,
    open_doc,
    pull_capabilities,
    push_capabilities,
    uri,
)

pytestmark = pytest.mark.asyncio


def _doc(u: str) -> T.TextDocumentIdentifier:
    return T.TextDocumentIdentifier(uri=u)


async def _actions(client, u: str, diags: list[T.Diagnostic], only: list[str] | None = None) -> list[T.CodeAction]:
    rng = (
        diags[0].range if diags else T.Range(start=T.Position(line=0, character=0), end=T.Position(line=0, character=0))
    )
    result = await client.text_document_code_action_async(
        T.CodeActionParams(text_document=_doc(u), range=rng, context=T.CodeActionContext(diagnostics=diags, only=only))
    )
    return list(result or [])


async def test_pull_document_and_workspace_diagnostics(tmp_path: Path) -> None:
    root = make_project(
        tmp_path, {"scripts/serve.sh": "python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --dcp-size 8\n"}
    )
    async with lsp(root, pull_capabilities()) as client:
        u = open_doc(client, root / "k3.yaml")
        report = await client.text_document_diagnostic_async(T.DocumentDiagnosticParams(text_document=_doc(u)))
        assert report.kind == "full"
        (d,) = report.items
        assert d.code == "KL101" and report.result_id
        again = await client.text_document_diagnostic_async(
            T.DocumentDiagnosticParams(text_document=_doc(u), previous_result_id=report.result_id)
        )
        assert again.kind == "unchanged" and again.result_id == report.result_id

        ws = await client.workspace_diagnostic_async(T.WorkspaceDiagnosticParams(previous_result_ids=[]))
        by_uri = {i.uri: i for i in ws.items}
        assert u not in by_uri  # open documents are pulled one by one
        sh = by_uri[uri(root / "scripts" / "serve.sh")]
        assert [x.code for x in sh.items] == ["KL101"] and sh.version is None

        # a pin file changes on disk: the server asks the client to pull again
        (root / "requirements.txt").write_text("flashinfer-python==0.7.2\n")
        client.workspace_did_change_watched_files(
            T.DidChangeWatchedFilesParams(
                changes=[T.FileEvent(uri=uri(root / "requirements.txt"), type=T.FileChangeType.Changed)]
            )
        )
        await eventually(lambda: client.diagnostic_refresh_count >= 1, what="workspace/diagnostic/refresh")
        fresh = await client.text_document_diagnostic_async(
            T.DocumentDiagnosticParams(text_document=_doc(u), previous_result_id=report.result_id)
        )
        assert fresh.kind == "full" and list(fresh.items) == []
        ws = await client.workspace_diagnostic_async(
            T.WorkspaceDiagnosticParams(previous_result_ids=[T.PreviousResultId(uri=sh.uri, value=sh.result_id)])
        )
        assert {i.uri: list(i.items) for i in ws.items}[sh.uri] == []
        assert u not in client.diagnostics  # nothing was pushed to a pull client


async def test_fix_all_and_ignore_comment(project: Path) -> None:
    async with lsp(project, push_capabilities()) as client:
        u = open_doc(client, project / "k3.yaml")
        diags = await diagnostics(client, u)

        (fix_all,) = await _actions(client, u, [], only=["source.fixAll"])
        assert fix_all.kind == "source.fixAll.kimi-lsp"
        resolved = await client.code_action_resolve_async(fix_all)
        (tde,) = resolved.edit.document_changes
        assert tde.text_document.uri == uri(project / "requirements.txt")
        assert (
            apply_text_edits((project / "requirements.txt").read_text(), list(tde.edits))
            == "flashinfer-python==0.6.17\n"
        )

        ignore = next(a for a in await _actions(client, u, diags) if a.title == "Ignore KL101 on this line")
        resolved = await client.code_action_resolve_async(ignore)
        (tde,) = resolved.edit.document_changes
        assert tde.text_document.version == 1  # the open document's version
        text = apply_text_edits((project / "k3.yaml").read_text(), list(tde.edits))
        assert text.splitlines()[2] == "decode-attention-backend: cutedsl_mla  # kimi-lsp: ignore[KL101]"
        client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                text_document=T.VersionedTextDocumentIdentifier(uri=u, version=2),
                content_changes=[T.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        await diagnostics(client, u, lambda ds: ds == [])


async def test_ignore_inside_shell_continuation_never_breaks_the_command(tmp_path: Path) -> None:
    script = (
        "#!/bin/bash\n"
        "python -m sglang.launch_server \\\n"
        "  --model-path moonshotai/Kimi-K3 \\\n"
        "  --decode-attention-backend cutedsl_mla \\\n"
        "  --dcp-size 8 \\\n"
        "  --port 30000\n"
    )
    root = make_project(tmp_path, {"serve.sh": script})
    async with lsp(root, push_capabilities()) as client:
        u = open_doc(client, root / "serve.sh", "shellscript")
        diags = await diagnostics(client, u)
        assert diags[0].range.start.line == 3
        action = next(a for a in await _actions(client, u, diags) if a.title.startswith("Ignore KL101"))
        assert action.title == "Ignore KL101 in this file"
        resolved = await client.code_action_resolve_async(action)
        (tde,) = resolved.edit.document_changes
        text = apply_text_edits(script, list(tde.edits))
        assert text.splitlines()[:2] == ["#!/bin/bash", "# kimi-lsp: ignore-file[KL101]"]
        assert text.splitlines()[2:] == script.splitlines()[1:]


async def test_relock_followup_is_named_and_shown(tmp_path: Path) -> None:
    root = make_project(tmp_path, {})
    (root / "requirements.txt").unlink()
    for f in (REPO / "tests" / "pins_fixtures" / "uv-lock" / "pinned-old").iterdir():
        shutil.copy(f, root / f.name)
    async with lsp(root, push_capabilities()) as client:
        u = open_doc(client, root / "k3.yaml")
        diags = await diagnostics(client, u)
        bump = next(a for a in await _actions(client, u, diags) if a.title.startswith("Bump"))
        assert "uv lock --upgrade-package flashinfer-python" in bump.title
        resolved = await client.code_action_resolve_async(bump)
        assert resolved.command.command == "kimi-lsp.showFollowup"
        (tde,) = resolved.edit.document_changes
        assert tde.text_document.uri == uri(root / "pyproject.toml")  # the manifest, never the lock
        await client.workspace_execute_command_async(
            T.ExecuteCommandParams(command=resolved.command.command, arguments=resolved.command.arguments)
        )
        await eventually(
            lambda: any("uv lock --upgrade-package flashinfer-python" in m.message for m in client.messages)
        )


async def test_clients_without_resolve_or_document_changes_get_plain_edits(project: Path) -> None:
    caps = client_capabilities("visual-studio-code")
    caps.text_document.code_action.resolve_support = None
    caps.workspace.workspace_edit.document_changes = False
    async with lsp(project, caps) as client:
        u = open_doc(client, project / "k3.yaml")
        diags = await diagnostics(client, u)
        bump = next(a for a in await _actions(client, u, diags) if a.title.startswith("Bump"))
        assert bump.edit is not None and bump.edit.document_changes is None
        apply_workspace_edit(bump.edit)
        assert (project / "requirements.txt").read_text() == "flashinfer-python==0.6.17\n"


async def test_a_fix_that_no_longer_applies_resolves_disabled(project: Path) -> None:
    # VS Code announces codeAction.disabledSupport: an action whose fix went stale (the pin was
    # fixed on disk meanwhile) resolves to a disabled action with the reason, not to an error
    async with lsp(project, push_capabilities()) as client:
        u = open_doc(client, project / "k3.yaml")
        diags = await diagnostics(client, u)
        bump = next(a for a in await _actions(client, u, diags) if a.title.startswith("Bump"))
        (project / "requirements.txt").write_text("flashinfer-python==0.7.2\n")
        client.workspace_did_change_watched_files(
            T.DidChangeWatchedFilesParams(
                changes=[T.FileEvent(uri=uri(project / "requirements.txt"), type=T.FileChangeType.Changed)]
            )
        )
        await diagnostics(client, u, lambda ds: ds == [])
        resolved = await client.code_action_resolve_async(bump)
        assert resolved.edit is None
        assert resolved.disabled is not None and resolved.disabled.reason == "no edit applies to the current text"
