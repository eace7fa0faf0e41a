"""systemd units, VS Code launch.json debug configurations and text files of commands: each
launch word where the file has it, env read, doubts where the file is only probably commands."""
from __future__ import annotations

from pathlib import Path

from kimi_lsp.surfaces import detect_surface, read_surface
from kimi_lsp.surfaces.model import Entry, Surface, SurfaceResult
from kimi_lsp.surfaces.other_files import _blank_jsonc
from kimi_lsp.walk import is_candidate
from kimi_lsp.workspace import SourceText


def read(text: str, name: str) -> SurfaceResult:
    result = read_surface(SourceText(Path("/repo") / name, text))
    assert not result.notes, result.notes
    return result


UNIT = """\
[Service]
Environment="HF_HOME=/hf" SGLANG_X=1
ExecStart=-/opt/venv/bin/python -m sglang.launch_server \\
    --model-path m --tp 2
ExecStartPre=/bin/echo python -m sglang.launch_server --port 9
"""


def test_systemd_exec_start_with_its_environment() -> None:
    assert detect_surface(Path("/r/deploy/sglang.service"), UNIT) is Surface.SYSTEMD
    (launch,) = read(UNIT, "deploy/sglang.service").launches
    assert launch.surface is Surface.SYSTEMD and launch.doubt is None
    assert UNIT[launch.program.span.start : launch.program.span.end] == "/opt/venv/bin/python -m sglang.launch_server"
    assert [t.value for t in launch.argv] == ["--model-path", "m", "--tp", "2"]
    assert launch.argv[-1].span.start == UNIT.index("--tp 2") + 5
    assert [(v.name.value, v.value.value if v.value else None) for v in launch.env] == [("HF_HOME", "/hf"), ("SGLANG_X", "1")]


LAUNCH_JSON = """\
{
  // comments and trailing commas, as VS Code writes them
  "configurations": [
    {"type": "debugpy", "module": "sglang.launch_server", "args": ["--model-path", "m", "--tp", "2",],
     "env": {"A": "1"}},
    {"type": "python", "program": "${workspaceFolder}/python/sglang/launch_server.py", "args": "--port 3"},
    {"type": "debugpy", "module": "pytest", "args": ["--tp", "2"]},
    /* {"type": "debugpy", "module": "sglang.launch_server"} */
  ],
}
"""


def test_vscode_debug_configurations() -> None:
    assert detect_surface(Path("/r/.vscode/launch.json"), LAUNCH_JSON) is Surface.VSCODE
    assert detect_surface(Path("/r/launch.json"), LAUNCH_JSON) is None  # only VS Code's own file
    assert is_candidate(Path("/r/.vscode/launch.json")) and is_candidate(Path("/r/u.service"))
    module, program = read(LAUNCH_JSON, ".vscode/launch.json").launches
    assert module.entry is Entry.LAUNCH_SERVER and module.surface is Surface.VSCODE
    assert [t.value for t in module.argv] == ["--model-path", "m", "--tp", "2"]
    tp = module.argv[2]
    assert LAUNCH_JSON[tp.span.start : tp.span.end] == "--tp" and tp.exact
    assert [(v.name.value, v.value.value if v.value else None) for v in module.env] == [("A", "1")]
    assert [t.value for t in program.argv] == ["--port", "3"]
    assert program.argv[1].span.start == LAUNCH_JSON.index("--port 3") + 7
    assert len(_blank_jsonc(LAUNCH_JSON)) == len(LAUNCH_JSON)


def test_text_files_of_commands_and_notes() -> None:
    commands = "python -m sglang.launch_server --model-path m --port 1\n\n# a comment\n"
    (launch,) = read(commands, "cmds.txt").launches
    assert launch.surface is Surface.TEXT and launch.doubt is None
    notes = "some notes\nmore notes here\nand more\npython -m sglang.launch_server --port 2\n"
    (launch,) = read(notes, "notes.txt").launches
    assert launch.doubt is not None
    assert read("sglang==0.5.12\nflashinfer-python\n", "requirements.txt").launches == ()
