"""Pin files and launch files changing on disk: dynamic ``didChangeWatchedFiles`` registration,
then ``workspace/diagnostic/refresh`` (pull clients) or a re-publish (push clients). A client that
cannot watch files (Neovim 0.7-0.11 on Linux) is not left with stale pins: the server polls the
signatures of what the open documents' lints read, and every lint checks them first."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from lsprotocol import types as T

from kimi_lsp.lsp.session import uri_to_path

if TYPE_CHECKING:
    from kimi_lsp.lsp.server import KimiLanguageServer

log = logging.getLogger("kimi_lsp.lsp")
REGISTRATION_ID = "kimi-lsp-watch"
POLL_SECONDS = 2.0  # a few dozen stat calls per open document's dependencies: negligible

PIN_GLOBS = (
    "**/requirements*.{txt,in}",
    "**/requirements/*.{txt,in}",
    "**/constraint*.txt",
    "**/pyproject.toml",
    "**/{uv.lock,poetry.lock,pdm.lock,Pipfile,Pipfile.lock}",
    "**/pylock*.toml",
    "**/{environment.yml,environment.yaml,conda-lock.yml,conda-lock.yaml}",
    "**/*.conda-lock.{yml,yaml}",
    "**/{kimi-lsp.toml,.kimi-lsp.toml}",
)
LAUNCH_GLOBS = (
    "**/*.{yaml,yml,toml,sh,bash,zsh,ksh,sbatch,slurm,pbs,md,mdx,markdown,rst,ipynb,py,pyw}",
    "**/{Dockerfile,Containerfile,dockerfile,containerfile}*",
    "**/*.dockerfile",
)


def watchers() -> list[T.FileSystemWatcher]:
    return [T.FileSystemWatcher(glob_pattern=g) for g in (*PIN_GLOBS, *LAUNCH_GLOBS)]


async def register_watchers(ls: KimiLanguageServer) -> bool:
    """Ask the client to watch pin and launch files; False when it cannot (then ``poll_disk``)."""
    if not ls.cap("workspace.did_change_watched_files.dynamic_registration"):
        return False  # no file watching (Neovim 0.7-0.11 on Linux)
    registration = T.Registration(
        id=REGISTRATION_ID,
        method=T.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=T.DidChangeWatchedFilesRegistrationOptions(watchers=watchers()),
    )
    try:
        await ls.client_register_capability_async(T.RegistrationParams(registrations=[registration]))
    except Exception as exc:  # the client refused: poll instead
        log.warning("could not register file watchers: %s", exc)
        return False
    return True


async def poll_disk(ls: KimiLanguageServer, seconds: float = POLL_SECONDS) -> None:
    """Until shutdown: every ``seconds``, look whether a file the open documents' lints read or
    probed changed on disk, and re-lint what it affects (as a watched-file event would)."""
    while ls.connected:
        await asyncio.sleep(seconds)
        session, scheduler = ls.session, ls.scheduler
        if session is None or scheduler is None or not ls.connected or not session.synced:
            continue
        try:
            # read the open documents on the lint thread too: it is the one that changes them
            changed, structural = await ls.on_lint_thread(lambda: session.disk_changes(set(session.synced)))
        except Exception:
            log.exception("internal error while checking files on disk")
            continue
        if changed:
            scheduler.request(changed, disk=True, structural=structural)


def register(ls: KimiLanguageServer) -> None:
    @ls.feature(T.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_workspace_folders(ls: KimiLanguageServer, params: T.DidChangeWorkspaceFoldersParams) -> None:
        from kimi_lsp.lsp import documents

        if ls.session is None:
            return
        folders = [p for f in ls.workspace.folders.values() if (p := uri_to_path(f.uri)) is not None]
        ls.session.folders = folders or [ls.session.root]
        ls.session.files = None
        await documents.index_workspace(ls)

    @ls.feature(T.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: KimiLanguageServer, params: T.DidChangeWatchedFilesParams) -> None:
        paths = {p for c in params.changes if (p := uri_to_path(c.uri)) is not None}
        structural = any(c.type != T.FileChangeType.Changed for c in params.changes)
        if structural:
            ls.forget_paths()  # a symlink or directory that came or went resolves differently
        if paths and ls.scheduler is not None:
            # a created or deleted pin file can govern launches that never depended on it
            ls.scheduler.request(paths, disk=True, structural=structural)
