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
    import kimi_lsp.surfaces.shell as shell  # read_surface imports the shell reader from there when it runs

    def boom(*args: object, **kwargs: object) -> SurfaceResult:
        raise RuntimeError("bug")

    monkeypatch.setattr(shell, "read_shell", boom)
    result = read_surface(SourceText(Path("/fuzz/run.sh"), "python -m sglang.launch_server"))
    assert result.launches == () and result.notes and "RuntimeError: bug" in result.notes[0]


# ---------------------------------------------------------------------------------------------
# Round trips: quote random argv words, embed the line in each surface, read the words back
# ---------------------------------------------------------------------------------------------

WORD = st.text(alphabet=st.sampled_from(list("abz09-_=./:,@%+ \t'\"$\\é😀名")), min_size=1, max_size=8)
SEPARATORS = st.sampled_from([" ", "  ", "\t", " \\\n    "])


def _quoted(words: list[str], seps: list[str]) -> str:
    import shlex

    line = "python3 -m sglang.launch_server"
    for word, sep in zip(words, seps):
        line += sep + shlex.quote(word)
    return line


def _check_argv(text: str, result: SurfaceResult, words: list[str]) -> None:
    assert not result.problems, result.problems
    (launch,) = result.launches
    assert [t.value for t in launch.argv] == words
    for token in launch.argv:
        raw = text[token.span.start : token.span.end]
        if token.exact:
            assert raw.replace("'", "").replace('"', "") == token.value.replace("'", "").replace('"', "")
        assert raw  # never empty for a non-empty word


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(WORD, min_size=1, max_size=6), st.data())
def test_shell_round_trip(words: list[str], data: st.DataObject) -> None:
    seps = data.draw(st.lists(SEPARATORS, min_size=len(words), max_size=len(words)))
    line = _quoted(words, seps)
    text = "#!/bin/bash\n# é😀\n" + line + "\n"
    result = read_surface_strict(SourceText(Path("/rt/run.sh"), text))
    _check_argv(text, result, words)
    crlf = text.replace("\n", "\r\n")
    _check_argv(crlf, read_surface_strict(SourceText(Path("/rt/run.sh"), crlf)), words)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(WORD, min_size=1, max_size=6), st.data())
def test_yaml_block_scalar_round_trip(words: list[str], data: st.DataObject) -> None:
    seps = data.draw(st.lists(SEPARATORS, min_size=len(words), max_size=len(words)))
    line = _quoted(words, seps)
    body = "\n".join("          " + part for part in line.split("\n"))
    text = "name: é😀\non: push\njobs:\n  a:\n    steps:\n      - run: |\n" + body + "\n"
    result = read_surface_strict(SourceText(Path("/rt/.github/workflows/x.yml"), text))
    _check_argv(text, result, words)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(WORD, min_size=1, max_size=6))
def test_kubernetes_and_dockerfile_lists_round_trip(words: list[str]) -> None:
    import json

    items = ", ".join(json.dumps(w, ensure_ascii=False) for w in ["python3", "-m", "sglang.launch_server", *words])
    k8s = f"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - command: [{items}]\n"
    _check_argv(k8s, read_surface_strict(SourceText(Path("/rt/pod.yaml"), k8s)), words)
    docker = f"FROM x\nCMD [{items}]\n"
    _check_argv(docker, read_surface_strict(SourceText(Path("/rt/Dockerfile"), docker)), words)
