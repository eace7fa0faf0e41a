"""``kimi-lsp.showFollowup``: after a bump that needs a re-lock, show the command to run."""

from __future__ import annotations

from lsprotocol import types as T

# a real import: pygls resolves command handlers' annotations to structure the arguments
from kimi_lsp.lsp.server import KimiLanguageServer

SHOW_FOLLOWUP = "kimi-lsp.showFollowup"


def followup_command(message: str) -> T.Command:
    return T.Command(title="Show the follow-up command", command=SHOW_FOLLOWUP, arguments=[message])


def rerun_message(followup: str) -> str:
    return f"kimi-lsp: now run `{followup}` so that the lockfile matches the bumped pin"


def register(ls: KimiLanguageServer) -> None:
    @ls.command(SHOW_FOLLOWUP)
    def show_followup(ls: KimiLanguageServer, message: str) -> None:
        ls.window_show_message(T.ShowMessageParams(type=T.MessageType.Info, message=message))
