"""sglang --config YAML: located entries, sglang's yaml.safe_load semantics, broken input."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kimi_lsp.surfaces import detect_surface, read_surface
from kimi_lsp.surfaces.model import ConfigFile, Entry, Surface, SurfaceResult
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText

CONFIG = Path("/repo/deploy/k3.yaml")
SGLANG_KEYS = {
    "model-path", "tp-size", "tp", "dcp-size", "attention-backend", "decode-attention-backend",
    "disable-radix-cache", "cuda-graph-bs", "json-model-override-args", "served-model-name", "port",
    "mem-fraction-static", "host", "trust-remote-code",
}


def is_sglang_key(key: str) -> bool:
    return key.replace("_", "-") in SGLANG_KEYS


def raw(text: str, span: Span) -> str:
    return text[span.start : span.end]


def read(text: str, *, force: Surface | None = None, path: Path = CONFIG) -> SurfaceResult:
    result = read_surface(SourceText(path, text), is_sglang_key=is_sglang_key, force=force)
    assert not result.notes, result.notes
    return result


def config_of(text: str, **kw: object) -> ConfigFile:
    result = read(text, **kw)
    assert result.is_launch_file
    (launch,) = result.launches
    assert launch.surface is Surface.CONFIG_YAML and launch.entry is Entry.CONFIG_FILE and launch.argv == ()
    assert launch.config is not None and launch.config.format == "yaml"
    return launch.config


def entries(text: str, **kw: object) -> dict[str, tuple[object, str, str]]:
    """key -> (value, raw key text, raw value text)."""
    cfg = config_of(text, **kw)
    return {e.key.value: (e.value, raw(text, e.key.span), raw(text, e.value_span)) for e in cfg.entries}


@pytest.mark.parametrize(
    ("line", "value", "value_text"),
    [
        ("tp-size: 8", 8, "8"),
        ("model-path: moonshotai/Kimi-K3", "moonshotai/Kimi-K3", "moonshotai/Kimi-K3"),
        ('attention-backend: "cutedsl_mla"', "cutedsl_mla", '"cutedsl_mla"'),
        ("attention-backend: 'cutedsl_mla'   # comment", "cutedsl_mla", "'cutedsl_mla'"),
        ("disable-radix-cache: yes", True, "yes"),
        ("disable-radix-cache: off", False, "off"),
        ("disable-radix-cache: True", True, "True"),
        ("mem-fraction-static: 0.85", 0.85, "0.85"),
        ("tp-size: ~", None, "~"),
        ("tp-size: null", None, "null"),
        ("tp-size: '2'", "2", "'2'"),
        ("tp-size:", None, ""),
        ("tp-size:    # nothing", None, ""),
        ("cuda-graph-bs: [1, 2, 4]", [1, 2, 4], "[1, 2, 4]"),
        ("json-model-override-args: {a: 1, b: [x]}", {"a": 1, "b": ["x"]}, "{a: 1, b: [x]}"),
        ('json-model-override-args: \'{"a": 1}\'', '{"a": 1}', '\'{"a": 1}\''),
        ("served-model-name: !!str 123", "123", "123"),
    ],
)
def test_scalar_and_flow_values(line: str, value: object, value_text: str) -> None:
    text = f"model-path: m\n{line}\n"
    key = line.split(":", 1)[0]
    got = entries(text)[key]
    assert got[0] == value and type(got[0]) is type(value)
    assert got[1] == key
    assert got[2] == value_text
    assert yaml.safe_load(text)[key] == value  # what sglang itself sees


def test_null_value_span_sits_after_the_colon() -> None:
    text = "model-path: m\ntp-size:\ndcp-size: 8\n"
    cfg = config_of(text)
    tp = next(e for e in cfg.entries if e.key.value == "tp-size")
    assert tp.value_span.start == tp.value_span.end == text.index("tp-size:") + len("tp-size:")


def test_block_values_item_spans_and_trimmed_ends() -> None:
    text = (
        "model-path: m\n"
        "cuda-graph-bs:\n"
        "  - 1\n"
        "  - \"2\"   # two\n"
        "\n"
        "# trailing comment\n"
        "json-model-override-args:\n"
        "  a: 1\n"
        "  b: |\n"
        "    text\n"
        "\n"
        "served-model-name: >-\n"
        "  folded\n"
        "  name\n"
        "\n"
        "port: 30000\n"
    )
    cfg = config_of(text)
    by_key = {e.key.value: e for e in cfg.entries}
    bs = by_key["cuda-graph-bs"]
    assert bs.value == [1, "2"]
    assert raw(text, bs.value_span) == '- 1\n  - "2"'
    assert [raw(text, s) for s in bs.item_spans] == ["1", '"2"']
    override = by_key["json-model-override-args"]
    assert override.value == {"a": 1, "b": "text\n"}
    assert raw(text, override.value_span) == "a: 1\n  b: |\n    text"
    name = by_key["served-model-name"]
    assert name.value == "folded name"
    assert raw(text, name.value_span) == ">-\n  folded\n  name"


def test_positions_with_crlf_tabs_and_non_ascii() -> None:
    text = '# é😀 Kimi—K3\r\n"model-path": "moonshotai/Kimi-K3"\r\ntp-size:\t8\r\nserved-model-name: 名前😀\r\n'
    got = entries(text)
    assert got["model-path"] == ("moonshotai/Kimi-K3", '"model-path"', '"moonshotai/Kimi-K3"')
    assert got["tp-size"] == (8, "tp-size", "8")
    assert got["served-model-name"] == ("名前😀", "served-model-name", "名前😀")


def test_duplicate_keys_keep_the_last_value_in_first_position() -> None:
    text = "model-path: m\ntp-size: 2\ndcp-size: 8\ntp-size: 4\n"
    cfg = config_of(text)
    assert [e.key.value for e in cfg.entries] == ["model-path", "tp-size", "dcp-size"]
    tp = cfg.entries[1]
    assert tp.value == 4 and tp.key.span.start == text.rindex("tp-size")
    ((later, earlier),) = cfg.duplicates
    assert later.span.start == text.rindex("tp-size") and earlier.span.start == text.index("tp-size")
    assert yaml.safe_load(text)["tp-size"] == 4


def test_anchors_aliases_and_merge_keys() -> None:
    text = (
        "base: &b\n"
        "  tp-size: 2\n"
        "  dcp-size: 8\n"
        "model-path: &m moonshotai/Kimi-K3\n"
        "served-model-name: *m\n"
        "<<: *b\n"
        "dcp-size: 4\n"
        "cuda-graph-bs: [1, *m]\n"
    )
    cfg = config_of(text, force=Surface.CONFIG_YAML)
    by_key = {e.key.value: e for e in cfg.entries}
    expected = yaml.safe_load(text)
    assert {k: e.value for k, e in by_key.items()} == expected
    assert list(by_key) == list(expected)  # same order as the dict sglang iterates
    assert raw(text, by_key["served-model-name"].value_span) == "*m"
    assert raw(text, by_key["model-path"].value_span) == "moonshotai/Kimi-K3"
    assert raw(text, by_key["tp-size"].key.span) == "tp-size"  # merged key: located at the anchor
    assert by_key["dcp-size"].value == 4 and by_key["dcp-size"].key.span.start == text.rindex("dcp-size")
    assert [raw(text, s) for s in by_key["cuda-graph-bs"].item_spans] == ["1", "*m"]
    assert cfg.duplicates == ()  # a merged key overridden by an own key is not a duplicate


def test_empty_file_is_an_empty_config() -> None:
    assert config_of("", force=Surface.CONFIG_YAML).entries == ()
    assert config_of("# only a comment\n", force=Surface.CONFIG_YAML).entries == ()


# ---------------------------------------------------------------------------------------------
# Broken input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fragment", "at"),
    [
        ("model-path: m\ntp-size: [1, 2\n", "flow sequence", ""),
        ("model-path: m\n  tp-size: 2\n", "mapping values are not allowed", ":"),
        ('model-path: "m\n', "found unexpected end of stream", ""),
        ("model-path: m\n\ttp-size: 2\n", "found character '\\t'", "\t"),
        ("model-path: m\ntp-size: *nope\n", "found undefined alias", "*"),
        ("model-path: m\nx: !!python/object:os.system x\n", "could not determine a constructor", "!"),
        ("model-path: m\nrevision: 2024-13-45\n", "month must be in 1..12", "2024-13-45"),
        ("model-path: m\nbad: \x07\n", "special characters are not allowed", "\x07"),
    ],
)
def test_yaml_errors_become_problems(text: str, fragment: str, at: str) -> None:
    result = read(text, force=Surface.CONFIG_YAML)
    assert result.is_launch_file
    (problem,) = result.problems
    assert fragment in problem.message, problem.message
    assert raw(text, problem.span) == at
    with pytest.raises(Exception):
        yaml.safe_load(text)  # sglang fails on the same file


def test_several_documents_fail_like_safe_load() -> None:
    text = "model-path: m\ntp-size: 2\n---\nfoo: 1\n"
    result = read(text)
    (problem,) = result.problems
    assert "expected a single document" in problem.message
    assert raw(text, problem.span) == "---"
    (launch,) = result.launches  # the first document is still checked
    assert [e.key.value for e in launch.config.entries] == ["model-path", "tp-size"]
    assert yaml.safe_load("---\nmodel-path: m\n") == {"model-path": "m"}
    assert read("---\nmodel-path: m\ntp-size: 1\n...\n").problems == ()


def test_root_must_be_a_mapping() -> None:
    result = read("- model-path\n- m\n", force=Surface.CONFIG_YAML)
    (problem,) = result.problems
    assert problem.message == "Config file must contain a dictionary at root level"


def test_alias_bomb_is_refused() -> None:
    text = "model-path: m\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for name, prev in zip("bcdef", "abcde"):
        text += f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]\n"
    result = read(text, force=Surface.CONFIG_YAML)
    assert result.launches == ()
    (problem,) = result.problems
    assert "alias" in problem.message


@pytest.mark.parametrize("depth", [150, 5_000, 50_000])
def test_deep_nesting_is_refused_without_crashing(depth: int) -> None:
    text = "model-path: " + "[" * depth + "]" * depth + "\n"
    result = read(text, force=Surface.CONFIG_YAML)
    assert result.launches == ()
    (problem,) = result.problems
    assert "nesting" in problem.message


def test_recursive_alias_is_refused() -> None:
    result = read("model-path: &a [*a]\n", force=Surface.CONFIG_YAML)
    assert result.problems and "nesting" in result.problems[0].message


def test_broken_yaml_that_looks_like_a_config_is_a_launch_file() -> None:
    result = read("model-path: m\ntp-size: [8\n")
    assert result.is_launch_file and result.problems and result.launches == ()


def test_broken_unrelated_yaml_is_not_a_launch_file() -> None:
    result = read("recipe: [flour\n", path=Path("/repo/food.yaml"))
    assert not result.is_launch_file and result.launches == ()
    result = read("recipe: [sglang\n", path=Path("/repo/food.yaml"))  # mentions sglang: parsed
    assert result.problems and result.is_launch_file


# ---------------------------------------------------------------------------------------------
# Detection
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "predicate", "surface"),
    [
        ("k3.yaml", "model-path: m\ntp-size: 8\n", True, Surface.CONFIG_YAML),
        ("k3.yml", "model-path: m\ntp_size: 8\n", True, Surface.CONFIG_YAML),
        ("k3.yaml", "model-path: m\ntp-size: 8\n", False, Surface.CONFIG_YAML),
        ("k3.yaml", "model-path: m\nfoo: 1\nbar: 2\n", True, None),
        ("k3.yaml", "name: x\nversion: 2\n", False, None),
        ("k3.yaml", "model-path: m\nkind: Pod\napiVersion: v1\n", True, Surface.KUBERNETES),
        ("docker-compose.yaml", "services:\n  s:\n    image: x\n", True, Surface.COMPOSE),
        ("k3.yaml", "- model-path\n", True, None),
        ("k3.txt", "model-path: m\n", True, Surface.TEXT),  # a text file of commands (issue 31), never a --config
        ("k3.yaml", "", True, None),
    ],
)
def test_detect_config_yaml(name: str, text: str, predicate: bool, surface: Surface | None) -> None:
    got = detect_surface(Path("/repo") / name, text, is_sglang_key if predicate else None)
    assert got is surface


def test_unrelated_yaml_gives_nothing() -> None:
    result = read("recipe: cake\nsteps_count: 3\n", path=Path("/repo/food.yaml"))
    assert result == SurfaceResult()
