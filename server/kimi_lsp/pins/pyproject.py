"""pyproject.toml: PEP 621, PEP 735, [tool.uv], [tool.poetry], [tool.pdm] dependency pins.

Values and positions come from ``syntax/toml.py`` (``parse``, ``locate``), so a pin's
``spec_span`` is the written specifier inside its string literal (quotes, comments and the
other requirements untouched by a bump). Poetry constraints (``^0.6.10``, ``~0.6``, ``0.6.10``,
``>=1 <2``, ``a || b``) are converted to PEP 440 for ``Pin.specifier``; the written text stays in
``native_spec`` and is what a bump edits (lockfiles.md §4.2, rules ported from poetry-core).
"""
from __future__ import annotations

import re
from pathlib import Path

from kimi_lsp import _regex
from kimi_lsp.pins._pep508 import (
    OffsetMap,
    canonical,
    failed_source,
    normalize_spec,
    parse_toml,
    pin_from_string,
    sole_version,
    version_from_filename,
)
from kimi_lsp.pins.model import Pin, PinFormat, PinProblem, PinSource
from kimi_lsp.text import Located, Span
from kimi_lsp.workspace import SourceText, Workspace

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any

    from kimi_lsp.syntax.toml import KeyPath as TomlPath
    from kimi_lsp.syntax.toml import TomlPositions

# -- poetry constraints ------------------------------------------------------------------------

_POETRY_CLAUSE_RE = _regex.compile(r"(\^|~=|~|===|==|!=|<=|>=|<|>|=)?\s*([0-9A-Za-z*][0-9A-Za-z.*+!_-]*)")


def poetry_to_pep440(constraint: str) -> str | None:
    """Poetry's constraint syntax as a PEP 440 specifier ("" = any; unions joined by ``||``);
    None when it is not understood."""
    text = constraint.strip()
    if text in ("", "*"):
        return ""
    branches = [b.strip() for b in re.split(r"\|\|?", text)]
    out: list[str] = []
    for branch in branches:
        conv = _poetry_branch(branch)
        if conv is None:
            return None
        out.append(conv)
    return "||".join(out)


def _poetry_branch(branch: str) -> str | None:
    if branch in ("", "*"):
        return ""
    # AND-ed clauses are separated by commas or whitespace ("^1.2,<1.5" / ">=1.2 <2.0")
    clauses: list[str] = []
    pos = 0
    while pos < len(branch):
        while pos < len(branch) and (branch[pos].isspace() or branch[pos] == ","):
            pos += 1
        if pos >= len(branch):
            break
        m = _POETRY_CLAUSE_RE.match(branch, pos)
        if not m or m.end() == pos:
            return None
        conv = _poetry_clause(m.group(1) or "", m.group(2))
        if conv is None:
            return None
        clauses.extend(conv)
        pos = m.end()
    return ",".join(clauses)


def _release(version: str) -> list[int] | None:
    m = re.match(r"v?(\d+(?:\.\d+)*)", version)
    if not m:
        return None
    return [int(x) for x in m.group(1).split(".")]


def _bump_at(rel: list[int], index: int, precision: int) -> str:
    """``rel`` with component ``index`` incremented and the rest zeroed, ``precision`` parts long."""
    parts = (rel + [0] * precision)[:precision]
    parts[index] += 1
    for k in range(index + 1, precision):
        parts[k] = 0
    return ".".join(str(p) for p in parts)


def _poetry_clause(op: str, version: str) -> list[str] | None:
    if version == "*":
        return [] if op in ("", "==", "=", ">=") else None
    if version.endswith(".*") or version.endswith("*"):
        base = version.rstrip("*").rstrip(".")
        if op in ("", "=", "=="):
            return [f"=={base}.*"]
        if op == "!=":
            return [f"!={base}.*"]
        return None
    if op in ("", "="):
        return [f"=={version}"]
    if op in ("==", "===", "!=", "<", "<=", ">", ">=", "~="):
        return [f"{op}{version}"]
    rel = _release(version)
    if rel is None:
        return None
    precision = min(max(len(rel), 1), 3)
    if op == "^":
        # poetry-core Version.next_breaking(): the first non-zero component is the breaking one
        if rel[0] > 0 or precision == 1:
            upper = _bump_at(rel, 0, precision)
        elif (len(rel) > 1 and rel[1] > 0) or precision == 2:
            upper = _bump_at(rel, 1, precision)
        else:
            upper = _bump_at(rel, 2, precision)
        return [f">={version}", f"<{upper}"]
    if op == "~":
        upper = _bump_at(rel, 0, precision) if precision == 1 else _bump_at(rel, 1, precision)
        return [f">={version}", f"<{upper}"]
    return None


# -- reader ------------------------------------------------------------------------------------


class _Collector:
    def __init__(self, source: SourceText, locs: TomlPositions) -> None:
        self.source = source
        self.text = source.text
        self.locs = locs
        self.pins: list[Pin] = []
        self.problems: list[PinProblem] = []

    def _fallback(self, path: TomlPath) -> Span:
        for p in (path, path[:-1], path[:-2]):
            if p in self.locs.values:
                return self.locs.values[p]
            if p in self.locs.keys:
                return self.locs.keys[p]
        return Span(0, 0)

    def pep508(self, path: TomlPath, value: Any, **kw: Any) -> None:
        """One PEP 508 string at ``path``."""
        if not isinstance(value, str):
            return
        content = self.locs.string_content(path, self.text, value)
        fallback = self._fallback(path)
        where = OffsetMap.identity(content.start, len(value)) if content is not None else OffsetMap()
        draft = pin_from_string(value, where, fallback, **kw)
        if draft.problem is not None:
            self.problems.append(draft.problem)
        if draft.pin is not None:
            self.pins.append(draft.pin)

    def pep508_list(self, path: TomlPath, value: Any, **kw: Any) -> None:
        if not isinstance(value, list):
            return
        for i, item in enumerate(value):
            self.pep508((*path, i), item, **kw)

    def keyed(
        self,
        table_path: TomlPath,
        name: str,
        value: Any,
        *,
        poetry: bool,
        group: str | None = None,
        override: bool = False,
        optional_groups: dict[str, str] | None = None,
    ) -> None:
        """A ``name = spec`` / ``name = {version = …}`` entry (poetry, Pipfile, pdm overrides)."""
        key_path = (*table_path, name)
        key_span = self.locs.keys.get(key_path) or self._fallback(key_path)
        if isinstance(value, list):
            for i, item in enumerate(value):
                self._keyed_one((*key_path, i), name, key_span, item, poetry, group, override, optional_groups)
        else:
            self._keyed_one(key_path, name, key_span, value, poetry, group, override, optional_groups)

    def _keyed_one(
        self,
        path: TomlPath,
        name: str,
        key_span: Span,
        value: Any,
        poetry: bool,
        group: str | None,
        override: bool,
        optional_groups: dict[str, str] | None,
    ) -> None:
        spec_path = path
        spec_value: str | None
        extras: tuple[str, ...] = ()
        marker: str | None = None
        version_from_url: str | None = None
        if isinstance(value, str):
            spec_value = value
        elif isinstance(value, dict):
            spec_value = value.get("version") if isinstance(value.get("version"), str) else None
            spec_path = (*path, "version")
            ex = value.get("extras")
            if isinstance(ex, list):
                extras = tuple(str(e) for e in ex)
            mk = value.get("markers")
            marker = mk if isinstance(mk, str) else None
            for key in ("url", "file", "path"):
                if isinstance(value.get(key), str) and spec_value is None:
                    found = version_from_filename(value[key])
                    if found is not None and found[0] == canonical(name):
                        version_from_url = found[1]
            if poetry and value.get("optional") is True and optional_groups is not None:
                group = optional_groups.get(canonical(name), "optional")
        else:
            return
        name_span = _unquoted(self.text, key_span)
        value_span = self.locs.values.get(path)
        # the entry from its key (quotes included) to the end of its value
        span = key_span.cover(value_span) if value_span is not None else key_span
        if spec_value is None:
            spec = f"=={version_from_url}" if version_from_url else ""
            self.pins.append(
                Pin(canonical(name), Located(name, name_span), spec, version_from_url, span, None,
                    extras=extras, marker=marker, group=group, override=override)
            )
            return
        content = self.locs.string_content(spec_path, self.text, spec_value)
        spec_span = _strip_span(self.text, content) if content is not None else None
        native: str | None = None
        if poetry:
            conv = poetry_to_pep440(spec_value)
            if conv is None:
                self.problems.append(PinProblem(f"cannot read poetry constraint {spec_value!r} for {name}", span))
                conv = normalize_spec(spec_value)
            specifier = conv
            if normalize_spec(spec_value) != conv:
                native = spec_value.strip()
        elif spec_value.strip() == "*":
            specifier = ""
        elif spec_value.strip() and spec_value.strip()[0].isdigit():
            # Pipfile/pdm accept a bare version: it means ==
            specifier = "==" + normalize_spec(spec_value)
            native = spec_value.strip()
        else:
            specifier = normalize_spec(spec_value)
        self.pins.append(
            Pin(
                name=canonical(name),
                written_name=Located(name, name_span),
                specifier=specifier,
                version=sole_version(specifier),
                span=span,
                spec_span=spec_span,
                extras=extras,
                marker=marker,
                group=group,
                override=override,
                native_spec=native,
            )
        )


def _unquoted(text: str, span: Span) -> Span:
    raw = text[span.start : span.end]
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return Span(span.start + 1, span.end - 1)
    return span


def _strip_span(text: str, span: Span) -> Span:
    a, b = span.start, span.end
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return Span(a, b)


def _table(data: Any, *keys: str) -> dict[str, Any]:
    cur = data
    for k in keys:
        if not isinstance(cur, dict):
            return {}
        cur = cur.get(k)
    return cur if isinstance(cur, dict) else {}


def _decide_tool(data: dict[str, Any]) -> str | None:
    tool = _table(data, "tool")
    backend = _table(data, "build-system").get("build-backend")
    poetry = _table(tool, "poetry")
    if any(k in poetry for k in ("dependencies", "group", "dev-dependencies")) or (
        isinstance(backend, str) and backend.startswith("poetry")
    ):
        return "poetry"
    if "pdm" in tool:
        return "pdm"
    if "uv" in tool or backend == "uv_build":
        return "uv"
    if poetry:
        return "poetry"
    return None


def read_pyproject(source: SourceText, workspace: Workspace | None = None) -> PinSource:
    """Dependency pins of a pyproject.toml (format "pyproject"); never raises."""
    from kimi_lsp.syntax.toml import locate

    data = parse_toml(source)
    if isinstance(data, PinProblem):
        return PinSource(source.path, PinFormat.PYPROJECT, False, (), problems=(data,))
    try:
        return _read(source, data, locate(source.text))
    except Exception as exc:
        return failed_source(source.path, PinFormat.PYPROJECT, f"could not read {source.path.name}: {exc}")


def _read(source: SourceText, data: dict[str, Any], locs: TomlPositions) -> PinSource:
    c = _Collector(source, locs)
    project = _table(data, "project")
    c.pep508_list(("project", "dependencies"), project.get("dependencies"))
    for extra, items in _table(project, "optional-dependencies").items():
        c.pep508_list(("project", "optional-dependencies", extra), items, group=extra)
    for grp, items in _table(data, "dependency-groups").items():
        # {include-group = "x"} items are skipped: x's own pins are read under x
        if isinstance(items, list):
            for i, item in enumerate(items):
                c.pep508(("dependency-groups", grp, i), item, group=grp)
    uv = _table(data, "tool", "uv")
    c.pep508_list(("tool", "uv", "constraint-dependencies"), uv.get("constraint-dependencies"), constraint=True)
    c.pep508_list(("tool", "uv", "override-dependencies"), uv.get("override-dependencies"), override=True)
    c.pep508_list(("tool", "uv", "dev-dependencies"), uv.get("dev-dependencies"), group="dev")
    poetry = _table(data, "tool", "poetry")
    optional_groups = {
        canonical(str(n)): extra
        for extra, names in _table(poetry, "extras").items()
        if isinstance(names, list)
        for n in names
    }

    def poetry_table(path: TomlPath, table: dict[str, Any], group: str | None) -> None:
        for name, value in table.items():
            if canonical(name) == "python":
                continue  # the interpreter constraint, not a package
            c.keyed(path, name, value, poetry=True, group=group, optional_groups=optional_groups)

    poetry_table(("tool", "poetry", "dependencies"), _table(poetry, "dependencies"), None)
    for grp, body in _table(poetry, "group").items():
        poetry_table(("tool", "poetry", "group", grp, "dependencies"), _table(body, "dependencies"), grp)
    poetry_table(("tool", "poetry", "dev-dependencies"), _table(poetry, "dev-dependencies"), "dev")
    pdm = _table(data, "tool", "pdm")
    for grp, items in _table(pdm, "dev-dependencies").items():
        c.pep508_list(("tool", "pdm", "dev-dependencies", grp), items, group=grp)
    for name, value in _table(pdm, "resolution", "overrides").items():
        if isinstance(value, str) and re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", value):
            found = version_from_filename(value)
            ver = found[1] if found and found[0] == canonical(name) else None
            c.keyed(("tool", "pdm", "resolution", "overrides"), name, {"url": value} if ver else {}, poetry=False,
                    override=True)
        else:
            c.keyed(("tool", "pdm", "resolution", "overrides"), name, value, poetry=False, override=True)
    includes = _dynamic_files(source.path, data)
    return PinSource(
        path=source.path,
        format=PinFormat.PYPROJECT,
        is_lock=False,
        pins=tuple(c.pins),
        tool=_decide_tool(data),
        problems=tuple(c.problems),
        includes=includes,
    )


def _dynamic_files(path: Path, data: dict[str, Any]) -> tuple[Path, ...]:
    """``[tool.setuptools.dynamic] dependencies = {file = [...]}``: requirements files that are the
    real dependency list when ``[project] dynamic`` names dependencies."""
    dyn = _table(data, "tool", "setuptools", "dynamic")
    out: list[Path] = []
    entries = [dyn.get("dependencies")]
    entries.extend(v for v in _table(dyn, "optional-dependencies").values())
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        files = entry.get("file")
        if isinstance(files, str):
            files = [files]
        if isinstance(files, list):
            for f in files:
                if isinstance(f, str):
                    p = path.parent / f
                    if p not in out:
                        out.append(p)
    return tuple(out)
