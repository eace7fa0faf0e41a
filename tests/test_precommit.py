"""The pre-commit hooks (.pre-commit-hooks.yaml) and the README's pre-commit snippet, with the
real pre-commit from PyPI (the ``test`` extra).

pre-commit passes only the changed files, and may split them across processes; kimi-lsp treats a
pin file as "the launch files it governs" and finds those on disk. The hook definitions are read
by pre-commit's own manifest loader; the ``files`` regex is matched the way pre-commit matches
it; the partitions are computed by pre-commit's own ``xargs.partition``.

The end-to-end tests install the hook the way a user's pre-commit does (``language: python``:
a virtualenv and ``pip install .`` of a snapshot of this checkout, so the hook's dependencies
come from the package index). ``pre-commit try-repo`` always installs into a throwaway store,
so only one scenario uses it; the others run ``pre-commit run`` with the README's snippet
pointed at the same snapshot and share one store for the session: two installs in all.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kimi_lsp.cli.main import main
from kimi_lsp.engine import LAUNCH_SUFFIXES

ROOT = Path(__file__).resolve().parents[1]
PINS = Path(__file__).parent / "pins_fixtures"
HOOKS = ROOT / ".pre-commit-hooks.yaml"

K3 = (
    "# sglang --config for Kimi-K3 with decode context parallelism\n"
    "model-path: moonshotai/Kimi-K3\n"
    "tp-size: 8\n"
    "dcp-size: {dcp}\n"
    "decode-attention-backend: cutedsl_mla\n"
)


def _pre_commit():
    try:
        import pre_commit  # noqa: F401
    except ModuleNotFoundError:  # pragma: no cover - the test extra installs it
        pytest.fail("pre-commit is not installed: pip install -e '.[test]'")


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    for var in ("GITHUB_ACTIONS", "GITHUB_WORKSPACE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "no-hf-home"))


# -- the manifest ----------------------------------------------------------------------------


def hooks() -> dict[str, dict]:
    _pre_commit()
    from pre_commit.clientlib import load_manifest

    return {h["id"]: h for h in load_manifest(str(HOOKS))}


def test_manifest_is_valid_for_pre_commit() -> None:
    hs = hooks()
    assert set(hs) == {"kimi-lsp", "kimi-lsp-fix"}
    assert hs["kimi-lsp"]["entry"] == "kimi-lsp --check"
    assert hs["kimi-lsp-fix"]["entry"] == "kimi-lsp --check --fix"
    for h in hs.values():
        assert h["language"] == "python"
        assert h["require_serial"] is True
        assert h["pass_filenames"] is True
        assert h["minimum_pre_commit_version"] == "2.9.2"
        assert h["types"] == ["file"]  # the regex decides: pdm.lock and *.in get no identify tags
    assert hs["kimi-lsp"]["files"] == hs["kimi-lsp-fix"]["files"]
    # the console script the entry names exists
    scripts = __import__("kimi_lsp._toml", fromlist=["tomllib"]).tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert "kimi-lsp" in scripts


MATCH = [
    # pin files (lockfiles.md §7's verified list, and the requirements/ folder)
    "uv.lock", "poetry.lock", "pdm.lock", "Pipfile", "Pipfile.lock", "pylock.toml", "pylock.gpu.toml",
    "pyproject.toml", "sub/pyproject.toml", "requirements.txt", "requirements-gpu.in", "requirements_dev.txt",
    "Requirements.txt", "constraints.txt", "constraint.txt", "requirements/base.txt", "requirements/gpu.in",
    "environment.yml", "sub/environment.yaml", "conda-lock.yml", "linux.conda-lock.yaml",
    # launch files
    "Dockerfile", "Dockerfile.cu13", "Containerfile", "docker/serve.Dockerfile", "deploy/k3.yaml", "k8s/serve.yml",
    ".github/workflows/serve.yaml", "profiles/k3.toml", "kimi-lsp.toml", "launch.sh", "scripts/run.bash",
    "run.zsh", "jobs/k3.sbatch", "jobs/k3.slurm", "jobs/k3.pbs", "run.ksh", "checkpoints/config.json",
]
NO_MATCH = ["notes.txt", "setup.cfg", "Makefile", "uv.lock.bak", "README.txt", "notebook.ipynb.txt", "app.pyc"]
# documentation: launches in its code blocks (Markdown, MDX, reStructuredText)
MATCH += ["README.md", "docs/guide.rst", "docs/serve.mdx", "requirements.md"]
# notebooks and Python (read when their text names sglang)
MATCH += ["server/app.py", "notebooks/serve.ipynb", "tools/launch.pyw"]


def test_files_regex() -> None:
    rx = re.compile(hooks()["kimi-lsp"]["files"])
    for path in MATCH:
        assert rx.search(path), path
    for path in NO_MATCH:
        assert not rx.search(path), path


def test_files_regex_covers_what_kimi_lsp_reads() -> None:
    from kimi_lsp.pins.discovery import PIN_FILE_PATTERNS, pin_format

    rx = re.compile(hooks()["kimi-lsp"]["files"])
    for pattern in PIN_FILE_PATTERNS:
        name = pattern.replace("*", "x") if "pylock" not in pattern else pattern.replace("*", "gpu")
        assert pin_format(Path(name)) is not None, name
        assert rx.search(f"proj/{name}"), pattern
    for suffix in LAUNCH_SUFFIXES:
        assert rx.search(f"deploy/launch{suffix}"), suffix


# -- a pin file alone, as each pre-commit process may receive it ------------------------------


def kimi(args: list[str], cwd: Path, monkeypatch, capsys) -> tuple[int, str]:
    capsys.readouterr()
    monkeypatch.chdir(cwd)
    rc = main(args)
    return rc, capsys.readouterr().out


def _uv_project(root: Path, lock: str) -> None:
    (root / "deploy").mkdir(parents=True, exist_ok=True)
    (root / "deploy" / "k3.yaml").write_text(K3.format(dcp=8))
    shutil.copy(PINS / "uv-lock" / "range-old" / "pyproject.toml", root / "pyproject.toml")
    shutil.copy(PINS / "uv-lock" / lock / "uv.lock", root / "uv.lock")


def test_each_partition_rechecks_what_its_pin_files_govern(tmp_path, monkeypatch, capsys) -> None:
    _pre_commit()
    from pre_commit.xargs import partition

    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    _uv_project(root / "svc", "range-old")  # locks flashinfer 0.6.10
    # a shared requirements file, pulled in with -r by another project
    (root / "common").mkdir()
    (root / "common" / "requirements-gpu.txt").write_text("flashinfer-python==0.6.16.post4\n")
    (root / "batch" / "deploy").mkdir(parents=True)
    (root / "batch" / "requirements.txt").write_text("-r ../common/requirements-gpu.txt\n")
    (root / "batch" / "deploy" / "k3.yaml").write_text(K3.format(dcp=8))
    (root / "setup.cfg").write_text("[metadata]\n")
    changed = ["svc/uv.lock", "common/requirements-gpu.txt", "setup.cfg", "svc/pyproject.toml"]
    rx = re.compile(hooks()["kimi-lsp"]["files"])
    passed = [f for f in changed if rx.search(f)]
    assert passed == ["svc/uv.lock", "common/requirements-gpu.txt", "svc/pyproject.toml"]
    cmd = ("kimi-lsp", "--check")
    # one file per process: what a command line too long for one process comes to
    longest = max(len(f) for f in passed)
    parts = partition(cmd, passed, 1, _max_length=sum(len(c) + 1 for c in cmd) + longest + 2)
    assert [p[2:] for p in parts] == [(f,) for f in passed]
    seen = {}
    for p in parts:
        rc, out = kimi(["--check", *p[2:]], root, monkeypatch, capsys)
        seen[p[2]] = (rc, out)
    rc, out = seen["svc/uv.lock"]
    assert rc == 1 and "svc/deploy/k3.yaml:5:1: KL101" in out and "batch/" not in out
    rc, out = seen["common/requirements-gpu.txt"]
    assert rc == 1 and "batch/deploy/k3.yaml:5:1: KL101" in out and "svc/" not in out
    assert seen["svc/pyproject.toml"][0] == 1


# -- end to end with pre-commit ----------------------------------------------------------------


GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "kimi-lsp tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "kimi-lsp tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid",
    # after the newest release kimi-lsp knows: an unpinned launch committed then is judged by the
    # newest releases (a Kimi-K3 DCP launch dated January 2026 would be judged by the releases of
    # that day, which had no --dcp-size)
    "GIT_AUTHOR_DATE": "2026-11-15T00:00:00Z", "GIT_COMMITTER_DATE": "2026-11-15T00:00:00Z",
}


def _env_for(tmp: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PRE_COMMIT", "GIT_"))}
    env.pop("PYTHONPATH", None)  # the hook must run the installed snapshot, not this checkout
    env.update(GIT_ENV)
    env.update({"PRE_COMMIT_HOME": str(home), "HF_HOME": str(tmp / "no-hf-home"), "PRE_COMMIT_COLOR": "never"})
    return env


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    p = subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
                       cwd=repo, env=env, text=True, capture_output=True, check=True)
    return p.stdout


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory) -> tuple[Path, str]:
    """A git repository holding a snapshot of this checkout's installable parts."""
    _pre_commit()
    d = tmp_path_factory.mktemp("hook-repo")
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(ROOT / name, d / name)
    shutil.copytree(ROOT / "server" / "kimi_lsp", d / "server" / "kimi_lsp",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    git(d, "init", "-q")
    git(d, "add", "-A")
    git(d, "commit", "-q", "-m", "snapshot")
    return d, git(d, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="session")
def store(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def readme_snippet(name: str) -> str:
    text = (ROOT / "README.md").read_text("utf-8")
    m = re.search(rf"<!-- snippet: {re.escape(name)} -->\s*```\w*\n(.*?)```\s*<!-- /snippet -->", text, re.DOTALL)
    assert m, f"README.md has no `{name}` snippet"
    return m.group(1)


def snippet_config(hook_repo: tuple[Path, str], hook_id: str = "kimi-lsp") -> str:
    """The README's .pre-commit-config.yaml, pointed at the local snapshot."""
    text = readme_snippet("pre-commit")
    cfg = yaml.safe_load(text)
    (entry,) = cfg["repos"]
    assert entry["repo"] == "https://github.com/kimi-lsp/kimi-lsp"
    assert [h["id"] for h in entry["hooks"]] == ["kimi-lsp"]
    text = text.replace(entry["repo"], str(hook_repo[0])).replace(f"rev: {entry['rev']}", f"rev: {hook_repo[1]}")
    return text.replace("id: kimi-lsp", f"id: {hook_id}")


def work_repo(tmp: Path, files: dict[str, str | Path], config: str | None = None) -> Path:
    repo = tmp / "work"
    repo.mkdir()
    for rel, content in files.items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copy(content, p)
        else:
            p.write_text(content)
    if config is not None:
        (repo / ".pre-commit-config.yaml").write_text(config)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def pre_commit(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=repo, env=env, text=True,
                          capture_output=True, timeout=600, check=False)


@pytest.mark.slow
def test_try_repo_lockfile_only_change(tmp_path, hook_repo) -> None:
    repo = work_repo(tmp_path, {
        "deploy/k3.yaml": K3.format(dcp=8),
        "pyproject.toml": PINS / "uv-lock" / "range-old" / "pyproject.toml",
        "uv.lock": PINS / "uv-lock" / "ok" / "uv.lock",  # flashinfer 0.6.17: fine
    })
    shutil.copy(PINS / "uv-lock" / "range-old" / "uv.lock", repo / "uv.lock")  # re-locked to 0.6.10
    git(repo, "add", "uv.lock")
    assert git(repo, "diff", "--cached", "--name-only").split() == ["uv.lock"]
    p = pre_commit(repo, _env_for(tmp_path, tmp_path / "throwaway"), "try-repo", str(hook_repo[0]), "kimi-lsp",
                   "--ref", hook_repo[1], "--color", "never")
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert re.search(r"^kimi-lsp\.+Failed$", p.stdout, re.MULTILINE), out
    assert "deploy/k3.yaml:5:1: KL101 " in out
    assert "flashinfer-python 0.6.10 locked in uv.lock" in out


@pytest.mark.slow
def test_readme_snippet_checks_a_changed_launch_file(tmp_path, hook_repo, store) -> None:
    repo = work_repo(tmp_path, {
        "deploy/k3.yaml": K3.format(dcp=1),
        "requirements.txt": "flashinfer-python==0.6.16.post4\n",
    }, snippet_config(hook_repo))
    env = _env_for(tmp_path, store)
    (repo / "deploy" / "k3.yaml").write_text("# serving\n" + K3.format(dcp=1))
    git(repo, "add", "-A")
    p = pre_commit(repo, env, "run", "--color", "never")
    assert p.returncode == 0, p.stdout + p.stderr
    assert re.search(r"^kimi-lsp\.+Passed$", p.stdout, re.MULTILINE), p.stdout
    (repo / "deploy" / "k3.yaml").write_text(K3.format(dcp=8))
    git(repo, "add", "-A")
    p = pre_commit(repo, env, "run", "--color", "never")
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(r"^kimi-lsp\.+Failed$", p.stdout, re.MULTILINE)
    assert "deploy/k3.yaml:5:1: KL101 [*] " in p.stdout


@pytest.mark.slow
def test_fix_hook_edits_the_pin_then_passes(tmp_path, hook_repo, store) -> None:
    repo = work_repo(tmp_path, {
        "deploy/k3.yaml": K3.format(dcp=8),
        "requirements.txt": "# gpu stack\nflashinfer-python==0.6.16.post4\n",
    }, snippet_config(hook_repo, "kimi-lsp-fix"))
    env = _env_for(tmp_path, store)
    (repo / "deploy" / "k3.yaml").write_text("# two nodes\n" + K3.format(dcp=8))
    git(repo, "add", "-A")
    p = pre_commit(repo, env, "run", "--color", "never")
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(r"^kimi-lsp \(fix\)\.+Failed$", p.stdout, re.MULTILINE), p.stdout
    assert "files were modified by this hook" in p.stdout
    assert "Fixed requirements.txt: Bump flashinfer-python to 0.6.17" in p.stdout
    assert (repo / "requirements.txt").read_text() == "# gpu stack\nflashinfer-python==0.6.17\n"
    git(repo, "add", "-A")
    p = pre_commit(repo, env, "run", "--color", "never")
    assert p.returncode == 0, p.stdout + p.stderr
    assert re.search(r"^kimi-lsp \(fix\)\.+Passed$", p.stdout, re.MULTILINE), p.stdout
