"""Fix vetting is linear in the number of fixes (issue 33): a 2,910-line MDX guide with 28 fixes
took 5 s, ~80 % of it re-reading the whole document once per fix. A fix inside one shell block of
a Markdown document is now vetted on that block alone; these tests count whole-document reads for
n and 2n fixes, and hold the block read to what the whole-document read gives."""
from __future__ import annotations

from pathlib import Path

import pytest

import kimi_lsp.rules._vet as vet
from kimi_lsp.diagnostics import Edit
from kimi_lsp.surfaces import read_surface
from kimi_lsp.syntax import markdown as md
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText

from ._support import FIXTURES, fresh_engine, make_repo

PROSE = "More prose about this variant.\n" * 40


def guide(n: int, newline: str = "\n") -> str:
    """A deploy guide: n sections, each a launch with a misspelt flag (a safe did-you-mean fix)."""
    parts = ["# Serving\n"]
    for i in range(n):
        parts.append(
            f"\n## Variant {i}\n\n```bash\npython -m sglang.launch_server --model-path org/m{i} --tp-size 8 "
            f"--enable-torch-compiel\n```\n\n{PROSE}"
        )
    return "".join(parts).replace("\n", newline)


def _count_whole_reads(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    seen = {"read_surface": 0, "code_blocks": 0}

    def surface(*a: object, **k: object) -> object:
        seen["read_surface"] += 1
        return read_surface(*a, **k)  # type: ignore[arg-type]

    blocks = md.code_blocks

    def code_blocks(*a: object, **k: object) -> object:
        seen["code_blocks"] += 1
        return blocks(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(vet, "read_surface", surface)
    monkeypatch.setattr(md, "code_blocks", code_blocks)
    return seen


def _lint_guide(tmp_path: Path, n: int, newline: str = "\n") -> tuple[int, int]:
    repo = make_repo(tmp_path / f"repo{n}")
    (repo / "requirements.txt").write_text("sglang==0.5.23\n", "utf-8")
    (repo / "serve.mdx").write_text(guide(n, newline), "utf-8", newline="")
    result = fresh_engine(repo).lint_file(repo / "serve.mdx")
    fixes = [f for d in result.diagnostics if d.code == "KL201" for f in d.fixes]
    assert len(fixes) == n, result.diagnostics  # vetted as safe, then shown only (documentation)
    return n, len(fixes)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_whole_document_reads_do_not_grow_with_the_fixes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, newline: str) -> None:
    seen = _count_whole_reads(monkeypatch)
    counts = []
    for n in (10, 20):
        seen.update(read_surface=0, code_blocks=0)
        _lint_guide(tmp_path, n, newline)
        counts.append(dict(seen))
    # before: one whole read (and block scan) per fix, 10 -> 20 and 12 -> 22
    assert counts[0] == counts[1], counts
    assert counts[0]["read_surface"] == 0 and counts[0]["code_blocks"] <= 3, counts


# -- the block read is the whole read ------------------------------------------------------------

DOCS = {
    "plain.md": guide(3),
    "crlf.md": guide(2, "\r\n"),
    "prompts.md": (
        "# Run\n\n```console\n$ export SGLANG_X=1\n$ python -m sglang.launch_server --model-path a/b \\\n"
        "    --tp-size 8 --port 30000\nserver started\n```\n\nText.\n\n  ```bash\n  cd deploy\n"
        "  python3 -m sglang.launch_server --model-path <model> --config k3.yaml --dp 2\n  ```\n"
    ),
    "continued.md": (
        "Intro\n\n```sh\nMODEL=org/x\npip install sglang==0.5.23\nsglang serve --model-path $MODEL\n"
        "  --tp-size 4 --host 0.0.0.0\n```\n\n```bash\npython -m sglang.launch_server --model-path y "
        "--decode-attention-backend cutedsl_mla --dcp-size 8\n```\n"
    ),
    "cd_before.md": (
        "```bash\ncd sglang-services\n```\n\n```bash\npython -m sglang.launch_server --model-path z --config c.yaml\n```\n"
    ),
}


def _edits_for(src: SourceText) -> list[tuple[int, list[Edit]]]:
    """(launch index, edits) that a fix might make to each launch: each argument replaced by
    another word, removed, or lengthened."""
    out: list[tuple[int, list[Edit]]] = []
    for i, launch in enumerate(read_surface(src).launches):
        for tok in launch.argv:
            for new in ("--tp", "", tok.value + "-x", "'a b'"):
                out.append((i, [Edit(src.path, tok.span, new)]))
    return out


def _whole(src: SourceText, old_index: int, edits: list[Edit]) -> object:
    old = read_surface(src).launches[old_index]
    text = src.text
    for e in sorted(edits, key=lambda e: e.span.start, reverse=True):
        text = text[: e.span.start] + e.new_text + text[e.span.end :]
    launches = read_surface(SourceText(src.path, text)).launches
    return vet._same_launch(old, launches, edits)


@pytest.mark.parametrize("name", sorted(DOCS))
def test_the_block_read_gives_the_launch_the_whole_read_gives(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    src = SourceText(path, DOCS[name])
    launches = read_surface(src).launches
    assert launches
    fast = 0
    for i, edits in _edits_for(src):
        got = vet._reread_block(launches[i], src.text, edits)
        if got is vet._WHOLE:
            continue
        fast += 1
        assert got == _whole(src, i, edits), (name, edits)
    assert fast, "no edit took the block read"


def test_a_cd_in_an_earlier_block_is_kept(tmp_path: Path) -> None:
    src = SourceText(tmp_path / "cd_before.md", DOCS["cd_before.md"])
    launch = read_surface(src).launches[0]
    assert launch.base_dir == tmp_path / "sglang-services"
    tok = launch.argv[-1]
    got = vet._reread_block(launch, src.text, [Edit(src.path, tok.span, "d.yaml")])
    assert got is not vet._WHOLE and got is not None and got.base_dir == tmp_path / "sglang-services"


@pytest.mark.parametrize(
    "new",
    ["x\n```\n", "```", "~~~", "a\nb"],
)
def test_an_edit_that_may_change_the_blocks_reads_the_whole_document(tmp_path: Path, new: str) -> None:
    src = SourceText(tmp_path / "plain.md", DOCS["plain.md"])
    launch = read_surface(src).launches[0]
    tok = launch.argv[-1]
    assert vet._reread_block(launch, src.text, [Edit(src.path, tok.span, new)]) is vet._WHOLE


def test_edits_outside_the_block_read_the_whole_document(tmp_path: Path) -> None:
    src = SourceText(tmp_path / "plain.md", DOCS["plain.md"])
    launch = read_surface(src).launches[0]
    assert vet._reread_block(launch, src.text, [Edit(src.path, Span(0, 1), "#")]) is vet._WHOLE


@pytest.mark.parametrize("doc", sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*.md")))
def test_fixture_documents_vet_alike_either_way(doc: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = FIXTURES / doc
    repo = FIXTURES / doc.split("/", 1)[0]

    def run() -> list[tuple[str, int, tuple[str, ...]]]:
        result = fresh_engine(repo).lint_file(path)
        return [(d.code, d.location.span.start, tuple(f.applicability.value for f in d.fixes)) for d in result.diagnostics]

    fast = run()
    monkeypatch.setattr(vet, "_reread_block", lambda *a: vet._WHOLE)
    assert fast == run()
