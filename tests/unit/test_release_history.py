"""The day a launch file was last committed bounds the releases it is judged by (gitdate.py), when
nothing in the repository names one; reading the history executes nothing the repository
configures; a file being edited, a shallow clone and a directory without history say so."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kimi_lsp.engine import Engine
from kimi_lsp.gitdate import LastChange, NoDate, last_change
from kimi_lsp.knowledge.schema import shipped_versions
from kimi_lsp.release import releases_at
from kimi_lsp.workspace import Workspace

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

LAUNCH = """#!/bin/bash
python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --cuda-graph-max-bs 256
"""


def _git(repo: Path, *args: str, day: str = "2025-11-20") -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": f"{day}T10:00:00Z", "GIT_COMMITTER_DATE": f"{day}T10:00:00Z",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent)}
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


def _repo(tmp_path: Path, day: str = "2025-11-20") -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "serve.sh").write_text(LAUNCH)
    _git(repo, "add", "serve.sh")
    _git(repo, "commit", "-q", "-m", "launch", day=day)
    return repo


def _lint(repo: Path, overlay: str | None = None) -> list:
    ws = Workspace(repo, stable=overlay is None)
    if overlay is not None:
        ws.set_overlay(repo / "serve.sh", overlay)
    return Engine(ws).lint_file(repo / "serve.sh").diagnostics


def test_releases_at_a_day_are_the_recent_ones_then_and_the_next() -> None:
    # 2025-11-20: 0.5.5.post3 (11-17) is the newest; 0.5.6 (12-03) comes next
    assert releases_at("2025-11-20") == ("0.5.3.post3", "0.5.4.post3", "0.5.5.post3", "0.5.6")
    assert releases_at("2020-01-01") == ()  # before every release: nothing speaks for it
    assert releases_at("2099-01-01")[-1] not in releases_at("2025-11-20")


def test_a_launch_committed_in_2025_is_judged_by_2025_releases(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    changed = last_change(repo / "serve.sh", repo)
    assert isinstance(changed, LastChange) and changed.day == "2025-11-20" and not changed.shallow
    diags = _lint(repo)
    # --cuda-graph-max-bs is valid on every release of that time: no failure, only staleness
    assert [d.code for d in diags] == ["KL240"]
    # judged by that day's release, and named stale against today's newest (whichever the store holds)
    assert "0.5.5.post3" in diags[0].message and f"today's sglang {shipped_versions()[-1]} " in diags[0].message


def test_a_file_being_edited_is_judged_by_todays_releases(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "serve.sh").write_text(LAUNCH + "# edited\n")
    assert isinstance(last_change(repo / "serve.sh", repo), NoDate)
    diags = _lint(repo)
    assert [d.code for d in diags] == ["KL201"]
    assert "not yet committed" in diags[0].message and "today's newest releases" in diags[0].message


def test_an_unsaved_editor_buffer_is_being_written_now(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert [d.code for d in _lint(repo, overlay=LAUNCH)] == ["KL240"]  # the committed text
    assert [d.code for d in _lint(repo, overlay=LAUNCH + "\n")] == ["KL201"]


def test_a_shallow_clone_says_the_day_may_be_late(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "other.txt").write_text("x\n")
    _git(repo, "add", "other.txt")
    _git(repo, "commit", "-q", "-m", "later", day="2026-02-01")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)], check=True, capture_output=True)
    changed = last_change(clone / "serve.sh", clone)
    # the oldest commit of the clone: later than the true day, so a superset of its releases
    assert isinstance(changed, LastChange) and changed.shallow and changed.day == "2026-02-01"
    diags = Engine(Workspace(clone, stable=True)).lint_file(clone / "serve.sh").diagnostics
    assert [d.code for d in diags] == ["KL240"] and "2026-02-01, a shallow clone's oldest commit" in diags[0].message


def test_no_history_says_so(tmp_path: Path) -> None:
    d = tmp_path / "plain"
    d.mkdir()
    (d / "serve.sh").write_text(LAUNCH)
    got = last_change(d / "serve.sh", d)
    assert isinstance(got, NoDate) and "no git history" in got.why


def test_reading_history_runs_nothing_the_repository_configures(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    marks = [tmp_path / f"ran-{i}" for i in range(6)]
    config = repo / ".git" / "config"
    config.write_text(config.read_text() + (
        f"[core]\n\tfsmonitor = touch {marks[0]}\n\tpager = touch {marks[1]}\n\thooksPath = {tmp_path / 'hooks'}\n"
        f"[diff]\n\texternal = touch {marks[2]}\n[log]\n\tshowSignature = true\n[gpg]\n\tprogram = touch {marks[3]}\n"
        f"[diff \"x\"]\n\ttextconv = touch {marks[4]}\n"))
    (repo / ".gitattributes").write_text("*.sh diff=x\n")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("post-checkout", "pre-commit", "reference-transaction"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\ntouch {marks[5]}\n")
        hook.chmod(0o755)
    assert isinstance(last_change(repo / "serve.sh", repo), LastChange)
    assert [m.name for m in marks if m.exists()] == []


@pytest.mark.parametrize(("tag", "judged"), [("latest", "sglang 0.5.5.post3"), ("dev", "sglang 0.5.5.post3")])
def test_a_moving_tag_pulled_what_it_pointed_to_on_the_commit_day(tmp_path: Path, tag: str, judged: str) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "run.sh").write_text(f"#!/bin/bash\ndocker run --gpus all lmsysorg/sglang:{tag} \\\n"
                                 "  python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --cuda-graph-bs 8\n")
    _git(repo, "add", "run.sh")
    _git(repo, "commit", "-q", "-m", "launch")
    diags = Engine(Workspace(repo, stable=True)).lint_file(repo / "run.sh").diagnostics
    # valid on what `latest`/`dev` was in November 2025: staleness, not a failure
    assert [d.code for d in diags] == ["KL240"]
    assert judged in diags[0].message and "2025-11-20" in diags[0].message


def test_main_of_a_day_is_that_days_release_and_every_later_one() -> None:
    from kimi_lsp.release import main_of

    releases, beyond = main_of("2026-01-18")
    # a feature lands on main first and reaches a release later: only what none of them accepts
    # is reported (`--reasoning-parser glm47`: no release ever; `nemotron_3`: 0.5.10 on)
    assert releases[0] == "0.5.7" and "0.5.10.post1" in releases and not beyond
    assert main_of("2099-01-01")[1] and main_of(None)[1]  # past every release: beyond the data
