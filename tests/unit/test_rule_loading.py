"""The rule modules are loaded from their bytecode (rules/__init__.py ``_load``) as import loads them.

``_load`` reads each rule module's ``__pycache__`` file itself instead of going through importlib
(~2 ms of every one-file check). The modules it makes must be the ones ``import`` would make, and
a missing, stale or foreign bytecode file must only mean importing the usual way.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import kimi_lsp.rules as rules

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import json, sys
import kimi_lsp.rules as r
out = []
for i, name in enumerate(r._MODULES):
    full = "kimi_lsp.rules." + name
    m = sys.modules[full]
    out.append({"name": name, "spec": m.__spec__.name, "origin": m.__spec__.origin, "file": m.__file__,
                "package": m.__package__, "attr": getattr(r, name) is m, "rule": r.LAUNCH_RULES[i].code,
                "code_file": next((f.__code__.co_filename for f in vars(m).values()
                                   if getattr(f, "__module__", None) == full and hasattr(f, "__code__")), None)})
print(json.dumps(out))
"""


def _probe(server: Path, env_extra: dict[str, str] | None = None) -> list[dict[str, object]]:
    env = {"PYTHONPATH": str(server), "PATH": "", **(env_extra or {})}
    r = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, check=True)
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def test_every_rule_file_is_registered_once_in_order() -> None:
    files = sorted(p.stem for p in Path(rules.__file__).parent.glob("kl*.py"))
    assert list(rules._MODULES) == files  # the explicit list is the files, in code order
    assert [r.code for r in rules.LAUNCH_RULES] == sorted(r.code for r in rules.LAUNCH_RULES)


def test_modules_read_from_bytecode_are_set_up_as_import_sets_them_up(tmp_path: Path) -> None:
    server = tmp_path / "server"
    shutil.copytree(ROOT / "server" / "kimi_lsp", server / "kimi_lsp", ignore=shutil.ignore_patterns("__pycache__"))
    first = _probe(server)  # no bytecode yet: imported the usual way, which writes it
    assert (server / "kimi_lsp" / "rules" / "__pycache__").is_dir()
    second = _probe(server)  # now read from the bytecode
    assert first == second
    for m in second:
        path = str(server / "kimi_lsp" / "rules" / f"{m['name']}.py")
        assert m["spec"] == f"kimi_lsp.rules.{m['name']}" and m["origin"] == m["file"] == path
        assert m["package"] == "kimi_lsp.rules" and m["attr"] is True
        assert m["code_file"] in (None, path)  # the file name the bytecode's functions report
    assert sum(m["code_file"] is not None for m in second) > 10


def test_stale_or_broken_bytecode_is_not_run(tmp_path: Path) -> None:
    server = tmp_path / "server"
    shutil.copytree(ROOT / "server" / "kimi_lsp", server / "kimi_lsp", ignore=shutil.ignore_patterns("__pycache__"))
    _probe(server)
    cache = server / "kimi_lsp" / "rules" / "__pycache__"
    kl101 = next(cache.glob("kl101_*.pyc"))
    kl102 = next(cache.glob("kl102_*.pyc"))
    kl101.write_bytes(kl101.read_bytes()[:8] + b"\0\0\0\0" + kl101.read_bytes()[12:])  # another mtime
    kl102.write_bytes(b"\0" * 40)  # another interpreter's, or garbage
    src = server / "kimi_lsp" / "rules" / "kl103_k3_dcp_decode_backend.py"
    src.write_text(src.read_text("utf-8").replace('name="k3-dcp-decode-backend"', 'name="k3-dcp-decode-backend-edited"'),
                   "utf-8")  # a changed source: its bytecode no longer matches its size
    code = ("import kimi_lsp.rules as r; print(r.BY_CODE['KL103'].name, r.BY_CODE['KL101'].code, r.BY_CODE['KL102'].code)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(server), "PATH": ""}).stdout.split()
    assert out == ["k3-dcp-decode-backend-edited", "KL101", "KL102"]
