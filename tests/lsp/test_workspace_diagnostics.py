"""``workspace/diagnostic`` at scale, end to end: streamed partial results, an unchanged re-poll
answered from result ids without linting, edits and hovers served during a long pass, and the
index cap told to the user. (Cancellation is driven with a raw client in
tests/reliability/test_server_load.py, which sends ``$/cancelRequest`` itself.)"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from lsprotocol import types as T

from .conftest import K3_YAML, eventually, lsp, make_project, open_doc, pull_capabilities, uri

pytestmark = pytest.mark.asyncio
SH = "python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --dcp-size 8 --tp-size {tp}\n"


def many_launches(root: Path, n: int) -> Path:
    files = {f"scripts/s{i:04d}.sh": SH.format(tp=1 + i % 8) for i in range(n)}
    return make_project(root, files)


def _lints(client: object) -> list[int]:
    out = []
    for m in client.log_messages:  # type: ignore[attr-defined]
        found = re.search(r"workspace diagnostics: (\d+) files, (\d+) lints", m.message)
        if found:
            out.append(int(found.group(2)))
    return out


async def test_streamed_then_unchanged_repoll_without_relinting(tmp_path: Path) -> None:
    root = many_launches(tmp_path / "proj", 60)
    await asyncio.sleep(2.1)  # files this new may change again unseen: each poll would re-read them
    async with lsp(root, pull_capabilities(), env={"KIMI_LSP_LOG": "INFO"}) as client:
        first = await client.workspace_diagnostic_async(
            T.WorkspaceDiagnosticParams(previous_result_ids=[], partial_result_token="ws-1")
        )
        assert list(first.items) == []  # everything went out as partial results (LSP 3.17)
        batches = client.partials["ws-1"]  # type: ignore[attr-defined]
        items = [i for b in batches for i in b["items"]]
        by_uri = {i["uri"]: i for i in items}
        assert len(by_uri) == len(items) == 61  # 60 scripts + k3.yaml, each once
        sh = by_uri[uri(root / "scripts" / "s0000.sh")]
        assert sh["kind"] == "full" and [d["code"] for d in sh["items"]] == ["KL101"]

        previous = [T.PreviousResultId(uri=u, value=i["resultId"]) for u, i in by_uri.items()]
        again = await client.workspace_diagnostic_async(T.WorkspaceDiagnosticParams(previous_result_ids=previous))
        assert {i.kind for i in again.items} == {"unchanged"} and len(again.items) == 61
        await eventually(lambda: len(_lints(client)) >= 2, what="the pass's log line")
        first_lints, repoll_lints = _lints(client)[:2]
        assert first_lints >= 61 and repoll_lints == 0

        # one pin changes on disk (no watcher event): only what read it is linted again
        (root / "requirements.txt").write_text("flashinfer-python==0.7.2\n")
        fresh = await client.workspace_diagnostic_async(T.WorkspaceDiagnosticParams(previous_result_ids=previous))
        assert {i.kind for i in fresh.items} == {"full"}
        assert all(not i.items for i in fresh.items if isinstance(i, T.WorkspaceFullDocumentDiagnosticReport))
        await eventually(lambda: len(_lints(client)) >= 3, what="the pass's log line")
        assert _lints(client)[2] == 61


async def test_hover_and_pull_are_served_during_a_long_pass(tmp_path: Path) -> None:
    root = many_launches(tmp_path / "proj", 600)
    async with lsp(root, pull_capabilities()) as client:
        u = open_doc(client, root / "k3.yaml", text=K3_YAML)
        # let the initial index finish so the pass below is all linting
        await client.text_document_diagnostic_async(T.DocumentDiagnosticParams(text_document=T.TextDocumentIdentifier(uri=u)))
        pass_ = asyncio.ensure_future(
            client.workspace_diagnostic_async(T.WorkspaceDiagnosticParams(previous_result_ids=[], partial_result_token="p"))
        )
        await eventually(lambda: client.partials.get("p"), what="a first partial result")  # type: ignore[attr-defined]
        hover = await client.text_document_hover_async(
            T.HoverParams(text_document=T.TextDocumentIdentifier(uri=u), position=T.Position(line=2, character=3))
        )
        assert hover is not None and "decode" in str(hover.contents)
        assert not pass_.done(), "the hover waited for the whole workspace pass"
        client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                text_document=T.VersionedTextDocumentIdentifier(uri=u, version=2),
                content_changes=[T.TextDocumentContentChangeWholeDocument(text=K3_YAML.replace("dcp-size: 8", "dcp-size: 1"))],
            )
        )
        report = await client.text_document_diagnostic_async(
            T.DocumentDiagnosticParams(text_document=T.TextDocumentIdentifier(uri=u))
        )
        assert report.kind == "full" and list(report.items) == []
        assert not pass_.done(), "the edit's diagnostics waited for the whole workspace pass"
        await asyncio.wait_for(pass_, 120)
        seen = {i["uri"] for b in client.partials["p"] for i in b["items"]}  # type: ignore[attr-defined]
        assert len(seen) == 600 and u not in seen


async def test_the_index_cap_is_told_to_the_user(tmp_path: Path) -> None:
    from kimi_lsp.lsp.session import MAX_INDEXED_FILES

    root = make_project(tmp_path / "proj")
    cfg = root / "many"
    cfg.mkdir()
    for i in range(MAX_INDEXED_FILES + 20):
        (cfg / f"c{i:05d}.yaml").write_text("a: 1\n")
    async with lsp(root, pull_capabilities()) as client:
        await eventually(lambda: client.messages, timeout=60, what="window/showMessage")
        (msg,) = client.messages
        assert msg.type == T.MessageType.Warning
        assert f"first {MAX_INDEXED_FILES}" in msg.message and "(21 not checked)"  # 5,020 + k3.yaml in msg.message
        await client.workspace_diagnostic_async(T.WorkspaceDiagnosticParams(previous_result_ids=[]))
        assert len(client.messages) == 1  # once per session
        assert any("not checked" in m.message for m in client.log_messages)


async def test_workspace_diagnostics_can_be_switched_off(tmp_path: Path) -> None:
    root = many_launches(tmp_path / "proj", 3)
    async with lsp(root, pull_capabilities(), settings={"workspaceDiagnostics": False}) as client:
        report = await client.workspace_diagnostic_async(T.WorkspaceDiagnosticParams(previous_result_ids=[]))
        assert list(report.items) == []  # only open files are checked
        assert not [m for m in client.messages if "workspaceDiagnostics" in m.message]  # a known setting
        u = open_doc(client, root / "scripts" / "s0000.sh", "shellscript")
        doc = await client.text_document_diagnostic_async(T.DocumentDiagnosticParams(text_document=T.TextDocumentIdentifier(uri=u)))
        assert [d.code for d in doc.items] == ["KL101"]
