#!/usr/bin/env python3
"""Regenerate knowledge/data/sglang_releases.json from the released sglang wheels.

A project that pins only ``sglang==X`` still gets one exact flashinfer-python, because every
sglang release pins it with ``==`` in its metadata; kimi-lsp needs that mapping offline. For each
sglang release from 0.4.0 on this script downloads the wheel (no dependencies; the sdist when no
wheel fits this machine), reads ``*.dist-info/METADATA`` (``PKG-INFO`` in an sdist) and keeps the
Requires-Dist lines of the kernel packages, and looks for the Kimi-K3 DCP check in the sources (the
string of sglang's RuntimeError plus ``enable_dcp`` in the same file). Archives are deleted after
reading; results are cached per version so a rerun is incremental.

Usage: python3 scripts/build_sglang_table.py [--cache DIR] [--jobs N] [--only V ...] [--refresh]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import email.parser
import json
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

# Shared pip/archive helpers; scripts/ is on sys.path when this file is run as a script.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_flashinfer_table import (  # noqa: E402
    DEFAULT_CACHE,
    Archive,
    archive_members,
    fetch,
    pep440_sorted,
    pip_versions,
)

PACKAGE = "sglang"
OLDEST = Version("0.4.0")
REPO = Path(__file__).resolve().parents[1]
OUTPUT = REPO / "server" / "kimi_lsp" / "knowledge" / "data" / "sglang_releases.json"
ANALYSIS_VERSION = 1

FLASHINFER = "flashinfer-python"
# canonical name -> the name kept in "pins" (sgl-kernel was renamed sglang-kernel; keep both apart
# so a fix can name the package that release really depends on).
PINNED = ("flashinfer-cubin", "flashinfer-jit-cache", "sglang-kernel", "sgl-kernel", "torch")
WATCHED = (FLASHINFER, *PINNED)
# Kimi-K3 DCP check: the message sglang raises, and the parameter it looks for.
K3_MESSAGE = b"Kimi-K3 DCP with decode_attention_backend"
K3_PARAMETER = b"enable_dcp"
# The extras that `pip install sglang[...]` users typically take flashinfer through, in order of
# preference when a release lists several flashinfer lines (old releases: under "srt").
PREFERRED_EXTRAS = ("srt", "runtime_common", "all")


@dataclass(frozen=True)
class Finding:
    version: str
    archive: str  # "wheel" | "sdist" | "none"
    archive_bytes: int
    requires: Sequence[str] = field(default_factory=tuple)  # raw watched Requires-Dist lines
    k3_dcp_check: str | None = None  # file holding the Kimi-K3 DCP check


def metadata_text(archive: Archive) -> str | None:
    def is_metadata(name: str) -> bool:
        parts = name.split("/")
        if archive.kind == "wheel":
            return len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "METADATA"
        return len(parts) == 2 and parts[1] == "PKG-INFO"

    for _, data in archive_members(archive.path, is_metadata):
        return data.decode("utf-8", errors="replace")
    return None


def watched_requirements(metadata: str) -> list[str]:
    message = email.parser.Parser().parsestr(metadata, headersonly=True)
    kept = []
    for line in message.get_all("Requires-Dist") or []:
        try:
            name = canonicalize_name(Requirement(line).name)
        except InvalidRequirement:
            continue
        if name in WATCHED:
            kept.append(line.strip())
    return kept


def k3_check_file(archive: Archive) -> str | None:
    for name, data in archive_members(archive.path, lambda n: n.endswith(".py") and "sglang/" in n):
        if K3_MESSAGE in data and K3_PARAMETER in data:
            return name[name.index("sglang/"):]
    return None


def analyse(version: str, archive: Archive | None) -> Finding:
    if archive is None:
        return Finding(version, "none", 0)
    metadata = metadata_text(archive)
    return Finding(
        version=version,
        archive=archive.kind,
        archive_bytes=archive.size,
        requires=tuple(watched_requirements(metadata or "")),
        k3_dcp_check=k3_check_file(archive),
    )


def scan_one(version: str, cache: Path) -> Finding:
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        return analyse(version, fetch(PACKAGE, version, Path(tmp)))


def cached(cache: Path, version: str) -> Finding | None:
    path = cache / "results" / f"{version}.json"
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    if data.pop("analysis", None) != ANALYSIS_VERSION:
        return None
    data["requires"] = tuple(data["requires"])
    return Finding(**data)


def store(cache: Path, finding: Finding) -> None:
    path = cache / "results" / f"{finding.version}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"analysis": ANALYSIS_VERSION, **asdict(finding)}))


# --------------------------------------------------------------------------------------------
# Choosing the governing line per package
# --------------------------------------------------------------------------------------------


def _extra_of(req: Requirement) -> str | None:
    """The sglang extra a Requires-Dist line belongs to (None: a base dependency).

    Markers are evaluated for Linux x86_64 (flashinfer is Linux-only) with each candidate extra.
    """
    if req.marker is None:
        return None
    env = {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"}
    if req.marker.evaluate({**env, "extra": ""}):
        return None
    for extra in PREFERRED_EXTRAS:
        if req.marker.evaluate({**env, "extra": extra}):
            return extra
    text = str(req.marker)
    if "extra ==" in text:
        return text.split("extra ==", 1)[1].split()[0].strip("\"'")
    return "?"  # applies to no Linux x86_64 install


def governing(lines: Sequence[str], name: str) -> tuple[Requirement, str | None] | None:
    """The line for ``name`` that a plain (else the most common extra's) install obeys."""
    options = []
    for line in lines:
        req = Requirement(line)
        if canonicalize_name(req.name) != name:
            continue
        extra = _extra_of(req)
        rank = 0 if extra is None else 1 + (
            PREFERRED_EXTRAS.index(extra) if extra in PREFERRED_EXTRAS else len(PREFERRED_EXTRAS)
        )
        options.append((rank, req, extra))
    if not options:
        return None
    _, req, extra = min(options, key=lambda o: o[0])
    return req, extra


def without_marker(req: Requirement) -> str:
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    return f"{req.name}{extras}{req.specifier}"


def exact_version(req: Requirement) -> str | None:
    clauses = list(req.specifier)
    if len(clauses) == 1 and clauses[0].operator in ("==", "===") and "*" not in clauses[0].version:
        return clauses[0].version
    return None


def row(finding: Finding) -> dict[str, object]:
    out: dict[str, object] = {"version": finding.version, "archive": finding.archive}
    flashinfer = governing(finding.requires, FLASHINFER)
    if flashinfer is not None:
        req, extra = flashinfer
        out["flashinfer_requirement"] = without_marker(req)
        out["flashinfer_version"] = exact_version(req)
        out["flashinfer_extra"] = extra
    else:
        out["flashinfer_requirement"] = out["flashinfer_version"] = out["flashinfer_extra"] = None
    pins = {}
    for name in PINNED:
        found = governing(finding.requires, name)
        if found is not None and str(found[0].specifier):  # a bare name pins nothing
            pins[name] = str(found[0].specifier)
    out["pins"] = pins
    out["k3_dcp_check"] = finding.k3_dcp_check
    out["requires"] = list(finding.requires)
    return out


def render(rows: list[Mapping[str, object]], about: Mapping[str, object]) -> str:
    head = json.dumps(about, indent=1)
    lines = [json.dumps(r, separators=(",", ":")) for r in rows]
    return head[:-2] + ',\n "releases": [\n  ' + ",\n  ".join(lines) + "\n ]\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE / "sglang")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--only", nargs="*", help="scan just these versions (no output written)")
    parser.add_argument("--refresh", action="store_true", help="ignore cached results")
    args = parser.parse_args(argv)

    args.cache.mkdir(parents=True, exist_ok=True)
    listed = args.only or [v for v in pip_versions(PACKAGE) if Version(v) >= OLDEST]
    versions = pep440_sorted(listed)
    todo = [v for v in versions if args.refresh or cached(args.cache, v) is None]
    print(f"{len(versions)} releases, {len(todo)} to fetch", file=sys.stderr)

    started = time.monotonic()

    def work(version: str) -> Finding:
        finding = scan_one(version, args.cache)
        store(args.cache, finding)
        print(
            f"  {version:<14} {finding.archive:<5} {finding.archive_bytes / 1e6:6.1f} MB "
            f"k3={bool(finding.k3_dcp_check)} {[r for r in finding.requires if 'flashinfer' in r.lower()]}",
            file=sys.stderr,
        )
        return finding

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        fetched = sum(f.archive_bytes for f in pool.map(work, todo))
    print(f"fetched {fetched / 1e6:.0f} MB in {time.monotonic() - started:.0f} s", file=sys.stderr)

    findings = [cached(args.cache, v) for v in versions]
    missing = [v for v, f in zip(versions, findings) if f is None]
    if missing:
        raise RuntimeError(f"no result for {missing}")
    rows = [row(f) for f in findings]  # type: ignore[arg-type]
    if args.only:
        for r in rows:
            print(json.dumps(r))
        return 0
    about = {
        "package": PACKAGE,
        "generated": _dt.date.today().isoformat(),
        "generator": "scripts/build_sglang_table.py",
        "method": (
            f"every release >= {OLDEST} listed by `pip index versions --pre`; the wheel for this "
            "machine (else the sdist) read without installing; Requires-Dist of "
            f"{', '.join(WATCHED)} from METADATA; the governing line is the base dependency, else "
            f"the first of the extras {', '.join(PREFERRED_EXTRAS)}; k3_dcp_check = the source "
            "file holding sglang's 'Kimi-K3 DCP with decode_attention_backend' check on enable_dcp"
        ),
        "count": len(versions),
        "total_archive_mb": round(sum(f.archive_bytes for f in findings) / 1e6),  # type: ignore[union-attr]
    }
    args.output.write_text(render(rows, about))
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
