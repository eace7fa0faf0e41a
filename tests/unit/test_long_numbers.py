"""A version with a 10,000-digit number never raises (issue 32, red team F4): ``int()`` refuses
more than ``sys.get_int_max_str_digits()`` digits with a bare ValueError, which crashed KL101 and
KL102 (``--check`` exit 2, an editor showing nothing) and the release lookup (a traceback). Such a
pin is not a version: it is read as an unreadable pin (KL102, fail closed), never a crash."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp import pep440
from kimi_lsp.engine import Engine
from kimi_lsp.knowledge import schema
from kimi_lsp.workspace import Workspace

LONG = "1" * 10_000
K3 = "model-path: moonshotai/Kimi-K3\ntp-size: 8\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"


@pytest.mark.parametrize("text", [LONG, f"0.6.{LONG}", f"0.6.17+{LONG}", f"0.6.17rc{LONG}", f"v0.6.post{LONG}",
                                  f"{LONG}!1.0", "0." + "0" * 10_000])
def test_an_overlong_number_is_not_a_version(text: str) -> None:
    with pytest.raises(pep440.InvalidVersion):
        pep440.Version(text)


@pytest.mark.parametrize("spec", [f"=={LONG}", f">=0.6.{LONG}", f"===0.6.{LONG}", f">=v0.6.{LONG}", f"==0.{LONG}.*"])
def test_an_overlong_number_is_not_a_specifier(spec: str) -> None:
    with pytest.raises(pep440.InvalidSpecifier):
        pep440.SpecifierSet(spec)


def test_numbers_up_to_the_bound_still_parse() -> None:
    v = pep440.Version("0.6." + "9" * 640)
    assert v.release[2] == int("9" * 640)


def test_the_release_key_orders_overlong_numbers_without_raising() -> None:
    key = schema._version_key
    assert key("0.5." + "0" * 10_000) == key("0.5.0")  # leading zeros are no number's size
    assert key(f"0.5.{LONG}") > key("0.5.99999") and key(f"0.5.5rc{LONG}") < key("0.5.5")
    assert key(f"0.5.5.post{LONG}") > key("0.5.5.post1")
    assert schema.load_schema_exact(f"0.5.{LONG}") is None


@pytest.mark.parametrize("pins", [
    f"sglang==0.5.23\nflashinfer-python=={'0' * 10_000}\n",
    f"sglang==0.5.23\nflashinfer-python>=0.6.{LONG}\n",
    f"sglang==0.5.{LONG}\n",
    f"sglang==0.5.5rc{LONG}\nflashinfer-python==0.6.{LONG}\n",
])
def test_a_launch_whose_pins_hold_overlong_numbers_is_checked(tmp_path: Path, pins: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "k3.yaml").write_text(K3)
    (tmp_path / "requirements.txt").write_text(pins)
    engine = Engine(Workspace(tmp_path))
    result = engine.lint_file(tmp_path / "k3.yaml")
    assert engine.errors == []
    assert [d.code for d in result.diagnostics] == ["KL102"]  # undetermined: a warning, not a pass
