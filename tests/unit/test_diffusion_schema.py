"""The diffusion server `sglang serve` hands a diffusion model to (issue 30): its schema per release
(scripts/extract_diffusion_schema.py), held to a reading of sglang's source, and how a launch is
recognised as one and checked against it."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kimi_lsp.engine import Engine
from kimi_lsp.knowledge import diffusion
from kimi_lsp.knowledge.schema import load_schema
from kimi_lsp.launch import diffusion_launch, resolve
from kimi_lsp.surfaces.model import Entry, LaunchCommand, Located, Surface, Token
from kimi_lsp.text import Span
from kimi_lsp.workspace import Workspace
from tests.unit._launch import lint_script

ROOT = Path(__file__).resolve().parents[2]
READING = json.loads((ROOT / "tests" / "data" / "diffusion" / "source-reading.json").read_text("utf-8"))
READ_RELEASES = [v for v in READING if not v.startswith("_")]


def _release(version: str) -> diffusion.DiffusionRelease:
    release = diffusion.diffusion_release(version)
    assert release is not None and release.version == version
    return release


@pytest.mark.parametrize("version", READ_RELEASES)
def test_extraction_matches_a_reading_of_the_source(version: str) -> None:
    want = READING[version]
    release = _release(version)
    data = diffusion._data()["releases"][version]
    assert len(data["flags"]) == want["actions"]
    assert release.rejects_unknown is want["rejects_unknown"]
    assert list(release.component_prefixes) == want["component_prefixes"]
    assert list(release.component_suffixes) == want["component_suffixes"]
    for option, attrs in want["flags"].items():
        flag = release.schema.exact(option)
        assert flag is not None, option
        got = {"action": flag.action, "nargs": flag.nargs, "type": flag.type,
               "choices": list(flag.choices) if flag.choices is not None else None}
        assert got == attrs, option
    for option in want.get("pipeline", []):
        assert option in release.pipeline_options and release.schema.exact(option) is not None
    for option in want["absent"]:  # `sglang generate`'s options, or a later release's
        assert release.schema.exact(option) is None, option


def test_the_data_file_is_what_the_extractor_makes_of_the_wheel() -> None:
    """Re-extract where the wheel is at hand (the extractor's cache): the data file is its output."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import extract_diffusion_schema as ex

    wheels = sorted((Path.home() / ".cache" / "kimi-lsp" / "wheels").glob("sglang-0.5.23-*.whl"))
    if not wheels:
        pytest.skip("no cached sglang 0.5.23 wheel")
    doc = ex.extract(wheels[0])
    assert doc is not None
    stored = ex.unpack(json.loads(ex.OUT.read_text("utf-8")), "0.5.23")
    assert stored == {k: v for k, v in doc.items() if k != "unresolved"}


def test_every_release_with_sglang_serve_has_one_and_each_flag_once() -> None:
    for v in diffusion.releases():
        release = _release(v)
        options = [o for f in release.schema.flags for o in f.options]
        assert len(options) == len(set(options)), v  # argparse refuses a second registration
        assert release.schema.exact("--model-path") is not None and release.schema.exact("--help") is not None
    assert diffusion.diffusion_release("0.5.4") is None  # no `sglang serve` yet
    assert diffusion.diffusion_release("0.5.99") is _release(diffusion.releases()[-1])  # newer than the data


def _serve(*argv: str) -> LaunchCommand:
    toks, pos = [], 13
    for w in argv:
        toks.append(Token(w, Span(pos, pos + len(w))))
        pos += len(w) + 1
    return LaunchCommand(path=Path("/w/run.sh"), surface=Surface.SHELL, entry=Entry.SERVE,
                         program=Located("sglang serve", Span(0, 12)), argv=tuple(toks), span=Span(0, pos),
                         base_dir=Path("/w"))


@pytest.mark.parametrize(("argv", "found", "sure"), [
    (("--model-type", "diffusion", "--model-path", "org/m"), True, True),
    (("--model-path", "black-forest-labs/FLUX.1-dev"), True, True),  # the registry names it
    (("--model-path", "/models/models--black-forest-labs--FLUX.1-dev/snapshots/abc"), True, True),
    (("--model-path", "org/my-sdxl-finetune"), True, False),  # named like one
    (("--model-path", "org/video", "--num-gpus", "2"), True, False),  # its options say so
    (("--model-type", "llm", "--model-path", "black-forest-labs/FLUX.1-dev"), False, True),
    (("--model-path", "Qwen/Qwen3-8B", "--tp-size", "2"), False, True),
])
def test_a_diffusion_launch_is_recognised_as_sglang_would_offline(argv: tuple[str, ...], found: bool, sure: bool) -> None:
    is_diffusion, doubt = diffusion_launch(_serve(*argv), load_schema("0.5.23"))
    assert is_diffusion is found
    assert (doubt is None) is sure


def test_component_options_are_taken_off_with_their_values() -> None:
    launch = resolve(_serve("--model-path", "black-forest-labs/FLUX.1-dev", "--transformer-path", "/w/t",
                            "--component-quantizations.vae=fp8", "--frobnicate", "1"), load_schema("0.5.23"), None)
    assert launch.diffusion
    assert [p.token.value for p in launch.problems] == ["--frobnicate", "1"]
    # 0.5.10 knows `--<c>-path` only: a quantization one is left over, and rejected
    launch = resolve(_serve("--model-path", "black-forest-labs/FLUX.1-dev", "--vae-quantization", "fp8"),
                     load_schema("0.5.10"), None)
    assert [p.token.value for p in launch.problems] == ["--vae-quantization", "fp8"]


def test_a_sure_diffusion_launch_is_an_error_and_a_probable_one_a_warning_that_names_the_doubt(tmp_path: Path) -> None:
    diags = lint_script(tmp_path, "0.5.23", "sglang serve --model-path black-forest-labs/FLUX.1-dev --frobnicate 1")
    assert [(d.code, d.severity.value) for d in diags] == [("KL201", "error")]
    assert "diffusion server" in diags[0].message
    diags = lint_script(tmp_path, "0.5.23", "sglang serve --model-path org/video --num-gpus 2 --log-requests-format yaml")
    assert [(d.code, d.severity.value) for d in diags] == [("KL202", "warning")]
    assert "its options are the diffusion server's" in diags[0].message


def test_no_llm_rule_runs_on_a_diffusion_launch(tmp_path: Path) -> None:
    # --tp-size 3 with --nnodes would be an LLM finding; the diffusion server has its own meaning
    assert not lint_script(tmp_path, "0.5.23", "sglang serve --model-type diffusion --model-path org/m --tp-size 3 --num-gpus 3")


def test_a_launch_server_launch_loads_no_diffusion_data(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("sglang==0.5.23\n")
    (tmp_path / "run.sh").write_text("#!/bin/sh\npython -m sglang.launch_server --model-path m --tp 2\n")
    code = ("import sys; from kimi_lsp.cli.main import main; rc = main(['--check', '--no-cache', '.']); "
            "print('loaded' if 'kimi_lsp.knowledge.diffusion' in sys.modules else 'not loaded')")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert out.stdout.strip().endswith("not loaded"), out.stdout + out.stderr
