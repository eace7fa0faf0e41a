"""kimi-lsp's own tree passes `kimi-lsp --check .` (issue 33: it reported 529 problems), and the
`exclude` that makes it so does not hide what a user names: the README's demo
(`kimi-lsp --check examples/k3-serving`) still reports its findings from the repository root."""
from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from kimi_lsp.cli.main import main

from ._support import make_repo

ROOT = Path(__file__).resolve().parents[2]
K3 = "model-path: moonshotai/Kimi-K3\ntp-size: 8\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"


def check(cwd: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict[str, object]]:
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("KIMI_LSP_NO_CACHE", "1")
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        rc = main(["--check", "--format", "json", "--jobs", "1", *args])
    return rc, json.loads(out.getvalue())


def paths(doc: dict[str, object]) -> list[str]:
    return sorted({d["path"] for d in doc["diagnostics"]})  # type: ignore[attr-defined,index]


def test_the_repository_checks_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    rc, doc = check(ROOT, ".", monkeypatch=monkeypatch)
    assert doc["diagnostics"] == [], [(d["path"], d["line"], d["code"]) for d in doc["diagnostics"]]  # type: ignore[index,union-attr]
    assert rc == 0


def test_the_readme_demo_still_reports_from_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    rc, doc = check(ROOT, "examples/k3-serving", monkeypatch=monkeypatch)
    codes = sorted(d["code"] for d in doc["diagnostics"])  # type: ignore[attr-defined,union-attr]
    assert (rc, codes) == (1, ["KL101", "KL329"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    (repo / "pyproject.toml").write_text('[tool.kimi-lsp]\nexclude = ["examples/**", "**/skip/**"]\n', "utf-8")
    for d in ("examples/demo", "examples/demo/skip", "examples/nested", "src"):
        (repo / d).mkdir(parents=True)
        (repo / d / "requirements.txt").write_text("flashinfer-python==0.6.16.post4\n", "utf-8")
        (repo / d / "k3.yaml").write_text(K3, "utf-8")
    # a project with its own configuration inside an excluded directory
    (repo / "examples/nested/kimi-lsp.toml").write_text('select = ["KL"]\n', "utf-8")
    return repo


def test_exclude_hides_a_walked_tree_even_under_a_nested_configuration(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, doc = check(project, ".", monkeypatch=monkeypatch)
    assert paths(doc) == ["src/k3.yaml"]  # before: examples/nested/k3.yaml too (its own settings had no exclude)


def test_a_named_directory_is_checked_though_excluded(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, doc = check(project, "examples/demo", monkeypatch=monkeypatch)
    # the glob that covers the named directory does not apply below it; the others still do
    assert paths(doc) == ["examples/demo/k3.yaml"]
    _, doc = check(project, "examples", monkeypatch=monkeypatch)
    assert paths(doc) == ["examples/demo/k3.yaml", "examples/nested/k3.yaml"]


def test_named_files_are_still_excluded(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # what pre-commit passes: an excluded file stays excluded (ruff's --force-exclude)
    rc, doc = check(project, "examples/demo/k3.yaml", "src/k3.yaml", monkeypatch=monkeypatch)
    assert paths(doc) == ["src/k3.yaml"]
