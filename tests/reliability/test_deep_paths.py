"""A launch far down a directory tree costs work linear in its depth on every Python. On 3.12+
``ancestor in path.parents`` makes (and formats) a path object per ancestor, so the tests the
engine makes while walking up from a launch (the repository's bound in pin discovery, the
nearest release evidence) grew with the square of the depth there."""
from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from kimi_lsp.engine import Engine
from kimi_lsp.workspace import Workspace, is_below

from ._support import growth, make_repo

K3 = "model-path: moonshotai/Kimi-K3\ntp-size: 8\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"
OLD_PIN = "flashinfer-python==0.6.16.post4\n"


def test_is_below_answers_as_parents_does() -> None:
    rng = random.Random(7)
    names = ["a", "b", "ab", "a.b", "..."]
    for _ in range(3000):
        path = Path("/" + "/".join(rng.choice(names) for _ in range(rng.randint(0, 5))))
        anc = Path("/" + "/".join(rng.choice(names) for _ in range(rng.randint(0, 4))))
        if rng.random() < 0.4 and path.parts[1:]:  # often a real ancestor, or the path itself
            anc = Path("/", *path.parts[1 : rng.randint(1, len(path.parts))])
        assert is_below(path, anc) == (anc in path.parents), (path, anc)
    for path, anc in [(Path("a/b"), Path("a")), (Path("a"), Path(".")), (Path("//x/y"), Path("//x"))]:
        assert is_below(path, anc) == (anc in path.parents)


@pytest.fixture
def deep_repo(tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_repo(tmp_path / "r")
    (root / "requirements.txt").write_text(OLD_PIN, "utf-8")
    yield root
    subprocess.run(["rm", "-rf", str(root / "d")], check=True)  # (rmtree recurses once per level)


def test_a_launch_deep_down_costs_work_linear_in_depth(deep_repo: Path) -> None:
    """x4 the depth: about x4 the work (quadratic would be x16), the pin found all the way up."""

    def run(depth: int) -> None:
        deep = deep_repo.joinpath(*["d"] * depth)
        deep.mkdir(parents=True, exist_ok=True)
        (deep / "k3.yaml").write_text(K3, "utf-8")
        result = Engine(Workspace(deep_repo)).lint_file(deep / "k3.yaml")
        assert "KL101" in {d.code for d in result.diagnostics}

    ratio = growth(run, 60)
    assert ratio < 6, ratio
