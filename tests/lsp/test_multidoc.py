"""Per-document re-lint of multi-document YAML (lsp/multidoc.py) equals a full lint: after random
edits of a generated Kubernetes manifest, and on every multi-document YAML fixture."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kimi_lsp.engine import Engine, FileResult
from kimi_lsp.lsp import multidoc
from kimi_lsp.lsp.session import DocSnap, Session
from kimi_lsp.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]


def deployment(i: int) -> str:
    """A Deployment running sglang; the variants carry different diagnostics (KL101, unknown
    flag, bad choice, an official image naming the release, a typo in a value)."""
    backend = ("cutedsl_mla", "flashinfer", "triton", "aiter")[i % 4]
    image = "lmsysorg/sglang:v0.5.5" if i % 5 == 0 else "registry.example.com/serving/sglang-k3:2026.11"
    extra = ('            - --enable-deepep-moe\n' if i % 6 == 1 else "") + (
        '            - --tp-sise\n            - "4"\n' if i % 7 == 2 else ""
    )
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: kimi-k3-{i}
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: server
          image: {image}
          command: ["python3", "-m", "sglang.launch_server"]
          args:
            - --model-path
            - moonshotai/Kimi-K3
            - --dcp-size
            - "{2 + i % 7}"
            - --decode-attention-backend
            - {backend}
{extra}            - --port
            - "{30000 + i}"
          resources:
            limits:
              nvidia.com/gpu: 8
"""


def service(i: int) -> str:
    return f"apiVersion: v1\nkind: Service\nmetadata:\n  name: kimi-k3-{i}\nspec:\n  ports: [{{port: {30000 + i}}}]\n"


def manifest(n: int = 12) -> str:
    docs = []
    for i in range(n):
        docs.append(deployment(i))
        if i % 3 == 0:
            docs.append(service(i))
    return "# generated\n" + "---\n".join(docs)


def project(tmp_path: Path, text: str) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "requirements.txt").write_text("sglang==0.5.23\nflashinfer-python==0.6.16.post4\n")
    path = root / "deploy" / "manifest.yaml"
    path.parent.mkdir()
    path.write_text(text)
    old = time.time() - 60  # files this new are not trusted by their signature (RACY_SECONDS)
    for p in (root / "requirements.txt", path, path.parent, root):
        os.utime(p, (old, old))
    return root.resolve(), path.resolve()


def full_lint(root: Path, path: Path, text: str) -> list[object]:
    ws = Workspace(root)
    ws.set_overlay(path, text)
    return list(Engine(ws).lint_file(path).diagnostics)


def edit(rng: random.Random, text: str) -> str:
    pos = rng.randrange(len(text) + 1)
    kind = rng.random()
    if kind < 0.45:
        return text[:pos] + rng.choice(["7", "x", "-", " ", "\n", "a: b\n", "--tp", "---\n", ":"]) + text[pos:]
    if kind < 0.9:
        return text[:pos] + text[pos + rng.randint(1, 6) :]
    lines = text.split("\n")  # retype a whole value line, as completion does
    k = rng.randrange(len(lines))
    lines[k] = lines[k].replace("8", "16")
    return "\n".join(lines)


def test_split_qualifies_manifests_only() -> None:
    assert multidoc.split(manifest(4)) is not None
    assert multidoc.split("a: 1\n") is None  # one document
    assert multidoc.split(manifest(4) + "# kimi-lsp: ignore[KL101]\n") is None  # suppressions span documents
    assert multidoc.split(manifest(4) + "---\ncommand: pip install sglang==0.5.5\n") is None  # file-wide evidence
    assert multidoc.split("{{ .Values.x }}\n" + manifest(4)) is None  # a template


@pytest.mark.parametrize("seed", [15, 16])
def test_incremental_equals_full_lint_after_random_edits(tmp_path: Path, seed: int) -> None:
    text = manifest()
    root, path = project(tmp_path, text)
    session = Session(root, [root])
    rng = random.Random(seed)
    version = 1
    session.lint_paths({path}, {path: DocSnap(path.as_uri(), version, text)})
    assert path not in session.multidoc.checked and session.multidoc.linted == 0  # the first lint is a full one
    version += 1
    session.lint_paths({path}, {path: DocSnap(path.as_uri(), version, text)})
    assert session.multidoc.checked.get(path) is True  # the second checked itself against a full one
    before = session.multidoc.reused
    base = text
    for step in range(60):
        text = edit(rng, base if rng.random() < 0.3 else text)  # a few edits at a time, then back
        version += 1
        session.lint_paths({path}, {path: DocSnap(path.as_uri(), version, text)})
        got = list(session.results[path].diagnostics)
        assert got == full_lint(root, path, text), f"step {step}"
    assert session.multidoc.reused - before > 250  # most documents were reused, not re-linted


def test_incremental_equals_full_lint_after_a_pin_change(tmp_path: Path) -> None:
    text = manifest(6)
    root, path = project(tmp_path, text)
    session = Session(root, [root])
    session.lint_paths({path}, {path: DocSnap(path.as_uri(), 1, text)})
    assert any(d.code == "KL101" for d in session.results[path].diagnostics)
    (root / "requirements.txt").write_text("sglang==0.5.23\nflashinfer-python==0.6.17\n")
    os.utime(root / "requirements.txt", (time.time() - 30, time.time() - 30))
    session.invalidate(root / "requirements.txt")
    text = text.replace('"30001"', '"30011"')
    session.lint_paths({path}, {path: DocSnap(path.as_uri(), 2, text)})
    got = list(session.results[path].diagnostics)
    assert not any(d.code == "KL101" for d in got)
    assert got == full_lint(root, path, text)


MULTI = sorted(
    p for p in (REPO / "tests" / "fixtures").rglob("*.y*ml") if p.read_text(errors="replace").count("\n---") >= 1
)


@pytest.mark.parametrize("fixture", MULTI, ids=lambda p: str(p.relative_to(REPO / "tests" / "fixtures")))
def test_documents_of_fixtures_lint_as_the_whole(fixture: Path) -> None:
    """Forced through the per-document path (no self-check), every multi-document fixture that
    qualifies gives the full lint's result."""
    root = fixture.parent
    while not (root / ".git").exists() and root.parent != root and root.name != "fixtures":
        root = root.parent
    text = fixture.read_text()
    old = multidoc.MIN_DOCUMENTS
    multidoc.MIN_DOCUMENTS = 2
    try:
        if multidoc.split(text) is None:
            assert "{{" in text  # a Helm template: linted whole (its documents are not YAML yet)
            return
        session = Session(root, [root])
        path = fixture.resolve()
        session.multidoc.checked[path] = True  # skip the self-check: compare here instead
        session.lint_paths({path}, {path: DocSnap(path.as_uri(), 1, text)})
        assert session.multidoc.linted > 0
        assert list(session.results[path].diagnostics) == full_lint(root, path, text)
    finally:
        multidoc.MIN_DOCUMENTS = old


def config_map(i: int) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n" + "".join(
        f'  key{j}: "value-{i}-{j}"\n' for j in range(8)
    )


def _linted_chars(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int) -> tuple[int, int, list[object]]:
    """Characters the server lints for a bundle of ``n`` ConfigMaps and one launch whose message
    names a line (an image that names the release), over the opening lint and one edit; and the
    edited file's diagnostics."""
    docs = [config_map(i) for i in range(n)]
    docs.insert(n // 2, deployment(0))  # lmsysorg/sglang:v0.5.5: "... at deploy/manifest.yaml:N"
    text = "---\n".join(docs)
    root, path = project(tmp_path, text)
    session = Session(root, [root])
    linted = [0]
    original = multidoc.MultiDoc.lint

    def counting(self: multidoc.MultiDoc, p: Path, t: str, gen: int, view: Callable[[str], FileResult],
                 full: Callable[[], FileResult], valid: Callable[[FileResult, int], bool]) -> FileResult | None:
        def counted_view(v: str) -> FileResult:
            linted[0] += len(v)
            return view(v)

        def counted_full() -> FileResult:
            linted[0] += len(t)
            return full()

        return original(self, p, t, gen, counted_view, counted_full, valid)

    monkeypatch.setattr(multidoc.MultiDoc, "lint", counting)
    session.lint_paths({path}, {path: DocSnap(path.as_uri(), 1, text)})
    edited = text.replace("name: cm-1\n", "name: cm-one\n")
    session.lint_paths({path}, {path: DocSnap(path.as_uri(), 2, edited)})
    assert session.multidoc.checked.get(path) is True and session.multidoc.linted > n  # by documents
    got = list(session.results[path].diagnostics)
    assert got == full_lint(root, path, edited) and got
    return linted[0] + len(text), len(text), got  # + the opening full lint (not through MultiDoc)


def test_documents_cost_linear_in_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Red team L5: each document linted on a view of the whole file cost n x (file size). Now
    the text linted is a few times the file, whatever the number of documents."""
    small, small_size, _ = _linted_chars(tmp_path / "a", monkeypatch, 20)
    large, large_size, _ = _linted_chars(tmp_path / "b", monkeypatch, 160)
    assert large / large_size < 5 and large / large_size < 1.5 * (small / small_size)


def test_a_file_past_the_launch_bound_is_linted_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine checks at most MAX_LAUNCHES_PER_FILE launches of a file (red team D1); linted
    document by document, a manifest of more launches would have every one checked, at every
    edit. Past the bound the per-document path gives up (after the bound's worth of launches)."""
    from kimi_lsp import engine

    monkeypatch.setattr(engine, "MAX_LAUNCHES_PER_FILE", 3)
    text = manifest(12)  # 12 Deployments
    root, path = project(tmp_path, text)
    session = Session(root, [root])
    for version in (1, 2, 3):
        text = text.replace('"3000', '"3100', 1) if version > 1 else text
        session.lint_paths({path}, {path: DocSnap(path.as_uri(), version, text)})
        got = list(session.results[path].diagnostics)
        assert got == full_lint(root, path, text)
        assert sum(1 for d in got if d.code == "KL001" and "not checked" in d.message) == 1
    assert session.multidoc.checked.get(path) is False
    assert session.multidoc.linted <= 3 + 2 + 4  # never the 12 documents: a bound's worth, once
