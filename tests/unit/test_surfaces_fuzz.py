"""Smoke test: no reader raises on arbitrary text, and every span stays inside the file."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kimi_lsp.surfaces import read_surface, read_surface_strict
from kimi_lsp.surfaces.model import Surface, SurfaceResult
from kimi_lsp.workspace import SourceText

# Fragments that steer random text into the interesting parts of each reader.
FRAGMENTS = [
    "python3 -m sglang.launch_server ", "sglang serve ", "bash -c ", "env A=1 ", "export B=2\n",
    "<<EOF\n", "EOF\n", "\\\n", "\\\r\n", "$(", "${", "${{ ", "`", "'", '"', "$'", "#", ";", "&&", "|", "&",
    "(", ")", ">", "2>&1", "\n", "\r\n", "\t", " ", "é😀", "\x00", "\x07", "\ufeff", "\u2028",
    "RUN ", "CMD [", "ENTRYPOINT [\"python3\", \"-m\", \"sglang.launch_server\"]\n", "ENV X=1 ", "ARG Y\n",
    "FROM a AS b\n", "# escape=`\n", '"', "]", ", ", "\\u00e9",
    "[sglang]\n", "[sglang.env]\n", "tp-size = ", "[1, ", '"""', "'''", "{ a = 1 }", "sglang.x = 1\n",
    "---\n", "- ", "  ", "model-path: ", "tp-size: ", "command: ", "args: ", "run: |\n  ", "&a ", "*a",
    "!!str ", "? ", "{", "}", "[", "apiVersion: v1\nkind: Pod\n", "services:\n  s:\n    ",
]
TEXT = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=40).map("".join),
    st.text(max_size=200),
)
NAMES = st.sampled_from(["run.sh", "Dockerfile", "k3.toml", "k3.yaml", "ci.yml", "launch"])
FORCES = st.sampled_from([None, *Surface])


def check(result: SurfaceResult, text: str) -> None:
    n = len(text)
    for problem in result.problems:
        assert 0 <= problem.span.start <= problem.span.end <= n
    for launch in result.launches:
        for span in [launch.span, launch.program.span] + [t.span for t in launch.argv]:
            assert 0 <= span.start <= span.end <= n
        for token in launch.argv:
            if token.exact:  # the raw text is the value, with nothing but quotes around parts of it
                raw = text[token.span.start : token.span.end]
                assert raw.replace('"', "").replace("'", "") == token.value.replace('"', "").replace("'", "")
        for var in launch.env:
            assert 0 <= var.name.span.start <= var.name.span.end <= n
        if launch.config is not None:
            for entry in launch.config.entries:
                for span in (entry.key.span, entry.value_span, *entry.item_spans):
                    assert 0 <= span.start <= span.end <= n


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(TEXT, NAMES, FORCES)
def test_readers_never_raise(text: str, name: str, force: Surface | None) -> None:
    result = read_surface_strict(SourceText(Path("/fuzz") / name, text), force=force)
    check(result, text)


def test_read_surface_turns_a_reader_bug_into_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    import kimi_lsp.surfaces as surfaces

    def boom(*args: object, **kwargs: object) -> SurfaceResult:
        raise RuntimeError("bug")

    monkeypatch.setattr(surfaces, "read_shell", boom)
    result = read_surface(SourceText(Path("/fuzz/run.sh"), "python -m sglang.launch_server"))
    assert result.launches == () and result.notes and "RuntimeError: bug" in result.notes[0]
