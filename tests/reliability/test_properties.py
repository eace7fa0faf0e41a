"""Property-based tests: no reader and no engine run raises, whatever the input.

Every launch surface (sglang ``--config`` YAML, YAML with embedded launches, TOML profiles,
shell, Dockerfiles) and every pin format (through ``pins.discovery.read_pin_file``) gets
arbitrary text and text built from fragments that steer it into each reader's corners. Inputs
reach the engine as editor overlays, so nothing is written to disk per example.

Properties:
- ``Engine.lint_file`` returns (never raises) and records no internal error (a rule that raises
  is caught by the engine, but it is still a bug);
- ``read_pin_file`` returns PinSources with spans inside the text, problems instead of exceptions;
- a launch file that does not parse becomes KL001 at the position the parser names: YAML at
  ``yaml.safe_load``'s mark, TOML at tomllib's line and column.
"""
from __future__ import annotations

import re
from kimi_lsp._toml import tomllib  # the standard library on 3.11+, tomli on 3.10
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kimi_lsp.pins import discovery
from kimi_lsp.workspace import SourceText, Workspace

from ._support import LAUNCH_NAMES, PIN_NAMES, fresh_engine, lint_text, make_repo

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

LAUNCH = [
    "python3 -m sglang.launch_server ", "sglang serve ", "--model-path moonshotai/Kimi-K3 ", "--tp-size 8 ",
    "--dcp-size 8 ", "--decode-attention-backend cutedsl_mla ", "--attention-backend ", "--config ", "conf.yaml ",
    "--tp ", "--dcp-size=", "8", "cutedsl_mla", "tokenspeed_mla", "--bogus-flag ", "--enable-dp-attention ",
]
SYNTAX = [
    "\n", "\r\n", "\r", "\t", " ", "  ", "#", "# kimi-lsp: ignore[KL101]", "# kimi-lsp: ignore-file", "'", '"', "\\",
    "\\\n", "$(", "${", "}", "`", ";", "&&", "|", "&", "(", ")", "<<EOF\n", "EOF\n", "é", "😀", "\x00", "\ufeff",
    "\u2028", "\x85", "\udcff"[:0],
]
YAML_BITS = [
    "---\n", "...\n", "- ", "? ", ": ", "{", "}", "[", "]", ",", "&a ", "*a", "!!str ", "!!python/object:os.system ",
    "<<: *a\n", "|\n  ", ">-\n  ", "model-path: ", "tp-size: ", "dcp-size: ", "decode-attention-backend: ",
    "apiVersion: v1\nkind: Pod\n", "services:\n  s:\n    command: ", "command: ", "args: ", "run: |\n  ",
    "env:\n  - name: X\n    value: ", "jobs:\n  a:\n    steps:\n      - ", "%YAML 1.1\n", "!<tag:x> ",
]
TOML_BITS = [
    "[sglang]\n", "[sglang.env]\n", "[[sglang]]\n", "tp-size = ", "model-path = ", '"x"', "'x'", '"""', "'''",
    "[1, ", "]", "{ a = 1 }", "sglang.tp = 1\n", "= ", "true", "1979-05-27", "0x1F", "inf", "nan", "[tool.kimi-lsp]\n",
]
DOCKER_BITS = [
    "FROM python:3.11 AS base\n", "RUN ", "CMD [", "ENTRYPOINT [\"python3\", \"-m\", \"sglang.launch_server\"", "]\n",
    "ENV X=1 ", "ARG V=0.6.17\n", "# escape=`\n", "# syntax=docker/dockerfile:1\n", "SHELL [\"/bin/bash\", \"-c\"]\n",
    "pip install flashinfer-python==${V} ", "uv pip install sglang==0.5.23 ", "\\\n", "`\n", "<<EOF\n", "EOF\n",
]
PIN_BITS = [
    "flashinfer-python==0.6.16.post4", "flashinfer_python>=0.6.10,<0.7", "sglang[all]==0.5.23", " ; python_version<'3.12'",
    " --hash=sha256:abc", "-r other.txt\n", "-c constraints.txt\n", "-e .\n", "git+https://x/y.git@v1#egg=z",
    "[[package]]\n", 'name = "flashinfer-python"\n', 'version = "0.6.17"\n', "[project]\n", "dependencies = [", "]\n",
    "[tool.uv]\n", "override-dependencies = [", "[tool.poetry.dependencies]\n", 'flashinfer-python = "^0.6.10"\n',
    "[packages]\n", '{"default": {"flashinfer-python": {"version": "==0.6.17"}}}', '{"_meta": {}, "default": {',
    "dependencies:\n  - pip:\n    - ", "package:\n  - name: flashinfer-python\n    version: 0.6.17\n    manager: pip\n",
    "lock-version = \"1.0\"\n", "[[packages]]\n", "\\\n", "#", "\n", "\r\n", "\x00", "é",
]


def fragments(*pools: list[str]) -> st.SearchStrategy[str]:
    pool = [f for p in pools for f in p]
    return st.one_of(
        st.lists(st.sampled_from(pool) | st.text(max_size=4), max_size=40).map("".join),
        st.text(max_size=120),
    )


YAML_TEXT = fragments(LAUNCH, SYNTAX, YAML_BITS)
TOML_TEXT = fragments(LAUNCH, SYNTAX, TOML_BITS)
SHELL_TEXT = fragments(LAUNCH, SYNTAX, ["#!/bin/bash\n", "export A=1\n", "pip install flashinfer-python==0.6.16 "])
DOCKER_TEXT = fragments(LAUNCH, SYNTAX, DOCKER_BITS)
PIN_TEXT = fragments(PIN_BITS, SYNTAX, TOML_BITS[:6], YAML_BITS[:12])


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_repo(tmp_path_factory.mktemp("props") / "repo")
    (root / "requirements.txt").write_text("sglang==0.5.23\nflashinfer-python==0.6.16.post4\n", "utf-8")
    (root / "conf.yaml").write_text("model-path: moonshotai/Kimi-K3\ndcp-size: 8\n", "utf-8")
    return root


@pytest.fixture(scope="module")
def engine(repo: Path):
    return fresh_engine(repo)


def _no_crash(engine, path: Path, text: str) -> None:
    before = len(engine.errors)
    result = lint_text(engine, path, text)
    n = len(text)
    for d in result.diagnostics:
        if d.path == path:
            assert 0 <= d.location.span.start <= d.location.span.end <= n, (d, text)
    new = engine.errors[before:]
    assert not new, f"internal error on {path.name} with {text!r}:\n" + "\n".join(new)


@SETTINGS
@given(YAML_TEXT, st.sampled_from([n for n in LAUNCH_NAMES if n.endswith((".yaml", ".yml"))]))
def test_yaml_surfaces_never_raise(engine, repo: Path, text: str, name: str) -> None:
    _no_crash(engine, repo / name, text)


@SETTINGS
@given(TOML_TEXT)
def test_toml_profile_never_raises(engine, repo: Path, text: str) -> None:
    _no_crash(engine, repo / "profile.toml", "[sglang]\n" + text)
    _no_crash(engine, repo / "profile.toml", text)


@SETTINGS
@given(SHELL_TEXT, st.sampled_from(["run.sh", "job.sbatch", "launch"]))
def test_shell_never_raises(engine, repo: Path, text: str, name: str) -> None:
    _no_crash(engine, repo / name, ("#!/bin/bash\n" if name == "launch" else "") + text)


@SETTINGS
@given(DOCKER_TEXT, st.sampled_from(["Dockerfile", "serve.dockerfile"]))
def test_dockerfile_never_raises(engine, repo: Path, text: str, name: str) -> None:
    _no_crash(engine, repo / name, text)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(PIN_TEXT, st.sampled_from(PIN_NAMES))
def test_pin_readers_never_raise(repo: Path, text: str, name: str) -> None:
    path = repo / "pins" / name
    ws = Workspace(repo, overlays={path: text})
    sources = discovery.read_pin_file(path, ws)
    assert sources, name
    for s in sources:
        src = ws.read(s.path)
        n = len(src.text) if isinstance(src, SourceText) else 0
        for pin in s.pins:
            assert 0 <= pin.span.start <= pin.span.end <= n, (pin, text)
            if pin.spec_span is not None:
                assert 0 <= pin.spec_span.start <= pin.spec_span.end <= n, (pin, text)
        for prob in s.problems:
            assert 0 <= prob.span.start <= prob.span.end <= max(n, 0), (prob, text)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(PIN_TEXT, st.sampled_from(PIN_NAMES))
def test_engine_survives_broken_pin_files(tmp_path_factory: pytest.TempPathFactory, text: str, name: str) -> None:
    """A launch governed by a broken pin file still lints (pins are read through discovery)."""
    root = make_repo(tmp_path_factory.mktemp("pinlaunch"))
    eng = fresh_engine(root)
    eng.workspace.set_overlay(root / name, text)
    (root / name).write_text("", "utf-8")  # discovery lists the directory; the overlay has the text
    launch = "model-path: moonshotai/Kimi-K3\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"
    _no_crash(eng, root / "k3.yaml", launch)


# -- unparsable launch files are KL001 at the parser's position --------------------------------

CONFIG_HEAD = "model-path: moonshotai/Kimi-K3\ntp-size: 8\n"
PLAIN_SYNTAX = [f for f in SYNTAX if "kimi-lsp" not in f]  # a suppression may rightly hide KL001
# without the root keys of other YAML kinds (a broken Kubernetes file that does not mention sglang
# is somebody else's file: rightly not reported)
CONFIG_BITS = [b for b in YAML_BITS if not re.search(r"apiVersion|services|command|args|run:|env:|jobs", b)]
BROKEN_YAML = st.lists(st.sampled_from(CONFIG_BITS + PLAIN_SYNTAX[:14] + ["x", "y: ", "8", "- a\n", "b: [\n"]), min_size=1, max_size=12).map("".join)


def _yaml_error_indexes(text: str) -> set[int]:
    """Where the parser says the text breaks: ``yaml.safe_load``'s mark (what sglang reports), and
    the first syntax error in the whole stream (a later document's, when safe_load stops first at
    "expected a single document"). Empty when the text parses or fails only in construction."""
    found: set[int] = set()
    for run in (lambda: yaml.load(text, Loader=yaml.SafeLoader), lambda: list(yaml.compose_all(text, Loader=yaml.SafeLoader))):
        try:
            run()
        except yaml.MarkedYAMLError as exc:
            if exc.problem_mark is not None and "constructor" not in type(exc).__module__:
                found.add(min(exc.problem_mark.index, len(text)))
        except (yaml.YAMLError, RecursionError):
            pass
    return found


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(BROKEN_YAML)
def test_broken_config_yaml_is_kl001_at_the_error(engine, repo: Path, tail: str) -> None:
    text = CONFIG_HEAD + tail
    indexes = _yaml_error_indexes(text)
    if not indexes or not re.fullmatch(r"[^\x00-\x08\x0b\x0c\x0e-\x1f\ufeff\ud800-\udfff]*", text):
        return  # parses (or fails in the reader, not the parser): not this property
    # The file is an sglang --config because a launch names it (its keys alone may not prove it
    # once the broken tail adds a key that is no option): KL001 comes through that launch.
    path = repo / "k3.yaml"
    engine.workspace.set_overlay(path, text)
    engine.invalidate(path)
    try:
        result = lint_text(engine, repo / "serve-k3.sh", "python -m sglang.launch_server --config k3.yaml\n")
    finally:
        engine.workspace.drop_overlay(path)
    kl001 = [d for d in result.diagnostics if d.code == "KL001" and d.path == path]
    assert kl001, (text, [(d.code, d.message) for d in result.diagnostics])
    starts = {d.location.span.start for d in kl001}
    assert indexes & starts, (text, indexes, [(d.location.span, d.message) for d in kl001])


BROKEN_TOML = st.lists(st.sampled_from(TOML_BITS + ["x", " ", "\n", "=", '"', "[", "]", "1"]), min_size=1, max_size=10).map("".join)


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(BROKEN_TOML)
def test_broken_toml_profile_is_kl001_at_the_error(engine, repo: Path, tail: str) -> None:
    text = "[sglang]\nmodel-path = \"moonshotai/Kimi-K3\"\n" + tail
    try:
        tomllib.loads(text)
        return
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
    path = repo / "profile.toml"
    result = lint_text(engine, path, text)
    kl001 = [d for d in result.diagnostics if d.code == "KL001" and d.path == path]
    assert kl001, (text, [(d.code, d.message) for d in result.diagnostics])
    if m is None:
        return  # "at end of document": the end of the text
    line, col = int(m.group(1)) - 1, int(m.group(2)) - 1
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    want = min(len(text), starts[line] + col)
    assert want in {d.location.span.start for d in kl001}, (text, want, [d.location.span for d in kl001])
