""".ci/run: the suite on every Python the project declares, pytest's "no tests ran" a failure, and
nothing left on the machine outside the checkout."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / ".ci" / "run"


def _script() -> str:
    return RUN.read_text("utf-8")


def _helpers(call: str) -> subprocess.CompletedProcess[str]:
    """``call`` run after .ci/run's own helper functions (copied out of it, nothing else run)."""
    text = _script()
    funcs = re.findall(r"^(\w+)\(\) \{\n.*?^\}\n", text, re.S | re.M)
    assert {"suite", "find_python"} <= set(funcs), funcs
    bodies = "".join(m.group(0) for m in re.finditer(r"^\w+\(\) \{\n.*?^\}\n", text, re.S | re.M))
    return subprocess.run(["bash", "-c", f"set -euo pipefail\n{bodies}\n{call}"], capture_output=True, text=True, timeout=60)


def test_nothing_is_linked_or_installed_outside_the_checkout() -> None:
    """What runs after CI is not CI's business: no link into /usr/local/bin (it ran whatever the
    next checkout held), no `command -v kimi-lsp` fallback."""
    text = _script()
    assert "/usr/local" not in text and "ln -s" not in text
    assert "command -v kimi-lsp" not in text


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")
def test_no_tests_ran_fails_ci() -> None:
    for rc in (5, 1, 2):
        done = _helpers(f"suite bash -c 'exit {rc}'; echo after")
        assert done.returncode == rc and "after" not in done.stdout, (rc, done)
    assert "no tests ran" in _helpers("suite bash -c 'exit 5'").stderr
    ok = _helpers("suite true; echo after")
    assert ok.returncode == 0 and "after" in ok.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")
def test_a_missing_python_is_no_failure() -> None:
    done = _helpers("echo \"[$(find_python 3.99)]\"")
    assert done.returncode == 0 and done.stdout.strip() == "[]", done


def test_every_declared_python_runs_the_suite() -> None:
    """requires-python >= 3.10: the floors on 3.10, the main run, 3.12 and 3.13 each in a venv of
    its own (ignored by git), the plain start-up path, every pytest run through ``suite``."""
    text = _script()
    assert 'find_python 3.10' in text
    assert re.search(r"^for version in 3\.12 3\.13; do$", text, re.M)
    assert "suite env KIMI_LSP_PLAIN_STARTUP=1 python -m pytest" in text
    assert "python -m mypy" in text
    runs = [line for line in text.splitlines() if "-m pytest" in line and not line.lstrip().startswith("#")]
    assert len(runs) == 4 and all(line.startswith("  suite ") or line.startswith("suite ") for line in runs), runs
    assert all("-p no:cacheprovider" in line for line in runs[1:]), runs  # (the first is the README's)
    ignored = (ROOT / ".gitignore").read_text("utf-8").split()
    assert "/.venv-312/" in ignored and "/.venv-313/" in ignored
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    assert 'requires-python = ">=3.10"' in pyproject  # (a new floor changes the versions above)
