"""Workspace.resolve answers as Path.resolve does (it only remembers directories' resolutions)."""
from __future__ import annotations

import os
import sys
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
    if sys.version_info < (3, 13):  # 3.13's Path.resolve returns a looping path as written
        with pytest.raises(RuntimeError):
            Path(tmp_path / "loop").resolve()
    with pytest.raises(RuntimeError):  # Workspace.resolve raises on every version
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


def _tree_of_every_kind(root: Path) -> list[Path]:
    """A directory holding each kind of entry a probe may meet, and the paths to probe."""
    d = root / "proj"
    (d / "requirements").mkdir(parents=True)
    (d / "requirements" / "base.txt").write_text("sglang==0.5.23\n")
    (d / "requirements" / "notes.md").write_text("x\n")
    (d / "requirements.txt").write_text("flashinfer-python==0.6.17\n")
    (d / "kimi-lsp.toml").write_text("")
    (d / ".git").mkdir()
    (d / "sub" / "requirements").mkdir(parents=True)
    (d / "sub" / "requirements" / "dev.txt").write_text("x==1\n")
    (d / "link-file.txt").symlink_to(d / "requirements.txt")
    (d / "dangling.txt").symlink_to(d / "nowhere.txt")
    (d / "link-dir").symlink_to(d / "sub")
    (d / "filed").write_text("a file where a directory may be expected\n")
    os.mkfifo(d / "fifo.txt")
    (d / ".kimi-lsp.toml").symlink_to(d / "sub")  # a settings name that is a directory
    names = ["requirements", "requirements.txt", "kimi-lsp.toml", ".kimi-lsp.toml", ".git", "sub", "link-file.txt",
             "dangling.txt", "link-dir", "filed", "fifo.txt", "missing", "pyproject.toml"]
    deep = [d / "missing" / "a" / "b" / "config.json", d / "filed" / "x" / "config.json",
            d / "dangling.txt" / "z" / "config.json", d / "link-dir" / "nope" / "k" / "config.json",
            d / "sub" / "requirements" / "dev.txt" / "config.json", d / "requirements" / "base.txt"]
    probes = [*deep, d, root, d / "sub" / "requirements"]
    for n in names:
        probes += [d / n, d / n / "x.txt", d / "sub" / n, d / "link-dir" / n, d / "filed" / n, d / "missing" / n]
    return probes + deep  # again: now with the listings above them made


def test_stable_listing_answers_as_the_filesystem(tmp_path: Path) -> None:
    """A stable workspace answers ``exists``, ``is_dir`` and ``.git`` probes from one listing of
    each directory: the same answers as asking the filesystem each time (the server's way)."""
    from kimi_lsp.workspace import ABSENT

    probes = _tree_of_every_kind(tmp_path)
    stable, plain = Workspace(tmp_path, stable=True), Workspace(tmp_path)
    for p in probes:
        assert stable.exists(p) == plain.exists(p) == p.is_file(), p
        assert stable.is_dir(p) == plain.is_dir(p) == p.is_dir(), p
        assert stable.repo_root(p) == plain.repo_root(p), p
        assert stable.file_in(p.parent, p.name) == plain.file_in(p.parent, p.name) == (p if p.is_file() else None), p
    assert stable.listing(str(tmp_path / "proj" / "missing")) is ABSENT
    assert stable.listing(str(tmp_path / "proj" / "filed")) is ABSENT
    assert set(stable.listing(str(tmp_path / "proj")) or ()) == set(os.listdir(tmp_path / "proj"))


def test_stable_pin_listing_finds_what_the_stamped_listing_finds(tmp_path: Path) -> None:
    """Pin files in a directory and its ``requirements/`` (a CLI lint lists each directory once,
    the server re-lists when a directory's mtime changes): the same files either way."""
    from kimi_lsp.pins import discovery

    probes = _tree_of_every_kind(tmp_path)
    stable, plain = Workspace(tmp_path, stable=True), Workspace(tmp_path)
    dirs = [p for p in probes if p.is_dir()] + [tmp_path / "proj" / "missing", tmp_path / "proj" / "filed"]
    found_any = False
    for d in dirs:
        got = discovery._dir_pin_files(d, stable)
        assert got == discovery._dir_pin_files(d, plain), d
        found_any = found_any or bool(got)
    assert found_any
    proj = tmp_path / "proj"
    assert discovery._dir_pin_files(proj, stable) == (proj / "requirements.txt", proj / "requirements" / "base.txt")
    sub = proj / "sub"
    assert discovery._dir_pin_files(sub, stable) == (sub / "requirements" / "dev.txt",)


def test_resolutions_carry_over_to_the_linting_workspace(tmp_path: Path) -> None:
    """The command line's workspace hands the engine's its realpaths: the files it named (their
    own realpaths) and its directories; a link among them is still followed."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.yaml").write_text("x: 1\n")
    (tmp_path / "via").symlink_to(real)
    first = Workspace(tmp_path)
    named = first.resolve(tmp_path / "via" / "a.yaml")
    assert named == real / "a.yaml"
    second = Workspace(tmp_path, stable=True)
    second.adopt(first.resolutions([named]))
    assert second.resolve(named) == named
    assert second.resolve(tmp_path / "via" / "a.yaml") == real / "a.yaml"


def test_resolve_mode_is_resolve_and_stat(tmp_path: Path) -> None:
    probes = _tree_of_every_kind(tmp_path) + [tmp_path / "proj" / ".." / "proj" / "requirements.txt", Path("rel.txt")]
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    ws = Workspace(tmp_path)
    for p in probes:
        real, mode = ws.resolve_mode(p)
        assert real == ws.resolve(p), p
        try:
            want: int | None = os.stat(real).st_mode
        except OSError:
            want = None
        assert mode == want, p
    with pytest.raises(RuntimeError):
        ws.resolve_mode(tmp_path / "loop" / "x.yaml")


def test_a_link_loop_raises_on_every_python(tmp_path: Path) -> None:
    """``resolve_path`` (and so ``Workspace.resolve``) raises RuntimeError on a loop, whatever
    Path.resolve does on this Python (3.13 stopped raising): a self-link, a two-link cycle, a
    directory loop below a name, and the first ``resolve`` of each through a fresh workspace."""
    from kimi_lsp.workspace import resolve_path

    (tmp_path / "self.yaml").symlink_to("self.yaml")
    (tmp_path / "a.yaml").symlink_to("b.yaml")
    (tmp_path / "b.yaml").symlink_to("a.yaml")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x").symlink_to("../d/x")
    (tmp_path / "ok.yaml").write_text("x: 1\n")
    (tmp_path / "to-ok.yaml").symlink_to("ok.yaml")
    for p in (tmp_path / "self.yaml", tmp_path / "a.yaml", tmp_path / "d" / "x" / "y.yaml",
              tmp_path / "self.yaml" / "z.yaml"):
        with pytest.raises(RuntimeError):
            resolve_path(p)
        with pytest.raises(RuntimeError):
            Workspace(tmp_path).resolve(p)
    assert resolve_path(tmp_path / "to-ok.yaml") == tmp_path / "ok.yaml"
    assert resolve_path(tmp_path / "missing" / "m.yaml") == tmp_path / "missing" / "m.yaml"
