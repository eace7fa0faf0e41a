"""Fixes that agree with sglang: a replacement for a retired flag comes from sglang's own table,
a did-you-mean from spelling is never applied by --fix, and no fix that leaves a new error in the
launch is offered as safe (issue #13, point 6)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kimi_lsp.diagnostics import Applicability, Diagnostic
from kimi_lsp.engine import Engine
from kimi_lsp.knowledge.retired_flags import retired, retired_flags
from kimi_lsp.knowledge.schema import load_schema, shipped_versions
from kimi_lsp.workspace import Workspace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _lint(tmp_path: Path, case: str, name: str) -> dict[int, Diagnostic]:
    root = tmp_path / case
    shutil.copytree(FIXTURES / case, root)
    (root / ".git").mkdir()
    diags = Engine(Workspace(root)).lint_file(root / name).diagnostics
    return {d.location.span.start: d for d in diags}


def _on_line(tmp_path: Path, case: str, name: str, needle: str) -> Diagnostic:
    root = tmp_path / case
    diags = _lint(tmp_path, case, name)
    text = (root / name).read_text("utf-8")
    line_start = text.index(needle)
    line_start = text.rfind("\n", 0, line_start) + 1
    line_end = text.find("\n", line_start)
    found = [d for start, d in diags.items() if line_start <= start < line_end and d.code == "KL201"]
    assert len(found) == 1, found
    return found[0]


def test_replacement_from_sglangs_table_is_safe_and_one_word(tmp_path: Path) -> None:
    d = _on_line(tmp_path, "kl201_retired_flags_fix", "run.sh", "--enable-deepep-moe --deepep-mode")
    (fix,) = d.fixes
    assert fix.applicability is Applicability.SAFE
    assert [e.new_text for e in fix.edits] == ["--moe-a2a-backend=deepep"]
    assert "--deepep-mode`?" not in d.message  # no similarity guess beside sglang's own answer


def test_replacement_that_leaves_a_new_error_is_not_safe(tmp_path: Path) -> None:
    # --attention-backend flashinfer under Kimi-K3 DCP is KL103's AssertionError
    d = _on_line(tmp_path, "kl201_retired_flags", "run.sh", "--enable-flashinfer-mla")
    (fix,) = d.fixes
    assert fix.applicability is Applicability.UNSAFE
    assert [e.new_text for e in fix.edits] == ["--attention-backend=flashinfer"]


def test_did_you_mean_is_display_only_and_never_duplicates_a_flag(tmp_path: Path) -> None:
    d = _on_line(tmp_path, "kl201_retired_flags", "run.sh", "--deepep-moe --deepep-mode")
    (fix,) = d.fixes
    assert fix.applicability is Applicability.DISPLAY_ONLY
    assert fix.edits == ()  # `--deepep-mode --deepep-mode normal` would leave a missing value


def test_did_you_mean_keeps_its_edit_when_the_result_lints_clean(tmp_path: Path) -> None:
    d = _on_line(tmp_path, "kl201_unknown_argument", "run.sh", "--tp-sise")
    (fix,) = d.fixes
    assert fix.applicability is Applicability.DISPLAY_ONLY
    assert [e.new_text for e in fix.edits] == ["--tp-size"]


def test_replacement_invalid_for_the_pinned_release_is_named_without_a_fix(tmp_path: Path) -> None:
    d = _on_line(tmp_path, "kl201_retired_flags", "run.sh", "--enforce-piecewise-cuda-graph")
    assert d.fixes == ()
    assert "is not accepted by sglang 0.5.23 either" in d.message


@pytest.mark.parametrize(
    ("option", "replacement"),
    [
        ("--enable-deepep-moe", ("--moe-a2a-backend", "deepep")),
        ("--enable-flashinfer-trtllm-moe", ("--moe-runner-backend", "flashinfer_trtllm")),
        ("--disable-piecewise-cuda-graph", ("--cuda-graph-backend-prefill", "disabled")),
        ("--stream-output", ("--incremental-streaming-output",)),
        ("--enable-ep-moe", ()),  # "same value as --tp-size": no words to write
    ],
)
def test_retired_table_holds_sglangs_own_replacements(option: str, replacement: tuple[str, ...]) -> None:
    gone = retired(option)
    assert gone is not None and gone.replacement == replacement


def test_no_retired_flag_is_still_an_option_of_the_newest_release() -> None:
    schema = load_schema(shipped_versions()[-1])  # whichever release is the newest the store holds
    assert not [o for o in retired_flags() if schema.exact(o) is not None]


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text, "utf-8")
    return root


def _rewrite_rule(old: str, new: str):
    """A rule offering one safe fix: the value `old` of the first flag that has it becomes `new`."""
    from kimi_lsp.diagnostics import Edit, Fix, Location, Severity
    from kimi_lsp.rules._base import Violation, rule

    @rule(code="KL999", name="test-rewrite", severity=Severity.WARNING)
    def check(ctx):
        """Test rule."""
        for use in ctx.launch.uses:
            for tok in use.values:
                if tok.value == old:
                    path = ctx.launch.config.path if use.origin == "config" else ctx.launch.command.path
                    fix = Fix(f"{old} -> {new}", (Edit(path, tok.span, new),), Applicability.SAFE)
                    yield Violation(Location(path, tok.span), "rewrite", fixes=(fix,))
                    return

    return check


@pytest.mark.parametrize(
    ("files", "new", "applicability"),
    [
        # a new KL203 (not an integer) in the command line: not safe
        ({"run.sh": "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-size 8\n"}, "eight", Applicability.UNSAFE),
        ({"run.sh": "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-size 8\n"}, "4", Applicability.SAFE),
        # the same through the --config YAML the command loads: re-read, re-merged
        ({"run.sh": "python -m sglang.launch_server --config serve.yaml\n",
          "serve.yaml": "model-path: Qwen/Qwen3-8B\ntp-size: 8\n"}, "eight", Applicability.UNSAFE),
        ({"run.sh": "python -m sglang.launch_server --config serve.yaml\n",
          "serve.yaml": "model-path: Qwen/Qwen3-8B\ntp-size: 8\n"}, "4", Applicability.SAFE),
    ],
)
def test_engine_makes_a_safe_fix_unsafe_when_it_leaves_a_new_error(
    tmp_path: Path, files: dict[str, str], new: str, applicability: Applicability
) -> None:
    from kimi_lsp.rules import BY_CODE

    root = _project(tmp_path, files)
    eng = Engine(Workspace(root), rules=(_rewrite_rule("8", new), BY_CODE["KL203"]))
    diags = [d for d in eng.lint_file(root / "run.sh").diagnostics if d.code == "KL999"]
    assert [f.applicability for d in diags for f in d.fixes] == [applicability]
    assert not eng.errors
