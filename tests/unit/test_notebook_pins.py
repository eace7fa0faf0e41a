"""A notebook's own pins from every install form IPython runs (issue 32, red-team finding N1).

``!pip install`` lines and ``%%bash`` cells were read; the ``%pip install`` magic (the form IPython
and Jupyter recommend), ``%uv pip install``, ``%conda``/``%mamba install``, ``!{sys.executable} -m
pip install`` and the body of a ``%%capture`` cell were not: a Kimi-K3 DCP notebook that pinned
an old flashinfer-python with ``%pip`` got KL102 ("no pin") instead of KL101. Each form is read
with every character located in the ``.ipynb`` text, so the bump fix edits the JSON in place.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_lsp.pins.install_cmds import read_install_pins
from kimi_lsp.workspace import SourceText

OLD = "flashinfer-python==0.6.16.post4"


def _notebook(*sources: str | list[str]) -> str:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": s} for s in sources]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def _pins(text: str) -> list[tuple[str, str, str | None, str]]:
    """(name, specifier, the file text at spec_span, the file text at span) of each pin."""
    src = read_install_pins(SourceText(Path("/nb/k3.ipynb"), text), "notebook")
    return [(p.name, p.specifier, text[p.spec_span.start : p.spec_span.end] if p.spec_span else None,
             text[p.span.start : p.span.end]) for p in src.pins]


@pytest.mark.parametrize(
    "cell",
    [
        f"!pip install {OLD}",
        f"%pip install {OLD}",
        f"%pip install -q -U {OLD}",
        f"  %pip install {OLD}  # the kernel's own environment",
        f"%uv pip install {OLD}",
        f"!uv pip install {OLD}",
        f"!python -m pip install {OLD}",
        f"!python3 -m pip install --quiet {OLD}",
        f"!{{sys.executable}} -m pip install {OLD}",
        f"%%capture\n%pip install {OLD}",
        f"%%time\n!pip install {OLD}",
        f"%%bash\npip install {OLD}",
        f"import os\n%pip install {OLD}\nprint(1)",
    ],
)
def test_every_install_form_is_read_where_it_is_written(cell: str) -> None:
    text = _notebook(cell)
    assert _pins(text) == [("flashinfer-python", "==0.6.16.post4", "==0.6.16.post4", OLD)]


def test_a_continued_magic_with_json_escapes_locates_in_the_file() -> None:
    text = _notebook(["%pip install -q \"sglang==0.5.22\" \\\n", f"    \"{OLD}\""])
    assert _pins(text) == [
        ("sglang", "==0.5.22", "==0.5.22", '\\"sglang==0.5.22\\"'),
        ("flashinfer-python", "==0.6.16.post4", "==0.6.16.post4", f'\\"{OLD}\\"'),
    ]


def test_conda_installs_are_matchspecs_and_never_edited() -> None:
    text = _notebook("%conda install -y -c conda-forge flashinfer-python=0.6.16.post4",
                     "%mamba install flashinfer-python==0.6.16.post4 'sglang>=0.5,<0.6'")
    assert _pins(text) == [
        ("flashinfer-python", "==0.6.16.post4.*", None, "flashinfer-python=0.6.16.post4"),  # conda's fuzzy =
        ("flashinfer-python", "==0.6.16.post4", None, "flashinfer-python==0.6.16.post4"),
        ("sglang", ">=0.5,<0.6", None, "'sglang>=0.5,<0.6'"),
    ]


@pytest.mark.parametrize(
    "cell",
    [
        f"%pipe install {OLD}",  # another magic
        f"%%writefile req.txt\n%pip install {OLD}",  # a cell magic whose body is not run
        f"x = '%pip install {OLD}'",  # a string
        f"# %pip install {OLD}",  # a comment
        f"%pip download {OLD}",  # no install
        f"%conda create -n x {OLD}",
    ],
)
def test_what_installs_nothing_pins_nothing(cell: str) -> None:
    assert _pins(_notebook(cell)) == []
