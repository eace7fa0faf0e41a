"""Launches behind the shell forms people write: a function called with flags, a command kept
in a variable (``$CMD``, ``eval``), a script written by a script (heredoc, ``echo > x.sh``), and
profilers in front of the launch; each word where the file has it, doubts where only probable."""
from __future__ import annotations

from pathlib import Path

from kimi_lsp.surfaces import read_surface
from kimi_lsp.surfaces.model import LaunchCommand, SurfaceResult
from kimi_lsp.syntax.shell import FlatSource, function_spans
from kimi_lsp.workspace import SourceText


def read(text: str, name: str = "run.sh") -> SurfaceResult:
    result = read_surface(SourceText(Path("/repo") / name, text))
    assert not result.notes, result.notes
    return result


def words(text: str, launch: LaunchCommand) -> list[str]:
    return [text[t.span.start : t.span.end] for t in launch.argv]


def test_a_function_called_with_flags_is_a_launch_at_the_call() -> None:
    text = 'serve() {\n  python -m sglang.launch_server --host 0.0.0.0 "$@"\n}\nserve --model-path m --tp 8\n'
    body, call = read(text).launches
    assert words(text, body) == ["--host", "0.0.0.0", '"$@"']
    assert words(text, call) == ["--host", "0.0.0.0", "--model-path", "m", "--tp", "8"]
    assert text[call.span.start : call.span.end] == "serve --model-path m --tp 8" and call.doubt is None


def test_a_kept_command_is_read_where_the_string_is_written() -> None:
    text = 'CMD="python -m sglang.launch_server --model-path m"\n$CMD --tp 2\neval "$CMD"\n'
    split, evaluated = read(text).launches
    assert words(text, split) == ["--model-path", "m", "--tp", "2"] and split.doubt is None
    assert words(text, evaluated) == ["--model-path", "m"] and evaluated.doubt is None
    quoted = "CMD=\"python -m sglang.launch_server --model-path 'a b'\"\n$CMD\n"
    (launch,) = read(quoted).launches
    assert launch.doubt is not None and "split" in launch.doubt  # the shell keeps those quotes
    branch = 'if x; then\n  CMD="python -m sglang.launch_server --model-path m"\nfi\n$CMD\n'
    (launch,) = read(branch).launches
    assert launch.doubt is not None and "some paths" in launch.doubt
    assert read('CMD="echo python -m sglang.launch_server"\nCMD=ls\n$CMD\n').launches == ()


def test_written_scripts_and_what_is_only_a_message() -> None:
    text = (
        "cat > start.sh <<'EOF'\npython -m sglang.launch_server --port 1\nEOF\n"
        "tee notes.txt <<EOF\npython -m sglang.launch_server --port 2\nEOF\n"
        'echo "python -m sglang.launch_server --port 3" >> /opt/run.sh\n'
        'echo "then run python -m sglang.launch_server --port 4"\n'
    )
    script, notes, echoed = read(text).launches
    for launch, port in ((script, "1"), (notes, "2"), (echoed, "3")):
        assert launch.argv[-1].value == port and launch.argv[-1].span.start == text.index(f"--port {port}") + 7
    assert script.doubt is None and echoed.doubt is None and notes.doubt is not None


def test_profilers_in_front() -> None:
    text = "nsys profile -o out -t cuda,nvtx --stats=true python3 -m sglang.launch_server --port 5\n"
    (launch,) = read(text).launches
    assert words(text, launch) == ["--port", "5"]
    assert read("nsys stats report.nsys-rep python -m sglang.launch_server\n").launches == ()


def test_function_spans_work_is_linear() -> None:
    from tests.reliability._support import growth

    # one pass over the braces however many headers: unclosed headers, then nested closed ones
    assert growth(lambda n: function_spans(FlatSource("f() {\n" * n)), 200) < 6
    assert growth(lambda n: function_spans(FlatSource("f() {\n" * n + "}\n" * n)), 200) < 6
    closed = "a() { x; }\nfunction b {\n  y\n}\n"
    assert [n for n, _ in function_spans(FlatSource(closed))] == ["a", "b"]


def test_a_unit_written_with_sudo_tee_is_read_as_a_unit() -> None:
    doc = (
        "# Service\n\n```bash\nsudo tee /etc/systemd/system/sglang.service <<EOF\n[Service]\n"
        "Environment=A=1\nExecStart=/usr/bin/python3 -m sglang.launch_server --model-path m --port 8\nEOF\n"
        "sudo systemctl start sglang\n```\n"
    )
    (launch,) = read(doc, "docs/deploy.md").launches
    assert launch.argv[-1].value == "8" and launch.argv[-1].span.start == doc.index("--port 8") + 7
    assert [v.name.value for v in launch.env] == ["A"]
    # `sudo <<EOF` feeds a command, it writes no file; a unit without ExecStart holds no launch
    assert read("sudo -u me <<EOF\npython -m sglang.launch_server --port 1\nEOF\n").launches == ()


def test_a_kept_command_grown_and_run_by_a_shell() -> None:
    text = (
        'CMD="A=1 ${PREFIX:-} python3 -m sglang.launch_server --model-path m"\n'
        'CMD="$CMD --tp 2"\n'
        'if [ -n "$X" ]; then\n  CMD="$CMD --nnodes 2"\nfi\n'
        'setsid bash -c "$CMD" > log 2>&1 &\n'
    )
    (launch,) = read(text).launches
    values = [t.value for t in launch.argv]
    # grown on every path: its words where they are written; on some paths: an unknown tail
    assert values[:4] == ["--model-path", "m", "--tp", "2"] and values[4] == "$_" and not launch.argv[4].exact
    assert launch.argv[3].span.start == text.index("--tp 2") + 5
    assert "A" in [v.name.value for v in launch.env]
    # an unknown word that is not empty by default is no wrapper we can see through
    assert read('$PREFIX python3 -m sglang.launch_server --port 1\n').launches == ()


def test_a_kept_command_named_in_an_argument_is_not_run() -> None:
    text = 'CMD="python3 -m sglang.launch_server --model-path m"\necho bash -c "$CMD"\nnohup bash -c "$CMD" &\n'
    (launch,) = read(text).launches
    assert text[launch.span.start : launch.span.end].startswith("nohup")


def test_an_alias_defined_in_the_same_script_or_doc() -> None:
    text = "alias serve='python -m sglang.launch_server --host 0.0.0.0'\nserve --model-path m --tp 8\nalias ll='ls -l'\nll\n"
    (launch,) = read(text).launches
    assert [t.value for t in launch.argv] == ["--host", "0.0.0.0", "--model-path", "m", "--tp", "8"]
    assert launch.argv[1].span.start == text.index("0.0.0.0") and launch.argv[-1].span.start == text.index("--tp 8") + 5
    doc = "```bash\nalias serve='python -m sglang.launch_server'\nserve --model-path m\n```\n"
    (launch,) = read(doc, "docs/a.md").launches
    assert [t.value for t in launch.argv] == ["--model-path", "m"]


def test_a_kept_command_whose_expansions_were_environment() -> None:
    text = (
        'if [ -n "$P" ]; then\n'
        '  CMD="A=${X} ${EXTRA_ENV} B=2 ${PREFIX:-} python3 -m sglang.launch_server --model-path m"\n'
        '  setsid bash -c "$CMD" &\n'
        'fi\n'
    )
    (launch,) = read(text).launches
    assert [t.value for t in launch.argv] == ["--model-path", "m"]
    assert {"A", "B"} <= {v.name.value for v in launch.env}
    assert launch.doubt is None  # set and run on the same path
