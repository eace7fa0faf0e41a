"""``kimi-lsp --check --fix`` / ``--diff`` / ``--unsafe-fixes`` on real files: what is written
(line endings, BOM, UTF-16, permissions, links), what is never written (lockfiles, files outside
the repository), what is reported, the exit codes, and the fix loop's own guarantees."""
from __future__ import annotations

import codecs
import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from kimi_lsp import fixes
from kimi_lsp.cli.main import main
from kimi_lsp.diagnostics import (
    Applicability,
    Diagnostic,
    Edit,
    Fix,
    Location,
    Severity,
)
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText, Workspace

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
PINS = Path(__file__).parent / "pins_fixtures"

K3 = (
    "# sglang --config for Kimi-K3 with decode context parallelism\n"
    "model-path: moonshotai/Kimi-K3\n"
    "tp-size: 8\n"
    "dcp-size: 8\n"
    "decode-attention-backend: cutedsl_mla\n"
)
OLD = "flashinfer-python==0.6.16.post4"
NEW = "flashinfer-python==0.6.17"


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    for var in ("GITHUB_ACTIONS", "GITHUB_WORKSPACE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "no-hf-home"))


def kimi(args: list[str], cwd: Path, monkeypatch, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    monkeypatch.chdir(cwd)
    rc = main(args)
    out, err = capsys.readouterr()
    return rc, out, err


def repo(tmp_path: Path, name: str = "repo") -> Path:
    r = tmp_path / name
    (r / "deploy").mkdir(parents=True)
    (r / ".git").mkdir()
    (r / "deploy" / "k3.yaml").write_text(K3)
    return r


def snapshot(root: Path) -> dict[str, tuple[bytes, int, float]]:
    out = {}
    for p in sorted(root.rglob("*")):
        if ".git" in p.parts or not p.is_file():
            continue
        st = os.stat(p)
        out[p.relative_to(root).as_posix()] = (p.read_bytes(), st.st_mode, st.st_mtime_ns)
    return out


# -- encodings, line endings, permissions ------------------------------------------------------


def test_crlf_is_kept(tmp_path, monkeypatch, capsys) -> None:
    r = repo(tmp_path)
    (r / "requirements.txt").write_bytes(f"# gpu stack\r\nsglang==0.5.23\r\n{OLD}  # old\r\n".encode())
    rc, out, _ = kimi(["--check", "--fix", "."], r, monkeypatch, capsys)
    assert rc == 0, out
    assert (r / "requirements.txt").read_bytes() == b"# gpu stack\r\nsglang==0.5.23\r\nflashinfer-python==0.7.2  # old\r\n"


def test_utf8_bom_is_kept(tmp_path, monkeypatch, capsys) -> None:
    r = repo(tmp_path)
    (r / "requirements.txt").write_bytes(codecs.BOM_UTF8 + f"# gpu stack — ünïcode\n{OLD}\n".encode())
    rc, out, _ = kimi(["--check", "--fix", "."], r, monkeypatch, capsys)
    assert rc == 0, out
    assert (r / "requirements.txt").read_bytes() == codecs.BOM_UTF8 + f"# gpu stack — ünïcode\n{NEW}\n".encode()


@pytest.mark.parametrize("codec, bom", [("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE)])
def test_utf16_with_bom_is_kept(tmp_path, monkeypatch, capsys, codec, bom) -> None:
    r = repo(tmp_path)
    text = f"# exported on Windows\r\n{OLD}\r\n"
    (r / "requirements.txt").write_bytes(bom + text.encode(codec))
    rc, out, _ = kimi(["--check", "--fix", "."], r, monkeypatch, capsys)
    assert rc == 0, out
    assert (r / "requirements.txt").read_bytes() == bom + text.replace(OLD, NEW).encode(codec)


def test_permissions_are_kept(tmp_path, monkeypatch, capsys) -> None:
    r = tmp_path / "repo"
    shutil.copytree(FIXTURES / "fix_shell_pip_install", r, ignore=shutil.ignore_patterns("*.fixed"))
    (r / ".git").mkdir()
    script = r / "serve.sh"
    script.chmod(0o750)
    req = r / "requirements.txt"
    req.write_text("pyyaml\n")
    req.chmod(0o604)
    rc, out, _ = kimi(["--check", "--fix", "."], r, monkeypatch, capsys)
    assert rc == 0, out
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert (FIXTURES / "fix_shell_pip_install" / "serve.sh.fixed").read_text() == script.read_text()
    assert stat.S_IMODE(req.stat().st_mode) == 0o604
    # no temporary file is left behind
    assert sorted(p.name for p in r.iterdir()) == [".git", "requirements.txt", "serve.sh"]


# -- links and lockfiles -----------------------------------------------------------------------


def test_a_link_out_of_the_repository_is_not_followed(tmp_path, monkeypatch, capsys) -> None:
    r = repo(tmp_path)
    outside = tmp_path / "elsewhere" / "requirements.txt"
    outside.parent.mkdir()
    outside.write_text(f"{OLD}\n")
    (r / "requirements.txt").symlink_to(outside)
    rc, out, _ = kimi(["--check", "--fix", "."], r, monkeypatch, capsys)
    assert rc == 1
    assert outside.read_text() == f"{OLD}\n"
    assert (r / "requirements.txt").is_symlink()
    assert "Not fixed: deploy/k3.yaml:5:1: KL101" in out and "leads outside the repository" in out
    assert "deploy/k3.yaml:5:1: KL101" in out  # still reported


def test_a_link_inside_the_repository_is_written_through(tmp_path, monkeypatch, capsys) -> None:
    r = repo(tmp_path)
    (r / "pins").mkdir()
    (r / "pins" / "gpu.txt").write_text(f"{OLD}\n")
    (r / "requirements.txt").symlink_to(Path("pins") / "gpu.txt")
    rc, out, _ = kimi(["--check", "--fix", "."], r, monkeypatch, capsys)
    assert rc == 0, out
    assert (r / "requirements.txt").is_symlink()
    assert (r / "pins" / "gpu.txt").read_text() == f"{NEW}\n"


@pytest.mark.parametrize("case", ["fix_uv_lock", "fix_poetry_lock", "fix_hashed_requirements"])
def test_unsafe_fixes_still_never_touch_a_lockfile(tmp_path, monkeypatch, capsys, case) -> None:
    r = tmp_path / case
    shutil.copytree(FIXTURES / case, r)
    (r / ".git").mkdir()
    lock = next(p for p in r.iterdir() if p.name != "k3.yaml" and p.is_file())
    before = lock.read_bytes()
    launch = (r / "k3.yaml").read_text()
    rc, out, _ = kimi(["--check", "--fix", "."], r, monkeypatch, capsys)
    assert rc == 1 and lock.read_bytes() == before
    assert (r / "k3.yaml").read_text() == launch
    # --unsafe-fixes takes the launch-side fix (no DCP); the lock is still not written
    rc, out, _ = kimi(["--check", "--fix", "--unsafe-fixes", "."], r, monkeypatch, capsys)
    assert lock.read_bytes() == before
    assert "dcp-size: 1\n" in (r / "k3.yaml").read_text()
    assert rc == 0, out


def test_lockfiles_are_refused_by_the_policy(tmp_path) -> None:
    ws = Workspace(tmp_path)
    (tmp_path / ".git").mkdir()
    for src in ("uv-lock/ok/uv.lock", "poetry-lock/pinned-old/poetry.lock", "pdm-lock/range-old/pdm.lock",
                "pipfile-lock/pinned/Pipfile.lock", "pylock/pip-lock/pylock.toml", "conda-lock/pip-entries/conda-lock.yml",
                "pip-compile/hashed/requirements.txt"):
        dst = tmp_path / Path(src).parent.name / Path(src).name
        dst.parent.mkdir(exist_ok=True)
        shutil.copy(PINS / src, dst)
        assert fixes.is_lockfile(dst, ws), src
        assert "lockfile" in (fixes.edit_refusal(dst, ws, tmp_path) or ""), src
    plain = tmp_path / "requirements.txt"
    plain.write_text(f"{OLD}\n")
    assert not fixes.is_lockfile(plain, ws) and fixes.edit_refusal(plain, ws, tmp_path) is None

    # a fix that edits a lockfile is not applied, not even in part
    lock = tmp_path / "ok" / "uv.lock"
    d = Diagnostic("KL101", "m", Location(plain, Span(0, 1)), Severity.ERROR, fixes=(
        Fix("bump both", (Edit(plain, Span(0, len(OLD)), NEW), Edit(lock, Span(0, 1), "#")), Applicability.SAFE),))
    outcome = fixes.fix_until_stable(lambda: [d], ws, may_edit=lambda p: fixes.edit_refusal(p, ws, tmp_path))
    assert not outcome.changed and not outcome.applied
    assert [r.reason for r in outcome.refused] == ["uv.lock is a lockfile; kimi-lsp never edits a lockfile's text"]


# -- --diff, reports and exit codes --------------------------------------------------------------


def test_diff_writes_nothing_and_exits_1_when_there_is_something_to_fix(tmp_path, monkeypatch, capsys) -> None:
    r = repo(tmp_path)
    (r / "requirements.txt").write_text(f"sglang==0.5.23\n{OLD}")  # no newline at the end
    before = snapshot(r)
    rc, out, err = kimi(["--check", "--diff", "."], r, monkeypatch, capsys)
    assert rc == 1
    assert snapshot(r) == before
    assert out == (
        "--- a/requirements.txt\n+++ b/requirements.txt\n@@ -1,2 +1,2 @@\n sglang==0.5.23\n"
        f"-{OLD}\n\\ No newline at end of file\n+flashinfer-python==0.7.2\n\\ No newline at end of file\n"
    )
    assert "Would fix requirements.txt: Bump flashinfer-python to 0.7.2 in requirements.txt (KL101, KL329)" in err
    # --diff with JSON: stdout is still one JSON document, and it carries the diff
    rc, out2, _ = kimi(["--check", "--diff", "--format", "json", "."], r, monkeypatch, capsys)
    assert json.loads(out2)["diff"] == out and snapshot(r) == before
    kimi(["--check", "--fix", "."], r, monkeypatch, capsys)
    rc, out, err = kimi(["--check", "--diff", "."], r, monkeypatch, capsys)
    assert (rc, out) == (0, "")


def test_fix_reports_changes_and_followups_and_exits_by_what_remains(tmp_path, monkeypatch, capsys) -> None:
    # a manifest bump leaves uv.lock stale: the fix is applied, the re-lock command is named,
    # and the run still fails (the lock decides until it is regenerated)
    r = tmp_path / "uvproj"
    shutil.copytree(FIXTURES / "fix_pyproject_uv_lock", r, ignore=shutil.ignore_patterns("*.fixed"))
    (r / ".git").mkdir()
    lock = (r / "uv.lock").read_bytes()
    rc, out, err = kimi(["--check", "--fix", "."], r, monkeypatch, capsys)
    assert rc == 1
    lines = out.splitlines()
    assert lines[0] == ("Fixed pyproject.toml: Bump flashinfer-python to 0.6.17 in pyproject.toml, then run "
                        "`uv lock --upgrade-package flashinfer-python` (KL101)")
    assert lines[1] == "Fixed 1 problem in 1 file."
    assert lines[2] == "Now run: uv lock --upgrade-package flashinfer-python"
    assert any(line.startswith("k3.yaml:5:1: KL104 uv.lock still locks flashinfer-python 0.6.16.post4") for line in lines)
    assert (r / "uv.lock").read_bytes() == lock
    # nothing left that a fix can do
    rc, out, _err = kimi(["--check", "--fix", "."], r, monkeypatch, capsys)
    assert rc == 1 and not out.startswith("Fixed")


def test_fix_exit_0_when_everything_was_fixed_and_quiet_json(tmp_path, monkeypatch, capsys) -> None:
    r = repo(tmp_path)
    (r / "requirements.txt").write_text(f"{OLD}\n")
    rc, out, err = kimi(["--check", "--fix", "--format", "json", "."], r, monkeypatch, capsys)
    assert rc == 0
    import json

    assert json.loads(out)["diagnostics"] == []  # stdout stays one JSON document
    assert "Fixed 1 problem in 1 file." in err
    (r / "requirements.txt").write_text(f"{OLD}\n")
    rc, out, err = kimi(["--check", "--fix", "--quiet", "."], r, monkeypatch, capsys)
    assert (rc, out, err) == (0, "", "")
    assert (r / "requirements.txt").read_text() == f"{NEW}\n"


def test_fixing_a_config_file_referenced_by_a_launch(tmp_path, monkeypatch, capsys) -> None:
    # two passes over a --config YAML that one launch references: the second pass must see the
    # first pass's text (a stale parse would splice at old offsets)
    r = tmp_path / "repo"
    (r / ".git").mkdir(parents=True)
    (r / "serve.yaml").write_text("# kimi-lsp: ignore[KL202]\nmodel-path: Qwen/Qwen3-8B\ntp_size: 2\nmem_fraction_static: 0.8\n")
    (r / "run.sh").write_text("#!/bin/bash\npython3 -m sglang.launch_server --config serve.yaml --port 30000\n")
    (r / "requirements.txt").write_text("sglang==0.5.23\n")  # a known release: its fixes are safe
    # --diff --statistics counts what would remain after the fixes: nothing
    rc, out, err = kimi(["--check", "--diff", "--statistics", "."], r, monkeypatch, capsys)
    assert rc == 1 and "+tp-size: 2" in out
    assert "KL205" not in err.split("Would fix 3 problems in 1 file.")[-1], err
    rc, out, _ = kimi(["--check", "--fix", "."], r, monkeypatch, capsys)
    assert rc == 0, out
    assert (r / "serve.yaml").read_text() == "model-path: Qwen/Qwen3-8B\ntp-size: 2\nmem-fraction-static: 0.8\n"


# -- the fix loop and the writer ----------------------------------------------------------------


def _diag(path: Path, fix: Fix, code: str = "KL205") -> Diagnostic:
    return Diagnostic(code, "m", Location(path, Span(0, 0)), Severity.ERROR, fixes=(fix,))


def test_a_pass_that_breaks_the_file_is_rolled_back(tmp_path) -> None:
    f = tmp_path / "pyproject.toml"
    f.write_text('[project]\nname = "x"\n')
    ws = Workspace(tmp_path)
    bad = _diag(f, Fix("break it", (Edit(f, Span(0, 9), "[project"),), Applicability.SAFE))
    outcome = fixes.fix_until_stable(lambda: [bad], ws)
    assert not outcome.changed and not outcome.applied
    assert outcome.refused[0].reason == "the fixed file would no longer parse"


def test_a_fix_that_never_settles_stops_after_max_passes(tmp_path) -> None:
    f = tmp_path / "requirements.txt"
    f.write_text("x\n")
    ws = Workspace(tmp_path)
    grow = _diag(f, Fix("grow", (Edit(f, Span(0, 0), "#\n"),), Applicability.SAFE))
    outcome = fixes.fix_until_stable(lambda: [grow], ws)
    assert not outcome.converged
    assert outcome.changed[f][1] == "#\n" * fixes.MAX_PASSES + "x\n"
    noop = _diag(f, Fix("same", (Edit(f, Span(0, 1), "x"),), Applicability.SAFE))
    outcome = fixes.fix_until_stable(lambda: [noop], Workspace(tmp_path))
    assert outcome.converged and not outcome.changed
    assert outcome.refused[0].reason == "applying the fix changed nothing"


def test_inserted_lines_take_the_files_line_ending(tmp_path) -> None:
    f = tmp_path / "requirements.txt"
    f.write_bytes(b"a\r\nb\r\n")
    ws = Workspace(tmp_path)
    ins = _diag(f, Fix("insert", (Edit(f, Span(3, 3), "x\ny\n"),), Applicability.SAFE))
    outcome = fixes.fix_until_stable(lambda: [ins] if ws.text(f) == "a\r\nb\r\n" else [], ws)
    assert outcome.changed[f][1] == "a\r\nx\r\ny\r\nb\r\n"


def test_unsafe_fixes_need_the_flag(tmp_path) -> None:
    f = tmp_path / "requirements.txt"
    f.write_text("a\n")
    ws = Workspace(tmp_path)
    d = _diag(f, Fix("unsafe", (Edit(f, Span(0, 1), "b"),), Applicability.UNSAFE))
    assert not fixes.fix_until_stable(lambda: [d] if ws.text(f) == "a\n" else [], ws).changed
    assert fixes.fix_until_stable(lambda: [d] if ws.text(f) == "a\n" else [], ws, unsafe=True).changed
    shown = _diag(f, Fix("hint", (), Applicability.DISPLAY_ONLY))
    assert not fixes.fix_until_stable(lambda: [shown], Workspace(tmp_path), unsafe=True).applied


def test_write_atomic_refuses_a_file_changed_on_disk(tmp_path) -> None:
    f = tmp_path / "requirements.txt"
    f.write_text("a\n")
    src = Workspace(tmp_path).read(f)
    assert isinstance(src, SourceText)
    f.write_text("changed by someone else\n")
    with pytest.raises(fixes.ChangedOnDisk):
        fixes.write_atomic(src, "b\n", expected="a\n")
    assert f.read_text() == "changed by someone else\n"
    assert [p.name for p in tmp_path.iterdir()] == ["requirements.txt"]
    fixes.write_atomic(src, "b\n")
    assert f.read_text() == "b\n"


def test_a_fix_across_files_is_held_back_whole_when_one_changed_on_disk(tmp_path, monkeypatch, capsys) -> None:
    r = tmp_path / "repo"
    shutil.copytree(FIXTURES / "fix_constraints", r, ignore=shutil.ignore_patterns("*.fixed"))
    (r / ".git").mkdir()
    req = (r / "requirements.txt").read_text()
    real = fixes.fix_until_stable

    def racing(*args, **kwargs):
        outcome = real(*args, **kwargs)
        (r / "constraints.txt").write_text("flashinfer-python==0.6.18\n")  # someone else's edit
        return outcome

    monkeypatch.setattr(fixes, "fix_until_stable", racing)
    rc, out, err = kimi(["--check", "--fix", "."], r, monkeypatch, capsys)
    assert rc == 2
    assert "constraints.txt it changed on disk while it was being fixed" in err
    assert (r / "constraints.txt").read_text() == "flashinfer-python==0.6.18\n"
    assert (r / "requirements.txt").read_text() == req  # the other half of the same fix
    assert "Not fixed: requirements.txt: held back with constraints.txt (one fix edits both)" in out
    assert "Fixed" not in out
