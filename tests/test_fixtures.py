"""The fixture corpus: every project under tests/fixtures/<case>/ is linted as a repository of its
own, and the diagnostics must equal the ``# expect`` annotations written in its files.

Annotation grammar (in any file of the case):
- ``# expect: KL101`` at the end of a line: a diagnostic with that code starts on this line;
- ``# expect: KL101`` alone on a line: on the next line that is not itself an annotation;
- ``# expect(+2): KL101``: two lines below the annotation (for block scalars and ``\\`` continuations);
- several codes: ``# expect: KL101, KL204``; ``# expect: none`` documents a line that must stay clean.
In a notebook (``.ipynb``) the annotation is a comment inside a cell's source line, so it ends
a JSON string: the string's closing ``\\n",`` is not part of it.
A missing diagnostic and an extra diagnostic both fail the case.

Fix cases: a file ``X.fixed`` beside ``X`` is what ``X`` must read after ``--fix`` (safe fixes);
the fixed project must then lint without the codes that were fixed. Files without a ``.fixed``
twin must be byte-identical after fixing.
"""
from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from kimi_lsp.cli.check import collect_files
from kimi_lsp.engine import Engine
from kimi_lsp.fixes import fix_until_stable
from kimi_lsp.workspace import Workspace

FIXTURES = Path(__file__).parent / "fixtures"
_JSON_LINE_END = re.compile(r'(?:\\n)?",?\s*$')  # the end of a notebook cell's source line
_ANNOT = re.compile(r"#\s*expect(?:\((?P<rel>[+-]\d+)\))?:\s*(?P<codes>[A-Za-z0-9 ,]+?)\s*$")


def _cases() -> list[str]:
    return sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith("_"))


def expectations(root: Path) -> Counter:
    exp: Counter = Counter()
    for f in sorted(root.rglob("*")):
        if not f.is_file() or f.suffix == ".fixed" or ".git" in f.parts:
            continue
        try:
            text = f.read_text("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        lines = re.split(r"\r\n|\r|\n", text)
        if f.suffix == ".ipynb":
            lines = [_JSON_LINE_END.sub("", line) for line in lines]
        rel = f.relative_to(root).as_posix()
        for i, line in enumerate(lines):
            m = _ANNOT.search(line)
            if not m:
                continue
            codes = [c.strip().upper() for c in m.group("codes").split(",") if c.strip()]
            if m.group("rel"):
                target = i + int(m.group("rel"))
            elif line[: m.start()].strip():
                target = i
            else:
                target = i + 1
                while target < len(lines) and _ANNOT.search(lines[target]) and not lines[target][: _ANNOT.search(lines[target]).start()].strip():
                    target += 1
            for c in codes:
                if c != "NONE":
                    exp[(rel, target + 1, c)] += 1
    return exp


def _copy_case(name: str, tmp_path: Path) -> Path:
    dst = tmp_path / name
    shutil.copytree(FIXTURES / name, dst, symlinks=True)
    (dst / ".git").mkdir(exist_ok=True)  # each case is a repository of its own
    return dst


def _lint(root: Path) -> tuple[list, Workspace, Engine, list[Path]]:
    ws = Workspace(root)
    eng = Engine(ws)
    files, errors = collect_files(["."], ws)
    assert not errors
    files = [f for f in files if f.suffix != ".fixed"]
    eng.index_config_references(files)
    diags = []
    seen = set()
    for f in files:
        for d in eng.lint_file(f).diagnostics:
            key = (d.path, d.location.span, d.code, d.message)
            if key not in seen:
                seen.add(key)
                diags.append(d)
    assert not eng.errors, eng.errors
    return diags, ws, eng, files


def _actual(diags, ws: Workspace, root: Path) -> Counter:
    got: Counter = Counter()
    for d in diags:
        src = ws.read(d.path)
        line = src.lines.line_of(d.location.span.start) + 1 if hasattr(src, "lines") else 1
        got[(d.path.relative_to(root).as_posix(), line, d.code)] += 1
    return got


def _fmt(c: Counter) -> str:
    return "\n".join(f"  {p}:{line}: {code}" + (f" (x{n})" if n > 1 else "") for (p, line, code), n in sorted(c.items())) or "  (none)"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    # the machine's real Hugging Face cache must not decide a fixture's model
    monkeypatch.setenv("HF_HOME", str(tmp_path / "no-hf-home"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)


@pytest.mark.parametrize("case", _cases())
def test_fixture(case: str, tmp_path: Path, monkeypatch) -> None:
    root = _copy_case(case, tmp_path)
    monkeypatch.chdir(root)
    diags, ws, _, _ = _lint(root)
    expected = expectations(root)
    got = _actual(diags, ws, root)
    missing = expected - got
    extra = got - expected
    detail = "\n".join(f"  {d.path.relative_to(root)}: {d.code} {d.message}" for d in diags)
    assert not missing and not extra, (
        f"\nmissing:\n{_fmt(missing)}\nextra:\n{_fmt(extra)}\nall diagnostics:\n{detail}"
    )


def _fix_cases() -> list[str]:
    return [c for c in _cases() if any(p.suffix == ".fixed" for p in (FIXTURES / c).rglob("*"))]


@pytest.mark.parametrize("case", _fix_cases())
def test_fixture_fix(case: str, tmp_path: Path, monkeypatch) -> None:
    root = _copy_case(case, tmp_path)
    monkeypatch.chdir(root)
    before = [p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts]
    diags, ws, eng, files = _lint(root)

    def relint():
        eng.invalidate()
        out = []
        for f in files:
            out.extend(eng.lint_file(f).diagnostics)
        return out

    outcome = fix_until_stable(relint, ws)
    assert outcome.converged
    fixed_codes = {d.code for d, _ in outcome.applied}
    for p in before:
        twin = p.with_name(p.name + ".fixed")
        now = ws.text(p)
        if p.suffix == ".fixed":
            continue
        if twin.exists():
            assert now == twin.read_bytes().decode("utf-8"), f"{p.name} after --fix differs from {twin.name}"  # line endings too
        else:
            assert p.resolve() not in outcome.changed, f"{p.name} changed without a .fixed twin"
    remaining = {d.code for d in outcome.remaining}
    assert not (remaining & fixed_codes), f"still reported after fixing: {sorted(remaining & fixed_codes)}"


def test_every_case_has_an_expectation_or_says_clean() -> None:
    for case in _cases():
        root = FIXTURES / case
        if expectations(root):
            continue
        text = "".join(p.read_text("utf-8", "replace") for p in root.rglob("*") if p.is_file())
        assert "expect: none" in text, f"{case}: no expectation; write `# expect: none` on a clean launch line"

