"""Pin discovery: which projects and pin files govern a launch file, in which order."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kimi_lsp.pins import discovery, locks
from kimi_lsp.pins.discovery import Project, discover, governed_roots, manifest_for_lock, pin_format
from kimi_lsp.workspace import SourceText, Workspace

FIXTURES = Path(__file__).resolve().parents[1] / "pins_fixtures"
FI = "flashinfer-python"


class CountingWorkspace(Workspace):
    """Counts how often each file's text is actually read (a new object from ``read``)."""

    def __init__(self, root: Path | None = None) -> None:
        super().__init__(root)
        self.reads: dict[Path, int] = {}
        self._seen: set[int] = set()

    def read(self, path: Path):  # type: ignore[override]
        got = super().read(path)
        if id(got) not in self._seen:
            self._seen.add(id(got))
            self.reads[got.path] = self.reads.get(got.path, 0) + 1
        return got


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    return repo


def _names(project: Project) -> tuple[list[str], list[str]]:
    return [s.path.name for s in project.locks], [s.path.name for s in project.manifests]


POETRY_LOCK = (FIXTURES / "poetry-lock/pinned-old/poetry.lock").read_text(encoding="utf-8")
UV_LOCK = (FIXTURES / "uv-lock/fork/uv.lock").read_text(encoding="utf-8")
PDM_LOCK = (FIXTURES / "pdm-lock/range-old/pdm.lock").read_text(encoding="utf-8")


# -- pin_format --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        ("a/requirements.txt", "requirements"),
        ("a/requirements-gpu.in", "requirements"),
        ("a/requirements/base.txt", "requirements"),
        ("a/requirements/constraints.txt", "constraints"),
        ("a/constraints.txt", "constraints"),
        ("a/constraints-cu13.txt", "constraints"),
        ("a/pyproject.toml", "pyproject"),
        ("a/uv.lock", "uv.lock"),
        ("a/poetry.lock", "poetry.lock"),
        ("a/pdm.lock", "pdm.lock"),
        ("a/Pipfile", "Pipfile"),
        ("a/Pipfile.lock", "Pipfile.lock"),
        ("a/pylock.toml", "pylock"),
        ("a/pylock.gpu.toml", "pylock"),
        ("a/environment.yml", "environment.yml"),
        ("a/environment.yaml", "environment.yml"),
        ("a/conda-lock.yml", "conda-lock"),
        ("a/k3.conda-lock.yml", "conda-lock"),
        ("a/pylock.a.b.toml", None),
        ("a/notes.txt", None),
        ("a/k3.yaml", None),
        ("a/settings.toml", None),
        ("a/Dockerfile", None),
    ],
)
def test_pin_format(path: str, fmt: str | None) -> None:
    assert pin_format(Path("/r") / path) == fmt


def test_patterns_and_pin_format_agree() -> None:
    # every literal name in PIN_FILE_PATTERNS is a pin file
    for pattern in discovery.PIN_FILE_PATTERNS:
        if "*" not in pattern:
            assert pin_format(Path("/r") / pattern) is not None, pattern


# -- discover ----------------------------------------------------------------------------------


def test_nearest_project_first_and_repo_root_bound(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(tmp_path / "requirements.txt", "flashinfer-python==0.6.10\n")  # above the repo: ignored
    _write(repo / "requirements.txt", "flashinfer-python==0.6.16.post4\n")
    _write(repo / "services/k3/requirements.txt", "flashinfer-python==0.6.17\n")
    launch = _write(repo / "services/k3/deploy/k3.yaml", "model-path: x\n")
    gov = discover(launch, Workspace(repo), repo)
    assert gov.searched == (repo / "services/k3/deploy", repo / "services/k3", repo / "services", repo)
    assert [p.dir for p in gov.projects] == [repo / "services/k3", repo]
    assert [p.version for p in gov.projects[0].manifests[0].pins_for(FI)] == ["0.6.17"]
    assert gov.own == ()


def test_launch_outside_repo_root_searches_only_its_dir(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(tmp_path / "elsewhere/requirements.txt", "flashinfer-python==0.6.10\n")
    launch = _write(tmp_path / "elsewhere/sub/k3.yaml", "x: 1\n")
    gov = discover(launch, Workspace(repo), repo)
    assert gov.searched == (tmp_path / "elsewhere/sub",) and gov.projects == ()


def test_without_repository_the_workspace_root_bounds(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _write(tmp_path / "requirements.txt", "flashinfer-python==0.6.10\n")
    _write(root / "requirements.txt", "flashinfer-python==0.6.17\n")
    launch = _write(root / "deploy/k3.yaml", "x: 1\n")
    gov = discover(launch, Workspace(root), Path("/"))  # find_repo_root's "no .git" answer
    assert gov.searched == (root / "deploy", root)
    assert [p.dir for p in gov.projects] == [root]


def test_lock_first_primary_lock_matches_the_manifest_tool(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(
        repo / "pyproject.toml",
        '[tool.poetry]\nname = "x"\nversion = "0"\n[tool.poetry.dependencies]\nflashinfer-python = "0.6.16.post4"\n',
    )
    _write(repo / "poetry.lock", POETRY_LOCK)
    _write(repo / "uv.lock", UV_LOCK)
    _write(repo / "pylock.toml", (FIXTURES / "pylock/pip-lock/pylock.toml").read_text())
    _write(repo / "requirements.txt", "flashinfer-python==0.6.10\n")
    launch = _write(repo / "k3.yaml", "x: 1\n")
    (project,) = discover(launch, Workspace(repo), repo).projects
    locks, manifests = _names(project)
    assert locks == ["poetry.lock", "uv.lock", "pylock.toml"]
    assert manifests == ["pyproject.toml", "requirements.txt"]
    assert all(s.is_lock for s in project.locks) and not any(s.is_lock for s in project.manifests)


def test_bare_pyproject_makes_uv_lock_primary(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(repo / "pyproject.toml", '[project]\nname = "x"\nversion = "0"\ndependencies = ["flashinfer-python"]\n')
    _write(repo / "pdm.lock", PDM_LOCK)
    _write(repo / "uv.lock", UV_LOCK)
    (project,) = discover(_write(repo / "k3.yaml", ""), Workspace(repo), repo).projects
    assert _names(project)[0] == ["uv.lock", "pdm.lock"]


def test_compiled_requirements_are_a_lock_and_come_after_tool_locks(tmp_path: Path) -> None:
    src = FIXTURES / "pip-compile/hashed"
    repo = _repo(tmp_path)
    for f in src.iterdir():
        shutil.copy(f, repo / f.name)
    _write(repo / "Pipfile", '[packages]\nflashinfer-python = "==0.6.10"\n')
    _write(repo / "Pipfile.lock", (FIXTURES / "pipfile-lock/pinned/Pipfile.lock").read_text())
    (project,) = discover(_write(repo / "k3.yaml", ""), Workspace(repo), repo).projects
    locks, manifests = _names(project)
    assert locks == ["Pipfile.lock", "requirements.txt"]
    assert manifests == ["Pipfile", "requirements.in", "constraints.txt"]
    compiled = project.locks[1]
    assert compiled.format == "requirements" and compiled.tool == "pip-tools"
    assert manifest_for_lock(compiled, project).path.name == "requirements.in"
    assert manifest_for_lock(project.locks[0], project).path.name == "Pipfile"


def test_requirements_folder_and_includes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(repo / "requirements/base.txt", "-c ../constraints/gpu.txt\nflashinfer-python>=0.6.10\n")
    _write(repo / "constraints/gpu.txt", "flashinfer-python<0.6.17\n")
    (project,) = discover(_write(repo / "k3.yaml", ""), Workspace(repo), repo).projects
    assert project.dir == repo
    fmts = [(s.path.relative_to(repo).as_posix(), s.format) for s in project.manifests]
    assert fmts == [("requirements/base.txt", "requirements"), ("constraints/gpu.txt", "constraints")]


def test_own_pins_from_a_dockerfile(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(repo / "requirements.txt", "flashinfer-python==0.6.17\n")
    dockerfile = _write(
        repo / "docker/Dockerfile",
        "FROM python:3.11\nRUN pip install flashinfer-python==0.6.10\nCMD python -m sglang.launch_server\n",
    )
    gov = discover(dockerfile, Workspace(repo), repo, own_kind="dockerfile")
    (own,) = gov.own
    assert own.path == dockerfile and own.format == "dockerfile"
    assert [p.version for p in own.pins_for(FI)] == ["0.6.10"]
    assert [p.dir for p in gov.projects] == [repo]
    # without own_kind the launch file's installs are not read
    assert discover(dockerfile, Workspace(repo), repo).own == ()


def test_own_pins_of_an_unreadable_launch_file(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    launch = repo / "run.sh"
    launch.write_bytes(b"pip install \xff\n")
    assert discover(launch, Workspace(repo), repo, own_kind="shell").own == ()


def _uv_workspace(tmp_path: Path) -> Path:
    repo = _repo(tmp_path)
    shutil.copytree(FIXTURES / "uv-lock/workspace", repo, dirs_exist_ok=True)
    return repo


def test_uv_workspace_member_is_governed_by_the_root_lock(tmp_path: Path) -> None:
    repo = _uv_workspace(tmp_path)
    launch = _write(repo / "packages/serve/deploy/k3.yaml", "x: 1\n")
    gov = discover(launch, Workspace(repo), repo)
    member, root = gov.projects
    assert member.dir == repo / "packages/serve" and root.dir == repo
    (lock,) = member.locks
    assert lock.path == repo / "uv.lock" and lock is root.locks[0]
    assert [p.version for p in lock.pins_for(FI)] == ["0.6.16.post4"]
    # the fix edits the member's own pyproject, not the root's
    assert manifest_for_lock(lock, member).path == repo / "packages/serve/pyproject.toml"
    assert manifest_for_lock(lock, root).path == repo / "pyproject.toml"


def test_uv_workspace_excluded_and_non_members(tmp_path: Path) -> None:
    repo = _uv_workspace(tmp_path)
    root_py = repo / "pyproject.toml"
    text = root_py.read_text().replace('members = ["packages/*"]', 'members = ["packages/*"]\nexclude = ["packages/legacy"]')
    root_py.write_text(text)
    _write(repo / "packages/legacy/pyproject.toml", '[project]\nname = "legacy"\nversion = "0"\n')
    _write(repo / "tools/pyproject.toml", '[project]\nname = "tools"\nversion = "0"\n')
    ws = Workspace(repo)
    legacy = discover(_write(repo / "packages/legacy/k3.yaml", ""), ws, repo).projects[0]
    tools = discover(_write(repo / "tools/k3.yaml", ""), ws, repo).projects[0]
    assert legacy.locks == () and tools.locks == ()


def test_uv_workspace_member_with_its_own_poetry_lock_keeps_it(tmp_path: Path) -> None:
    repo = _uv_workspace(tmp_path)
    serve = repo / "packages/serve"
    _write(
        serve / "pyproject.toml",
        '[tool.poetry]\nname = "serve"\n[tool.poetry.dependencies]\nflashinfer-python = "0.6.16.post4"\n',
    )
    _write(serve / "poetry.lock", POETRY_LOCK)
    member = discover(_write(serve / "k3.yaml", ""), Workspace(repo), repo).projects[0]
    assert _names(member)[0] == ["poetry.lock"]


def test_glob_match() -> None:
    assert discovery._glob_match("packages/serve", "packages/*")
    assert not discovery._glob_match("packages/serve/sub", "packages/*")
    assert discovery._glob_match("a/b/c", "a/**")
    assert discovery._glob_match("libs/x", "libs/x/")
    assert not discovery._glob_match("other", "packages/*")


# -- caching -----------------------------------------------------------------------------------


def test_each_pin_file_is_read_once_for_many_launch_files(tmp_path: Path) -> None:
    repo = _uv_workspace(tmp_path)
    _write(repo / "requirements.txt", "-r requirements-base.txt\n")
    _write(repo / "requirements-base.txt", "flashinfer-python==0.6.10\n")
    launches = [_write(repo / f"packages/serve/deploy/k3-{i}.yaml", "x: 1\n") for i in range(50)]
    ws = CountingWorkspace(repo)
    govs = [discover(p, ws, repo) for p in launches]
    pin_reads = {p.relative_to(repo).as_posix(): n for p, n in ws.reads.items() if pin_format(p)}
    assert pin_reads == {
        "uv.lock": 1,
        "pyproject.toml": 1,
        "packages/serve/pyproject.toml": 1,
        "requirements.txt": 1,
        "requirements-base.txt": 1,
    }
    # the same PinSource objects are handed out again
    assert govs[0].projects[0].locks[0] is govs[-1].projects[0].locks[0]


def test_parse_happens_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    _write(repo / "uv.lock", UV_LOCK)
    calls: list[str] = []
    real = locks.read_lock

    def counting(src: SourceText, fmt: str):
        calls.append(fmt)
        return real(src, fmt)

    monkeypatch.setattr(locks, "read_lock", counting)  # (discovery imports it where it reads a lock)
    ws = Workspace(repo)
    for i in range(20):
        discover(_write(repo / f"d{i % 3}/k3-{i}.yaml", ""), ws, repo)
    assert calls == ["uv.lock"]


def test_overlay_and_invalidate_are_seen(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    req = _write(repo / "requirements.txt", "flashinfer-python==0.6.10\n")
    launch = _write(repo / "k3.yaml", "")
    ws = Workspace(repo)

    def version() -> list[str | None]:
        return [p.version for p in discover(launch, ws, repo).projects[0].manifests[0].pins_for(FI)]

    assert version() == ["0.6.10"]
    ws.set_overlay(req, "flashinfer-python==0.6.17\n")  # an unsaved editor buffer
    assert version() == ["0.6.17"]
    ws.drop_overlay(req)
    assert version() == ["0.6.10"]
    req.write_text("flashinfer-python==0.6.18\n")
    ws.invalidate(req)
    assert version() == ["0.6.18"]


def test_included_file_change_rereads_the_tree(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(repo / "requirements.txt", "-r ../common/base.txt\n")
    base = _write(tmp_path / "common/base.txt", "flashinfer-python==0.6.10\n")
    ws = Workspace(repo)
    first = discovery.read_pin_file(repo / "requirements.txt", ws)
    assert [p.version for s in first for p in s.pins_for(FI)] == ["0.6.10"]
    ws.set_overlay(base, "flashinfer-python==0.6.17\n")
    again = discovery.read_pin_file(repo / "requirements.txt", ws)
    assert [p.version for s in again for p in s.pins_for(FI)] == ["0.6.17"]


def test_new_pin_file_in_a_cached_directory_is_found(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    launch = _write(repo / "deploy/k3.yaml", "")
    ws = Workspace(repo)
    assert discover(launch, ws, repo).projects == ()
    _write(repo / "deploy/uv.lock", UV_LOCK)
    st = os.stat(repo / "deploy")
    os.utime(repo / "deploy", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # coarse-clock file systems
    (project,) = discover(launch, ws, repo).projects
    assert _names(project)[0] == ["uv.lock"]
    discovery.clear_cache(ws)
    assert discover(launch, ws, repo).projects[0].dir == repo / "deploy"


def test_unreadable_pin_file_is_a_problem(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "poetry.lock").write_bytes(b'[[package]]\nname = "\xff"\n')
    (project,) = discover(_write(repo / "k3.yaml", ""), Workspace(repo), repo).projects
    (lock,) = project.locks
    assert lock.pins == () and "not valid UTF-8" in lock.problems[0].message


# -- governed_roots / manifest_for_lock -------------------------------------------------------


def test_governed_roots(tmp_path: Path) -> None:
    repo = _uv_workspace(tmp_path)
    ws = Workspace(repo)
    assert governed_roots(repo / "uv.lock", ws, repo) == (repo,)
    assert governed_roots(repo / "packages/serve/pyproject.toml", ws, repo) == (repo / "packages/serve",)
    _write(repo / "requirements/gpu.txt", "flashinfer-python==0.6.10\n")
    assert governed_roots(repo / "requirements/gpu.txt", ws, repo) == (repo,)


def test_governed_roots_follow_includers(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    common = _write(repo / "common/constraints.txt", "flashinfer-python<0.6.17\n")
    _write(repo / "services/a/requirements.txt", "-c ../../common/constraints.txt\nflashinfer-python\n")
    _write(repo / "services/b/requirements.txt", "flashinfer-python==0.6.17\n")
    _write(repo / ".venv/lib/requirements.txt", "-c ../../common/constraints.txt\n")  # skipped
    roots = governed_roots(common, Workspace(repo), repo)
    assert roots == (repo / "common", repo / "services/a")


@pytest.mark.parametrize(
    ("case", "lock", "manifest"),
    [
        ("uv-lock/range-old", "uv.lock", "pyproject.toml"),
        ("poetry-lock/sglang", "poetry.lock", "pyproject.toml"),
        ("pdm-lock/range-old", "pdm.lock", "pyproject.toml"),
        ("pipfile-lock/pinned", "Pipfile.lock", "Pipfile"),
        ("pylock/uv-export", "pylock.toml", "pyproject.toml"),
        ("pylock/pip-lock", "pylock.toml", "requirements.in"),
        ("conda-lock/pip-entries", "conda-lock.yml", "environment.yml"),
        ("pip-compile/hashed", "requirements.txt", "requirements.in"),
    ],
)
def test_manifest_for_lock_on_the_real_fixtures(tmp_path: Path, case: str, lock: str, manifest: str) -> None:
    repo = _repo(tmp_path)
    shutil.copytree(FIXTURES / case, repo, dirs_exist_ok=True)
    (project,) = discover(_write(repo / "k3.yaml", ""), Workspace(repo), repo).projects
    assert project.locks[0].path.name == lock
    found = manifest_for_lock(project.locks[0], project)
    assert found is not None and found.path == repo / manifest


def test_manifest_for_lock_without_a_manifest(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(repo / "poetry.lock", POETRY_LOCK)
    (project,) = discover(_write(repo / "k3.yaml", ""), Workspace(repo), repo).projects
    assert manifest_for_lock(project.locks[0], project) is None
