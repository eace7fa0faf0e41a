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
