"""`sglang serve` of a local model directory holding a diffusers model_index.json is a sure
diffusion launch (sglang: ``os.path.isdir`` then ``_is_diffusers_model_dir``), read through the
Workspace when the directory is in the repository, and the file is a dependency of the result
(issue 30)."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.cli.main import main
from kimi_lsp.engine import Engine
from kimi_lsp.workspace import Workspace

INDEX = '{"_class_name": "FluxPipeline", "_diffusers_version": "0.30.0"}\n'
LAUNCH = "sglang serve --model-path models/pipe --num-gpus 2 --frobnicate 1"


def _project(root: Path, index: str | None, launch: str = LAUNCH) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "requirements.txt").write_text("sglang==0.5.23\n")
    (root / "run.sh").write_text("#!/bin/sh\n" + launch + "\n")
    if index is not None:
        (root / "models" / "pipe").mkdir(parents=True, exist_ok=True)
        (root / "models" / "pipe" / "model_index.json").write_text(index)
    return root


def _lint(root: Path) -> tuple[list[tuple[str, str, str]], set[Path]]:
    eng = Engine(Workspace(root))
    res = eng.lint_file(root / "run.sh")
    assert not eng.errors, eng.errors
    return [(d.code, d.severity.value, d.message) for d in res.diagnostics], res.depends_on


def test_a_local_diffusers_directory_is_a_sure_diffusion_launch(tmp_path: Path) -> None:
    diags, deps = _lint(_project(tmp_path, INDEX))
    # --num-gpus is the diffusion server's: only --frobnicate is unknown, an error (no doubt)
    assert [(c, s) for c, s, _ in diags] == [("KL201", "error")]
    assert "`--frobnicate`" in diags[0][2] and "diffusion server" in diags[0][2]
    assert (tmp_path / "models" / "pipe" / "model_index.json").resolve() in deps


def test_without_the_file_the_launch_is_read_as_before(tmp_path: Path) -> None:
    # no model_index.json: sglang would ask the hub, which kimi-lsp never does: the LLM parser
    # (--frobnicate is no diffusion option, so the options do not say diffusion either)
    diags, _ = _lint(_project(tmp_path, None))
    assert [c for c, _, m in diags if "diffusion" not in m] == ["KL201", "KL201"]


@pytest.mark.parametrize("index", [
    '{"_class_name": "X"}\n',  # no _diffusers_version: sglang's check says no
    '{"_diffusers_version": ',  # not JSON: sglang's json.load raises; never taken for diffusion
])
def test_a_model_index_that_is_not_a_diffusers_one_says_nothing(tmp_path: Path, index: str) -> None:
    diags, deps = _lint(_project(tmp_path, index))
    assert all("diffusion server" not in m for _, _, m in diags)
    assert (tmp_path / "models" / "pipe" / "model_index.json").resolve() in deps


def test_a_directory_outside_the_repository_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "pipe"
    outside.mkdir(parents=True)
    (outside / "model_index.json").write_text(INDEX)
    root = _project(tmp_path / "repo", None, f"sglang serve --model-path {outside} --num-gpus 2 --frobnicate 1")
    diags, deps = _lint(root)
    assert all("diffusion server" not in m for _, _, m in diags)
    assert not any(p.name == "model_index.json" for p in deps)


def test_the_result_cache_sees_the_file_appear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("KIMI_LSP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KIMI_LSP_CACHE_RACY_SECONDS", "0")
    root = _project(tmp_path / "repo", None)
    monkeypatch.chdir(root)
    main(["--check", "run.sh"])
    before = capsys.readouterr().out
    assert "Unknown sglang argument `--num-gpus`" in before
    _project(root, INDEX)
    main(["--check", "run.sh"])
    after = capsys.readouterr().out
    assert "--num-gpus" not in after and "diffusion server" in after
