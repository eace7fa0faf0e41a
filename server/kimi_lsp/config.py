"""Project configuration: ``[tool.kimi-lsp]`` in pyproject.toml, or a ``kimi-lsp.toml``.

Found the same way by the CLI and the server: the nearest file at or above the linted file,
up to the repository root. An invalid configuration is reported (KL002) and never silently
replaced by defaults for the keys that were wrong.
"""
from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from kimi_lsp._record import dataclass, field, replace
from kimi_lsp._toml import tomllib
from kimi_lsp.diagnostics import Severity
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText, Workspace, touched

_CODE_PREFIX = re.compile(r"^KL\d{0,3}$")
KNOWN_KEYS = {
    "select": "codes or prefixes to report (default: all)",
    "ignore": "codes or prefixes never to report",
    "extend-select": "codes added to `select`",
    "per-file-ignores": "glob -> codes ignored in matching files",
    "severity": "code -> error|warning|info",
    "sglang-version": "sglang release whose argument schema applies (default: the pinned one, else the newest)",
    "target-gpu": "the GPU the launches run on (e.g. b200, h200, sm100, sm90)",
    "flashinfer-pin": "file that pins flashinfer-python when discovery cannot find it",
    "flashinfer-target": "version the flashinfer bump fix moves to",
    "exclude": "globs of paths not to lint",
}
GPU_SM = {
    "b200": 100, "b300": 103, "gb200": 100, "gb300": 103, "h100": 90, "h200": 90, "h20": 90, "h800": 90,
    "a100": 80, "a800": 80, "l40s": 89, "l40": 89, "rtx5090": 120, "rtx pro 6000": 120,
}


# Codes no setting can turn off or downgrade: KL002 says the settings themselves are wrong.
ALWAYS_ON = frozenset({"KL002"})


def selector_problem(code: object) -> str | None:
    """Why ``code`` is not a rule code or prefix that selects at least one rule; None when it is.
    (``KL10l``, ``KL101 KL329``, ``""`` and ``KL999`` all select nothing: a typo, never a filter.)"""
    if not isinstance(code, str) or not _CODE_PREFIX.match(code):
        return f"not a rule code or prefix: {code!r}"
    if not any(c.startswith(code) for c in known_codes()):
        return f"no rule code starts with {code!r}"
    return None


def known_codes() -> tuple[str, ...]:
    from kimi_lsp.rules import ALL_RULES  # lazily: configuration loads before the rules

    return tuple(r.code for r in ALL_RULES)


def gpu_problem(name: str) -> str | None:
    if Settings(target_gpu=name).target_sm is None:
        return f"unknown GPU {name!r} (use a name like b200/h200 or sm100/sm90)"
    return None


def version_problem(text: str) -> str | None:
    from packaging.version import InvalidVersion, Version

    try:
        Version(text)
    except InvalidVersion:
        return f"not a version: {text!r}"
    return None


@dataclass(frozen=True)
class ConfigProblem:
    path: Path
    span: Span
    message: str


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("KL",)
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    severity: tuple[tuple[str, Severity], ...] = ()
    sglang_version: str | None = None
    target_gpu: str | None = None
    flashinfer_pin: Path | None = None
    flashinfer_target: str | None = None
    exclude: tuple[str, ...] = ()
    source: Path | None = None  # the config file these came from
    base: Path | None = None  # directory globs are relative to
    problems: tuple[ConfigProblem, ...] = field(default=(), compare=False)

    def enabled(self, code: str, path: Path | None = None) -> bool:
        if code in ALWAYS_ON:
            return True  # a broken configuration is never hidden by the configuration itself
        if not any(code.startswith(s) for s in self.select):
            return False
        if any(code.startswith(s) for s in self.ignore):
            return False
        if path is not None and self.per_file_ignores:
            rel = self._rel(path)
            for glob, codes in self.per_file_ignores:
                if _glob_match(rel, glob) and any(code.startswith(c) for c in codes):
                    return False
        return True

    def severity_for(self, code: str, default: Severity) -> Severity:
        if code in ALWAYS_ON:
            return default
        for c, sev in self.severity:
            if c == code:
                return sev
        return default

    def excluded(self, path: Path) -> bool:
        rel = self._rel(path)
        return any(_glob_match(rel, g) for g in self.exclude)

    @property
    def target_sm(self) -> int | None:
        if not self.target_gpu:
            return None
        g = self.target_gpu.lower().strip()
        m = re.fullmatch(r"sm_?(\d+)", g)
        if m:
            return int(m.group(1))
        return GPU_SM.get(g)

    def _rel(self, path: Path) -> str:
        base = self.base or Path.cwd()
        try:
            # lexical: globs match paths as written, and a symlink loop must not raise here
            return Path(os.path.abspath(path)).relative_to(os.path.abspath(base)).as_posix()
        except ValueError:
            return path.as_posix()

    def with_overrides(self, **kw: object) -> Settings:
        return replace(self, **kw)  # type: ignore[arg-type]


def _glob_match(rel: str, glob: str) -> bool:
    if fnmatch.fnmatch(rel, glob):
        return True
    # a glob without a slash matches the file name anywhere (like .gitignore / ruff)
    if "/" not in glob and fnmatch.fnmatch(rel.rsplit("/", 1)[-1], glob):
        return True
    return glob.endswith("/**") and rel.startswith(glob[:-3])


def find_config_file(start: Path, workspace: Workspace, stop: Path | None = None) -> Path | None:
    touched(start)
    d = start if start.is_dir() else start.parent
    for cur in (d, *d.parents):
        for name in ("kimi-lsp.toml", ".kimi-lsp.toml"):
            p = cur / name
            if workspace.exists(p):
                return p
        pp = cur / "pyproject.toml"
        if workspace.exists(pp):
            text = workspace.text(pp) or ""
            if "[tool.kimi-lsp" in text:
                return pp
        if stop is not None and cur == stop:
            break
    return None


def load_settings(path: Path | None, workspace: Workspace, overrides: dict | None = None) -> Settings:
    if path is None:
        s = Settings(base=workspace.root)
        return s.with_overrides(**overrides) if overrides else s
    src = workspace.read(path)
    if not isinstance(src, SourceText):
        s = Settings(base=path.parent, source=path, problems=(ConfigProblem(path, Span(0, 0), f"cannot read configuration: {src.reason}"),))
        return s
    s = parse_settings(src)
    return s.with_overrides(**overrides) if overrides else s


def parse_settings(src: SourceText) -> Settings:
    path = src.path
    problems: list[ConfigProblem] = []
    try:
        data = tomllib.loads(src.text)
    except tomllib.TOMLDecodeError as exc:
        return Settings(base=path.parent, source=path, problems=(ConfigProblem(path, Span(0, 0), f"invalid TOML: {exc}"),))
    except RecursionError:  # tomllib recurses per nesting level
        return Settings(base=path.parent, source=path, problems=(ConfigProblem(path, Span(0, 0), "invalid TOML: nested too deeply to read"),))
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("kimi-lsp", {})
    else:
        table = data.get("tool", {}).get("kimi-lsp", data)
    if not isinstance(table, dict):
        table = {}

    def where(key: str) -> Span:
        m = re.search(rf"^\s*\"?{re.escape(key)}\"?\s*=", src.text, re.M)
        if m:
            return Span(m.start() + len(m.group(0)) - len(m.group(0).lstrip()), m.end())
        return Span(0, 0)

    def bad(key: str, msg: str) -> None:
        problems.append(ConfigProblem(path, where(key), f"invalid kimi-lsp setting `{key}`: {msg}"))

    def codes(key: str) -> tuple[str, ...] | None:
        """The selectors under ``key``; None when any is invalid (the caller then keeps the
        wider default: a typo never narrows the rule set)."""
        v = table.get(key, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            bad(key, "expected a list of rule codes like [\"KL101\", \"KL2\"]")
            return None
        wrong = [x for x in v if selector_problem(x) is not None]
        if wrong:
            bad(key, "; ".join(str(selector_problem(x)) for x in wrong))
            if key != "ignore":
                return None
            return tuple(x for x in v if selector_problem(x) is None)  # ignoring less is safe
        return tuple(v)

    kw: dict[str, object] = {}
    for key in table:
        if key not in KNOWN_KEYS:
            problems.append(ConfigProblem(path, where(key), f"unknown kimi-lsp setting `{key}` (known: {', '.join(sorted(KNOWN_KEYS))})"))
    if "select" in table:
        sel = codes("select")
        if sel is not None:
            if not sel:
                bad("select", "selects no rule (remove it to report every rule)")
            else:
                kw["select"] = sel
    if "extend-select" in table:
        ext = codes("extend-select")
        if ext is not None:
            kw["select"] = tuple(kw.get("select", ("KL",))) + ext  # type: ignore[operator]
    if "ignore" in table:
        ign = codes("ignore")
        if ign is not None:
            kw["ignore"] = ign
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            bad("per-file-ignores", "expected a table of glob = [codes]")
        else:
            items = []
            for g, cs in pfi.items():
                if not isinstance(cs, list) or not all(isinstance(c, str) and selector_problem(c) is None for c in cs):
                    bad("per-file-ignores", f"`{g}` must map to a list of rule codes")
                    continue
                items.append((str(g), tuple(cs)))
            kw["per_file_ignores"] = tuple(items)
    if "severity" in table:
        sev = table["severity"]
        if not isinstance(sev, dict):
            bad("severity", "expected a table of CODE = \"error\"|\"warning\"|\"info\"")
        else:
            items2 = []
            for c, v in sev.items():
                if not _CODE_PREFIX.match(str(c)) or v not in ("error", "warning", "info"):
                    bad("severity", f"`{c} = {v!r}`: expected CODE = \"error\"|\"warning\"|\"info\"")
                    continue
                items2.append((str(c), Severity(v)))
            kw["severity"] = tuple(items2)
    for key, attr in (("sglang-version", "sglang_version"), ("target-gpu", "target_gpu"), ("flashinfer-target", "flashinfer_target")):
        if key in table:
            v = table[key]
            if not isinstance(v, str) or not v.strip():
                bad(key, "expected a non-empty string")
            else:
                kw[attr] = v.strip()
    if "sglang_version" in kw:
        from packaging.version import InvalidVersion, Version

        try:
            Version(str(kw["sglang_version"]))
        except InvalidVersion:
            bad("sglang-version", f"not a version: {kw['sglang_version']!r}")
            kw.pop("sglang_version")
    if "flashinfer-target" in table and "flashinfer_target" in kw:
        from packaging.version import InvalidVersion, Version

        try:
            Version(str(kw["flashinfer_target"]))
        except InvalidVersion:
            bad("flashinfer-target", f"not a version: {kw['flashinfer_target']!r}")
            kw.pop("flashinfer_target")
    if "target-gpu" in table and "target_gpu" in kw:
        probe = Settings(target_gpu=str(kw["target_gpu"]))
        if probe.target_sm is None:
            bad("target-gpu", f"unknown GPU {kw['target_gpu']!r} (use a name like b200/h200 or sm100/sm90)")
            kw.pop("target_gpu")
    if "flashinfer-pin" in table:
        v = table["flashinfer-pin"]
        if not isinstance(v, str):
            bad("flashinfer-pin", "expected a path relative to the configuration file")
        else:
            lexical = Path(os.path.normpath(path.parent / v))
            touched(lexical)  # the link itself is a dependency: re-pointing it changes the answer
            try:
                kw["flashinfer_pin"] = lexical.resolve()
            except (OSError, RuntimeError):  # a link loop: read as written, reported unreadable
                kw["flashinfer_pin"] = lexical
    if "exclude" in table:
        v = table["exclude"]
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            bad("exclude", "expected a list of globs")
        else:
            kw["exclude"] = tuple(v)
    return Settings(source=path, base=path.parent, problems=tuple(problems), **kw)  # type: ignore[arg-type]
