"""surfaces._helm_template_dir: a file under a chart's ``templates/`` (the nearest such directory
with a ``Chart.yaml`` beside it), for absolute and relative paths."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from kimi_lsp.surfaces import _helm_template_dir


def test_nearest_templates_directory_decides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart = tmp_path / "chart"
    (chart / "templates" / "sub").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("name: x\n")
    (tmp_path / "other" / "templates").mkdir(parents=True)  # no Chart.yaml beside it
    (chart / "templates" / "sub" / "templates").mkdir()  # nearest, and no chart beside it
    assert _helm_template_dir(chart / "templates" / "deploy.yaml")
    assert _helm_template_dir(chart / "templates" / "sub" / "deploy.yaml")
    assert not _helm_template_dir(chart / "templates" / "sub" / "templates" / "deploy.yaml")
    assert not _helm_template_dir(tmp_path / "other" / "templates" / "deploy.yaml")
    assert not _helm_template_dir(chart / "values.yaml")
    assert not _helm_template_dir(chart / "templates")  # the directory's own name is not a parent
    monkeypatch.chdir(chart)
    assert _helm_template_dir(Path("templates") / "deploy.yaml")
    monkeypatch.chdir(tmp_path)
    assert _helm_template_dir(Path("chart") / "templates" / "deploy.yaml")
    assert not _helm_template_dir(Path("other") / "templates" / "x.yaml")
    assert os.getcwd() == str(tmp_path)
