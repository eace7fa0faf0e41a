"""``kimi_lsp.batch.lint_files``: the parallel path gives exactly the serial path's result, and a
pin file is read at most once per process."""
from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from kimi_lsp import batch
from kimi_lsp.cli.check import collect_files
from kimi_lsp.pins import discovery
from kimi_lsp.workspace import Workspace

from ._support import FIXTURES, make_repo

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gen_corpus.py"


def _gen_corpus():
    spec = importlib.util.spec_from_file_location("kimi_bench_gen_corpus", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _files(root: Path) -> list[Path]:
    files, errors = collect_files(["."], Workspace(root))
    assert not errors
    return [f for f in files if f.suffix != ".fixed"]


def _same(root: Path, files: list[Path], overrides: dict | None = None) -> tuple[list, list]:
    serial = batch.lint_files(files, root, overrides or {}, jobs=1)
    real, used = batch._lint_parallel, []

    def spy(*a, **kw):
        used.append(True)
        return real(*a, **kw)

    batch._lint_parallel = spy
    try:
        parallel = batch.lint_files(files, root, overrides or {}, jobs=2)
    finally:
        batch._lint_parallel = real
    assert used, "the parallel path did not run"
    assert [d.sort_key() for d in parallel[0]] == [d.sort_key() for d in serial[0]]
    assert parallel[0] == serial[0]
    assert [d.data for d in parallel[0]] == [d.data for d in serial[0]]
    assert parallel[1] == serial[1] == []
    return serial


@pytest.fixture
def low_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "PARALLEL_MIN_FILES", 4)
    monkeypatch.setattr(batch, "_MIN_FILES_PER_WORKER", 2)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("batch") / "corpus"
    _gen_corpus().generate(root, 260, seed=3, per_project=25)
    return root.resolve()


def test_parallel_equals_serial_on_generated_corpus(corpus: Path, low_threshold: None) -> None:
    files = _files(corpus)
    assert len(files) > batch.PARALLEL_MIN_FILES
    assert batch.workers_for(2, len(files)) == 2 and batch.workers_for(None, 10_000) == (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
    diags, _ = _same(corpus, files)
    assert {d.code for d in diags} >= {"KL101"}


def test_parallel_equals_serial_with_overrides(corpus: Path, low_threshold: None) -> None:
    files = _files(corpus)[:120]
    _same(corpus, files, {"select": ("KL1",), "sglang_version": "0.5.21"})


def test_parallel_equals_serial_on_fixture_corpus(tmp_path: Path, low_threshold: None) -> None:
    """Every fixture case side by side in one tree (each case a repository of its own)."""
    root = tmp_path / "all"
    for case in sorted(p for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith("_")):
        shutil.copytree(case, root / case.name, symlinks=True)
        (root / case.name / ".git").mkdir(exist_ok=True)
    root = root.resolve()
    files = _files(root)
    diags, _ = _same(root, files)
    assert len(diags) > 20


def test_config_referenced_from_another_chunk(tmp_path: Path, low_threshold: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A --config YAML in one project passed by a launch in another: the worker that lints the
    YAML does not see the reference, and the parent must re-lint it knowing every reference."""
    root = make_repo(tmp_path / "repo")
    for name in ("a", "b"):
        (root / name).mkdir()
        (root / name / "requirements.txt").write_text("sglang==0.5.23\nflashinfer-python==0.6.16.post4\n", "utf-8")
    (root / "a" / "k3.yaml").write_text(
        "model-path: moonshotai/Kimi-K3\ntp-size: 8\ndecode-attention-backend: cutedsl_mla\nbogus-key: 1\n", "utf-8")
    (root / "b" / "run.sh").write_text(
        "#!/bin/bash\npython3 -m sglang.launch_server --config ../a/k3.yaml --dcp-size 8\n", "utf-8")
    for i in range(6):  # filler, so that each project is a chunk of its own
        (root / "a" / f"c{i}.yaml").write_text("model-path: x\ntp-size: 2\n", "utf-8")
        (root / "b" / f"s{i}.sh").write_text("#!/bin/bash\nsglang serve x --tp-size 2\n", "utf-8")
    monkeypatch.setattr(batch, "_CHUNKS_PER_WORKER", 8)
    files = _files(root)
    chunks = batch._chunks(files, 16)
    where = {files[j]: k for k, c in enumerate(chunks) for j in c}
    assert where[root / "a" / "k3.yaml"] != where[root / "b" / "run.sh"]
    diags, _ = _same(root, files)
    # the reference is honoured: KL101 is reported through the launch (with its --dcp-size)
    assert any(d.code == "KL101" for d in diags), [(d.path.name, d.code) for d in diags]


def test_each_pin_file_is_read_once_per_process(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, low_threshold: None) -> None:
    log = tmp_path / "reads.log"
    real = discovery._dispatch

    def counting(fmt, src, workspace):
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()} {src.path}\n")
        return real(fmt, src, workspace)

    monkeypatch.setattr(discovery, "_dispatch", counting)  # forked workers inherit the patch
    files = _files(corpus)
    for jobs in (1, 2):
        log.write_text("", "utf-8")
        batch.lint_files(files, corpus, {}, jobs=jobs)
        reads = log.read_text("utf-8").splitlines()
        assert reads
        assert len(reads) == len(set(reads)), f"jobs={jobs}: a pin file was parsed twice in one process"
        per_file = {}
        for line in reads:
            per_file.setdefault(line.split(" ", 1)[1], set()).add(line.split(" ", 1)[0])
        assert max(len(p) for p in per_file.values()) <= max(jobs, 1) + (1 if jobs > 1 else 0)


def test_small_inputs_stay_in_process(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a, **kw):
        raise AssertionError("a pool was started for a small input")

    monkeypatch.setattr(batch, "_lint_parallel", boom)
    files = _files(corpus)[:50]
    batch.lint_files(files, corpus, {})
    assert batch.workers_for(None, 50) == 1
    assert batch.workers_for(1, 10_000) == 1


def test_chunks_cover_every_file_once(corpus: Path) -> None:
    files = _files(corpus)
    chunks = batch._chunks(files, 8)
    flat = sorted(j for c in chunks for j in c)
    assert flat == list(range(len(files)))
    # a project's files stay together unless the project is bigger than a chunk
    cache: dict = {}
    for c in chunks:
        projects = {batch.project_key(files[j], cache) for j in c}
        assert len(projects) <= 1 + len(c) // 8


@pytest.mark.parametrize("enabled", [True, False])
def test_indexing_pauses_the_collector_and_leaves_its_reads_out_of_later_collections(enabled: bool) -> None:
    """``_index`` reads every file with the cyclic collector paused; afterwards the collector is
    as it was, and (when on) what was read is frozen, so the lint's collections skip it."""
    import gc

    from kimi_lsp.engine import Engine

    seen: list[bool] = []
    engine = Engine(Workspace(FIXTURES, stable=True))
    real = engine.index_config_references
    engine.index_config_references = lambda files: (seen.append(gc.isenabled()), real(files))[1]  # type: ignore[method-assign]
    was = gc.isenabled()
    gc.unfreeze()
    try:
        (gc.enable if enabled else gc.disable)()
        batch._index(engine, sorted(FIXTURES.rglob("*.yaml"))[:20])
        assert seen == [False]
        assert gc.isenabled() is enabled
        assert (gc.get_freeze_count() > 0) is enabled
    finally:
        gc.unfreeze()
        (gc.enable if was else gc.disable)()
