"""The package's bytecode is read from one kept file (``kimi_lsp/_imports.py``) as import reads it.

A one-file check imports ~100 of the package's modules; the kept file spares each one importlib's
finders and the system calls of its ``.pyc`` (~4 ms a run). A module it serves must be the module
``import`` would make, and anything the file cannot vouch for (a changed source, a damaged or
foreign file, a package path of another shape) must only mean importing the usual way.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Every module of the package a check imports, as its attributes say it was set up.
_PROBE = """
import io, json, os, sys
if os.environ.get("PROBE_DIRECT"):  # what the console script does for the short commands
    import kimi_lsp._imports
    kimi_lsp._imports.use_direct_imports()
from kimi_lsp.cli.main import main
out, sys.stdout = sys.stdout, io.StringIO()
main(["--check", "-q", "--no-cache", sys.argv[1]])
sys.stdout = out
mods = {}
for name, m in sorted(sys.modules.items()):
    if not name.startswith("kimi_lsp."):
        continue
    funcs = [f for f in vars(m).values() if getattr(f, "__module__", None) == name and hasattr(f, "__code__")]
    mods[name] = {"loader": type(m.__loader__).__name__, "spec": m.__spec__.name, "origin": m.__spec__.origin,
                  "cached": m.__spec__.cached, "file": m.__file__, "cached_attr": m.__cached__,
                  "package": m.__package__, "path": getattr(m, "__path__", None),
                  "loader_is_spec_loader": m.__loader__ is m.__spec__.loader,
                  "code_files": sorted({f.__code__.co_filename for f in funcs})}
import kimi_lsp.rules as r
# each module is its parent's attribute, and ran once: the classes every module sees are the same
alone = [n for n, m in sys.modules.items() if n.startswith("kimi_lsp.")
         and getattr(sys.modules[n.rpartition(".")[0]], n.rpartition(".")[2], None) is not m]
from kimi_lsp.surfaces import model, Entry
print(json.dumps({"modules": mods, "rules": [x.code for x in r.LAUNCH_RULES], "alone": alone,
                  "one_entry": Entry is model.Entry,
                  "kl103": r.BY_CODE["KL103"].name, "urllib": "urllib.parse" in sys.modules}))
"""


@pytest.fixture
def server(tmp_path: Path) -> Path:
    """A copy of the package with no bytecode yet, and a launch to check with it."""
    shutil.copytree(ROOT / "server" / "kimi_lsp", tmp_path / "server" / "kimi_lsp",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "examples" / "k3-serving", tmp_path / "project")
    return tmp_path / "server"


def _env(server: Path, **env: str) -> dict[str, str]:
    """A child's environment: the copy's package, its own cache directory (where the kept files
    live), no PYTHONDONTWRITEBYTECODE unless asked."""
    return {"PYTHONPATH": str(server), "PATH": "", "KIMI_LSP_CACHE_DIR": str(server.parent / "cache"), **env}


def _probe(server: Path, **env: str) -> dict[str, Any]:
    e = _env(server, **env)
    r = subprocess.run([sys.executable, "-c", _PROBE, "deploy/k3-dcp.yaml"], capture_output=True, text=True, env=e,
                       cwd=server.parent / "project")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def _kept(server: Path, level: int = 0) -> Path:
    """The kept bytecode file of the copy's normal (``-O`` ``level``) runs, in its cache directory."""
    found = sorted((server.parent / "cache" / "kept").glob(f"*-{sys.implementation.cache_tag}-O{level}-*"))
    assert len(found) <= 1, found
    return (found[0] if found else server.parent / "cache" / "kept" / "none") / "imports.marshal"


def _loaders(probe: dict[str, object]) -> dict[str, str]:
    return {name: m["loader"] for name, m in probe["modules"].items()}  # type: ignore[attr-defined]


# What only a run that makes the kept knowledge tables (knowledge/_compiled.py: the first run
# after an install) loads: the module that builds a schema's kept form from the store.
_MADE_ONCE = {"kimi_lsp.knowledge._schema_store"}


def _without_loader(probe: dict[str, object]) -> dict[str, object]:
    """Each module's set-up, but its loader; the modules of ``_MADE_ONCE`` left out."""
    return {name: {k: v for k, v in m.items() if k != "loader"}  # type: ignore[attr-defined]
            for name, m in probe["modules"].items() if name not in _MADE_ONCE}  # type: ignore[attr-defined]


def test_a_second_run_reads_every_module_from_the_kept_file_set_up_as_import_sets_it_up(server: Path) -> None:
    first = _probe(server)  # no bytecode yet: the usual import, which writes the .pyc files; kept at exit
    assert _kept(server).is_file()
    assert set(_loaders(first).values()) == {"SourceFileLoader"}
    second = _probe(server)
    served = {n for n, loader in _loaders(second).items() if loader == "_Loader"}
    # all but the two modules imported before the finder is installed (_imports and the _kept it reads with)
    assert set(_loaders(second)) - served == {"kimi_lsp._imports", "kimi_lsp._kept"}
    assert len(served) > 80 and {"kimi_lsp.engine", "kimi_lsp.rules", "kimi_lsp.rules.kl101_flashinfer_lacks_enable_dcp"} <= served
    assert set(first["modules"]) - set(second["modules"]) == _MADE_ONCE  # type: ignore[call-overload]
    assert _without_loader(second) == _without_loader(first)  # file, spec, cached, package, __path__, code
    before = _kept(server).stat()
    _probe(server)  # nothing new was imported: the file is left alone
    after = _kept(server).stat()
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (before.st_ino, before.st_mtime_ns, before.st_size)
    from kimi_lsp.rules import LAUNCH_RULES  # (the registry as this process reads it: no count written here)

    assert second["rules"] == first["rules"] == [x.code for x in LAUNCH_RULES]
    mod = second["modules"]["kimi_lsp.rules"]  # type: ignore[index]
    assert mod["path"] == [str(server / "kimi_lsp" / "rules")] and mod["package"] == "kimi_lsp.rules"
    assert second["modules"]["kimi_lsp.engine"]["code_files"] == [str(server / "kimi_lsp" / "engine.py")]  # type: ignore[index]


def test_a_changed_source_is_imported_the_usual_way_and_kept_again(server: Path) -> None:
    _probe(server)
    src = server / "kimi_lsp" / "rules" / "kl103_k3_dcp_decode_backend.py"
    src.write_text(src.read_text("utf-8").replace('name="k3-dcp-decode-backend"', 'name="k3-dcp-decode-backend-edited"'),
                   "utf-8")  # another size: its kept entry (and its .pyc) no longer match
    edited = _probe(server)
    assert edited["kl103"] == "k3-dcp-decode-backend-edited"
    assert _loaders(edited)["kimi_lsp.rules.kl103_k3_dcp_decode_backend"] == "SourceFileLoader"
    assert _loaders(edited)["kimi_lsp.rules.kl101_flashinfer_lacks_enable_dcp"] == "_Loader"
    again = _probe(server)  # the run above kept the new bytecode
    assert again["kl103"] == "k3-dcp-decode-backend-edited"
    assert _loaders(again)["kimi_lsp.rules.kl103_k3_dcp_decode_backend"] == "_Loader"


def test_a_deleted_module_is_not_served_from_the_kept_file(server: Path) -> None:
    _probe(server)
    (server / "kimi_lsp" / "rules" / "kl330_invalid_log_level.py").unlink()
    code = "import kimi_lsp.rules.kl330_invalid_log_level"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(server))
    assert r.returncode == 1 and "ModuleNotFoundError" in r.stderr  # (its .pyc alone is not imported either)


def _rot(data: bytes, seed: int) -> bytes:
    """``data`` with 1-4 bytes of its second half (the modules' bytecode) changed, as bit rot or a
    torn write would (the red team's k5)."""
    import random

    rnd, out = random.Random(seed), bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        at = rnd.randrange(len(out) // 2, len(out))
        out[at] ^= rnd.randrange(1, 256)
    return bytes(out)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "another format", "rot 1", "rot 2", "rot 3"])
def test_a_damaged_or_foreign_kept_file_means_the_usual_import(server: Path, damage: str) -> None:
    """Each module's bytes carry a CRC checked before they are decoded: a damaged entry is the
    usual import, never a traceback, a crash or another module."""
    first = _probe(server)
    kept = _kept(server)
    data = kept.read_bytes()
    kept.write_bytes({"garbage": os.urandom(4096), "truncated": data[:len(data) // 3], "empty": b"",
                      "another format": b"\0\0\r\n" + data[4:], "rot 1": _rot(data, 1), "rot 2": _rot(data, 2),
                      "rot 3": _rot(data, 3)}[damage])
    second = _probe(server)
    assert second["rules"] == first["rules"] and _without_loader(second) == _without_loader(first)
    assert _probe(server)["rules"] == first["rules"]


def test_no_kept_file_is_written_where_bytecode_is_not(server: Path) -> None:
    _probe(server, PYTHONDONTWRITEBYTECODE="1")
    assert not _kept(server).exists() and not (_kept(server).parent / "_record_init.marshal").exists()


def _package_files(server: Path) -> set[str]:
    return {str(p.relative_to(server)) for p in server.rglob("*")}


@pytest.mark.parametrize("env", [{}, {"PYTHONDONTWRITEBYTECODE": "1"}, {"PYTHONPYCACHEPREFIX": "pycache"},
                                 {"PYTHONOPTIMIZE": "2"}])
def test_nothing_kept_is_written_into_the_package(server: Path, env: dict[str, str]) -> None:
    """What is kept between runs lives in the user's cache directory: a run adds nothing to the
    installed package but the ``.pyc`` files CPython itself writes (none under -B or with a
    PYTHONPYCACHEPREFIX), so ``pip uninstall`` leaves nothing behind (the red team's k4)."""
    before = _package_files(server)
    env = {k: str(server.parent / v) if k == "PYTHONPYCACHEPREFIX" else v for k, v in env.items()}
    for _ in range(2):
        _probe(server, **env)
    added = _package_files(server) - before
    if env and "PYTHONOPTIMIZE" not in env:
        assert added == set()
    else:
        assert added and all((p.endswith(".pyc") and "/__pycache__/" in f"/{p}") or p.endswith("/__pycache__")
                             for p in added), added
    assert not [p for p in added if p.endswith(".marshal")]


def test_an_optimised_run_keeps_its_bytecode_apart(server: Path) -> None:
    """A -OO run (no docstrings, no asserts) keeps its bytecode in a file of its own level: a
    normal run after it still gets the modules' docstrings (the red team's k1)."""
    doc = ("import kimi_lsp.engine as e, kimi_lsp.cli.main as r; "
           "print(type(e.__loader__).__name__, e.__doc__ is not None, r.__doc__ is not None)")
    _probe(server, PYTHONOPTIMIZE="2")
    _probe(server, PYTHONOPTIMIZE="2")
    assert _kept(server, 2).is_file() and not _kept(server).exists()
    for _ in range(2):
        _probe(server)
    r = subprocess.run([sys.executable, "-c", doc], capture_output=True, text=True, env=_env(server))
    assert r.stdout.split() == ["_Loader", "True", "True"], r.stderr
    r = subprocess.run([sys.executable, "-OO", "-c", doc], capture_output=True, text=True, env=_env(server))
    assert r.stdout.split() == ["_Loader", "False", "False"], r.stderr


def test_a_package_path_of_another_shape_is_left_to_importlib(server: Path) -> None:
    _probe(server)
    code = ("import kimi_lsp, kimi_lsp._imports as i; "
            "print(i._Finder.find_spec('kimi_lsp.engine', ['/elsewhere']), "
            "i._Finder.find_spec('kimi_lsp.engine', kimi_lsp.__path__).loader.__class__.__name__, "
            "i._Finder.find_spec('kimi_lsp.no_such_module', kimi_lsp.__path__))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(server))
    assert r.stdout.split() == ["None", "_Loader", "None"], r.stderr


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="pathlib imports urllib.parse only in as_uri since 3.13")
def test_pathlib_comes_without_urllib_and_as_uri_still_works(server: Path) -> None:
    assert _probe(server)["urllib"] is False
    code = ("import sys, kimi_lsp; from pathlib import Path; assert 'urllib.parse' not in sys.modules; "
            "print(Path('/a b/c').as_uri()); import urllib.parse; print(urllib.parse.urlsplit('http://h/p').netloc, "
            "urllib.parse.quote_from_bytes(b'a b'), sys.modules['urllib'].parse is urllib.parse)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(server))
    assert r.stdout.split() == ["file:///a%20b/c", "h", "a%20b", "True"], r.stderr


def test_direct_imports_make_the_modules_import_makes(server: Path) -> None:
    """The short commands import the package's modules straight from the kept file
    (``use_direct_imports``): the same module objects, attributes and code as importlib's, each
    run once, and a parent package whose ``__init__`` imports the child first."""
    first = _probe(server)  # the usual import; the file is kept at exit
    direct = _probe(server, PROBE_DIRECT="1")
    assert set(_loaders(direct).values()) == {"_Loader"} | ({"SourceFileLoader"} & set(_loaders(first).values()))
    assert {n for n, loader in _loaders(direct).items() if loader != "_Loader"} == {"kimi_lsp._imports", "kimi_lsp._kept"}
    assert _without_loader(direct) == _without_loader(first)
    assert direct["alone"] == [] and direct["one_entry"] is True
    assert direct["rules"] == first["rules"]


def test_direct_imports_change_no_diagnostic(server: Path) -> None:
    """The console script's path (direct imports from the kept file) and importlib's give the same
    JSON on every fixture project, from a fresh process each."""
    fixtures = ROOT / "tests" / "fixtures"
    run = ("import sys; from kimi_lsp.cli.main import {0}; sys.argv[0] = 'kimi-lsp'; "
           "sys.exit({0}() if '{0}' == 'main' else {0}())")
    args = ["--check", "--format", "json", "--no-cache", "--jobs", "1", "."]
    env = _env(server)
    subprocess.run([sys.executable, "-c", run.format("main"), *args], cwd=fixtures, capture_output=True, env=env)
    assert _kept(server).is_file()  # the first run kept every module it imported
    plain = subprocess.run([sys.executable, "-c", run.format("main"), *args], cwd=fixtures, capture_output=True,
                           text=True, env=env)
    direct = subprocess.run([sys.executable, "-c", run.format("entry"), *args], cwd=fixtures, capture_output=True,
                            text=True, env=env)
    assert plain.returncode == direct.returncode == 1, (plain.stderr, direct.stderr)
    assert json.loads(direct.stdout)["diagnostics"] == json.loads(plain.stdout)["diagnostics"]
    assert len(json.loads(plain.stdout)["diagnostics"]) > 200
    # KIMI_LSP_PLAIN_STARTUP=1: no interpreter internals (no kept bytecode, no direct imports, no
    # kept regex programs), the console script's path: the same answers
    forced = subprocess.run([sys.executable, "-c", run.format("entry"), *args], cwd=fixtures, capture_output=True,
                            text=True, env=_env(server, KIMI_LSP_PLAIN_STARTUP="1"))
    assert forced.returncode == 1, forced.stderr
    assert json.loads(forced.stdout)["diagnostics"] == json.loads(plain.stdout)["diagnostics"]


_PLAIN_PROBE = """
import builtins, sys
orig_import = builtins.__import__
from kimi_lsp import _imports, _kept, _regex
from kimi_lsp.cli import main
main._leave = lambda code: None
sys.argv = ["kimi-lsp", "--check", "--no-cache", "-q", sys.argv[1]]
main.entry()
loaders = {type(m.__loader__).__name__ for n, m in sys.modules.items() if n.startswith("kimi_lsp.")}
print(_kept.FAST, _regex._TAG is None, builtins.__import__ is orig_import, sorted(loaders),
      any(f is _imports._Finder for f in sys.meta_path))
"""


@pytest.mark.parametrize("how", ["switch", "untested interpreter"])
def test_the_plain_path_uses_no_interpreter_internals(server: Path, how: str) -> None:
    """Under KIMI_LSP_PLAIN_STARTUP=1, and on an interpreter the fast path was not tested on, the
    package imports the usual way: no finder, no kept bytecode, ``__import__`` untouched, the
    regular expressions compiled by ``re``."""
    _probe(server)  # a kept file exists: the plain path must not read it
    code = _PLAIN_PROBE
    env = _env(server)
    if how == "switch":
        env["KIMI_LSP_PLAIN_STARTUP"] = "1"
    else:
        code = "import sys; sys.version_info = (3, 99, 0, 'final', 0)\n" + code
    r = subprocess.run([sys.executable, "-c", code, "deploy/k3-dcp.yaml"], capture_output=True, text=True, env=env,
                       cwd=server.parent / "project")
    assert r.stdout.split("\n")[-2] == "False True True ['SourceFileLoader'] False", r.stdout + r.stderr


def test_a_zipapp_runs_from_its_archive(server: Path) -> None:
    """The package zipped (``python -m zipapp``): the data files are read through its loader and
    the answers are the directory install's (kept tables cannot key on files that are no files,
    so it decodes each run)."""
    import zipapp

    app = server.parent / "kimi.pyz"
    zipapp.create_archive(server, app, main="kimi_lsp.cli.main:entry")
    args = ["--check", "--format", "json", "--no-cache", "deploy/k3-dcp.yaml"]
    cwd = server.parent / "project"
    zipped = subprocess.run([sys.executable, str(app), *args], capture_output=True, text=True, cwd=cwd,
                            env={"PATH": "", "KIMI_LSP_CACHE_DIR": str(server.parent / "cache")})
    plain = subprocess.run([sys.executable, "-c", "from kimi_lsp.cli.main import entry; entry()", *args],
                           capture_output=True, text=True, cwd=cwd, env=_env(server))
    assert zipped.returncode == plain.returncode == 1, zipped.stderr[-2000:]
    assert json.loads(zipped.stdout) == json.loads(plain.stdout)


def _others_can_run(path: str) -> bool:
    real = Path(os.path.realpath(path))
    return all(p.stat().st_mode & 0o001 for p in [real, *real.parents])


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="another user needs root")
def test_a_read_only_install_run_by_another_user_keeps_its_state_in_that_users_cache() -> None:
    """An install owned by root, read-only, with the ``.pyc`` files pip compiles: another user's
    runs work, write nothing into it, and the second is served from that user's kept file."""
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="kimi-ro-"))
    try:
        top.chmod(0o755)
        shutil.copytree(ROOT / "server" / "kimi_lsp", top / "site" / "kimi_lsp",
                        ignore=shutil.ignore_patterns("__pycache__"))
        # the other user may not reach this interpreter (a pyenv under /root): the system's, with
        # a copy of PyYAML beside the package
        python = sys.executable if _others_can_run(sys.executable) else shutil.which("python3", path="/usr/bin")
        if python is None:
            pytest.skip("no interpreter another user can run")
        import yaml

        shutil.copytree(Path(yaml.__file__).parent, top / "site" / "yaml", ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run([python, "-m", "compileall", "-q", str(top / "site")], check=True, capture_output=True)
        shutil.copytree(ROOT / "examples" / "k3-serving", top / "project")
        for p in [top / "site", *(top / "site").rglob("*"), top / "project", *(top / "project").rglob("*")]:
            p.chmod(0o555 if p.is_dir() else 0o444)
        home = top / "home"
        home.mkdir()
        os.chown(home, 1000, 1000)
        before = {str(p) for p in (top / "site").rglob("*")}
        env = {"PYTHONPATH": str(top / "site"), "PATH": "", "HOME": str(home)}
        runs = [subprocess.run([python, "-c", _PROBE, "deploy/k3-dcp.yaml"], capture_output=True, text=True,
                               env=env, cwd=top / "project", user=1000, group=1000, extra_groups=[])
                for _ in range(2)]
        assert all(r.returncode == 0 for r in runs), runs[-1].stderr[-2000:]
        first, second = (json.loads(r.stdout) for r in runs)
        assert second["rules"] == first["rules"]
        assert "_Loader" in _loaders(second).values()
        assert {str(p) for p in (top / "site").rglob("*")} == before
        assert list((home / ".cache" / "kimi-lsp" / "kept").iterdir())
    finally:
        for p in [top, *top.rglob("*")]:
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
        shutil.rmtree(top)
