"""Fresh pins whatever the client: push or pull (never both), and pin files that change on disk
with no watcher telling the server (Neovim 0.7-0.11 on Linux offers none)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types as T

from .conftest import diagnostics, eventually, lsp, make_project, open_doc, push_capabilities, uri

pytestmark = pytest.mark.asyncio

NEW_PIN = "flashinfer-python==0.7.2\n"


def no_watching(caps: T.ClientCapabilities) -> T.ClientCapabilities:
    caps.workspace.did_change_watched_files = T.DidChangeWatchedFilesClientCapabilities(dynamic_registration=False)
    return caps


def neovim_010_capabilities() -> T.ClientCapabilities:
    """Neovim 0.10/0.11: pulls document diagnostics, cannot be told to refresh, watches nothing."""
    caps = no_watching(push_capabilities())
    caps.text_document.diagnostic = T.DiagnosticClientCapabilities(dynamic_registration=False)
    caps.workspace.diagnostics = None
    return caps


def _codes(diags: list[T.Diagnostic]) -> list[str]:
    return [str(d.code) for d in diags]


async def test_pin_bumped_on_disk_clears_kl101_without_a_watcher(project: Path) -> None:
    async with lsp(project, no_watching(push_capabilities())) as client:
        assert client.registrations == []  # nothing to watch with
        u = open_doc(client, project / "k3.yaml")
        assert _codes(await diagnostics(client, u)) == ["KL101"]
        # `git pull` / `uv lock` / another editor: no didChangeWatchedFiles, no didSave
        (project / "requirements.txt").write_text(NEW_PIN)
        await diagnostics(client, u, lambda d: d == [])


async def test_a_new_pin_file_on_disk_is_seen_without_a_watcher(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    (root / "requirements.txt").unlink()  # no pin anywhere: KL102
    async with lsp(root, no_watching(push_capabilities())) as client:
        u = open_doc(client, root / "k3.yaml")
        assert _codes(await diagnostics(client, u)) == ["KL102"]
        (root / "requirements.txt").write_text("flashinfer-python==0.6.16.post4\n")  # a file that was not there
        assert _codes(await diagnostics(client, u, lambda d: _codes(d) != ["KL102"])) == ["KL101"]


async def test_every_lint_checks_the_disk_first(project: Path) -> None:
    # a client with watchers that missed an event (a file changed while it was busy): the next
    # edit of the launch re-reads the pin file that changed
    async with lsp(project, push_capabilities()) as client:
        u = open_doc(client, project / "k3.yaml")
        assert _codes(await diagnostics(client, u)) == ["KL101"]
        (project / "requirements.txt").write_text(NEW_PIN)
        text = (project / "k3.yaml").read_text() + "# tuned\n"
        client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                text_document=T.VersionedTextDocumentIdentifier(uri=u, version=2),
                content_changes=[T.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        await diagnostics(client, u, lambda d: d == [])


async def test_pull_only_for_clients_that_can_be_told_to_refresh(project: Path) -> None:
    async with lsp(project, neovim_010_capabilities()) as client:
        assert client.init_result.capabilities.diagnostic_provider is None  # so it never pulls
        u = open_doc(client, project / "k3.yaml")
        assert _codes(await diagnostics(client, u)) == ["KL101"]
        (project / "requirements.txt").write_text(NEW_PIN)
        await diagnostics(client, u, lambda d: d == [])
        await asyncio.sleep(0.3)
        # one push per state: the KL101, then the clear; the same diagnostics are not sent again
        shown = [_codes(p.diagnostics) for p in client.published if p.uri == u]
        assert shown == [["KL101"], []]


async def test_a_file_that_did_not_change_is_not_relinted(project: Path) -> None:
    async with lsp(project, no_watching(push_capabilities())) as client:
        u = open_doc(client, project / "k3.yaml")
        assert _codes(await diagnostics(client, u)) == ["KL101"]
        await asyncio.sleep(2.5)  # past the racy window of the files just written
        before = len([p for p in client.published if p.uri == u])
        await asyncio.sleep(4.5)  # two polls
        assert len([p for p in client.published if p.uri == u]) == before
        assert uri(project / "k3.yaml") == u
