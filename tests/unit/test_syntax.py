"""The one shell lexer, the one Dockerfile reader and the one TOML reader (kimi_lsp.syntax), and the
import floor."""
from __future__ import annotations

import ast
from pathlib import Path

import kimi_lsp.syntax
from kimi_lsp.syntax import SyntaxProblem, toml
from kimi_lsp.syntax.dockerfile import parse, read_from, substitute_args
from kimi_lsp.syntax.shell import FlatSource, heredocs, lex
from kimi_lsp.text import Span

SYNTAX_DIR = Path(kimi_lsp.syntax.__file__).parent
ABOVE = ("surfaces", "pins", "rules", "engine", "lsp", "cli", "knowledge", "config", "workspace")


def _imports(path: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found.extend(a.name for a in node.names)
    return found


def test_syntax_imports_nothing_above_it() -> None:
    modules = sorted(SYNTAX_DIR.glob("*.py"))
    assert {p.name for p in modules} >= {"__init__.py", "shell.py", "dockerfile.py", "toml.py"}
    for path in modules:
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] != "kimi_lsp" or len(parts) < 2:
                continue
            assert parts[1] not in ABOVE, f"{path.name} imports {name}: syntax/ is the floor"


def _words(text: str) -> list[list[str]]:
    commands, problems = lex(FlatSource(text))
    assert problems == []
    return [[w.value for w in c.words] for c in commands if c.words]  # assignment-only lines dropped


def test_heredoc_marks_any_delimiter_word() -> None:
    text = 'cat <<END-RUN <<-"EOF" >out'
    marks = heredocs(FlatSource(text, 100))
    assert [(m.delimiter, m.strip_tabs, m.runner) for m in marks] == [("END-RUN", False, "cat"), ("EOF", True, "cat")]
    assert marks[0].span == Span(104, 113) and marks[1].span == Span(114, 122)


def test_heredoc_body_inside_quoted_command_substitution_is_text() -> None:
    text = "X=\"$(cat <<'EOF'\nsee section 3 (of the runbook's\nEOF\n)\"\npython3 -m sglang.launch_server --tp 8\n"
    assert _words(text) == [["python3", "-m", "sglang.launch_server", "--tp", "8"]]


def test_comment_in_array_hides_its_apostrophe() -> None:
    text = "A=(\n  --tp 8  # the model's own MTP layer\n)\necho done\n"
    assert _words(text) == [["echo", "done"]]


def test_arithmetic_shift_is_no_heredoc() -> None:
    assert _words("X=$(( 1 << 2 ))\necho a\n") == [["echo", "a"]]


def test_dockerfile_heredocs_and_which_run_as_script() -> None:
    text = "FROM x\nRUN <<END-RUN python3 <<-PY\necho a\nEND-RUN\n\tprint(1)\n\tPY\nRUN echo b\n"
    _, instructions, problems = parse(text)
    assert problems == []
    run = instructions[1]
    assert [(b.delimiter, b.script, b.text) for b in run.heredocs] == [
        ("END-RUN", True, "echo a\n"),
        ("PY", False, "\tprint(1)\n"),
    ]
    assert [i.keyword for i in instructions] == ["FROM", "RUN", "RUN"]


def test_dockerfile_unterminated_heredoc_is_a_problem() -> None:
    text = "FROM x\nRUN <<EOF\necho a\n"
    _, _, problems = parse(text)
    assert [p.message for p in problems] == ["unterminated heredoc <<EOF"]
    assert text[problems[0].span.start : problems[0].span.end] == "<<EOF"


def test_from_line_platform_image_and_stage() -> None:
    text = "ARG BASE=lmsysorg/sglang:v0.5.23\nFROM --platform=linux/amd64 ${BASE} AS serve\n"
    escape, instructions, _ = parse(text)
    line = read_from(instructions[1], escape)
    assert line.name == "serve" and line.platform is not None and line.platform.value == "linux/amd64"
    assert line.image is not None and text[line.image.span.start : line.image.span.end] == "${BASE}"
    assert substitute_args(line.image.value, {}) is None


def test_array_elements_keep_their_spans_and_paths_are_marked() -> None:
    text = "A=(--tp 8  # it's\n  --dp 2)\nif x; then\n  A+=(--x)\nfi\nwhile r; do A+=(--y); done\ncase $m in k3) A+=(--z) ;; esac\nA+=(--w)\n"
    commands, problems = lex(FlatSource(text))
    assert problems == []
    arrays = [(a.words, a.append, c.conditional) for c in commands for a in c.arrays]
    assert [([w.value for w in ws], app, cond) for ws, app, cond in arrays] == [
        (["--tp", "8", "--dp", "2"], False, False),
        (["--x"], True, True),
        (["--y"], True, True),
        (["--z"], True, True),
        (["--w"], True, False),
    ]
    first = arrays[0][0]
    assert [text[w.token.span.start : w.token.span.end] for w in first] == ["--tp", "8", "--dp", "2"]


# -- TOML ---------------------------------------------------------------------------------------


def test_toml_problem_is_located_and_worded_once() -> None:
    problem = toml.parse("[a]\nx = 1 2\n")
    assert problem == SyntaxProblem("TOML syntax error: Expected newline or end of document after a statement", Span(10, 11))
    assert toml.parse("x = 1\r\ny = \r\n") == SyntaxProblem("TOML syntax error: Invalid value", Span(11, 11))  # at the line end
    assert toml.parse('x = "') == SyntaxProblem("TOML syntax error: Unterminated string", Span(5, 5))  # end of document


def test_toml_nested_too_deeply_is_a_problem_where_the_nesting_starts() -> None:
    text = "x = " + "[" * 3000 + "]" * 3000 + "\n"
    problem = toml.parse(text)
    assert isinstance(problem, SyntaxProblem) and problem.span == Span(103, 104)
    assert "nested too deeply" in problem.message


def test_toml_locator_paths() -> None:
    text = '"k\\u0041" = 1\n[[pkg]]\nname = "a"\n[pkg.meta]\nreq = [ { name = "x" } ]\n' "[[pkg]]\nname = '''\nb'''\n"
    assert isinstance(toml.parse(text), dict)
    pos = toml.locate(text)

    def cut(span: Span | None) -> str:
        assert span is not None
        return text[span.start : span.end]

    assert cut(pos.keys[("kA",)]) == '"k\\u0041"'  # keys are decoded, as tomllib's tables hold them
    assert cut(pos.values[("pkg", 0, "name")]) == '"a"'
    assert cut(pos.string_content(("pkg", 0, "meta", "req", 0, "name"), text, "x")) == "x"
    assert [cut(s) for s in pos.items(("pkg", 0, "meta", "req"))] == ['{ name = "x" }']
    assert cut(pos.strings[("pkg", 1, "name")].content) == "b"  # after the leading newline
    assert cut(pos.tables[("pkg", 1)]) == "[[pkg]]" and cut(pos.keys[("pkg",)]) == "pkg"
    assert [h.path for h in pos.headers] == [("pkg", 0), ("pkg", 0, "meta"), ("pkg", 1)]


def test_toml_locator_is_partial_on_text_it_cannot_follow() -> None:
    pos = toml.locate('a = 1\nb = "unterminated\nc = 3\n')
    assert ("a",) in pos.values and ("c",) not in pos.values


def test_align_text_is_align_over_the_texts_characters() -> None:
    """``syntax.yaml._align_text`` (plain and block scalars, a line of the value matched at once)
    answers as ``_align`` over units that are the text's characters, for any value and text."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from kimi_lsp.syntax.yaml import _align, _align_text

    chars = st.text(alphabet="ab \t\r\n", max_size=40)

    @settings(max_examples=3000, deadline=None)
    @given(chars, chars, chars, chars)
    def check(value: str, raw: str, before: str, after: str) -> None:
        text = before + raw + after  # the text around the scalar may look like its value
        i, end = len(before), len(before) + len(raw)
        anchor = end if end > i else 0
        units = [(text[k], k, k + 1) for k in range(i, end)]
        got, want = _align_text(value, text, i, end, anchor), _align(value, units, anchor)
        assert (got.text, list(got.starts), list(got.ends), got.anchor) == (want.text, list(want.starts), list(want.ends), want.anchor)

    check()
    # a block scalar's lines, as the scan and PyYAML give them
    from kimi_lsp.syntax import yaml as syntax_yaml

    text = "run: |\n  python -m sglang.launch_server \\\n    --tp 8\n\n  echo done\n"
    y = syntax_yaml.YamlText(text)
    (doc,) = syntax_yaml.load(text).docs
    ((_, value),) = doc.value
    chars_ = y.scalar_source(value)
    assert "".join(text[a:b] for a, b in zip(chars_.starts, chars_.ends)) == value.value  # each its own
