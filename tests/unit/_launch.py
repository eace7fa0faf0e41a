"""Helpers shared by the unit tests that lint one small launch script or parse bare words."""
from __future__ import annotations

from pathlib import Path

from kimi_lsp.diagnostics import Diagnostic
from kimi_lsp.engine import Engine
from kimi_lsp.launch import Origin
from kimi_lsp.surfaces.model import Token
from kimi_lsp.text import Span
from kimi_lsp.workspace import Workspace


def lint_script(root: Path, release: str, script: str) -> list[Diagnostic]:
    """Lint ``run.sh`` holding ``script`` in a repository that pins ``sglang==release``."""
    (root / ".git").mkdir(exist_ok=True)
    (root / "requirements.txt").write_text(f"sglang=={release}\n")
    (root / "run.sh").write_text("#!/bin/sh\n" + script + "\n")
    eng = Engine(Workspace(root))
    diags = list(eng.lint_file(root / "run.sh").diagnostics)
    assert not eng.errors, eng.errors
    return diags


def cli_words(*argv: str) -> list[tuple[Token, Origin, None]]:
    """``argv`` as command-line tokens, one space apart, as the argparse replay takes them."""
    out, pos = [], 0
    for w in argv:
        out.append((Token(w, Span(pos, pos + len(w))), Origin.CLI, None))
        pos += len(w) + 1
    return out
