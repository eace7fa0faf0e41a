"""Which flashinfer-python governs a launch, and does it have ``enable_dcp``.

Order of authority (lockfiles.md §3): the launch file's own ``pip install`` pins (a Dockerfile's
last install wins in its image), else the nearest project that mentions flashinfer-python or
sglang; inside a project the lock decides over manifests. Every governing source that fails is
reported, the primary lock first, so a stale requirements export next to a good uv.lock is
still caught.
"""
from __future__ import annotations

from pathlib import Path

from kimi_lsp import _kept
from kimi_lsp._record import StrEnum, dataclass, field, str_enum
from kimi_lsp.diagnostics import Applicability, Edit, Fix, Location, Related
from kimi_lsp.knowledge import flashinfer as fi
from kimi_lsp.knowledge.sglang_releases import SglangRelease, sglang_release, sglang_versions
from kimi_lsp.pep440 import InvalidSpecifier, InvalidVersion, SpecifierSet, Version
from kimi_lsp.pins.model import Pin, PinFormat, PinSource
from kimi_lsp.rules import _kimi
from kimi_lsp.rules._base import LaunchContext
from kimi_lsp.rules._kimi import K3Dcp

if _kept.FAST:  # (issue 32: a private name only on the interpreters the fast path was tested on)
    from _thread import _local  # threading.local is this very class, without importing threading
else:
    from threading import local as _local

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from kimi_lsp.pins.discovery import Project
    from kimi_lsp.workspace import Workspace

FI = "flashinfer-python"
SGLANG = "sglang"
_LINUX = {
    "sys_platform": "linux",
    "platform_system": "Linux",
    "os_name": "posix",
}
# The CPUs a GPU host may have. Grace boards (GB200, GB300, GH200) are aarch64; an unknown
# target may be either, so a pin counts when its marker holds on any of them (every such line is
# checked, and bumped by the fix: a marker-split pin is never half-fixed).
ALL_MACHINES = ("x86_64", "aarch64")
_GRACE = {"gb200", "gb300", "gh200"}
# The target's machines while a launch is evaluated (``_for_target``), per thread: a lint runs
# synchronously in one thread (no await inside), so a thread's own value is the launch's.
# (``_thread._local`` is built in; contextvars is a shared library and a module to import.)
_state = _local()


def target_machines(target_gpu: str | None) -> tuple[str, ...]:
    g = (target_gpu or "").strip().lower()
    if g in _GRACE:
        return ("aarch64",)
    from kimi_lsp.config import GPU_SM

    return ("x86_64",) if g in GPU_SM else ALL_MACHINES


class _for_target:  # noqa: N801  # used as `with _for_target(ctx):`, like the generator it was
    """Markers are evaluated for the launch's target machines while the block runs (a class, not
    ``contextlib.contextmanager``: contextlib is start-up time a one-file check does not need)."""

    __slots__ = ("_target", "_before")

    def __init__(self, ctx: LaunchContext) -> None:
        self._target = getattr(ctx.settings, "target_gpu", None)

    def __enter__(self) -> None:
        self._before = _machines()
        _state.machines = target_machines(self._target)

    def __exit__(self, *exc: object) -> None:
        _state.machines = self._before


def _machines() -> tuple[str, ...]:
    """The machines markers are evaluated for: the launch's target's inside ``_for_target``."""
    got: tuple[str, ...] = getattr(_state, "machines", ALL_MACHINES)
    return got


@str_enum
class FindingStatus(StrEnum):
    """What one governing source says of flashinfer-python's ``enable_dcp``."""

    BAD = "bad"  # every version it pins or locks lacks it
    OK = "ok"
    ADMITS_BAD = "admits-bad"  # a range that admits versions lacking it
    UNKNOWN = "unknown"  # a version the release table cannot answer for
    STALE = "stale"  # a lock its manifest no longer admits
    BROKEN = "broken"  # the file exists but cannot be read or parsed: what it pins is unknown


@dataclass(frozen=True)
class Finding:
    """One governing source's answer for flashinfer-python."""

    source: PinSource
    pins: tuple[Pin, ...]  # the flashinfer-python pins (or the sglang pin when via_sglang)
    status: FindingStatus
    shown: str  # what the user wrote / what is locked, e.g. "0.6.16.post4" or ">=0.6.10,<0.7"
    detail: str = ""
    via_sglang: SglangRelease | None = None
    project_dir: Path | None = None
    lock_decides: bool = False  # a lock in the same project decides this manifest's range

    @property
    def where(self) -> str:
        return self.source.path.name


@dataclass(frozen=True)
class Evaluation:
    findings: tuple[Finding, ...]  # every finding, primary first
    searched: tuple[Path, ...]
    sglang_version: str | None  # the exact sglang version governing, when known
    project_locks: dict[Path, tuple[PinSource, ...]] = field(default_factory=dict)

    @property
    def failing(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.status is FindingStatus.BAD)

    @property
    def stale(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.status is FindingStatus.STALE)

    @property
    def broken(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.status is FindingStatus.BROKEN)

    @property
    def undecided(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.status in (FindingStatus.ADMITS_BAD, FindingStatus.UNKNOWN) and not f.lock_decides)


_PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14")


def _applies(pin: Pin) -> bool:
    """Whether a pin can apply on a Linux GPU host. The deployment's Python is unknown, so a
    marker counts when it holds for any supported Python (uv lock forks split on it)."""
    if not pin.marker:
        return True
    from kimi_lsp import markers  # (a run whose pins carry no marker never loads it)

    tree = markers.plain(pin.marker)
    if tree is not None:  # platform variables only: the Python version does not matter
        return any(markers.evaluate(tree, {**_LINUX, "platform_machine": machine}) for machine in _machines())
    from packaging.markers import Marker  # only other markers pay for it (~15 ms)

    try:
        marker = Marker(pin.marker)
        for machine in _machines():
            for py in _PYTHONS:
                env = {**_LINUX, "platform_machine": machine, "extra": pin.group or "",
                       "python_version": py, "python_full_version": f"{py}.0"}
                if marker.evaluate(env):
                    return True
        return False
    except Exception:  # invalid markers, undefined environment names: may apply
        return True


def _broken(source: PinSource) -> Finding | None:
    """A pin file that exists but yielded nothing it could read: a conflict marker, invalid
    TOML, a permission error, a directory or device under a pin file's name. What it pins is
    unknown, so it is never "no pin" (fail closed: the launch is not proven safe)."""
    if not source.problems or source.pins:  # (in this order: a lock's pins are made on demand)
        return None
    first = source.problems[0]
    unreadable = first.span.start == 0 and first.span.end == 0 and first.message.startswith(f"{source.path.name}: ")
    if source.format in (PinFormat.REQUIREMENTS, PinFormat.CONSTRAINTS) and not unreadable:
        # a requirements file whose lines were read but pin nothing (only `-e .`, or a `-r` to
        # a missing file) is reported by its reader; it hides no flashinfer pin of its own
        return None
    return Finding(source, (), FindingStatus.BROKEN, "", first.message)


def _fi_pins(source: PinSource) -> tuple[Pin, ...]:
    pins = tuple(p for p in source.pins_for(FI) if _applies(p))
    overrides = tuple(p for p in pins if p.override)
    return overrides or pins


def _sglang_pin(source: PinSource) -> Pin | None:
    pins = [p for p in source.pins_for(SGLANG) if _applies(p)]
    return pins[0] if pins else None


def _lock_finding(src: PinSource, project_dir: Path | None) -> Finding | None:
    pins = _fi_pins(src)
    if pins:
        versions = [p.version for p in pins if p.version]
        verdicts = [fi.has_enable_dcp(v) for v in versions]
        shown = ", ".join(dict.fromkeys(versions)) or "?"
        if any(v is False for v in verdicts):
            bad = [p for p, v in zip(pins, verdicts) if v is False]
            shown_bad = ", ".join(dict.fromkeys(p.version for p in bad if p.version))
            return Finding(src, tuple(bad), FindingStatus.BAD, shown_bad, project_dir=project_dir)
        if any(v is None for v in verdicts) or not versions:
            return Finding(src, pins, FindingStatus.UNKNOWN, shown, "a version whose signature cannot be known from the release table", project_dir=project_dir)
        return Finding(src, pins, FindingStatus.OK, shown, project_dir=project_dir)
    sg = _sglang_pin(src)
    if sg is not None and sg.version:
        return _via_sglang(src, sg, sg.version, project_dir)
    return None


def _via_sglang(src: PinSource, sg: Pin, version: str, project_dir: Path | None) -> Finding | None:
    rel = sglang_release(version)
    if rel is None or rel.flashinfer_version is None:
        return None
    if not rel.has_k3_dcp_check:
        # that sglang release never runs the check: no launch failure to predict
        return Finding(src, (sg,), FindingStatus.OK, rel.flashinfer_version, "sglang release without the Kimi-K3 DCP check", rel, project_dir)
    ok = fi.has_enable_dcp(rel.flashinfer_version)
    status = FindingStatus.BAD if ok is False else (FindingStatus.OK if ok else FindingStatus.UNKNOWN)
    return Finding(src, (sg,), status, rel.flashinfer_version, f"sglang {version} pins flashinfer-python=={rel.flashinfer_version}", rel, project_dir)


def _manifest_finding(src: PinSource, constraints: list[str], project_dir: Path | None) -> Finding | None:
    pins = _fi_pins(src)
    if pins:
        shown = ",".join(s for s in (p.native_spec or p.specifier for p in pins) if s) or "(any version)"
        status, detail = _classify_pins(_effective_specs(pins), constraints)
        return Finding(src, pins, status, shown, detail, project_dir=project_dir)
    sg = _sglang_pin(src)
    if sg is None:
        return None
    if sg.version:
        return _via_sglang(src, sg, sg.version, project_dir)
    # a range on sglang: does any admitted release with the check pin a flashinfer without enable_dcp?
    try:
        spec = SpecifierSet(sg.specifier)
    except InvalidSpecifier:
        return None
    bad: list[str] = []
    for v in sglang_versions():
        try:
            if not spec.contains(Version(v), prereleases=False):
                continue
        except InvalidVersion:
            continue
        rel = sglang_release(v)
        if rel and rel.has_k3_dcp_check and rel.flashinfer_version and fi.has_enable_dcp(rel.flashinfer_version) is False:
            bad.append(v)
    if bad:
        return Finding(src, (sg,), FindingStatus.ADMITS_BAD, f"sglang{sg.specifier or ' (any version)'}", f"admits sglang {bad[0]}, whose flashinfer pin lacks enable_dcp", project_dir=project_dir)
    return None


def _effective_specs(pins: tuple[Pin, ...]) -> list[str]:
    """Requirements on one name intersect, except that entries with different environment
    markers are alternatives (one applies per Python / platform): those become a union."""
    common = [p.specifier for p in pins if not p.marker and not p.constraint]
    constraints = [p.specifier for p in pins if p.constraint]
    branches = [p.specifier for p in pins if p.marker and not p.constraint]
    if len({p.marker for p in pins if p.marker and not p.constraint}) > 1:
        union = "||".join(",".join(x for x in (*common, b) if x) for b in branches)
        return [union, *constraints]
    return [*common, *branches, *constraints]


def _valid_spec(spec: str) -> bool:
    try:
        for branch in spec.split("||"):
            SpecifierSet(branch.strip())
    except InvalidSpecifier:
        return False
    return True


def _admits(specs: list[str], version: str) -> bool:
    """Whether a version satisfies the effective specs (``||`` unions allowed)."""
    v = Version(version)
    for spec in specs:
        branches = spec.split("||") if "||" in spec else [spec]
        try:
            if not any(SpecifierSet(b.strip()).contains(v, prereleases=True) for b in branches):
                return False
        except InvalidSpecifier:
            continue  # unreadable text (reported by the reader) excludes nothing we can know
    return True


_STATUS = {  # flashinfer.classify's verdict kind -> the finding's status
    "pinned-bad": FindingStatus.BAD,
    "all-bad": FindingStatus.BAD,
    "pinned-ok": FindingStatus.OK,
    "all-ok": FindingStatus.OK,
    "admits-bad": FindingStatus.ADMITS_BAD,
    "unconstrained": FindingStatus.ADMITS_BAD,
}


def _classify_pins(specs: list[str], constraints: list[str]) -> tuple[FindingStatus, str]:
    """Status of the intersection of ``specs`` and ``constraints``; a poetry/conda union
    (``a||b``) admits what any branch admits."""
    union = [s for s in specs if "||" in s]
    plain = [s for s in specs if "||" not in s]
    if not union:
        v = fi.classify(plain + constraints)
        return _STATUS.get(v.kind, FindingStatus.UNKNOWN), v.detail
    statuses = []
    details = []
    for branch in union[0].split("||"):
        st, d = _classify_pins(plain + [branch.strip()] + union[1:], constraints)
        statuses.append(st)
        details.append(d)
    if all(s is FindingStatus.BAD for s in statuses):
        return FindingStatus.BAD, details[0]
    if all(s is FindingStatus.OK for s in statuses):
        return FindingStatus.OK, details[0]
    if FindingStatus.UNKNOWN in statuses and not any(s in (FindingStatus.BAD, FindingStatus.ADMITS_BAD) for s in statuses):
        return FindingStatus.UNKNOWN, ""
    return FindingStatus.ADMITS_BAD, next((d for s, d in zip(statuses, details) if s is not FindingStatus.OK), "")


def evaluate(ctx: LaunchContext) -> Evaluation:
    def run() -> Evaluation:
        with _for_target(ctx):
            return _shared_evaluation(ctx)

    return ctx.memo("flashinfer", run)


def _shared_evaluation(ctx: LaunchContext) -> Evaluation:
    """``_evaluate``, once per governing sources in one CLI lint: the launches of a project share
    its pin sources (discovery gives every directory below it the same ``Project`` objects), and
    the evaluation reads nothing else of the launch but the target's machines and the
    ``flashinfer-pin`` setting. The directories searched (only named in messages) are the
    launch's own."""
    ws = ctx.workspace
    if not ws.stable:
        return _evaluate(ctx)
    gov = ctx.governing
    key = ("flashinfer-evaluation", tuple(map(id, gov.own)), tuple(map(id, gov.projects)), _machines(),
           ctx.settings.flashinfer_pin)
    hit = ws.memo.get(key)
    # ids are only as good as the objects behind them: the entry keeps those alive, and is used
    # only when they are the very objects of this launch's governing sources
    if not isinstance(hit, tuple) or not _same_objects(hit[0], gov.projects) or not _same_objects(hit[1], gov.own):
        hit = ws.memo[key] = (gov.projects, gov.own, _evaluate(ctx))
    ev: Evaluation = hit[2]
    if ev.searched != gov.searched:
        ev = Evaluation(ev.findings, gov.searched, ev.sglang_version, ev.project_locks)
    return ev


def _same_objects(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _evaluate(ctx: LaunchContext) -> Evaluation:
    gov = ctx.governing
    findings: list[Finding] = []
    sglang_version: str | None = None
    locks_by_project: dict[Path, tuple[PinSource, ...]] = {}
    for src in gov.own:
        sg = _sglang_pin(src)
        if sg is not None and sg.version:
            sglang_version = sg.version
    own_findings = [f for f in (_manifest_finding(s, [], None) for s in gov.own) if f is not None]
    own_fi = [f for f in own_findings if f.via_sglang is None]
    if own_fi:
        # the image's own last install decides (and any other own source that fails)
        findings.extend(own_findings)
    else:
        findings.extend(own_findings)
        for project in gov.projects:
            locks_by_project[project.dir] = project.locks
            lock_f = [f for f in (_lock_finding(s, project.dir) for s in project.locks) if f is not None]
            # an unreadable constraint (reported by its reader) narrows nothing we can know
            constraints = [
                p.specifier
                for m in project.manifests
                for p in _fi_pins(m)
                if p.constraint and p.specifier and _valid_spec(p.specifier)
            ]
            man_f: list[Finding] = []
            for m in project.manifests:
                f = _manifest_finding(m, [c for c in constraints if m.format is not PinFormat.CONSTRAINTS], project.dir)
                if f is not None:
                    man_f.append(f)
            broken = [f for f in (_broken(s) for s in (*project.locks, *project.manifests)) if f is not None]
            if broken:
                # the nearest project governs even when its pin file cannot be read: a broken
                # lock must not hand the launch to a parent project or to "no pin"
                findings.extend(broken)
            if not lock_f and not man_f:
                if broken:
                    break
                continue
            # constraints only narrow a requirement: on their own they decide nothing
            if any(f.source.format is not PinFormat.CONSTRAINTS for f in man_f):
                man_f = [f for f in man_f if f.source.format is not PinFormat.CONSTRAINTS]
            lock_f = [_mark_stale(f, project) for f in lock_f]
            # the lock speaks for the manifest it was made from: one diagnostic, not two
            own_manifests = {
                id(m)
                for f in lock_f
                if f.status not in (FindingStatus.STALE, FindingStatus.UNKNOWN)
                for m in [_manifest_of(f.source, project)]
                if m is not None
            }
            man_f = [f for f in man_f if id(f.source) not in own_manifests]
            lock_decides = any(
                (f.via_sglang is None or f.status is not FindingStatus.UNKNOWN) and f.status is not FindingStatus.STALE for f in lock_f
            )
            findings.extend(lock_f)
            for f in man_f:
                if lock_decides and f.status in (FindingStatus.ADMITS_BAD, FindingStatus.UNKNOWN):
                    f = Finding(f.source, f.pins, f.status, f.shown, f.detail, f.via_sglang, f.project_dir, True)
                findings.append(f)
            for src in (*project.locks, *project.manifests):
                sg = _sglang_pin(src)
                if sg is not None and sg.version and sglang_version is None:  # own pins come first
                    sglang_version = sg.version
            break  # the nearest project that mentions flashinfer or sglang governs
    if not findings and ctx.settings.flashinfer_pin is not None:
        findings.extend(_configured_pin_findings(ctx))
    return Evaluation(tuple(findings), gov.searched, sglang_version, locks_by_project)


def _configured_pin_findings(ctx: LaunchContext) -> list[Finding]:
    """``flashinfer-pin`` in the configuration: the file to read when discovery finds nothing
    (e.g. the image's requirements live in another repository, vendored under a custom name)."""
    from kimi_lsp.pins import discovery

    path = ctx.settings.flashinfer_pin
    assert path is not None
    out: list[Finding] = []
    for src in discovery.read_pin_file(path, ctx.workspace, fmt=PinFormat.REQUIREMENTS):
        broken = _broken(src)
        if broken is not None:
            out.append(broken)
            continue
        f = _lock_finding(src, path.parent) if src.is_lock else _manifest_finding(src, [], path.parent)
        if f is not None:
            out.append(f)
    return out


def _manifest_of(lock: PinSource, project: Project) -> PinSource | None:
    from kimi_lsp.pins import discovery

    return discovery.manifest_for_lock(lock, project)


def _mark_stale(f: Finding, project: Project) -> Finding:
    """A lock whose flashinfer version its own manifest no longer admits was not made from that
    manifest (typically: the manifest was just bumped); it must be re-locked, and until then the
    manifest, not the lock, says what the project wants."""
    from kimi_lsp.pins import discovery

    if f.via_sglang is not None or f.status is FindingStatus.UNKNOWN:
        return f
    man = discovery.manifest_for_lock(f.source, project)
    if man is None:
        return f
    specs = [s for s in _effective_specs(_fi_pins(man)) if s]
    if not specs:
        return f
    try:
        stale = [p for p in f.pins if p.version and not _admits(specs, p.version)]
    except (InvalidSpecifier, InvalidVersion):
        return f
    if not stale:
        return f
    detail = f"{man.path.name} requires flashinfer-python{' or '.join(specs[0].split('||')) if len(specs) == 1 else ','.join(specs)}"
    return Finding(f.source, tuple(stale), FindingStatus.STALE, f.shown, detail, project_dir=f.project_dir)


def probed_launch(ctx: LaunchContext) -> tuple[K3Dcp, Evaluation] | None:
    """The launch and its flashinfer evaluation when sglang would run its ``enable_dcp`` probe:
    Kimi-K3 with DCP, decode backend cutedsl_mla or unset, and a governing sglang release that
    has the check (KL101, KL102 and KL104 all start here)."""
    k3 = _kimi.k3_dcp(ctx)
    if k3 is None or k3.decode.name not in (None, "cutedsl_mla"):
        return None
    ev = evaluate(ctx)
    if not sglang_checks(ev):
        return None
    return k3, ev


def sglang_checks(ev: Evaluation) -> bool:
    """False when the governing sglang release is known and has no Kimi-K3 DCP flashinfer check
    at all (it then never raises the RuntimeError these rules predict)."""
    if ev.sglang_version is None:
        return True
    rel = sglang_release(ev.sglang_version)
    return rel is None or rel.has_k3_dcp_check


# -- fixes -----------------------------------------------------------------------------


def bump_target(ctx: LaunchContext, ev: Evaluation) -> str:
    override = getattr(ctx.settings, "flashinfer_target", None)
    if override:
        return str(override)
    return fi.bump_target(ev.sglang_version)


def related_for(ctx: LaunchContext, f: Finding) -> tuple[Related, ...]:
    with _for_target(ctx):
        return _related_for(ctx, f)


def _related_for(ctx: LaunchContext, f: Finding) -> tuple[Related, ...]:
    pin = f.pins[0]
    if f.via_sglang is not None:
        msg = f"sglang {f.via_sglang.version} is pinned here; it requires flashinfer-python=={f.shown}"
    elif f.source.is_lock:
        msg = f"flashinfer-python {f.shown} is locked here"
    else:
        spec = f.shown if f.shown[:1] in "=<>!~^" else f" {f.shown}"
        msg = f"flashinfer-python{spec} is pinned here"
    out = [Related(Location(f.source.path, pin.span), msg)]
    if f.source.is_lock and f.via_sglang is None:
        man = _manifest_of_lock(ctx, f.source)
        if man is not None:
            for p in _fi_pins(man):
                spec = p.native_spec or p.specifier or " (any version)"
                spec = spec if spec[:1] in "=<>!~^ " else f" {spec}"
                out.append(Related(Location(man.path, p.span), f"{man.path.name} requires flashinfer-python{spec}"))
    return tuple(out)


def bump_fixes(ctx: LaunchContext, ev: Evaluation, f: Finding) -> tuple[Fix, ...]:
    """The safe 'bump the flashinfer-python pin' fix for one failing finding, when a text edit exists."""
    with _for_target(ctx):
        return _bump_fixes(ctx, ev, f)


def _bump_fixes(ctx: LaunchContext, ev: Evaluation, f: Finding) -> tuple[Fix, ...]:
    from kimi_lsp.pins import bump

    target = bump_target(ctx, ev)
    ws = ctx.workspace
    manifest: PinSource | None = None
    followup: str | None = None
    lock = f.source if f.source.is_lock else None
    if lock is None:
        manifest = f.source
        followup = _followup_for_manifest(ctx, ev, f)
    else:
        manifest = _manifest_of_lock(ctx, lock)
        if lock.relock_command:
            followup = lock.relock_command.replace("{name}", FI).replace("{version}", target)
    if manifest is None:
        return (_display_only(target, lock, followup),) if lock is not None else ()
    pins = _fi_pins(manifest)
    if f.via_sglang is not None:
        return _sglang_upgrade(manifest, f, followup, ws) or (_display_only(target, lock or manifest, followup),)
    if not pins:
        return (_display_only(target, lock or manifest, followup),)
    text = ws.text(manifest.path)
    if text is None:
        return ()
    edits: list[Edit] = []
    for pin in pins:
        e = bump.bump_fix_edits(manifest, pin, target, text)
        if e is None:
            return (_display_only(target, manifest, followup),)
        edits.extend(e)
    # a constraints file that excludes the target must move in the same fix, or the bump
    # leaves a requirement nothing can satisfy
    touched = [manifest.path.name]
    for cons in _constraint_sources(ctx, f, manifest):
        ctext = ws.text(cons.path)
        for pin in _fi_pins(cons):
            if not pin.constraint or not pin.specifier or _admits([pin.specifier], target):
                continue
            e = bump.bump_fix_edits(cons, pin, target, ctext) if ctext is not None else None
            if e is None:
                return (_display_only(target, manifest, followup),)
            edits.extend(e)
            if cons.path.name not in touched:
                touched.append(cons.path.name)
    # the same edit may be produced twice when pins share a line; keep each once
    uniq = tuple(dict.fromkeys(edits))
    title = f"Bump flashinfer-python to {target} in {' and '.join(touched)}"
    if followup:
        title += f", then run `{followup}`"
    return (Fix(title, uniq, Applicability.SAFE, followup),)


def _constraint_sources(ctx: LaunchContext, f: Finding, manifest: PinSource) -> list[PinSource]:
    """Constraint files that narrow ``manifest`` (its -c includes, or any in the same project)."""
    out: list[PinSource] = []
    for project in ctx.governing.projects:
        if f.project_dir is not None and project.dir != f.project_dir and manifest not in project.manifests:
            continue
        for m in project.manifests:
            if m is not manifest and m.format is PinFormat.CONSTRAINTS and m not in out:
                out.append(m)
    return out


def newest_good_sglang() -> str | None:
    """The newest sglang release whose own flashinfer pin has ``enable_dcp``."""
    best: tuple[Version, str] | None = None
    for v in sglang_versions():
        rel = sglang_release(v)
        if rel is None or not rel.flashinfer_version or fi.has_enable_dcp(rel.flashinfer_version) is not True:
            continue
        try:
            key = Version(v)
        except InvalidVersion:
            continue
        if key.is_prerelease:
            continue
        if best is None or key > best[0]:
            best = (key, v)
    return best[1] if best else None


def _sglang_upgrade(manifest: PinSource, f: Finding, followup: str | None, ws: Workspace) -> tuple[Fix, ...]:
    """flashinfer comes from sglang's own exact pin: upgrading sglang is the fix (it changes more
    than flashinfer, so it is unsafe)."""
    from kimi_lsp.pins import bump

    target = newest_good_sglang()
    sg = next((p for p in manifest.pins_for(SGLANG) if p in f.pins), None)
    if target is None or sg is None:
        return ()
    text = ws.text(manifest.path)
    if text is None:
        return ()
    edits = bump.bump_fix_edits(manifest, sg, target, text, companions=False)
    if not edits:
        return ()
    rel = sglang_release(target)
    fi_pin = rel.flashinfer_version if rel else "?"
    title = f"Upgrade sglang to {target} (it pins flashinfer-python=={fi_pin}) in {manifest.path.name}"
    if followup:
        title += f", then run `{followup}`"
    return (Fix(title, tuple(edits), Applicability.UNSAFE, followup),)


def _display_only(target: str, src: PinSource, followup: str | None) -> Fix:
    title = f"Require flashinfer-python>={target} where {src.path.name} comes from"
    if followup:
        title += f" and run `{followup}`"
    return Fix(title, (), Applicability.DISPLAY_ONLY, followup)


def _manifest_of_lock(ctx: LaunchContext, lock: PinSource) -> PinSource | None:
    from kimi_lsp.pins import discovery

    for project in ctx.governing.projects:
        if lock in project.locks:
            return discovery.manifest_for_lock(lock, project)
    return None


def _followup_for_manifest(ctx: LaunchContext, ev: Evaluation, f: Finding) -> str | None:
    from kimi_lsp.pins import bump, discovery

    if f.project_dir is None:
        return None
    for project in ctx.governing.projects:
        if project.dir != f.project_dir:
            continue
        for lock in project.locks:
            if discovery.manifest_for_lock(lock, project) == f.source:
                return bump.relock_hint(f.source, FI, bump_target(ctx, ev)) or (
                    lock.relock_command.replace("{name}", FI) if lock.relock_command else None
                )
    return bump.relock_hint(f.source, FI, bump_target(ctx, ev)) if f.source.tool else None
