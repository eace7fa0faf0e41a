"""The ``--check`` result cache (kimi_lsp/cache.py): a hit prints exactly what a lint would, and
any change that could change the answer is a miss.

Runs are in-process (``cli.main.main``) so that a hit can be told from a miss: on a hit the
engine must not run at all (``batch.lint_files`` is replaced by one that fails the test).
``KIMI_LSP_CACHE_RACY_SECONDS=0`` lets a freshly copied project be cached at once; the test of
the racy window itself uses the default.
"""
from __future__ import annotations

import json
import marshal
import shutil
from pathlib import Path

import pytest
from kimi_lsp import batch
from kimi_lsp.cli.main import main
from kimi_lsp.walk import walk

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "k3-serving"
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(autouse=True)
def cache_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KIMI_LSP_NO_CACHE", raising=False)
    monkeypatch.setenv("KIMI_LSP_CACHE_DIR", str(tmp_path / "kimi-cache"))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("KIMI_LSP_CACHE_RACY_SECONDS", "0")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "no-hf-home"))


def _project(src: Path, dst: Path) -> Path:
    """A copy of ``src`` as a repository of its own, beside the test's cache directory."""
    shutil.copytree(src, dst)
    (dst / ".git").mkdir(exist_ok=True)
    return dst


def check(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
          *, expect_hit: bool | None = None) -> tuple[int, str]:
    monkeypatch.chdir(cwd)
    real = batch.lint_files
    calls: list[int] = []

    def counting(*a: object, **kw: object):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(batch, "lint_files", counting)
    capsys.readouterr()
    rc = main(args)
    out = capsys.readouterr().out
    monkeypatch.setattr(batch, "lint_files", real)
    if expect_hit is not None:
        assert (not calls) == expect_hit, "expected a cache " + ("hit" if expect_hit else "miss")
    return rc, out


def entries(project: Path) -> list[Path]:
    """The cache's entries (one cache per test: KIMI_LSP_CACHE_DIR is the test's own)."""
    return sorted((project.parent / "kimi-cache").rglob("*.bin"))


def tree(root: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


@pytest.fixture()
def example(tmp_path: Path) -> Path:
    return _project(EXAMPLE, tmp_path / "k3-serving")


LAUNCH = "deploy/k3-dcp.yaml"


def test_second_run_is_a_hit_with_the_same_output_and_exit_code(example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    for fmt in ("text", "json", "github", "sarif"):  # output options are not part of the key
        args = ["--check", "--format", fmt, "--statistics", LAUNCH]
        fresh = check([*args, "--no-cache"], example, monkeypatch, capsys, expect_hit=False)
        cached = check(args, example, monkeypatch, capsys, expect_hit=True)
        assert cached == fresh and fresh[0] == 1
        assert "KL101" in fresh[1]
    cache_dir = example.parent / "kimi-cache"
    assert (cache_dir / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_nothing_is_written_into_the_project(example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    before = tree(example)
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=True)
    assert tree(example) == before and entries(example)


def test_every_fixture_project_answers_the_same_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Differential: each fixture case, checked twice; the hit must print what the lint printed."""
    cases = sorted(p for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith("_"))
    hits = 0
    for case in cases:
        project = _project(case, tmp_path / case.name)
        files = [f.relative_to(project).as_posix() for f in walk(project, project) if f.suffix != ".fixed"]
        if not files:
            continue
        args = ["--check", "--format", "json", "--exit-zero", *files]
        rc1, out1 = check(args, project, monkeypatch, capsys)
        rc2, out2 = check(args, project, monkeypatch, capsys)
        assert (rc2, json.loads(out2)) == (rc1, json.loads(out1)), case.name
        hits += bool(entries(project))
    assert hits >= len(cases) * 3 // 4  # the rest had internal errors or unreadable files: not cached


def test_editing_the_launch_or_the_pin_file_is_a_miss(example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=True)
    req = example / "requirements.txt"
    req.write_text(req.read_text().replace("flashinfer-python==0.6.16.post4", "flashinfer-python==0.7.2"))
    rc, out = check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    assert "KL101" not in out
    launch = example / LAUNCH
    launch.write_text(launch.read_text() + "\n# a comment\n")
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=True)


def test_a_new_file_where_lint_looked_is_a_miss(example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _, before = check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    assert "KL101" in before
    # settings next to the launch: a path lint probed and found missing
    (example / "deploy" / "kimi-lsp.toml").write_text('ignore = ["KL101"]\n')
    rc, out = check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    assert "KL101" not in out
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=True)
    # a model config.json where the launch's model name would be looked up
    model = example / "deploy" / "moonshotai" / "Kimi-K3"
    model.mkdir(parents=True)
    (model / "config.json").write_text('{"architectures": ["DeepseekV3ForCausalLM"]}')
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)


def test_settings_and_environment_are_part_of_the_key(example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    _, out = check(["--check", "--ignore", "KL101", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    assert "KL101" not in out
    check(["--check", "--ignore", "KL101", LAUNCH], example, monkeypatch, capsys, expect_hit=True)
    monkeypatch.setenv("HF_HOME", str(example / "elsewhere"))
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)


def test_git_operations_do_not_invalidate(example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    (example / ".git" / "index").write_bytes(b"x")  # `.git` is only probed for existence
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=True)


def test_a_corrupt_entry_is_a_miss_and_is_rewritten(example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _, first = check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    (entry,) = entries(example)
    key, deps, _result = marshal.loads(entry.read_bytes())
    wrong_shape = marshal.dumps((key, deps, [("KL101", "too", "short")]))
    for junk in (b"", b"\x00garbage", entry.read_bytes()[:20], wrong_shape):
        entry.write_bytes(junk)
        _, out = check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
        assert out == first
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=True)


def test_files_changed_just_before_the_run_are_not_cached(example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("KIMI_LSP_CACHE_RACY_SECONDS")  # the default two-second window
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    assert entries(example) == []
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)


@pytest.mark.parametrize("how", ["flag", "env"])
def test_no_cache_neither_reads_nor_writes(example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], how: str) -> None:
    args = ["--check", "--no-cache", LAUNCH] if how == "flag" else ["--check", LAUNCH]
    if how == "env":
        monkeypatch.setenv("KIMI_LSP_NO_CACHE", "1")
    check(args, example, monkeypatch, capsys, expect_hit=False)
    check(args, example, monkeypatch, capsys, expect_hit=False)
    assert not (example.parent / "kimi-cache").exists()


def test_what_is_never_cached(example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # a directory walk (a new file anywhere below would change it)
    check(["--check", "deploy"], example, monkeypatch, capsys, expect_hit=False)
    check(["--check", "deploy"], example, monkeypatch, capsys, expect_hit=False)
    # a pin file named on the command line (it stands for the launches it governs)
    check(["--check", "requirements.txt"], example, monkeypatch, capsys, expect_hit=False)
    check(["--check", "requirements.txt"], example, monkeypatch, capsys, expect_hit=False)
    assert entries(example) == []
    # --diff and --fix always lint
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    _, diff = check(["--check", "--diff", LAUNCH], example, monkeypatch, capsys)
    assert "+flashinfer-python==0.7.2" in diff


def test_a_cache_that_cannot_be_written_changes_nothing(example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = example / "not-a-dir"
    blocker.write_text("a file where the cache directory would go")
    monkeypatch.setenv("KIMI_LSP_CACHE_DIR", str(blocker / "cache"))
    rc1, out1 = check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    rc2, out2 = check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    assert (rc1, out1) == (rc2, out2) and rc1 == 1


def test_default_location_follows_xdg(example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("KIMI_LSP_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=True)
    assert list((tmp_path / "xdg" / "kimi-lsp").rglob("*.bin"))


# -- what the key covers: every file of the package but bytecode (the red team's c1) ---------------


def test_the_key_covers_every_data_file_of_the_package(tmp_path: Path) -> None:
    """A schema update that ships only ``knowledge/data/sglang-schemas.tsv`` (or any data file:
    ``*.json.gz``, ``*.tsv``) is a new key; bytecode is not part of it."""
    from kimi_lsp import cache

    pkg = tmp_path / "pkg"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__pycache__").mkdir()
    for name in ("a.py", "data/s.tsv", "data/t.json.gz", "py.typed", "__pycache__/a.cpython-311.pyc"):
        (pkg / name).write_text("x", "utf-8")
    listed = {Path(p).relative_to(pkg).as_posix() for p, _m, _s in cache._tree_sig(str(pkg))}
    assert listed == {"a.py", "data/s.tsv", "data/t.json.gz", "py.typed"}
    before = cache._tree_sig(str(pkg))
    st = (pkg / "data" / "s.tsv").stat()
    (pkg / "data" / "s.tsv").write_text("y", "utf-8")  # the same size: the mtime tells
    import os

    os.utime(pkg / "data" / "s.tsv", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert cache._tree_sig(str(pkg)) != before
    real = Path(cache.__file__).parent
    shipped = {p.relative_to(real).as_posix() for p in (real / "knowledge" / "data").iterdir() if p.is_file()}
    covered = {Path(p).relative_to(real).as_posix() for p, _m, _s in cache._tree_sig(str(real))}
    assert shipped and shipped <= covered


# -- a cache directory someone else can write: no cache, and no write through a link (c2) --------


def _victim(tmp_path: Path, n: int) -> Path:
    victim = tmp_path / "victim"
    victim.mkdir()
    for i in range(n):
        (victim / f"{i:016x}.bin").write_text(f"victim file {i}", "utf-8")
    return victim


@pytest.mark.parametrize("how", ["writable by others", "results is a link", "cache dir is a link", "another owner"])
def test_a_cache_directory_others_can_write_is_not_used(how: str, example: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    import os

    shared = tmp_path / "shared"
    victim = _victim(tmp_path, 30)
    if how == "writable by others":
        shared.mkdir()
        shared.chmod(0o777)
        (shared / "CACHEDIR.TAG").symlink_to(victim / "created-by-kimi-lsp")
    elif how == "results is a link":
        shared.mkdir(mode=0o700)
        (shared / "results-v2").symlink_to(victim)
    elif how == "cache dir is a link":
        shared.symlink_to(victim)
    else:
        if os.geteuid() != 0:
            pytest.skip("another owner needs root")
        shared.mkdir(mode=0o755)
        os.chown(shared, 1000, 1000)
    monkeypatch.setenv("KIMI_LSP_CACHE_DIR", str(shared))
    from kimi_lsp import cache

    monkeypatch.setattr(cache, "MAX_ENTRIES", 1)
    fresh = check(["--check", LAUNCH, "--no-cache"], example, monkeypatch, capsys, expect_hit=False)
    for _ in range(2):  # the same answer, never a hit: nothing was kept
        assert check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False) == fresh
    assert sorted(p.name for p in victim.iterdir()) == [f"{i:016x}.bin" for i in range(30)]


def test_cachedir_tag_is_never_written_through_a_link(example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    (mine / "CACHEDIR.TAG").symlink_to(tmp_path / "elsewhere")
    monkeypatch.setenv("KIMI_LSP_CACHE_DIR", str(mine))
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=True)  # the cache itself works
    assert not (tmp_path / "elsewhere").exists()


def test_pruning_unlinks_only_this_users_entries(example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Past MAX_ENTRIES the oldest entries go: regular files named as entries, never a link
    planted among them (nor what it points to), nor a file of another name."""
    import os

    from kimi_lsp import cache

    victim = _victim(tmp_path, 3)
    results = tmp_path / "kimi-cache" / f"results-v{cache.FORMAT}"
    results.mkdir(parents=True, mode=0o700)
    for i in range(3):
        (results / f"{i:016x}.bin").symlink_to(victim / f"{i:016x}.bin")
        os.utime(results / f"{i:016x}.bin", (1, 1), follow_symlinks=False)
    (results / "notes.txt").write_text("keep", "utf-8")
    old = results / "ffffffffffffffff.bin"
    old.write_bytes(b"an old entry")
    os.utime(old, (1, 1))
    monkeypatch.setattr(cache, "MAX_ENTRIES", 1)
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    assert not old.exists() and (results / "notes.txt").exists() and len(list(victim.iterdir())) == 3
    assert all((results / f"{i:016x}.bin").is_symlink() for i in range(3))
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=True)


def test_cache_files_are_0600_whatever_the_umask(example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import os
    import stat

    old = os.umask(0)
    try:
        check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    finally:
        os.umask(old)
    cache_dir = tmp_path / "kimi-cache"
    made = [cache_dir / "CACHEDIR.TAG", *entries(example)]
    assert len(made) == 2 and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in made)
    assert all(stat.S_IMODE(d.stat().st_mode) == 0o700 for d in (cache_dir, cache_dir / "results-v2"))


def test_kimi_lsps_own_group_writable_directory_is_made_private(example: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """~/.cache/kimi-lsp made group-writable by an older kimi-lsp under umask 002 (user private
    groups) is this user's own: write access for others is taken off and the cache works; a
    directory the user named (KIMI_LSP_CACHE_DIR) is never changed (refused instead, above)."""
    import stat

    monkeypatch.delenv("KIMI_LSP_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    own = tmp_path / "xdg" / "kimi-lsp"
    (own / "results-v2").mkdir(parents=True)
    for d in (own, own / "results-v2"):
        d.chmod(0o775)
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=False)
    check(["--check", LAUNCH], example, monkeypatch, capsys, expect_hit=True)
    assert all(stat.S_IMODE(d.stat().st_mode) == 0o755 for d in (own, own / "results-v2"))


def test_editing_the_dockerfile_a_compose_build_names_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # the compose launch is read through the Dockerfile's ENTRYPOINT: the entry keys on that file
    project = _project(FIXTURES / "compose_build_entrypoint", tmp_path / "built")
    _, before = check(["--check", "compose.yaml"], project, monkeypatch, capsys, expect_hit=False)
    assert "--enable-dp-attenton" in before
    check(["--check", "compose.yaml"], project, monkeypatch, capsys, expect_hit=True)
    dockerfile = project / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace('"python3", "-m", "sglang.launch_server", ', '"/start.sh", '))
    _, after = check(["--check", "compose.yaml"], project, monkeypatch, capsys, expect_hit=False)
    assert "--enable-dp-attenton" not in after


def test_editing_the_script_that_builds_a_k8s_image_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # an args-only container is read through the Dockerfile build.sh tags its image from: the
    # entry keys on the script (and the directories walked for it), not only on the manifest
    project = _project(FIXTURES / "k8s_args_only_built_image", tmp_path / "k8s")
    _, before = check(["--check", "deploy.yaml"], project, monkeypatch, capsys, expect_hit=False)
    assert "--frobnicate" in before
    check(["--check", "deploy.yaml"], project, monkeypatch, capsys, expect_hit=True)
    script = project / "build.sh"
    script.write_text(script.read_text().replace("acme/sglang-server:1.0", "acme/sglang-server:2.0"))
    _, after = check(["--check", "deploy.yaml"], project, monkeypatch, capsys, expect_hit=False)
    assert "--frobnicate" not in after
