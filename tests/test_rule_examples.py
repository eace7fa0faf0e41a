"""Every rule's documentation examples are tests (pylint's bad/good convention).

Each rule's `## Example` block, written into a small project of its own and linted with the real
engine, must produce at least one diagnostic with the rule's code; its `Use instead:` block must
produce none. A block is a self-contained launch:

- the block's language picks the launch file: yaml -> `launch.yaml` (an sglang `--config` file),
  bash/sh/shell -> `launch.sh`, dockerfile -> `Dockerfile`, toml -> `pyproject.toml` when it holds
  `[tool.kimi-lsp]`, else `launch.toml` (a TOML launch profile);
- leading comment lines `# <file>: <line>` add `<line>` to `<file>` beside it, e.g.
  `# requirements.txt: flashinfer-python==0.6.16.post4` or `# kimi-lsp.toml: target-gpu = "h200"`.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from kimi_lsp.cli.check import collect_files
from kimi_lsp.engine import Engine
from kimi_lsp.knowledge.schema import shipped_versions
from kimi_lsp.rules import ALL_RULES
from kimi_lsp.rules._base import Rule
from kimi_lsp.workspace import Workspace

_BLOCK = re.compile(r"```(?P<lang>[\w-]*)\n(?P<body>.*?)```", re.S)
_SIDE_FILE = re.compile(r"^#\s*(?P<file>[\w.-]+(?:/[\w.-]+)*):\s?(?P<line>.*)$")
_LAUNCH_FILE = {"yaml": "launch.yaml", "yml": "launch.yaml", "bash": "launch.sh", "sh": "launch.sh",
                "shell": "launch.sh", "dockerfile": "Dockerfile"}


def examples(r: Rule) -> tuple[tuple[str, str], tuple[str, str]]:
    """((lang, bad), (lang, good)) from the rule's documentation."""
    _, _, after = r.doc.partition("## Example")
    bad_part, _, good_part = after.partition("Use instead:")
    bad = _BLOCK.search(bad_part)
    good = _BLOCK.search(good_part)
    assert bad is not None and good is not None, f"{r.code}: example blocks not found"
    return (bad["lang"], bad["body"]), (good["lang"], good["body"])


def write_project(root: Path, lang: str, body: str) -> None:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    side: dict[str, list[str]] = {}
    for line in body.splitlines():
        m = _SIDE_FILE.match(line)
        if not m or not _looks_like_file(m["file"]):
            break
        side.setdefault(m["file"], []).append(m["line"])
    for name, lines in side.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", "utf-8")
    if lang == "toml":
        name = "pyproject.toml" if "[tool.kimi-lsp]" in body else "launch.toml"
    else:
        name = _LAUNCH_FILE.get(lang, "launch.yaml")
    (root / name).write_text(body, "utf-8")


def _looks_like_file(name: str) -> bool:
    return "." in name or name in ("Dockerfile", "Pipfile")


def lint_codes(root: Path, monkeypatch) -> list[tuple[str, str]]:
    monkeypatch.chdir(root)
    ws = Workspace(root)
    # the examples document the newest release; one that pins none would otherwise be checked
    # as of unknown release (only what every recent release agrees on)
    eng = Engine(ws, overrides={"sglang_version": shipped_versions()[-1]}, overrides_win=False)
    files, errors = collect_files(["."], ws)
    assert not errors
    eng.index_config_references(files)
    out: list[tuple[str, str]] = []
    for f in files:
        out.extend((d.code, d.message) for d in eng.lint_file(f).diagnostics)
    assert not eng.errors, eng.errors
    return out


# Examples that cannot be written as a self-contained launch (strict xfail: the entry must go
# once the example is fixed).
KNOWN_BAD_EXAMPLES: dict[str, str] = {}


def _params(kind: str) -> list:
    out = []
    for r in ALL_RULES:
        reason = KNOWN_BAD_EXAMPLES.get(r.code) if kind == "bad" else None
        marks = (pytest.mark.xfail(reason=reason, strict=True),) if reason else ()
        out.append(pytest.param(r, id=r.code, marks=marks))
    return out


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    # the machine's Hugging Face cache must not decide an example's model
    monkeypatch.setenv("HF_HOME", str(tmp_path / "no-hf-home"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)


@pytest.mark.parametrize("r", _params("bad"))
def test_example_fires(r: Rule, tmp_path: Path, monkeypatch) -> None:
    (lang, body), _ = examples(r)
    write_project(tmp_path / "bad", lang, body)
    found = lint_codes(tmp_path / "bad", monkeypatch)
    assert any(code == r.code for code, _ in found), f"{r.code} example: got {found}"


@pytest.mark.parametrize("r", _params("good"))
def test_use_instead_is_clean(r: Rule, tmp_path: Path, monkeypatch) -> None:
    _, (lang, body) = examples(r)
    write_project(tmp_path / "good", lang, body)
    found = lint_codes(tmp_path / "good", monkeypatch)
    assert not [m for code, m in found if code == r.code], f"{r.code} `Use instead`: got {found}"
