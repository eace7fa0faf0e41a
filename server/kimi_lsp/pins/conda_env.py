"""environment.yml / environment.yaml (conda env files): conda MatchSpecs and the ``pip:`` list.

Positions come from ``yaml.compose`` marks (exact code-point offsets); a scalar's text is
mapped 1:1 only when it equals its value (plain or quoted without escapes or folding).
Conda's ``name=1.2`` is fuzzy (``1.2.*``), ``name==1.2`` and ``name 1.2`` exact, ``|`` is "or";
``Pin.specifier`` holds the PEP 440 reading and ``native_spec`` the conda text a bump edits.
The ``pip:`` entries are requirements-file lines (pip runs them as ``-r`` from the env file's
directory, so ``-r``/``-c`` are relative to it).
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import yaml

from kimi_lsp import _regex
from kimi_lsp.pins._pep508 import OffsetMap, canonical, failed_source, sole_version, yaml_flow_too_deep
from kimi_lsp.pins.model import Pin, PinFormat, PinProblem, PinSource
from kimi_lsp.pins.requirements import read_included, read_line_string, resolve_include, settle_unread
from kimi_lsp.text import Located, Span
from kimi_lsp.workspace import SourceText, Workspace

if TYPE_CHECKING:
    from pathlib import Path

_CONDA_RE = _regex.compile(
    r"^(?:(?P<channel>[^\s:]+)::)?(?P<name>[A-Za-z0-9_][A-Za-z0-9_.-]*)(?P<rest>.*)$", re.S
)
_OP_RE = _regex.compile(r"(===|==|!=|~=|<=|>=|<|>|=)?\s*([0-9A-Za-z*][0-9A-Za-z.*+!_-]*)")


def conda_to_pep440(spec: str) -> str | None:
    """A conda version spec (``=0.6.10``, ``==0.6.10``, ``>=0.6,<0.7``, ``0.6.*``, ``a|b``) as PEP 440
    ("" = any, unions joined by ``||``); None when not understood."""
    text = spec.strip()
    if text in ("", "*"):
        return ""
    out: list[str] = []
    for branch in text.split("|"):
        clauses: list[str] = []
        for part in branch.split(","):
            part = part.strip()
            m = _OP_RE.fullmatch(part)
            if not m:
                return None
            op, ver = m.group(1) or "", m.group(2)
            if ver == "*":
                continue
            fuzzy = op == "=" or ver.endswith("*")
            ver = ver.rstrip("*").rstrip(".")
            if fuzzy and op in ("", "=", "=="):
                clauses.append(f"=={ver}.*")
            elif op in ("", "=="):
                clauses.append(f"=={ver}")
            elif op == "!=" and fuzzy:
                clauses.append(f"!={ver}.*")
            else:
                clauses.append(f"{op}{ver}")
        out.append(",".join(clauses))
    return "||".join(out)


def _scalar_content(text: str, node: yaml.ScalarNode) -> Span | None:
    """Span of a scalar's characters when they spell its value exactly."""
    a, b = node.start_mark.index, node.end_mark.index
    if node.style in ("'", '"'):
        a, b = a + 1, b - 1
    elif node.style not in (None, ""):
        return None  # block scalars
    if a <= b and text[a:b] == node.value:
        return Span(a, b)
    return None


def _conda_pin(text: str, node: yaml.ScalarNode) -> tuple[Pin | None, PinProblem | None]:
    whole = Span(node.start_mark.index, node.end_mark.index)
    value = node.value
    m = _CONDA_RE.match(value.strip())
    if not m:
        return None, PinProblem(f"not a conda package spec: {value!r}", whole)
    content = _scalar_content(text, node)
    lead = len(value) - len(value.lstrip())
    base = content.start + lead if content is not None else None
    name = m.group("name")
    name_span = Span(base + m.start("name"), base + m.end("name")) if base is not None else whole
    rest = m.group("rest")
    rest_off = m.start("rest")
    spec_span: Span | None = None
    native: str | None = None
    stripped = rest.strip()
    if stripped.startswith("["):
        # name[version='>=1.0'] bracket syntax: read but never edited
        vm = re.search(r"version\s*=\s*['\"]?([^'\",\]]+)", stripped)
        native_text = vm.group(1) if vm else ""
        conv = conda_to_pep440(native_text) if native_text else ""
        native = stripped
        spec_text_span = None
    elif rest[:1].isspace() and stripped:
        # "name 0.6.10 [build]": a space-separated version is exact, a build string may follow
        words = stripped.split()
        ver = words[0]
        conv = conda_to_pep440(ver if any(ch in ver for ch in "=<>!|,") else ("==" + ver if "*" not in ver else ver))
        native = ver
        off = rest_off + (len(rest) - len(rest.lstrip()))
        spec_text_span = (off, off + len(ver)) if len(words) == 1 else None
    else:
        spec = stripped
        build = None
        bm = re.match(r"^(=[^=<>!|,]+)=(.+)$", spec)  # name=1.2=build_0
        if bm:
            spec, build = bm.group(1), bm.group(2)
        conv = conda_to_pep440(spec)
        native = spec or None
        if build is None:
            off = rest_off + (len(rest) - len(rest.lstrip()))
            spec_text_span = (off, off + len(spec)) if spec else (rest_off, rest_off)
        else:
            spec_text_span = None
    problem = None
    if conv is None:
        problem = PinProblem(f"cannot read conda version spec {stripped!r} for {name}", whole)
        conv = re.sub(r"\s+", "", stripped)
    if native is not None and native == conv:
        native = None
    if base is not None and spec_text_span is not None:
        spec_span = Span(base + spec_text_span[0], base + spec_text_span[1])
    pin = Pin(
        name=canonical(name),
        written_name=Located(name, name_span),
        specifier=conv,
        version=sole_version(conv),
        span=whole,
        spec_span=spec_span,
        native_spec=native,
    )
    return pin, problem


def read_conda_env(source: SourceText, workspace: Workspace | None = None) -> PinSource:
    """Pins of a conda environment file (format "environment.yml"); never raises.

    ``includes`` holds the files named by ``-r``/``-c`` in the ``pip:`` list (relative to the env
    file's directory); ``read_conda_env_tree`` reads them too.
    """
    return _read_env(source, workspace, [])


def _read_env(source: SourceText, workspace: Workspace | None, directives: list[tuple[str, bool, int]]) -> PinSource:
    """``read_conda_env``, adding each ``-r``/``-c`` of the ``pip:`` list (text, is -c, offset) to ``directives``."""
    fmt = PinFormat.ENVIRONMENT_YML
    deep = yaml_flow_too_deep(source.text)
    if deep is not None:
        return PinSource(source.path, fmt, False, (), tool="conda",
                         problems=(PinProblem("invalid YAML: collections nested too deeply", Span(deep, deep + 1)),))
    try:
        root = yaml.compose(source.text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        off = mark.index if mark is not None else 0
        return PinSource(source.path, fmt, False, (), tool="conda",
                         problems=(PinProblem(f"invalid YAML: {exc}".splitlines()[0], Span(off, off)),))
    except Exception as exc:
        return failed_source(source.path, fmt, f"could not read {source.path.name}: {exc}")
    try:
        return _read(source, root, workspace, directives)
    except Exception as exc:
        return failed_source(source.path, fmt, f"could not read {source.path.name}: {exc}")


def _read(source: SourceText, root: yaml.Node | None, workspace: Workspace | None,
          directives: list[tuple[str, bool, int]]) -> PinSource:
    text = source.text
    pins: list[Pin] = []
    problems: list[PinProblem] = []
    includes: list[Path] = []
    deps = _mapping_get(root, "dependencies")
    if isinstance(deps, yaml.SequenceNode):
        for item in deps.value:
            if isinstance(item, yaml.ScalarNode):
                if not item.value.strip():
                    continue
                pin, problem = _conda_pin(text, item)
                if pin is not None:
                    pins.append(pin)
                if problem is not None:
                    problems.append(problem)
            elif isinstance(item, yaml.MappingNode):
                pip_list = _mapping_get(item, "pip")
                if not isinstance(pip_list, yaml.SequenceNode):
                    continue
                for entry in pip_list.value:
                    if not isinstance(entry, yaml.ScalarNode):
                        continue
                    whole = Span(entry.start_mark.index, entry.end_mark.index)
                    content = _scalar_content(text, entry)
                    where = OffsetMap.identity(content.start, len(entry.value)) if content else OffsetMap()
                    res = read_line_string(entry.value, where, whole)
                    pins.extend(res.pins)
                    problems.extend(res.problems)
                    for path_text, is_c, span in res.includes:
                        directives.append((path_text, is_c, span.start))
                        resolved = resolve_include(source.path, path_text)
                        if resolved is None:
                            continue
                        if resolved not in includes:
                            includes.append(resolved)
                        if workspace is not None and not workspace.exists(resolved):
                            problems.append(PinProblem(f"included file not found: {path_text}", span))
    return PinSource(source.path, PinFormat.ENVIRONMENT_YML, False, tuple(pins), tool="conda",
                     problems=tuple(problems), includes=tuple(includes))


def _mapping_get(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    found = None
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            found = v  # the last one wins, as in yaml.safe_load
    return found


def read_conda_env_tree(source: SourceText, workspace: Workspace) -> tuple[PinSource, ...]:
    """The env file and the requirements files its ``pip:`` list includes (each its own source;
    one that cannot be read is a source that says why: ``requirements.read_included``)."""
    directives: list[tuple[str, bool, int]] = []
    env = _read_env(source, workspace, directives)
    out = [env]
    seen = {env.path}
    budget = [256]  # files all the trees read together
    unread: list[PinSource] = []
    for path_text, is_c, at in directives:
        for child in read_included(workspace, source, path_text, True if is_c else None, at, budget=budget,
                                   unread=unread):
            if child.path not in seen:
                seen.add(child.path)
                out.append(child)
    return settle_unread(out, unread)
