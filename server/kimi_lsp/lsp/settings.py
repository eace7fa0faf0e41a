"""Editor settings (``workspace/configuration`` section ``kimi-lsp``) -> Engine overrides.

The keys are those of ``[tool.kimi-lsp]`` (``sglang-version``; camelCase ``sglangVersion`` is
accepted too, as VS Code settings are written that way). The project's configuration file wins
unless ``configurationPreference`` is ``"editor"`` (ruff's ``filesystemFirst`` default). Invalid
values are reported and left out; the rest still applies (jedi-language-server). Keys, types
and messages come from ``kimi_lsp.settings_schema``, which ``[tool.kimi-lsp]`` is read by too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kimi_lsp import settings_schema as schema
from kimi_lsp.diagnostics import Severity

SECTION = "kimi-lsp"


@dataclass(frozen=True)
class EditorSettings:
    overrides: dict[str, object] = field(default_factory=dict)
    prefer_editor: bool = False
    problems: tuple[str, ...] = ()
    workspace_diagnostics: bool = True  # `workspaceDiagnostics: false`: only open files are checked


def _dashed(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "-" + m.group(1).lower(), key).replace("_", "-")


# The editor spells keys its own way (camelCase, underscores); the schema's key for each spelling.
_EDITOR_KEYS = {_dashed(s.key): s for s in schema.SETTINGS if s.editor}


def parse(raw: object) -> EditorSettings:
    """``raw`` is what the client returned for section ``kimi-lsp`` (or a dict holding it).
    Values are validated by the settings schema, as ``[tool.kimi-lsp]`` is; an invalid value is
    reported and left out, the rest still applies (jedi-language-server)."""
    if not isinstance(raw, dict):
        return EditorSettings()
    section = raw.get(SECTION)
    table = section if isinstance(section, dict) else raw
    from kimi_lsp.config import check_setting

    problems: list[str] = []
    kw: dict[str, object] = {}
    flags: dict[str, bool] = {}
    prefer_editor = False
    for key, value in table.items():
        k = _dashed(str(key))
        if value is None or k in schema.CLIENT_ONLY:
            continue
        setting = _EDITOR_KEYS.get(k)
        if setting is None:
            problems.append(f"unknown setting `kimi-lsp.{key}`")
            continue
        if setting.kind == "choice":  # configurationPreference; ruff's spellings are accepted too
            prefer_editor = str(value).lower() in ("editor", "editorfirst", "editor-first", "editoronly")
            continue
        if value == "" and setting.kind in ("version", "gpu"):
            continue  # VS Code's default for an unset string
        got = check_setting(setting, value, loose_lists=True)
        problems.extend(f"`kimi-lsp.{setting.key}`: {msg}" for msg in got.problems)
        if setting.kind == "flag":  # read by the server itself, not an engine override
            if isinstance(value, bool):
                flags[setting.key] = value
            continue
        if got.value is not None:
            kw[setting.key if setting.key == "extend-select" else setting.attr] = got.value
    # kw holds values settings_schema.check validated per key, typed object here
    if "severity" in kw:
        kw["severity"] = tuple((c, Severity(v)) for c, v in kw["severity"])  # type: ignore[attr-defined]
    if "extend-select" in kw:
        ext = kw.pop("extend-select")
        kw["select"] = tuple(kw.get("select", ("KL",))) + tuple(ext)  # type: ignore[arg-type]
    return EditorSettings(kw, prefer_editor, tuple(problems), flags.get("workspaceDiagnostics", True))
