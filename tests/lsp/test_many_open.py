"""An edit with thousands of documents open does the work of one (issue 16): the server's
snapshots resolve each URI's path once and keep unchanged entries, and ``Session.sync`` looks
only at the entries that are new."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from kimi_lsp.lsp import server as server_mod
from kimi_lsp.lsp.server import KimiLanguageServer
from kimi_lsp.lsp.session import Session

N = 2000


class Doc:
    def __init__(self, version: int, source: str) -> None:
        self.version, self.source = version, source


def fake_server(docs: dict[str, Doc]) -> SimpleNamespace:
    ls = SimpleNamespace(workspace=SimpleNamespace(text_documents=docs), _snap_by_uri={}, _snaps=None, _uri_paths={},
                         notebooks={})
    ls.path_of = lambda uri: KimiLanguageServer.path_of(ls, uri)  # type: ignore[arg-type]
    ls.snapshots = lambda: KimiLanguageServer.snapshots(ls)  # type: ignore[arg-type]
    return ls


def test_snapshots_resolve_each_uri_once_and_keep_unchanged_entries(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[str] = []
    real = server_mod.uri_to_path

    def counting(uri: str) -> Path | None:
        calls.append(uri)
        return real(uri)

    monkeypatch.setattr(server_mod, "uri_to_path", counting)
    docs = {(tmp_path / f"d{i}.yaml").as_uri(): Doc(1, f"port: {i}\n") for i in range(N)}
    ls = fake_server(docs)
    first = ls.snapshots()
    assert len(first) == N and len(calls) == N
    edited = (tmp_path / "d7.yaml").as_uri()
    docs[edited] = Doc(2, "port: 70\n")
    second = ls.snapshots()
    assert len(calls) == N  # no path resolved again
    assert second is not first and list(second) == list(first)  # same keys, same order
    changed = [p for p in second if second[p] is not first[p]]
    assert changed == [tmp_path.resolve() / "d7.yaml"] and second[changed[0]].version == 2
    del docs[edited]  # closed
    third = ls.snapshots()
    assert len(third) == N - 1 and tmp_path.resolve() / "d7.yaml" not in third


def test_sync_looks_only_at_new_entries(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    docs = {(tmp_path / f"d{i}.yaml").as_uri(): Doc(1, f"port: {i}\n") for i in range(N)}
    ls = fake_server(docs)
    session = Session(tmp_path, [tmp_path])
    assert len(session.sync(ls.snapshots())) == N
    edited = (tmp_path / "d9.yaml").as_uri()
    docs[edited] = Doc(2, "port: 90\n")
    assert session.sync(ls.snapshots()) == {tmp_path.resolve() / "d9.yaml"}
    assert session.text_of(tmp_path.resolve() / "d9.yaml") == "port: 90\n"
    assert session.sync(ls.snapshots()) == set()
    del docs[edited]
    assert session.sync(ls.snapshots()) == {tmp_path.resolve() / "d9.yaml"}  # closed: the slow path
    assert tmp_path.resolve() / "d9.yaml" not in session.synced
