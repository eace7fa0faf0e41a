"""The README and docs can be followed as written (issue 33): the suppression example suppresses
on the README's own example, install instructions name what exists (a clone, or the repository at
a commit: nothing is published or tagged), and the `repo: local` pre-commit snippet runs."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from kimi_lsp.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "k3-serving"
# what a user reads for setting up (docs/rules.md and docs/architecture.md are references)
DOCS = [ROOT / "README.md", ROOT / ".pre-commit-hooks.yaml", *(p for p in sorted((ROOT / "docs").glob("*.md")) if p.name not in ("rules.md", "architecture.md"))]


def readme_snippet(name: str) -> str:
    text = (ROOT / "README.md").read_text("utf-8")
    m = re.search(rf"<!-- snippet: {re.escape(name)} -->\s*```\w*\n(.*?)```\s*<!-- /snippet -->", text, re.DOTALL)
    assert m, f"README.md has no `{name}` snippet"
    return m.group(1)


def example_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "k3-serving"
    shutil.copytree(EXAMPLE, dst)
    (dst / ".git").mkdir()
    return dst


def check(cwd: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("KIMI_LSP_NO_CACHE", "1")
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        main(["--check", "--format", "json", "."])
    return sorted((d["path"], d["code"]) for d in json.loads(out.getvalue())["diagnostics"])


def test_the_suppression_example_suppresses_on_the_readme_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = example_copy(tmp_path)
    config = repo / "deploy" / "k3-dcp.yaml"
    assert check(repo, monkeypatch) == [("deploy/k3-dcp.yaml", "KL101"), ("deploy/k3-dcp.yaml", "KL329")]
    lines = config.read_text("utf-8").splitlines()
    for line in readme_snippet("suppression").splitlines():
        key = re.match(r"([\w-]+):", line)
        at = [i for i, old in enumerate(lines) if key and old.startswith(key.group(0))]
        if at:
            lines[at[0]] = line  # the README's line in place of the example's
        else:
            lines.append(line)
    config.write_text("\n".join(lines) + "\n", "utf-8")
    # before: `dcp-size: 8  # kimi-lsp: ignore[KL101]` left KL101 and added KL901
    assert check(repo, monkeypatch) == []


def test_install_instructions_name_what_exists() -> None:
    for doc in DOCS:
        text = doc.read_text("utf-8")
        # no kimi-lsp is published on a package index: `pip install kimi-lsp` installs nothing of ours
        assert not re.search(r"pip install\s+['\"]?kimi-lsp(\[[^\]]*\])?['\"]?(?!\s*@)(\s|$)", text, re.MULTILINE), doc
        assert not re.search(r"rev:\s*v\d", text), f"{doc}: no release is tagged"
        assert not re.search(r"kimi-lsp@v\d", text), f"{doc}: no release is tagged"


def _commits_named() -> set[str]:
    refs: set[str] = set()
    for doc in DOCS:
        text = doc.read_text("utf-8")
        refs.update(re.findall(r"rev:\s*([0-9a-f]{7,40})\b", text))
        refs.update(re.findall(r"kimi-lsp@([0-9a-f]{7,40})\b", text))
    return refs


def test_the_commits_the_docs_name_are_this_repositorys() -> None:
    refs = _commits_named()
    assert refs and all(len(r) == 40 for r in refs), refs  # a full id: pre-commit fetches it by name
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    shallow = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True, text=True)
    if shallow.stdout.strip() == "true":
        pytest.skip("a shallow clone has no history to look the commit up in")
    for ref in refs:
        done = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{ref}^{{commit}}"], capture_output=True)
        assert done.returncode == 0, f"{ref} is no commit of this repository"
        hooks = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:.pre-commit-hooks.yaml"], capture_output=True, text=True)
        assert "id: kimi-lsp" in hooks.stdout  # the hook the snippet names exists at that commit


def _shim(bin_dir: Path) -> None:
    """``kimi-lsp`` on PATH running this checkout (what `pip install .` puts there)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    exe = bin_dir / "kimi-lsp"
    exe.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT / "server"}" exec "{sys.executable}" -m kimi_lsp "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def test_the_local_pre_commit_snippet_runs_as_written(tmp_path: Path) -> None:
    pytest.importorskip("pre_commit")
    if shutil.which("git") is None:
        pytest.skip("pre-commit needs git")
    repo = tmp_path / "work"
    shutil.copytree(EXAMPLE, repo)
    (repo / ".pre-commit-config.yaml").write_text(readme_snippet("pre-commit-local"), "utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    _shim(tmp_path / "bin")
    env.update(PATH=f"{tmp_path / 'bin'}{os.pathsep}{env.get('PATH', '')}", PRE_COMMIT_HOME=str(tmp_path / "home"),
               KIMI_LSP_NO_CACHE="1", HOME=str(tmp_path), GIT_CONFIG_NOSYSTEM="1")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo, env=env,
                              text=True, capture_output=True, timeout=300, check=False)

    done = run()
    assert done.returncode == 1 and "KL101" in done.stdout, (done.stdout, done.stderr)
    (repo / "requirements.txt").write_text("sglang==0.5.23\nflashinfer-python==0.7.2\n", "utf-8")
    done = run()
    assert done.returncode == 0, (done.stdout, done.stderr)
