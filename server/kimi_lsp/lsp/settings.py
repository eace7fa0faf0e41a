"""Editor settings (``workspace/configuration`` section ``kimi-lsp``) -> Engine overrides.

The keys are those of ``[tool.kimi-lsp]`` (``sglang-version``; camelCase ``sglangVersion`` is
accepted too, as VS Code settings are written that way). The project's configuration file wins
unless ``configurationPreference`` is ``"editor"`` (ruff's ``filesystemFirst`` default). Invalid
values are reported and left out; the rest still applies (jedi-language-server).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kimi_lsp.diagnostics import Severity

SECTION = "kimi-lsp"
_CODE = re.compile(r"^KL\d{0,3}$")
_STRINGS = {"sglang-version": "sglang_version", "target-gpu": "target_gpu", "flashinfer-target": "flashinfer_target"}
_CLIENT_ONLY = {"path", "interpreter", "args", "trace", "show-notifications", "log-level", "enable"}


@dataclass(frozen=True)
class EditorSettings:
    overrides: dict[str, object] = field(default_factory=dict)
    prefer_editor: bool = False
    problems: tuple[str, ...] = ()


def _dashed(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "-" + m.group(1).lower(), key).replace("_", "-")


def _codes(value: object, key: str, problems: list[str]) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [v for v in re.split(r"[,\s]+", value) if v]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        problems.append(f'`kimi-lsp.{key}` must be a list of rule codes like ["KL101", "KL2"]')
        return None
    from kimi_lsp.config import selector_problem

    codes = tuple(v.strip().upper() for v in value)
    bad = [why for why in (selector_problem(c) for c in codes) if why is not None]
    if bad:
        # fail closed: a typo in select leaves it out (every rule stays on); in ignore, only
        # the bad entries are dropped (ignoring less). Neither ever narrows the rule set.
        problems.append(f"`kimi-lsp.{key}`: {'; '.join(bad)}")
        if key != "ignore":
            return None
        return tuple(c for c in codes if selector_problem(c) is None)
    if key == "select" and not codes:
        problems.append("`kimi-lsp.select` selects no rule (leave it unset to report every rule)")
        return None
    return codes


def _severity(value: object, problems: list[str]) -> tuple[tuple[str, Severity], ...] | None:
    if not isinstance(value, dict):
        problems.append('`kimi-lsp.severity` must map codes to "error", "warning" or "info"')
        return None
    out = []
    for code, sev in value.items():
        if not _CODE.match(str(code)) or sev not in ("error", "warning", "info"):
            problems.append(f"`kimi-lsp.severity`: `{code} = {sev!r}` is not CODE = error|warning|info")
            continue
        out.append((str(code), Severity(sev)))
    return tuple(out)


def _is_version(text: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def parse(raw: object) -> EditorSettings:
    """``raw`` is what the client returned for section ``kimi-lsp`` (or a dict holding it)."""
    if not isinstance(raw, dict):
        return EditorSettings()
    if isinstance(raw.get(SECTION), dict):
        raw = raw[SECTION]
    problems: list[str] = []
    kw: dict[str, object] = {}
    prefer_editor = False
    for key, value in raw.items():
        k = _dashed(str(key))
        if value is None or k in _CLIENT_ONLY:
            continue
        if k in ("select", "ignore", "extend-select"):
            codes = _codes(value, k, problems)
            if codes is not None:
                kw[k] = codes
        elif k == "severity":
            sev = _severity(value, problems)
            if sev is not None:
                kw["severity"] = sev
        elif k in _STRINGS:
            if isinstance(value, str) and value.strip():
                if k != "target-gpu" and not _is_version(value.strip()):
                    problems.append(f"`kimi-lsp.{k}`: not a version: {value!r}")
                    continue
                if k == "target-gpu":
                    from kimi_lsp.config import gpu_problem

                    why = gpu_problem(value.strip())
                    if why is not None:
                        problems.append(f"`kimi-lsp.{k}`: {why}")
                        continue
                kw[_STRINGS[k]] = value.strip()
            elif value != "":
                problems.append(f"`kimi-lsp.{k}` must be a non-empty string")
        elif k == "configuration-preference":
            prefer_editor = str(value).lower() in ("editor", "editorfirst", "editor-first", "editoronly")
        else:
            problems.append(f"unknown setting `kimi-lsp.{key}`")
    if "extend-select" in kw:
        ext = kw.pop("extend-select")
        kw["select"] = tuple(kw.get("select", ("KL",))) + tuple(ext)  # type: ignore[arg-type]
    return EditorSettings(kw, prefer_editor, tuple(problems))
