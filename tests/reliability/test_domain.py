"""Which names are Dockerfiles (issue 33): a known language suffix wins over a `Dockerfile.`/
`Containerfile.` prefix, so `dockerfile.py` is Python and `Dockerfile.md` is documentation, while
a variant suffix (`Dockerfile.prod`, `Containerfile.rocm`) stays a Dockerfile."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.surfaces import detect_surface
from kimi_lsp.surfaces.detect import is_dockerfile_name
from kimi_lsp.surfaces.model import Surface

from ._support import fresh_engine, make_repo

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "name",
    [
        "Dockerfile", "dockerfile", "Containerfile", "Dockerfile.prod", "Dockerfile.cuda12",
        "Dockerfile.cuda12.4", "prod.Dockerfile", "sglang.dockerfile", "Containerfile.rocm",
        "Dockerfile.j2", "Dockerfile.template", "Dockerfile.cmd",
    ],
)
def test_dockerfile_names(name: str) -> None:
    assert is_dockerfile_name(name)
    assert detect_surface(Path("/repo") / name, "FROM x\n") is Surface.DOCKERFILE


@pytest.mark.parametrize(
    ("name", "surface"),
    [
        ("dockerfile.py", Surface.PYTHON),
        ("Dockerfile.md", Surface.MARKDOWN),
        ("Dockerfile.rst", Surface.MARKDOWN),
        ("containerfile.ipynb", Surface.NOTEBOOK),
        ("Dockerfile.sh", Surface.SHELL),
        ("Dockerfile.txt", Surface.TEXT),  # a text file of commands (issue 31), not a Dockerfile
        ("Dockerfile.json", None),
        ("Dockerfile.dockerignore", None),  # BuildKit's ignore file for that Dockerfile
        ("prod.Dockerfile.md", Surface.MARKDOWN),
    ],
)
def test_a_language_suffix_wins(name: str, surface: Surface | None) -> None:
    assert not is_dockerfile_name(name)
    assert detect_surface(Path("/repo") / name, "import os\nprint('sglang')\n") is surface


def test_no_dockerfile_errors_on_python_or_prose(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "dockerfile.py").write_text("import sglang\nprint(sglang)\n", "utf-8")
    (repo / "Dockerfile.md").write_text("# Images\n\nWe build sglang images here.\n", "utf-8")
    eng = fresh_engine(repo)
    diags = [d for f in ("dockerfile.py", "Dockerfile.md") for d in eng.lint_file(repo / f).diagnostics]
    assert diags == []  # was: KL001 "unknown Dockerfile instruction: import" / ": We"


def test_the_dockerfile_reader_module_is_python() -> None:
    # the project's own surfaces/dockerfile.py got 144 KL001 errors
    src = REPO / "server" / "kimi_lsp" / "surfaces" / "dockerfile.py"
    result = fresh_engine(REPO).lint_file(src)
    assert [d for d in result.diagnostics if d.code == "KL001"] == []
