"""The lockfile readers other than uv.lock's scan (``pins/locks.py`` is the entry point).

A TOML lock read with tomllib and ``syntax/toml.py``'s locator (poetry.lock, pdm.lock, pylock.toml,
and a uv.lock that is not in uv's own shape), Pipfile.lock with a small JSON scanner that keeps
positions, conda-lock.yml with PyYAML's composer, and the manifest requirements a uv.lock echoes.
They live apart from ``locks.py`` so that a run whose project has no such lock (most have a
uv.lock or none) does not load them: ``locks.py`` imports this module when it reads one.
"""
from __future__ import annotations

import bisect
import re

from kimi_lsp import _regex
from kimi_lsp._record import dataclass
from kimi_lsp.pins.locks import RELOCK, _canonical, _eq_spec, _failed, _pylock_producer
from kimi_lsp.pins.model import Pin, PinFormat, PinProblem, PinSource
from kimi_lsp.syntax import ynodes
from kimi_lsp.text import Located, Span
from kimi_lsp.workspace import SourceText

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any, cast
else:

    def cast(_type: object, value: object) -> object:  # typing.cast, without typing
        return value

if TYPE_CHECKING:
    from kimi_lsp.syntax.toml import KeyPath, TomlPositions


def _entry_group(groups: Any, main: str) -> str | None:
    """A lock's group list -> Pin.group: None when the main group is among them."""
    if not isinstance(groups, list) or not groups:
        return None
    names = [g for g in groups if isinstance(g, str)]
    if not names or main in names:
        return None
    return names[0]


# -- TOML locks ------------------------------------------------------------------------------


def _line_end(source: SourceText, offset: int) -> int:
    return source.lines.line_end(source.lines.line_of(offset))


def _entry_span(source: SourceText, name_kv: Span | None, version_kv: Span | None, fallback: Span) -> Span:
    """From the ``name`` key/value through the end of the ``version`` line."""
    found = [s for s in (name_kv, version_kv) if s is not None]
    if not found:
        return fallback
    start = min(s.start for s in found)
    end = max(s.end for s in found)
    return Span(start, max(end, _line_end(source, end)))


# Artifact lists (wheel/sdist URLs and hashes) are most of a lock's text and none of what is
# read from it; they become comments before parsing (the parser skips a comment line at C speed,
# blank space character by character). Only lines the tools write on their own are touched, and
# each keeps its length (newlines stay), so offsets do not move (``syntax.uv_lock.artifacts()``
# finds them). The formats where they are left out:
# pylock.toml too: a package there may omit ``version`` (PEP 751), and its artifacts' file names
# then carry it, so ``_read_toml_lock`` parses such a lock again with its artifact lists.
_SKIPPABLE = {PinFormat.UV_LOCK, PinFormat.POETRY_LOCK, PinFormat.PDM_LOCK, PinFormat.PYLOCK}


@dataclass(frozen=True, slots=True)
class _ParsedLock:
    data: dict[str, Any]
    positions: TomlPositions
    artifacts: tuple[int, ...]  # where each artifact list left out of the parse starts


def _parse_toml_lock(source: SourceText, fmt: PinFormat, skip: bool = True) -> _ParsedLock | PinProblem:
    """The lock's tables and positions; artifact lists are left out of both where the tool writes
    them on lines of their own (offsets unchanged: the locator reads them as one blank comment)."""
    from kimi_lsp.pins._pep508 import parse_toml
    from kimi_lsp.syntax import SyntaxProblem
    from kimi_lsp.syntax.toml import locate, parse
    from kimi_lsp.syntax.uv_lock import artifacts

    text = source.text
    if not skip or fmt not in _SKIPPABLE:
        data = parse_toml(source)
        return data if isinstance(data, PinProblem) else _ParsedLock(data, locate(text), ())
    # Only the values are read from the parse, so the artifact lists can be left out altogether:
    # tomllib skips a comment line only some ten Python calls at a time, and these are most of a
    # lock's lines.
    starts: list[int] = []
    pieces: list[str] = []
    blanked: list[str] = []
    last = 0
    for m in artifacts().finditer(text):
        starts.append(m.start())
        pieces.append(text[last : m.start()])
        blanked.append(text[last : m.start()])
        blanked.append("#" + " " * (m.end() - m.start() - 1))
        last = m.end()
    pieces.append(text[last:])
    blanked.append(text[last:])
    got = parse("".join(pieces))
    if isinstance(got, SyntaxProblem):
        # the error's line and column must be the file's: parse it as written (artifact lists as
        # comments, line by line)
        data = parse_toml(SourceText(source.path, _without_artifacts(text)))
        if isinstance(data, PinProblem):
            return data
        got = data
    return _ParsedLock(got, locate("".join(blanked)), tuple(starts))


def _without_artifacts(text: str) -> str:
    from kimi_lsp.syntax.uv_lock import artifacts

    return artifacts().sub(lambda m: "\n".join(_as_comment(line) for line in m.group(0).split("\n")), text)


def _has_artifact(starts: tuple[int, ...], body: Span) -> bool:
    i = bisect.bisect_left(starts, body.start)
    return i < len(starts) and starts[i] < body.end


def _as_comment(line: str) -> str:
    if not line:
        return line
    tail = "\r" if line.endswith("\r") else ""
    body = line[: len(line) - len(tail)]
    return ("#" + " " * (len(body) - 1) if body else "") + tail


def _read_toml_lock(source: SourceText, fmt: PinFormat, tool: str | None, array: str) -> PinSource:
    parsed = _parse_toml_lock(source, fmt)
    if isinstance(parsed, PinProblem):
        return PinSource(source.path, fmt, True, (), tool=tool, relock_command=RELOCK.get(fmt), problems=(parsed,))
    if fmt is PinFormat.PYLOCK and parsed.artifacts and _pylock_versions_missing(parsed.data.get(array)):
        parsed = _parse_toml_lock(source, fmt, skip=False)  # the file names are where those versions are
        if isinstance(parsed, PinProblem):
            return PinSource(source.path, fmt, True, (), tool=tool, relock_command=RELOCK.get(fmt), problems=(parsed,))
    data, pos = parsed.data, parsed.positions
    if fmt is PinFormat.PYLOCK:
        tool, relock = _pylock_producer(source, data.get("created-by"))
    else:
        relock = RELOCK.get(fmt)
    entries = data.get(array, [])
    problems: list[PinProblem] = []
    if fmt is PinFormat.PYLOCK and "lock-version" not in data:
        problems.append(PinProblem(f"{source.path.name} has no lock-version: not a PEP 751 lock?", Span(0, 0)))
    if fmt is PinFormat.UV_LOCK and "version" not in data:
        problems.append(PinProblem(f"{source.path.name} has no top-level version: not a uv lockfile?", Span(0, 0)))
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        problems.append(PinProblem(f"{source.path.name}: `{array}` is not an array of tables", Span(0, 0)))
        return PinSource(source.path, fmt, True, (), tool=tool, relock_command=relock, problems=tuple(problems))
    # an entry's section: from its [[header]] to the next header (or the end)
    bodies: dict[KeyPath, Span] = {}
    headers = pos.headers
    for k, h in enumerate(headers):
        bodies[h.path] = Span(h.span.end, headers[k + 1].span.start if k + 1 < len(headers) else len(source.text))
    pins: list[Pin] = []
    for i, entry in enumerate(entries):
        path: KeyPath = (array, i)
        header = pos.tables.get(path)
        body = bodies.get(path)
        if header is None or body is None:  # written as an inline array: the entry is its `{...}`
            body = pos.values.get(path) or Span(0, 0)
            name_key = pos.keys.get((*path, "name"))
            at = name_key.start if name_key is not None else body.start
            header = Span(at, at)
        # an entry whose files/wheels were left out of the parse is still hashed
        pin, problem = _toml_entry_pin(source, fmt, entry, pos, path, header, _has_artifact(parsed.artifacts, body))
        if pin is not None:
            pins.append(pin)
        if problem is not None:
            problems.append(problem)
    return PinSource(source.path, fmt, True, tuple(pins), tool=tool, relock_command=relock, problems=tuple(problems))


def _string_at(source: SourceText, pos: TomlPositions, path: KeyPath) -> tuple[Span, Span] | None:
    """A string value's content and its key/value (key start to closing quote)."""
    key, string = pos.keys.get(path), pos.strings.get(path)
    if key is None or string is None:
        return None
    return string.content, Span(key.start, string.literal.end)


def _toml_entry_pin(
    source: SourceText, fmt: PinFormat, entry: dict[str, Any], pos: TomlPositions, path: KeyPath, header: Span,
    artifacts_left_out: bool = False,
) -> tuple[Pin | None, PinProblem | None]:
    text = source.text
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        return None, PinProblem(f"{source.path.name}: a package entry has no name", header)
    name_at = _string_at(source, pos, (*path, "name"))
    version = entry.get("version")
    if version is not None and not isinstance(version, str):
        where = name_at[1] if name_at else header
        return None, PinProblem(f"{source.path.name}: {name} has a version that is not a string", where)
    version_at = _string_at(source, pos, (*path, "version"))
    if version is None and fmt is PinFormat.PYLOCK:
        version = _pylock_version_from_files(entry, _canonical(name))
    if name_at is not None and text[name_at[0].start : name_at[0].end] != name:
        name_at = None  # escapes in the name: keep the header as its position
    written = Located(name, name_at[0]) if name_at else Located(name, header)
    span = _entry_span(source, name_at[1] if name_at else None, version_at[1] if version_at else None, header)
    marker = entry.get("marker") or entry.get("markers")
    if fmt is PinFormat.UV_LOCK:
        forks = entry.get("resolution-markers")
        if isinstance(forks, list) and forks:
            marker = forks[0] if len(forks) == 1 else " or ".join(f"({m})" for m in forks if isinstance(m, str))
    if isinstance(marker, dict):  # poetry: markers per group
        marker = marker.get("main") or next((m for m in marker.values() if isinstance(m, str)), None)
    extras = entry.get("extras") if fmt is PinFormat.PDM_LOCK else None
    group = None
    if fmt is PinFormat.POETRY_LOCK:
        group = _entry_group(entry.get("groups"), "main")
    elif fmt is PinFormat.PDM_LOCK:
        group = _entry_group(entry.get("groups"), "default")
    hashed = artifacts_left_out or bool(entry.get("files") or entry.get("wheels") or entry.get("sdist"))
    pin = Pin(
        name=_canonical(name),
        written_name=written,
        specifier=_eq_spec(version),
        version=version,
        span=span,
        spec_span=None,
        extras=tuple(e for e in extras if isinstance(e, str)) if isinstance(extras, list) else (),
        marker=marker if isinstance(marker, str) and marker else None,
        group=group,
        hashed=hashed,
    )
    return pin, None


def _pylock_versions_missing(entries: object) -> bool:
    """Whether a pylock package has no ``version`` of its own (PEP 751 allows it)."""
    return isinstance(entries, list) and any(isinstance(e, dict) and "version" not in e for e in entries)


def _pylock_version_from_files(entry: dict[str, Any], name: str) -> str | None:
    """PEP 751 lets a package omit ``version``; its wheel/sdist file names still carry one."""
    candidates: list[str] = []
    wheels = entry.get("wheels")
    if isinstance(wheels, list):
        for w in wheels:
            if isinstance(w, dict):
                candidates.extend(str(w[k]) for k in ("name", "url", "path") if isinstance(w.get(k), str))
    sdist = entry.get("sdist")
    if isinstance(sdist, dict):
        candidates.extend(str(sdist[k]) for k in ("name", "url", "path") if isinstance(sdist.get(k), str))
    for c in candidates:
        fname = c.rsplit("/", 1)[-1].split("#", 1)[0]
        try:
            if fname.endswith(".whl"):
                from packaging.utils import parse_wheel_filename

                got_name, ver, *_ = parse_wheel_filename(fname)
            else:
                from packaging.utils import parse_sdist_filename

                got_name, ver = parse_sdist_filename(fname)
        except ValueError:  # packaging.utils.InvalidWheelFilename / InvalidSdistFilename
            continue
        if got_name == name:
            return str(ver)
    return None


# -- uv.lock manifest echoes -------------------------------------------------------------------


def uv_lock_requirements(source: SourceText) -> tuple[Pin, ...]:
    """``locks.uv_lock_requirements``."""
    try:
        parsed = _parse_toml_lock(source, PinFormat.UV_LOCK)
        return () if isinstance(parsed, PinProblem) else tuple(_uv_echoes(source, parsed))
    except Exception:  # noqa: BLE001 - the lock itself reports its problems through read_uv_lock
        return ()


def _uv_echoes(source: SourceText, parsed: _ParsedLock) -> list[Pin]:
    data, pos = parsed.data, parsed.positions
    out: list[Pin] = []
    manifest = data.get("manifest")
    if isinstance(manifest, dict):
        for key, flags in (("constraints", {"constraint": True}), ("overrides", {"override": True})):
            out.extend(_echo_list(source, pos, ("manifest", key), manifest.get(key), None, flags))
    packages = data.get("package")
    if not isinstance(packages, list):
        return out
    for index, package in enumerate(packages):
        meta = package.get("metadata") if isinstance(package, dict) else None
        if not isinstance(meta, dict):
            continue
        path: KeyPath = ("package", index, "metadata")
        out.extend(_echo_list(source, pos, (*path, "requires-dist"), meta.get("requires-dist"), None, {}))
        dev = meta.get("requires-dev")
        if isinstance(dev, dict):
            for group, items in dev.items():
                out.extend(_echo_list(source, pos, (*path, "requires-dev", group), items, group, {}))
    return out


def _echo_list(
    source: SourceText, pos: TomlPositions, path: KeyPath, items: Any, group: str | None, flags: dict[str, Any]
) -> list[Pin]:
    if not isinstance(items, list):
        return []
    spans = pos.items(path)
    if len(spans) != len(items):
        spans = ()
    fallback = pos.value_or_table(path[:-1]) or Span(0, 0)
    out: list[Pin] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        name = item["name"]
        span = spans[i] if spans else fallback
        content = pos.string_content((*path, i, "name"), source.text, name) if spans else None
        written = Located(name, content or span)
        spec = re.sub(r"\s+", "", item.get("specifier") or "") if isinstance(item.get("specifier"), str) else ""
        extras = item.get("extras")
        if not isinstance(extras, list):
            extras = ()
        marker = item.get("marker") if isinstance(item.get("marker"), str) else None
        out.append(
            Pin(
                name=_canonical(name),
                written_name=written,
                specifier=spec,
                version=_sole_eq(spec),
                span=span,
                spec_span=None,
                extras=tuple(e for e in extras if isinstance(e, str)),
                marker=marker,
                group=group,
                **flags,
            )
        )
    return out


def _sole_eq(spec: str) -> str | None:
    m = re.fullmatch(r"===?([^,;*]+)", spec)
    return m.group(1) if m else None


# -- Pipfile.lock (JSON with positions) -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class _JValue:
    kind: str  # "object" | "array" | "scalar"
    # object: list of (key located by its literal, quotes included; value); array: list of
    # values; scalar: the Python value
    value: Any
    span: Span  # the whole value, quotes/brackets included


class _JsonError(ValueError):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


_JSON_NUMBER_RE = _regex.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_JSON_WS_RE = _regex.compile(r"[ \t\r\n]*")


class _JsonScanner:
    """Just enough JSON to keep each key's and value's offsets (json.loads keeps none)."""

    def __init__(self, text: str) -> None:
        import json  # here, not at start-up: only a JSON lock needs it

        self.json = json
        self.t = text
        self.i = 0

    def document(self) -> _JValue:
        v = self.value()
        self.ws()
        if self.i != len(self.t):
            raise _JsonError("extra data after the JSON document", self.i)
        return v

    def ws(self) -> None:
        self.i = _JSON_WS_RE.match(self.t, self.i).end()  # type: ignore[union-attr]  # `[ \t\r\n]*` always matches

    def value(self) -> _JValue:
        self.ws()
        t, start = self.t, self.i
        if start >= len(t):
            raise _JsonError("unexpected end of file", start)
        c = t[start]
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c == '"':
            s, end = self.string()
            return _JValue("scalar", s, Span(start, end))
        for word, val in (("true", True), ("false", False), ("null", None)):
            if t.startswith(word, start):
                self.i = start + len(word)
                return _JValue("scalar", val, Span(start, self.i))
        m = _JSON_NUMBER_RE.match(t, start)
        if m and m.end() > start:
            self.i = m.end()
            return _JValue("scalar", self.json.loads(m.group(0)), Span(start, self.i))
        raise _JsonError(f"unexpected character {c!r}", start)

    def string(self) -> tuple[str, int]:
        json = self.json
        try:
            s, end = json.decoder.scanstring(self.t, self.i + 1)
        except json.JSONDecodeError as exc:
            raise _JsonError(exc.msg, exc.pos) from None
        self.i = end
        return s, end

    def obj(self) -> _JValue:
        start = self.i
        self.i += 1
        items: list[tuple[Located[str], _JValue]] = []
        self.ws()
        if self.t.startswith("}", self.i):
            self.i += 1
            return _JValue("object", items, Span(start, self.i))
        while True:
            self.ws()
            if not self.t.startswith('"', self.i):
                raise _JsonError("expected a string key", self.i)
            key_start = self.i
            key, key_end = self.string()
            self.ws()
            if not self.t.startswith(":", self.i):
                raise _JsonError("expected ':' after a key", self.i)
            self.i += 1
            items.append((Located(key, Span(key_start, key_end)), self.value()))
            self.ws()
            if self.t.startswith(",", self.i):
                self.i += 1
                continue
            if self.t.startswith("}", self.i):
                self.i += 1
                return _JValue("object", items, Span(start, self.i))
            raise _JsonError("expected ',' or '}'", self.i)

    def arr(self) -> _JValue:
        start = self.i
        self.i += 1
        items: list[_JValue] = []
        self.ws()
        if self.t.startswith("]", self.i):
            self.i += 1
            return _JValue("array", items, Span(start, self.i))
        while True:
            items.append(self.value())
            self.ws()
            if self.t.startswith(",", self.i):
                self.i += 1
                continue
            if self.t.startswith("]", self.i):
                self.i += 1
                return _JValue("array", items, Span(start, self.i))
            raise _JsonError("expected ',' or ']'", self.i)


def _jget(obj: _JValue, key: str) -> _JValue | None:
    found = None
    if obj.kind == "object":
        for k, v in obj.value:
            if k.value == key:
                found = v  # the last duplicate wins, as in json.loads
    return found


def _jplain(v: _JValue | None) -> Any:
    if v is None:
        return None
    if v.kind == "object":
        return {k.value: _jplain(x) for k, x in v.value}
    if v.kind == "array":
        return [_jplain(x) for x in v.value]
    return v.value


def _read_pipfile_lock(source: SourceText) -> PinSource:
    fmt, tool = PinFormat.PIPFILE_LOCK, "pipenv"
    text = source.text
    try:
        root = _JsonScanner(text).document()
    except _JsonError as exc:
        off = min(exc.offset, len(text))
        return _failed(source, fmt, tool, f"{source.path.name} is not valid JSON: {exc}", Span(off, off))
    if root.kind != "object":
        return _failed(source, fmt, tool, f"{source.path.name}: the document is not a JSON object", root.span)
    pins: list[Pin] = []
    problems: list[PinProblem] = []
    # "default" <-> [packages], "develop" <-> [dev-packages], plus pipenv's custom categories
    for category, body in root.value:
        if category.value == "_meta" or body.kind != "object":
            continue
        group = None if category.value == "default" else category.value
        for key, entry in body.value:
            if entry.kind != "object":
                problems.append(PinProblem(f"{source.path.name}: entry {key.value!r} is not an object", entry.span))
                continue
            version_v = _jget(entry, "version")
            written = version_v.value if version_v is not None and isinstance(version_v.value, str) else ""
            spec = re.sub(r"\s+", "", written)  # keeps the "==": Pipfile.lock writes "==0.6.10"
            if spec == "*":
                spec = ""
            extras = _jplain(_jget(entry, "extras"))
            marker = _jplain(_jget(entry, "markers"))
            hashes = _jplain(_jget(entry, "hashes"))
            pins.append(
                Pin(
                    name=_canonical(key.value),
                    written_name=Located(key.value, Span(key.span.start + 1, key.span.end - 1)),
                    specifier=spec,
                    version=_sole_eq(spec),
                    span=Span(key.span.start, entry.span.end),
                    spec_span=None,
                    extras=tuple(e for e in extras if isinstance(e, str)) if isinstance(extras, list) else (),
                    marker=marker if isinstance(marker, str) and marker else None,
                    group=group,
                    hashed=bool(hashes),
                )
            )
    return PinSource(source.path, fmt, True, tuple(pins), tool=tool, relock_command=RELOCK[fmt], problems=tuple(problems))


# -- conda-lock.yml ------------------------------------------------------------------------------


def _read_conda_lock(source: SourceText) -> PinSource:
    fmt, tool = PinFormat.CONDA_LOCK, "conda"
    relock = f"conda-lock lock --lockfile {source.path.name} --update {{name}}"
    import yaml  # with the first conda-lock.yml

    from kimi_lsp.pins._pep508 import yaml_flow_too_deep

    deep = yaml_flow_too_deep(source.text)
    if deep is not None:
        return PinSource(source.path, fmt, True, (), tool=tool, relock_command=relock,
                         problems=(PinProblem(f"{source.path.name} is not valid YAML: collections nested too deeply", Span(deep, deep + 1)),))
    # libyaml's parser, composed safely (syntax/yaml.load): ~10x the pure-Python composer on a
    # 100 KB lock. A file it finds anything wrong with is composed again as before, so a broken
    # lock's problem reads as yaml.compose words it.
    from kimi_lsp.syntax.yaml import load as load_yaml

    loaded = load_yaml(source.text)
    ok = loaded.count == 1 and len(loaded.docs) == 1 and not loaded.problems and not loaded.syntax_error
    try:
        root = loaded.docs[0] if ok else cast("ynodes.Node | None", yaml.compose(source.text, Loader=yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        off = mark.index if mark is not None else 0
        first = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
        return PinSource(source.path, fmt, True, (), tool=tool, relock_command=relock,
                         problems=(PinProblem(f"{source.path.name} is not valid YAML: {first}", Span(off, off)),))
    packages = _ymap(root).get("package")
    if not isinstance(packages, ynodes.SequenceNode):
        span = Span(0, 0) if root is None else Span(root.start_mark.index, root.start_mark.index)
        return PinSource(source.path, fmt, True, (), tool=tool, relock_command=relock,
                         problems=(PinProblem(f"{source.path.name}: no `package:` list (not a conda-lock file?)", span),))
    pins: list[Pin] = []
    problems: list[PinProblem] = []
    for item in packages.value:
        fields = _ymap(item)
        manager = _yscalar(fields.get("manager"))
        # conda packages live in another namespace; only pip entries are PyPI distributions
        if manager != "pip":
            continue
        name_node = fields.get("name")
        name = _yscalar(name_node)
        if not name or not isinstance(name_node, ynodes.ScalarNode):
            problems.append(PinProblem(f"{source.path.name}: a pip package entry has no name", _ynode_span(item)))
            continue
        version_node = fields.get("version")
        version = _yscalar(version_node)
        ends = [n.end_mark.index for n in (name_node, version_node, fields.get("manager"), fields.get("platform"))
                if isinstance(n, ynodes.ScalarNode)]
        start = min(item.start_mark.index, name_node.start_mark.index)
        category = _yscalar(fields.get("category"))
        pins.append(
            Pin(
                name=_canonical(name),
                written_name=Located(name, _yscalar_content(source.text, name_node)),
                specifier=_eq_spec(version),
                version=version or None,
                span=Span(start, max(ends)),
                spec_span=None,
                group=None if category in (None, "", "main") else category,
                hashed=isinstance(fields.get("hash"), ynodes.MappingNode),
            )
        )
    return PinSource(source.path, fmt, True, tuple(pins), tool=tool, relock_command=relock, problems=tuple(problems))


def _ymap(node: ynodes.Node | None) -> dict[str, ynodes.Node]:
    if not isinstance(node, ynodes.MappingNode):
        return {}
    return {k.value: v for k, v in node.value if isinstance(k, ynodes.ScalarNode)}


def _yscalar(node: ynodes.Node | None) -> str | None:
    # the composer keeps the text as written, so `version: 1.10` stays "1.10", not a float
    return node.value if isinstance(node, ynodes.ScalarNode) else None


def _ynode_span(node: ynodes.Node) -> Span:
    return Span(node.start_mark.index, node.end_mark.index)


def _yscalar_content(text: str, node: ynodes.ScalarNode) -> Span:
    span = _ynode_span(node)
    if node.style in ("'", '"') and span.end - span.start >= 2:
        return Span(span.start + 1, span.end - 1)
    return span
