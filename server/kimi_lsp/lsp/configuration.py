"""Settings from the editor: ``initializationOptions``, ``workspace/configuration`` (section
``kimi-lsp``) at start, and again on ``workspace/didChangeConfiguration``."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types as T

from kimi_lsp.lsp import settings as editor_settings

if TYPE_CHECKING:
    from kimi_lsp.lsp.server import KimiLanguageServer

log = logging.getLogger("kimi_lsp.lsp")


def from_initialization_options(ls: KimiLanguageServer, options: Any) -> None:
    if isinstance(options, dict) and ls.session is not None:
        raw = options.get("settings", options)
        parsed = editor_settings.parse(raw)
        if parsed.overrides or parsed.prefer_editor or not parsed.workspace_diagnostics:
            ls.session.apply_settings(parsed)  # nothing runs on the lint thread yet


async def fetch(ls: KimiLanguageServer) -> Any:
    """The client's ``kimi-lsp`` section, or None when it cannot be asked."""
    if not ls.cap("workspace.configuration") or ls.session is None:
        return None
    item = T.ConfigurationItem(scope_uri=ls.session.root.as_uri(), section=editor_settings.SECTION)
    try:
        result = await asyncio.wait_for(ls.workspace_configuration_async(T.ConfigurationParams(items=[item])), 5)
    except Exception as exc:
        log.warning("could not read the editor's kimi-lsp settings: %s", exc)
        return None
    return result[0] if result else None


async def apply(ls: KimiLanguageServer, raw: Any) -> bool:
    """Apply settings when they differ from the current ones; True when they changed."""
    session = ls.session
    if session is None or raw is None:
        return False
    parsed = editor_settings.parse(raw)
    for problem in parsed.problems:
        ls.window_show_message(T.ShowMessageParams(type=T.MessageType.Warning, message=f"kimi-lsp: {problem}"))
    if parsed.overrides == session.editor.overrides and parsed.prefer_editor == session.editor.prefer_editor:
        session.editor = parsed  # nothing a lint reads changed (workspaceDiagnostics at most)
        return False
    await asyncio.get_running_loop().run_in_executor(session.pool, session.apply_settings, parsed)
    log.info("settings: %s (prefer editor: %s)", parsed.overrides, parsed.prefer_editor)
    return True


async def load(ls: KimiLanguageServer) -> None:
    try:
        await apply(ls, await fetch(ls))
    finally:
        if ls.ready is not None:
            ls.ready.set()


def relint_all(ls: KimiLanguageServer) -> None:
    if ls.scheduler is not None:
        ls.scheduler.request((), everything=True)


def register(ls: KimiLanguageServer) -> None:
    @ls.feature(T.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: KimiLanguageServer, params: T.DidChangeConfigurationParams) -> None:
        raw = params.settings if isinstance(params.settings, dict) else None
        if raw is not None and editor_settings.SECTION not in raw:
            raw = None  # another tool's section: ask for ours
        if raw is None:
            raw = await fetch(ls)
        if await apply(ls, raw):
            relint_all(ls)
