"""Bounded work per file (issue 32, red team D1): a 0.7 MB notebook of 4,000 launch cells took
~30 s in one process. The engine checks at most ``MAX_LAUNCHES_PER_FILE`` launches of a file and
puts one warning on the first launch it did not check: visible, never a silent pass. Counted by
how often the per-launch work runs, not by seconds."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kimi_lsp import engine as engine_mod
from kimi_lsp.diagnostics import Severity
from kimi_lsp.engine import Engine
from kimi_lsp.workspace import Workspace

LAUNCH = "python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --dcp-size 8 --bogus{i} 1"


def _notebook(n: int) -> str:
    cell = lambda i: {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,  # noqa: E731
                      "source": ["!" + LAUNCH.format(i=i) + "\n"]}
    return json.dumps({"cells": [cell(i) for i in range(n)], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _script(n: int) -> str:
    return "#!/bin/sh\n" + "".join(LAUNCH.format(i=i) + " &\n" for i in range(n))


def _lint(tmp_path: Path, name: str, text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list[object], int]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    path = tmp_path / name
    path.write_text(text)
    runs = []
    original = Engine._lint_launch

    def counted(self: Engine, *args: object, **kwargs: object) -> object:
        runs.append(1)
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Engine, "_lint_launch", counted)
    result = Engine(Workspace(tmp_path)).lint_file(path)
    assert result.launches == len(runs)
    return list(result.diagnostics), len(runs)


@pytest.mark.parametrize(("name", "make", "first_line"), [("many.ipynb", _notebook, None), ("many.sh", _script, 6)])
def test_launches_past_the_bound_are_not_checked_and_one_warning_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, make: object, first_line: int | None
) -> None:
    monkeypatch.setattr(engine_mod, "MAX_LAUNCHES_PER_FILE", 4)
    text = make(40)  # type: ignore[operator]
    diags, runs = _lint(tmp_path, name, text, monkeypatch)
    assert runs == 4  # not 40
    bound = [d for d in diags if d.code == "KL001"]  # type: ignore[attr-defined]
    assert len(bound) == 1
    (d,) = bound
    assert d.severity is Severity.WARNING and "not checked" in d.message and "40" in d.message
    # on the first launch left out (the fifth)
    assert text[d.location.span.start : d.location.span.end] == LAUNCH.format(i=4)
    if first_line is not None:
        assert text.count("\n", 0, d.location.span.start) == first_line - 1
    # what the checked launches found is still reported
    assert sum(1 for x in diags if x.code != "KL001") >= 4  # type: ignore[attr-defined]


def test_the_work_grows_with_launches_up_to_the_bound_then_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_mod, "MAX_LAUNCHES_PER_FILE", 6)
    counts = []
    for n in (3, 6, 7, 60):
        d = tmp_path / f"n{n}"
        d.mkdir()
        diags, runs = _lint(d, "many.sh", _script(n), monkeypatch)
        counts.append(runs)
        assert any(x.code == "KL001" for x in diags) == (n > 6)  # type: ignore[attr-defined]
    assert counts == [3, 6, 6, 6]


def test_the_default_bound() -> None:
    # large enough for real manifests (dozens of Deployments), small enough that a file costs
    # seconds at most (each launch ~5-10 ms)
    assert 100 <= engine_mod.MAX_LAUNCHES_PER_FILE <= 500
