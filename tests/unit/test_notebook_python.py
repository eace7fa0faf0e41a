"""Notebooks and Python: every character located in the file (JSON escapes, Python escapes), and
what is not a launch left alone."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_lsp.surfaces import Entry, Surface, read_surface
from kimi_lsp.surfaces.model import Unknown
from kimi_lsp.surfaces.notebook import read_notebook
from kimi_lsp.surfaces.python import read_python
from kimi_lsp.syntax import notebook as nb
from kimi_lsp.syntax import python as py
from kimi_lsp.workspace import SourceText


def _notebook(*cells: list[str] | str, ascii_only: bool = True) -> str:
    return json.dumps(
        {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": c} for c in cells],
         "metadata": {"kernelspec": {"language": "python"}}, "nbformat": 4, "nbformat_minor": 5},
        indent=1, ensure_ascii=ascii_only,
    )


# -- JSON with positions ---------------------------------------------------------------------


@pytest.mark.parametrize("ascii_only", [True, False])
def test_each_cell_character_maps_to_the_json_text_it_was_written_as(ascii_only: bool) -> None:
    source = ['!pip install "sglang==0.5.23"\n', "x = 'é\\t😀'\t# tab\n", "y = 1"]
    text = _notebook(source, ascii_only=ascii_only)
    (cell,) = nb.read(text).cells
    src = cell.source
    assert src.text == "".join(source)
    for k, ch in enumerate(src.text):
        raw = text[src.start(k) : src.end(k)]
        assert json.loads(f'"{raw}"') == ch, (k, ch, raw)


def test_a_surrogate_pair_is_one_character() -> None:
    text = '{"cells": [{"cell_type": "code", "source": "a\\ud83d\\ude00b"}]}'
    (cell,) = nb.read(text).cells
    assert cell.source.text == "a😀b"
    assert text[cell.source.start(1) : cell.source.end(1)] == "\\ud83d\\ude00"


def test_invalid_json_is_a_located_problem() -> None:
    text = '{"cells": [\n  {"cell_type": "code", "source": ["!python -m sglang.launch_server"]\n'
    book = nb.read(text)
    assert book.problem is not None and book.problem.span.start >= len(text) - 2
    got = read_notebook(Path("/p/n.ipynb"), text)
    assert got.problems and got.is_launch_file


def test_shell_escapes_and_cells() -> None:
    text = _notebook(
        ["MODEL = 'm'\n", "!python -m sglang.launch_server --model-path {MODEL} \\\n", "   --tp 8\n", "out = !ls\n"],
        ["%%bash\n", "sglang serve m --tp 2\n"],
        ["%%writefile launch.sh\n", "python -m sglang.launch_server --tp 2\n"],
    )
    cells = nb.read(text).cells
    parts = [p.text for c in cells for p in nb.shell_parts(c)]
    # a script saved with %%writefile is a launch written down (issue 31): read as the script it is
    assert parts == ["python -m sglang.launch_server --model-path $______ \\\n   --tp 8", "ls", "sglang serve m --tp 2\n",
                     "python -m sglang.launch_server --tp 2\n"]
    first = nb.shell_parts(cells[0])[0]
    k = first.text.index("$")
    assert text[first.start(k) : first.end(k)] == "{MODEL}" and not first.exact(k, k + 1)
    assert nb.python_text(cells[0]) is not None and "!" not in (nb.python_text(cells[0]) or "")
    assert nb.python_text(cells[1]) is None and nb.python_text(cells[2]) is None


def test_notebook_launch_positions_are_the_files() -> None:
    text = _notebook(
        ['launch_server_cmd("python3 -m sglang.launch_server --model-path \\"q/w\\" --tp-size 2")\n'],
        ["!python -m sglang.launch_server --model-path q/w --dcp-size 8\n"],
    )
    got = read_notebook(Path("/p/n.ipynb"), text)
    assert {lc.surface for lc in got.launches} == {Surface.NOTEBOOK}
    for lc in got.launches:
        for tok in lc.argv:
            raw = text[tok.span.start : tok.span.end]
            if tok.exact:
                assert raw.strip('"') == tok.value
            else:  # the model path, written \"q/w\" inside a Python string inside JSON
                assert raw == '\\\\\\"q/w\\\\\\"'
    values = [[t.value for t in lc.argv] for lc in got.launches]
    assert ["--model-path", "q/w", "--tp-size", "2"] in values
    assert ["--model-path", "q/w", "--dcp-size", "8"] in values


def test_notebook_install_pins_sit_in_the_json() -> None:
    from kimi_lsp.pins.install_cmds import read_install_pins

    text = _notebook(['!pip install -q "sglang==0.5.22" \\\n', '    "flashinfer-python==0.6.16.post4"\n'])
    pins = read_install_pins(SourceText(Path("/p/n.ipynb"), text), "notebook")
    fi = pins.pins_for("flashinfer-python")[0]
    assert fi.spec_span is not None and text[fi.spec_span.start : fi.spec_span.end] == "==0.6.16.post4"
    assert text[fi.written_name.span.start : fi.written_name.span.end] == "flashinfer-python"


# -- Python string literals ------------------------------------------------------------------


def _value(code: str) -> py.StringValue:
    mod = py.parse(code)
    assert mod is not None
    node = mod.body[0].value  # type: ignore[attr-defined]
    got = py.string_value(code, py.Lines(code), node)
    assert got is not None
    return got


@pytest.mark.parametrize(
    "code",
    [
        'x = "--tp\\x20" "8\\n\\t\\\\"\n',
        "x = r'a\\b' '\\101\\N{BULLET}'\n",
        'x = """one\\\ntwo\nthree"""\n',
        "x = ('é—' # comment\n     'ü\\u00e9')\n",
        "x = b'' or 'plain'\n",
    ],
)
def test_each_string_character_maps_to_its_source(code: str) -> None:
    if code.startswith("x = b"):
        mod = py.parse(code)
        assert mod is not None
        assert py.string_value(code, py.Lines(code), mod.body[0].value) is None  # type: ignore[attr-defined]
        return
    sv = _value(code)
    assert sv.value == eval(code[4:])  # the literal's own value (a constant expression)
    for ch, (a, b) in zip(sv.value, sv.units):
        raw = code[a:b]
        assert raw == ch or eval(f'"{raw}"') == ch or raw in ("\\\\", "\\101"), (ch, raw)


def test_f_string_fields_are_unknown_and_inexact() -> None:
    sv = _value('x = f"--model-path {m!r:>4} {{x}} --tp {tp}"\n')
    assert sv.value == "--model-path $_______ {x} --tp $___"  # as long as `{m!r:>4}`
    assert sv.placeholders and not sv.exact
    k = sv.value.index("$")
    assert len({sv.units[j] for j in range(k, k + 8)}) == 1


def test_a_plain_literal_is_exact() -> None:
    sv = _value("x = 'python -m sglang.launch_server'\n")
    assert sv.exact and sv.units[0] == (5, 6)


# -- the Python surface ----------------------------------------------------------------------

_PY = '''\
"""python -m sglang.launch_server --tp-sise 2 (prose)"""
import subprocess
import sglang as sgl
from sglang.srt.server_args import ServerArgs as SA

print("run python -m sglang.launch_server " + "--tp 2")
cmd = ["python", "-m", "sglang.launch_server", "--model-path", "m"]
cmd.append("--tp")
subprocess.Popen(cmd)
sgl.Engine(model_path="m", dcp_size=8, decode_attention_backend=b, disable_radix_cache=True, **{"tp_size": 8})
SA(model_path="m", cuda_graph_bs=[1, 2, 4], mem_fraction_static=-0.5, **more)
sgl.Engine(server_args=SA(model_path="n"))
other.Engine(model_path="x")
'''


def test_python_forms() -> None:
    got = read_python(Path("/p/run.py"), _PY)
    kinds = [(lc.entry, lc.program.value) for lc in got.launches]
    assert kinds.count((Entry.LAUNCH_SERVER, "python -m sglang.launch_server")) == 1  # not the docstring or the BinOp
    argv = next(lc for lc in got.launches if lc.entry is Entry.LAUNCH_SERVER).argv
    # grown with .append right after it: read in order, where it is written (issue 31; was an unknown tail)
    assert [t.value for t in argv] == ["--model-path", "m", "--tp"] and argv[-1].exact
    engines = [lc for lc in got.launches if lc.entry is Entry.ENGINE]
    assert len(engines) == 3  # Engine(...), SA(...) twice (one inside server_args=); not other.Engine
    first = engines[0]
    assert first.config is not None
    entries = {e.key.value: e for e in first.config.entries}
    assert entries["dcp_size"].value == 8 and _PY[entries["dcp_size"].key.span.start : entries["dcp_size"].key.span.end] == "dcp_size"
    assert isinstance(entries["decode_attention_backend"].value, Unknown)
    assert entries["tp_size"].value == 8 and first.doubt is None
    sa = engines[1]
    assert sa.config is not None and sa.doubt is not None and "**more" in sa.doubt
    sa_entries = {e.key.value: e for e in sa.config.entries}
    assert sa_entries["cuda_graph_bs"].value == [1, 2, 4] and len(sa_entries["cuda_graph_bs"].item_spans) == 3
    assert sa_entries["mem_fraction_static"].value == -0.5


def test_engine_keywords_resolve_to_flags() -> None:
    from kimi_lsp.knowledge.schema import load_schema
    from kimi_lsp.launch import ArgProblemKind, resolve

    got = read_python(Path("/p/run.py"), "import sglang\nsglang.Engine(model_path='m', tp=2, dcp_size=8, enable_dp_attention=False, watermark_enabled=True)\n")
    (lc,) = got.launches
    res = resolve(lc, load_schema("0.5.23"), None)
    assert res.value("dcp_size") == "8" and res.value("model_path") == "m"
    assert not res.is_set("enable_dp_attention")
    unknown = [p.token.value for p in res.problems if p.kind is ArgProblemKind.UNKNOWN]
    assert unknown == ["tp"]  # a prefix argparse would take is no field; an Engine-only field is fine


def test_files_that_do_not_name_sglang_are_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(text: str) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(py, "parse", boom)
    assert not read_surface(SourceText(Path("/p/a.py"), "import os\nos.system('python -m x')\n")).launches
    assert not read_surface(SourceText(Path("/p/a.ipynb"), _notebook(["print(1)"]))).launches


# -- where the reports say a notebook diagnostic is -------------------------------------------


def test_cell_position_counts_every_cell_and_decoded_characters() -> None:
    text = json.dumps(
        {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# Serve\n"]},
                   {"cell_type": "code", "metadata": {}, "outputs": [], "source": ['x = 1\n', 'y = "\\"é"\n', "!python -m sglang.launch_server --tp-sise 2"]}],
         "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
        indent=1,
    )
    book = nb.read(text)
    code = book.cells[1]
    k = code.source.text.index("--tp-sise")
    assert nb.cell_position(book, code.source.start(k)) == (2, 3, 33)
    k = code.source.text.index("é")
    assert nb.cell_position(book, code.source.start(k)) == (2, 2, 8)  # a backslash and `é` are one character each in the cell (two and six in the JSON)
    assert nb.cell_position(book, text.index('"cells"')) is None


def test_reports_say_which_cell(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    (root / "serve.ipynb").write_text(
        _notebook(['!pip install "sglang==0.5.23"'], ["import os\n", "!python -m sglang.launch_server --model-path m --tp-sise 2"])
    )

    def check(*args: str) -> str:
        r = subprocess.run([sys.executable, "-m", "kimi_lsp", "--check", "--no-cache", *args, "."], cwd=root,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 1, r.stderr
        return r.stdout

    (d,) = json.loads(check("--format", "json"))["diagnostics"]
    assert d["code"] == "KL201" and d["cell"] == {"number": 2, "line": 2, "column": 48}
    assert d["related"][0]["cell"] == {"number": 1, "line": 1, "column": 14}  # the pip line that says the release
    assert "(cell 2, line 2)" in check().splitlines()[0]
    (res,) = json.loads(check("--format", "sarif"))["runs"][0]["results"]
    assert res["properties"]["notebookCell"] == {"number": 2, "line": 2, "column": 48}
    assert res["locations"][0]["logicalLocations"] == [{"name": "cell 2", "kind": "notebookCell"}]
