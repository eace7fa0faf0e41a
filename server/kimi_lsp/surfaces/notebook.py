"""Launches in Jupyter notebooks: code cells, read through ``syntax.notebook``.

A code cell is Python with IPython's shell escapes: ``!python -m sglang.launch_server ...`` lines
and ``%%bash``/``%%sh``/``%%script bash`` cells are read with the shell reader, the rest of the
cell with the Python reader (``launch_server_cmd("...")``, ``subprocess`` argv lists,
``sgl.Engine(...)``). Every character of a cell is located in the ``.ipynb`` text (JSON escapes
included), so diagnostics and fixes sit where the file has them. A notebook's own
``!pip install sglang==...`` cells are its release evidence (``pins.install_cmds``, kind
notebook). Cell syntax is not reported: a notebook is not run as a script.
"""
from __future__ import annotations

from pathlib import Path

from kimi_lsp.surfaces.model import LaunchCommand, Surface, SurfaceResult
from kimi_lsp.surfaces.python import mentions_sglang, python_launches
from kimi_lsp.surfaces.shell import LaunchContext, launches_in_source
from kimi_lsp.syntax import notebook as nb
from kimi_lsp.text import Span


_LAUNCH_WORDS = ("sglang.launch_server", "sglang serve", "Engine(", "ServerArgs(")


def read_notebook(path: Path, text: str) -> SurfaceResult:
    if not mentions_sglang(text):
        return SurfaceResult()
    book = nb.read(text)
    if book.problem is not None:
        # a notebook that only mentions sglang in prose is nobody's broken launch file
        return SurfaceResult(problems=(book.problem,), is_launch_file=any(w in text for w in _LAUNCH_WORDS))
    launches: list[LaunchCommand] = []
    for cell in book.cells:
        if cell.kind == "markdown" and mentions_sglang(cell.source.text):
            launches.extend(_markdown_cell_launches(path, cell))
            continue
        if cell.kind != "code" or not mentions_sglang(cell.source.text):
            continue
        for part in nb.shell_parts(cell):
            if mentions_sglang(part.text):
                ctx = LaunchContext(path, Surface.NOTEBOOK, path.parent)
                launches.extend(launches_in_source(part, ctx))  # its shell syntax is not reported
        if book.language.startswith("python"):
            code = nb.python_text(cell)
            if code is not None:
                launches.extend(python_launches(path, code, cell.source, Surface.NOTEBOOK))
    return SurfaceResult(launches=tuple(launches), is_launch_file=bool(launches))


def _markdown_cell_launches(path: Path, cell: nb.Cell) -> list[LaunchCommand]:
    """A markdown cell's shell blocks (``bash`` fences: the commands a notebook tells you to run
    in a terminal), read as a Markdown document's are, each character located in the file."""
    from kimi_lsp.syntax import markdown as md  # with the first markdown cell that names sglang

    text = cell.source.text
    out: list[LaunchCommand] = []
    for block in md.blocks_of(md.fences(text), md.SHELL_LANGS):
        if md.looks_like_yaml(text, block) or not mentions_sglang(text[block.body.start : block.body.end]):
            continue
        end = block.body.end + (1 if text.startswith("\n", block.body.end) else 0)
        view = md.code_view(text, [block], shell=True, window=Span(block.body.start, end))
        src = cell.source.sub(view, [(k, k + 1) for k in range(block.body.start, end)])
        out.extend(launches_in_source(src, LaunchContext(path, Surface.NOTEBOOK, path.parent)))
    return out
