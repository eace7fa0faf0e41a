"""What names an sglang release in a repository's text (evidence.py), with exact places, and which
scope speaks for a launch."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.evidence import RepoIndex, name_patterns
from kimi_lsp.evidence import scan_text as _scan
from kimi_lsp.release import _placer

P = Path("/repo/x")


def scan_text(path: Path, text: str) -> list:
    return _scan(path, text, _placer())


def _one(text: str) -> tuple[tuple[str, ...], str, bool]:
    found = scan_text(P, text)
    assert len(found) == 1, found
    e = found[0]
    return e.releases, text[e.location.span.start : e.location.span.end], e.fork


@pytest.mark.parametrize(("text", "releases", "words"), [
    ("image: lmsysorg/sglang:v0.5.12-rocm700-mi35x\n", ("0.5.12",), "lmsysorg/sglang:v0.5.12-rocm700-mi35x"),
    ("FROM lmsysorg/sglang-rocm:v0.5.12-rocm700-mi35x AS base\n", ("0.5.12",), "lmsysorg/sglang-rocm:v0.5.12-rocm700-mi35x"),
    ("image: registry.example.com:5000/ml/sglang:v0.5.14-cu128\n", ("0.5.14",), "registry.example.com:5000/ml/sglang:v0.5.14-cu128"),
    # a release candidate lies between the releases around it
    ("container: lmsysorg/sglang:v0.5.2rc2-cu126\n", ("0.5.1.post3", "0.5.2"), "lmsysorg/sglang:v0.5.2rc2-cu126"),
    ("RUN git clone -b v0.5.13 https://github.com/sgl-project/sglang\n", ("0.5.13",), "-b v0.5.13"),
    ("git clone https://github.com/sgl-project/sglang --branch=v0.5.13\n", ("0.5.13",), "--branch=v0.5.13"),
    ("SGLANG_TAG=v0.5.15\n", ("0.5.15",), "SGLANG_TAG=v0.5.15"),
    ("sglang_version: '0.5.15'\n", ("0.5.15",), "sglang_version: '0.5.15"),
    ("Built on SGLang v0.5.17 + 26 local patches.\n", ("0.5.17",), "SGLang v0.5.17"),
    ('pip install "sglang[all]==0.5.4.post2"\n', ("0.5.4.post2",), "sglang[all]==0.5.4.post2"),
    ("requires sglang>=0.5.21\n", ("0.5.21", "0.5.22", "0.5.23"), "sglang>=0.5.21"),
    ("pip install 'git+https://github.com/sgl-project/sglang.git@v0.5.9#subdirectory=python'\n", ("0.5.9",),
     "git+https://github.com/sgl-project/sglang.git@v0.5.9"),
    ('[[package]]\nname = "sglang"\nversion = "0.5.16"\n', ("0.5.16",), 'name = "sglang"\nversion = "0.5.16"'),
])
def test_each_kind_names_its_release_at_its_place(text: str, releases: tuple[str, ...], words: str) -> None:
    got, at, fork = _one(text)
    assert (got, at, fork) == (releases, words, False)


@pytest.mark.parametrize("text", [
    "image: lmsysorg/sglang:latest\n",  # a moving tag names no release
    "image: lmsysorg/sglang-router:0.1.5\n",  # another package of the project, its own versions
    "image: nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.4.1\n",  # Dynamo 0.4.1 (sglang inside), not sglang 0.4.1
    "pip install sglang-router==0.2.1\n",
    "image: lmsysorg/sglang@sha256:" + "a" * 64 + "\n",
    "SGLang 0.3.0 was the first release with RadixAttention\n",  # older than every schema
    "git checkout v0.5.13\n",  # a checkout of something, no sglang clone in the file
])
def test_what_names_no_release(text: str) -> None:
    assert scan_text(P, text) == []


@pytest.mark.parametrize(("text", "words"), [
    ("image: lmsysorg/sglang:dev\n", "lmsysorg/sglang:dev"),
    ("docker pull lmsysorg/sglang:dev-cu13-gemma4\n", "lmsysorg/sglang:dev-cu13-gemma4"),
    ("docker pull lmsysorg/sglang:gemma4\n", "lmsysorg/sglang:gemma4"),  # a model's own build
    ("pip install 'git+https://github.com/sgl-project/sglang.git#subdirectory=python'\n",
     "git+https://github.com/sgl-project/sglang.git"),
    ("git clone https://github.com/sgl-project/sglang.git\n", "/sgl-project/sglang.git"),
])
def test_main_and_builds_no_release_describes(text: str, words: str) -> None:
    found = scan_text(P, text)
    assert [(e.main, e.releases, text[e.location.span.start:e.location.span.end]) for e in found] == [(True, (), words)]


def test_a_fork_cloned_at_a_branch_is_its_own_code() -> None:
    releases, at, fork = _one("git clone -b kimi-dcp https://github.com/acme-ml/sglang.git\n")
    assert (releases, fork) == ((), True) and at == "/acme-ml/sglang.git"


def test_a_checkout_after_a_clone_of_sglang_names_the_tag() -> None:
    text = "git clone https://github.com/sgl-project/sglang\ncd sglang && git checkout v0.5.13\n"
    found = scan_text(P, text)
    assert [e.releases for e in found] == [("0.5.13",)]


def test_matrix_names_become_patterns() -> None:
    assert "*_*_*.sh" in name_patterns('script: "{model}_{prec}_{gpu}.sh"\n')
    assert "run_bench.sh" in name_patterns("- run: bash scripts/run_bench.sh\n")


def test_the_nearest_scope_wins(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "Dockerfile").write_text("FROM lmsysorg/sglang:v0.5.12-cu129\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "README.md").write_text("Tested on SGLang v0.5.17.\n")
    (tmp_path / "b" / "serve.sh").write_text("python -m sglang.launch_server --model-path m\n")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "serve.sh").write_text("python -m sglang.launch_server --model-path m\n")
    index = RepoIndex(tmp_path, _placer()).build()
    scope, found = index.for_launch(tmp_path / "b" / "serve.sh", [], [])
    assert scope == "beside it" and [e.releases for e in found] == [("0.5.17",)]
    scope, found = index.for_launch(tmp_path / "c" / "serve.sh", [], [])
    assert (scope, found) == ("", [])  # the repository-wide union is the caller's last resort


def test_a_fix_is_offered_only_where_every_candidate_offers_it(tmp_path: Path) -> None:
    import shutil

    from kimi_lsp.engine import Engine
    from kimi_lsp.workspace import Workspace

    root = tmp_path / "case"
    shutil.copytree(Path(__file__).parents[1] / "fixtures" / "release_evidence_fix_on_every_candidate", root)
    (root / ".git").mkdir()
    diags = Engine(Workspace(root, stable=True)).lint_file(root / "serve.sh").diagnostics
    assert [(d.code, d.fixes) for d in diags] == [("KL201", ())]
    assert "did you mean" not in diags[0].message and "0.5.12 and 0.5.20" in diags[0].message


@pytest.mark.parametrize("glob", ["*_*_*.sh", "dsr1_*.sh", "*.sh", "x*y*z", "dsr1_fp8_mi355x.sh", "*mi355x*", "a*a*a*a*b"])
@pytest.mark.parametrize("name", ["dsr1_fp8_mi355x.sh", "xyz", "x_y_z.sh", "aaaaab", "mi355x", ".sh", "a*b"])
def test_glob_match_is_fnmatchcase(glob: str, name: str) -> None:
    import fnmatch

    from kimi_lsp.evidence import _glob_match

    assert _glob_match(name, glob) == fnmatch.fnmatchcase(name, glob)


def test_the_servers_index_reads_a_changed_file_again(tmp_path: Path) -> None:
    from kimi_lsp.evidence import repo_index
    from kimi_lsp.workspace import Workspace

    (tmp_path / ".git").mkdir()
    (tmp_path / "Dockerfile").write_text("FROM lmsysorg/sglang:v0.5.12-cu129\n")
    ws = Workspace(tmp_path)
    index = repo_index(tmp_path, ws, _placer())
    assert [e.releases for e in index.entries[tmp_path / "Dockerfile"].evidence] == [("0.5.12",)]
    (tmp_path / "Dockerfile").write_text("FROM lmsysorg/sglang:v0.5.14-cu129\n")
    (tmp_path / "README.md").write_text("Tested on SGLang v0.5.17.\n")
    ws.invalidate(tmp_path / "Dockerfile")  # the watcher's events: one file at a time
    ws.invalidate(tmp_path / "README.md")
    assert repo_index(tmp_path, ws, _placer()) is index  # kept, not walked again
    assert [e.releases for e in index.entries[tmp_path / "Dockerfile"].evidence] == [("0.5.14",)]
    assert [e.releases for e in index.entries[tmp_path / "README.md"].evidence] == [("0.5.17",)]
    (tmp_path / "README.md").unlink()
    ws.invalidate(tmp_path / "README.md")
    assert tmp_path / "README.md" not in index.entries
