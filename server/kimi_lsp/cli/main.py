"""``kimi-lsp`` command line: ``--check`` (lint), ``serve`` (LSP), ``verify``, ``rules``, ``explain``, ``export``.

Start-up time matters in pre-commit: nothing here imports pygls, lsprotocol or torch unless the
subcommand needs it.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from kimi_lsp import __version__

SUBCOMMANDS = ("serve", "verify", "rules", "explain", "export", "check")

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _check_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kimi-lsp",
        description="Catch sglang launch failures (Kimi-K3 DCP vs old flashinfer pins, bad flags) before launch.",
        epilog="Subcommands: serve, verify, rules, explain CODE, export. `kimi-lsp` alone runs the language server on stdio.",
    )
    p.add_argument("--version", action="version", version=f"kimi-lsp {__version__}")
    p.add_argument("--check", action="store_true", help="lint PATHs (files or directories; default: .)")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories; a pin file means the launches it governs")
    p.add_argument("--format", choices=("text", "json", "sarif", "github"), default=None, help="output format (default: text; github under GitHub Actions)")
    p.add_argument("--fix", action="store_true", help="apply safe fixes")
    p.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes (with --fix or --diff)")
    p.add_argument("--diff", action="store_true", help="print the fixes as a unified diff instead of writing them")
    p.add_argument("--select", default=None, help="comma-separated codes or prefixes to report")
    p.add_argument("--ignore", default=None, help="comma-separated codes or prefixes to ignore")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when errors are found")
    p.add_argument("--statistics", action="store_true", help="print counts per rule")
    p.add_argument("-q", "--quiet", action="store_true", help="only the diagnostic lines")
    p.add_argument("--sglang-version", default=None, help="sglang release whose argument schema applies")
    p.add_argument("--target-gpu", default=None, help="GPU the launches run on (e.g. b200, h200, sm90)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache (~/.cache/kimi-lsp)")
    p.add_argument("--jobs", "-j", type=int, default=None, help="worker processes for large trees (default: automatic)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
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
    if head == "check":
        args = ["--check", *args[1:]]
    parser = _check_parser()
    try:
        ns = parser.parse_args(args)
    except SystemExit as exc:
        return int(exc.code or 0) if exc.code in (0, None) else EXIT_ERROR
    if not ns.check:
        parser.print_usage(sys.stderr)
        print("kimi-lsp: error: nothing to do; use --check [PATH ...], serve, verify, rules or explain", file=sys.stderr)
        return EXIT_ERROR
    from kimi_lsp.cli.check import run_check

    try:
        return run_check(ns)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


def _serve(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="kimi-lsp serve", description="Run the kimi-lsp language server.")
    p.add_argument("--stdio", action="store_true", help="use stdio (default)")
    p.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=2087)
    p.add_argument("--log-level", default=os.environ.get("KIMI_LSP_LOG", "WARNING"))
    ns = p.parse_args(argv)
    from kimi_lsp.lsp.server import run

    return run(tcp=ns.tcp, host=ns.host, port=ns.port, log_level=ns.log_level)


def entry() -> None:
    raise SystemExit(main())
