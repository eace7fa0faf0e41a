"""What sglang checks before (or outside) argparse's table, per release (issue 30): the `--config`
option's existence, abbreviations and ambiguity, parse-time errors of DeprecatedAction,
`sglang serve`'s model lookup, help launches; and that every shipped release has its data."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_lsp.engine import Engine
from kimi_lsp.knowledge import diffusion, launch_checks
from kimi_lsp.knowledge.schema import DATA_DIR, load_schema_exact, shipped_versions
from kimi_lsp.launch import ArgProblemKind, Origin, parse_words
from kimi_lsp.surfaces.model import Token
from kimi_lsp.text import Span
from kimi_lsp.workspace import Workspace
from tests.unit._launch import cli_words


def _lint(tmp_path: Path, release: str, script: str, files: dict[str, str] | None = None) -> list:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "requirements.txt").write_text(f"sglang=={release}\n")
    (tmp_path / "run.sh").write_text("#!/bin/sh\n" + script + "\n")
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    eng = Engine(Workspace(tmp_path))
    diags = list(eng.lint_file(tmp_path / "run.sh").diagnostics)
    assert not eng.errors, eng.errors
    return diags


def _newest() -> str:
    return shipped_versions()[-1]


# -- the data: every shipped release has all of it -------------------------------------------------


def test_every_shipped_release_has_its_launch_checks_date_table_row_and_retired_flags_reading() -> None:
    shipped = shipped_versions()
    assert set(launch_checks.shipped()) == set(shipped)
    # the diffusion server of every release with `sglang serve` (scripts/extract_diffusion_schema.py)
    assert set(diffusion.releases()) == {v for v in shipped if launch_checks.serve_model(v) is not None}
    with open(Path(DATA_DIR) / "sglang_release_dates.json", encoding="utf-8") as f:
        dates = json.load(f)
    assert set(dates) == set(shipped), set(shipped) ^ set(dates)
    with open(Path(DATA_DIR) / "sglang_releases.json", encoding="utf-8") as f:
        rows = {r["version"] for r in json.load(f)["releases"]}
    assert set(shipped) <= rows, set(shipped) - rows  # the release table (KL329, flashinfer pins)
    with open(Path(DATA_DIR) / "sglang_retired_flags.json", encoding="utf-8") as f:
        retired = json.load(f)
    assert retired["releases_read"][-1] == _newest()
    # the retired-flags table was read against the newest release: it names no option that release has
    newest = load_schema_exact(_newest())
    assert newest is not None
    assert not [o for o in retired["flags"] if newest.exact(o) is not None]


def test_config_exists_exactly_where_the_release_parser_has_the_option() -> None:
    for v in shipped_versions():
        schema = load_schema_exact(v)
        assert schema is not None
        assert schema.config_merger == (schema.exact("--config") is not None), v


def test_parse_errors_name_options_of_their_release() -> None:
    with open(Path(DATA_DIR) / "sglang_launch_checks.json", encoding="utf-8") as f:
        releases = json.load(f)["releases"]
    for v, entry in releases.items():
        schema = load_schema_exact(v)
        assert schema is not None
        for opt in entry["parse_errors"]:
            flag = schema.exact(opt)
            assert flag is not None and flag.action == "deprecated", (v, opt)


def test_a_release_newer_than_the_data_gets_the_newest_answers() -> None:
    newest = _newest()
    assert launch_checks.serve_model("99.0.0") == launch_checks.serve_model(newest)
    assert launch_checks.serve_model("0.0.1") is None


# -- argparse replay -------------------------------------------------------------------------------


def test_reading_goes_on_after_an_ambiguous_option() -> None:
    schema = load_schema_exact("0.5.23")
    assert schema is not None
    uses, problems = parse_words(schema, cli_words("--pp", "2", "--load-balance-method", "x", "--dcp", "2", "--port", "1"))
    assert [p.kind for p in problems] == [ArgProblemKind.AMBIGUOUS, ArgProblemKind.AMBIGUOUS]
    assert [u.flag.dest for u in uses] == ["load_balance_method", "port"]


def test_an_ambiguous_option_after_a_consuming_error_is_still_what_sglang_reports() -> None:
    schema = load_schema_exact("0.5.23")
    assert schema is not None
    _, problems = parse_words(schema, cli_words("--tp-size", "--port", "1", "--pp", "2"))
    assert [p.kind for p in problems] == [ArgProblemKind.MISSING_VALUE, ArgProblemKind.AMBIGUOUS]


def test_single_dash_word_is_its_first_two_letters_and_an_explicit_argument() -> None:
    schema = load_schema_exact("0.5.23")
    assert schema is not None
    uses, problems = parse_words(schema, cli_words("-hx"))
    assert not uses
    assert [(p.kind, p.message) for p in problems] == [
        (ArgProblemKind.EXPLICIT_VALUE, "argument -h/--help: ignored explicit argument 'x'")]


def test_reading_past_ambiguous_options_is_linear() -> None:
    schema = load_schema_exact("0.5.23")
    assert schema is not None
    counts = []
    for n in (200, 400):
        calls = 0
        real = schema.match

        def counted(option: str, real=real) -> object:
            nonlocal calls
            calls += 1
            return real(option)

        object.__setattr__(schema, "match", counted)
        try:
            parse_words(schema, cli_words(*(["--pp", "2"] * n)))
        finally:
            del schema.__dict__["match"]
        counts.append(calls)
    assert counts[1] <= 2 * counts[0] + 2


# -- messages --------------------------------------------------------------------------------------


def test_config_on_a_release_without_it_is_unknown_and_the_file_unread(tmp_path: Path) -> None:
    diags = _lint(tmp_path, "0.4.10", "python -m sglang.launch_server --model-path m --config c.yaml",
                  {"c.yaml": "no-such-key: 1\n"})
    assert [(d.code, d.path.name) for d in diags] == [("KL201", "run.sh")]
    assert "no `--config` option" in diags[0].message


def test_abbreviated_switch_names_what_it_turns_on(tmp_path: Path) -> None:
    diags = _lint(tmp_path, "0.5.23", "python -m sglang.launch_server --model-path m --enable-flashinfer --tp 2")
    kl201 = [d for d in diags if d.code == "KL201"]
    assert len(kl201) == 1 and kl201[0].severity.value == "warning"
    assert "`--enable-flashinfer-allreduce-fusion`" in kl201[0].message


def test_ambiguous_prefix_on_an_older_release(tmp_path: Path) -> None:
    diags = _lint(tmp_path, "0.5.2", "python -m sglang.launch_server --model-path m --enable-flashinfer --port x")
    assert sorted(d.code for d in diags) == ["KL201", "KL203"]
    assert "Ambiguous option `--enable-flashinfer`" in next(d.message for d in diags if d.code == "KL201")


@pytest.mark.parametrize(("release", "option", "said"), [
    ("0.5.3", "--enable-ep-moe", "ValueError: NOTE: --enable-ep-moe is deprecated"),
    ("0.5.4", "--enable-flashinfer-trtllm-moe", "ValueError: NOTE: --enable-flashinfer-trtllm-moe is deprecated"),
    ("0.5.19", "--enable-expert-distribution-metrics", "error: --enable-expert-distribution-metrics is no longer"),
])
def test_parse_time_errors(tmp_path: Path, release: str, option: str, said: str) -> None:
    diags = _lint(tmp_path, release, f"python -m sglang.launch_server --model-path m {option}")
    assert [d.code for d in diags] == ["KL201"]
    assert said in diags[0].message and diags[0].severity.value == "error"


@pytest.mark.parametrize(("release", "argv", "found"), [
    ("0.5.5", "--model-path m", True),
    ("0.5.5", "--model-path=m", True),
    ("0.5.5", "--model m", False),
    ("0.5.5", "m --port 1", False),
    ("0.5.11", "--model m", True),
    ("0.5.11", "m --port 1", False),
    ("0.5.16", "m --port 1", True),
])
def test_serve_model_lookup_follows_the_release(tmp_path: Path, release: str, argv: str, found: bool) -> None:
    diags = _lint(tmp_path, release, f"sglang serve {argv}")
    assert any(d.code == "KL216" for d in diags) is not found, [d.message for d in diags]


def test_kl311_names_the_remedy_the_release_has(tmp_path: Path) -> None:
    argv = "python -m sglang.launch_server --model-path m --tp-size 2 --dp-size 2 --nnodes 2"
    old = [d for d in _lint(tmp_path, "0.5.21", argv) if d.code == "KL311"]
    assert len(old) == 1 and "--enable-dp-attention" in old[0].message
    assert "--attn-dp-size" not in old[0].message
    new = [d for d in _lint(tmp_path, _newest(), argv) if d.code == "KL311"]
    schema = load_schema_exact(_newest())
    assert schema is not None and schema.exact("--attn-dp-size") is not None
    assert len(new) == 1 and "--attn-dp-size" in new[0].message


def test_help_from_a_config_file(tmp_path: Path) -> None:
    diags = _lint(tmp_path, "0.5.5", "python -m sglang.launch_server --config c.yaml",
                  {"c.yaml": "model-path: m\nhelp: true\n"})
    assert [(d.code, d.severity.value) for d in diags] == [("KL201", "warning")]
    assert "no server starts" in diags[0].message


def test_help_ends_the_parse_before_unrecognized_words_are_reported() -> None:
    schema = load_schema_exact("0.5.5")
    assert schema is not None
    uses, problems = parse_words(schema, cli_words("--no-such", "--hel", "--tp-size", "x", "--pp"))
    assert [u.flag.dest for u in uses] == ["help"]
    # argparse exits 0 on the help; the ambiguity is raised before any option is read
    assert [p.kind for p in problems] == [ArgProblemKind.AMBIGUOUS]


def test_diffusion_options_come_with_sglang_serve() -> None:
    for v in shipped_versions():
        release = diffusion.diffusion_release(v)
        if launch_checks.serve_model(v) is None:
            assert release is None, v  # no `sglang serve` to hand a diffusion model on
            continue
        assert release is not None and release.version == v
        assert release.schema.exact("--num-gpus") is not None, v


def test_a_diffusion_launch_is_recognised_by_its_options(tmp_path: Path) -> None:
    assert not _lint(tmp_path, _newest(), "sglang serve --model-path org/video --num-gpus 2 --vae-cpu-offload")
    diags = _lint(tmp_path, _newest(), "sglang serve --model-path org/video --num-gpus 2 --no-such-option 1")
    assert sorted(d.code for d in diags) == ["KL201", "KL201"]


def test_a_plain_launch_loads_no_launch_checks(tmp_path: Path) -> None:
    # start-up: the table is read for `sglang serve` launches and DeprecatedAction flags only
    import subprocess
    import sys

    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("sglang==0.5.23\n")
    (tmp_path / "run.sh").write_text("#!/bin/sh\npython -m sglang.launch_server --model-path m --tp 2\n")
    code = ("import sys; from kimi_lsp.cli.main import main; rc = main(['--check', '--no-cache', '.']); "
            "print('loaded' if 'kimi_lsp.knowledge.launch_checks' in sys.modules else 'not loaded')")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert out.stdout.strip().endswith("not loaded"), out.stdout + out.stderr
