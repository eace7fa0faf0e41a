"""After the word argparse exits at (an ambiguous option, a missing or an explicit value), the rest
of the launch is still checked (issue 30): what sglang reports first is argparse's own choice, held
here against the running interpreter's argparse (sglang runs on 3.10-3.12; up to 3.12.7 and 3.13.0
argparse raises an ambiguity while it classifies the words, from 3.12.8 and 3.13.1 as it consumes
them: CPython gh-58573); the cross-argument rules read the launch without the word, unless they
ask for an option the word may set."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

from kimi_lsp.engine import Engine
from kimi_lsp.knowledge.schema import load_schema_exact
from kimi_lsp.launch import ArgProblemKind, Origin, parse_words
from kimi_lsp.rules._base import unsettled_dests
from kimi_lsp.rules.kl203_invalid_value_type import _first_exit
from kimi_lsp.surfaces.model import Token
from kimi_lsp.text import Span
from kimi_lsp.workspace import Workspace
from tests.unit._launch import cli_words, lint_script

RELEASE = "0.5.23"  # the release whose options these lines are written against (`--cuda-graph-bs` is ambiguous there)


class _Exit(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]  # raise instead of exiting
        raise _Exit(message)


def _argparse_error(argv: list[str]) -> str:
    """The error real argparse prints for ``argv`` on a parser with the options these lines use,
    spelled as sglang 0.5.23 registers them (allow_abbrev on, as in sglang)."""
    p = _Parser()
    p.add_argument("--model-path", "--model")
    p.add_argument("--tp-size", "--tensor-parallel-size", type=int)
    p.add_argument("--cuda-graph-bs-decode", type=int, nargs="+")
    p.add_argument("--cuda-graph-bs-prefill", type=int, nargs="+")
    p.add_argument("--enable-metrics", action="store_true")
    p.add_argument("--load-balance-method", choices=["auto", "round_robin"])
    try:
        p.parse_args(argv)
    except _Exit as e:
        return str(e)
    return ""


# argparse raises an ambiguity as it consumes the option (not while classifying) from here on
_AMBIGUITY_AT_CONSUME = sys.version_info >= ((3, 13, 1) if sys.version_info >= (3, 13) else (3, 12, 8))

TWO_PROBLEMS = [
    # (argv, the word sglang names up to 3.12.7, the word it names from 3.12.8 / 3.13.1)
    (["--tp-size", "--cuda-graph-bs", "4"], "--cuda-graph-bs", "--tp-size"),  # missing value, then ambiguous
    (["--enable-metrics=1", "--cuda-graph-bs", "4"], "--cuda-graph-bs", "--enable-metrics"),  # explicit value, then ambiguous
    (["--load-balance-method", "x", "--cuda-graph-bs", "4"], "--cuda-graph-bs", "--load-balance-method"),  # invalid choice, then ambiguous
    (["--cuda-graph-bs", "4", "--tp-size"], "--cuda-graph-bs", "--cuda-graph-bs"),  # ambiguous, then missing value
    (["--tp-size", "--enable-metrics=1"], "--tp-size", "--tp-size"),  # missing value, then explicit value
    (["--enable-metrics=1", "--tp-size"], "--enable-metrics", "--enable-metrics"),  # explicit value, then missing value
]


@pytest.mark.parametrize("argv, named, named_later", TWO_PROBLEMS)
def test_what_sglang_reports_first_is_what_argparse_prints(argv: list[str], named: str, named_later: str) -> None:
    printed = _argparse_error(["--model-path", "m", *argv])
    # the claim, against the interpreter's own argparse
    assert (named_later if _AMBIGUITY_AT_CONSUME else named) in printed, printed
    schema = load_schema_exact(RELEASE)
    assert schema is not None
    _, problems = parse_words(schema, cli_words("--model-path", "m", *argv))
    first = _first_exit(tuple(problems))  # what sglang's images (Python up to 3.12.7) print
    assert first is not None and first.token.value.split("=", 1)[0] == named
    if not _AMBIGUITY_AT_CONSUME:
        assert (first.kind is ArgProblemKind.AMBIGUOUS) == printed.startswith("ambiguous option")


def test_reading_goes_on_past_a_missing_and_an_explicit_value() -> None:
    schema = load_schema_exact(RELEASE)
    assert schema is not None
    uses, problems = parse_words(schema, cli_words("--tp-size", "--dp-size", "2", "--enable-metrics=1", "--frobnicate",
                                                "--port", "1"))
    assert [p.kind for p in problems] == [ArgProblemKind.MISSING_VALUE, ArgProblemKind.EXPLICIT_VALUE,
                                          ArgProblemKind.UNKNOWN]
    assert [u.flag.dest for u in uses] == ["dp_size", "port"]
    # too few values: they go with the option argparse exits at, never as stray arguments
    _, problems = parse_words(schema, cli_words("--tp-size", "--cuda-graph-bs-decode"))
    assert [p.kind for p in problems] == [ArgProblemKind.MISSING_VALUE, ArgProblemKind.MISSING_VALUE]


def test_unsettled_options_are_every_expansion_and_the_option_without_its_value() -> None:
    from kimi_lsp.launch import resolve
    from kimi_lsp.surfaces.model import Entry, LaunchCommand, Located, Surface

    schema = load_schema_exact(RELEASE)
    assert schema is not None

    def unsettled(*argv: str) -> frozenset[str] | None:
        toks = tuple(w[0] for w in cli_words(*argv))
        cmd = LaunchCommand(Path("/p/run.sh"), Surface.SHELL, Entry.LAUNCH_SERVER,
                            Located("python -m sglang.launch_server", Span(0, 0)), toks, Span(0, 0), Path("/p"))
        return unsettled_dests(resolve(cmd, schema, None))

    assert unsettled("--model-path", "m", "--tp-size", "2") is None
    assert unsettled("--cuda-graph-bs", "4") == {"cuda_graph_bs_decode", "cuda_graph_bs_prefill"}
    assert unsettled("--dp-size") == {"dp_size"}
    assert unsettled("--enable-metrics=yes") == {"enable_metrics"}


def _lint(tmp_path: Path, line: str) -> list:
    return lint_script(tmp_path, RELEASE, "python -m sglang.launch_server --model-path m " + line)


def test_a_later_error_says_what_sglang_reports_first(tmp_path: Path) -> None:
    diags = _lint(tmp_path, "--tp-size --cuda-graph-bs 4 --enable-metrics=1")
    by_code = {d.code: d.message for d in diags}
    assert "sglang reports" not in by_code["KL201"]  # the ambiguous option is what sglang prints
    missing, explicit = sorted((d for d in diags if d.code == "KL203"), key=lambda d: d.location.span.start)
    assert "(sglang reports the ambiguous `--cuda-graph-bs` first, on Python up to 3.12.7)" in missing.message
    assert "(sglang reports the ambiguous `--cuda-graph-bs` first, on Python up to 3.12.7)" in explicit.message
    (d,) = [d for d in _lint(tmp_path, "--tp-size --enable-metrics=1") if "first)" in d.message]
    assert "`--enable-metrics`" in d.message and "(sglang stops at `--tp-size` first)" in d.message


MULTI_NODE_DP = "--tp-size 16 --dp-size 2 --nnodes 2 --node-rank 0"


@pytest.mark.parametrize("word, reported", [
    ("--cuda-graph-bs 4", True),  # sets a CUDA-graph option: KL311 reads none of them
    ("--enable-dp", False),  # may be --enable-dp-attention, which decides KL311
    ("--enable-metrics=1", True),
    ("--enable-dp-attention=1", False),
])
def test_a_cross_argument_rule_reads_the_launch_without_the_word(tmp_path: Path, word: str, reported: bool) -> None:
    codes = [d.code for d in _lint(tmp_path, f"{word} {MULTI_NODE_DP}")]
    assert ("KL311" in codes) is reported, codes
    assert codes.count("KL311") <= 1


def test_a_missing_value_last_leaves_only_its_own_option_open(tmp_path: Path) -> None:
    assert "KL311" in [d.code for d in _lint(tmp_path, "--dp-size 2 --nnodes 2 --node-rank 0 --tp-size")]
    assert "KL311" not in [d.code for d in _lint(tmp_path, "--tp-size 16 --nnodes 2 --node-rank 0 --dp-size")]


def test_a_missing_model_path_is_said_after_the_word_unless_the_word_may_be_it(tmp_path: Path) -> None:
    def codes(argv: str) -> list[str]:
        (tmp_path / ".git").mkdir(exist_ok=True)
        (tmp_path / "requirements.txt").write_text(f"sglang=={RELEASE}\n")
        (tmp_path / "run.sh").write_text(f"#!/bin/sh\npython -m sglang.launch_server {argv}\n")
        return sorted(d.code for d in Engine(Workspace(tmp_path)).lint_file(tmp_path / "run.sh").diagnostics)

    assert codes("--cuda-graph-bs 4 --tp-size 2") == ["KL201", "KL216"]
    assert codes("--tp-size --port 3000") == ["KL203", "KL216"]
    assert codes("--mod Qwen/Qwen3-8B --tp-size 2") == ["KL201"]  # `--mod` may be --model-path
    assert codes("--tp-size 2 --model-path") == ["KL203"]
