"""``kimi-lsp`` command line: ``--check`` (lint), ``serve`` (LSP), ``verify``, ``rules``, ``explain``, ``export``.

Start-up time matters in pre-commit: nothing here imports pygls, lsprotocol or torch unless the
subcommand needs it.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from types import SimpleNamespace

from kimi_lsp import __version__, _short_command

TYPE_CHECKING = False  # typing itself is not imported: see _record.py
if TYPE_CHECKING:
    import argparse

# argparse is imported only where it is used: the common `--check FILE ...` is read without it.

SUBCOMMANDS = ("serve", "verify", "rules", "explain", "export", "check", "launches", "why")

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


# --check's options, described once: ``_check_parser`` builds argparse from this table and
# ``_plain_check_args`` reads the common case with it. (flags, dest, kind, metavar/choices, help)
_FLAG, _TEXT, _INT = "flag", "text", "int"
FORMATS = ("text", "json", "sarif", "github")
CHECK_OPTIONS: tuple[tuple[tuple[str, ...], str, str, tuple[str, ...] | None, str], ...] = (
    (("--check",), "check", _FLAG, None, "lint PATHs (files or directories; default: .)"),
    (("--format",), "format", _TEXT, FORMATS, "output format (default: text; github under GitHub Actions)"),
    (("--fix",), "fix", _FLAG, None, "apply safe fixes"),
    (("--unsafe-fixes",), "unsafe_fixes", _FLAG, None, "also apply unsafe fixes (with --fix or --diff)"),
    (("--diff",), "diff", _FLAG, None, "print the fixes as a unified diff instead of writing them"),
    (("--select",), "select", _TEXT, None, "comma-separated codes or prefixes to report"),
    (("--ignore",), "ignore", _TEXT, None, "comma-separated codes or prefixes to ignore"),
    (("--exit-zero",), "exit_zero", _FLAG, None, "exit 0 even when errors are found"),
    (("--statistics",), "statistics", _FLAG, None, "print counts per rule"),
    (("-q", "--quiet"), "quiet", _FLAG, None, "only the diagnostic lines"),
    (("--sglang-version",), "sglang_version", _TEXT, None, "sglang release whose argument schema applies"),
    (("--target-gpu",), "target_gpu", _TEXT, None, "GPU the launches run on (e.g. b200, h200, sm90)"),
    (("--no-cache",), "no_cache", _FLAG, None, "neither read nor write the result cache (~/.cache/kimi-lsp)"),
    (("--jobs", "-j"), "jobs", _INT, None, "worker processes for large trees (default: automatic)"),
    (("--stdin-filename",), "stdin_filename", _TEXT, None,
     "lint the text on stdin (PATH -) as if it were this file: its pins and settings are found from there"),
)


def _check_parser() -> argparse.ArgumentParser:
    from kimi_lsp.cli.usage import Parser

    p = Parser(
        prog="kimi-lsp",
        description="Catch sglang launch failures (Kimi-K3 DCP vs old flashinfer pins, bad flags) before launch.",
        epilog="Subcommands: serve, verify, rules, explain CODE, export, launches, why FILE[:LINE]. `kimi-lsp` alone, its stdin a pipe, runs the language server on stdio.",
    )
    p.add_argument("--version", action="version", version=f"kimi-lsp {__version__}")
    for flags, dest, kind, choices, doc in CHECK_OPTIONS:
        if kind == _FLAG:
            p.add_argument(*flags, dest=dest, action="store_true", help=doc)
        elif kind == _INT:
            p.add_argument(*flags, dest=dest, type=int, default=None, help=doc)
        else:
            p.add_argument(*flags, dest=dest, choices=choices, default=None, help=doc)
        if dest == "check":  # the positional sits after --check in the help, as it always has
            p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories; a pin file means the launches it governs")
    return p


def _plain_check_args(args: list[str]) -> SimpleNamespace | None:
    """The options argparse would make of ``args`` when they are plain: exact option names,
    valid values, the PATHs in one run. None for anything else (help, --version, a prefix of an
    option, a bad value, a PATH starting with ``-``, ...), which argparse then reads, errors and
    all. Importing argparse (with gettext, locale and shutil) and building the parser cost
    about 8 ms, a quarter of a result-cache hit (tests/unit/test_check_args.py compares the two
    readings)."""
    by_flag = {f: (dest, kind, choices) for flags, dest, kind, choices, _doc in CHECK_OPTIONS for f in flags}
    values: dict[str, object] = {dest: (False if kind == _FLAG else None) for _f, dest, kind, _c, _d in CHECK_OPTIONS}
    paths: list[str] = []
    paths_ended = False  # argparse takes one run of PATHs; a second run is "unrecognized arguments"
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-"):
            if paths_ended:
                return None
            paths.append(arg)
            continue
        if paths:
            paths_ended = True
        name, eq, attached = arg.partition("=")
        known = by_flag.get(name)
        if known is None or (eq and not name.startswith("--")):
            return None
        dest, kind, choices = known
        if kind == _FLAG:
            if eq:
                return None
            values[dest] = True
            continue
        if not eq:
            if i >= len(args) or args[i].startswith("-"):
                return None
            attached = args[i]
            i += 1
        if choices is not None and attached not in choices:
            return None
        if kind == _INT:
            try:
                values[dest] = int(attached)
            except ValueError:
                return None
        else:
            values[dest] = attached
    return SimpleNamespace(paths=paths, **values)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("serve", "verify"):
        return _main(args)  # stdout is the protocol's (serve) or the GPU stages' own
    if sys.stdout is None:  # closed at start-up: print() would drop every line silently
        print("kimi-lsp: error: stdout is closed; the report has nowhere to go", file=sys.stderr)
        return EXIT_ERROR
    try:
        code = _main(args)
        if sys.stdout is not None:
            sys.stdout.flush()  # here, so that a failure is this function's to report
        return code
    except OSError as exc:
        # only stdout's failures reach here (``--check`` handles its own): `kimi-lsp rules | head`
        import errno

        if exc.errno not in (errno.EPIPE, errno.ENOSPC, errno.EDQUOT):
            raise
        from kimi_lsp.cli.check import report_failed

        return report_failed(exc, EXIT_ERROR)


def _main(args: list[str]) -> int:
    if not args:
        if _stdin_is_a_terminal():
            # someone typed `kimi-lsp`: a language server waiting silently for LSP on the
            # keyboard helps no one (editors start it with pipes, which still serve)
            _check_parser().print_help()
            print("\nkimi-lsp: stdin is a terminal, so the language server was not started "
                  "(editors start it with pipes; `kimi-lsp serve` starts it here anyway)", file=sys.stderr)
            return EXIT_ERROR
        return _serve([])
    head = args[0]
    if head == "serve":
        return _serve(args[1:])
    if head == "verify":
        from kimi_lsp.verify.cli import main as verify_main

        return verify_main(args[1:])
    if head == "rules":
        from kimi_lsp.cli.commands import rules_cmd

        return rules_cmd(args[1:])
    if head == "explain":
        from kimi_lsp.cli.commands import explain_cmd

        return explain_cmd(args[1:])
    if head == "export":
        from kimi_lsp.cli.commands import export_cmd

        return export_cmd(args[1:])
    if head == "launches":
        from kimi_lsp.cli.launches import launches_cmd

        return launches_cmd(args[1:])
    if head == "why":
        from kimi_lsp.cli.launches import why_cmd

        return why_cmd(args[1:])
    if head == "check":
        args = ["--check", *args[1:]]
    ns = _plain_check_args(args)
    if ns is None or not ns.check:
        parser = _check_parser()
        try:
            ns = SimpleNamespace(**vars(parser.parse_args(args)))
        except SystemExit as exc:
            return int(exc.code or 0) if exc.code in (0, None) else EXIT_ERROR
    if not ns.check:
        parser.print_usage(sys.stderr)
        print(f"kimi-lsp: error: nothing to do; use --check [PATH ...], serve, verify, rules or explain{_command_hint(ns.paths)}",
              file=sys.stderr)
        return EXIT_ERROR
    from kimi_lsp.cli.check import run_check

    try:
        return run_check(ns)
    except KeyboardInterrupt:
        return 130


def _stdin_is_a_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):
        return False


def _command_hint(paths: list[str]) -> str:
    """`` (did you mean `kimi-lsp serve`?)`` when the first word is close to a subcommand."""
    if not paths:
        return ""
    from kimi_lsp.cli.usage import closest

    match = closest(paths[0], SUBCOMMANDS)
    return f" (did you mean `kimi-lsp {match}`?)" if match is not None else ""


def _serve(argv: list[str]) -> int:
    if not argv or argv == ["--stdio"]:  # what editors run: no argparse (~6 ms of start-up)
        return _run_server(log_level=os.environ.get("KIMI_LSP_LOG", "WARNING"))
    from kimi_lsp.cli.usage import Parser

    p = Parser(
        prog="kimi-lsp serve",
        description="Run the kimi-lsp language server (what an editor starts; stdio unless --tcp).",
    )
    p.add_argument("--stdio", action="store_true", help="speak LSP over stdin/stdout (the default)")
    p.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on with --tcp (default: %(default)s)")
    p.add_argument("--port", type=int, default=2087, help="port to listen on with --tcp (default: %(default)s)")
    p.add_argument("--log-level", type=str.upper, choices=LOG_LEVELS, metavar="LEVEL",
                   default=os.environ.get("KIMI_LSP_LOG", "WARNING").upper(),
                   help=f"what goes to stderr: {', '.join(LOG_LEVELS)} (default: %(default)s, from KIMI_LSP_LOG when set)")
    try:
        ns = p.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if exc.code in (0, None) else EXIT_ERROR
    return _run_server(tcp=ns.tcp, host=ns.host, port=ns.port, log_level=ns.log_level)


def _run_server(*, tcp: bool = False, host: str = "127.0.0.1", port: int = 2087, log_level: str) -> int:
    import gc

    gc.disable()  # while the server imports; lsp.server.run freezes what it imported, then enables
    if tcp:
        _quiet_clean_tcp_exit()
    else:
        _exit_on_interrupt()
    from kimi_lsp.lsp.server import run

    return run(tcp=tcp, host=host, port=port, log_level=log_level)


def _exit_on_interrupt() -> None:
    """Ctrl-C ends a stdio server at once, with status 130. Left to pygls, KeyboardInterrupt is
    caught and the server then waits for its reader thread, which is blocked reading stdin: a
    first Ctrl-C did nothing and a second aborted Python at shutdown (status 134)."""
    import signal

    def interrupted(_signum: int, _frame: object) -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(130)

    signal.signal(signal.SIGINT, interrupted)


def _quiet_clean_tcp_exit() -> None:
    """A TCP server ends on the client's ``exit`` by pygls raising SystemExit inside asyncio's
    connection callback, which asyncio logs, traceback and all, as an unhandled exception. That
    is the clean way out, not an error: leave it out of the log (other errors still show)."""
    import logging

    def not_a_clean_exit(record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], SystemExit) and not record.exc_info[1].code)

    logging.getLogger("asyncio").addFilter(not_a_clean_exit)


def entry() -> None:
    """The console script. The language server and ``verify`` (torch, CUDA) exit the usual way;
    the short commands (``--check``, ``rules``, ``explain``, ``export``) run with no garbage
    collection while importing, which allocates much and frees nothing (a check brings
    collections back for its lint when it has more than one file, ``run_check``), and ``_leave``."""
    if not _short_command(sys.argv[1:]):
        raise SystemExit(main())
    import gc

    gc.disable()
    from kimi_lsp import _imports

    _imports.use_direct_imports()
    from kimi_lsp import batch

    batch.KEEP_TO_EXIT = True  # _leave: nothing is torn down
    _leave(main())


def _leave(code: int) -> None:
    """Exit with ``code`` without tearing the interpreter down.

    Interpreter finalization frees every module, function and record one by one and runs a
    last full collection: ~12 M instructions (~2.5 ms), 6 % of a one-file check, for memory the
    system takes back anyway. So: run the ``atexit`` handlers (the kept entries are saved
    there, and coverage's are), flush stdout and stderr, and ``os._exit``. Whenever that is not
    certainly equivalent, exit the usual way instead: a thread other than the main one still
    runs (finalization would wait for it), this Python has no ``atexit._run_exitfuncs``, or a
    flush fails (a closed pipe: CPython's own exit reports it and sets status 120)."""
    import atexit

    threading = sys.modules.get("threading")
    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
    if run_exitfuncs is None or (threading is not None and threading.active_count() > 1):
        raise SystemExit(code)
    run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None
    os._exit(code)
