"""What the server needs from the engine that the engine does not (yet) expose as such.

Each helper is small and mirrors the engine or CLI logic it names, so that the editor and
``kimi-lsp --check`` agree. See the report in docs/editors.md ("engine wishes") for the API
these should become.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from pathlib import Path

from kimi_lsp.engine import Engine
from kimi_lsp.pins.model import PinFormat
from kimi_lsp.surfaces.model import SurfaceResult
from kimi_lsp.workspace import ReadFailure, SourceText, Workspace, find_repo_root

log = logging.getLogger("kimi_lsp.lsp")


class SessionEngine(Engine):
    """The CLI's Engine, with the editor's settings applied only where the project has no
    configuration file, unless the user prefers the editor's (``configurationPreference``)."""

    def __init__(self, workspace: Workspace, overrides: dict[str, object], prefer_editor: bool) -> None:
        super().__init__(workspace, overrides=overrides, overrides_win=prefer_editor)
        self.prefer_editor = prefer_editor

    def read_launches(self, path: Path) -> tuple[SourceText | ReadFailure, SurfaceResult | None]:
        """A reader that raised finds no launch, and says so only in a note (``read_surface``):
        the editor would show the file clean. Here the note is an internal error, as a rule's
        is: the session puts a "could not check" error on the file (session.py, ``unchecked``)."""
        src, surface = super().read_launches(path)
        for note in surface.notes if surface is not None else ():
            if note.startswith("internal error") and note not in self.errors:
                log.error("%s", note)
                self.errors.append(note)
        return src, surface


def pin_format(path: Path) -> str | None:
    from kimi_lsp.pins import discovery

    return discovery.pin_format(path)


LOCK_FORMATS = {PinFormat.UV_LOCK, PinFormat.POETRY_LOCK, PinFormat.PDM_LOCK, PinFormat.PIPFILE_LOCK, PinFormat.PYLOCK, PinFormat.CONDA_LOCK}


def is_lockfile(path: Path) -> bool:
    return pin_format(path) in LOCK_FORMATS


def is_dependency_file(path: Path) -> bool:
    """Files whose change can change another file's diagnostics."""
    name = path.name.lower()
    if pin_format(path) is not None:
        return True
    return (
        name in ("kimi-lsp.toml", ".kimi-lsp.toml")
        or name.startswith(("dockerfile", "containerfile"))
        or name.endswith(".dockerfile")
    )


def iter_workspace(folders: Iterable[Path]) -> Iterator[Path]:
    """Launch-file candidates of the workspace folders, as ``kimi-lsp --check`` walks them, one
    at a time (the server walks in slices, between other work)."""
    from kimi_lsp.walk import walk

    seen: set[Path] = set()
    for folder in folders:
        if not folder.is_dir():
            continue
        for f in walk(folder, find_repo_root(folder, folder)):
            p = f.resolve()
            if p not in seen:
                seen.add(p)
                yield p
