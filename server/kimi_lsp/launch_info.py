"""What kimi-lsp knows about each launch in a file: where it is, the form it was read from, the
sglang release it is judged by and the evidence for it, and the pins that govern it.

The engine's own readers answer every question (one engine for the CLI, the server's hover and
``kimi-lsp launches``), so what this reports is what the lint used.
"""
from __future__ import annotations

from pathlib import Path

from kimi_lsp._record import dataclass
from kimi_lsp.text import Span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kimi_lsp.engine import Engine
    from kimi_lsp.release import ReleaseResolution
    from kimi_lsp.surfaces.model import LaunchCommand
    from kimi_lsp.workspace import Workspace

# the packages whose pins decide what kimi-lsp checks
_PINNED = ("sglang", "flashinfer-python")


@dataclass(frozen=True, slots=True)
class Evidence:
    path: Path
    span: Span
    says: str  # "image `lmsysorg/sglang:v0.5.12-rocm700` names sglang 0.5.12"


@dataclass(frozen=True, slots=True)
class PinInfo:
    package: str
    specifier: str  # "==0.6.16.post4", ">=0.7"
    path: Path
    span: Span


@dataclass(frozen=True, slots=True)
class LaunchInfo:
    path: Path
    span: Span  # the launch's program (``python3 -m sglang.launch_server``), or the whole launch
    launch_span: Span
    form: str  # "shell", "dockerfile", "kubernetes", "notebook", ... (the surface it was read from)
    entry: str  # "launch_server", "serve", "engine", ...
    release: str  # "0.5.12", or "" when unknown
    judged_by: tuple[str, ...]  # the releases the launch is checked against
    how: str  # in words: where the release comes from, or why it is unknown
    evidence: tuple[Evidence, ...]
    pins: tuple[PinInfo, ...]
    doubt: str | None
    config: Path | None = None  # the `--config` file the launch reads, when it names one that exists


def launches_in(engine: Engine, path: Path) -> list[LaunchInfo]:
    """Every launch the engine reads in ``path`` (an unreadable file has none)."""
    from kimi_lsp.surfaces.model import Entry
    from kimi_lsp.workspace import SourceText

    src, surface = engine.read_launches(path)
    if not isinstance(src, SourceText) or surface is None:
        return []
    settings = engine.settings_for(path)
    standalone = path in engine.referenced_configs
    out = []
    for cmd in surface.launches:
        if cmd.entry is Entry.CONFIG_FILE and standalone:
            continue
        out.append(describe_launch(engine, cmd, settings))
    return out


def describe_launch(engine: Engine, cmd: LaunchCommand, settings: object) -> LaunchInfo:
    from kimi_lsp.engine import _own_kind, neighbours, recent_releases
    from kimi_lsp.pins import discovery
    from kimi_lsp.release import describe, image_pin_source, resolve_release

    ws = engine.workspace
    repo_root = ws.repo_root(cmd.path.parent, None)
    gov = discovery.discover(cmd.path, ws, repo_root, own_kind=_own_kind(cmd))
    release = resolve_release(cmd, None if getattr(settings, "sglang_version", None) else gov, ws, settings)  # type: ignore[arg-type]
    if release.version is not None:
        how = describe(release, ws)
        judged: tuple[str, ...] = (release.version,)
        if release.candidates is not None or neighbours(release.version) is not None:
            judged = release.candidates or neighbours(release.version) or judged
    else:
        how = release.why or "no image tag, pip line, lock or manifest names it"
        judged = release.candidates if release.candidates is not None else recent_releases()
    evidence = _evidence(release, ws)
    image_pins = image_pin_source(release, cmd.path)
    sources = ([image_pins] if image_pins is not None else []) + list(gov.own)
    for proj in gov.projects:
        sources.extend((*proj.locks, *proj.manifests))
    pins: list[PinInfo] = []
    for src in sources:
        for name in _PINNED:
            if any(p.package == name for p in pins):
                continue  # the first (nearest) source that pins it governs
            for p in src.pins_for(name):
                pins.append(PinInfo(name, p.specifier or "(any version)", src.path, p.span))
                break
    span = cmd.program.span if cmd.program.span.end > cmd.program.span.start else cmd.span
    from kimi_lsp.launch import config_path_token, resolve_config_path

    tok, _ = config_path_token(cmd)
    config = resolve_config_path(tok.value, cmd, ws.root, ws.exists) if tok is not None else None
    return LaunchInfo(cmd.path, span, cmd.span, cmd.surface.value, cmd.entry.value, release.version or "", tuple(judged),
                      how, evidence, tuple(pins), cmd.doubt, config)


def _evidence(release: ReleaseResolution, ws: Workspace) -> tuple[Evidence, ...]:
    out = []
    if release.location is not None and release.source_kind not in ("setting",):
        what = release.source_text or release.source_kind
        out.append(Evidence(release.location.path, release.location.span, f"{what} ({release.source_kind})"))
    for e in release.evidence:
        names = "a fork" if e.fork else "main" if e.main else " / ".join(e.releases)
        out.append(Evidence(e.location.path, e.location.span, f"{e.what} names sglang {names}"))
    if release.last_change is not None:
        lc = release.last_change
        note = "; a shallow clone: the file may be older" if lc.shallow else ""
        out.append(Evidence(Path(""), Span(0, 0), f"last committed on {lc.day} (commit {lc.commit}){note}"))
    return tuple(out)


def markdown(info: LaunchInfo, ws: Workspace) -> str:
    """The hover text of a launch: its release and the evidence, and the pins that govern it."""
    lines = [f"**sglang launch** ({info.form}, `{info.entry}`)", ""]
    if info.release:
        lines.append(f"Release: sglang {info.release}, {info.how.split(', ', 1)[1] if ', ' in info.how else info.how}")
    else:
        lines.append(f"Release unknown: {info.how}")
    if info.judged_by and (not info.release or info.judged_by != (info.release,)):
        lines.append(f"Checked against sglang {', '.join(info.judged_by)}")
    for e in info.evidence[:5]:
        where = _where(e.path, e.span, ws)
        lines.append(f"- {e.says}" + (f" — {where}" if where else ""))
    if info.pins:
        lines.append("")
        lines.append("Pins: " + "; ".join(f"`{p.package}{p.specifier}` ({_where(p.path, p.span, ws)})" for p in info.pins))
    if info.doubt:
        lines.append("")
        lines.append(f"Read as a launch with doubt: {info.doubt}")
    return "\n".join(lines)


def _where(path: Path, span: Span, ws: Workspace) -> str:
    if not str(path) or str(path) == ".":
        return ""
    from kimi_lsp.diagnostics import Location
    from kimi_lsp.release import where

    return where(Location(path, span), ws)


def as_json(info: LaunchInfo, ws: Workspace, rel: object) -> dict[str, object]:
    """The ``kimi-lsp launches --format json`` form (``rel`` makes a path relative for output)."""
    def loc(path: Path, span: Span) -> dict[str, object] | None:
        if not str(path) or str(path) == ".":
            return None
        text = ws.text(path)
        if text is None:
            return {"path": rel(path)}  # type: ignore[operator]
        from kimi_lsp.text import LineIndex

        li = LineIndex(text)
        line = li.line_of(span.start)
        return {"path": rel(path), "line": line + 1, "column": span.start - li.line_start(line) + 1}  # type: ignore[operator]

    where = loc(info.path, info.span) or {}
    return {
        "path": where.get("path", rel(info.path)),  # type: ignore[operator]
        "line": where.get("line"),
        "column": where.get("column"),
        "form": info.form,
        "entry": info.entry,
        "release": info.release or None,
        "judged_by": list(info.judged_by),
        "how": info.how,
        "evidence": [{**(loc(e.path, e.span) or {}), "says": e.says} for e in info.evidence],
        "pins": [{"package": p.package, "specifier": p.specifier, **(loc(p.path, p.span) or {})} for p in info.pins],
        "doubt": info.doubt,
    }
