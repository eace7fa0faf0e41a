"""The argparse-free reading of ``--check``'s options agrees with argparse wherever it answers."""
from __future__ import annotations

import contextlib
import io
import random
from types import SimpleNamespace

from kimi_lsp.cli.main import _check_parser, _plain_check_args

WORDS = (
    "--check", "a.yaml", "b.yaml", "", "-", "--", "--format", "json", "text", "xml", "--format=sarif", "--format=",
    "--no-cache", "--no-cach", "-q", "--quiet", "-j", "2", "-1", "x", "--jobs=3", "-j2", "--select", "KL1,KL2",
    "--select=KL101", "--ignore", "--fix", "--diff", "--unsafe-fixes", "--exit-zero", "--statistics",
    "--sglang-version", "0.5.23", "--target-gpu", "h200", "--help", "-h", "--version", "--check=1", "-qj",
    "--stdin-filename", "--stdin-filename=k3.yaml",
)


def _argparse(argv: list[str]) -> SimpleNamespace | None:
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return SimpleNamespace(**vars(_check_parser().parse_args(argv)))
        except SystemExit:
            return None


def test_plain_reading_agrees_with_argparse() -> None:
    rng = random.Random(16)
    answered = 0
    for _ in range(4000):
        argv = [rng.choice(WORDS) for _ in range(rng.randrange(0, 7))]
        plain = _plain_check_args(argv)
        if plain is None:
            continue  # argparse reads it (help, errors, prefixes, ...)
        answered += 1
        assert plain == _argparse(argv), argv
    assert answered > 500  # the common case is really taken without argparse


def test_common_pre_commit_lines_need_no_argparse() -> None:
    for argv in (["--check", "a.yaml", "b.yaml"], ["--check", "--no-cache", "-q", "a.yaml"],
                 ["--check", "--format", "json", "a.yaml"], ["--check", "-j", "1", "."]):
        assert _plain_check_args(argv) == _argparse(argv)
