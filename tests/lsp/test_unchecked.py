"""A file the server could not check is never shown clean (issue 32, red team F4): a rule that
raises, or a lint that raises, leaves an error at the top of the file saying so (``--check`` exits
2 for the same), also when the file is re-linted document by document; a lone UTF-16 surrogate
sent by a client (no file on disk can hold one) does not make the YAML reader fail silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp import _record
from kimi_lsp.lsp.session import DocSnap, Session, without_lone_surrogates

from .conftest import K3_YAML, make_project
from .test_multidoc import manifest
from .test_multidoc import project as manifest_project


def _boom(ctx: object) -> object:
    raise RuntimeError("boom from a broken rule")


def _break(session: Session, code: str) -> None:
    """Make rule ``code`` raise in this session's engine."""
    engine = session.engine
    engine._rules = tuple(_record.replace(r, check=_boom) if r.code == code else r for r in engine._rules)
    engine._rules_for.clear()


def _codes(session: Session, path: Path) -> list[str]:
    return sorted(d.code for d in session.results[path].diagnostics)


def _open(root: Path, name: str, text: str, version: int = 1) -> tuple[Path, dict[Path, DocSnap]]:
    path = (root / name).resolve()
    return path, {path: DocSnap(path.as_uri(), version, text)}


def test_a_rule_that_raises_leaves_a_could_not_check_error(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    session = Session(root.resolve(), [root.resolve()])
    _break(session, "KL103")
    path, snaps = _open(root, "k3.yaml", K3_YAML)
    session.lint_paths({path}, snaps)
    assert _codes(session, path) == ["KL001", "KL101"]  # the other rules still ran
    (d,) = [d for d in session.results[path].diagnostics if d.code == "KL001"]
    assert d.location.span.start == 0 and d.severity.value == "error"
    assert "could not check" in d.message and "KL103" in d.message and "RuntimeError: boom" in d.message
    assert not session.engine.errors  # reported once, not carried into the next lint
    report = session.report(path, 1)
    assert any(i.code == "KL001" and i.range.start.line == 0 for i in report.items)


def test_a_lint_that_raises_leaves_a_could_not_check_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_project(tmp_path / "proj")
    session = Session(root.resolve(), [root.resolve()])

    def broken(path: Path) -> object:
        raise ValueError("a reader bug")

    monkeypatch.setattr(session.engine, "lint_file", broken)
    path, snaps = _open(root, "k3.yaml", K3_YAML)
    (r,) = session.lint_paths({path}, snaps)
    (item,) = r.items
    assert item.code == "KL001" and "could not check" in item.message and "ValueError: a reader bug" in item.message


def test_documents_relinted_alone_keep_the_error_after_an_edit_elsewhere(tmp_path: Path) -> None:
    """A multi-document manifest is re-linted by documents (multidoc.py): a result kept for an
    unchanged document must not drop the error its lint raised."""
    text = manifest(8)
    root, path = manifest_project(tmp_path, text)
    session = Session(root, [root])
    _break(session, "KL202")
    session.lint_paths({path}, {path: DocSnap(path.as_uri(), 1, text)})
    assert "KL001" in _codes(session, path)
    # a document with no launch changes: the others' results are kept, not linted again
    edited = text.replace("name: kimi-k3-3\nspec:\n  ports", "name: kimi-k3-33\nspec:\n  ports")
    assert edited != text
    session.lint_paths({path}, {path: DocSnap(path.as_uri(), 2, edited)})
    assert "KL001" in _codes(session, path)


def test_a_rule_that_works_again_clears_the_error(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    session = Session(root.resolve(), [root.resolve()])
    rules = session.engine._rules
    _break(session, "KL103")
    path, snaps = _open(root, "k3.yaml", K3_YAML)
    session.lint_paths({path}, snaps)
    assert "KL001" in _codes(session, path)
    session.engine._rules = rules
    session.engine._rules_for.clear()
    session.lint_paths({path}, _open(root, "k3.yaml", K3_YAML + "\n", 2)[1])
    assert _codes(session, path) == ["KL101"]


def test_a_lone_surrogate_from_the_client_keeps_the_launch_checked(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    session = Session(root.resolve(), [root.resolve()])
    path, snaps = _open(root, "k3.yaml", "# \ud800 half an emoji\n" + K3_YAML)
    (r,) = session.lint_paths({path}, snaps)
    assert [i.code for i in r.items] == ["KL101"]
    assert r.items[0].range.start.line == 3  # positions are the editor's text's


def test_without_lone_surrogates_keeps_length_and_pairs() -> None:
    text = "a\ud800b\U0001f600c\udfffé"
    out = without_lone_surrogates(text)
    assert out == "a\ufffdb\U0001f600c\ufffdé" and len(out) == len(text)
    plain = "model-path: x\n"
    assert without_lone_surrogates(plain) is plain


def test_a_reader_that_raises_leaves_a_could_not_check_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``read_surface`` turns a reader's exception into a note and no launch: in the editor that
    was a clean file."""
    from kimi_lsp import surfaces

    def broken(*args: object, **kwargs: object) -> object:
        raise KeyError("a reader bug")

    monkeypatch.setattr(surfaces, "read_surface_strict", broken)
    root = make_project(tmp_path / "proj")
    session = Session(root.resolve(), [root.resolve()])
    path, snaps = _open(root, "k3.yaml", K3_YAML)
    (r,) = session.lint_paths({path}, snaps)
    (item,) = r.items
    assert item.code == "KL001" and "could not check" in item.message and "KeyError" in item.message
    assert "(and" not in item.message  # the note is read more than once per lint: reported once
