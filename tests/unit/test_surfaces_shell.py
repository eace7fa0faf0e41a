"""Shell lexing with positions and launch detection in shell scripts."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.surfaces import detect_surface, read_surface
from kimi_lsp.surfaces.model import Entry, Surface
from kimi_lsp.surfaces.shell import find_launches, iter_commands
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText

SCRIPT = Path("/repo/scripts/run.sh")


def raw(text: str, span: Span) -> str:
    return text[span.start : span.end]


def words(text: str, **kw: object) -> list[list[tuple[str, str, bool]]]:
    """(value, raw text under the span, exact) per word, per command."""
    return [[(t.value, raw(text, t.span), t.exact) for t in c.words] for c in iter_commands(text, **kw)]


def launches(text: str, path: Path = SCRIPT):
    result = read_surface(SourceText(path, text))
    assert not result.notes, result.notes
    return result


# ---------------------------------------------------------------------------------------------
# Lexer
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a b  c", [[("a", "a", True), ("b", "b", True), ("c", "c", True)]]),
        ("a 'b c' \"d e\"", [[("a", "a", True), ("b c", "'b c'", True), ("d e", '"d e"', True)]]),
        ("--x='y z'", [[("--x=y z", "--x='y z'", True)]]),
        ('a\\ b', [[("a b", "a\\ b", False)]]),
        ('"a\\"b"', [[('a"b', '"a\\"b"', False)]]),
        ("$'a\\tb'", [[("a\tb", "$'a\\tb'", False)]]),
        ('"$HOME/x" ${A:-b} $(date +%s)', [[("$HOME/x", '"$HOME/x"', False), ("${A:-b}", "${A:-b}", False), ("$(date +%s)", "$(date +%s)", False)]]),
        ("echo `date` x", [[("echo", "echo", True), ("`date`", "`date`", False), ("x", "x", True)]]),
        ("a $(echo 'x)' \"(\") b", [[("a", "a", True), ("$(echo 'x)' \"(\")", "$(echo 'x)' \"(\")", False), ("b", "b", True)]]),
        ("a; b && c || d | e & f", [[("a", "a", True)], [("b", "b", True)], [("c", "c", True)], [("d", "d", True)], [("e", "e", True)], [("f", "f", True)]]),
        ("a # comment 'x\nb", [[("a", "a", True)], [("b", "b", True)]]),
        ("a#b", [[("a#b", "a#b", True)]]),
        ("a \\\n  b", [[("a", "a", True), ("b", "b", True)]]),
        ("a > out 2>&1 < in b", [[("a", "a", True), ("b", "b", True)]]),
        ("a &> log; b >> x", [[("a", "a", True)], [("b", "b", True)]]),
        ("(a; b) | { c; }", [[("a", "a", True)], [("b", "b", True)], [("c", "c", True)]]),
        ("if a; then b; fi", [[("a", "a", True)], [("b", "b", True)]]),
        ("diff <(a) <(b)", [[("diff", "diff", True), ("<(a)", "<(a)", False), ("<(b)", "<(b)", False)]]),
        ("echo ${{ matrix.tp }}", [[("echo", "echo", True), ("${{ matrix.tp }}", "${{ matrix.tp }}", False)]]),
        ("x é😀 y", [[("x", "x", True), ("é😀", "é😀", True), ("y", "y", True)]]),
        ("a\r\nb\r\n", [[("a", "a", True)], [("b", "b", True)]]),
        ("a \\\r\n b", [[("a", "a", True), ("b", "b", True)]]),
        ("\ta\tb", [[("a", "a", True), ("b", "b", True)]]),
    ],
)
def test_lexer_words_and_spans(text: str, expected: list) -> None:
    assert words(text) == expected


def test_heredoc_bodies_are_skipped() -> None:
    text = "cat <<EOF > f\npython -m sglang.launch_server 'x\nEOF\ncat <<-'END'\n\tit's\n\tEND\nnext arg\n"
    assert words(text) == [[("cat", "cat", True)], [("cat", "cat", True)], [("next", "next", True), ("arg", "arg", True)]]


def test_assignments_prefix_and_export() -> None:
    text = 'A=1 B="x y" cmd C=2\nexport D=3 "E=4" F\nG+=5'
    cmds = list(iter_commands(text))
    a = cmds[0]
    assert [w.value for w in a.words] == ["cmd", "C=2"]
    assert [(e.name.value, e.value.value, raw(text, e.name.span), raw(text, e.value.span)) for e in a.assignments] == [
        ("A", "1", "A", "1"),
        ("B", "x y", "B", '"x y"'),
    ]
    b = cmds[1]
    assert [w.value for w in b.words] == ["export", "F"]
    assert [(e.name.value, e.value.value) for e in b.assignments] == [("D", "3"), ("E", "4")]
    assert [(e.name.value, e.value.value) for e in cmds[2].assignments] == [("G", "5")]


def test_base_offset_and_command_span() -> None:
    text = "prefix:  a 'b'  ;"
    cmds = list(iter_commands(text[8:], base=8))
    assert raw(text, cmds[0].span) == "a 'b'"
    assert [raw(text, w.span) for w in cmds[0].words] == ["a", "'b'"]


def test_backtick_escape_for_dockerfiles() -> None:
    text = "a `\n b `x"
    assert words(text, escape="`") == [[("a", "a", True), ("b", "b", True), ("`x", "`x", True)]]


# ---------------------------------------------------------------------------------------------
# Launch detection
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "entry", "program", "argv"),
    [
        ("python -m sglang.launch_server --tp 8", Entry.LAUNCH_SERVER, "python -m sglang.launch_server", ["--tp", "8"]),
        ("python3.11 -u -X dev -W ignore -m sglang.launch_server --tp 8", Entry.LAUNCH_SERVER, "python3.11 -u -X dev -W ignore -m sglang.launch_server", ["--tp", "8"]),
        ("/usr/bin/python3 -msglang.launch_server --tp 8", Entry.LAUNCH_SERVER, "/usr/bin/python3 -msglang.launch_server", ["--tp", "8"]),
        ("sglang serve moonshotai/Kimi-K3 --tp 8", Entry.SERVE, "sglang serve", ["moonshotai/Kimi-K3", "--tp", "8"]),
        ("/opt/venv/bin/sglang serve --model-path m", Entry.SERVE, "/opt/venv/bin/sglang serve", ["--model-path", "m"]),
        ("python -m sglang.bench_one_batch_server --tp 8", Entry.NO_CONFIG, "python -m sglang.bench_one_batch_server", ["--tp", "8"]),
        ("python3 -m sglang.benchmark.one_batch_server --x", Entry.NO_CONFIG, "python3 -m sglang.benchmark.one_batch_server", ["--x"]),
        ("python3 -m sglang.benchmark.one_batch --x", Entry.NO_CONFIG, "python3 -m sglang.benchmark.one_batch", ["--x"]),
        ("python3 -m sglang.benchmark.offline_throughput --x", Entry.NO_CONFIG, "python3 -m sglang.benchmark.offline_throughput", ["--x"]),
        ("python3 -m sglang.compile_deep_gemm --x", Entry.NO_CONFIG, "python3 -m sglang.compile_deep_gemm", ["--x"]),
        ("exec python3 -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python3 -m sglang.launch_server", ["--a"]),
        ("env -i A=1 python3 -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python3 -m sglang.launch_server", ["--a"]),
        ("nohup python3 -m sglang.launch_server --a > log 2>&1 &", Entry.LAUNCH_SERVER, "python3 -m sglang.launch_server", ["--a"]),
        ("srun -N 2 --ntasks-per-node 1 --gpus=8 -l python3 -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python3 -m sglang.launch_server", ["--a"]),
        ("mpirun -np 2 --mca btl tcp -x NCCL_DEBUG=INFO --allow-run-as-root python3 -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python3 -m sglang.launch_server", ["--a"]),
        ("torchrun --nproc-per-node 8 --standalone -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "torchrun --nproc-per-node 8 --standalone -m sglang.launch_server", ["--a"]),
        ("python -m torch.distributed.run --nnodes=1 -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python -m torch.distributed.run --nnodes=1 -m sglang.launch_server", ["--a"]),
        ("timeout 10m python3 -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python3 -m sglang.launch_server", ["--a"]),
        ("timeout -s KILL 10m python3 -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python3 -m sglang.launch_server", ["--a"]),
        ("numactl --cpunodebind=0 --membind 0 -l python3 -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python3 -m sglang.launch_server", ["--a"]),
        ("taskset -c 0-7 python3 -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python3 -m sglang.launch_server", ["--a"]),
        ("sudo -E -u svc python3 -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python3 -m sglang.launch_server", ["--a"]),
        ("time python3 -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python3 -m sglang.launch_server", ["--a"]),
        ("stdbuf -oL -eL python3 -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python3 -m sglang.launch_server", ["--a"]),
        ("uv run --with x python -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python -m sglang.launch_server", ["--a"]),
        ("conda run -n sg --no-capture-output python -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python -m sglang.launch_server", ["--a"]),
        ("nice -n 5 nohup sudo -E env A=1 python3 -m sglang.launch_server --a", Entry.LAUNCH_SERVER, "python3 -m sglang.launch_server", ["--a"]),
        ('"$PYTHON" -m sglang.launch_server --a', Entry.LAUNCH_SERVER, "$PYTHON -m sglang.launch_server", ["--a"]),
        ("python -m sglang.cli.main serve --model-path m", Entry.SERVE, "python -m sglang.cli.main serve", ["--model-path", "m"]),
    ],
)
def test_launch_detection(line: str, entry: Entry, program: str, argv: list[str]) -> None:
    text = f"#!/bin/bash\n{line}\n"
    found = find_launches(text, SCRIPT, Surface.SHELL)
    assert len(found) == 1
    launch = found[0]
    assert launch.entry is entry
    assert launch.program.value == program
    assert [t.value for t in launch.argv] == argv
    for t in launch.argv:  # every argv token slices back to its raw text
        assert raw(text, t.span) == t.value
    program_text = raw(text, launch.program.span)
    assert program_text.endswith(program.split()[-1])
    assert program_text.replace('"', "") == program
    assert launch.surface is Surface.SHELL and launch.path == SCRIPT and launch.base_dir == SCRIPT.parent


@pytest.mark.parametrize(
    "line",
    [
        "python -c 'import sglang.launch_server'",
        "python script.py -m sglang.launch_server",
        "python -m sglang.check_env",
        "sglang version",
        "echo python -m sglang.launch_server",
        "pip install sglang",
        "taskset -p 0x3 1234",
        "docker run img",  # the image's own CMD runs: no launch written here
        "docker build -t img .",
        "bash run.sh -m sglang.launch_server",
    ],
)
def test_not_a_launch(line: str) -> None:
    assert find_launches(line, SCRIPT, Surface.SHELL) == []


def test_script_env_exports_and_prefixes_in_order() -> None:
    text = (
        "#!/usr/bin/env bash\n"
        "export HF_HOME=/data\n"
        "MODEL=moonshotai/Kimi-K3\n"
        "unset GONE\n"
        "export SGLANG_X=1 GONE=2\n"
        "unset GONE\n"
        "CUDA_VISIBLE_DEVICES=0,1 env NCCL_DEBUG=INFO python3 -m sglang.launch_server --model-path \"$MODEL\"\n"
    )
    (launch,) = launches(text).launches
    env = [(e.name.value, e.value.value if e.value else None) for e in launch.env]
    assert env == [
        ("HF_HOME", "/data"),
        ("MODEL", "moonshotai/Kimi-K3"),
        ("SGLANG_X", "1"),
        ("CUDA_VISIBLE_DEVICES", "0,1"),
        ("NCCL_DEBUG", "INFO"),
    ]
    for e in launch.env:
        assert raw(text, e.name.span) == e.name.value
        assert raw(text, e.value.span) == e.value.value
    model = launch.argv[1]
    assert model.value == "$MODEL" and not model.exact and raw(text, model.span) == '"$MODEL"'


def test_continuations_crlf_tabs_and_non_ascii() -> None:
    text = (
        "#!/bin/bash\r\n"
        "# é😀 comment\r\n"
        "echo 'Kimi—K3 😀'; python3 -m sglang.launch_server \\\r\n"
        "\t--model-path\t'moonshotai/Kimi-K3' \\\r\n"
        "\t--attention-backend \"cutedsl_mla\" --dcp-size=8\r\n"
    )
    (launch,) = launches(text).launches
    assert [(t.value, raw(text, t.span), t.exact) for t in launch.argv] == [
        ("--model-path", "--model-path", True),
        ("moonshotai/Kimi-K3", "'moonshotai/Kimi-K3'", True),
        ("--attention-backend", "--attention-backend", True),
        ("cutedsl_mla", '"cutedsl_mla"', True),
        ("--dcp-size=8", "--dcp-size=8", True),
    ]
    assert raw(text, launch.span).startswith("python3 -m sglang.launch_server")
    assert raw(text, launch.span).endswith("--dcp-size=8")


def test_several_launches_and_sh_c_positions() -> None:
    text = (
        "#SBATCH --nodes=2\n"
        "srun bash -lc \"python3 -m sglang.launch_server --tp 16 --node-rank \\$SLURM_NODEID --x 'a b'\" &\n"
        "sh -c 'sglang serve m --dcp-size 8' && echo done\n"
    )
    result = launches(text, Path("/repo/job.sbatch"))
    first, second = result.launches
    assert [(t.value, raw(text, t.span), t.exact) for t in first.argv] == [
        ("--tp", "--tp", True),
        ("16", "16", True),
        ("--node-rank", "--node-rank", True),
        ("$SLURM_NODEID", "\\$SLURM_NODEID", False),
        ("--x", "--x", True),
        ("a b", "'a b'", True),
    ]
    assert raw(text, first.program.span) == "python3 -m sglang.launch_server"
    assert second.entry is Entry.SERVE
    assert [raw(text, t.span) for t in second.argv] == ["m", "--dcp-size", "8"]


def test_own_pins_after_pip_install() -> None:
    text = "python -m sglang.launch_server --a\npip install 'flashinfer-python==0.6.17'\npython -m sglang.launch_server --b\n"
    a, b = launches(text).launches
    assert not a.own_pins and b.own_pins


def test_relative_cd_moves_base_dir() -> None:
    text = "cd deploy\npython -m sglang.launch_server --config k3.yaml\n"
    (launch,) = launches(text).launches
    assert launch.base_dir == Path("/repo/scripts/deploy")


# ---------------------------------------------------------------------------------------------
# Broken input and detection
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message", "at"),
    [
        ("python -m sglang.launch_server --a 'oops\n", "unterminated single quote", "'"),
        ('python -m sglang.launch_server --a "oops\n', "unterminated double quote", '"'),
        ("python -m sglang.launch_server --a $(oops\n", "unterminated command substitution", "$"),
        ("python -m sglang.launch_server --a `oops\n", "unterminated backquote", "`"),
    ],
)
def test_unterminated_quotes_are_problems(text: str, message: str, at: str) -> None:
    result = launches(text)
    assert result.is_launch_file
    (problem,) = result.problems
    assert problem.message.startswith(message)
    assert raw(text, problem.span) == at
    (launch,) = result.launches
    assert not launch.argv[-1].exact


def test_binary_ish_text_never_raises() -> None:
    text = "\x00\x01\ufffd'\"$(`\\" * 20 + "python -m sglang.launch_server \x7f"
    result = read_surface(SourceText(SCRIPT, text))
    assert not result.notes


def test_script_without_launch_is_not_a_launch_file() -> None:
    result = launches("#!/bin/sh\necho hello\n")
    assert result.launches == () and not result.is_launch_file


@pytest.mark.parametrize(
    ("name", "text", "surface"),
    [
        ("run.sh", "", Surface.SHELL),
        ("job.sbatch", "", Surface.SHELL),
        ("job.slurm", "", Surface.SHELL),
        ("job.pbs", "", Surface.SHELL),
        ("x.zsh", "", Surface.SHELL),
        ("launch", "#!/bin/bash\n", Surface.SHELL),
        ("launch", "#!/usr/bin/env bash\n", Surface.SHELL),
        ("launch", "#!/usr/bin/env -S bash -e\n", Surface.SHELL),
        ("launch", "#!/bin/sh\n", Surface.SHELL),
        ("launch", "#!/usr/bin/python3\n", None),
        ("launch", "no shebang\n", None),
        ("notes.txt", "python -m sglang.launch_server", Surface.TEXT),  # a text file of commands (issue 31)
    ],
)
def test_detect_shell(name: str, text: str, surface: Surface | None) -> None:
    assert detect_surface(Path("/repo") / name, text) is surface
