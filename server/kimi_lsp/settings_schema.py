"""The one settings schema: every kimi-lsp setting's name, type, default, allowed values and docs.

``config`` (``kimi-lsp.toml`` / ``[tool.kimi-lsp]``) and ``lsp/settings`` (editor settings) both
validate through :func:`check`, so a value means the same and is refused with the same message
wherever it is written. ``scripts/gen_settings.py`` writes the extension's
``contributes.configuration`` and ``src/common/settingsSchema.ts`` from :data:`SETTINGS`; a test
checks both are current.

Decided once, for every consumer:
- ``severity`` keys are whole rule codes (``KL102``), never prefixes: a prefix matched nothing
  (``severity_for`` compares whole codes), so it was a silent no-op in the project file.
- ``severity`` values are ``error``, ``warning`` or ``info``; ``warn`` and ``information`` are
  accepted as their aliases (the extension always accepted them), in any case.
- Rule codes are read case-insensitively (``kl101`` is ``KL101``), as the CLI always did.

Kept per source, because the source's syntax differs: an editor may write a code list as one
string ("KL1, KL2"), a TOML file may not (a string there is most likely a mistyped list).

This module sits on floor 2 (below ``config``, which reads it) and imports only ``_record``:
the rule registry comes in as ``known`` (the caller loads it lazily).
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from kimi_lsp import _regex
from kimi_lsp._record import dataclass

SEVERITIES = ("error", "warning", "info")
SEVERITY_ALIASES = {"warn": "warning", "information": "info"}
CODE_OR_PREFIX = r"^KL\d{0,3}$"
FULL_CODE = r"^KL\d{3}$"
PREFERENCES = ("project", "editor")
GPU_SM = {
    "b200": 100, "b300": 103, "gb200": 100, "gb300": 103, "h100": 90, "h200": 90, "h20": 90, "h800": 90,
    "a100": 80, "a800": 80, "l40s": 89, "l40": 89, "rtx5090": 120, "rtx pro 6000": 120,
}

_CODE_OR_PREFIX = _regex.compile(CODE_OR_PREFIX)
_FULL_CODE = _regex.compile(FULL_CODE)


@dataclass(frozen=True)
class Setting:
    """One setting. ``kind`` decides its type and validation:

    codes        list of rule codes or prefixes
    severity     table CODE -> error|warning|info
    version      a PEP 440 version
    gpu          a GPU name or sm_NN
    path         a path relative to the configuration file
    globs        list of path globs
    glob-codes   table glob -> list of rule codes
    choice       one of ``choices`` (editor only)
    flag         true or false (``default`` is "true" or "false")
    client       read by the extension only; the server accepts and ignores it (``boolean``: a
                 true/false switch; with ``choices``: one of them)
    """

    key: str
    kind: str
    doc: str
    project: bool = True  # read from kimi-lsp.toml / [tool.kimi-lsp]
    editor: bool = True  # read from the editor (workspace/configuration section "kimi-lsp")
    contributed: bool = True  # declared in the extension's package.json (when editor)
    choices: tuple[str, ...] = ()
    choice_docs: tuple[str, ...] = ()
    default: str | None = None  # for choice settings
    scope: str = "resource"
    editor_doc: str = ""  # the extension's description, when it says more than ``doc``
    markdown: bool = True  # the extension's description is Markdown (VS Code renders `code`)
    boolean: bool = False  # a client setting that is true or false (``default`` "true"/"false")

    @property
    def attr(self) -> str:
        return self.key.replace("-", "_")


SETTINGS: tuple[Setting, ...] = (
    Setting("enable", "client", "Run the kimi-lsp server. `false`: no server is started (no diagnostics, hovers or fixes from kimi-lsp).",
            project=False, boolean=True, default="true"),
    Setting("importStrategy", "client", "Which kimi-lsp server runs. `useBundled`: the one bundled with the extension, run by the "
            "Python extension's selected interpreter or `python3`/`python` on `PATH` (Python 3.10 or newer; nothing is installed). "
            "`fromEnvironment`: a `kimi-lsp` installed in your environment (`#kimi-lsp.interpreter#`, the selected interpreter, "
            "`PATH`). `#kimi-lsp.path#` takes precedence over both.", project=False,
            choices=("useBundled", "fromEnvironment"), default="useBundled",
            choice_docs=("The server bundled with the extension, run by a Python 3.10+ interpreter.",
                         "A kimi-lsp installed in your environment.")),
    Setting("path", "client", "Paths to `kimi-lsp` executables. The first one that exists is started as `<path> serve`. "
            "Takes precedence over `#kimi-lsp.importStrategy#` and `#kimi-lsp.interpreter#`. Supports `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and `~`.",
            project=False),
    Setting("interpreter", "client", "A Python interpreter (with optional leading arguments, e.g. `[\"conda\", \"run\", \"-n\", \"serve\", "
            "\"python\"]`) that runs the server: with `#kimi-lsp.importStrategy#` `useBundled`, the bundled server (Python 3.10 or "
            "newer; nothing needs to be installed); with `fromEnvironment`, the `kimi-lsp` installed in it (`<python> -m kimi_lsp serve`). "
            "When empty, the Python extension's active environment is used, and then `python3`/`python` (useBundled) or `kimi-lsp` "
            "(fromEnvironment) on `PATH`.", project=False),
    Setting("args", "client", "Extra arguments appended to `kimi-lsp serve`, e.g. `[\"--log-level\", \"DEBUG\"]`.", project=False),
    Setting("trace.server", "client", "Traces the messages between VS Code and the kimi-lsp server (shown in the kimi-lsp output channel).",
            project=False, choices=("off", "messages", "verbose"), default="off", scope="window", markdown=False),
    Setting("select", "codes", "codes or prefixes to report (default: all)",
            editor_doc="Rule codes or prefixes to report, like `select` in `[tool.kimi-lsp]`. Empty: use the project's setting (all rules by default)."),
    Setting("ignore", "codes", "codes or prefixes never to report",
            editor_doc="Rule codes or prefixes never to report, like `ignore` in `[tool.kimi-lsp]`."),
    Setting("extend-select", "codes", "codes added to `select`", contributed=False),
    Setting("per-file-ignores", "glob-codes", "glob -> codes ignored in matching files", editor=False),
    Setting("severity", "severity", "code -> error|warning|info",
            editor_doc="Severity per rule code, like `severity` in `[tool.kimi-lsp]`, e.g. `{\"KL102\": \"error\"}`."),
    Setting("sglang-version", "version", "sglang release whose argument schema applies (default: the pinned one, else the newest)",
            editor_doc="sglang release whose argument schema applies, e.g. `0.5.22`. Empty: the version the project pins, else the newest known."),
    Setting("target-gpu", "gpu", "the GPU the launches run on (e.g. b200, h200, sm100, sm90)",
            editor_doc="The GPU the launches run on, e.g. `b200`, `h200`, `sm90`. Empty: not known."),
    Setting("flashinfer-pin", "path", "file that pins flashinfer-python when discovery cannot find it", editor=False),
    Setting("flashinfer-target", "version", "version the flashinfer bump fix moves to",
            editor_doc="The flashinfer-python version the pin-bump quick fix moves to. Empty: the server's default (the oldest release that supports the launch)."),
    Setting("exclude", "globs", "globs of paths not to lint", editor=False),
    Setting("workspaceDiagnostics", "flag", "Report problems in launch files that are not open (the Problems panel covers the "
            "whole workspace). `false`: only open files are checked.", project=False, default="true"),
    Setting("configurationPreference", "choice", "Which wins when both the project (`[tool.kimi-lsp]` in `pyproject.toml`, or "
            "`kimi-lsp.toml`) and these editor settings set the same key.", project=False,
            choices=PREFERENCES, default="project",
            choice_docs=("A project's [tool.kimi-lsp] table or kimi-lsp.toml wins over these editor settings.",
                         "These editor settings win over the project's configuration.")),
)
BY_KEY = {s.key: s for s in SETTINGS}
PROJECT_KEYS = {s.key: s.doc for s in SETTINGS if s.project}
# Keys other clients (Neovim configs, older extensions) send for their own use: accepted, unread.
CLIENT_ONLY = frozenset({s.key for s in SETTINGS if s.kind == "client"} | {"trace", "show-notifications", "log-level", "enable"})


@dataclass(frozen=True)
class Checked:
    """A validated value (None: leave the setting unset, its default stands) and the problems,
    each a message without the setting's name (the caller says where it was written)."""

    value: object
    problems: tuple[str, ...] = ()


def selector_problem(code: object, known: Sequence[str]) -> str | None:
    """Why ``code`` is not a rule code or prefix that selects at least one rule; None when it is.
    (``KL10l``, ``KL101 KL329``, ``""`` and ``KL999`` all select nothing: a typo, never a filter.)"""
    if not isinstance(code, str) or not _CODE_OR_PREFIX.match(code):
        return f"not a rule code or prefix: {code!r}"
    if not any(c.startswith(code) for c in known):
        return f"no rule code starts with {code!r}"
    return None


def gpu_problem(name: str) -> str | None:
    if target_sm(name) is None:
        return f"unknown GPU {name!r} (use a name like b200/h200 or sm100/sm90)"
    return None


def target_sm(name: str | None) -> int | None:
    if not name:
        return None
    g = name.lower().strip()
    m = re.fullmatch(r"sm_?(\d+)", g)
    if m:
        return int(m.group(1))
    return GPU_SM.get(g)


def version_problem(text: str) -> str | None:
    from kimi_lsp.pep440 import InvalidVersion, Version

    try:
        Version(text)
    except InvalidVersion:
        return f"not a version: {text!r}"
    return None


def sglang_version_problem(text: str) -> str | None:
    """``version_problem``, and a version no sglang release can have: its releases begin at 0.1
    (a real release older than kimi-lsp's data is said on each launch instead: not checked)."""
    from kimi_lsp.pep440 import Version

    why = version_problem(text)
    if why is None and Version(text) < Version("0.1"):
        return f"no sglang release is numbered below 0.1: {text!r}"
    return why


def severity_name(value: object) -> str | None:
    """``error``/``warning``/``info`` for a severity as written (aliases, any case); None if none."""
    if not isinstance(value, str):
        return None
    v = value.strip().lower()
    v = SEVERITY_ALIASES.get(v, v)
    return v if v in SEVERITIES else None


def check(setting: Setting, value: object, known: Sequence[str], *, loose_lists: bool = False) -> Checked:
    """Validate ``value`` for ``setting``. Invalid values fail closed: a bad ``select`` is left
    unset (every rule stays on), a bad ``ignore`` loses only its bad entries (ignoring less), a
    bad severity entry keeps the rule's own severity. ``loose_lists``: a string is a list written
    as "A, B" (editor settings)."""
    kind = setting.kind
    if kind == "codes":
        return _codes(setting.key, value, known, loose_lists)
    if kind == "severity":
        return _severity(value, known)
    if kind in ("version", "gpu"):
        if not isinstance(value, str) or not value.strip():
            return Checked(None, ("expected a non-empty string",))
        text = value.strip()
        if kind == "gpu":
            why = gpu_problem(text)
        else:
            why = sglang_version_problem(text) if setting.key == "sglang-version" else version_problem(text)
        return Checked(None, (why,)) if why else Checked(text)
    if kind == "path":
        if not isinstance(value, str):
            return Checked(None, ("expected a path relative to the configuration file",))
        return Checked(value)
    if kind == "globs":
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            return Checked(None, ("expected a list of globs",))
        return Checked(tuple(value))
    if kind == "glob-codes":
        return _glob_codes(value, known)
    if kind == "flag":
        # Validated here, but not an engine override (config.Settings has no such field): the LSP
        # layer reads the switch itself (workspaceDiagnostics: to be wired in lsp/).
        if isinstance(value, bool):
            return Checked(None)
        return Checked(None, (f"expected true or false, not {value!r}",))
    if kind == "choice":
        if isinstance(value, str) and value in setting.choices:
            return Checked(value)
        return Checked(None, (f"must be one of {', '.join(setting.choices)}, not {value!r}",))
    return Checked(None)  # client settings: the server never reads them


def _codes(key: str, value: object, known: Sequence[str], loose: bool) -> Checked:
    if loose and isinstance(value, str):
        value = [v for v in re.split(r"[,\s]+", value) if v]
    if not isinstance(value, (list, tuple)) or not all(isinstance(x, str) for x in value):
        return Checked(None, ('expected a list of rule codes like ["KL101", "KL2"]',))
    codes = tuple(x.strip().upper() for x in value)
    wrong = [why for why in (selector_problem(c, known) for c in codes) if why is not None]
    if wrong:
        if key != "ignore":
            return Checked(None, ("; ".join(wrong),))
        return Checked(tuple(c for c in codes if selector_problem(c, known) is None), ("; ".join(wrong),))
    if key == "select" and not codes:
        return Checked(None, ("selects no rule (leave it unset to report every rule)",))
    return Checked(codes)


def _severity(value: object, known: Sequence[str]) -> Checked:
    if not isinstance(value, dict):
        return Checked(None, ('expected a table of CODE = "error"|"warning"|"info"',))
    out: list[tuple[str, str]] = []
    problems: list[str] = []
    for key, sev in value.items():
        code = str(key).strip().upper()
        level = severity_name(sev)
        if not _FULL_CODE.match(code):
            problems.append(f"`{key}` is not a rule code like KL102 (severity takes whole codes, not prefixes)")
        elif code not in known:
            problems.append(f"`{key}`: no rule has this code")
        elif level is None:
            problems.append(f'`{key} = {sev!r}`: expected "error", "warning" or "info"')
        else:
            out.append((code, level))
    return Checked(tuple(out), tuple(problems))


def _glob_codes(value: object, known: Sequence[str]) -> Checked:
    if not isinstance(value, dict):
        return Checked(None, ("expected a table of glob = [codes]",))
    items: list[tuple[str, tuple[str, ...]]] = []
    problems: list[str] = []
    for glob, codes in value.items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            problems.append(f"`{glob}` must map to a list of rule codes")
            continue
        up = tuple(c.strip().upper() for c in codes)
        if any(selector_problem(c, known) is not None for c in up):
            problems.append(f"`{glob}` must map to a list of rule codes")
            continue
        items.append((str(glob), up))
    return Checked(tuple(items), tuple(problems))
