"""Helpers for the language-server end-to-end tests: a tiny project on disk, a pytest-lsp client
that also answers ``client/registerCapability`` and ``workspace/applyEdit``, and capability sets
for push, pull and UTF-8 clients. The server runs as ``python -m kimi_lsp serve`` over stdio."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as T
from pygls.uris import from_fs_path
from pygls.workspace import TextDocument
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

REPO = Path(__file__).resolve().parents[2]
SERVER_CMD = [sys.executable, "-m", "kimi_lsp", "serve"]
TIMEOUT = 15.0

K3_YAML = "model-path: moonshotai/Kimi-K3\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"
OLD_PIN = "flashinfer-python==0.6.16.post4\n"


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "server"), env.get("PYTHONPATH")) if p)
    env.pop("KIMI_LSP_LOG", None)
    return env


def make_project(root: Path, files: dict[str, str] | None = None) -> Path:
    """A repository with the Kimi-K3 launch and an old flashinfer pin (KL101)."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    contents = {"k3.yaml": K3_YAML, "requirements.txt": OLD_PIN}
    contents.update(files or {})
    for name, text in contents.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode("utf-8"))
    return root


def uri(path: Path) -> str:
    return from_fs_path(str(path))


def make_client() -> LanguageClient:
    from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, default_converter, register_lsp_features

    client = LanguageClient(converter_factory=default_converter)
    own = (T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, T.PROGRESS)
    features = {m: f for m, f in DEFAULT_CLIENT_FEATURES.items() if m not in own}
    register_lsp_features(client, features)
    client.partials = {}  # type: ignore[attr-defined]  # partial-result token -> values, in order
    client.applied = []  # type: ignore[attr-defined]
    client.registrations = []  # type: ignore[attr-defined]
    client.published = []  # type: ignore[attr-defined]  # every publishDiagnostics, in order

    @client.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _publish(ls: LanguageClient, params: T.PublishDiagnosticsParams) -> None:
        ls.published.append(params)  # type: ignore[attr-defined]
        ls.diagnostics[params.uri] = params.diagnostics

    @client.feature(T.PROGRESS)
    def _progress(ls: LanguageClient, params: T.ProgressParams) -> None:
        # pytest-lsp's handler knows work-done progress only; a partial result has no "kind"
        if isinstance(params.value, dict) and "kind" not in params.value:
            ls.partials.setdefault(params.token, []).append(params.value)  # type: ignore[attr-defined]
        else:
            DEFAULT_CLIENT_FEATURES[T.PROGRESS](ls, params)

    @client.feature(T.WORKSPACE_APPLY_EDIT)
    def _apply(ls: LanguageClient, params: T.ApplyWorkspaceEditParams) -> T.ApplyWorkspaceEditResult:
        ls.applied.append(params.edit)  # type: ignore[attr-defined]
        return T.ApplyWorkspaceEditResult(applied=True)

    @client.feature(T.CLIENT_REGISTER_CAPABILITY)
    def _register(ls: LanguageClient, params: T.RegistrationParams) -> None:
        ls.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    return client


# -- capability sets ---------------------------------------------------------------------------


def push_capabilities() -> T.ClientCapabilities:
    """VS Code 1.65's snapshot: no pull diagnostics, file watching, documentChanges, resolve."""
    return client_capabilities("visual-studio-code")


def pull_capabilities() -> T.ClientCapabilities:
    caps = client_capabilities("visual-studio-code")
    caps.text_document.diagnostic = T.DiagnosticClientCapabilities(related_document_support=True)
    caps.workspace.diagnostics = T.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    return caps


def utf8_capabilities() -> T.ClientCapabilities:
    caps = client_capabilities("visual-studio-code")
    caps.general = T.GeneralClientCapabilities(
        position_encodings=[T.PositionEncodingKind.Utf16, T.PositionEncodingKind.Utf8]
    )
    return caps


@contextlib.asynccontextmanager
async def lsp(
    root: Path, capabilities: T.ClientCapabilities, settings: dict | None = None, env: dict[str, str] | None = None
) -> AsyncIterator[LanguageClient]:
    config = ClientServerConfig(
        server_command=SERVER_CMD, client_factory=make_client, server_env={**server_env(), **(env or {})}
    )
    client = await config.start()
    client.set_configuration({"kimi-lsp": settings or {}})
    try:
        result = await asyncio.wait_for(
            client.initialize_session(
                T.InitializeParams(
                    capabilities=capabilities,
                    root_uri=uri(root),
                    workspace_folders=[T.WorkspaceFolder(uri=uri(root), name=root.name)],
                )
            ),
            TIMEOUT,
        )
        client.init_result = result  # type: ignore[attr-defined]
        yield client
        await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
    finally:
        server = getattr(client, "_server", None)
        if server is not None and server.returncode is None:
            server.kill()  # a failed test: do not wait for a clean exit
        await asyncio.wait_for(client.stop(), TIMEOUT)


def open_doc(
    client: LanguageClient, path: Path, language: str = "yaml", text: str | None = None, version: int = 1
) -> str:
    u = uri(path)
    client.text_document_did_open(
        T.DidOpenTextDocumentParams(
            T.TextDocumentItem(
                uri=u, language_id=language, version=version, text=path.read_text("utf-8") if text is None else text
            )
        )
    )
    return u


async def eventually(pred: Callable[[], Any], timeout: float = TIMEOUT, what: str = "condition") -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = pred()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def diagnostics(client: LanguageClient, u: str, pred: Callable[[list], bool] = bool) -> list[T.Diagnostic]:
    """Wait until the pushed diagnostics of ``u`` satisfy ``pred``."""
    await eventually(lambda: u in client.diagnostics and pred(list(client.diagnostics[u])), what=f"diagnostics of {u}")
    return list(client.diagnostics[u])


def apply_text_edits(text: str, edits: list[T.TextEdit], encoding: str = "utf-16") -> str:
    doc = TextDocument("file:///scratch", text, position_codec=None)
    if encoding != "utf-16":
        from pygls.workspace.position_codec import PositionCodec

        doc = TextDocument("file:///scratch", text, position_codec=PositionCodec(encoding=encoding))
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        doc.apply_change(T.TextDocumentContentChangePartial(range=e.range, text=e.new_text))
    return doc.source


def apply_workspace_edit(edit: T.WorkspaceEdit, encoding: str = "utf-16") -> list[Path]:
    """Write a WorkspaceEdit to disk (the tests' stand-in for the editor); returns the paths."""
    from pygls.uris import to_fs_path

    per_uri: dict[str, list[T.TextEdit]] = {}
    for dc in edit.document_changes or ():
        assert isinstance(dc, T.TextDocumentEdit)
        per_uri.setdefault(dc.text_document.uri, []).extend(dc.edits)  # type: ignore[arg-type]
    for u, es in (edit.changes or {}).items():
        per_uri.setdefault(u, []).extend(es)
    written = []
    for u, es in per_uri.items():
        p = Path(to_fs_path(u))
        p.write_text(apply_text_edits(p.read_text("utf-8"), es, encoding), "utf-8")
        written.append(p)
    return written


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")
