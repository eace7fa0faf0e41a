"""A `--config` file on a release without that option (0.4.x to 0.5.2) is never opened by sglang
(issue 30): kimi-lsp neither reads it nor reports anything in it, and a launch's result does not
depend on it (its cache entry is not invalidated by an edit of a file sglang never reads)."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.engine import Engine
from kimi_lsp.knowledge.schema import load_schema_exact
from kimi_lsp.workspace import Workspace

OLD = "0.4.10"  # before 0.5.3: no --config option
WITH_CONFIG = "0.5.5"

CONFIG = "tp_size: 2\nfrobnicate: 3\nhelp: true\nmodel-path:\n"


def _lint(tmp_path: Path, release: str, config_text: str | None, config_name: str = "serve.yaml") -> tuple[list, set[Path]]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "requirements.txt").write_text(f"sglang=={release}\n")
    (tmp_path / "run.sh").write_text(f"python -m sglang.launch_server --model-path m --config {config_name}\n")
    if config_text is not None:
        (tmp_path / config_name).write_text(config_text)
    eng = Engine(Workspace(tmp_path))
    result = eng.lint_file(tmp_path / "run.sh")
    assert not eng.errors, eng.errors
    return result.diagnostics, {p.name for p in result.depends_on}


def test_the_releases_are_what_the_tests_say() -> None:
    old, new = load_schema_exact(OLD), load_schema_exact(WITH_CONFIG)
    assert old is not None and not old.config_merger
    assert new is not None and new.config_merger


@pytest.mark.parametrize("name, text", [
    ("serve.yaml", CONFIG),  # keys the merger would refuse, `help: true`, a null value
    ("serve.yaml", "serving: [2\nreplicas: : 1\n"),  # not YAML at all
    ("serve.yaml", None),  # missing
    ("serve.json", '{"tp-size": 2}\n'),  # not a YAML file name
])
def test_a_release_without_config_reports_only_the_option(tmp_path: Path, name: str, text: str | None) -> None:
    diags, depends = _lint(tmp_path, OLD, text, name)
    assert [(d.code, d.location.path.name) for d in diags] == [("KL201", "run.sh")]
    assert "--config" in diags[0].message
    assert name not in depends


def test_a_release_with_config_reads_the_same_file(tmp_path: Path) -> None:
    diags, depends = _lint(tmp_path, WITH_CONFIG, CONFIG)
    assert "serve.yaml" in depends
    assert {d.location.path.name for d in diags} == {"serve.yaml"}
    assert "KL201" in {d.code for d in diags}  # frobnicate, and help: true (no server starts)
