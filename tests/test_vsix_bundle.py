"""The VS Code extension's bundled server (vscode-extension/scripts/bundle_server.py), offline:
its pins cover pyproject.toml's dependencies, the PyYAML sdist becomes a pure wheel, and the
closure check catches a missing or unneeded wheel. (Downloading and the real bundle are exercised by
vscode-extension/ci.sh and its end-to-end test.)"""
from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import json
import sys
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Callable

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bundle_server() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bundle_server", ROOT / "vscode-extension" / "scripts" / "bundle_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bundle_server"] = module
    spec.loader.exec_module(module)
    return module


bs = _bundle_server()


def _pyproject_dependencies() -> list[Requirement]:
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    return [Requirement(r) for r in tomllib.loads(text)["project"]["dependencies"]]


def test_the_bundle_pins_every_runtime_dependency_at_an_allowed_version() -> None:
    pins = {canonicalize_name(n): v for n, v, h in bs.read_pins()}
    assert all(h.startswith("sha256:") for _, _, h in bs.read_pins()), "every pin carries its hash"
    for req in _pyproject_dependencies():
        name = canonicalize_name(req.name)
        assert name in pins, f"pyproject.toml needs {req}, bundled/requirements.txt lacks it"
        assert req.specifier.contains(pins[name], prereleases=True), f"{req}: the bundle pins {pins[name]}"


def _sdist(tmp: Path) -> Path:
    path = tmp / "PyYAML-6.0.4.tar.gz"
    files = {
        "pyyaml-6.0.4/PKG-INFO": b"Metadata-Version: 2.1\nName: PyYAML\nVersion: 6.0.4\n",
        "pyyaml-6.0.4/lib/yaml/__init__.py": b"__with_libyaml__ = False\n",
        "pyyaml-6.0.4/lib/yaml/cyaml.py": b"from yaml._yaml import CParser\n",
        "pyyaml-6.0.4/lib/_yaml/__init__.py": b"import yaml\n",
        "pyyaml-6.0.4/lib/PyYAML.egg-info/PKG-INFO": b"x\n",
        "pyyaml-6.0.4/yaml/_yaml.pyx": b"# the C extension's source\n",
    }
    with tarfile.open(path, "w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_pyyaml_is_packed_as_a_pure_wheel_of_its_python_sources(tmp_path: Path) -> None:
    whl = bs.pure_wheel_from_sdist(_sdist(tmp_path), tmp_path)
    assert whl.name == "pyyaml-6.0.4-py3-none-any.whl"
    with zipfile.ZipFile(whl) as zf:
        names = set(zf.namelist())
        assert {"yaml/__init__.py", "yaml/cyaml.py", "_yaml/__init__.py"} <= names
        assert not any(n.endswith((".pyx", ".so", ".c")) or "egg-info" in n for n in names)
        assert b"Tag: py3-none-any" in zf.read("pyyaml-6.0.4.dist-info/WHEEL")
        for line in zf.read("pyyaml-6.0.4.dist-info/RECORD").decode().splitlines():
            path, digest, _size = line.split(",")
            if digest:
                expected = base64.urlsafe_b64encode(hashlib.sha256(zf.read(path)).digest()).rstrip(b"=").decode()
                assert digest == f"sha256={expected}", path
    name, version, _requires, _python, tags = bs.wheel_metadata(whl)
    assert (name, str(version), tags) == ("pyyaml", "6.0.4", "py3-none-any")


def _wheel(tmp: Path, name: str, version: str, requires: tuple[str, ...] = (), tag: str = "py3-none-any") -> Path:
    path = tmp / f"{name.replace('-', '_')}-{version}-{tag}.whl"
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nRequires-Python: >=3.9\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{info}/METADATA", meta)
        zf.writestr(f"{info}/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: {tag}\n")
    return path


def test_the_closure_check_finds_what_some_python_or_os_misses(tmp_path: Path) -> None:
    kimi = _wheel(tmp_path, "kimi-lsp", "0.1.0", ("tomli>=2; python_version < '3.11'", "pywin>=1; sys_platform == 'win32'", "attrs>=25"))
    attrs_old = _wheel(tmp_path, "attrs", "24.1.0")
    unused = _wheel(tmp_path, "six", "1.16.0")
    problems = "\n".join(bs.check_closure([kimi, attrs_old, unused]))
    assert "kimi-lsp needs tomli>=2; python_version < \"3.11\" on Python 3.10" in problems
    assert "not bundled" in problems
    assert "pywin>=1" in problems and "win32" in problems
    assert "bundled attrs 24.1.0" in problems
    assert "six is bundled but no environment needs it" in problems


def test_the_closure_check_passes_a_complete_pure_set_and_refuses_a_platform_wheel(tmp_path: Path) -> None:
    kimi = _wheel(tmp_path, "kimi-lsp", "0.1.0", ("tomli>=2; python_version < '3.11'",))
    tomli = _wheel(tmp_path, "tomli", "2.5.0")
    assert bs.check_closure([kimi, tomli]) == []
    compiled = _wheel(tmp_path / "..", "tomli", "2.5.0", tag="cp310-cp310-manylinux_2_17_x86_64")
    assert any("not pure Python" in p for p in bs.check_closure([kimi, compiled]))


def test_this_python_is_among_the_environments_checked() -> None:
    here = default_environment()
    assert any(env["python_version"] == here["python_version"] for env in bs.environments()) or sys.version_info >= (3, 15)


def test_pyyaml_alone_is_fetched_as_its_sdist_and_its_build_requirements_stay_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--no-binary :all:`` made pip build setuptools and Cython from source (a quarter of an hour
    and a C compiler) only to read PyYAML's metadata; naming PyYAML alone fetches the same sdist.
    The rest must be pure wheels for any Python >= 3.10 on any platform, never this machine's."""
    calls: list[list[str]] = []

    def pip(python: str, *args: str) -> None:
        calls.append(list(args))

    monkeypatch.setattr(bs, "pip", pip)
    bs.download("python3", bs.read_pins(), tmp_path, hashes=True)
    (wheels,) = [c for c in calls if "--only-binary" in c]
    (sdists,) = [c for c in calls if "--no-binary" in c]
    assert sdists[sdists.index("--no-binary") + 1] == "pyyaml"
    assert ":all:" not in sdists and "--require-hashes" in sdists
    assert (tmp_path / "requirements-sdist.txt").read_text().startswith("pyyaml==")
    opts = dict(zip(wheels, wheels[1:]))
    assert (opts["--only-binary"], opts["--platform"], opts["--abi"], opts["--implementation"], opts["--python-version"]) == (":all:", "any", "none", "py", "3.10")
    assert "pyyaml" not in (tmp_path / "requirements-wheel.txt").read_text().lower()
    assert bs.download_format("sdist", ["PyYAML", "Foo.Bar"]) == ["--no-binary", "foo-bar,pyyaml"]


def _repo(tmp: Path) -> Path:
    repo = tmp / "repo"
    (repo / "server" / "pkg" / "__pycache__").mkdir(parents=True)
    (repo / "server" / "pkg.egg-info").mkdir()
    (repo / "server" / "pkg" / "__init__.py").write_text("x = 1\n")
    (repo / "server" / "pkg" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"\0")
    (repo / "server" / "pkg" / "old.pyc").write_bytes(b"\0")
    (repo / "server" / "pkg.egg-info" / "SOURCES.txt").write_text("stale\n")
    (repo / "pyproject.toml").write_text("[project]\n")
    (repo / "README.md").write_text("readme\n")
    (repo / "LICENSE").write_text("license\n")
    (repo / "notes.txt").write_text("not part of the wheel\n")
    return repo


def test_the_wheel_sources_leave_out_bytecode_and_build_leftovers(tmp_path: Path) -> None:
    files = {p.as_posix() for p in bs.source_files(_repo(tmp_path))}
    assert files == {"LICENSE", "README.md", "pyproject.toml", "server/pkg/__init__.py"}


def test_reuse_keeps_bundled_libs_only_when_built_from_the_same_inputs_and_untouched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, libs, inputs = _repo(tmp_path), tmp_path / "libs", tmp_path / ".libs-inputs"
    monkeypatch.setattr(bs, "REPO", repo)
    monkeypatch.setattr(bs, "LIBS", libs)
    monkeypatch.setattr(bs, "INPUTS", inputs)
    libs.mkdir()
    (libs / "kimi_lsp-0.1.0-py3-none-any.whl").write_bytes(b"wheel")
    builds: list[str] = []

    def build(python: str) -> int:
        builds.append(python)
        return 0

    monkeypatch.setattr(bs, "build", build)

    def noted() -> None:
        inputs.write_text(json.dumps({"inputs": bs.inputs_digest(), "wheels": bs.libs_state()}))

    assert bs.main(["--reuse", "--python", "py"]) == 0 and builds == ["py"], "nothing noted: built"
    noted()
    assert bs.is_current() and bs.main(["--reuse"]) == 0 and len(builds) == 1, "current: kept"
    assert bs.main([]) == 0 and len(builds) == 2, "without --reuse: always built"
    changes: tuple[Callable[[], object], ...] = (
        lambda: (repo / "server" / "pkg" / "__init__.py").write_text("x = 2\n"),  # a source
        lambda: (repo / "server" / "pkg" / "new.py").write_text(""),  # a new module
        lambda: (libs / "kimi_lsp-0.1.0-py3-none-any.whl").write_bytes(b"other"),  # a wheel edited
        lambda: (libs / "extra-1.0-py3-none-any.whl").write_bytes(b""),  # a wheel added
        lambda: inputs.write_text("{not json"),
    )
    for change in changes:
        noted()
        change()
        assert not bs.is_current()
    noted()
    (repo / "server" / "pkg" / "__pycache__" / "x.pyc").write_bytes(b"1")  # bytecode is not an input
    assert bs.is_current()
