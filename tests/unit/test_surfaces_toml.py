"""kimi-lsp TOML launch profiles: the [sglang] table with positions."""
from __future__ import annotations

from kimi_lsp._toml import tomllib  # the standard library on 3.11+, tomli on 3.10
from pathlib import Path

import pytest

from kimi_lsp.surfaces import detect_surface, read_surface
from kimi_lsp.surfaces.model import ConfigFile, Entry, Surface, SurfaceResult
from kimi_lsp.syntax.toml import locate
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText

PROFILE = Path("/repo/launch/k3.toml")


def raw(text: str, span: Span) -> str:
    return text[span.start : span.end]


def read(text: str, path: Path = PROFILE, force: Surface | None = None) -> SurfaceResult:
    result = read_surface(SourceText(path, text), force=force)
    assert not result.notes or force is not None, result.notes
    return result


def config_of(text: str) -> ConfigFile:
    result = read(text)
    assert result.is_launch_file and result.problems == ()
    (launch,) = result.launches
    assert launch.surface is Surface.TOML and launch.entry is Entry.CONFIG_FILE and launch.argv == ()
    assert launch.config is not None and launch.config.format == "toml"
    return launch.config


PROFILE_TEXT = """\
# é😀 Kimi—K3 profile
[project]
name = "not-this"

[sglang]
model-path = "moonshotai/Kimi-K3"   # comment
tp_size = 8
"dcp-size" = 8
'attention-backend' = 'cutedsl_mla'
disable-radix-cache = true
mem-fraction-static = 0.85
cuda-graph-bs = [
  1,  # one
  2,
  "4",
]
json-model-override-args = { a = 1, b = [2, 3] }
served-model-name = \"\"\"
multi
line\"\"\"
tokenizer-path = '''raw\\path'''

[sglang.env]
HF_HOME = "/data"
SGLANG_FLAG = true
NCCL_TIMEOUT = 30

[tool.other]
tp-size = 99
"""


def test_entries_values_and_spans() -> None:
    cfg = config_of(PROFILE_TEXT)
    data = tomllib.loads(PROFILE_TEXT)["sglang"]
    got = {e.key.value: (e.value, raw(PROFILE_TEXT, e.key.span), raw(PROFILE_TEXT, e.value_span)) for e in cfg.entries}
    assert got == {
        "model-path": ("moonshotai/Kimi-K3", "model-path", '"moonshotai/Kimi-K3"'),
        "tp_size": (8, "tp_size", "8"),
        "dcp-size": (8, '"dcp-size"', "8"),
        "attention-backend": ("cutedsl_mla", "'attention-backend'", "'cutedsl_mla'"),
        "disable-radix-cache": (True, "disable-radix-cache", "true"),
        "mem-fraction-static": (0.85, "mem-fraction-static", "0.85"),
        "cuda-graph-bs": ([1, 2, "4"], "cuda-graph-bs", '[\n  1,  # one\n  2,\n  "4",\n]'),
        "json-model-override-args": ({"a": 1, "b": [2, 3]}, "json-model-override-args", "{ a = 1, b = [2, 3] }"),
        "served-model-name": ("multi\nline", "served-model-name", '"""\nmulti\nline"""'),
        "tokenizer-path": ("raw\\path", "tokenizer-path", "'''raw\\path'''"),
    }
    assert {k: v[0] for k, v in got.items()} == {k: v for k, v in data.items() if k != "env"}
    bs = next(e for e in cfg.entries if e.key.value == "cuda-graph-bs")
    assert [raw(PROFILE_TEXT, s) for s in bs.item_spans] == ["1", "2", '"4"']
    assert [e.key.value for e in cfg.entries][:3] == ["model-path", "tp_size", "dcp-size"]  # file order


def test_env_table() -> None:
    result = read(PROFILE_TEXT)
    (launch,) = result.launches
    env = [(e.name.value, e.value.value, raw(PROFILE_TEXT, e.name.span), raw(PROFILE_TEXT, e.value.span)) for e in launch.env]
    assert env == [
        ("HF_HOME", "/data", "HF_HOME", '"/data"'),
        ("SGLANG_FLAG", "true", "SGLANG_FLAG", "true"),
        ("NCCL_TIMEOUT", "30", "NCCL_TIMEOUT", "30"),
    ]
    assert launch.config.env == launch.env
    assert raw(PROFILE_TEXT, launch.program.span) == "[sglang]"


@pytest.mark.parametrize(
    ("text", "key", "key_text", "value_text"),
    [
        ("sglang.tp-size = 8\n", "tp-size", "tp-size", "8"),
        ("sglang = { tp-size = 8, model-path = 'm' }\n", "model-path", "model-path", "'m'"),
        ("[sglang]\r\ntp-size\t=\t8\r\n", "tp-size", "tp-size", "8"),
        ("[ sglang ]\nrevision = 1979-05-27 07:32:00Z # date\n", "revision", "revision", "1979-05-27 07:32:00Z"),
        ("[sglang]\nserved-model-name = \"名前😀\"\n", "served-model-name", "served-model-name", '"名前😀"'),
        ("[sglang]\n\"a.b\" = 1\n", "a.b", '"a.b"', "1"),
        ("[sglang.json-model-override-args]\na = 1\n", "json-model-override-args", "json-model-override-args", "[sglang.json-model-override-args]"),
    ],
)
def test_table_spellings(text: str, key: str, key_text: str, value_text: str) -> None:
    cfg = config_of(text)
    entry = next(e for e in cfg.entries if e.key.value == key)
    assert raw(text, entry.key.span) == key_text
    assert raw(text, entry.value_span) == value_text


@pytest.mark.parametrize(
    ("text", "message", "at"),
    [
        ("[sglang]\ntp-size = \n", "Invalid value", ""),
        ("[sglang]\nmodel-path = \"m\n", "Illegal character", ""),
        ("[sglang]\ntp-size = 1\ntp-size = 2\n", "Cannot overwrite a value", "\n"),
        ("[sglang]\ntp-size = 1 2\n", "Expected newline or end of document after a statement", "2"),
        ("[sglang]\na = [1,\n", "Invalid value", ""),
    ],
)
def test_syntax_errors(text: str, message: str, at: str) -> None:
    result = read(text)
    assert result.is_launch_file and result.launches == ()
    (problem,) = result.problems
    assert problem.message.startswith(f"TOML syntax error: {message}"), problem.message
    assert raw(text, problem.span) == at.strip("\n")


def test_broken_toml_without_sglang_table_is_not_a_launch_file() -> None:
    text = "[sglang]\nx = 1\n"
    assert read(text, Path("/repo/pyproject.toml")).is_launch_file
    result = read_surface(SourceText(Path("/repo/pyproject.toml"), "[project]\nname = \n"))
    assert not result.is_launch_file and result.problems == () and result.launches == ()


def test_forced_toml_without_table() -> None:
    result = read("[project]\nname = 'x'\n", force=Surface.TOML)
    assert result.is_launch_file and result.launches == ()


def test_scanner_positions() -> None:
    text = "a.b = 1\n[t]\nk = [\"x\", {y = 2}]\n[[arr]]\nz = 3\n"
    locs = locate(text)
    assert raw(text, locs.values[("a", "b")]) == "1"
    assert raw(text, locs.keys[("a",)]) == "a"
    assert raw(text, locs.tables[("a",)]) == "a.b = 1"
    assert [raw(text, s) for s in locs.items(("t", "k"))] == ['"x"', "{y = 2}"]
    assert raw(text, locs.values[("t", "k", 1, "y")]) == "2"
    assert raw(text, locs.tables[("t",)]) == "[t]"
    assert raw(text, locs.values[("arr", 0, "z")]) == "3"
    assert [(h.path, raw(text, h.span), h.array) for h in locs.headers] == [(("t",), "[t]", False), (("arr", 0), "[[arr]]", True)]


@pytest.mark.parametrize(
    ("name", "text", "surface"),
    [
        ("k3.toml", "[sglang]\n", Surface.TOML),
        ("k3.toml", "sglang.tp-size = 8\n", Surface.TOML),
        ("k3.toml", "[sglang.env]\nA = 1\n", Surface.TOML),
        ("pyproject.toml", "[project]\nname = 'sglang'\n", None),
        ("pyproject.toml", "[tool.poetry.dependencies]\nsglang = '0.5.23'\n", None),
        ("broken.toml", "[sglang]\ntp-size = \n", Surface.TOML),
        ("k3.toml", "[tool.sglang]\n", None),
    ],
)
def test_detect_toml(name: str, text: str, surface: Surface | None) -> None:
    assert detect_surface(Path("/repo") / name, text) is surface
