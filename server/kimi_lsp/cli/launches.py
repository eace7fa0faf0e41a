"""``kimi-lsp launches [PATH ...] [--format text|json]``: every launch kimi-lsp reads, with the form
it was read from, the sglang release it is judged by and the evidence for it, and the pins that
govern it. "Did it see my launch?" answered from the same engine as ``--check``; CI can diff it."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_OK, EXIT_ERROR = 0, 2


def launches_cmd(argv: list[str]) -> int:
    from kimi_lsp import __version__, launch_info
    from kimi_lsp.cli.check import collect_files
    from kimi_lsp.cli.output import display_path, printable
    from kimi_lsp.engine import Engine
    from kimi_lsp.workspace import Workspace

    p = argparse.ArgumentParser(prog="kimi-lsp launches",
                                description="List every sglang launch found, the release it is judged by and why, "
                                            "and the pins that govern it.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files and directories (default: .)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    try:
        ns = p.parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code in (0, None) else EXIT_ERROR
    cwd = Path.cwd()
    ws = Workspace(cwd, stable=True)
    engine = Engine(ws)
    files, errors = collect_files(list(ns.paths), ws)
    engine.index_config_references(files)
    found: list[launch_info.LaunchInfo] = []
    for f in files:
        try:
            found.extend(launch_info.launches_in(engine, f))
        except Exception as exc:  # noqa: BLE001 - one file's failure is reported, the others listed
            errors.append(f"{display_path(f, cwd)}: internal error ({type(exc).__name__}: {exc})")
    for e in errors:
        print(f"kimi-lsp: {printable(e)}", file=sys.stderr)

    def rel(path: Path) -> str:
        return display_path(path, cwd)

    if ns.format == "json":
        doc: dict[str, object] = {
            "version": __version__,
            "launches": [launch_info.as_json(i, ws, rel) for i in found],
            "summary": {"files": len(files), "launches": len(found)},
        }
        if errors:
            doc["run_errors"] = errors
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        for i in found:
            where = launch_info.as_json(i, ws, rel)
            release = f"sglang {i.release}" if i.release else "release unknown"
            judged = "" if i.judged_by == (i.release,) else f" (checked against {', '.join(i.judged_by) or 'no release'})"
            print(printable(f"{where['path']}:{where['line']}:{where['column']}: {i.form} {i.entry}: {release}{judged}"))
            print(printable(f"  why: {i.how}"))
            for e in where["evidence"]:  # type: ignore[attr-defined]
                at = f"{e['path']}:{e['line']}" if "line" in e else ""
                print(printable(f"  evidence: {e['says']}" + (f" ({at})" if at else "")))
            for pin in where["pins"]:  # type: ignore[attr-defined]
                print(printable(f"  pin: {pin['package']}{pin['specifier']} ({pin['path']}:{pin.get('line', '?')})"))
            if i.doubt:
                print(printable(f"  doubt: {i.doubt}"))
        print(f"{len(found)} launch{'es' if len(found) != 1 else ''} in {len(files)} file{'s' if len(files) != 1 else ''}.")
    return EXIT_ERROR if errors else EXIT_OK


def why_cmd(argv: list[str]) -> int:
    """``kimi-lsp why FILE[:LINE]``: for each launch in FILE (or the one on LINE), why kimi-lsp
    judges it as it does: the release and its evidence, the pins and lockfiles that govern it, the
    ``--config`` file it reads, and the settings in force with the file each came from."""
    from kimi_lsp import launch_info
    from kimi_lsp.cli.output import display_path, printable
    from kimi_lsp.config import Settings
    from kimi_lsp.engine import Engine
    from kimi_lsp.workspace import Workspace

    p = argparse.ArgumentParser(prog="kimi-lsp why", description="Say why kimi-lsp judges the launches in FILE as it does.")
    p.add_argument("target", metavar="FILE[:LINE]", help="a launch file, optionally with the line of one launch")
    try:
        ns = p.parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code in (0, None) else EXIT_ERROR
    target: str = ns.target
    line: int | None = None
    head, sep, tail = target.rpartition(":")
    if sep and tail.isdigit() and head:
        target, line = head, int(tail)
    cwd = Path.cwd()
    path = (cwd / target).resolve()
    if not path.is_file():
        print(f"kimi-lsp why: {printable(target)}: not a file", file=sys.stderr)
        return EXIT_ERROR
    ws = Workspace(cwd, stable=True)
    engine = Engine(ws)
    engine.index_config_references([path])
    infos = launch_info.launches_in(engine, path)
    settings = engine.settings_for(path)

    def rel(q: Path) -> str:
        return display_path(q, cwd)

    if line is not None:
        infos = [i for i in infos if _lines_of(i, ws)[0] <= line <= _lines_of(i, ws)[1]] or infos[:0]
    if not infos:
        where = f" on line {line}" if line is not None else ""
        print(printable(f"{rel(path)}: no sglang launch read{where}"))
        return EXIT_OK
    for i in infos:
        j = launch_info.as_json(i, ws, rel)
        print(printable(f"{j['path']}:{j['line']}:{j['column']}: {i.form} launch ({i.entry})"))
        if i.release:
            print(printable(f"  release: sglang {i.release}: {i.how}"))
        else:
            print(printable(f"  release: unknown: {i.how}"))
        if i.judged_by != (i.release,):
            print(printable(f"  checked against: sglang {', '.join(i.judged_by) or '(no release: release-dependent checks off)'}"))
        for e in j["evidence"]:  # type: ignore[attr-defined]
            at = f" ({e['path']}:{e['line']})" if "line" in e else ""
            print(printable(f"  evidence: {e['says']}{at}"))
        for pin in j["pins"]:  # type: ignore[attr-defined]
            print(printable(f"  governed by: {pin['package']}{pin['specifier']} ({pin['path']}:{pin.get('line', '?')})"))
        if not j["pins"]:
            print("  governed by: no pin of sglang or flashinfer-python found")
        if i.config is not None:
            print(printable(f"  reads --config {rel(i.config)}"))
        if i.doubt:
            print(printable(f"  read with doubt: {i.doubt}"))
    src = rel(settings.source) if settings.source is not None else None
    print(printable(f"settings: {('from ' + src) if src else 'defaults (no [tool.kimi-lsp] or kimi-lsp.toml found above the file)'}"))
    defaults = Settings()
    for name in ("select", "ignore", "per_file_ignores", "severity", "sglang_version", "target_gpu",
                 "flashinfer_pin", "flashinfer_target", "exclude"):
        value = getattr(settings, name)
        if value != getattr(defaults, name):
            print(printable(f"  {name.replace('_', '-')} = {value!r}"))
    for prob in settings.problems:
        print(printable(f"  invalid setting: {prob.message}"))
    return EXIT_OK


def _lines_of(info: object, ws: object) -> tuple[int, int]:
    """The 1-based first and last line of a launch."""
    from kimi_lsp.text import LineIndex

    text = ws.text(info.path) or ""  # type: ignore[attr-defined]
    li = LineIndex(text)
    span = info.launch_span  # type: ignore[attr-defined]
    return li.line_of(span.start) + 1, li.line_of(max(span.start, span.end - 1)) + 1
