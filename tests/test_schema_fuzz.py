"""The argument-schema rules (KL2xx) against the whole schema of every shipped sglang release.

Every flag of each release is given a valid value (each choice; otherwise a value of its type:
int, float, human-readable int, JSON, JSON list, plain string; nargs honoured; a flag without a
value alone) twice: on a `python -m sglang.launch_server --model-path m ...` command line and as
a `--config` YAML entry. sglang accepts all of them, so the KL2xx rules must stay silent, except
where sglang itself warns or refuses, and there exactly the expected code must appear:

- a deprecated flag or value: KL204 (sglang warns and renames);
- a key the config merger refuses (`--x/--no-x` flags, deprecated actions, lora-paths): KL206;
- a boolean flag under a key the release's merger does not know as boolean (0.5.21/0.5.22 read
  only the field name, so `enable-hicache: true` becomes `--enable-hicache true`): KL209.

Launches are built directly (LaunchCommand / ConfigFile with exact spans over generated text)
and checked through `resolve()` and the rules, so the test needs no surface reader and runs in
a few seconds.
"""
from __future__ import annotations

import json
import shlex
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kimi_lsp.config import Settings
from kimi_lsp.knowledge.schema import Flag, Schema, _version_key, check_value, load_schema, shipped_versions
from kimi_lsp.launch import resolve
from kimi_lsp.rules import LAUNCH_RULES
from kimi_lsp.rules._base import LaunchContext
from kimi_lsp.surfaces.model import ConfigEntry, ConfigFile, Entry, LaunchCommand, Surface, Token
from kimi_lsp.text import Located, Span
from kimi_lsp.workspace import SourceText, Workspace

SCHEMA_RULES = tuple(r for r in LAUNCH_RULES if r.code.startswith("KL2"))
ROOT = Path("/kimi-lsp-fuzz").resolve()
PROGRAM = "python -m sglang.launch_server"

# one valid value per argparse type (choices are enumerated instead)
SAMPLES: dict[str | None, tuple[str, Any]] = {
    # type: (command-line word, YAML value)
    None: ("value", "value"),
    "str": ("value", "value"),
    "int": ("8", 8),
    "float": ("0.5", 0.5),
    "human_readable_int": ("128k", "128k"),
    "json": ('{"a": 1}', {"a": 1}),
    "json_list": ('["a", 1]', '["a", 1]'),  # a YAML list would become several words
    "nullable_str": ("value", "value"),
    "cuda_graph_config": ('{"decode": {}}', {"decode": {}}),
}


@dataclass(frozen=True)
class Case:
    flag: Flag
    option: str  # the spelling used (a long option)
    words: tuple[str, ...]  # command-line values
    yaml_value: Any  # the YAML value (None: the flag takes no value -> `true`)
    label: str


def _count(flag: Flag) -> int:
    lo, hi = flag.arity
    if hi is None:
        return max(lo, 2)
    return max(lo, 1) if hi else 0


def cases(schema: Schema) -> list[Case]:
    out: list[Case] = []
    for flag in schema.flags:
        if flag.action == "help" or flag.dest == "config":
            continue
        n = _count(flag)
        for option in flag.long_options:
            if n == 0:
                out.append(Case(flag, option, (), None, option))
                continue
            if flag.choices is not None:
                for choice in flag.choices:
                    words = (str(choice),) * n
                    yaml_value = choice if n == 1 else [choice] * n
                    out.append(Case(flag, option, words, yaml_value, f"{option} {choice}"))
                continue
            word, yaml_value = SAMPLES.get(flag.type, SAMPLES[None])
            assert check_value(flag, word) is None, (option, word)
            if n > 1:
                out.append(Case(flag, option, (word,) * n, [yaml_value] * n, option))
            else:
                out.append(Case(flag, option, (word,), yaml_value, option))
    return out


# -- expectations --------------------------------------------------------------------------


def _deprecated(schema: Schema, case: Case) -> bool:
    flag = case.flag
    if flag.deprecated:
        return True
    if not flag.takes_value and flag.dest in schema.deprecated_flags:
        return True
    renames = schema.deprecated_values.get(flag.dest, {})
    return any(w in renames for w in case.words)


def expected_cli(schema: Schema, case: Case) -> set[str]:
    return {"KL204"} if _deprecated(schema, case) else set()


def expected_yaml(schema: Schema, case: Case) -> set[str]:
    key = case.option[2:]
    merger = schema.config_key(key)
    if merger is not None and merger.config_refused:
        return {"KL206"}
    if not case.flag.takes_value and key.replace("-", "_") not in schema.config_store_true_keys:
        return {"KL209"}
    return {"KL204"} if _deprecated(schema, case) else set()


# -- building launches ---------------------------------------------------------------------


def cli_launch(case: Case) -> tuple[LaunchCommand, str]:
    words = ["--model-path", "m", case.option, *case.words]
    text = PROGRAM
    argv: list[Token] = []
    for w in words:
        raw = shlex.quote(w)
        start = len(text) + 1
        text += " " + raw
        argv.append(Token(w, Span(start, start + len(raw))))
    text += "\n"
    path = ROOT / "launch.sh"
    cmd = LaunchCommand(
        path=path,
        surface=Surface.SHELL,
        entry=Entry.LAUNCH_SERVER,
        program=Located(PROGRAM, Span(0, len(PROGRAM))),
        argv=tuple(argv),
        span=Span(0, len(text) - 1),
        base_dir=ROOT,
    )
    return cmd, text


def _yaml_scalar(value: Any) -> str:
    return json.dumps(value)  # JSON scalars are YAML flow scalars with the same value


def yaml_launch(case: Case) -> tuple[LaunchCommand, str]:
    key = case.option[2:]
    value = True if case.yaml_value is None else case.yaml_value
    head = f"{key}: "
    items: tuple[Span, ...] = ()
    if isinstance(value, list):
        parts, spans, pos = [], [], len(head) + 1
        for item in value:
            raw = _yaml_scalar(item)
            spans.append(Span(pos, pos + len(raw)))
            parts.append(raw)
            pos += len(raw) + 2
        raw_value = "[" + ", ".join(parts) + "]"
        items = tuple(spans)
    else:
        raw_value = _yaml_scalar(value) if not isinstance(value, bool) else str(value).lower()
    text = head + raw_value + "\n"
    path = ROOT / "config.yaml"
    entry = ConfigEntry(
        key=Located(key, Span(0, len(key))),
        value=value,
        value_span=Span(len(head), len(head) + len(raw_value)),
        item_spans=items,
    )
    config = ConfigFile(path=path, format="yaml", entries=(entry,))
    cmd = LaunchCommand(
        path=path,
        surface=Surface.CONFIG_YAML,
        entry=Entry.CONFIG_FILE,
        program=Located("--config", Span(0, 0)),
        argv=(),
        span=Span(0, len(text)),
        base_dir=ROOT,
        config=config,
    )
    return cmd, text


def lint(schema: Schema, cmd: LaunchCommand, text: str, ws: Workspace) -> list[tuple[str, str]]:
    ws.set_overlay(cmd.path, text)  # for the fixes a finding builds
    launch = resolve(cmd, schema, None)

    def no_pins():
        raise AssertionError("a schema rule asked for dependency pins")

    ctx = LaunchContext(launch, ws, Settings(), SourceText(cmd.path, text), _governing_fn=no_pins)
    found: list[tuple[str, str]] = []
    for r in SCHEMA_RULES:
        found.extend((r.code, v.message) for v in r.check(ctx))
    return found


def _run(version: str, build, expect) -> tuple[int, Counter, list[str]]:
    schema = load_schema(version)
    failures: list[str] = []
    codes: Counter = Counter()
    all_cases = cases(schema)
    ws = Workspace(ROOT)
    for case in all_cases:
        cmd, text = build(case)
        found = lint(schema, cmd, text, ws)
        got = {code for code, _ in found}
        codes.update(got)
        want = expect(schema, case)
        if got != want:
            detail = "; ".join(f"{c} {m}" for c, m in found) or "nothing"
            failures.append(f"{case.label!r}: expected {sorted(want) or 'nothing'}, got {detail}")
    return len(all_cases), codes, failures


# The counts asserted below describe the msgspec-namespace parsers (0.5.21 on); the schema
# itself is checked against sglang's argparse for older releases in tests/unit/test_schema.py.
VERSIONS = tuple(v for v in shipped_versions() if _version_key(v) >= _version_key("0.5.21"))


@pytest.mark.parametrize("version", VERSIONS)
def test_every_flag_on_the_command_line(version: str) -> None:
    n, codes, failures = _run(version, cli_launch, expected_cli)
    assert n > 500
    assert not failures, f"{len(failures)} of {n} cases:\n" + "\n".join(failures[:40])
    assert codes["KL204"] >= 3  # the deprecated flags and values are really exercised


@pytest.mark.parametrize("version", VERSIONS)
def test_every_flag_as_a_config_key(version: str) -> None:
    n, codes, failures = _run(version, yaml_launch, expected_yaml)
    assert n > 500
    assert not failures, f"{len(failures)} of {n} cases:\n" + "\n".join(failures[:40])
    assert codes["KL206"] == len(load_schema(version).config_refused_keys)


def test_the_cases_cover_every_flag() -> None:
    for version in VERSIONS:
        schema = load_schema(version)
        covered = {c.flag.dest for c in cases(schema)}
        wanted = {f.dest for f in schema.flags if f.action != "help" and f.dest != "config"}
        assert covered == wanted
