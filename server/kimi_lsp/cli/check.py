"""``kimi-lsp --check``: collect files, lint, optionally fix, report, exit 0/1/2.

``--fix`` applies every safe fix (``--unsafe-fixes`` adds the unsafe ones) in memory, re-lints
until nothing changes, then writes each changed file atomically and reports on what is now on
disk. ``--diff`` prints the same changes as a unified diff and writes nothing. A fix never
writes a lockfile, nor through a link that leads out of the repository; such a fix is reported
as not applied, with the reason.
"""
from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

from kimi_lsp.cli import output
from kimi_lsp.diagnostics import Diagnostic, Severity
from kimi_lsp.workspace import Workspace, record_touched, take_touched

TYPE_CHECKING = False  # typing itself is not imported: see _record.py
if TYPE_CHECKING:
    from typing import TextIO

    from kimi_lsp import cache
    from kimi_lsp.text import Span
    from kimi_lsp.workspace import SourceText

# The engine (rules, schema, surface and pin readers) is imported where a lint runs, so that a
# result-cache hit answers without loading it.

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    return tuple(c.strip().upper() for c in text.split(",") if c.strip())


def collect_files(paths: list[str], workspace: Workspace) -> tuple[list[Path], list[str]]:
    """Launch-file candidates for the given PATHs, and error messages for missing paths."""
    files, errors, _walked = collect(paths, workspace)
    return files, errors


def collect(paths: list[str], workspace: Workspace, real: set[Path] | None = None) -> tuple[list[Path], list[str], bool]:
    """``collect_files``, and whether a directory was walked for them (a walk's answer depends
    on every file in the tree, so it is never cached, even when it found only the named file).
    ``real`` receives the files named themselves: each is its own realpath (a walk's are not)."""
    from kimi_lsp.pins import discovery

    out: dict[Path, None] = {}
    errors: list[str] = []
    walked = False
    walks: set[tuple[Path, Path]] = set()  # (root, repository) pairs walked already
    root = os.fspath(workspace.root)
    for raw in paths or ["."]:
        try:
            # (a string: resolve_mode makes the one Path a file needs, of its resolved name)
            ap, mode = workspace.resolve_mode(raw if os.path.isabs(raw) else os.path.join(root, raw))
        except (RuntimeError, OSError) as exc:  # a link loop (RuntimeError before Python 3.13)
            errors.append(f"{raw}: cannot resolve the path ({exc})")
            continue
        if mode is None:
            errors.append(f"{raw}: {_stat_error(ap)}")
            continue
        if mode is not None and stat.S_ISDIR(mode):
            walked = True
            _walk_once(ap, workspace.repo_root(ap, workspace.root), walks, out)
            continue
        if discovery.pin_format(ap) is not None and not looks_like_launch_candidate_strict(ap):
            # a pin file stands for the launch files it governs (pre-commit passes only changed files)
            walked = True
            repo = workspace.repo_root(ap, workspace.root)
            for governed in discovery.governed_roots(ap, workspace, repo):
                _walk_once(governed, repo, walks, out)
            continue
        if mode is not None and not stat.S_ISREG(mode):
            errors.append(f"{raw}: not a regular file (a device, FIFO or socket is never read)")
            continue
        out[ap] = None
        if real is not None:
            real.add(ap)
    return list(out), errors, walked


def _walk_once(root: Path, repo: Path, walks: set[tuple[Path, Path]], out: dict[Path, None]) -> None:
    """The candidates under ``root`` into ``out``, unless this collection walked it already (a
    project's environment.yml and conda-lock.yml both stand for its launch files)."""
    from kimi_lsp.walk import walk

    if (root, repo) not in walks:
        walks.add((root, repo))
        for f in walk(root, repo):
            out[f] = None


def _stat_error(path: Path) -> str:
    """Why ``path`` cannot be checked, as the operating system says it (permission denied is
    not "no such file")."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return "no such file or directory" if not os.path.lexists(path) else "a link to a missing file"
    except OSError as exc:
        return (exc.strerror or str(exc)).lower()
    except ValueError:
        return "not a valid path"
    return "cannot be read"


def looks_like_launch_candidate_strict(path: Path) -> bool:
    # pyproject.toml / pylock.toml / environment.yml are pin files, not launch files; a TOML launch
    # profile or a YAML config is anything else with those suffixes
    from kimi_lsp.engine import looks_like_launch_candidate
    from kimi_lsp.pins import discovery

    return looks_like_launch_candidate(path) and discovery.pin_format(path) is None


def usage_problems(ns: SimpleNamespace) -> list[str]:
    """Settings on the command line that are wrong. Each is a usage error (exit 2): a typo in
    ``--select`` must never turn rules off, nor an unknown GPU or release silently mean "any"."""
    out: list[str] = []
    for raw in ns.paths:
        if not raw:
            out.append("an empty PATH (\"\") names no file; use . for the working directory")
    if ns.jobs is not None and ns.jobs < 1:
        out.append(f"--jobs {ns.jobs}: the number of worker processes is 1 or more (leave it out for one per core)")
    out += _stdin_problems(ns)
    if ns.unsafe_fixes and not (ns.fix or ns.diff):
        # ruff accepts it alone (its report then counts unsafe fixes as available); here a report
        # never changes with it, so alone it would do nothing, silently
        out.append("--unsafe-fixes applies only with --fix or --diff")
    if ns.select is None and ns.ignore is None and ns.sglang_version is None and ns.target_gpu is None:
        return out  # nothing to check: a cache hit must not load the configuration module
    from kimi_lsp import config

    for flag, text in (("--select", ns.select), ("--ignore", ns.ignore), ("--extend-select", getattr(ns, "extend_select", None))):
        if text is None:
            continue
        tokens = [c.strip() for c in text.split(",")]
        if not any(tokens):
            out.append(f"{flag} {text!r} names no rule code (use e.g. {flag} KL101,KL2)")
            continue
        for tok in tokens:
            if not tok and flag != "--select":
                continue
            why = config.selector_problem(tok.upper()) if tok else "an empty code between commas"
            if why is not None:
                out.append(f"{flag}: {why}")
    if ns.sglang_version is not None:
        why = config.sglang_version_problem(ns.sglang_version.strip()) if ns.sglang_version.strip() else "empty"
        if why is not None:
            out.append(f"--sglang-version: {why}")
    if ns.target_gpu is not None:
        why = config.gpu_problem(ns.target_gpu) if ns.target_gpu.strip() else "empty"
        if why is not None:
            out.append(f"--target-gpu: {why}")
    return out


def _stdin_problems(ns: SimpleNamespace) -> list[str]:
    """``-`` (stdin) and ``--stdin-filename`` make sense only together, and alone."""
    name = getattr(ns, "stdin_filename", None)
    if name is None:
        if "-" in ns.paths:
            return ["- (stdin) needs --stdin-filename PATH: the name says what the text is, and where its pins and settings are"]
        return []
    out: list[str] = []
    if not name.strip() or name == "-":
        out.append("--stdin-filename needs the name of the file the text on stdin stands for")
    if [p for p in ns.paths if p != "-"]:
        out.append("--stdin-filename lints stdin alone: give - as the only PATH")
    if ns.fix or ns.diff:
        out.append("--fix and --diff cannot write stdin back; check the file itself to fix it")
    return out


def _read_stdin(ns: SimpleNamespace, ws: Workspace, cwd: Path) -> tuple[Path | None, str | None]:
    """The file ``--stdin-filename`` names (resolved as a PATH is) with stdin's text as its
    overlay in ``ws``; else None and why not."""
    from kimi_lsp.workspace import MAX_FILE_BYTES, SourceText, decode_bytes

    raw: str = ns.stdin_filename
    try:
        path = ws.resolve(Path(raw) if os.path.isabs(raw) else cwd / raw)
    except (RuntimeError, OSError, ValueError) as exc:
        return None, f"--stdin-filename {raw}: cannot resolve the path ({exc})"
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return None, "stdin is closed; nothing to lint"
    try:
        data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return None, f"stdin cannot be read ({exc.strerror or exc})"
    if len(data) > MAX_FILE_BYTES:
        return None, f"stdin: too large to lint (> {MAX_FILE_BYTES // (1024 * 1024)} MiB)"
    src = decode_bytes(path, data)
    if not isinstance(src, SourceText):
        return None, f"stdin ({raw}): {src.reason}"
    ws.set_overlay(path, src.text)
    return path, None


def _overrides(ns: SimpleNamespace) -> dict[str, object]:
    """Settings given on the command line (they win over kimi-lsp.toml / pyproject)."""
    out: dict[str, object] = {}
    sel, ign = _codes(ns.select), _codes(ns.ignore)
    if sel is not None:
        out["select"] = sel
    if ign is not None:
        out["ignore"] = ign
    if ns.sglang_version:
        out["sglang_version"] = ns.sglang_version
    if ns.target_gpu:
        out["target_gpu"] = ns.target_gpu
    named = tuple(os.path.realpath(p) for p in (ns.paths or ["."]) if p and p != "-" and os.path.isdir(p))
    if named:  # `exclude` does not hide a directory named here (config.Settings.named_dirs)
        out["named_dirs"] = named
    return out


class _Run:
    """One ``--check`` run: the files, the settings overrides, and a fresh engine per lint."""

    def __init__(self, ns: SimpleNamespace, cwd: Path) -> None:
        self.cwd = cwd
        self.overrides = _overrides(ns)
        self.ws = Workspace(cwd)
        self.real: set[Path] = set()  # the files named themselves, resolved
        self.stdin = getattr(ns, "stdin_filename", None) is not None
        if self.stdin:  # one file, its text from stdin (a workspace overlay), the rest from disk
            path, why = _read_stdin(ns, self.ws, cwd)
            self.files, self.errors, self.walked = ([path] if path else []), ([why] if why else []), False
        else:
            self.files, self.errors, self.walked = collect(ns.paths, self.ws, self.real)
        self.engine_errors: list[str] = []

    def lint(self, ws: Workspace | None = None) -> list[Diagnostic]:
        # A fresh engine each time: the engine caches parsed --config files by path, which a fix
        # pass (editing them through workspace overlays) would otherwise leave stale.
        from kimi_lsp.engine import Engine

        engine = Engine(ws or self.ws, overrides=self.overrides)
        engine.index_config_references(self.files)
        diags = engine.lint_files(self.files)
        self.engine_errors = list(engine.errors)
        return diags


def _explicit_files(paths: list[str], workspace: Workspace) -> list[Path] | None:
    """The PATHs resolved as ``collect_files`` resolves them, when every one is a regular file
    (what a result-cache entry is for)."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        try:
            ap = workspace.resolve(p if p.is_absolute() else workspace.root / p)
        except (RuntimeError, OSError, ValueError):
            return None
        if not os.path.isfile(ap):
            return None
        out.append(ap)
    return out or None


def _run_cache(ns: SimpleNamespace, workspace: Workspace, overrides: dict[str, object]) -> tuple[cache.Cache | None, list[Path] | None]:
    if ns.fix or ns.diff or ns.no_cache or getattr(ns, "stdin_filename", None) is not None:
        return None, None
    from kimi_lsp import cache  # (not imported by a --no-cache run)

    if not cache.enabled():
        return None, None
    files = _explicit_files(ns.paths, workspace)
    if files is None:
        return None, None
    return cache.Cache.for_run([str(f) for f in files], str(workspace.root), overrides), files


class ReportNotWritten(Exception):
    """Writing the report to stdout failed (a closed pipe, a full disk): ``run_check`` turns it
    into an exit status and one line on stderr, never a traceback."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error)
        self.error = error


# The status the run exits with once its report is out, set before the report is written: a
# reader that goes away mid-report must not turn a failing check into a pass.
_verdict: list[int] = []


def _expect(code: int) -> int:
    _verdict[:] = [code]
    return code


def _out(text: str, stream: TextIO | None = None) -> None:
    """Write ``text`` to ``stream`` (stdout by default), a failure to write stdout raising ``ReportNotWritten``."""
    stream = stream or sys.stdout
    try:
        stream.write(text)
    except OSError as exc:
        if stream is sys.stdout:
            raise ReportNotWritten(exc) from None
        raise


def run_check(ns: SimpleNamespace) -> int:
    """``--check``; its exit status still means something when the report cannot be written:
    a reader that went away (a broken pipe) leaves 1 when the check found errors, else 2; a
    full disk or a closed stdout means 2, with one line on stderr."""
    if sys.stdout is None:  # Python found no file descriptor 1 at start-up
        tell("kimi-lsp: error: stdout is closed; the report has nowhere to go")
        return EXIT_ERROR
    _verdict.clear()
    try:
        code = _run_check(ns)
        try:
            sys.stdout.flush()
        except OSError as exc:
            raise ReportNotWritten(exc) from None
        return code
    except ReportNotWritten as failure:
        return report_failed(failure.error, _verdict[0] if _verdict else EXIT_ERROR)


def report_failed(error: OSError, verdict: int) -> int:
    """The exit status of a run whose report could not be written, ``verdict`` the one it
    would have had. Stdout is pointed at the null device first, so that the interpreter's
    own last flush of what is still buffered does not fail again (a second message, status 120)."""
    import errno

    release_stdout()
    if error.errno == errno.EPIPE and verdict == EXIT_FINDINGS:
        return EXIT_FINDINGS  # the reader left (``| head``): what the check found still stands
    why = "the reader closed the pipe" if error.errno == errno.EPIPE else (error.strerror or str(error))
    tell(f"kimi-lsp: error: the report could not be written to stdout: {why}")
    return EXIT_ERROR


def release_stdout() -> None:
    """Point file descriptor 1 at the null device (where stdout is a real file)."""
    stream = sys.stdout
    if stream is None:
        return
    try:
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError, AttributeError):  # an in-memory stream (tests), or none to open
        return
    try:
        os.dup2(null, fd)
    except OSError:
        pass
    finally:
        os.close(null)


def tell(line: str) -> None:
    """One line on stderr, if stderr can take it (it may be the broken pipe too)."""
    try:
        if sys.stderr is not None:
            print(output.printable(line), file=sys.stderr)
    except (OSError, ValueError):
        pass


def _run_check(ns: SimpleNamespace) -> int:
    fmt = ns.format or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")
    bad = usage_problems(ns)
    if bad:
        for line in bad:
            print(f"kimi-lsp: error: {output.printable(line)}", file=sys.stderr)
        return _failed(ns, fmt, bad, None)
    try:
        cwd = Path.cwd().resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        why = f"the working directory cannot be read ({getattr(exc, 'strerror', None) or exc})"
        print(f"kimi-lsp: error: {why}", file=sys.stderr)
        return _failed(ns, fmt, [why], None)
    overrides = _overrides(ns)
    ws = Workspace(cwd)
    store, cached_files = _run_cache(ns, ws, overrides)
    if store is not None and cached_files is not None:
        hit = store.load()
        diags = None
        if hit is not None:
            from kimi_lsp.diagnostics import from_wire

            try:
                diags = [from_wire(w) for w in hit]
            except Exception:  # an entry of another shape (a foreign or damaged file): lint
                diags = None
        if diags is not None:
            code = _expect(_exit_code(ns, diags, errors=False, would_change=False))
            _report(ns, fmt, diags, output.Positions(ws), cwd, len(cached_files), [])
            return code

    _young_collections_rarely()  # before the engine is imported: its import allocates a lot too
    run = _Run(ns, cwd)
    _collections_for(len(run.files))
    for e in run.errors:
        print(f"kimi-lsp: error: {output.printable(e)}", file=sys.stderr)
    if run.errors and not run.files:
        return _failed(ns, fmt, run.errors, cwd)

    failed_writes = False
    would_change = False
    diff: str | None = None
    if ns.fix or ns.diff:
        diags, pos, failed_writes, would_change, diff = _fix(ns, run, fmt)
    elif run.stdin:  # the overlay lives in this workspace: lint here, in this process
        diags = run.lint()
        pos = output.Positions(run.ws)
    else:  # a plain check: in this process, or on every core for a large tree
        from kimi_lsp import batch

        if store is not None and (run.walked or run.files != cached_files):
            store = None  # a pin file named on the command line stands for a walk: not cached
        if store is not None and batch.workers_for(ns.jobs, len(run.files)) > 1:
            store = None  # each worker sees its own files: the paths read are not all here
        started = 0.0
        if store is not None:
            store.prepare()
            started = time.time()
            record_touched()
        _freeze_loaded()
        try:
            diags, run.engine_errors = batch.lint_files(
                run.files, cwd, run.overrides, jobs=ns.jobs, resolved=run.ws.resolutions(run.real))
        finally:
            touched = take_touched()
        if store is not None and not run.engine_errors and not run.errors:
            from kimi_lsp.diagnostics import to_wire

            store.store(touched, [to_wire(d) for d in diags], started)
        pos = output.Positions(run.ws)

    failed = bool(run.engine_errors or run.errors or failed_writes)
    code = _expect(_exit_code(ns, diags, errors=failed, would_change=would_change))
    _report(ns, fmt, diags, pos, cwd, len(run.files), [*run.errors, *run.engine_errors], diff)
    for e in run.engine_errors:
        print(f"kimi-lsp: {output.printable(e)}", file=sys.stderr)
    return code


def _young_collections_rarely() -> None:
    """A lint allocates many short-lived objects and keeps few, and so does importing the
    engine: collect young objects every 50,000 allocations rather than 700. Most are freed by
    their reference count before a collection looks at them; what a collection walks is what
    the lint keeps (pins, results). On the 5,000-file benchmark 10,000 meant 59 collections and
    ~135 ms, 50,000 means 13 and ~35 ms (with ``batch._index``'s pause). A process of its own, so
    nothing else is affected (forked workers inherit it)."""
    import gc

    gc.set_threshold(50_000, 20, 20)


def _collections_for(files: int) -> None:
    """The console script runs with the collector off (``main.entry``): a one-file lint makes
    little cyclic garbage and exits at once, and its collections cost ~2 % of the run. A lint of
    more files turns it back on (with ``_young_collections_rarely``'s threshold), so that memory
    stays flat over any number of files. A caller that left it on (tests, embedding) keeps it on."""
    import gc

    if files > 1:
        gc.enable()


def _freeze_loaded() -> None:
    """Leave what is loaded by now (modules, records, the schema) out of full collections."""
    import gc

    gc.freeze()


def _exit_code(ns: SimpleNamespace, diags: list[Diagnostic], *, errors: bool, would_change: bool) -> int:
    if errors:
        return EXIT_ERROR
    if ns.exit_zero:
        return EXIT_OK
    if would_change:
        return EXIT_FINDINGS  # --diff: the files are not as --fix would leave them
    return EXIT_FINDINGS if any(d.severity is Severity.ERROR for d in diags) else EXIT_OK


def _failed(ns: SimpleNamespace, fmt: str, errors: list[str], cwd: Path | None) -> int:
    """Exit 2 before anything was linted. A machine-readable format still gets its one document
    on stdout, saying why (JSON ``errors``, SARIF an unsuccessful invocation): a consumer that
    reads the document must never see an empty result it could take for a clean run."""
    _expect(EXIT_ERROR)
    if fmt in ("json", "sarif"):
        base = cwd if cwd is not None else Path(os.sep)
        _report(ns, fmt, [], output.Positions(Workspace(base)), base, 0, errors, "" if ns.diff else None)
    return EXIT_ERROR


def _report(ns: SimpleNamespace, fmt: str, diags: list[Diagnostic], pos: output.Positions, cwd: Path,
            n_files: int, errors: list[str], diff: str | None = None) -> None:
    """``errors``: every reason this run exits 2 (paths not read, internal errors). ``diff``:
    --diff's changes, which the JSON document carries (text and github: stdout is the diff)."""
    if ns.diff and fmt not in ("json", "sarif"):
        pass  # stdout carries the diff alone
    elif fmt == "json":
        _out(output.render_json(diags, pos, cwd, files=n_files, errors=errors, diff=diff))
    elif fmt == "github":
        _out(output.render_github(diags, pos, cwd, files=n_files))
    elif fmt == "sarif":
        from kimi_lsp.cli.sarif import render_sarif

        _out(render_sarif(diags, pos, cwd, engine_errors=errors))
    else:
        _out(output.render_text(diags, pos, cwd, files=n_files, quiet=ns.quiet, color=output.use_color(sys.stdout)))
    if ns.statistics:
        stream = sys.stdout if fmt == "text" and not ns.diff else sys.stderr  # (never into a document)
        _out(output.render_statistics(diags), stream)


def _fix(ns: SimpleNamespace, run: _Run, fmt: str) -> tuple[list[Diagnostic], output.Positions, bool, bool, str | None]:
    """Apply (or, with --diff, show) the fixes. Returns the diagnostics to report, positions for
    them, whether a write failed, whether --diff has changes to show, and --diff's text when the
    report carries it (JSON): stdout is one JSON document. SARIF has no place for a diff, so
    there it goes to stderr; text and github print it on stdout, as ever."""
    from kimi_lsp import fixes

    cwd = run.cwd
    # fixes stay inside the repositories of the files being checked
    # ... found from the PATHs as written: a k3.yaml that links into another repository is
    # checked, but the other repository's files are not this run's to rewrite
    roots = {fixes.edit_root(_as_written(raw, cwd), cwd) for raw in (ns.paths or ["."])} or {cwd}
    outcome = fixes.fix_until_stable(
        run.lint,
        run.ws,
        unsafe=ns.unsafe_fixes,
        may_edit=lambda p: fixes.edit_refusal(p, run.ws, roots),
    )
    # fmt text: the fix report precedes the diagnostics on stdout; otherwise stdout is the
    # machine-readable document (or the diff) and the report goes to stderr
    stream: TextIO = sys.stdout if fmt == "text" and not ns.diff else sys.stderr
    say: Callable[[str], None] = (lambda s: None) if ns.quiet else (lambda s: _out(output.printable(s) + "\n", stream))
    mem_pos = output.Positions(run.ws)
    not_fixed: list[str] = []
    for r in outcome.refused:
        at = mem_pos.of(r.diagnostic.path, r.diagnostic.location.span)
        where = f"{output.display_path(r.diagnostic.path, cwd)}:{at.line}:{at.column}"
        not_fixed.append(f"Not fixed: {where}: {r.diagnostic.code} ({r.fix.title}): {r.reason}")

    written: list[Path] = []
    failed = False
    diff: str | None = None
    if ns.diff:
        diff = "".join(unified_diff(before, after, output.display_path(path, cwd))
                       for path, (before, after) in sorted(outcome.changed.items()))
        if fmt == "sarif":
            _out(diff, sys.stderr)
        elif fmt != "json":
            _out(diff)
        written = sorted(outcome.changed)
    else:
        # check every file before writing any, so that a fix spanning files is written whole or
        # not at all (short of a failing disk)
        held: dict[Path, str] = {}
        for path, (before, _after) in outcome.changed.items():
            reason = fixes.edit_refusal(path, run.ws, roots)
            if reason is None and not _still_reads(path, before, outcome.sources.get(path)):
                reason = "it changed on disk while it was being fixed"
                failed = True
                print(output.printable(f"kimi-lsp: error: {output.display_path(path, cwd)} {reason}; nothing written over it"), file=sys.stderr)
            if reason is not None:
                held[path] = reason
        grew = True
        while grew:
            grew = False
            for _d, f in outcome.applied:
                paths = {e.path for e in f.edits} & set(outcome.changed)
                bad = next((p for p in paths if p in held), None)
                for p in paths:
                    if bad is not None and p not in held:
                        held[p] = f"held back with {output.display_path(bad, cwd)} (one fix edits both)"
                        grew = True
        for path, (before, after) in sorted(outcome.changed.items()):
            rel = output.display_path(path, cwd)
            src = outcome.sources.get(path)
            if path in held or src is None:
                not_fixed.append(f"Not fixed: {rel}: {held.get(path, 'it could not be read back')}")
                continue
            try:
                fixes.write_atomic(src, after, expected=before)
            except OSError as exc:
                failed = True
                print(output.printable(f"kimi-lsp: error: not fixed: {rel}: {exc.strerror or exc}"), file=sys.stderr)
                continue
            written.append(path)

    verb = "Would fix" if ns.diff else "Fixed"
    done = set(written)
    fixed_diags: dict[tuple[str, str, Span], None] = {}
    per_file: dict[Path, dict[str, set[str]]] = {}
    for d, f in outcome.applied:
        touched = {e.path for e in f.edits} & done
        if not touched or not {e.path for e in f.edits} <= done:
            continue
        fixed_diags[(d.code, str(d.path), d.location.span)] = None
        for p in touched:
            per_file.setdefault(p, {}).setdefault(f.title, set()).add(d.code)
    for p in sorted(per_file):
        for title, codes in per_file[p].items():
            say(f"{verb} {output.display_path(p, cwd)}: {title} ({', '.join(sorted(codes))})")
    if fixed_diags:
        n, m = len(fixed_diags), len(per_file)
        say(f"{verb} {n} problem{'s' if n != 1 else ''} in {m} file{'s' if m != 1 else ''}.")
    followups = [f.followup for d, f in outcome.applied if f.followup and {e.path for e in f.edits} <= done]
    for cmd in dict.fromkeys(followups):
        say(f"{'Then run' if ns.diff else 'Now run'}: {cmd}")
    for line in not_fixed:
        say(line)
    if not outcome.converged:
        print(f"kimi-lsp: fixes did not converge after {fixes.MAX_PASSES} passes; some were left unapplied", file=sys.stderr)

    if ns.diff:
        # what --fix would leave behind, positions in the fixed (in-memory) text
        return outcome.remaining, mem_pos, failed, bool(outcome.changed), diff if fmt == "json" else None
    # report against what is on disk now
    disk = Workspace(cwd)
    diags = run.lint(disk)
    return diags, output.Positions(disk), failed, False, None


def _as_written(raw: str, cwd: Path) -> Path:
    """PATH made absolute without following links; a directory stands for a file inside it."""
    p = Path(os.path.abspath(cwd / raw))
    return p / "_" if os.path.isdir(p) and not os.path.islink(p) else p


def _still_reads(path: Path, text: str, src: SourceText | None) -> bool:
    """Does ``path`` on disk still decode to ``text`` (what the fixes were computed on)?"""
    from kimi_lsp.workspace import SourceText, decode_bytes

    if src is None:
        return False
    try:
        from kimi_lsp.workspace import MAX_FILE_BYTES, read_regular

        now = decode_bytes(path, read_regular(os.path.realpath(path), MAX_FILE_BYTES))
    except (OSError, ValueError):
        return False
    return isinstance(now, SourceText) and now.text == text


def unified_diff(before: str, after: str, rel: str) -> str:
    """``git diff``-style text; a last line without a newline is marked as git marks it."""
    import difflib

    out: list[str] = []
    old, new = diff_header_name("a/" + rel), diff_header_name("b/" + rel)
    for line in difflib.unified_diff(before.splitlines(True), after.splitlines(True), old, new):
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


# git's C-style escapes for a quoted name in a diff header
_GIT_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r",
                '"': '\\"', "\\": "\\\\"}


def diff_header_name(name: str) -> str:
    """``name`` as git writes it after ``---``/``+++``: as it is when plain, else in double quotes
    with C escapes (octal for the UTF-8 bytes of other controls, of the bidi and line separators
    and of undecodable bytes). A repository file name holding a newline must not start a line of
    its own (a GitHub workflow command), nor ESC reach the terminal; ``git apply`` reads it back."""
    if output.printable(name) == name and not any(c in _GIT_ESCAPES or "\ud800" <= c <= "\udfff" for c in name):
        return name
    out: list[str] = []
    for ch in name:
        if ch in _GIT_ESCAPES:
            out.append(_GIT_ESCAPES[ch])
        elif "\ud800" <= ch <= "\udfff" or output.printable(ch) != ch:
            out.append("".join(f"\\{b:03o}" for b in ch.encode("utf-8", "surrogateescape")))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


__all__ = ["collect_files", "diff_header_name", "run_check", "unified_diff"]
