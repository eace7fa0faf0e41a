"""Fail closed (issue #14): every doubt about the input ends in a diagnostic or a usage error,
never in "All checks passed".

Each test builds a throwaway repository holding one launch that sglang rejects (Kimi-K3 with
DCP on flashinfer 0.6.16.post4, KL101) and then tries one way of making ``kimi-lsp --check``
miss it: a stale cache entry, a typo in a setting, a pin file that cannot be read. The catalogue
of these cases is docs/reliability.md.
"""
from __future__ import annotations

import io
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from kimi_lsp.cli.main import main as cli_main

from ._support import make_repo

K3 = "model-path: moonshotai/Kimi-K3\ntp-size: 8\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n"
OLD_PIN = "flashinfer-python==0.6.16.post4\n"


def check(root: Path, *args: str, cache: Path | None = None, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    """``kimi-lsp --check ARGS`` run in ``root``; the result cache only when ``cache`` is given."""
    monkeypatch.chdir(root)
    if cache is None:
        monkeypatch.setenv("KIMI_LSP_NO_CACHE", "1")
    else:
        monkeypatch.setenv("KIMI_LSP_NO_CACHE", "")
        monkeypatch.setenv("KIMI_LSP_CACHE_DIR", str(cache))
        monkeypatch.setenv("KIMI_LSP_CACHE_RACY_SECONDS", "0")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli_main(["--check", *args])
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


# -- 1. stale passes from the cache ------------------------------------------------------------


@pytest.mark.parametrize("pin_name, pin_text", [
    ("pyproject.toml", f'[project]\nname = "svc"\nversion = "0"\ndependencies = ["{OLD_PIN.strip()}"]\n'),
    ("environment.yml", f"name: svc\ndependencies:\n  - python=3.12\n  - pip:\n    - {OLD_PIN.strip()}\n"),
])
def test_a_pin_file_that_is_also_a_candidate_is_walked_and_never_cached(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pin_name: str, pin_text: str
) -> None:
    """`--check pyproject.toml` walks the tree the pin governs; finding only the named file must
    not make the answer cacheable: a launch added later is linted on the next run."""
    (repo / pin_name).write_text(pin_text, "utf-8")
    (repo / "deploy").mkdir()
    rc, out, _ = check(repo, pin_name, cache=tmp_path / "cache", monkeypatch=monkeypatch)
    assert rc == 0, out
    (repo / "deploy" / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "-q", pin_name, cache=tmp_path / "cache", monkeypatch=monkeypatch)
    assert rc == 1 and "deploy/k3.yaml:4:1: KL101" in out, out


def test_a_flashinfer_pin_link_that_is_re_pointed_invalidates_the_cache(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The link is what the setting names: re-pointing it (nothing else in the repository
    changes) must invalidate the entry, not only an edit to the file it pointed to."""
    (repo / "k3.yaml").write_text(K3, "utf-8")
    (repo / "pins").mkdir()
    (repo / "pins" / "good.txt").write_text("flashinfer-python==0.7.2\n", "utf-8")
    (repo / "pins" / "old.txt").write_text(OLD_PIN, "utf-8")
    (repo / "vendor").mkdir()
    os.symlink("../pins/good.txt", repo / "vendor" / "image-pins.txt")
    (repo / "kimi-lsp.toml").write_text('flashinfer-pin = "vendor/image-pins.txt"\n', "utf-8")
    rc, out, _ = check(repo, "-q", "k3.yaml", cache=tmp_path / "cache", monkeypatch=monkeypatch)
    assert rc == 0, out
    os.symlink("../pins/old.txt", repo / "vendor" / "next")
    os.replace(repo / "vendor" / "next", repo / "vendor" / "image-pins.txt")
    rc, out, _ = check(repo, "-q", "k3.yaml", cache=tmp_path / "cache", monkeypatch=monkeypatch)
    assert rc == 1 and "KL101" in out, out


def test_a_cache_entry_without_dependencies_is_a_miss(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Anyone who can write the cache directory can write an entry; one that claims to depend on
    nothing (so that nothing can invalidate it) must not be believed."""
    import marshal

    from kimi_lsp import cache

    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "-q", "k3.yaml", cache=tmp_path / "cache", monkeypatch=monkeypatch)
    assert rc == 1, out
    entries = list((tmp_path / "cache").rglob("*.bin"))
    assert len(entries) == 1
    key, _deps, _result = marshal.loads(entries[0].read_bytes())
    entries[0].write_bytes(marshal.dumps((key, [], [])))  # "no dependencies, no diagnostics"
    entries[0].chmod(0o600)
    rc, out, _ = check(repo, "-q", "k3.yaml", cache=tmp_path / "cache", monkeypatch=monkeypatch)
    assert rc == 1 and "KL101" in out, out
    assert cache.FORMAT >= 2


def test_a_cache_entry_others_can_write_is_a_miss(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import marshal

    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    check(repo, "-q", "k3.yaml", cache=tmp_path / "cache", monkeypatch=monkeypatch)
    entry = next((tmp_path / "cache").rglob("*.bin"))
    key, deps, _result = marshal.loads(entry.read_bytes())
    entry.write_bytes(marshal.dumps((key, deps, [])))  # the same dependencies, a forged "pass"
    entry.chmod(0o666)
    rc, out, _ = check(repo, "-q", "k3.yaml", cache=tmp_path / "cache", monkeypatch=monkeypatch)
    assert rc == 1 and "KL101" in out, out


# -- 2. one typo turns every rule off ----------------------------------------------------------


@pytest.mark.parametrize("config_name, text", [
    ("kimi-lsp.toml", 'select = "KL101"\n'),
    ("kimi-lsp.toml", 'select = ["KL10l"]\n'),
    ("kimi-lsp.toml", "select = []\n"),
    ("kimi-lsp.toml", 'select = ["KL999"]\n'),
    ("kimi-lsp.toml", 'ignore = ["KL0"]\nselect = "KL2"\n'),
    ("pyproject.toml", '[tool.kimi-lsp]\nselect = "KL101"\n'),
])
def test_an_invalid_select_never_narrows_the_rules(
    repo: Path, monkeypatch: pytest.MonkeyPatch, config_name: str, text: str
) -> None:
    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    (repo / config_name).write_text(text, "utf-8")
    rc, out, _ = check(repo, "-q", ".", monkeypatch=monkeypatch)
    assert rc == 1, out
    assert "k3.yaml:4:1: KL101" in out, out
    assert f"{config_name}:" in out and "KL002" in out, out


def test_kl002_cannot_be_ignored_or_downgraded(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "kimi-lsp.toml").write_text('ignore = ["KL0"]\nseverity = { KL002 = "info" }\nselct = ["KL1"]\n', "utf-8")
    rc, out, _ = check(repo, "-q", "kimi-lsp.toml", monkeypatch=monkeypatch)
    assert rc == 1 and "kimi-lsp.toml:3:1: KL002" in out, out


@pytest.mark.parametrize("args", [
    ["--select", "KL10l"],
    ["--select", "KL101 KL329"],
    ["--select", ""],
    ["--select", "KL999"],
    ["--ignore", "KL10l"],
    ["--sglang-version", "bogus"],
    ["--target-gpu", "bogus"],
])
def test_an_invalid_setting_on_the_command_line_is_a_usage_error(
    repo: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, err = check(repo, *args, "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 2, (out, err)
    assert args[0] in err and not out


def test_valid_selectors_still_select(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "requirements.txt").write_text(OLD_PIN, "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "-q", "--select", "KL3,KL2", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 0 and "KL101" not in out, out
    rc, out, _ = check(repo, "-q", "--select", "kl101", "--target-gpu", "sm100", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 1 and "KL101" in out, out


def test_editor_settings_with_a_typo_keep_every_rule() -> None:
    from kimi_lsp.lsp import settings

    got = settings.parse({"select": ["KL10l"], "targetGpu": "bogus"})
    assert "select" not in got.overrides and "target_gpu" not in got.overrides
    assert len(got.problems) == 2


# -- 3. a pin file that cannot be read is not "no pin" ----------------------------------------


def _conflicted_uv_lock() -> str:
    return (
        "version = 1\nrequires-python = \">=3.10\"\n\n"
        "<<<<<<< HEAD\n"
        "[[package]]\nname = \"flashinfer-python\"\nversion = \"0.6.16.post4\"\n"
        "source = { registry = \"https://example.invalid/simple\" }\n"
        "=======\n"
        "[[package]]\nname = \"flashinfer-python\"\nversion = \"0.6.16.post3\"\n"
        "source = { registry = \"https://example.invalid/simple\" }\n"
        ">>>>>>> feature\n"
    )


def test_a_uv_lock_with_a_conflict_marker_is_an_error_naming_it(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "uv.lock").write_text(_conflicted_uv_lock(), "utf-8")
    (repo / "deploy").mkdir()
    (repo / "deploy" / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "-q", "deploy/k3.yaml", monkeypatch=monkeypatch)
    assert rc == 1, out
    assert "deploy/k3.yaml:4:1: KL101" in out and "uv.lock, cannot be read" in out, out
    assert "KL102" not in out


def test_a_pin_file_that_is_a_dangling_link_is_an_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.symlink("gone/requirements.txt", repo / "requirements.txt")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "-q", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 1 and "requirements.txt, cannot be read" in out, out


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_requirements_file_is_an_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "requirements.txt").write_text("flashinfer-python==0.7.2\n", "utf-8")
    (repo / "requirements.txt").chmod(0)
    (repo / "k3.yaml").write_text(K3, "utf-8")
    rc, out, _ = check(repo, "-q", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 1 and "permission denied" in out, out


def test_an_unreadable_requirements_file_is_an_error_even_as_root(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What root cannot be denied by a mode, a read error stands in for: the reader's failure,
    not the file's mode, is what must turn into an error."""
    from kimi_lsp import workspace

    (repo / "requirements.txt").write_text("flashinfer-python==0.7.2\n", "utf-8")
    (repo / "k3.yaml").write_text(K3, "utf-8")
    real = workspace._read_disk

    def deny(path: Path):
        if path.name == "requirements.txt":
            return workspace.ReadFailure(path, "permission denied")
        return real(path)

    monkeypatch.setattr(workspace, "_read_disk", deny)
    rc, out, _ = check(repo, "-q", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 1 and "requirements.txt, cannot be read: requirements.txt: permission denied" in out, out


def test_a_missing_flashinfer_pin_file_is_an_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "k3.yaml").write_text(K3, "utf-8")
    (repo / "kimi-lsp.toml").write_text('flashinfer-pin = "vendor/requirements.txt"\n', "utf-8")
    rc, out, _ = check(repo, "-q", "k3.yaml", monkeypatch=monkeypatch)
    assert rc == 1 and "vendor/requirements.txt, cannot be read" in out, out
