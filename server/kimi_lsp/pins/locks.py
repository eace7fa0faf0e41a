"""Lockfile readers: what a lock says gets installed, with the position of every entry.

One reader per format (lockfiles.md §4.3-§4.8): uv.lock, poetry.lock, pdm.lock, Pipfile.lock,
pylock.toml (PEP 751) and conda-lock.yml. Each returns a ``PinSource`` with ``is_lock=True`` whose
pins are the *locked* entries: ``version`` is the locked version and ``span`` covers the entry from
its ``name`` line through its ``version`` line, so a diagnostic's related location lands on it.
``spec_span`` is always None: a lock is never edited by hand (§0.1) — the fix edits the manifest
and ``relock_command`` regenerates the lock.

Values come from the real parsers (tomllib, a small JSON scanner, PyYAML's composer); positions
come from scanning the text, because tomllib has none. A broken file becomes a ``PinProblem``;
no reader raises.

uv.lock also echoes the manifest's requirements (``[package.metadata] requires-dist``,
``requires-dev``, ``[manifest] constraints/overrides``). Those are not what gets installed, so
they are not in ``pins`` (a consumer would mistake an echoed range for a locked version); read
them with ``uv_lock_requirements``, e.g. to tell that a lock is stale after a manifest edit.
"""
from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable
from typing import Any

import yaml

from kimi_lsp._record import dataclass
from kimi_lsp._toml import tomllib
from kimi_lsp.pins.model import Pin, PinFormat, PinProblem, PinSource
from kimi_lsp.text import Located, Span
from kimi_lsp.workspace import SourceText

# PinSource.format of every lock this module reads.
_CANON = re.compile(r"[-_.]+")

LOCK_FORMATS = (PinFormat.UV_LOCK, PinFormat.POETRY_LOCK, PinFormat.PDM_LOCK, PinFormat.PIPFILE_LOCK, PinFormat.PYLOCK, PinFormat.CONDA_LOCK)

# Targeted re-lock commands after the manifest changed (lockfiles.md §0.2, §5).
RELOCK = {
    PinFormat.UV_LOCK: "uv lock --upgrade-package {name}",
    PinFormat.POETRY_LOCK: "poetry update --lock {name}",
    PinFormat.PDM_LOCK: "pdm update --no-sync {name}",
    PinFormat.PIPFILE_LOCK: "pipenv lock",
}


def read_lock(source: SourceText, fmt: PinFormat) -> PinSource:
    """Dispatch on ``fmt`` (one of ``LOCK_FORMATS``)."""
    reader = _READERS.get(fmt)
    if reader is None:
        return _failed(source, fmt, None, f"not a lockfile format: {fmt.value}")
    return reader(source)


def read_uv_lock(source: SourceText) -> PinSource:
    return _guarded(source, PinFormat.UV_LOCK, "uv", lambda: _read_toml_lock(source, PinFormat.UV_LOCK, "uv", "package"))


def read_poetry_lock(source: SourceText) -> PinSource:
    return _guarded(source, PinFormat.POETRY_LOCK, "poetry", lambda: _read_toml_lock(source, PinFormat.POETRY_LOCK, "poetry", "package"))


def read_pdm_lock(source: SourceText) -> PinSource:
    return _guarded(source, PinFormat.PDM_LOCK, "pdm", lambda: _read_toml_lock(source, PinFormat.PDM_LOCK, "pdm", "package"))


def read_pylock(source: SourceText) -> PinSource:
    return _guarded(source, PinFormat.PYLOCK, None, lambda: _read_toml_lock(source, PinFormat.PYLOCK, None, "packages"))


def read_pipfile_lock(source: SourceText) -> PinSource:
    return _guarded(source, PinFormat.PIPFILE_LOCK, "pipenv", lambda: _read_pipfile_lock(source))


def read_conda_lock(source: SourceText) -> PinSource:
    return _guarded(source, PinFormat.CONDA_LOCK, "conda", lambda: _read_conda_lock(source))


def locked_versions(source: PinSource, name: str) -> tuple[str, ...]:
    """The distinct locked versions of ``name`` (several under uv forks / conda platforms)."""
    return tuple(dict.fromkeys(p.version for p in source.pins_for(name) if p.version))


# -- shared --------------------------------------------------------------------------------


def _failed(source: SourceText, fmt: PinFormat, tool: str | None, message: str, span: Span | None = None) -> PinSource:
    return PinSource(
        source.path,
        fmt,
        True,
        (),
        tool=tool,
        relock_command=RELOCK.get(fmt),
        problems=(PinProblem(message, span or Span(0, 0)),),
    )


def _guarded(source: SourceText, fmt: PinFormat, tool: str | None, read: Callable[[], PinSource]) -> PinSource:
    # The readers check shapes as they go; this net keeps a reader bug on a strange file from
    # taking down a whole lint run or the server.
    try:
        return read()
    except Exception as exc:  # noqa: BLE001
        return _failed(source, fmt, tool, f"could not read {source.path.name}: {type(exc).__name__}: {exc}")


def _canonical(name: str) -> str:
    return _CANON.sub("-", name).lower()  # packaging.utils.canonicalize_name, without packaging.tags


def _eq_spec(version: str | None) -> str:
    return f"=={version}" if version else ""


def _entry_group(groups: Any, main: str) -> str | None:
    """A lock's group list -> Pin.group: None when the main group is among them."""
    if not isinstance(groups, list) or not groups:
        return None
    names = [g for g in groups if isinstance(g, str)]
    if not names or main in names:
        return None
    return names[0]


# -- TOML: tables and key lines ------------------------------------------------------------

# A table header on a line of its own. Tool-written locks never start an array item with `[`
# on a fresh line, so this does not confuse array contents with headers.
_HEADER_RE = re.compile(r"^[ \t]*(\[\[?)[ \t]*([^\[\]\r\n#]+?)[ \t]*(\]\]?)[ \t]*(?:#[^\r\n]*)?\r?$", re.MULTILINE)
_KEY_PART_RE = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)')
_BASIC_STR_RE = re.compile(r'"((?:[^"\\\r\n]|\\.)*)"')
_LITERAL_STR_RE = re.compile(r"'([^'\r\n]*)'")
_TOML_POS_RE = re.compile(r"line (\d+), column (\d+)")


@dataclass(frozen=True, slots=True)
class _Table:
    key: tuple[str, ...]
    array: bool
    header: Span  # the header line's text
    body: Span  # from after the header line to the next header (or the end)


def _tables(text: str) -> list[_Table]:
    heads: list[tuple[tuple[str, ...], bool, Span]] = []
    for m in _HEADER_RE.finditer(text):
        opening, inner, closing = m.group(1), m.group(2), m.group(3)
        if len(opening) != len(closing):
            continue
        parts = tuple(a or b or c for a, b, c in _KEY_PART_RE.findall(inner))
        if not parts:
            continue
        end = m.end()
        if text.endswith("\r", 0, end):
            end -= 1
        heads.append((parts, len(opening) == 2, Span(m.start() + len(m.group(0)) - len(m.group(0).lstrip()), end)))
    out: list[_Table] = []
    for i, (key, array, header) in enumerate(heads):
        body_end = heads[i + 1][2].start if i + 1 < len(heads) else len(text)
        out.append(_Table(key, array, header, Span(min(header.end + 1, body_end), body_end)))
    return out


_KEY_PATTERNS: dict[tuple[str, bool], re.Pattern[str]] = {}


def _key_string(text: str, body: Span, key: str, *, own_line: bool = True) -> tuple[Located[str], Span] | None:
    """The string value of ``key = "..."`` inside ``body``, written on its own line unless
    ``own_line`` is False (inline tables): (value located by its content, span of the key/value)."""
    pattern = _KEY_PATTERNS.get((key, own_line))
    if pattern is None:
        lead = r"^[ \t]*" if own_line else r"(?<![\w-])"
        pattern = re.compile(rf"{lead}(?:{re.escape(key)}|\"{re.escape(key)}\"|'{re.escape(key)}')[ \t]*=[ \t]*", re.MULTILINE)
        _KEY_PATTERNS[(key, own_line)] = pattern
    m = pattern.search(text, body.start, body.end)
    if m is None:
        return None
    s = _BASIC_STR_RE.match(text, m.end()) or _LITERAL_STR_RE.match(text, m.end())
    if s is None:
        return None
    key_start = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
    return Located(s.group(1), Span(s.start(1), s.end(1))), Span(key_start, s.end())


def _array_open(text: str, body: Span, key: str) -> int | None:
    """Offset of the ``[`` that opens ``key = [`` inside ``body``."""
    pattern = re.compile(rf"^[ \t]*(?:{re.escape(key)}|\"{re.escape(key)}\")[ \t]*=[ \t]*\[", re.MULTILINE)
    m = pattern.search(text, body.start, body.end)
    return m.end() - 1 if m else None


def _array_items(text: str, open_at: int) -> list[Span]:
    """Spans of the top-level items of the TOML array opening at ``open_at`` (strings, comments
    and nested arrays/tables skipped over)."""
    items: list[Span] = []
    depth = 0
    i = open_at
    start: int | None = None
    last = open_at
    n = len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            if depth == 1 and start is None:
                start = i
            quote = c
            i += 1
            while i < n and text[i] != quote:
                if quote == '"' and text[i] == "\\":
                    i += 1
                i += 1
            last = i + 1
        elif c == "#":
            while i < n and text[i] not in "\r\n":
                i += 1
            continue
        elif c in "[{":
            if depth == 1 and start is None:
                start = i
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth == 0:
                if start is not None:
                    items.append(Span(start, last))
                return items
            last = i + 1
        elif c == "," and depth == 1:
            if start is not None:
                items.append(Span(start, last))
            start = None
        elif not c.isspace():
            if depth == 1 and start is None:
                start = i
            last = i + 1
        i += 1
    return items


def _toml_problem(source: SourceText, exc: Exception) -> PinProblem:
    m = _TOML_POS_RE.search(str(exc))
    off = source.lines.offset(int(m.group(1)) - 1, int(m.group(2)) - 1) if m else 0
    return PinProblem(f"{source.path.name} is not valid TOML: {exc}", Span(off, off))


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


# -- TOML locks ------------------------------------------------------------------------------


# Artifact lists (wheel/sdist URLs and hashes) are most of a lock's text and none of what is
# read from it; they become comments before parsing (the parser skips a comment line at C speed,
# blank space character by character). Only lines the tools write on their own are touched, and
# each keeps its length (newlines stay), so offsets do not move.
_ARTIFACTS = re.compile(
    r"^(?:wheels|files)[ \t]*=[ \t]*\[[ \t]*\n(?:[ \t]+\{[^\n]*\}[ \t]*,?[ \t]*\n)*\][ \t]*$"
    r"|^(?:wheels|files)[ \t]*=[ \t]*\[\{[^\n]*\}\][ \t]*$"
    r"|^sdist[ \t]*=[ \t]*\{[^\n]*\}[ \t]*$",
    re.M,
)
_SKIPPABLE = {PinFormat.UV_LOCK, PinFormat.POETRY_LOCK, PinFormat.PDM_LOCK}


def _without_artifacts(text: str) -> str:
    return _ARTIFACTS.sub(lambda m: "\n".join(_as_comment(line) for line in m.group(0).split("\n")), text)


def _has_artifact(starts: list[int], body: Span) -> bool:
    i = bisect.bisect_left(starts, body.start)
    return i < len(starts) and starts[i] < body.end


def _as_comment(line: str) -> str:
    if not line:
        return line
    tail = "\r" if line.endswith("\r") else ""
    body = line[: len(line) - len(tail)]
    return ("#" + " " * (len(body) - 1) if body else "") + tail


def _read_toml_lock(source: SourceText, fmt: PinFormat, tool: str | None, array: str) -> PinSource:
    artifacts: list[int] = []
    try:
        if fmt in _SKIPPABLE:
            # Only the values are read from the parse (positions come from scanning the file), so
            # the artifact lists can be left out altogether: tomllib skips a comment line only
            # some ten Python calls at a time, and these are most of a lock's lines.
            pieces: list[str] = []
            last = 0
            for m in _ARTIFACTS.finditer(source.text):
                artifacts.append(m.start())
                pieces.append(source.text[last : m.start()])
                last = m.end()
            pieces.append(source.text[last:])
            try:
                data = tomllib.loads("".join(pieces))
            except tomllib.TOMLDecodeError:
                # the error's line and column must be the file's: parse it as written
                data = tomllib.loads(_without_artifacts(source.text))
        else:
            data = tomllib.loads(source.text)
    except tomllib.TOMLDecodeError as exc:
        return PinSource(source.path, fmt, True, (), tool=tool, relock_command=RELOCK.get(fmt),
                         problems=(_toml_problem(source, exc),))
    if fmt is PinFormat.PYLOCK:
        tool, relock = _pylock_producer(source, data)
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
    tables = [t for t in _tables(source.text) if t.key == (array,) and t.array]
    if len(tables) != len(entries):
        tables = []  # written as an inline array: locate each entry by its name instead
    pins: list[Pin] = []
    search_from = 0
    for i, entry in enumerate(entries):
        if tables:
            body, header, own_line = tables[i].body, tables[i].header, True
        else:
            body = _inline_entry_body(source.text, entry, search_from)
            header, own_line = Span(body.start, body.start), False
        # an entry whose files/wheels were left out of the parse is still hashed
        pin, problem = _toml_entry_pin(source, fmt, entry, body, header, own_line, _has_artifact(artifacts, body))
        if pin is not None:
            pins.append(pin)
            search_from = max(search_from, pin.span.end)
        if problem is not None:
            problems.append(problem)
    return PinSource(source.path, fmt, True, tuple(pins), tool=tool, relock_command=relock, problems=tuple(problems))


def _inline_entry_body(text: str, entry: dict[str, Any], start: int) -> Span:
    """For entries written as inline tables: from the entry's ``name`` to its closing brace."""
    name = entry.get("name")
    if isinstance(name, str):
        m = re.search(rf"(?<![\w-])name[ \t]*=[ \t]*[\"']{re.escape(name)}[\"']", text[start:])
        if m:
            begin = start + m.start()
            close = text.find("}", begin)
            return Span(begin, close if close >= 0 else len(text))
    return Span(start, start)


def _toml_entry_pin(
    source: SourceText, fmt: PinFormat, entry: dict[str, Any], body: Span, header: Span, own_line: bool = True,
    artifacts_left_out: bool = False,
) -> tuple[Pin | None, PinProblem | None]:
    text = source.text
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        return None, PinProblem(f"{source.path.name}: a package entry has no name", header)
    name_at = _key_string(text, body, "name", own_line=own_line)
    version = entry.get("version")
    if version is not None and not isinstance(version, str):
        where = name_at[1] if name_at else header
        return None, PinProblem(f"{source.path.name}: {name} has a version that is not a string", where)
    version_at = _key_string(text, body, "version", own_line=own_line)
    if version is None and fmt is PinFormat.PYLOCK:
        version = _pylock_version_from_files(entry, _canonical(name))
    if name_at is not None and name_at[0].value != name:
        name_at = None  # escapes in the name: keep the header as its position
    written = name_at[0] if name_at else Located(name, header)
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


def _pylock_producer(source: SourceText, data: dict[str, Any]) -> tuple[str | None, str | None]:
    """(tool, relock command) for a pylock.toml from its ``created-by`` and header comment."""
    creator = data.get("created-by")
    tool = creator.split()[0].lower() if isinstance(creator, str) and creator.strip() else None
    name = source.path.name
    if tool == "uv":
        # uv writes the export command into the header: re-run it after re-locking
        m = re.search(r"^#\s+(uv export\b[^\r\n]*)", source.text[:2000], re.MULTILINE)
        export = m.group(1).strip() if m else f"uv export --format pylock.toml -o {name}"
        return tool, "uv lock --upgrade-package {name} && " + export
    if tool == "pdm":
        return tool, "pdm update --no-sync {name}"
    # pip lock records neither its inputs nor its command line: there is nothing to re-run
    return tool, None


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
    """The manifest requirements a uv.lock records: every ``[package.metadata] requires-dist``
    (group None) and ``requires-dev`` (group = the dependency group) of the workspace's own
    packages, and ``[manifest] constraints`` (``constraint=True``) / ``overrides``
    (``override=True``). ``version`` is set only for a sole ``==`` clause. Empty on a broken file.
    """
    try:
        data = tomllib.loads(source.text)
        return tuple(_uv_echoes(source, data))
    except Exception:  # noqa: BLE001 - the lock itself reports its problems through read_uv_lock
        return ()


def _uv_echoes(source: SourceText, data: dict[str, Any]) -> list[Pin]:
    text = source.text
    tables = _tables(text)
    out: list[Pin] = []
    manifest = data.get("manifest")
    if isinstance(manifest, dict):
        body = next((t.body for t in tables if t.key == ("manifest",)), None)
        for key, flags in (("constraints", {"constraint": True}), ("overrides", {"override": True})):
            out.extend(_echo_list(source, body, key, manifest.get(key), None, flags))
    packages = data.get("package")
    if not isinstance(packages, list):
        return out
    index = -1
    for t in tables:
        if t.key == ("package",) and t.array:
            index += 1
            continue
        if index < 0 or index >= len(packages) or not isinstance(packages[index], dict):
            continue
        meta = packages[index].get("metadata")
        if not isinstance(meta, dict):
            continue
        if t.key == ("package", "metadata"):
            out.extend(_echo_list(source, t.body, "requires-dist", meta.get("requires-dist"), None, {}))
        elif t.key == ("package", "metadata", "requires-dev"):
            dev = meta.get("requires-dev")
            if isinstance(dev, dict):
                for group, items in dev.items():
                    out.extend(_echo_list(source, t.body, group, items, group, {}))
    return out


def _echo_list(source: SourceText, body: Span | None, key: str, items: Any, group: str | None, flags: dict[str, Any]) -> list[Pin]:
    if not isinstance(items, list):
        return []
    text = source.text
    spans: list[Span] = []
    if body is not None:
        at = _array_open(text, body, key)
        if at is not None:
            spans = _array_items(text, at)
    if len(spans) != len(items):
        spans = []
    out: list[Pin] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        name = item["name"]
        span = spans[i] if spans else (body or Span(0, 0))
        written = Located(name, span)
        m = re.search(r"\bname\s*=\s*\"((?:[^\"\\]|\\.)*)\"", text[span.start : span.end]) if spans else None
        if m and m.group(1) == name:
            written = Located(name, Span(span.start + m.start(1), span.start + m.end(1)))
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


_JSON_NUMBER_RE = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_JSON_WS_RE = re.compile(r"[ \t\r\n]*")


class _JsonScanner:
    """Just enough JSON to keep each key's and value's offsets (json.loads keeps none)."""

    def __init__(self, text: str) -> None:
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
            return _JValue("scalar", json.loads(m.group(0)), Span(start, self.i))
        raise _JsonError(f"unexpected character {c!r}", start)

    def string(self) -> tuple[str, int]:
        try:
            s, end = json.decoder.scanstring(self.t, self.i + 1)  # type: ignore[attr-defined]  # public in CPython, not in typeshed
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
    from kimi_lsp.pins._pep508 import yaml_flow_too_deep

    deep = yaml_flow_too_deep(source.text)
    if deep is not None:
        return PinSource(source.path, fmt, True, (), tool=tool, relock_command=relock,
                         problems=(PinProblem(f"{source.path.name} is not valid YAML: collections nested too deeply", Span(deep, deep + 1)),))
    try:
        root = yaml.compose(source.text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        off = mark.index if mark is not None else 0
        first = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
        return PinSource(source.path, fmt, True, (), tool=tool, relock_command=relock,
                         problems=(PinProblem(f"{source.path.name} is not valid YAML: {first}", Span(off, off)),))
    packages = _ymap(root).get("package")
    if not isinstance(packages, yaml.SequenceNode):
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
        if not name or not isinstance(name_node, yaml.ScalarNode):
            problems.append(PinProblem(f"{source.path.name}: a pip package entry has no name", _ynode_span(item)))
            continue
        version_node = fields.get("version")
        version = _yscalar(version_node)
        ends = [n.end_mark.index for n in (name_node, version_node, fields.get("manager"), fields.get("platform"))
                if isinstance(n, yaml.ScalarNode)]
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
                hashed=isinstance(fields.get("hash"), yaml.MappingNode),
            )
        )
    return PinSource(source.path, fmt, True, tuple(pins), tool=tool, relock_command=relock, problems=tuple(problems))


def _ymap(node: yaml.Node | None) -> dict[str, yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}


def _yscalar(node: yaml.Node | None) -> str | None:
    # the composer keeps the text as written, so `version: 1.10` stays "1.10", not a float
    return node.value if isinstance(node, yaml.ScalarNode) else None


def _ynode_span(node: yaml.Node) -> Span:
    return Span(node.start_mark.index, node.end_mark.index)


def _yscalar_content(text: str, node: yaml.ScalarNode) -> Span:
    span = _ynode_span(node)
    if node.style in ("'", '"') and span.end - span.start >= 2:
        return Span(span.start + 1, span.end - 1)
    return span


_READERS: dict[str, Callable[[SourceText], PinSource]] = {
    PinFormat.UV_LOCK: read_uv_lock,
    PinFormat.POETRY_LOCK: read_poetry_lock,
    PinFormat.PDM_LOCK: read_pdm_lock,
    PinFormat.PIPFILE_LOCK: read_pipfile_lock,
    PinFormat.PYLOCK: read_pylock,
    PinFormat.CONDA_LOCK: read_conda_lock,
}

__all__ = [
    "LOCK_FORMATS",
    "RELOCK",
    "locked_versions",
    "read_conda_lock",
    "read_lock",
    "read_pdm_lock",
    "read_pipfile_lock",
    "read_poetry_lock",
    "read_pylock",
    "read_uv_lock",
    "uv_lock_requirements",
]
