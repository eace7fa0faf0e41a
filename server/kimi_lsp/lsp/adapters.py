"""What the server needs from the engine that the engine does not (yet) expose as such.

Each helper is small and mirrors the engine or CLI logic it names, so that the editor and
``kimi-lsp --check`` agree. See the report in docs/editors.md ("engine wishes") for the API
these should become.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from kimi_lsp.config import Settings, find_config_file, load_settings
from kimi_lsp.engine import Engine
from kimi_lsp.knowledge.schema import Schema
from kimi_lsp.surfaces.model import LaunchCommand, Surface
from kimi_lsp.workspace import Workspace, find_repo_root

log = logging.getLogger("kimi_lsp.lsp")


class SessionEngine(Engine):
    """The CLI's Engine, with the editor's settings applied only where the project has no
    configuration file, unless the user prefers the editor's (``configurationPreference``)."""

    def __init__(self, workspace: Workspace, overrides: dict[str, object], prefer_editor: bool) -> None:
        super().__init__(workspace, overrides=overrides)
        self.prefer_editor = prefer_editor

    def settings_for(self, path: Path) -> Settings:
        d = path.parent
        hit = self._settings_cache.get(d)
        if hit is None:
            cfg = find_config_file(d, self.workspace, stop=find_repo_root(d, None))
            overrides = self._overrides if (cfg is None or self.prefer_editor) else None
            hit = load_settings(cfg, self.workspace, overrides or None)
            self._settings_cache[d] = hit
        return hit


def pinned_sglang(engine: Engine, path: Path, command: LaunchCommand | None = None) -> str | None:
    """The sglang version the project pins for a launch in ``path`` (engine._lint_launch's view)."""
    from kimi_lsp import engine as engine_mod
    from kimi_lsp.pins import discovery

    own_kind = None
    if command is not None and (command.own_pins or command.surface in (Surface.DOCKERFILE, Surface.SHELL)):
        own_kind = {Surface.DOCKERFILE: "dockerfile", Surface.SHELL: "shell"}.get(command.surface)
    try:
        gov = discovery.discover(path, engine.workspace, find_repo_root(path.parent, None), own_kind=own_kind)
        return engine_mod._pinned_sglang(gov)
    except Exception:  # discovery problems are reported by the lint itself
        log.debug("pin discovery failed for %s", path, exc_info=True)
        return None


def schema_for_path(engine: Engine, path: Path, command: LaunchCommand | None = None) -> Schema:
    settings = engine.settings_for(path)
    pinned = None if settings.sglang_version else pinned_sglang(engine, path, command)
    return engine.schema_for(settings, pinned)


def index_config_references(engine: Engine, files: Iterable[Path]) -> None:
    """Which YAML files are passed with ``--config`` by a launch (cli.check's index): such a file
    is linted through its launches, not on its own."""
    from kimi_lsp.launch import config_path_token, resolve_config_path

    for f in files:
        if f.suffix.lower() in (".yaml", ".yml") and "sglang" not in (engine.workspace.text(f) or ""):
            continue
        _, surface = engine.read_launches(f)
        if surface is None:
            continue
        for cmd in surface.launches:
            tok, _ = config_path_token(cmd)
            if tok is None:
                continue
            p = resolve_config_path(tok.value, cmd, engine.workspace.root)
            if p is not None:
                engine.referenced_configs.add(p.resolve())


def pin_format(path: Path) -> str | None:
    from kimi_lsp.pins import discovery

    return discovery.pin_format(path)


LOCK_FORMATS = {"uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "pylock", "conda-lock"}


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


def walk_workspace(folders: Iterable[Path], limit: int) -> list[Path]:
    """Launch-file candidates of the workspace folders, as ``kimi-lsp --check`` walks them."""
    from kimi_lsp.walk import walk

    out: dict[Path, None] = {}
    for folder in folders:
        if not folder.is_dir():
            continue
        for f in walk(folder, find_repo_root(folder, folder)):
            out[f.resolve()] = None
            if len(out) >= limit:
                log.warning("workspace has more than %d launch-file candidates; the rest are not indexed", limit)
                return list(out)
    return list(out)
