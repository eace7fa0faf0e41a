"""Code actions: each fix of a diagnostic as a quick-fix, "Ignore KLxxx on this line", and
``source.fixAll.kimi-lsp``. Actions are listed cheaply with ``data``; ``codeAction/resolve``
computes the ``WorkspaceEdit`` (eagerly for clients that cannot resolve)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as T

from kimi_lsp import fixes
from kimi_lsp.lsp import commands, convert, edits, fix_all, suppress
from kimi_lsp.lsp.features import FIX_ALL
from kimi_lsp.lsp.session import Session, Snaps, uri_to_path
from kimi_lsp.text import Span

if TYPE_CHECKING:
    from kimi_lsp.lsp.server import KimiLanguageServer

QUICKFIX = T.CodeActionKind.QuickFix


def _wants(only: Any, kind: str) -> bool:
    if not only:
        return True
    return any(kind == k or kind.startswith(f"{k}.") for k in only)


# -- listing ---------------------------------------------------------------------------------


def fix_actions(
    uri: str, d: T.Diagnostic, payload: dict[str, Any], refuse: Callable[[Path], str | None] | None = None
) -> list[T.CodeAction]:
    """One quick-fix per fix. Commands (the re-lock follow-up) are attached on resolve: a listed
    action carrying ``command`` reads as a bare ``Command`` to lsprotocol-based clients.
    ``refuse(path)`` says why a fix may not edit ``path`` (outside the repository, a lockfile):
    such a fix is never offered, preferred or not, as fix-all and ``--fix`` refuse it too."""
    out = []
    preferred_given = False
    for fix in payload.get("fixes", []):
        if refuse is not None and any(refuse(Path(e["path"])) for e in fix.get("edits", ())):
            continue
        safe = fix["applicability"] == "safe" and bool(fix["edits"])
        action = T.CodeAction(
            title=fix["title"], kind=QUICKFIX, diagnostics=[d], is_preferred=safe and not preferred_given
        )
        preferred_given = preferred_given or safe
        if fix["edits"]:
            action.data = {"kind": "fix", "uri": uri, "code": payload.get("code", d.code), "fix": fix}
        else:  # display-only: a suggestion shown as a message
            action.data = {"kind": "message", "message": fix["title"]}
        out.append(action)
    return out


def ignore_action(uri: str, d: T.Diagnostic, scope: str) -> T.CodeAction:
    where = "on this line" if scope == "line" else "in this file"
    return T.CodeAction(
        title=f"Ignore {d.code} {where}",
        kind=QUICKFIX,
        diagnostics=[d],
        data={"kind": "ignore", "uri": uri, "code": str(d.code), "line": d.range.start.line, "scope": scope},
    )


def list_actions(
    session: Session, snaps: Snaps, params: T.CodeActionParams, notebook: Path | None = None
) -> list[T.CodeAction]:
    """On the lint thread: the actions for the diagnostics in the request's context. For a cell
    of a notebook open in a notebook editor (``notebook``: its path), only the fixes that edit
    other files: the notebook's own text is JSON that editor does not show."""
    session.sync(snaps)
    uri = params.text_document.uri
    path = uri_to_path(uri)
    if path is None:
        return []
    only = params.context.only
    out: list[T.CodeAction] = []
    lines = session.lines_of(path)
    if _wants(only, QUICKFIX):
        roots = {fixes.edit_root(path, session.root)} | set(session.folders)
        refused: dict[Path, str | None] = {}

        def refuse(p: Path) -> str | None:
            if p == notebook:
                return "an edit of the notebook's JSON"
            if p not in refused:
                refused[p] = fixes.edit_refusal(p, session.workspace, roots)
            return refused[p]

        published = None
        for d in params.context.diagnostics:
            if d.source != convert.SOURCE or not d.code:
                continue
            payload = d.data if isinstance(d.data, dict) and "fixes" in d.data else None
            if payload is None:
                published = published if published is not None else _published(session, path)
                payload = published.get(convert.diagnostic_key(d.code, d.range), {"fixes": []})
            out.extend(fix_actions(uri, d, payload, refuse))
            if d.code not in ("KL901",) and lines is not None and notebook is None:
                out.append(ignore_action(uri, d, suppress.scope_for(lines, d.range.start.line)))
    if _wants(only, FIX_ALL) and notebook is None and fix_all.has_safe_fix(session, path):
        out.append(
            T.CodeAction(title="Fix all safe kimi-lsp problems", kind=FIX_ALL, data={"kind": "fixAll", "uri": uri})
        )
    return out


def _published(session: Session, path: Path) -> dict[convert.DiagnosticKey, dict[str, Any]]:
    """The data of the diagnostics the server would publish now, keyed by code and range."""
    report = session.report(path, None)
    return {convert.diagnostic_key(d.code, d.range): d.data for d in report.items if isinstance(d.data, dict)}


# -- resolving --------------------------------------------------------------------------------


def _fresh_fix(session: Session, path: Path, data: dict[str, Any]) -> dict[str, Any] | None:
    """The same fix recomputed when a file it edits changed since the diagnostic was made."""
    fix: dict[str, Any] = data["fix"]
    stale = any(convert.digest(session.text_of(Path(p)) or "") != h for p, h in fix["digests"].items())
    if not stale:
        return fix
    session.lint(path)
    for r in sorted(session.referrers(path)):
        session.lint(r)
    for d in session.diagnostics_for(path):
        if d.code != data["code"]:
            continue
        for f in convert.fix_payload(d, session.text_of):
            if f["title"] == fix["title"]:
                return f
    return None


def resolve_fix(session: Session, snaps: Snaps, data: dict[str, Any], document_changes: bool) -> T.WorkspaceEdit | None:
    session.sync(snaps)
    path = uri_to_path(data["uri"])
    if path is None:
        return None
    fix = _fresh_fix(session, path, data)
    if fix is None:
        return None
    roots = {fixes.edit_root(path, session.root)} | set(session.folders)
    if any(fixes.edit_refusal(Path(e["path"]), session.workspace, roots) for e in fix["edits"]):
        return None  # an action listed before the rule changed, or made by another client
    per_file: edits.FileEdits = {}
    for e in fix["edits"]:
        per_file.setdefault(Path(e["path"]), []).append((Span(e["start"], e["end"]), e["new_text"]))
    return edits.workspace_edit(session, snaps, per_file, document_changes)


def resolve_ignore(session: Session, snaps: Snaps, data: dict[str, Any], document_changes: bool) -> T.WorkspaceEdit | None:
    session.sync(snaps)
    path = uri_to_path(data["uri"])
    if path is None:
        return None
    found = suppress.ignore_edit(session, snaps, path, data["code"], int(data["line"]), data.get("scope", "line"))
    if found is None:
        return None
    return edits.workspace_edit(session, snaps, {path: [found]}, document_changes)


def resolve_fix_all(
    session: Session, snaps: Snaps, data: dict[str, Any], document_changes: bool
) -> tuple[T.WorkspaceEdit | None, list[str]]:
    session.sync(snaps)
    path = uri_to_path(data["uri"])
    if path is None:
        return None, []
    changed, followups = fix_all.fix_all(session, snaps, path)
    per_file = {p: [edits.minimal_edit(before, after)] for p, (before, after) in changed.items()}
    texts = {p: before for p, (before, _) in changed.items()}
    return edits.workspace_edit(session, snaps, per_file, document_changes, texts), followups


async def resolve(ls: KimiLanguageServer, action: T.CodeAction) -> T.CodeAction:
    data = action.data if isinstance(action.data, dict) else None
    if data is None or ls.session is None or action.edit is not None or action.command is not None:
        return action
    session, snaps = ls.session, ls.snapshots()
    doc_changes = bool(ls.cap("workspace.workspace_edit.document_changes"))
    kind = data.get("kind")
    if kind == "fix":
        action.edit = await ls.on_lint_thread(resolve_fix, session, snaps, data, doc_changes)
        if data["fix"].get("followup"):
            action.command = commands.followup_command(commands.rerun_message(data["fix"]["followup"]))
    elif kind == "message":
        action.command = commands.followup_command(data["message"])
        return action
    elif kind == "ignore":
        action.edit = await ls.on_lint_thread(resolve_ignore, session, snaps, data, doc_changes)
    elif kind == "fixAll":
        action.edit, followups = await ls.on_lint_thread(resolve_fix_all, session, snaps, data, doc_changes)
        if followups:
            action.command = commands.followup_command(commands.rerun_message("; ".join(followups)))
    if action.edit is None and ls.cap("text_document.code_action.disabled_support"):
        action.disabled = T.CodeActionDisabled(reason="no edit applies to the current text")
    return action


def can_resolve(ls: KimiLanguageServer) -> bool:
    props = ls.cap("text_document.code_action.resolve_support.properties") or ()
    return "edit" in props and bool(ls.cap("text_document.code_action.data_support"))
