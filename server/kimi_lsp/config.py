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

from kimi_lsp import settings_schema as schema
from kimi_lsp._record import dataclass, field, replace
from kimi_lsp.diagnostics import Severity
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText, Workspace, touched

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any

KNOWN_KEYS = schema.PROJECT_KEYS
GPU_SM = schema.GPU_SM


# Codes no setting can turn off or downgrade: KL002 says the settings themselves are wrong.
ALWAYS_ON = frozenset({"KL002"})


def selector_problem(code: object) -> str | None:
    """Why ``code`` is not a rule code or prefix that selects at least one rule; None when it is."""
    return schema.selector_problem(code, known_codes())


def known_codes() -> tuple[str, ...]:
    from kimi_lsp.rules import ALL_RULES  # lazily: configuration loads before the rules

    return tuple(r.code for r in ALL_RULES)


gpu_problem = schema.gpu_problem
version_problem = schema.version_problem
sglang_version_problem = schema.sglang_version_problem


def flashinfer_target_problem(text: str) -> str | None:
    """Why ``text`` cannot be what the flashinfer bump fix moves a pin to; None when it can.

    The fix is *safe*, so its target must be a release the flashinfer table (read from every
    released archive) shows with ``enable_dcp``: "0.1.0" made a safe fix that downgraded the
    pin and left KL101 standing, "9.9.9" one that pinned a release no index has."""
    from kimi_lsp.knowledge import flashinfer as fi  # only a configuration that sets the target

    row = fi.release_info(text)
    if row is None:
        newest = fi.releases()[-1]
        return (
            f"flashinfer-python {text} is no release kimi-lsp knows (its table ends at {newest}); "
            f"name one that has `enable_dcp`, e.g. {fi.first_good_final()}"
        )
    if not row.passes:
        return (
            f"flashinfer-python {text} lacks `enable_dcp` (the bump fix would leave the launch failing); "
            f"use {fi.first_good_final()} or a later release"
        )
    return None


def check_setting(setting: schema.Setting, value: object, *, loose_lists: bool = False) -> schema.Checked:
    """``settings_schema.check`` plus the checks against kimi-lsp's knowledge tables (which sit
    above the schema): the one validation of a value, for the project file and the editor."""
    got = schema.check(setting, value, known_codes(), loose_lists=loose_lists)
    if setting.key == "flashinfer-target" and isinstance(got.value, str):
        why = flashinfer_target_problem(got.value)
        if why is not None:
            return schema.Checked(None, (*got.problems, why))  # unset: the fix's own target stands
    return got


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
    # Directories named on the command line (realpaths): `exclude` does not hide what is under one
    # that it covers (`kimi-lsp --check examples/k3-serving` with `exclude = ["examples/**"]`); files
    # named one by one (what pre-commit passes) are still excluded, as ruff's --force-exclude does.
    named_dirs: tuple[str, ...] = ()
    # `exclude` of the configuration files above this one, up to the repository root, each with
    # the directory its globs are relative to: a directory a parent excludes stays excluded when a
    # project inside it has a configuration of its own (ruff prunes the walk the same way).
    inherited_exclude: tuple[tuple[Path, tuple[str, ...]], ...] = ()
    source: Path | None = None  # the config file these came from
    base: Path | None = None  # directory globs are relative to
    problems: tuple[ConfigProblem, ...] = field(default=(), compare=False)

    def enabled(self, code: str, path: Path | None = None) -> bool:
        if code in ALWAYS_ON:
            return True  # a broken configuration is never hidden by the configuration itself
        # str.startswith takes the tuple of prefixes itself (tuple() of a tuple is that tuple)
        if not code.startswith(tuple(self.select)):
            return False
        if code.startswith(tuple(self.ignore)):
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
        own = (self.base or Path.cwd(), self.exclude)
        return any(self._excluded_by(path, base, globs) for base, globs in (own, *self.inherited_exclude) if globs)

    def _excluded_by(self, path: Path, base: Path, globs: tuple[str, ...]) -> bool:
        rel = _rel_to(path, base)
        named = self._named_above(rel, base) if self.named_dirs else ()
        return any(_glob_match(rel, g) and not any(_covers(d, g) for d in named) for g in globs)

    def _named_above(self, rel: str, base: Path) -> tuple[str, ...]:
        """The named directories ``rel`` lies in, relative to ``base`` (not the base itself)."""
        out = []
        for d in self.named_dirs:
            drel = _rel_to(Path(d), base)
            if drel not in (".", "") and not drel.startswith(("../", "/")) and rel.startswith(drel + "/"):
                out.append(drel)
        return tuple(out)

    @property
    def target_sm(self) -> int | None:
        return schema.target_sm(self.target_gpu)

    def _rel(self, path: Path) -> str:
        return _rel_to(path, self.base or Path.cwd())

    def with_overrides(self, **kw: object) -> Settings:
        return replace(self, **kw)  # type: ignore[arg-type]  # each value already of its field's type (schema-checked)


def _rel_to(path: Path, base: Path) -> str:
    try:
        # lexical: globs match paths as written, and a symlink loop must not raise here
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(base)).as_posix()
    except ValueError:
        return path.as_posix()


def _glob_match(rel: str, glob: str) -> bool:
    if fnmatch.fnmatch(rel, glob):
        return True
    # a glob without a slash matches the file name anywhere (like .gitignore / ruff)
    if "/" not in glob and fnmatch.fnmatch(rel.rsplit("/", 1)[-1], glob):
        return True
    return glob.endswith("/**") and rel.startswith(glob[:-3])


def _covers(drel: str, glob: str) -> bool:
    """Whether ``glob`` excludes directory ``drel`` or one above it (as a directory: ``a/**``
    covers ``a``)."""
    parts = drel.split("/")
    for i in range(1, len(parts) + 1):
        d = "/".join(parts[:i])
        if _glob_match(d, glob) or _glob_match(d + "/", glob):
            return True
    return False


def find_config_file(start: Path, workspace: Workspace, stop: Path | None = None) -> Path | None:
    touched(start)
    # one CLI lint: the answer per directory (see Workspace.stable)
    return workspace.remembered(("settings-file", start, stop), lambda: _find_config_file(start, workspace, stop))


def _find_config_file(start: Path, workspace: Workspace, stop: Path | None) -> Path | None:
    d = start if workspace.is_dir(start) else start.parent
    if not workspace.stable:
        for cur in (d, *d.parents):
            found = _config_in(cur, workspace)
            if found is not None or (stop is not None and cur == stop):
                return found
        return None
    return _config_at_or_above(d, workspace, stop)


def _config_at_or_above(d: Path, workspace: Workspace, stop: Path | None) -> Path | None:
    """The stable workspace's walk: each directory's answer remembered, so a new directory asks
    only about itself and the ones above it up to the first it already knows (a loop, not
    recursion: a tree may be deeper than Python's stack)."""
    memo = workspace.memo
    asked: list[tuple[object, ...]] = []
    key: tuple[object, ...]
    cur = d
    while True:
        key = ("settings-file-at", cur, stop)
        if key in memo:
            found: Path | None = memo[key]  # type: ignore[assignment]  # stored below
            break
        asked.append(key)
        found = _config_in(cur, workspace)
        if found is not None or (stop is not None and cur == stop) or cur.parent == cur:
            break
        cur = cur.parent
    for key in asked:  # every directory on the way has the answer found above it
        memo[key] = found
    return found


def _config_in(cur: Path, workspace: Workspace) -> Path | None:
    """The configuration file in directory ``cur`` itself, if any."""
    for name in ("kimi-lsp.toml", ".kimi-lsp.toml"):
        p = workspace.file_in(cur, name)
        if p is not None:
            return p
    pp = workspace.file_in(cur, "pyproject.toml")
    if pp is not None:
        text = workspace.text(pp) or ""
        if "[tool.kimi-lsp" in text:
            return pp
    return None


def load_settings(path: Path | None, workspace: Workspace, overrides: dict[str, Any] | None = None) -> Settings:
    if path is None:
        s = Settings(base=workspace.root)
        return s.with_overrides(**overrides) if overrides else s
    src = workspace.read(path)
    if not isinstance(src, SourceText):
        s = Settings(base=path.parent, source=path, problems=(ConfigProblem(path, Span(0, 0), f"cannot read configuration: {src.reason}"),))
        return s
    s = parse_settings(src)
    inherited = _excludes_above(path, workspace)
    if inherited:
        s = s.with_overrides(inherited_exclude=inherited)
    return s.with_overrides(**overrides) if overrides else s


def _excludes_above(path: Path, workspace: Workspace) -> tuple[tuple[Path, tuple[str, ...]], ...]:
    """``exclude`` of the configuration files above ``path`` (a configuration file) up to its
    repository root, nearest first, each with its base directory."""
    out: list[tuple[Path, tuple[str, ...]]] = []
    stop = workspace.repo_root(path.parent, None)
    d = path.parent
    while d != stop and d.parent != d:
        above = find_config_file(d.parent, workspace, stop=stop)
        if above is None:
            break
        src = workspace.read(above)
        if isinstance(src, SourceText):
            parent = parse_settings(src)
            if parent.exclude:
                out.append((above.parent, parent.exclude))
        d = above.parent
    return tuple(out)


def parse_settings(src: SourceText) -> Settings:
    from kimi_lsp.syntax import SyntaxProblem
    from kimi_lsp.syntax.toml import KeyPath, TomlPositions, locate, parse  # lazily: only a run with settings reads TOML

    path = src.path
    problems: list[ConfigProblem] = []
    data = parse(src.text)
    if isinstance(data, SyntaxProblem):
        return Settings(base=path.parent, source=path, problems=(ConfigProblem(path, data.span, data.message),))
    tool = data.get("tool")
    tool = tool if isinstance(tool, dict) else {}
    at: KeyPath = ("tool", "kimi-lsp") if "kimi-lsp" in tool else ()
    if path.name == "pyproject.toml":
        table = tool.get("kimi-lsp", {})
    else:
        table = tool.get("kimi-lsp", data)
    if not isinstance(table, dict):
        table = {}
    positions: list[TomlPositions] = []

    def where(key: str) -> Span:
        """The key and its ``=``, e.g. ``select =``."""
        if not positions:
            positions.append(locate(src.text))
        span = positions[0].keys.get((*at, key))
        if span is None:
            return Span(0, 0)
        eq = re.compile(r"[ \t]*=").match(src.text, span.end)
        return Span(span.start, eq.end()) if eq else span

    def bad(key: str, msg: str) -> None:
        problems.append(ConfigProblem(path, where(key), f"invalid kimi-lsp setting `{key}`: {msg}"))

    kw: dict[str, object] = {}
    for key in table:
        if key not in KNOWN_KEYS:
            problems.append(ConfigProblem(path, where(key), f"unknown kimi-lsp setting `{key}` (known: {', '.join(sorted(KNOWN_KEYS))})"))
            continue
        got = check_setting(schema.BY_KEY[key], table[key])
        for msg in got.problems:
            bad(key, msg)
        if got.value is not None:
            kw[schema.BY_KEY[key].attr] = got.value
    if "extend_select" in kw:
        # kw holds values settings_schema.check validated per key, typed object here
        kw["select"] = tuple(kw.get("select", ("KL",))) + tuple(kw.pop("extend_select"))  # type: ignore[arg-type]
    if "severity" in kw:
        kw["severity"] = tuple((c, Severity(v)) for c, v in kw["severity"])  # type: ignore[attr-defined]  # (code, name) pairs, checked
    if "flashinfer_pin" in kw:
        lexical = Path(os.path.normpath(path.parent / str(kw["flashinfer_pin"])))
        touched(lexical)  # the link itself is a dependency: re-pointing it changes the answer
        try:
            kw["flashinfer_pin"] = lexical.resolve()
        except (OSError, RuntimeError):  # a link loop: read as written, reported unreadable
            kw["flashinfer_pin"] = lexical
    return Settings(source=path, base=path.parent, problems=tuple(problems), **kw)  # type: ignore[arg-type]  # schema-checked values
