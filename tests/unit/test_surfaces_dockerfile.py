"""Dockerfiles: instructions, exec/shell forms, ENTRYPOINT + CMD semantics, ENV/ARG, positions."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.surfaces import detect_surface, read_surface
from kimi_lsp.surfaces.dockerfile import parse
from kimi_lsp.surfaces.model import Entry, LaunchCommand, Surface, SurfaceResult
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText

DOCKERFILE = Path("/repo/docker/Dockerfile")


def raw(text: str, span: Span) -> str:
    return text[span.start : span.end]


def read(text: str, path: Path = DOCKERFILE) -> SurfaceResult:
    result = read_surface(SourceText(path, text))
    assert not result.notes, result.notes
    return result


def argv(text: str, launch: LaunchCommand) -> list[tuple[str, str, bool]]:
    return [(t.value, raw(text, t.span), t.exact) for t in launch.argv]


def env(text: str, launch: LaunchCommand) -> list[tuple[str, str | None, str | None]]:
    return [
        (e.name.value, e.value.value if e.value else None, raw(text, e.value.span) if e.value else None)
        for e in launch.env
    ]


def test_exec_entrypoint_plus_exec_cmd() -> None:
    text = (
        "FROM lmsysorg/sglang:v0.5.23\n"
        'ENTRYPOINT ["python3", "-m", "sglang.launch_server"]\n'
        'CMD ["--model-path", "moonshotai/Kimi-K3", \\\n'
        '     "--tp-size", "8"]\n'
    )
    result = read(text)
    assert result.is_launch_file and result.problems == ()
    (launch,) = result.launches
    assert launch.surface is Surface.DOCKERFILE and launch.entry is Entry.LAUNCH_SERVER and launch.own_pins
    assert launch.program.value == "python3 -m sglang.launch_server"
    assert raw(text, launch.program.span) == '"python3", "-m", "sglang.launch_server"'
    assert argv(text, launch) == [
        ("--model-path", '"--model-path"', True),
        ("moonshotai/Kimi-K3", '"moonshotai/Kimi-K3"', True),
        ("--tp-size", '"--tp-size"', True),
        ("8", '"8"', True),
    ]


def test_json_escapes_make_tokens_inexact() -> None:
    text = 'FROM x\nCMD ["python3", "-m", "sglang.launch_server", "--served-model-name", "a\\u00e9\\"b", "--x", "\\ud83d\\ude00"]\n'
    (launch,) = read(text).launches
    assert argv(text, launch) == [
        ("--served-model-name", '"--served-model-name"', True),
        ('aé"b', '"a\\u00e9\\"b"', False),
        ("--x", '"--x"', True),
        ("😀", '"\\ud83d\\ude00"', False),
    ]


def test_shell_form_cmd_with_continuations_env_and_non_ascii() -> None:
    text = (
        "# é😀 Kimi—K3 image\r\n"
        "FROM lmsysorg/sglang:latest\r\n"
        "ENV HF_HOME=/data \\\r\n"
        "    # a comment inside the instruction\r\n"
        '    MODEL="moonshotai/Kimi-K3"\r\n'
        "ENV LEGACY value with spaces\r\n"
        "CMD python3 -m sglang.launch_server --model-path \"$MODEL\" \\\r\n"
        "\r\n"
        "\t--attention-backend\tcutedsl_mla \\   \r\n"
        "    --tp 8\r\n"
    )
    result = read(text)
    assert result.problems == ()
    (launch,) = result.launches
    assert argv(text, launch) == [
        ("--model-path", "--model-path", True),
        ("$MODEL", '"$MODEL"', False),
        ("--attention-backend", "--attention-backend", True),
        ("cutedsl_mla", "cutedsl_mla", True),
        ("--tp", "--tp", True),
        ("8", "8", True),
    ]
    assert env(text, launch) == [
        ("HF_HOME", "/data", "/data"),
        ("MODEL", "moonshotai/Kimi-K3", '"moonshotai/Kimi-K3"'),
        ("LEGACY", "value with spaces", "value with spaces"),
    ]


def test_escape_directive_backtick() -> None:
    text = (
        "# escape=`\n"
        "FROM mcr.microsoft.com/x\n"
        "CMD python3 -m sglang.launch_server `\n"
        "    --model-path C:\\models\\k3 `\n"
        "    --tp 8\n"
    )
    (launch,) = read(text).launches
    assert [v for v, _, _ in argv(text, launch)] == ["--model-path", "C:modelsk3", "--tp", "8"]
    assert raw(text, launch.argv[-1].span) == "8"


@pytest.mark.parametrize(
    ("body", "expected_argv", "entry"),
    [
        # exec ENTRYPOINT + shell CMD: Docker appends `/bin/sh -c TEXT`
        ('ENTRYPOINT ["python3", "-m", "sglang.launch_server"]\nCMD --tp 8\n', ["/bin/sh", "-c", "--tp 8"], Entry.LAUNCH_SERVER),
        # shell ENTRYPOINT ignores CMD
        ('ENTRYPOINT python3 -m sglang.launch_server --tp 2\nCMD ["--tp", "8"]\n', ["--tp", "2"], Entry.LAUNCH_SERVER),
        # last CMD wins
        ('CMD ["python3", "-m", "sglang.launch_server", "--a"]\nCMD ["sglang", "serve", "m"]\n', ["m"], Entry.SERVE),
        # CMD runs a shell script that launches
        ('CMD ["/bin/bash", "-c", "pip list && exec python3 -m sglang.launch_server --tp 8"]\n', ["--tp", "8"], Entry.LAUNCH_SERVER),
    ],
)
def test_entrypoint_and_cmd_combinations(body: str, expected_argv: list[str], entry: Entry) -> None:
    text = "FROM x\n" + body
    (launch,) = read(text).launches
    assert launch.entry is entry
    assert [t.value for t in launch.argv] == expected_argv
    for t in launch.argv:
        if t.exact:
            assert raw(text, t.span).strip('"') == t.value


def test_bash_c_in_exec_form_positions() -> None:
    text = 'FROM x\nCMD ["bash", "-c", "python3 -m sglang.launch_server --tp 8 --x \'a b\'"]\n'
    (launch,) = read(text).launches
    assert argv(text, launch) == [("--tp", "--tp", True), ("8", "8", True), ("--x", "--x", True), ("a b", "'a b'", True)]


def test_final_stage_and_stage_inheritance() -> None:
    text = (
        "FROM base AS builder\n"
        "ENV A=1\n"
        'CMD ["python3", "-m", "sglang.launch_server", "--from-builder"]\n'
        "FROM builder AS runtime\n"
        "ENV B=2\n"
        "FROM runtime\n"
    )
    (launch,) = read(text).launches
    assert [t.value for t in launch.argv] == ["--from-builder"]
    assert [e.name.value for e in launch.env] == ["A", "B"]


def test_entrypoint_resets_inherited_cmd() -> None:
    text = (
        "FROM base AS a\n"
        'CMD ["--tp", "8"]\n'
        "FROM a\n"
        'ENTRYPOINT ["python3", "-m", "sglang.launch_server"]\n'
    )
    (launch,) = read(text).launches
    assert launch.argv == ()


def test_unrelated_stage_does_not_launch() -> None:
    text = 'FROM a AS one\nCMD ["python3", "-m", "sglang.launch_server"]\nFROM b\nCMD ["nginx"]\n'
    result = read(text)
    assert result.launches == () and not result.is_launch_file


def test_run_launches_see_arg_and_env() -> None:
    text = (
        "ARG BASE=lmsysorg/sglang\n"
        "ARG MODEL=global-default\n"
        "FROM ${BASE}\n"
        "ARG FI_VERSION=0.6.16\n"
        "ARG MODEL\n"
        "ENV HF_HOME=/data\n"
        "RUN --mount=type=cache,target=/root/.cache \\\n"
        "    pip install flashinfer-python==${FI_VERSION} && \\\n"
        "    python3 -m sglang.compile_deep_gemm --model-path $MODEL --tp 8\n"
        'CMD ["python3", "-m", "sglang.launch_server"]\n'
    )
    run_launch, cmd_launch = read(text).launches
    assert run_launch.entry is Entry.NO_CONFIG and run_launch.own_pins
    assert env(text, run_launch) == [
        ("FI_VERSION", "0.6.16", "0.6.16"),
        ("MODEL", "global-default", "global-default"),
        ("HF_HOME", "/data", "/data"),
    ]
    assert [t.value for t in run_launch.argv] == ["--model-path", "$MODEL", "--tp", "8"]
    # ARG is a build-time variable: only ENV reaches the image's process
    assert [e.name.value for e in cmd_launch.env] == ["HF_HOME"]


def test_run_exec_form_and_heredocs() -> None:
    text = (
        "FROM x\n"
        'RUN ["python3", "-m", "sglang.compile_deep_gemm", "--tp", "8"]\n'
        "RUN <<EOF\n"
        "pip install x\n"
        "python3 -m sglang.compile_deep_gemm --tp 4\n"
        "EOF\n"
        "RUN python3 <<'PY'\n"
        "print('python -m sglang.launch_server')\n"
        "PY\n"
        "COPY <<EOF /etc/x\n"
        "FROM not-an-instruction\n"
        "EOF\n"
        "RUN bash <<-EOF\n"
        "\tsglang serve m --tp 2\n"
        "\tEOF\n"
    )
    result = read(text)
    assert result.problems == ()
    assert [[t.value for t in launch.argv] for launch in result.launches] == [["--tp", "8"], ["--tp", "4"], ["m", "--tp", "2"]]
    for launch in result.launches:
        for t in launch.argv:
            assert raw(text, t.span).strip('"') == t.value


def test_heredoc_marker_inside_quotes_is_text() -> None:
    text = 'FROM x\nRUN echo "a<<EOF" && python3 -m sglang.compile_deep_gemm --tp 8\nCMD ["python3", "-m", "sglang.launch_server"]\n'
    result = read(text)
    assert result.problems == () and len(result.launches) == 2


def test_problems() -> None:
    text = "FROM x\nBOGUS thing\nRUN python3 -m sglang.launch_server --x 'oops\nRUN <<EOF\necho never closed\n"
    result = read(text)
    messages = sorted(p.message for p in result.problems)
    assert messages == ["unknown Dockerfile instruction: BOGUS", "unterminated heredoc <<EOF", "unterminated single quote"]
    spans = {p.message: raw(text, p.span) for p in result.problems}
    assert spans["unknown Dockerfile instruction: BOGUS"] == "BOGUS"
    assert spans["unterminated single quote"] == "'"
    assert spans["unterminated heredoc <<EOF"] == "<<EOF"
    assert result.is_launch_file


def test_parse_instructions_masks_continuations() -> None:
    text = "FROM x\nRUN a \\\n  # c\n\n  b\n"
    escape, instructions, problems = parse(text)
    assert escape == "\\" and problems == []
    run = instructions[1]
    assert run.keyword == "RUN" and raw(text, run.keyword_span) == "RUN"
    assert len(run.args) == len(text[run.start : run.span.end])
    assert "#" not in run.args and run.args.split() == ["a", "\\", "b"]


@pytest.mark.parametrize(
    ("name", "surface"),
    [
        ("Dockerfile", Surface.DOCKERFILE),
        ("dockerfile", Surface.DOCKERFILE),
        ("Dockerfile.gpu", Surface.DOCKERFILE),
        ("sglang.Dockerfile", Surface.DOCKERFILE),
        ("Containerfile", Surface.DOCKERFILE),
        ("Containerfile.cuda13", Surface.DOCKERFILE),
        ("Dockerfiles.md", Surface.MARKDOWN),  # documentation: its code blocks are read
    ],
)
def test_detect_dockerfile(name: str, surface: Surface | None) -> None:
    assert detect_surface(Path("/repo") / name, "FROM x\n") is surface


def test_a_script_run_on_without_backslashes_is_one_defect() -> None:
    # Docker stops at the first unknown instruction: the script's other lines are no more defects
    text = ('FROM lmsysorg/sglang:v0.5.23\nRUN python -c "\nimport sglang\nprint(sglang.__version__)\n"\n'
            'CMD ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"]\n')
    res = read(text)
    unknown = [p.message for p in res.problems if p.message.startswith("unknown Dockerfile instruction")]
    assert unknown == ["unknown Dockerfile instruction: import"]
    assert len(res.launches) == 1  # the launch after it is still read
