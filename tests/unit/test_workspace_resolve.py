"""Workspace.resolve answers as Path.resolve does (it only remembers directories' resolutions)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from kimi_lsp.workspace import Workspace


def test_resolve_matches_pathlib(tmp_path: Path) -> None:
    real = tmp_path / "real" / "deep"
    real.mkdir(parents=True)
    (real / "a.yaml").write_text("x: 1\n")
    (real / ".hidden").mkdir()
    (real / ".hidden" / "c.yaml").write_text("x: 3\n")
    (tmp_path / "link-dir").symlink_to(tmp_path / "real")
    (real / "b.yaml").symlink_to(real / "a.yaml")
    (real / "rel.yaml").symlink_to("a.yaml")
    (real / "up.yaml").symlink_to("../../real/deep/a.yaml")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "hop").symlink_to(real)  # elsewhere/hop/.. is real/, not elsewhere/
    ws = Workspace(tmp_path)
    cases = [
        real / "a.yaml", real / "b.yaml", real / "rel.yaml", real / "up.yaml", real / "missing.yaml",
        tmp_path / "link-dir" / "deep" / "a.yaml", tmp_path / "link-dir" / "deep" / "b.yaml",
        tmp_path / "link-dir" / "nope" / "x.yaml", tmp_path / "real" / "deep" / ".." / "deep" / "a.yaml",
        tmp_path / "real" / ".", tmp_path / "real" / "deep" / "..",
        tmp_path / "link-dir" / "deep" / ".." / "deep" / "a.yaml", tmp_path / "link-dir" / "..",
        Path("relative-missing.yaml"), real / ".hidden" / "c.yaml", real / ".hidden" / ".." / "a.yaml",
        real / "..." / "x.yaml", tmp_path / "elsewhere" / "hop" / ".." / "deep" / "a.yaml",
        tmp_path / "link-dir" / "deep" / "new" / "deeper" / "x.yaml", tmp_path / "elsewhere" / "hop" / "a.yaml",
    ]
    for _ in range(2):  # the second round answers from the remembered directories
        for p in cases:
            assert ws.resolve(p) == p.resolve(), p
    with pytest.raises(RuntimeError):
        Path(tmp_path / "loop").resolve()
    with pytest.raises(RuntimeError):
        ws.resolve(tmp_path / "loop")
    with pytest.raises(RuntimeError):  # a file in a looping directory, too
        ws.resolve(tmp_path / "loop" / "x.yaml")
    # a directory that becomes a link: forgotten on invalidate, as the editor's file events do
    (tmp_path / "moved").mkdir()
    (tmp_path / "moved" / "deep").mkdir()
    (tmp_path / "moved" / "deep" / "a.yaml").write_text("x: 2\n")
    os.rename(tmp_path / "link-dir", tmp_path / "old-link")
    (tmp_path / "link-dir").symlink_to(tmp_path / "moved")
    ws.invalidate()
    assert ws.resolve(tmp_path / "link-dir" / "deep" / "a.yaml") == tmp_path / "moved" / "deep" / "a.yaml"
