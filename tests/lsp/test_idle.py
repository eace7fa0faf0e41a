"""The idle paths of a workspace re-poll (in process): an unchanged re-poll does no per-file work,
the disk sweep checks an absent path through its directory, and a large workspace's sweep is
spread over passes but still reaches every path."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from kimi_lsp.lsp import session as S
from kimi_lsp.lsp.session import Session

K3 = "model-path: moonshotai/Kimi-K3\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"
OLD = "flashinfer-python==0.6.16.post4\n"


def age(*paths: Path, seconds: float = 60) -> None:
    """Files this new are not trusted by their signature (RACY_SECONDS): make them older."""
    t = time.time() - seconds
    for p in paths:
        os.utime(p, (t, t))


def workspace(root: Path, n: int) -> list[Path]:
    (root / ".git").mkdir(parents=True)
    out = []
    for i in range(n):
        d = root / f"svc{i}"
        d.mkdir()
        (d / "k3.yaml").write_text(K3.replace("dcp-size: 8", f"dcp-size: {2 + i % 6}"))
        out.append(d)
    age(root, *root.rglob("*"))
    return out


def codes(session: Session) -> dict[str, list[str]]:
    reports = session.workspace_reports({})
    return {r.uri: sorted(str(d.code) for d in r.items) for r in reports}


def test_an_unchanged_repoll_reuses_the_last_pass(tmp_path: Path) -> None:
    workspace(tmp_path, 5)
    session = Session(tmp_path, [tmp_path])
    first = session.workspace_reports({})
    lints = session.lint_count
    again = session.workspace_reports({})
    assert session.lint_count == lints
    assert len(again) == len(first) and all(a is b for a, b in zip(again, first))  # the same reports


def test_a_pin_file_created_where_one_was_probed_is_seen(tmp_path: Path) -> None:
    dirs = workspace(tmp_path, 3)
    session = Session(tmp_path, [tmp_path])
    before = codes(session)
    assert not any("KL101" in c for c in before.values())
    assert session.absent_in  # probed pin files were absent: checked through their directories
    (dirs[1] / "requirements.txt").write_text(OLD)
    age(dirs[1] / "requirements.txt", dirs[1], seconds=30)  # a directory changed, not "just now"
    after = codes(session)
    changed = {u for u in after if after[u] != before[u]}
    assert changed == {(dirs[1] / "k3.yaml").as_uri()} and "KL101" in after[(dirs[1] / "k3.yaml").as_uri()]


def test_the_sweep_of_a_large_workspace_reaches_every_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dirs = workspace(tmp_path, 8)
    monkeypatch.setattr(S, "SWEEP_MIN", 5)
    monkeypatch.setattr(S, "SWEEP_SECONDS", 1e9)  # a pass checks SWEEP_MIN paths, no more
    session = Session(tmp_path, [tmp_path])
    codes(session)
    paths = len(session.disk_sigs)
    assert paths > 3 * S.SWEEP_MIN
    (dirs[5] / "requirements.txt").write_text(OLD)
    age(dirs[5] / "requirements.txt", dirs[5], seconds=30)
    target = (dirs[5] / "k3.yaml").as_uri()
    for passes in range(1, paths // S.SWEEP_MIN + 3):
        if "KL101" in codes(session)[target]:
            break
    else:
        pytest.fail("the created pin file was never seen")
    assert passes <= paths // S.SWEEP_MIN + 2
