"""A did-you-mean is a claim too: offered only when the word is a misspelling of the option, never
for a word far from every option (issue 29: 8 of 9 hints were wrong on real repositories)."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.engine import Engine
from kimi_lsp.rules._args import worth_a_hint
from kimi_lsp.workspace import Workspace


@pytest.mark.parametrize(("word", "guess", "offered"), [
    ("--mem-fration-static", "--mem-fraction-static", True),
    ("--tp-sise", "--tp-size", True),
    ("--attention-backnd", "--attention-backend", True),
    ("--kv-offload-tier", "--ple-offload-dir", False),
    ("--cuda-graph-tc-compiler", "--cuda-graph-config", False),
    ("--frobnicate", "--enable-nccl-nvls", False),
    ("--x", None, False),
])
def test_worth_a_hint(word: str, guess: str | None, offered: bool) -> None:
    assert worth_a_hint(word, guess) is offered


def test_a_far_word_gets_no_hint_and_no_fix(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("sglang==0.5.23\n")
    (tmp_path / "s.sh").write_text("python -m sglang.launch_server --model-path m --kv-offload-tier nvme --tp-sise 2\n")
    diags = Engine(Workspace(tmp_path, stable=True)).lint_file(tmp_path / "s.sh").diagnostics
    far, near = sorted((d for d in diags if d.code == "KL201"), key=lambda d: d.location.span.start)
    assert "did you mean" not in far.message and far.fixes == ()
    assert "did you mean `--tp-size`?" in near.message and near.fixes
