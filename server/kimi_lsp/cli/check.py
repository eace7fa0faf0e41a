"""``kimi-lsp --check``: collect files, lint, optionally fix, report, exit 0/1/2."""
from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections import Counter
from pathlib import Path

from kimi_lsp.cli import output
from kimi_lsp.diagnostics import Diagnostic, Severity
from kimi_lsp.engine import Engine, looks_like_launch_candidate
from kimi_lsp.workspace import Workspace, find_repo_root

LOCK_FORMATS = {"uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "pylock", "conda-lock"}


def _codes(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    return tuple(c.strip().upper() for c in text.split(",") if c.strip())


def collect_files(paths: list[str], workspace: Workspace) -> tuple[list[Path], list[str]]:
    """Launch-file candidates for the given PATHs, and error messages for missing paths."""
    from kimi_lsp.pins import discovery
    from kimi_lsp.walk import walk

    out: dict[Path, None] = {}
    errors: list[str] = []
    for raw in paths or ["."]:
        p = Path(raw)
        ap = (workspace.root / p).resolve() if not p.is_absolute() else p.resolve()
        if not ap.exists() and not os.path.lexists(ap):
            errors.append(f"{raw}: no such file or directory")
            continue
        repo = find_repo_root(ap, workspace.root)
        if ap.is_dir():
            for f in walk(ap, repo):
                out[f] = None
            continue
        if discovery.pin_format(ap) is not None and not looks_like_launch_candidate_strict(ap):
            # a pin file stands for the launch files it governs (pre-commit passes only changed files)
            for root in discovery.governed_roots(ap, workspace, repo):
                for f in walk(root, repo):
                    out[f] = None
            continue
        out[ap] = None
    return list(out), errors


def looks_like_launch_candidate_strict(path: Path) -> bool:
    # pyproject.toml / pylock.toml / environment.yml are pin files, not launch files; a TOML launch
    # profile or a YAML config is anything else with those suffixes
    from kimi_lsp.pins import discovery

    return looks_like_launch_candidate(path) and discovery.pin_format(path) is None


def run_check(ns: argparse.Namespace) -> int:
    cwd = Path.cwd().resolve()
    ws = Workspace(cwd)
    overrides: dict[str, object] = {}
    sel, ign = _codes(ns.select), _codes(ns.ignore)
    if sel is not None:
        overrides["select"] = sel
    if ign is not None:
        overrides["ignore"] = ign
    if ns.sglang_version:
        overrides["sglang_version"] = ns.sglang_version
    if ns.target_gpu:
        overrides["target_gpu"] = ns.target_gpu
    engine = Engine(ws, overrides=overrides)
    files, errors = collect_files(ns.paths, ws)
    for e in errors:
        print(f"kimi-lsp: error: {e}", file=sys.stderr)
    if errors and not files:
        return 2
    fmt = ns.format or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")

    _index_config_references(engine, files)

    def lint_all() -> list[Diagnostic]:
        diags: list[Diagnostic] = []
        seen: set[tuple] = set()
        for f in files:
            for d in engine.lint_file(f).diagnostics:
                key = (d.path, d.location.span, d.code, d.message)
                if key not in seen:
                    seen.add(key)
                    diags.append(d)
        diags.sort(key=Diagnostic.sort_key)
        return diags

    pos = output.Positions(ws)
    if ns.fix or ns.diff:
        from kimi_lsp import fixes

        outcome = fixes.fix_until_stable(lint_all, ws, unsafe=ns.unsafe_fixes)
        diags = outcome.remaining
        repo = find_repo_root(cwd, cwd)
        written = []
        for path, (before, after) in sorted(outcome.changed.items()):
            if ns.diff:
                rel = output.display_path(path, cwd)
                sys.stdout.writelines(
                    difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{rel}", f"b/{rel}")
                )
                continue
            from kimi_lsp.pins import discovery

            if discovery.pin_format(path) in LOCK_FORMATS:
                print(f"kimi-lsp: refusing to edit lockfile {output.display_path(path, cwd)}", file=sys.stderr)
                continue
            if not fixes.inside(path, repo) or (path.is_symlink() and not fixes.inside(Path(os.path.realpath(path)), repo)):
                print(f"kimi-lsp: refusing to write outside the repository: {path}", file=sys.stderr)
                continue
            src = outcome.sources.get(path)
            if src is None:
                continue
            fixes.write_atomic(src, after)
            written.append(path)
        if not ns.diff:
            # report positions against what is on disk now
            ws = Workspace(cwd)
            engine = Engine(ws, overrides=overrides)
            _index_config_references(engine, files)
            diags = lint_all()
            pos = output.Positions(ws)
        n = len(outcome.applied)
        if fmt == "text" and not ns.quiet:
            verb = "Would fix" if ns.diff else "Fixed"
            stream = sys.stderr if ns.diff else sys.stdout
            if n:
                print(f"{verb} {n} problem{'s' if n != 1 else ''} in {len(outcome.changed)} file{'s' if len(outcome.changed) != 1 else ''}: "
                      + ", ".join(output.display_path(p, cwd) for p in sorted(outcome.changed)), file=stream)
            for cmd in outcome.followups:
                print(f"Now run: {cmd}", file=stream)
            if not outcome.converged:
                print("kimi-lsp: fixes did not converge; some were left unapplied", file=sys.stderr)
    else:
        diags = lint_all()

    if fmt == "json":
        sys.stdout.write(output.render_json(diags, pos, cwd, files=len(files)))
    elif fmt == "github":
        sys.stdout.write(output.render_github(diags, pos, cwd, files=len(files)))
    elif fmt == "sarif":
        from kimi_lsp.cli.sarif import render_sarif

        sys.stdout.write(render_sarif(diags, pos, cwd))
    elif not ns.diff:
        sys.stdout.write(output.render_text(diags, pos, cwd, files=len(files), quiet=ns.quiet))
    if ns.statistics:
        c = Counter(d.code for d in diags)
        stream = sys.stdout if fmt == "text" else sys.stderr
        for code, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])):
            from kimi_lsp.rules import get

            r = get(code)
            print(f"{n:5d}  {code}  {r.name if r else ''}", file=stream)
    for e in engine.errors:
        print(f"kimi-lsp: {e}", file=sys.stderr)
    if engine.errors:
        return 2
    if errors:
        return 2
    if ns.exit_zero:
        return 0
    return 1 if any(d.severity is Severity.ERROR for d in diags) else 0


def _index_config_references(engine: Engine, files: list[Path]) -> None:
    """Record which YAML files are passed with --config by a launch in this run, so that such a
    file is checked through its launches (with their command-line overrides) and not on its own."""
    from kimi_lsp.launch import config_path_token, resolve_config_path

    for f in files:
        if f.suffix.lower() in (".yaml", ".yml") and not _mentions_launch(engine, f):
            continue
        _, surface = engine.read_launches(f)
        if surface is None:
            continue
        for cmd in surface.launches:
            tok, _ = config_path_token(cmd)
            if tok is None:
                continue
            p = resolve_config_path(tok.value, cmd, engine.workspace.root)
            if p is not None:
                engine.referenced_configs.add(p.resolve())


def _mentions_launch(engine: Engine, f: Path) -> bool:
    text = engine.workspace.text(f) or ""
    return "sglang" in text
