"""One settings schema: the project file, the editor and the extension read settings alike.

`[tool.kimi-lsp]` / `kimi-lsp.toml` (config.parse_settings) and the editor's `kimi-lsp` section
(lsp.settings.parse) validate through kimi_lsp.settings_schema; the extension's package.json
`contributes.configuration` and src/common/settingsSchema.ts are generated from it.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kimi_lsp import config, settings_schema
from kimi_lsp.diagnostics import Severity
from kimi_lsp.lsp import settings as editor
from kimi_lsp.workspace import SourceText

ROOT = Path(__file__).resolve().parents[1]


def project(text: str) -> config.Settings:
    return config.parse_settings(SourceText(Path("/proj/kimi-lsp.toml"), text))


def messages(s: config.Settings) -> list[str]:
    return [p.message.split(": ", 1)[1] for p in s.problems]


def editor_messages(e: editor.EditorSettings) -> list[str]:
    return [p.split(": ", 1)[1] for p in e.problems]


def test_the_generated_extension_settings_are_current() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_settings.py"), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_package_json_declares_exactly_the_contributed_settings() -> None:
    props = json.loads((ROOT / "vscode-extension" / "package.json").read_text("utf-8"))["contributes"]["configuration"]["properties"]
    declared = {k.removeprefix("kimi-lsp.") for k in props}
    assert declared == {s.key for s in settings_schema.SETTINGS if s.editor and s.contributed}
    assert props["kimi-lsp.severity"]["additionalProperties"]["enum"] == ["error", "warning", "info"]
    assert props["kimi-lsp.select"]["items"]["pattern"] == settings_schema.CODE_OR_PREFIX


def test_every_project_setting_is_a_settings_field() -> None:
    defaults = config.Settings()
    for s in settings_schema.SETTINGS:
        if s.project and s.key != "extend-select":  # extend-select is folded into select
            assert hasattr(defaults, s.attr), s.key
    assert set(config.KNOWN_KEYS) == {s.key for s in settings_schema.SETTINGS if s.project}


@pytest.mark.parametrize("written, level", [("warning", "warning"), ("warn", "warning"), ("WARN", "warning"),
                                           ("information", "info"), ("Error", "error")])
def test_severity_aliases_mean_the_same_in_the_project_and_the_editor(written: str, level: str) -> None:
    toml = project(f'severity = {{ KL101 = "{written}" }}\n')
    assert not toml.problems and toml.severity == (("KL101", Severity(level)),)
    ed = editor.parse({"severity": {"KL101": written}})
    assert not ed.problems and ed.overrides == {"severity": (("KL101", Severity(level)),)}


@pytest.mark.parametrize("key, value", [("KL1", "error"), ("KL", "info"), ("KL999", "error"), ("KL101", "loud")])
def test_a_severity_entry_that_cannot_apply_is_refused_alike_and_changes_nothing(key: str, value: str) -> None:
    """A prefix never changed a severity (severity_for compares whole codes): it is reported now,
    with the same words in the project file and the editor, and the rule keeps its severity."""
    toml = project(f'severity = {{ {key} = "{value}" }}\n')
    ed = editor.parse({"severity": {key: value}})
    assert toml.severity == () and ed.overrides == {"severity": ()}
    assert messages(toml) == editor_messages(ed) and len(messages(toml)) == 1
    assert toml.severity_for("KL101", Severity.ERROR) is Severity.ERROR


def test_rule_codes_are_read_case_insensitively_everywhere() -> None:
    assert project('select = ["kl1"]\nignore = ["kl204"]\n').select == ("KL1",)
    assert editor.parse({"select": ["kl1"]}).overrides == {"select": ("KL1",)}


@pytest.mark.parametrize("key, value, toml_value", [
    ("select", ["KL10l"], '["KL10l"]'),
    ("select", [], "[]"),
    ("ignore", ["KL1", "nope"], '["KL1", "nope"]'),
    ("sglang-version", "x.y", '"x.y"'),
    ("sglang-version", "0.0.0", '"0.0.0"'),  # no sglang release is numbered below 0.1 (issue 30)
    ("target-gpu", "bogus", '"bogus"'),
    ("flashinfer-target", 5, "5"),
])
def test_invalid_values_fail_closed_with_one_message(key: str, value: object, toml_value: str) -> None:
    toml = project(f"{key} = {toml_value}\n")
    ed = editor.parse({key: value})
    assert messages(toml) == editor_messages(ed) and len(messages(toml)) == 1
    assert toml.select == ("KL",)  # a bad select never narrows the rules
    assert toml.ignore == (("KL1",) if key == "ignore" else ())  # a bad ignore drops only its bad entries
    attr = key.replace("-", "_")
    assert getattr(toml, attr) == ((("KL1",) if key == "ignore" else getattr(config.Settings(), attr)))
    assert ed.overrides == ({"ignore": ("KL1",)} if key == "ignore" else {})


def test_an_sglang_release_below_0_1_is_refused_and_an_old_real_one_is_not() -> None:
    """0.0.0 names no sglang release (KL002); 0.3.6 is a real one kimi-lsp has no schema for:
    accepted here, and said on each launch to go unchecked (engine)."""
    assert settings_schema.sglang_version_problem("0.0.0")
    assert settings_schema.sglang_version_problem("0.3.6") is None
    assert project('sglang-version = "0.3.6"\n').sglang_version == "0.3.6"


def test_a_code_list_may_be_one_string_in_the_editor_only() -> None:
    """Editors write "KL1, KL2"; in TOML a string where a list belongs is most likely a typo."""
    assert editor.parse({"select": "KL1, KL2"}).overrides == {"select": ("KL1", "KL2")}
    toml = project('select = "KL1"\n')
    assert toml.select == ("KL",) and len(toml.problems) == 1


def test_editor_only_and_client_settings() -> None:
    assert editor.parse({"configurationPreference": "editor"}).prefer_editor
    assert editor.parse({"path": ["/x"], "trace": {"server": "off"}, "interpreter": []}) == editor.EditorSettings()
    assert [p.message for p in project('configurationPreference = "editor"\n').problems][0].startswith("unknown kimi-lsp setting")
    assert editor.parse({"exclude": ["x"]}).problems == ("unknown setting `kimi-lsp.exclude`",)
