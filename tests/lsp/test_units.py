"""In-process tests of the server's pure parts: positions, settings, edits, suppression placement,
completion contexts (the protocol itself is covered end to end in the other modules)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kimi_lsp.lsp import completion, convert, edits, settings, suppress
from kimi_lsp.lsp.session import DocSnap, Session
from kimi_lsp.text import LineIndex, Span
from lsprotocol import types as T

from .conftest import make_project

TEXT = st.text(alphabet=st.sampled_from(list("ab \t-:#\\\n\r") + ["é", "模", "🚀", "\u2028"]), max_size=60)


@given(TEXT, st.integers(min_value=0, max_value=80), st.sampled_from([convert.UTF8, convert.UTF16, convert.UTF32]))
def test_offsets_round_trip_through_client_positions(text: str, offset: int, encoding: str) -> None:
    lines = LineIndex(text)
    offset = min(offset, len(text))
    if 0 < offset < len(text) and text[offset - 1 : offset + 1] == "\r\n":
        offset -= 1  # inside a CRLF is no position
    pos = convert.position(lines, offset, encoding)
    assert convert.offset_of(lines, pos, encoding) == offset


def test_utf16_columns_count_surrogate_pairs() -> None:
    lines = LineIndex("🚀x --flag\n")
    assert convert.position(lines, 2, convert.UTF16) == T.Position(line=0, character=3)
    assert convert.position(lines, 2, convert.UTF8) == T.Position(line=0, character=5)
    assert convert.offset_of(lines, T.Position(line=0, character=3), convert.UTF16) == 2
    assert convert.offset_of(lines, T.Position(line=9, character=0), convert.UTF16) == len("🚀x --flag\n")


def test_editor_settings_are_validated_and_normalised() -> None:
    s = settings.parse({"kimi-lsp": {"select": "KL1, KL2", "sglangVersion": "0.5.22", "targetGpu": "b200"}})
    assert s.overrides == {"select": ("KL1", "KL2"), "sglang_version": "0.5.22", "target_gpu": "b200"}
    assert not s.problems and not s.prefer_editor
    bad = settings.parse({"ignore": ["KL1", "nope"], "severity": {"KL101": "loud"}, "sglang-version": "x.y", "frob": 1})
    assert bad.overrides == {"ignore": ("KL1",), "severity": ()}
    assert len(bad.problems) == 4
    assert settings.parse({"configurationPreference": "editor", "extend-select": ["KL9"]}).prefer_editor
    assert settings.parse({"extend-select": ["KL9"]}).overrides == {"select": ("KL", "KL9")}
    assert settings.parse({"sglang-version": "", "path": ["/x"]}).overrides == {}


def test_minimal_edit_keeps_common_prefix_and_suffix() -> None:
    assert edits.minimal_edit("flashinfer-python==0.6.16\n", "flashinfer-python==0.6.17\n") == (Span(24, 25), "7")
    assert edits.minimal_edit("aaa", "aaaa") == (Span(3, 3), "a")
    assert edits.minimal_edit("abc", "") == (Span(0, 3), "")


def test_suppression_candidates() -> None:
    text = "a: 1\n  b: 2  # kimi-lsp: ignore[KL201]\ncmd \\\n  --x 1 \\\n  --y 2\n"
    lines = LineIndex(text)
    assert suppress.line_candidates(text, lines, 0, "KL101")[0] == (Span(4, 4), "  # kimi-lsp: ignore[KL101]")
    first = suppress.line_candidates(text, lines, 1, "KL101")[0]
    assert text[: first[0].start] + first[1] + text[first[0].end :] == text.replace("[KL201]", "[KL201, KL101]")
    assert suppress.scope_for(lines, 3) == "file"  # inside a continuation
    assert suppress.scope_for(lines, 2) == "line" and suppress.scope_for(lines, 4) == "line"
    shebang = "#!/bin/sh\n# syntax=docker/dockerfile:1\nx\n"
    ((span, new),) = suppress.file_candidates(shebang, LineIndex(shebang), "KL101")
    assert span.start == shebang.index("\nx") + 1 and new == "# kimi-lsp: ignore-file[KL101]\n"


def _session(tmp_path: Path, files: dict[str, str]) -> tuple[Session, dict]:
    root = make_project(tmp_path, files)
    session = Session(root, [root])
    snaps = {(root / n).resolve(): DocSnap((root / n).as_uri(), 1, t) for n, t in files.items()}
    return session, snaps


def test_completion_contexts_and_item_defaults(tmp_path: Path) -> None:
    files = {"c.yaml": "model-path: x\ndcp\nattention-backend: \n", "p.toml": '[sglang]\ntp\nattention-backend = "fl'}
    session, snaps = _session(tmp_path, files)
    root = session.root
    shape = completion.ClientShape(tags=True, lazy_docs=True, edit_range=True)
    keys = completion.complete(session, snaps, (root / "c.yaml").as_uri(), T.Position(line=1, character=3), shape)
    assert keys.item_defaults.edit_range.start == T.Position(line=1, character=0)
    item = next(i for i in keys.items if i.label == "dcp-size")
    assert item.text_edit is None and item.text_edit_text == "dcp-size: "
    assert "decode context parallelism" in completion.resolve_item(item).documentation.value
    values = completion.complete(session, snaps, (root / "c.yaml").as_uri(), T.Position(line=2, character=19), shape)
    assert {"cutedsl_mla", "flashinfer"} <= {i.label for i in values.items}
    toml = completion.complete(session, snaps, (root / "p.toml").as_uri(), T.Position(line=1, character=2), shape)
    assert next(i for i in toml.items if i.label == "tp-size").text_edit_text == "tp-size = "
    toml_values = completion.complete(
        session, snaps, (root / "p.toml").as_uri(), T.Position(line=2, character=23), shape
    )
    assert {i.label for i in toml_values.items} >= {"flashinfer"}
    assert next(i for i in toml_values.items if i.label == "flashinfer").text_edit_text is None  # quote already typed


def test_no_flag_completion_in_unrelated_files(tmp_path: Path) -> None:
    session, snaps = _session(tmp_path, {"ci.yaml": "jobs:\n  build:\n    steps: --\n"})
    shape = completion.ClientShape()
    uri = (session.root / "ci.yaml").as_uri()
    assert completion.complete(session, snaps, uri, T.Position(line=0, character=2), shape) is None
    assert completion.complete(session, snaps, uri, T.Position(line=2, character=13), shape) is None


def test_completion_in_a_small_config_with_a_typo_and_an_ambiguous_key(tmp_path: Path) -> None:
    text = "model-path: x\ntp-sise: 8\ndis: true\n\ndcp\n"
    session, snaps = _session(tmp_path, {"c.yaml": text})
    uri = (session.root / "c.yaml").as_uri()
    shape = completion.ClientShape(lazy_docs=True)
    typed = completion.complete(session, snaps, uri, T.Position(line=4, character=3), shape)
    assert typed is not None and not typed.is_incomplete
    assert {i.label for i in typed.items} >= {"dcp-size"} and all("dcp" in i.label for i in typed.items)
    empty = completion.complete(session, snaps, uri, T.Position(line=3, character=0), shape)
    assert empty is not None and empty.is_incomplete and len(empty.items) == completion.MAX_ITEMS


# -- notebooks in a notebook editor: cell positions <-> the rebuilt JSON ------------------------


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_every_cell_position_survives_the_rebuilt_notebook(encoding: str) -> None:
    from kimi_lsp.lsp.notebooks import NotebookView

    cells = [("c0", "code", "python", 'x = "é\\\\"\n!echo "\\u00e9 \U0001F600" end\r\n'),
             ("c1", "markdown", "markdown", ""), ("c2", "code", "python", "y")]
    view = NotebookView("file:///p/n.ipynb", Path("/p/n.ipynb"), 1, cells)
    for index, (_, _, _, text) in enumerate(cells):
        lines = view.cell_lines(index)
        for k in range(len(text) + 1):
            if text[k - 1 : k + 1] == "\r\n":
                continue  # between CR and LF: no position of LSP's
            p = convert.position(lines, k, encoding)
            placed = view.to_cell(view.from_cell(index, T.Range(start=p, end=p), encoding), encoding)
            assert placed is not None and placed[0] == index and placed[1].start == p, (index, k)
