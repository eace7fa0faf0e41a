"""Engine edits (code-point spans in a file's current text) -> an LSP ``WorkspaceEdit``.

``documentChanges`` with the version of the open document (null when the file is not open) when
the client supports it, plain ``changes`` otherwise. Lockfiles are never edited (they carry
per-artifact hashes; the manifest is bumped and the re-lock command named instead).
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as T

from kimi_lsp.lsp import adapters, convert
from kimi_lsp.lsp.session import Session, Snaps
from kimi_lsp.text import LineIndex, Span

FileEdits = dict[Path, list[tuple[Span, str]]]


def minimal_edit(before: str, after: str) -> tuple[Span, str]:
    """One replacement turning ``before`` into ``after`` (common prefix and suffix kept)."""
    p = 0
    limit = min(len(before), len(after))
    while p < limit and before[p] == after[p]:
        p += 1
    s = 0
    while s < limit - p and before[len(before) - 1 - s] == after[len(after) - 1 - s]:
        s += 1
    return Span(p, len(before) - s), after[p : len(after) - s]


def text_edits(lines: LineIndex, items: list[tuple[Span, str]], encoding: str) -> list[T.TextEdit]:
    return [
        T.TextEdit(range=convert.span_to_range(lines, span, encoding), new_text=new)
        for span, new in sorted(items, key=lambda it: (it[0].start, it[0].end))
    ]


def workspace_edit(
    session: Session,
    snaps: Snaps,
    edits: FileEdits,
    document_changes: bool,
    texts: dict[Path, str] | None = None,
) -> T.WorkspaceEdit | None:
    """``texts``: the text each file's spans refer to (default: the file's current text)."""
    per_uri: list[tuple[str, int | None, list[T.TextEdit]]] = []
    for path, items in sorted(edits.items()):
        if adapters.is_lockfile(path) or not items:
            continue
        text = (texts or {}).get(path)
        lines = LineIndex(text) if text is not None else session.lines_of(path)
        if lines is None:
            return None
        snap = snaps.get(path)
        per_uri.append(
            (session.uri_of(path), snap.version if snap else None, text_edits(lines, items, session.encoding))
        )
    if not per_uri:
        return None
    if document_changes:
        return T.WorkspaceEdit(
            document_changes=[
                T.TextDocumentEdit(
                    text_document=T.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=es
                )
                for uri, version, es in per_uri
            ]
        )
    return T.WorkspaceEdit(changes={uri: es for uri, _, es in per_uri})
