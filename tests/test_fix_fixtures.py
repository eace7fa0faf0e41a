"""``kimi-lsp --check --fix`` end to end on every ``tests/fixtures/fix_*`` case.

A case with ``X.fixed`` files is a pin format with a safe edit: after ``--fix`` each ``X`` reads
as its ``.fixed`` twin, every other file (the lockfiles above all) is byte-identical, the fixed
codes are gone, a second ``--fix`` changes nothing, and the exit code says whether errors remain:
where a lock now disagrees with the bumped manifest that is KL104 (the re-lock command is named).
A case without ``.fixed`` files has no safe edit (a lockfile, hashed requirements): nothing is
written and the run fails. (tests/test_fixtures.py checks the same cases' ``# expect``
annotations and fixed texts through the library.)
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kimi_lsp.cli.main import main

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name.startswith("fix_"))

# what --fix must leave behind: a stale lock until the named command re-locks
AFTER_FIX = {
    "fix_pyproject_poetry": ({"KL104"}, "poetry update --lock flashinfer-python"),
    "fix_pyproject_uv_lock": ({"KL104"}, "uv lock --upgrade-package flashinfer-python"),
    "fix_pipfile": ({"KL104"}, "pipenv lock"),
    "fix_pyproject_uv_override": (set(), "uv lock --upgrade-package flashinfer-python"),
}
# every pin format with a safe text edit has a case (lockfiles.md §5)
SAFE_FORMATS = {
    "fix_requirements": "requirements.txt",
    "fix_constraints": "constraints.txt",
    "fix_pyproject_uv_lock": "pyproject.toml",  # PEP 621 dependencies
    "fix_pyproject_poetry": "pyproject.toml",
    "fix_pyproject_uv_override": "pyproject.toml",
    "fix_pipfile": "Pipfile",
    "fix_environment_yml": "environment.yml",
    "fix_dockerfile": "Dockerfile",  # RUN pip install; arg.Dockerfile: ARG default
    "fix_shell_pip_install": "serve.sh",
    "fix_markdown_pip_line": "DEPLOY.md",  # a pip line in a documentation code block (CRLF kept)
    "fix_notebook_pip_line": "k3_dcp.ipynb",  # a notebook's `!pip install` cell (a JSON string, escaped quotes kept)
    "fix_notebook_percent_pip": "k3_dcp.ipynb",  # `%pip install` and a `%%capture` cell's `%uv pip install`
    "fix_companion_trio": "requirements.txt",
}
NO_SAFE_FIX = {"fix_uv_lock": "uv.lock", "fix_poetry_lock": "poetry.lock", "fix_hashed_requirements": "requirements.txt"}


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    for var in ("GITHUB_ACTIONS", "GITHUB_WORKSPACE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "no-hf-home"))


def kimi(args: list[str], cwd: Path, monkeypatch, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    monkeypatch.chdir(cwd)
    rc = main(args)
    out, err = capsys.readouterr()
    return rc, out, err


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.parts}


def test_every_safe_format_and_lock_has_a_case() -> None:
    for case, name in SAFE_FORMATS.items():
        assert (FIXTURES / case / f"{name}.fixed").is_file(), case
    assert (FIXTURES / "fix_dockerfile" / "arg.Dockerfile.fixed").is_file()
    for case, name in NO_SAFE_FIX.items():
        assert (FIXTURES / case / name).is_file() and not list((FIXTURES / case).rglob("*.fixed")), case
    assert set(CASES) == set(SAFE_FORMATS) | set(NO_SAFE_FIX)


@pytest.mark.parametrize("case", CASES)
def test_fix_case(case: str, tmp_path: Path, monkeypatch, capsys) -> None:
    root = tmp_path / case
    shutil.copytree(FIXTURES / case, root, ignore=shutil.ignore_patterns("*.fixed"))
    (root / ".git").mkdir()
    before = files(root)
    rc0, out, _ = kimi(["--check", "--format", "json", "."], root, monkeypatch, capsys)
    codes_before = {d["code"] for d in json.loads(out)["diagnostics"]}
    assert rc0 == 1 and "KL101" in codes_before

    rc, out, err = kimi(["--check", "--fix", "."], root, monkeypatch, capsys)
    after = files(root)
    twins = {p.relative_to(FIXTURES / case).as_posix()[: -len(".fixed")]: p.read_bytes()
             for p in (FIXTURES / case).rglob("*.fixed")}
    for rel, data in before.items():
        if rel in twins:
            assert after[rel] == twins[rel], f"{rel} after --fix differs from {rel}.fixed"
        else:
            assert after[rel] == data, f"{rel} changed without a .fixed twin"
    assert set(after) == set(before)

    _, out2, _ = kimi(["--check", "--format", "json", "."], root, monkeypatch, capsys)
    remaining = {d["code"] for d in json.loads(out2)["diagnostics"]}
    if case in NO_SAFE_FIX:
        assert rc == 1 and "KL101" in remaining and not out.startswith("Fixed")
        return
    expected, followup = AFTER_FIX.get(case, (set(), None))
    assert remaining == expected, f"after --fix: {sorted(remaining)}"
    assert rc == (1 if expected else 0), out + err
    assert out.startswith("Fixed ")
    if followup:
        assert f"Now run: {followup}" in out.splitlines()
    # a second --fix has nothing left to do
    rc2, out3, _ = kimi(["--check", "--fix", "."], root, monkeypatch, capsys)
    assert files(root) == after and rc2 == rc and not out3.startswith("Fixed")
