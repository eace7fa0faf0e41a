#!/usr/bin/env python3
"""Build the server the .vsix bundles: ``bundled/libs/*.whl``, pure-Python wheels of kimi-lsp and
of every package it needs at run time, for any Python >= 3.10 on any OS and architecture.

    python scripts/bundle_server.py            # build bundled/libs (needs the package registry)
    python scripts/bundle_server.py --reuse    # the same, unless bundled/libs is current
    python scripts/bundle_server.py --relock   # rewrite bundled/requirements.txt's hashes

``npm run package`` runs it with ``--reuse`` (scripts/bundle-server.js picks the Python), so one
command builds the .vsix; ``--reuse`` keeps bundled/libs when ``bundled/.libs-inputs`` says it was
built from the same inputs (this script, the pins, the package's sources) and its wheels still
have the hashes noted then.

- kimi-lsp: ``pip wheel --no-deps`` of this repository (``..``).
- its dependencies: exactly ``bundled/requirements.txt`` (pinned, hash-checked), as
  ``py3-none-any`` wheels. PyYAML publishes only platform wheels, so its sdist is downloaded and
  its Python sources (``lib/yaml``, ``lib/_yaml``) are packed as a pure wheel: ``yaml`` imports
  without its C extension (``__with_libyaml__`` is False) and kimi-lsp takes ``SafeLoader``. That
  is what keeps the .vsix one file for every Python >= 3.10 on every OS: a platform wheel of PyYAML
  would run on one. Only the sdist packages are named to ``--no-binary``: ``:all:`` would also make
  pip build PyYAML's build requirements (setuptools, Cython) from source to read its metadata,
  which takes a quarter of an hour and a C compiler for the same sdist.

Then the set is checked against the wheels' own metadata: for Python 3.10 to 3.14 on Linux, macOS
and Windows, every ``Requires-Dist`` reachable from kimi-lsp (markers evaluated, no extras) is in
the bundle at an allowed version, every wheel is pure and allows Python 3.10, and nothing in the
bundle is needed nowhere. Downloads happen here, at build time; the extension never installs.
"""
from __future__ import annotations

import argparse
import base64
import csv
import email.parser
import fnmatch
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

try:
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet
    from packaging.utils import canonicalize_name
    from packaging.version import Version
except ImportError:  # a Python with pip but not packaging (npm run package takes python3 from PATH)
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[assignment]
    from pip._vendor.packaging.specifiers import SpecifierSet  # type: ignore[assignment]
    from pip._vendor.packaging.utils import canonicalize_name  # type: ignore[assignment]
    from pip._vendor.packaging.version import Version  # type: ignore[assignment]

EXT = Path(__file__).resolve().parents[1]
REPO = EXT.parent
REQUIREMENTS = EXT / "bundled" / "requirements.txt"
LIBS = EXT / "bundled" / "libs"
INPUTS = EXT / "bundled" / ".libs-inputs"  # what bundled/libs was built from (for --reuse)
SDIST_ONLY = {"pyyaml"}  # no pure wheel published: packed from the sdist's Python sources
PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")
PLATFORMS = {  # sys_platform: (platform_system, os_name, machines)
    "linux": ("Linux", "posix", ("x86_64", "aarch64")),
    "darwin": ("Darwin", "posix", ("arm64", "x86_64")),
    "win32": ("Windows", "nt", ("AMD64", "ARM64")),
}
BINARY_SUFFIXES = (".so", ".pyd", ".dylib", ".dll")
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # reproducible archives


def pip(python: str, *args: str) -> None:
    cmd = [python, "-m", "pip", *args]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def read_pins(path: Path = REQUIREMENTS) -> list[tuple[str, str, str]]:
    """(name, version, 'sha256:…') per line of the requirements file."""
    pins = []
    for raw in path.read_text("utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)(?:\s+--hash=(sha256:[0-9a-f]{64}))?", line)
        if not m:
            raise SystemExit(f"{path}: not an exact pin: {raw!r}")
        pins.append((m.group(1), m.group(2), m.group(3) or ""))
    return pins


def download_format(kind: str, names: list[str]) -> list[str]:
    """pip download's options for a group: pure wheels for any Python >= 3.10 on any platform, or
    the sdists of ``names`` (and of nothing else: their build requirements stay wheels)."""
    if kind == "wheel":
        return ["--only-binary", ":all:", "--platform", "any", "--python-version", "3.10", "--implementation", "py", "--abi", "none"]
    return ["--no-binary", ",".join(sorted(canonicalize_name(n) for n in names))]


def download(python: str, pins: list[tuple[str, str, str]], dest: Path, *, hashes: bool) -> None:
    groups = {"wheel": [p for p in pins if canonicalize_name(p[0]) not in SDIST_ONLY],
              "sdist": [p for p in pins if canonicalize_name(p[0]) in SDIST_ONLY]}
    for kind, group in groups.items():
        if not group:
            continue
        req = dest / f"requirements-{kind}.txt"
        req.write_text("".join(f"{n}=={v}" + (f" --hash={h}" if hashes else "") + "\n" for n, v, h in group), "utf-8")
        fmt = download_format(kind, [n for n, _, _ in group])
        pip(python, "download", "-q", "--no-deps", *(["--require-hashes"] if hashes else []), *fmt, "-r", str(req), "-d", str(dest))


def sha256_record(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def pure_wheel_from_sdist(sdist: Path, dest: Path) -> Path:
    """A py3-none-any wheel of the sdist's ``lib/<package>`` Python sources (PyYAML's layout)."""
    with tarfile.open(sdist) as tf:
        members = {m.name: m for m in tf.getmembers() if m.isfile()}
        top = next(iter(members)).split("/", 1)[0]
        pkg_info = tf.extractfile(members[f"{top}/PKG-INFO"]).read()  # type: ignore[union-attr]
        meta = email.parser.BytesParser().parsebytes(pkg_info)
        name, version = canonicalize_name(meta["Name"]).replace("-", "_"), meta["Version"]
        files: dict[str, bytes] = {}
        for path, m in sorted(members.items()):
            rel = path[len(top) + 1:]
            if rel.startswith("lib/") and rel.endswith(".py") and "egg-info" not in rel:
                files[rel[len("lib/"):]] = tf.extractfile(m).read()  # type: ignore[union-attr]
    if not any(p.endswith("/__init__.py") for p in files):
        raise SystemExit(f"{sdist.name}: no Python package under lib/")
    info = f"{name}-{version}.dist-info"
    files[f"{info}/METADATA"] = pkg_info
    files[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: kimi-lsp scripts/bundle_server.py\n"
                              b"Root-Is-Purelib: true\nTag: py3-none-any\n")
    files[f"{info}/top_level.txt"] = "".join(sorted({p.split("/")[0] + "\n" for p in files if "/" in p and not p.startswith(info)})).encode()
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for path, data in files.items():
        writer.writerow([path, sha256_record(data), len(data)])
    writer.writerow([f"{info}/RECORD", "", ""])
    files[f"{info}/RECORD"] = record.getvalue().encode()
    out = dest / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files.items():
            zi = zipfile.ZipInfo(path, ZIP_DATE)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o644 << 16
            zf.writestr(zi, data)
    return out


def wheel_metadata(whl: Path) -> tuple[str, Version, list[str], str, str]:
    """(canonical name, version, Requires-Dist lines, Requires-Python, WHEEL tags) of a wheel."""
    with zipfile.ZipFile(whl) as zf:
        names = zf.namelist()
        binaries = [n for n in names if n.endswith(BINARY_SUFFIXES)]
        if binaries:
            raise SystemExit(f"{whl.name}: not pure Python: {', '.join(binaries)}")
        meta_path = next(n for n in names if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        meta = email.parser.BytesParser().parsebytes(zf.read(meta_path))
        wheel = email.parser.BytesParser().parsebytes(zf.read(meta_path.replace("METADATA", "WHEEL")))
    tags = ",".join(wheel.get_all("Tag") or [])
    return canonicalize_name(meta["Name"]), Version(meta["Version"]), meta.get_all("Requires-Dist") or [], meta.get("Requires-Python", ""), tags


def environments() -> list[dict[str, str]]:
    envs = []
    for py in PYTHONS:
        for plat, (system, os_name, machines) in PLATFORMS.items():
            for machine in machines:
                envs.append({"python_version": py, "python_full_version": f"{py}.0", "sys_platform": plat,
                             "platform_system": system, "os_name": os_name, "platform_machine": machine,
                             "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""})
    return envs


def check_closure(wheels: list[Path]) -> list[str]:
    """Problems with the bundle as the wheels' own metadata sees it (empty: it is complete)."""
    info = {}
    problems = []
    for whl in wheels:
        name, version, requires, requires_python, tags = wheel_metadata(whl)
        if not tags or not all(t.strip().endswith("-none-any") for t in tags.split(",")):
            problems.append(f"{whl.name}: tagged {tags}, not pure Python")
        if requires_python and not SpecifierSet(requires_python).contains("3.10.0"):
            problems.append(f"{whl.name}: Requires-Python {requires_python} excludes 3.10")
        info[name] = (version, [Requirement(r) for r in requires])
    if "kimi-lsp" not in info:
        return problems + ["no kimi-lsp wheel"]
    used: set[str] = set()
    for env in environments():
        todo, seen = ["kimi-lsp"], set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for req in info[name][1]:
                if req.marker is not None and not req.marker.evaluate(env):
                    continue
                dep = canonicalize_name(req.name)
                where = f"{name} needs {req} on Python {env['python_version']} {env['sys_platform']}/{env['platform_machine']}"
                if dep not in info:
                    problems.append(f"{where}: not bundled")
                    continue
                if not req.specifier.contains(info[dep][0], prereleases=True):
                    problems.append(f"{where}: bundled {dep} {info[dep][0]}")
                todo.append(dep)
        used |= seen
    for name in sorted(set(info) - used):
        problems.append(f"{name} is bundled but no environment needs it")
    return sorted(set(problems))


SOURCE_IGNORED = ("__pycache__", "*.pyc", "*.egg-info")


def source_files(repo: Path | None = None) -> list[Path]:
    """The files the kimi-lsp wheel is built from (relative to ``repo``, default this repository):
    its metadata files and ``server/`` without bytecode and build leftovers."""
    repo = repo or REPO
    files = [Path(n) for n in sorted(os.listdir(repo))
             if (n in ("pyproject.toml", "README.md") or n.startswith(("LICENSE", "COPYING", "NOTICE"))) and (repo / n).is_file()]
    for d, dirs, names in os.walk(repo / "server"):
        dirs[:] = sorted(x for x in dirs if not any(fnmatch.fnmatch(x, p) for p in SOURCE_IGNORED))
        files.extend(Path(d, n).relative_to(repo) for n in sorted(names) if not any(fnmatch.fnmatch(n, p) for p in SOURCE_IGNORED))
    return files


def source_copy(dest: Path) -> Path:
    """The package's sources alone, so that a stale ``build/`` or ``*.egg-info`` in the checkout
    (setuptools builds in the tree and reuses them) can never add a deleted module to the wheel."""
    dest.mkdir()
    for rel in source_files():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, dest / rel)
    return dest


def inputs_digest() -> str:
    """One hash of everything bundled/libs is made from: this script, the pins, the sources."""
    digest = hashlib.sha256()
    repo = REPO
    here = Path(__file__).resolve()
    for label, path in [("bundle_server.py", here), ("requirements.txt", REQUIREMENTS)] + [(r.as_posix(), repo / r) for r in source_files(repo)]:
        data = path.read_bytes()
        digest.update(f"{label}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def libs_state() -> dict[str, str]:
    """{wheel name: sha256} of bundled/libs."""
    libs = LIBS
    if not libs.is_dir():
        return {}
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(libs.iterdir()) if f.is_file()}


def is_current() -> bool:
    """Whether bundled/libs was built from today's inputs and is untouched since."""
    try:
        noted = json.loads(INPUTS.read_text("utf-8"))
    except (OSError, ValueError):
        return False
    wheels = libs_state()
    return isinstance(noted, dict) and bool(wheels) and noted.get("inputs") == inputs_digest() and noted.get("wheels") == wheels


def relock(python: str) -> int:
    pins = read_pins()
    with tempfile.TemporaryDirectory() as tmp:
        download(python, pins, Path(tmp), hashes=False)
        got = {}
        for f in Path(tmp).iterdir():
            if f.suffix in (".whl", ".gz"):
                got[canonicalize_name(re.split(r"-\d", f.name, 1)[0])] = "sha256:" + hashlib.sha256(f.read_bytes()).hexdigest()
    text = REQUIREMENTS.read_text("utf-8")
    for name, version, _ in pins:
        line = re.compile(rf"^{re.escape(name)}=={re.escape(version)}.*$", re.M)
        text = line.sub(f"{name}=={version} --hash={got[canonicalize_name(name)]}", text)
    REQUIREMENTS.write_text(text, "utf-8")
    print(f"{REQUIREMENTS.relative_to(REPO)}: {len(pins)} hashes written")
    return 0


def build(python: str) -> int:
    inputs = inputs_digest()  # before the sources are copied: one edited meanwhile is built again next time
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "kimi").mkdir()
        (work / "deps").mkdir()
        pip(python, "wheel", "-q", "--no-deps", "-w", str(work / "kimi"), str(source_copy(work / "src")))
        download(python, read_pins(), work / "deps", hashes=True)
        wheels = sorted(work.glob("kimi/*.whl")) + sorted(work.glob("deps/*.whl"))
        for sdist in sorted(work.glob("deps/*.tar.gz")):
            wheels.append(pure_wheel_from_sdist(sdist, work / "deps"))
        problems = check_closure(wheels)
        if problems:
            for p in problems:
                print(f"bundle_server: {p}", file=sys.stderr)
            return 1
        INPUTS.unlink(missing_ok=True)
        if LIBS.exists():
            shutil.rmtree(LIBS)
        LIBS.mkdir(parents=True)
        for whl in sorted(wheels):
            shutil.copy2(whl, LIBS / whl.name)
        INPUTS.write_text(json.dumps({"inputs": inputs, "wheels": libs_state()}, indent=1, sort_keys=True) + "\n", "utf-8")
    total = sum(f.stat().st_size for f in LIBS.iterdir())
    print(f"bundle_server: {len(wheels)} wheels, {total / 1024:.0f} KiB in {LIBS.relative_to(REPO)}; "
          f"complete for Python {PYTHONS[0]}-{PYTHONS[-1]} on {', '.join(PLATFORMS)}")
    for f in sorted(LIBS.iterdir()):
        print(f"  {f.name}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=os.environ.get("KIMI_LSP_PYTHON", sys.executable), help="the Python whose pip builds and downloads")
    ap.add_argument("--relock", action="store_true", help="rewrite the hashes in bundled/requirements.txt")
    ap.add_argument("--reuse", action="store_true", help="keep bundled/libs when it was built from the same inputs")
    ns = ap.parse_args(argv)
    if ns.relock:
        return relock(ns.python)
    if ns.reuse and is_current():
        print(f"bundle_server: {LIBS} is current ({len(libs_state())} wheels); without --reuse it is built again")
        return 0
    return build(ns.python)


if __name__ == "__main__":
    raise SystemExit(main())
