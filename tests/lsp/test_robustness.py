"""A rule that raises is one logged error and a "could not check" diagnostic, not a dead server
or a clean file; TCP transport; stale results."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig

from .conftest import TIMEOUT, diagnostics, eventually, lsp, make_client, open_doc, push_capabilities, server_env, uri

pytestmark = pytest.mark.asyncio

# Replace KL103's check with one that raises, before the engine is imported.
FAULTY = (
    "import kimi_lsp._record, kimi_lsp.rules as r\n"
    "def boom(ctx):\n"
    "    raise RuntimeError('boom from a broken rule')\n"
    "r.LAUNCH_RULES = tuple(kimi_lsp._record.replace(x, check=boom) if x.code == 'KL103' else x for x in r.LAUNCH_RULES)\n"
    "from kimi_lsp.cli.main import entry\n"
    "entry()\n"
)


async def test_exception_in_a_rule_is_logged_once_and_the_server_lives(project: Path) -> None:
    config = ClientServerConfig(
        server_command=[sys.executable, "-c", FAULTY, "serve"], client_factory=make_client, server_env=server_env()
    )
    client = await config.start()
    try:
        await client.initialize_session(T.InitializeParams(capabilities=push_capabilities(), root_uri=uri(project)))
        u = open_doc(client, project / "k3.yaml")
        diags = await diagnostics(client, u, lambda ds: len(ds) == 2)
        by_code = {d.code: d for d in diags}
        assert set(by_code) == {"KL101", "KL001"}  # the other rules still ran
        # and the file is not shown clean: it could not be checked (fail closed, as --check's exit 2)
        unchecked = by_code["KL001"]
        assert unchecked.severity == T.DiagnosticSeverity.Error and unchecked.range.start.line == 0
        assert "could not check" in unchecked.message and "KL103" in unchecked.message
        assert "boom from a broken rule" in unchecked.message
        errors = await eventually(
            lambda: [m for m in client.log_messages if "boom from a broken rule" in m.message], what="logged error"
        )
        assert len(errors) == 1 and errors[0].type == T.MessageType.Error
        assert not client.messages  # no pop-up per keystroke
        hover = await client.text_document_hover_async(
            T.HoverParams(text_document=T.TextDocumentIdentifier(uri=u), position=T.Position(line=1, character=2))
        )
        assert "--dcp-size" in hover.contents.value
        await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
    finally:
        if client._server is not None and client._server.returncode is None:
            client._server.kill()
        await client.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_tcp_transport(project: Path) -> None:
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kimi_lsp",
        "serve",
        "--tcp",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        env=server_env(),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    client = pytest_lsp.make_test_lsp_client()
    try:
        for _ in range(200):
            with contextlib.suppress(OSError):
                await client.start_tcp("127.0.0.1", port)
                break
            await asyncio.sleep(0.05)
        await asyncio.wait_for(
            client.initialize_session(T.InitializeParams(capabilities=push_capabilities(), root_uri=uri(project))),
            TIMEOUT,
        )
        u = open_doc(client, project / "k3.yaml")
        (d,) = await diagnostics(client, u)
        assert d.code == "KL101"
        await asyncio.wait_for(client.shutdown_async(None), TIMEOUT)
        client.exit(None)
        assert await asyncio.wait_for(proc.wait(), TIMEOUT) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await client.stop()


async def test_rapid_edits_publish_only_the_latest_version(project: Path) -> None:
    async with lsp(project, push_capabilities()) as client:
        u = open_doc(client, project / "k3.yaml")
        await diagnostics(client, u)
        client.published.clear()
        published = client.published
        text = (project / "k3.yaml").read_text()
        for v in range(2, 22):
            dcp = "1" if v == 21 else str(v)
            client.text_document_did_change(
                T.DidChangeTextDocumentParams(
                    text_document=T.VersionedTextDocumentIdentifier(uri=u, version=v),
                    content_changes=[
                        T.TextDocumentContentChangeWholeDocument(text=text.replace("dcp-size: 8", f"dcp-size: {dcp}"))
                    ],
                )
            )
        await eventually(lambda: published and published[-1].version == 21, what="the last version")
        assert list(published[-1].diagnostics) == []
        assert len(published) < 20  # bursts are coalesced
        assert [p.version for p in published] == sorted(p.version for p in published)
