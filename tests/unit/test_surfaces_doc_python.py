"""Launches in documentation's Python blocks, plain-text blocks and notebook markdown cells and
``%%writefile`` cells: each word where the file has it."""
from __future__ import annotations

import json
from pathlib import Path

from kimi_lsp.surfaces import read_surface
from kimi_lsp.surfaces.model import Entry, Surface, SurfaceResult
from kimi_lsp.workspace import SourceText


def read(text: str, name: str) -> SurfaceResult:
    result = read_surface(SourceText(Path("/repo") / name, text))
    assert not result.notes, result.notes
    return result


DOC = '''\
# Python

```python
server, port = launch_server_cmd(
    "python -m sglang.launch_server --model-path m --tp 2"
)
```

- item

  ```python
  import sglang as sgl
  llm = sgl.Engine(model_path="m", tp_size=2)
  ```

```python
!python3 -m sglang.launch_server --model-path m --port 1
```

```python
python -m sglang.launch_server --model-path m --port 2
```

```text
python -m sglang.launch_server --model-path m --port 3
```
'''


def test_python_and_text_blocks_are_read_where_they_are_written() -> None:
    launches = read(DOC, "docs/guide.mdx").launches
    assert [(lc.surface, lc.entry) for lc in launches] == [
        (Surface.MARKDOWN, Entry.LAUNCH_SERVER), (Surface.MARKDOWN, Entry.ENGINE), (Surface.MARKDOWN, Entry.LAUNCH_SERVER),
        (Surface.MARKDOWN, Entry.LAUNCH_SERVER), (Surface.MARKDOWN, Entry.LAUNCH_SERVER),
    ]
    cmd, engine, bang, mislabelled, text_block = launches
    tp = cmd.argv[-1]
    assert tp.value == "2" and DOC[tp.span.start : tp.span.end] == "2" and tp.span.start == DOC.index("--tp 2") + 5
    assert engine.config is not None
    (model, tp_size) = engine.config.entries
    assert DOC[tp_size.key.span.start : tp_size.key.span.end] == "tp_size"
    assert DOC[bang.program.span.start : bang.program.span.end] == "python3 -m sglang.launch_server"
    assert [lc.doubt is None for lc in launches] == [True, True, True, False, False]
    for lc, port in ((bang, "1"), (mislabelled, "2"), (text_block, "3")):
        assert lc.argv[-1].value == port and lc.argv[-1].span.start == DOC.index(f"--port {port}") + 7


def test_rst_python_block_and_an_indented_fence_without_room_are_safe() -> None:
    rst = "Engine\n======\n\n.. code-block:: python\n\n   import sglang as sgl\n   sgl.Engine(model_path='m', tp_size=2)\n"
    (engine,) = read(rst, "docs/engine.rst").launches
    assert engine.entry is Entry.ENGINE and engine.config is not None
    key = engine.config.entries[1].key
    assert rst[key.span.start : key.span.end] == "tp_size"
    # a Python block with nothing but itself: no line above it to hold the indentation head
    assert read(" ```python\n import sglang\n sgl.Engine(model_path='m')\n ```\n", "a.md").launches == ()


def test_notebook_markdown_bash_block_and_writefile_cells() -> None:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["Run (sglang):\n", "```bash\n", "python -m sglang.launch_server --model-path m --port 4\n", "```\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["%%writefile -a start.sh\n", "python -m sglang.launch_server --model-path m --port 5\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["%%writefile serve.py\n", "import sglang as sgl\n", "sgl.Engine(model_path='m', port=6)\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["%%writefile notes.txt\n", "python -m sglang.launch_server --model-path m --port 7\n"]},
    ]
    text = json.dumps({"cells": cells, "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5})
    md_cell, script, engine = read(text, "nb/serve.ipynb").launches
    for lc, port in ((md_cell, "4"), (script, "5")):
        assert lc.surface is Surface.NOTEBOOK and lc.argv[-1].value == port
        assert lc.argv[-1].span.start == text.index(f"--port {port}") + 7
    assert engine.entry is Entry.ENGINE and engine.config is not None
    port = engine.config.entries[1]
    assert text[port.value_span.start : port.value_span.end] == "6"


def test_an_argv_list_grown_with_plus_equals_is_read_with_an_unknown_tail() -> None:
    code = (
        "import subprocess\n"
        "def start(flag, port):\n"
        "    cmd = ['python3', '-m', 'sglang.launch_server', '--model-path', 'm', '--tp', '2']\n"
        "    if flag:\n"
        "        cmd += ['--port', str(port)]\n"
        "    subprocess.Popen(cmd)\n"
        "tp = 2\n"
        "tp += 1\n"
        "import sglang as sgl\n"
        "sgl.Engine(model_path='m', tp_size=tp)\n"
    )
    popen, engine = read(code, "serve.py").launches
    assert [t.value for t in popen.argv] == ["--model-path", "m", "--tp", "2", "$_"] and not popen.argv[-1].exact
    assert code[popen.argv[2].span.start : popen.argv[2].span.end] == "'--tp'"
    assert engine.config is not None and type(engine.config.entries[1].value).__name__ == "Unknown"  # rebound: not 2


def _argv_words(code: str, launch) -> list[str]:  # type: ignore[no-untyped-def]
    return [t.value if t.exact else "?" for t in launch.argv]


def test_an_argv_list_built_in_a_helper_and_joined_is_read_with_its_growth() -> None:
    # issue 31: the list is read where it is written, whatever runs it (here: a string returned)
    code = (
        "def build_cmd(model):\n"
        "    cmd = ['python', '-m', 'sglang.launch_server', '--model-path', model, '--tp', '8']\n"
        "    cmd += ['--enable-dp-attention']\n"
        "    cmd.append('--dp')\n"
        "    cmd.extend(['2', '--tp-sise', '2'])\n"
        "    return ' '.join(cmd)\n"
    )
    (launch,) = read(code, "helpers.py").launches
    assert _argv_words(code, launch) == ["--model-path", "?", "--tp", "8", "--enable-dp-attention", "--dp", "2",
                                         "--tp-sise", "2"]
    typo = launch.argv[7]
    assert code[typo.span.start : typo.span.end] == "'--tp-sise'"


def test_items_added_under_a_condition_are_unknown_words_where_they_come() -> None:
    code = (
        "import subprocess, sys\n"
        "def start(flag):\n"
        "    argv = [sys.executable, '-m', 'sglang.launch_server', '--model-path', 'm']\n"
        "    if flag:\n"
        "        argv.append('--frob')\n"
        "    argv.extend(['--port', '1'])\n"
        "    subprocess.Popen(argv)\n"  # one launch, not two (the list is read where it is written)
        "def ret(extra):\n"
        "    return ['python', '-m', 'sglang.launch_server', '--model-path', 'm', '--bogus'] + extra\n"
        "def again(a):\n"
        "    if a:\n"
        "        cmd = ['python', '-m', 'sglang.launch_server', '--model-path', 'm']\n"
        "    else:\n"
        "        cmd = ['python', '-m', 'sglang.launch_server', '--model-path', 'n']\n"
        "    cmd += ['--tp', '2']\n"  # after the blocks it is bound in: unknown, never missing
        "def test_it():\n"
        "    assert build() == ['python', '-m', 'sglang.launch_server', '--model-path', 'm']\n"
    )
    first, second, third, fourth = read(code, "serve.py").launches
    assert _argv_words(code, first) == ["--model-path", "m", "?", "--port", "1"]
    assert _argv_words(code, second) == ["--model-path", "m", "--bogus", "?"]
    assert _argv_words(code, third)[-1] == "?" and _argv_words(code, fourth)[-1] == "?"


def test_an_fstring_field_bound_to_a_literal_reads_as_the_literal_where_it_is_written() -> None:
    code = (
        "args = '--tp 8 --dp 2'\n"
        "def go(model):\n"
        "    launch_server_cmd(f'python -m sglang.launch_server --model-path {model} {args}')\n"
    )
    (launch,) = read(code, "nb.py").launches
    assert _argv_words(code, launch) == ["--model-path", "?", "--tp", "8", "--dp", "2"]
    dp = launch.argv[4]
    assert dp.span.start == code.index("--dp") and dp.exact


def test_reading_argv_growth_is_linear_in_the_launch_lists() -> None:
    from tests.reliability._support import growth

    from kimi_lsp.surfaces.python import read_python

    def run(n: int) -> object:
        one = ("cmd{i} = ['python', '-m', 'sglang.launch_server', '--port', '{i}']\n"
               "cmd{i}.append('--tp')\ncmd{i} += ['2']\n")
        return read_python(Path("/r/many.py"), "".join(one.format(i=i) for i in range(n)))

    assert len(run(3).launches) == 3
    assert growth(run, 50) < 6


def test_a_command_concatenated_from_literals_and_numbers_in_fields_are_read() -> None:
    code = (
        "MODEL = 'Qwen/Qwen3-8B'\n"
        "ARGS = '--tp 8'\n"
        "frac = 0.85\n"
        "cmd = 'python -m sglang.launch_server --model-path ' + MODEL + ' ' + ARGS\n"
        "cmd2 = f'python -m sglang.launch_server --model-path {MODEL} --mem-fraction-static {frac} --dp {dp}'\n"
        "subprocess.run('python3 -m sglang.launch_server ' + ' '.join(sys.argv[1:]), shell=True)\n"  # a part unknown: not read
    )
    first, second = read(code, "cmds.py").launches
    assert _argv_words(code, first) == ["--model-path", "Qwen/Qwen3-8B", "--tp", "8"]
    assert first.argv[1].span.start == code.index("Qwen/")  # where the name's value is written
    assert _argv_words(code, second) == ["--model-path", "Qwen/Qwen3-8B", "--mem-fraction-static", "0.85", "--dp", "?"]
    assert second.argv[3].span.start == code.index("0.85")
