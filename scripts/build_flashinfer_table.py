#!/usr/bin/env python3
"""Regenerate knowledge/data/flashinfer_dcp.json from the released flashinfer-python archives.

sglang refuses a Kimi-K3 + DCP + cutedsl_mla launch unless
``inspect.signature(flashinfer.decode.trtllm_batch_decode_with_kv_cache_mla)`` lists
``enable_dcp``. Whether a release passes is a fact about its code, not about its version number
(release candidates of 0.6.17 already have it), so this script reads every released archive:

* lists the releases with ``pip index versions --pre flashinfer-python``;
* fetches each with ``pip download --no-deps --only-binary=:all:`` (the sdist through pip's own
  finder and downloader when a release has no wheel, because ``pip download`` of an sdist would
  try to build it);
* opens the archive with zipfile/tarfile (never imports it) and follows, with ``ast``, the name
  ``trtllm_batch_decode_with_kv_cache_mla`` from ``flashinfer/decode.py`` through its
  ``from .x import`` chain to the ``def`` that sglang's probe would see;
* deletes the archive right after reading it and keeps one small result per version in a cache
  directory, so a rerun only fetches new releases.

Usage: python3 scripts/build_flashinfer_table.py [--cache DIR] [--jobs N] [--only V ...] [--refresh]
"""

from __future__ import annotations

import argparse
import ast
import datetime as _dt
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

PACKAGE = "flashinfer-python"
MODULE = "flashinfer"
FUNCTION = "trtllm_batch_decode_with_kv_cache_mla"
PARAMETER = "enable_dcp"
EXPORTING_MODULE = "flashinfer.decode"  # what sglang imports the function from

REPO = Path(__file__).resolve().parents[1]
OUTPUT = REPO / "server" / "kimi_lsp" / "knowledge" / "data" / "flashinfer_dcp.json"
DEFAULT_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kimi-lsp" / "knowledge"
)
# Bump when the analysis changes so that cached results from an older analysis are redone.
ANALYSIS_VERSION = 1


# --------------------------------------------------------------------------------------------
# Fetching archives through pip (shared with build_sglang_table.py)
# --------------------------------------------------------------------------------------------


def pip_versions(package: str) -> list[str]:
    """Every released version of ``package`` (pre-releases included), as the package index lists them."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "--pre", package],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for line in out.splitlines():
        if line.startswith("Available versions:"):
            return [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
    raise RuntimeError(f"pip index versions printed no version list for {package}:\n{out}")


# pip download of an sdist runs the package's build backend to get its metadata, and old
# flashinfer sdists pin build requirements that no longer exist, so the sdist is located and
# fetched with pip's own finder and downloader instead (same index configuration, same hash check).
_SDIST_FETCHER = r"""
import sys
from packaging.version import Version
from pip._internal.commands import create_command
from pip._internal.network.download import Downloader

package, version, dest = sys.argv[1], Version(sys.argv[2]), sys.argv[3]
cmd = create_command("download")
options, _ = cmd.parse_args(["--no-deps", "--no-binary=:all:", "--no-cache-dir", "-d", dest])
with cmd.main_context():
    session = cmd.get_default_session(options)
    finder = cmd._build_package_finder(options=options, session=session, ignore_requires_python=True)
    for cand in finder.find_all_candidates(package):
        if Version(str(cand.version)) == version and not cand.link.is_wheel:
            try:
                download = Downloader(session, progress_bar="off")
            except TypeError:  # newer pip added resume_retries
                download = Downloader(session, progress_bar="off", resume_retries=0)
            path, _ = download(cand.link, dest)
            if cand.link.has_hash:
                cand.link.as_hashes().check_against_path(path)
            print(path)
            break
    else:
        sys.exit(3)
"""


@dataclass(frozen=True)
class Archive:
    path: Path
    kind: str  # "wheel" | "sdist"
    size: int


def fetch(package: str, version: str, dest: Path, retries: int = 2) -> Archive | None:
    """Download one release into ``dest``: its wheel, else its sdist; None when neither exists."""
    for attempt in range(retries + 1):
        wheel = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
             "--only-binary=:all:", "--quiet", f"{package}=={version}", "-d", str(dest)],
            capture_output=True,
            text=True,
        )
        found = sorted(dest.glob("*.whl"))
        if wheel.returncode == 0 and found:
            return Archive(found[0], "wheel", found[0].stat().st_size)
        if "No matching distribution" in wheel.stderr or "Could not find a version" in wheel.stderr:
            break  # no wheel for this release: not a transient failure
        time.sleep(2 * (attempt + 1))
    for attempt in range(retries + 1):
        sdist = subprocess.run(
            [sys.executable, "-c", _SDIST_FETCHER, package, version, str(dest)],
            capture_output=True,
            text=True,
        )
        if sdist.returncode == 3:
            return None
        if sdist.returncode == 0:
            path = Path(sdist.stdout.strip().splitlines()[-1])
            return Archive(path, "sdist", path.stat().st_size)
        time.sleep(2 * (attempt + 1))
    raise RuntimeError(f"could not fetch {package}=={version}:\n{sdist.stderr[-2000:]}")


def archive_members(archive: Path, keep: Callable[[str], bool]) -> Iterator[tuple[str, bytes]]:
    """(member name, bytes) for the members ``keep`` selects, from a wheel, zip sdist or tarball."""
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as zf:
            for name in zf.namelist():
                if keep(name):
                    yield name, zf.read(name)
        return
    with tarfile.open(archive) as tf:
        for member in tf:
            if member.isfile() and keep(member.name):
                handle = tf.extractfile(member)
                if handle is not None:
                    yield member.name, handle.read()


def package_relative(member: str, top: str) -> tuple[int, str] | None:
    """Map an archive member to its import path ("flashinfer/mla/_core.py").

    Wheels store the package at the root; sdists below "<name>-<version>/" (and old ones maybe
    below "python/"). The depth lets callers prefer the shallowest copy when an sdist holds two.
    """
    parts = member.split("/")
    if top not in parts[:-1]:
        return None
    depth = parts.index(top)
    return depth, "/".join(parts[depth:])


def python_sources(archive: Path, top: str) -> dict[str, str]:
    """All ``.py`` files of package ``top`` in the archive, keyed by import path."""
    chosen: dict[str, tuple[int, str]] = {}
    for name, data in archive_members(archive, lambda n: n.endswith(".py")):
        mapped = package_relative(name, top)
        if mapped is None:
            continue
        depth, rel = mapped
        if rel not in chosen or depth < chosen[rel][0]:
            chosen[rel] = (depth, data.decode("utf-8", errors="replace"))
    return {rel: text for rel, (_, text) in chosen.items()}


# --------------------------------------------------------------------------------------------
# Finding the function sglang's probe sees
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Definition:
    file: str
    line: int
    params: int
    enable_dcp_line: int | None


def module_file(sources: Mapping[str, str], module: str) -> str | None:
    base = module.replace(".", "/")
    for candidate in (f"{base}.py", f"{base}/__init__.py"):
        if candidate in sources:
            return candidate
    return None


def _resolve_relative(current_file: str, level: int, module: str | None) -> str:
    package = current_file.rsplit("/", 1)[0].split("/")
    if level > 1:
        package = package[: len(package) - (level - 1)]
    return ".".join(package + ([module] if module else []))


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Top-level statements, looking into if/try blocks the way an import would execute them.

    For try/except only the ``try`` body counts: an ``except ImportError`` fallback is what runs
    when the real import fails, and the probe cares about the real one.
    """
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from _top_level(stmt.body)
            yield from _top_level(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from _top_level(stmt.body)
            yield from _top_level(stmt.orelse)
        else:
            yield stmt


def _definition(file: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Definition:
    args = node.args
    named = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    # inspect.signature counts *args and **kwargs as parameters too.
    count = len(named) + (args.vararg is not None) + (args.kwarg is not None)
    dcp = next((a.lineno for a in named if a.arg == PARAMETER), None)
    return Definition(file, node.lineno, count, dcp)


def resolve(
    sources: Mapping[str, str], module: str, name: str, seen: frozenset[tuple[str, str]] = frozenset()
) -> Definition | None:
    """The def that ``from <module> import <name>`` binds, following re-exports; None if unbound."""
    if (module, name) in seen:
        return None
    seen = seen | {(module, name)}
    file = module_file(sources, module)
    if file is None:
        return None
    try:
        tree = ast.parse(sources[file], filename=file)
    except SyntaxError:
        return None
    found: Definition | None = None
    star_imports: list[str] = []
    for stmt in _top_level(tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
            found = _definition(file, stmt)  # a later binding wins, as at run time
        elif isinstance(stmt, ast.ImportFrom):
            target = (
                _resolve_relative(file, stmt.level, stmt.module) if stmt.level else stmt.module or ""
            )
            for alias in stmt.names:
                if alias.name == "*":
                    star_imports.append(target)
                elif (alias.asname or alias.name) == name:
                    found = resolve(sources, target, alias.name, seen) or found
    if found is None:
        for target in star_imports:
            found = resolve(sources, target, name, seen)
            if found is not None:
                break
    return found


def any_definition(sources: Mapping[str, str], name: str) -> Definition | None:
    """Where the function is defined at all, for releases whose flashinfer.decode lacks it."""
    for file in sorted(sources):
        if name not in sources[file]:
            continue
        try:
            tree = ast.parse(sources[file], filename=file)
        except SyntaxError:
            continue
        for stmt in _top_level(tree.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                return _definition(file, stmt)
    return None


# --------------------------------------------------------------------------------------------
# One release
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    version: str
    archive: str  # "wheel" | "sdist" | "none"
    archive_bytes: int
    has_function: bool  # defined anywhere in the package
    decode_exports: bool  # flashinfer.decode binds it (defines or imports it)
    enable_dcp: bool  # the def reached has the parameter
    file: str | None
    line: int | None
    params: int | None
    enable_dcp_line: int | None


def analyse(version: str, archive: Archive | None) -> Finding:
    if archive is None:
        return Finding(version, "none", 0, False, False, False, None, None, None, None)
    sources = python_sources(archive.path, MODULE)
    exported = resolve(sources, EXPORTING_MODULE, FUNCTION)
    definition = exported or any_definition(sources, FUNCTION)
    return Finding(
        version=version,
        archive=archive.kind,
        archive_bytes=archive.size,
        has_function=definition is not None,
        decode_exports=exported is not None,
        enable_dcp=definition is not None and definition.enable_dcp_line is not None,
        file=definition.file if definition else None,
        line=definition.line if definition else None,
        params=definition.params if definition else None,
        enable_dcp_line=definition.enable_dcp_line if definition else None,
    )


def scan_one(version: str, cache: Path) -> Finding:
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        archive = fetch(PACKAGE, version, Path(tmp))
        return analyse(version, archive)
    # the temporary directory, and with it the archive, is gone here: wheels reach 100 MB


def cached(cache: Path, version: str) -> Finding | None:
    path = cache / "results" / f"{version}.json"
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    if data.pop("analysis", None) != ANALYSIS_VERSION:
        return None
    return Finding(**data)


def store(cache: Path, finding: Finding) -> None:
    path = cache / "results" / f"{finding.version}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"analysis": ANALYSIS_VERSION, **asdict(finding)}))


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------


def pep440_sorted(versions: Iterable[str]) -> list[str]:
    def key(v: str) -> tuple[int, Version | str]:
        try:
            return (0, Version(v))
        except InvalidVersion:
            return (1, v)

    return sorted(versions, key=key)  # type: ignore[arg-type]


def render(findings: list[Finding], about: Mapping[str, object]) -> str:
    """Compact JSON: a header, then one release per line so that diffs stay readable."""
    rows = []
    for f in findings:
        row = {
            "version": f.version,
            "archive": f.archive,
            "has_function": f.has_function,
            "decode_exports": f.decode_exports,
            "enable_dcp": f.enable_dcp,
        }
        if f.file is not None:
            row.update(file=f.file, line=f.line, params=f.params)
        if f.enable_dcp_line is not None:
            row["enable_dcp_line"] = f.enable_dcp_line
        rows.append(json.dumps(row, separators=(",", ":")))
    head = json.dumps(about, indent=1)
    return head[:-2] + ',\n "releases": [\n  ' + ",\n  ".join(rows) + "\n ]\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE / "flashinfer")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--only", nargs="*", help="scan just these versions (no output written)")
    parser.add_argument("--refresh", action="store_true", help="ignore cached results")
    args = parser.parse_args(argv)

    args.cache.mkdir(parents=True, exist_ok=True)
    versions = pep440_sorted(args.only or pip_versions(PACKAGE))
    todo = [v for v in versions if args.refresh or cached(args.cache, v) is None]
    print(f"{len(versions)} releases, {len(todo)} to fetch", file=sys.stderr)

    started = time.monotonic()
    fetched_bytes = 0

    def work(version: str) -> Finding:
        finding = scan_one(version, args.cache)
        store(args.cache, finding)
        print(
            f"  {version:<16} {finding.archive:<5} {finding.archive_bytes / 1e6:7.1f} MB "
            f"fn={finding.has_function} decode={finding.decode_exports} dcp={finding.enable_dcp}",
            file=sys.stderr,
        )
        return finding

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for finding in pool.map(work, todo):
            fetched_bytes += finding.archive_bytes
    print(
        f"fetched {fetched_bytes / 1e6:.0f} MB in {time.monotonic() - started:.0f} s",
        file=sys.stderr,
    )

    findings = [cached(args.cache, v) for v in versions]
    missing = [v for v, f in zip(versions, findings) if f is None]
    if missing:
        raise RuntimeError(f"no result for {missing}")
    if args.only:
        for f in findings:
            print(json.dumps(asdict(f)))  # type: ignore[arg-type]
        return 0
    about = {
        "package": PACKAGE,
        "function": f"{EXPORTING_MODULE}.{FUNCTION}",
        "parameter": PARAMETER,
        "generated": _dt.date.today().isoformat(),
        "generator": "scripts/build_flashinfer_table.py",
        "method": (
            "every release listed by `pip index versions --pre`; its wheel (else sdist) read "
            "with zipfile/tarfile, never imported; the name followed with ast from "
            "flashinfer/decode.py through its imports to the def; enable_dcp = that def has the "
            "parameter"
        ),
        "count": len(versions),
        "total_archive_mb": round(sum(f.archive_bytes for f in findings) / 1e6),  # type: ignore[union-attr]
    }
    args.output.write_text(render(findings, about))  # type: ignore[arg-type]
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
