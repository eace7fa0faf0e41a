"""Rules ask for a ServerArgs field (`tp_size`); up to 0.5.13 argparse stores `--tp-size` as
`tensor_parallel_size` (likewise dp, pp, ep) and `from_cli_args` copies it over. The launch answers
by either name on every release, so cross-argument rules (KL310, KL311) are not silent there."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.knowledge.schema import load_schema_exact, shipped_versions
from kimi_lsp.launch import resolve
from kimi_lsp.rules import _args
from kimi_lsp.surfaces.model import Entry, LaunchCommand, Located, Surface, Token
from kimi_lsp.text import Span


def _launch(version: str, *argv: str):  # -> ResolvedLaunch
    schema = load_schema_exact(version)
    assert schema is not None
    toks, pos = [], 0
    for w in argv:
        toks.append(Token(w, Span(pos, pos + len(w))))
        pos += len(w) + 1
    cmd = LaunchCommand(Path("/p/run.sh"), Surface.SHELL, Entry.LAUNCH_SERVER,
                        Located("python -m sglang.launch_server", Span(0, 0)), tuple(toks), Span(0, 0), Path("/p"))
    return resolve(cmd, schema, None)


def test_some_release_stores_the_sizes_under_argparse_names() -> None:
    old = load_schema_exact("0.4.10.post1")
    assert old is not None and old.by_dest("tp_size") is None and old.by_dest("tensor_parallel_size") is not None


@pytest.mark.parametrize("version", ["0.4.0", "0.4.10.post1", "0.5.13", "0.5.14", shipped_versions()[-1]])
def test_the_fields_are_read_by_their_servers_args_names(version: str) -> None:
    launch = _launch(version, "--model-path", "m", "--tp-size", "4", "--dp-size", "2")
    assert launch.value("tp_size") == "4" and launch.value("dp_size") == "2"
    assert _args.int_value(launch, "tp_size") == 4
    unset = _launch(version, "--model-path", "m")
    assert _args.int_value(unset, "tp_size") == 1 and _args.int_value(unset, "dp_size") == 1  # the defaults
