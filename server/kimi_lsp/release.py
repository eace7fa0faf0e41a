"""Which sglang release runs a launch, and the evidence for it.

Real deployments run many releases and say which one in places a pip pin never is: the container
image that runs the launch (``FROM lmsysorg/sglang:v0.5.5.post3``, a Kubernetes/compose
``image:``, a Helm chart's ``image.tag``), a ``pip install sglang==X`` in the launch file itself,
the project's lock, its manifests. ``resolve_release`` reads them nearest and most specific first:

1. the ``sglang-version`` setting (the user said so);
2. the image that runs the launch, when it is sglang's official image and its tag names a
   release (``v0.5.5.post3``, ``v0.5.5-cu129``, ``v0.4.6.post4-cu124``, ``v0.5.2rc2-cu126-b200``).
   A Dockerfile's own ``pip install sglang==X`` runs after its ``FROM`` inside the same image, so
   there the pip line wins over the base image; elsewhere (``docker run`` in a script, a pod) the
   file's pip lines run outside the container and the image wins;
3. the launch file's own pip lines;
4. the nearest project's lock, then its manifests (a range decides nothing unless a lock does).

What is not evidence is never a guess: a moving tag (``latest``, ``dev``, ``nightly-…``), a bare
digest, a template we cannot resolve from literal chart values, or a range gives an *unknown*
release with the reason, and the engine then reports only what every recent release agrees on.
Another image (a fork, a custom build, another engine's image) says nothing about sglang: the
pins are read as if it were absent.

The image tag scheme is that of sglang's release workflows: ``v{version}`` optionally followed by
``-{variant}`` words (CUDA/ROCm/platform: ``cu129``, ``cu124``, ``rocm630``, ``b200``, ``srt``,
``amd64``); ``latest[-variant]`` follows the newest release (it is pushed when ``version.py`` is
bumped), ``dev[-variant]`` follows main and ``nightly-dev-{date}-{sha}`` are nightly builds of main:
those two may hold options and choices no release has yet, so they are judged more cautiously.
"""
from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from kimi_lsp._record import dataclass, replace
from kimi_lsp.diagnostics import Location
from kimi_lsp.text import Located, Span

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any

    from kimi_lsp.config import Settings
    from kimi_lsp.evidence import ReleaseEvidence
    from kimi_lsp.gitdate import LastChange
    from kimi_lsp.pins.discovery import Governing
    from kimi_lsp.pins.model import Pin, PinSource
    from kimi_lsp.surfaces.model import LaunchCommand
    from kimi_lsp.workspace import SourceText, Workspace

SGLANG = "sglang"
# Docker Hub spells one repository several ways; any other registry may hold anything.
_HUB_HOSTS = ("docker.io/", "index.docker.io/", "registry-1.docker.io/", "registry.hub.docker.com/")
_OFFICIAL_REPO = "lmsysorg/sglang"
# sglang's CI also pushes AMD builds of main to ``rocm/sgl-dev``, tagged
# ``v{version}-rocm{N}-{gpu}[-{YYYYMMDD}]``: ``version`` is the last release the build's source names,
# the date when it was built. Evidence that narrows the release, never one release exactly.
_DEV_BUILD_REPOS = ("rocm/sgl-dev",)
# The patterns of this module are strings, compiled by re's own cache when first used: most runs
# use none of them (a launch without an image, pip line, patch, submodule or README beside it),
# and compiling all of them was a millisecond of every start.
_RELEASE_TAG = (
    r"^v(?P<version>\d+(?:\.\d+){1,3}(?:(?:a|b|rc)\d+)?(?:\.post\d+)?)(?:-(?P<variant>[a-z0-9][a-z0-9._-]*))?$"
)
_DATED = r"(?<!\d)(20\d\d)(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?!\d)"  # nightly-dev-20251215
_MOVING_TAG = r"^(?P<name>latest|dev|nightly)(?:-[a-z0-9._-]*)?$"
_TEMPLATE = r"\{\{-?\s*(?P<expr>.*?)\s*-?\}\}"
_SHELL_VAR = r"\$\{?[A-Za-z_]"
# A line that installs sglang (cheap gate before composing a whole YAML file)
_INSTALLS_SGLANG = r"\binstall\b[^\n]*\bsglang\b"


@dataclass(frozen=True)
class ReleaseResolution:
    """The sglang release a launch runs with. ``version`` is set only when the evidence names
    one release exactly; ``why`` says, when it does not, what was found instead."""

    version: str | None
    source_kind: str  # "setting" | "image" | "pip" | "lock" | "manifest" | "none"
    source_text: str  # e.g. "image `lmsysorg/sglang:v0.5.5.post3`"; "" when nothing was found
    location: Location | None  # where the evidence is written
    exact: bool
    why: str = ""  # for an unknown release: the reason, in words
    # The launch runs inside sglang's official image of exactly ``version``: that image's own
    # flashinfer pin governs it (unless the Dockerfile installs another one).
    from_image: bool = False
    # For an unknown release: the shipped releases it may be, when the evidence narrows them (a
    # range pin, a dated nightly image); () when no shipped schema can speak for it (a repository
    # carrying its own sglang source); None: no narrowing, the engine takes the recent releases.
    candidates: tuple[str, ...] | None = None
    # For an unknown release: the places in the repository that name the candidates (evidence.py),
    # nearest scope first, or the day the file was last committed (gitdate.py).
    evidence: tuple[ReleaseEvidence, ...] = ()
    last_change: LastChange | None = None
    # The image tag moves ("latest": the newest release; "main": `dev`/nightly builds of main):
    # what it pulled depends on when; the day the file was last committed says (_moving_by_history).
    moving: str = ""
    # A build of main judged by the release of its day and every later one: that day's release,
    # which staleness (KL240) is measured from.
    as_of: str = ""
    # The launch may run code newer than every shipped schema (main: `dev`/nightly builds; a
    # build after the newest release): options and choices added since may exist there.
    beyond: bool = False


@dataclass(frozen=True)
class ImageRelease:
    """What an image reference says about sglang."""

    official: bool  # sglang's official image (its tag may still name no release)
    version: str | None
    shown: str  # the reference with templates filled in, for messages
    location: Location
    why: str = ""  # official but no release: why
    candidates: tuple[str, ...] | None = None  # the releases a dated build lies between
    beyond: bool = False  # built from main after the newest shipped release (see ReleaseResolution)
    moving: str = ""  # a moving tag: "latest" (the newest release when pulled) or "main" (`dev`, undated nightly)


def unknown(why: str, source_kind: str = "none", source_text: str = "", location: Location | None = None,
            candidates: tuple[str, ...] | None = None, beyond: bool = False) -> ReleaseResolution:
    return ReleaseResolution(None, source_kind, source_text, location, False, why, candidates=candidates, beyond=beyond)


def resolve_release(cmd: LaunchCommand, governing: Governing | None, workspace: Workspace, settings: Settings) -> ReleaseResolution:
    """The release of ``cmd`` from the setting, its image, its own pip lines, then the nearest
    project's lock and manifests (module docstring). ``governing`` may be None when the caller
    has not discovered pins (then only the setting and the image count). A repository that ships
    patches to sglang's server arguments runs a release no schema describes: unknown, and no
    schema speaks for it (unless the setting or an official image says what runs)."""
    res = _resolve_release(cmd, governing, workspace, settings)
    if res.moving:
        return _moving_by_history(res, cmd, workspace)
    if res.version is not None and res.source_kind != "setting" and _PR_BUILD.search(res.version):
        # `sglang==0.5.6.post2.dev8005+pr.15207.g39d5bd57a`: a build of a pull request, whose
        # server arguments are that branch's (it may add any); no release's schema speaks for it
        return unknown(f"sglang {res.version} is a build of a pull request, which may add any argument",
                       "patch", res.source_text, res.location, candidates=())
    if res.source_kind in ("setting", "image", "fork"):
        return res
    if res.source_kind == "none":
        res = from_repository(res, cmd, workspace)
    patch = sglang_args_patch(cmd.path, workspace)
    if patch is None:
        return res
    base = f"sglang {res.version}" if res.version else "sglang"
    return unknown(f"the repository patches {base}'s server arguments ({patch}), which may add any argument",
                   "patch", "", None, candidates=())


# a local version label naming a pull request (`+pr.15207.g39d5bd57a`, `+pr15207`)
_PR_BUILD = re.compile(r"\+(?:[a-z0-9]+\.)*pr\.?\d+", re.IGNORECASE)

# Where repositories keep the patches they apply to their dependencies.
_PATCH_DIRS = ("patches", "patch")
_PATCH_SUFFIXES = (".patch", ".diff")
_ARGS_FILE = r"(?m)^\+\+\+ [^\n]*sglang/srt/server_args\.py"
_PATCH_SCAN_LIMIT = 2000  # directory entries looked at, at most (a patches tree, not a repository)


def sglang_args_patch(launch: Path, workspace: Workspace) -> str | None:
    """The first patch under the repository's ``patches/`` that changes sglang's
    ``srt/server_args.py``, relative to the repository root; None when there is none. Every
    directory listed and every patch read is a dependency of the result (the cache sees them)."""
    root = workspace.repo_root(launch.parent, workspace.root)
    if root is None:
        return None
    # one CLI lint: once per repository, not per launch
    return workspace.remembered(("sglang-args-patch", root), lambda: _args_patch(root, workspace))


def _args_patch(root: Path, workspace: Workspace) -> str | None:
    from kimi_lsp.workspace import SourceText, probed, touched

    seen = 0
    for name in _PATCH_DIRS:
        top = root / name
        probed(top)
        stack = [str(top)]
        while stack:
            d = stack.pop()
            try:
                entries = sorted(os.scandir(d), key=lambda e: e.name)
            except OSError:
                continue
            touched(d)
            for e in entries:
                seen += 1
                if seen > _PATCH_SCAN_LIMIT:
                    return None
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.name.endswith(_PATCH_SUFFIXES) and e.is_file(follow_symlinks=False):
                    src = workspace.read(Path(e.path))
                    if isinstance(src, SourceText) and re.search(_ARGS_FILE, src.text):
                        return Path(e.path).relative_to(root).as_posix()
    return None


def _resolve_release(cmd: LaunchCommand, governing: Governing | None, workspace: Workspace, settings: Settings) -> ReleaseResolution:
    from kimi_lsp.surfaces.model import Surface

    if settings.sglang_version:
        loc = Location(settings.source, Span(0, 0)) if settings.source is not None else None
        return ReleaseResolution(settings.sglang_version, "setting", "the `sglang-version` setting", loc, True)
    image = image_release(cmd, workspace)
    own = _own_pin(governing, workspace) if governing is not None else None
    if own is None and cmd.surface in (Surface.CI_YAML, Surface.KUBERNETES, Surface.COMPOSE):
        own = yaml_pip_release(cmd.path, workspace)
    # A Dockerfile's RUN pip, or a pod's `pip install && python -m sglang…`, runs inside the
    # image and replaces its sglang; a script's pip lines beside `docker run IMAGE` do not.
    pip_inside = cmd.surface is Surface.DOCKERFILE or (cmd.own_pins and cmd.surface is not Surface.SHELL)
    if own is not None and pip_inside:
        return own
    if image is not None and image.official:
        if image.version is None:
            return replace(unknown(image.why, "image", f"image `{image.shown}`", image.location, candidates=image.candidates,
                                   beyond=image.beyond), moving=image.moving)
        return ReleaseResolution(image.version, "image", f"image `{image.shown}`", image.location, True, from_image=True)
    if own is not None:
        return own
    fork = own_sglang_source(cmd.path, workspace)
    if fork is not None:
        return unknown(f"the repository carries its own sglang source ({fork}), which may define any argument",
                       "fork", "", None, candidates=())
    if governing is None:
        return unknown("no image tag, pip line, lock or manifest names it")
    return project_release(governing, workspace)


# sglang's server arguments live here in every release (the package at the repository root, or
# under python/ as in sglang's own repository and its forks).
_FORK_MARKERS = ("python/sglang/srt/server_args.py", "sglang/srt/server_args.py")


def own_sglang_source(launch: Path, workspace: Workspace) -> str | None:
    """The path of sglang's ``server_args.py`` inside the launch's repository, when the repository
    is sglang itself or a fork of it: its launches run that code, not a released schema."""
    root = workspace.repo_root(launch.parent, workspace.root)
    if root is None:
        return None
    # one CLI lint: once per repository, not per launch
    return workspace.remembered(("own-sglang-source", root), lambda: _own_sglang_source(root, workspace))


def _own_sglang_source(root: Path, workspace: Workspace) -> str | None:
    for rel in _FORK_MARKERS:
        if workspace.exists(root / rel):
            return rel
    return _sglang_submodule(root, workspace)


# `url = https://github.com/kvcache-ai/sglang.git`: a repository named sglang, whoever owns it
_SUBMODULE_URL = r"(?mi)^\s*url\s*=\s*(\S*?/sglang)(?:\.git)?/?\s*$"
_SUBMODULE_PATH = r"(?m)^\s*path\s*=\s*(.+?)\s*$"


def _sglang_submodule(root: Path, workspace: Workspace) -> str | None:
    """A git submodule that checks out sglang (a fork, or sglang at some commit): the repository
    builds and runs that source, which a snapshot of the repository does not even contain."""
    from kimi_lsp.workspace import SourceText

    src = workspace.read(root / ".gitmodules") if workspace.exists(root / ".gitmodules") else None
    if not isinstance(src, SourceText) or "sglang" not in src.text.lower():
        return None
    for section in re.split(r"(?m)^\s*\[submodule\b", src.text)[1:]:
        url = re.search(_SUBMODULE_URL, section)
        if url is None:
            continue
        path = re.search(_SUBMODULE_PATH, section)
        shown = path.group(1) if path else "sglang"
        return f"the git submodule `{shown}` from {url.group(1)}"
    return None


# -- images ------------------------------------------------------------------------------------


def image_release(cmd: LaunchCommand, workspace: Workspace) -> ImageRelease | None:
    """What the image running ``cmd`` says about sglang; None when there is no image or it is
    not sglang's official one (then it is no evidence either way)."""
    img = cmd.image
    if img is None:
        return None
    loc = Location(cmd.path, img.span)
    text = img.value.strip().strip("\"'")
    if "{{" in text:
        filled = _fill_helm(text, cmd.path, workspace)
        if filled is None:
            if _OFFICIAL_REPO in text:
                return ImageRelease(True, None, text, loc, f"image `{text}` is a template whose chart values are not literals")
            return None
        text, where = filled
        loc = where or loc
    if re.search(_SHELL_VAR, text):
        if _OFFICIAL_REPO in text.split(":")[0]:
            return ImageRelease(True, None, text, loc, _variable_tag_why(text, cmd, workspace))
        return None
    return parse_image(text, loc)


def _variable_tag_why(text: str, cmd: LaunchCommand, workspace: Workspace) -> str:
    """Why a tag written as a variable names no release; a Dockerfile ``ARG`` default is named,
    but it stays a guess: ``docker build --build-arg`` may set any other release."""
    from kimi_lsp.surfaces.model import Surface

    m = re.search(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", text)
    default = _arg_default(cmd.path, m.group(1), workspace) if m and cmd.surface is Surface.DOCKERFILE else None
    if m and default is not None:
        return (f"the tag comes from build argument `{m.group(1)}` (default `{default}`), "
                "which `docker build --build-arg` may set to another release")
    return f"the tag of image `{text}` is a variable"


def _arg_default(dockerfile: Path, name: str, workspace: Workspace) -> str | None:
    """The default of the first ``ARG name=value`` in the Dockerfile, read by the one reader."""
    from kimi_lsp.syntax import dockerfile as reader

    text = workspace.text(dockerfile)
    if text is None:
        return None
    escape, instructions, _ = reader.parse(text)
    for ins in instructions:
        if ins.keyword != "ARG":
            continue
        for var in reader.arg_vars(ins, escape, [], {}):
            if var.name.value == name and var.value is not None:
                return var.value.value
    return None


def parse_image(ref: str, location: Location) -> ImageRelease | None:
    """Parse one image reference (``[registry/]lmsysorg/sglang[:tag][@digest]``)."""
    name, _, digest = ref.partition("@")
    repo, tag = name, ""
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        repo, tag = name[:colon], name[colon + 1 :]
    low = repo.lower()
    for host in _HUB_HOSTS:
        if low.startswith(host):
            low = low[len(host) :]
            break
    if low in _DEV_BUILD_REPOS:
        return _dev_build(ref, tag, digest, location)
    if low != _OFFICIAL_REPO:
        return None
    if not tag:
        if digest:
            return ImageRelease(True, None, ref, location, f"image `{ref}` is pinned by digest only, which names no release")
        return ImageRelease(True, None, ref, location, f"image `{ref}` has no tag, so it is `latest`, a moving tag",
                            moving="latest")
    m = re.match(_RELEASE_TAG, tag)
    if m:
        return ImageRelease(True, m.group("version"), ref, location)
    moving = re.match(_MOVING_TAG, tag)
    if moving:
        dated = re.search(_DATED, tag)
        if dated is not None:
            day = f"{dated.group(1)}-{dated.group(2)}-{dated.group(3)}"
            between = releases_around(day)
            if between:
                after = "after" if len(between) == 1 else "between"
                return ImageRelease(True, None, ref, location,
                                    f"image tag `{tag}` is a build of main from {day}, {after} sglang {' and '.join(between)}",
                                    candidates=between, beyond=len(between) == 1)
        if moving.group("name") == "latest":
            return ImageRelease(True, None, ref, location, f"image tag `{tag}` is a moving tag that follows the newest release",
                                moving="latest")
        kind = "a nightly build of main" if moving.group("name") == "nightly" else "a moving tag that follows main"
        # `dev` and nightly builds are main, ahead of every release
        return ImageRelease(True, None, ref, location, f"image tag `{tag}` is {kind}", beyond=True, moving="main")
    return ImageRelease(True, None, ref, location, f"image tag `{tag}` names no sglang release")


def _dev_build(ref: str, tag: str, digest: str, location: Location) -> ImageRelease:
    """A ``rocm/sgl-dev`` build of main: the releases its source may lie between. Built on a
    known day: the releases around that day; else the release its tag names and the next one."""
    m = re.match(_RELEASE_TAG, tag) if tag else None
    if m is None:
        why = f"image `{ref}` is pinned by digest only" if digest and not tag else f"image tag `{tag or 'latest'}` names no sglang release"
        return ImageRelease(True, None, ref, location, why)
    version = m.group("version")
    dated = re.search(_DATED, tag)
    shipped = [v for v, _ in _release_dates()]
    if dated is not None:
        day = f"{dated.group(1)}-{dated.group(2)}-{dated.group(3)}"
        between = releases_around(day)
        when = f" from {day}"
    else:
        at = shipped.index(version) if version in shipped else -1
        between = tuple(shipped[at : at + 2]) if at >= 0 else ()
        when = ""
    if not between:
        return ImageRelease(True, None, ref, location, f"image `{ref}` is a development build of sglang {version}{when}, which no shipped schema describes")
    after = "after" if len(between) == 1 else "between"
    return ImageRelease(True, None, ref, location,
                        f"image `{ref}` is a development build of sglang {version}{when}, {after} sglang {' and '.join(between)}",
                        candidates=between, beyond=len(between) == 1)


# -- the repository and its history ------------------------------------------------------------

def from_repository(res: ReleaseResolution, cmd: LaunchCommand, workspace: Workspace) -> ReleaseResolution:
    """``res`` (nothing beside the launch names its release) narrowed by what the repository says
    (evidence.py: the nearest scope that names releases, the union of what it names), else by
    the day the file was last committed (gitdate.py: the releases recent on that day and the
    next one). Only with neither are today's newest releases the candidates, and ``why`` says so."""
    from kimi_lsp import evidence as ev

    root = _evidence_root(cmd.path, workspace)
    own, refs = _own_evidence(cmd.path, workspace)
    index = ev.repo_index(root, workspace, _placer())
    scope, found = index.for_launch(cmd.path, own, refs)
    if not found:
        found = [e for p, entry in sorted(index.entries.items()) if p != cmd.path for e in entry.evidence]
        scope = "elsewhere in the repository"
    fork = next((e for e in found if e.fork), None)
    if fork is not None:
        return unknown(f"the repository installs sglang from a fork ({fork.what} at {where(fork.location, workspace)}), "
                       "which may define any argument", "fork", "", fork.location, candidates=())
    releases, beyond = ev.releases_of(found)
    main = ev.any_main(found)
    if main is not None:
        # sglang's main (or a build no release describes) may hold options and choices newer than
        # every release: judged as a build of main of the file's day, only near misses said
        # main of the file's day holds the next release's code: that release stands for it among
        # the candidates (undated: the newest release kimi-lsp knows)
        from kimi_lsp.gitdate import LastChange
        from kimi_lsp.knowledge.schema import shipped_versions

        changed = _last_change(cmd.path, root, workspace)
        stand_in, main_beyond = main_of(changed.day if isinstance(changed, LastChange) else None)
        order = {v: i for i, v in enumerate(shipped_versions())}
        releases = tuple(sorted(set(releases) | set(stand_in), key=order.__getitem__))
        why = (f"the repository installs a build of sglang's main or one no release describes ({main.what} at "
               f"{where(main.location, workspace)} {scope})")
        return replace(res, source_kind="repository", why=why, candidates=releases, beyond=main_beyond,
                       evidence=tuple(found), as_of=stand_in[0] if stand_in and not main_beyond else "")
    if releases:
        first = found[0]
        more = f" and {len(found) - 1} more place{'s' if len(found) > 2 else ''}" if len(found) > 1 else ""
        shown = _span_words(releases)
        why = (f"nothing beside it pins sglang; the repository names sglang {shown} "
               f"({first.what} at {where(first.location, workspace)} {scope}{more})")
        return replace(res, source_kind="repository", why=why, candidates=releases, beyond=beyond,
                       evidence=tuple(found))
    return _from_history(res, cmd, root, workspace)


def _own_evidence(path: Path, workspace: Workspace) -> tuple[list[ReleaseEvidence], list[Path]]:
    """What the launch file itself names, and the files it builds from: read once per text of
    the file, not once per launch (a notebook of 4,000 launch cells)."""
    from kimi_lsp import evidence as ev
    from kimi_lsp.workspace import SourceText

    src = workspace.read(path)
    memo: dict[Path, tuple[object, list[ReleaseEvidence], list[Path]]] = workspace.__dict__.setdefault("_kimi_lsp_own_evidence", {})
    hit = memo.get(path)
    if hit is not None and hit[0] is src:
        return hit[1], hit[2]
    text = src.text if isinstance(src, SourceText) else ""
    own = ev.scan_text(path, text, _placer())
    refs = ev.referenced_files(path, text, workspace)
    memo[path] = (src, own, refs)
    return own, refs


def _last_change(path: Path, root: Path, workspace: Workspace) -> LastChange | Any:
    """``gitdate.last_change``, asked once per text of the file (every launch of a file shares
    it; the server's workspace is not stable, so ``remembered`` would ask git per launch)."""
    from kimi_lsp.gitdate import last_change

    src = workspace.read(path)
    memo: dict[Path, tuple[object, object]] = workspace.__dict__.setdefault("_kimi_lsp_last_change", {})
    hit = memo.get(path)
    if hit is not None and hit[0] is src:
        return hit[1]
    changed = last_change(path, root, workspace)
    memo[path] = (src, changed)
    return changed


def _from_history(res: ReleaseResolution, cmd: LaunchCommand, root: Path, workspace: Workspace) -> ReleaseResolution:
    from kimi_lsp.gitdate import LastChange

    changed = _last_change(cmd.path, root, workspace)
    if not isinstance(changed, LastChange):
        return replace(res, why=f"nothing in the repository names it, and {changed.why}: judged by today's newest releases")
    candidates = releases_at(changed.day)
    shallow = " (a shallow clone: the file may be older)" if changed.shallow else ""
    if not candidates:
        return replace(res, source_kind="history", last_change=changed, candidates=(),
                       why=f"the file was last committed on {changed.day}{shallow}, before every release kimi-lsp knows")
    newest_then = candidates[-2] if len(candidates) > 1 and _released_after(candidates[-1], changed.day) else candidates[-1]
    why = (f"nothing in the repository names it; the file was last committed on {changed.day} "
           f"(commit {changed.commit}){shallow}, when sglang {newest_then} was current")
    return replace(res, source_kind="history", last_change=changed, candidates=candidates, why=why)


def _moving_by_history(res: ReleaseResolution, cmd: LaunchCommand, workspace: Workspace) -> ReleaseResolution:
    """A moving tag pulled what it pointed to when the launch was written: `latest` the newest
    release of the day the file was last committed, `dev` main of that day (between that release
    and the next). Without a date (no history, uncommitted changes), ``res`` as it was."""
    from kimi_lsp.gitdate import LastChange

    root = _evidence_root(cmd.path, workspace)
    changed = _last_change(cmd.path, root, workspace)
    if not isinstance(changed, LastChange):
        return res
    recent = releases_at(changed.day)
    if not recent:
        return res
    newest_then = recent[-2] if len(recent) > 1 and _released_after(recent[-1], changed.day) else recent[-1]
    after = recent[-1] if recent[-1] != newest_then else None
    shallow = " (a shallow clone: the file may be older)" if changed.shallow else ""
    when = f"the file was last committed on {changed.day} (commit {changed.commit}){shallow}"
    if res.moving == "latest":
        if after is None:
            return res  # the newest release then is today's newest: nothing narrower to say
        return replace(res, candidates=(newest_then,), last_change=changed, beyond=False,
                       why=f"{res.why}; {when}, when it pulled sglang {newest_then}")
    stand_in, beyond = main_of(changed.day)
    return replace(res, candidates=stand_in, last_change=changed, beyond=beyond, as_of=stand_in[0] if stand_in else "",
                   why=f"{res.why}; {when}, when main lay {'after sglang ' + newest_then}"
                       f"{'' if beyond else ' (judged by that release and every later one: main holds what they bring)'}")


def _evidence_root(launch: Path, workspace: Workspace) -> Path:
    """The repository of ``launch``; without one, the workspace root when the launch lies under
    it, else the launch's own directory (never a walk of the whole filesystem)."""
    from kimi_lsp.workspace import is_below  # (not `in launch.parents`: quadratic in depth)

    ws_root = workspace.root
    fallback = ws_root if ws_root is not None and is_below(launch, ws_root) else launch.parent
    return workspace.repo_root(launch.parent, fallback)


def _span_words(releases: tuple[str, ...]) -> str:
    if len(releases) <= 4:
        return ", ".join(releases[:-1]) + (" and " if len(releases) > 1 else "") + releases[-1]
    return f"{releases[0]} to {releases[-1]} ({len(releases)} releases)"


# Releases recent on a day: as many as an unpinned launch is judged by today (engine.RECENT_RELEASES).
_RECENT_AT_DAY = 3


def releases_at(day: str) -> tuple[str, ...]:
    """The releases a file last changed on ``day`` may have been written for: the newest few
    published by then (each in its newest ``.postN`` of that time) and the first one after it
    (a file is often written for the release about to come). () before the first release."""
    dates = _release_dates()
    before = [v for v, d in dates if d <= day and not re.search(r"(a|b|rc|dev)\d*$", v)]
    after = [v for v, d in dates if d > day and not re.search(r"(a|b|rc|dev|\.post)\d*$", v)]
    if not before:
        return ()
    newest: dict[str, str] = {}  # base release -> its newest .postN by ``day``
    for v in before:
        newest[re.sub(r"\.post\d+$", "", v)] = v
    recent = list(newest.values())[-_RECENT_AT_DAY:]
    return tuple(recent + after[:1])


def main_of(day: str | None) -> tuple[tuple[str, ...], bool]:
    """The releases that stand for sglang's main branch as of ``day``, and whether main may hold
    code newer than all of them. Main holds what the release of that day has and what later
    releases bring (a feature lands on main first; some reach a release months later): the
    newest release of the day and every later one (each in its newest ``.postN``), so that only
    what none of them accepts is reported. Past the newest release (or with no day), main is
    beyond kimi-lsp's data."""
    dates = _release_dates()
    if not dates:
        return (), True
    final = [(v, d) for v, d in dates if not re.search(r"(a|b|rc|dev)\d*$", v)]
    newest: dict[str, str] = {}  # base release -> its newest .postN
    for v, _d in final:
        newest[re.sub(r"\.post\d+$", "", v)] = v
    if day is None:
        return (list(newest.values())[-1],), True
    first_day: dict[str, str] = {}  # base release -> the day it was first built, in build order
    for v, d in final:
        first_day.setdefault(re.sub(r"\.post\d+$", "", v), d)
    then = [b for b, d in first_day.items() if d <= day]
    later = [newest[b] for b, d in first_day.items() if d > day]
    before = [newest[then[-1]]] if then else []
    return tuple(before + later), not later


def _released_after(version: str, day: str) -> bool:
    return any(v == version and d > day for v, d in _release_dates())


# -- Helm ------------------------------------------------------------------------------------


def _fill_helm(text: str, launch: Path, workspace: Workspace) -> tuple[str, Location | None] | None:
    """``text`` with each ``{{ … }}`` replaced from the chart's values.yaml / Chart.yaml; None
    when the launch is in no chart or an expression is not a literal we can read. The location
    returned is that of the value that supplied the tag (the last template filled)."""
    chart = _chart_dir(launch, workspace)
    if chart is None:
        return None
    values = _yaml_doc(chart / "values.yaml", workspace)
    meta = _yaml_doc(chart / "Chart.yaml", workspace)
    where: Location | None = None
    out: list[str] = []
    pos = 0
    for m in re.finditer(_TEMPLATE, text):
        got = _eval_helm(m.group("expr"), chart, values, meta)
        if got is None:
            return None
        out.append(text[pos : m.start()])
        out.append(got[0])
        where = got[1] or where
        pos = m.end()
    out.append(text[pos:])
    return "".join(out), where


def evidence_files(cmd: LaunchCommand, workspace: Workspace) -> tuple[Path, ...]:
    """Files besides the launch file that the image's release was read from (a Helm chart's
    values.yaml and Chart.yaml): a change to them changes the launch's release."""
    if cmd.image is None or "{{" not in cmd.image.value:
        return ()
    chart = _chart_dir(cmd.path, workspace)
    return () if chart is None else (chart / "values.yaml", chart / "Chart.yaml")


def _chart_dir(launch: Path, workspace: Workspace) -> Path | None:
    d = launch.parent
    for _ in range(4):  # templates/ and at most a few sub-folders below the chart
        if workspace.exists(d / "Chart.yaml"):
            return d
        if d.parent == d:
            break
        d = d.parent
    return None


def _yaml_doc(path: Path, workspace: Workspace) -> tuple[Path, Any] | None:
    from kimi_lsp.workspace import SourceText

    src = workspace.read(path)
    if not isinstance(src, SourceText):
        return None
    from kimi_lsp.syntax import yaml as reader

    loaded = reader.load(src.text)  # the one YAML reader: its limits hold for a chart's values too
    if loaded.problems or not loaded.docs:
        return None
    return path, loaded.docs[0]


def _eval_helm(expr: str, chart: Path, values: tuple[Path, Any] | None, meta: tuple[Path, Any] | None) -> tuple[str, Location | None] | None:
    """One template expression: a ``.Values`` / ``.Chart`` path or a quoted literal, optionally
    piped through ``default X``; anything else (functions, conditionals) is not read."""
    parts = [p.strip() for p in expr.split("|")]
    value = _helm_term(parts[0], values, meta)
    for pipe in parts[1:]:
        words = pipe.split(None, 1)
        if words[:1] == ["default"] and len(words) == 2:
            if value is None or value[0] == "":
                value = _helm_term(words[1], values, meta)
        else:
            return None
    return value


def _helm_term(term: str, values: tuple[Path, Any] | None, meta: tuple[Path, Any] | None) -> tuple[str, Location | None] | None:
    if len(term) >= 2 and term[0] == term[-1] == '"':
        return term[1:-1], None
    for prefix, doc, keys in ((".Values.", values, None), (".Chart.", meta, {"AppVersion": "appVersion", "Version": "version"})):
        if not term.startswith(prefix):
            continue
        if doc is None:
            return None
        path = term[len(prefix) :].split(".")
        if keys is not None:
            path = [keys.get(path[0], path[0])] if len(path) == 1 else path
        return _yaml_scalar(doc, path)
    return None


def _yaml_scalar(doc: tuple[Path, Any], keys: list[str]) -> tuple[str, Location | None] | None:
    from kimi_lsp.syntax import ynodes as yaml

    path, node = doc
    for key in keys:
        if not isinstance(node, yaml.MappingNode):
            return None
        nxt = None
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                nxt = v
        if nxt is None:
            return ("", None)  # an absent value: `default` may supply one
        node = nxt
    if not isinstance(node, yaml.ScalarNode):
        return None
    return str(node.value), Location(path, Span(node.start_mark.index, node.end_mark.index))


# -- pins ------------------------------------------------------------------------------------


def _own_pin(gov: Governing, workspace: Workspace) -> ReleaseResolution | None:
    """The last exact ``sglang`` pin among the launch file's own installs (a Dockerfile's last
    install wins in its image); a range there is an unknown release unless nothing else speaks."""
    exact: tuple[PinSource, Pin] | None = None
    ranged: tuple[PinSource, Pin] | None = None
    for src in gov.own:
        for p in src.pins_for(SGLANG):
            if p.version:
                exact = (src, p)
            else:
                ranged = (src, p)
    if exact is not None:
        return _from_pin("pip", *exact, workspace)
    if ranged is not None:
        src, p = ranged
        shown = _pin_text(src, p, workspace)
        return unknown(f"`{shown}` at {where(Location(src.path, p.span), workspace)} is a range, not one release",
                       "pip", f"`{shown}`", Location(src.path, p.span), candidates=admitted(p.specifier))
    return None


def yaml_pip_release(path: Path, workspace: Workspace) -> ReleaseResolution | None:
    """``pip install sglang==X`` in the shell scripts of a YAML file (a SkyPilot ``setup:``, a CI
    step, a container's ``sh -c``). The scripts are read by the shell install reader over the
    file's text with everything but those scalars blanked (offsets stay the file's). One release
    installed in the file is evidence; several different ones are not (which runs is unclear)."""
    from kimi_lsp.workspace import SourceText

    src = workspace.read(path)
    if not isinstance(src, SourceText):
        return None
    memo: dict[Path, tuple[SourceText, ReleaseResolution | None]] = workspace.__dict__.setdefault("_kimi_lsp_yaml_pip", {})
    hit = memo.get(path)
    if hit is not None and hit[0] is src:  # every launch of a large manifest asks once
        return hit[1]
    # the pattern starts with \b, so re scans it character by character: ~1 ms on a 2,000-line
    # manifest, once per file (it was once per launch, before the memo)
    installs = "install" in src.text and re.search(_INSTALLS_SGLANG, src.text)
    res = _yaml_pip_release(src, workspace) if installs else None
    memo[path] = (src, res)
    return res


def _yaml_pip_release(src: SourceText, workspace: Workspace) -> ReleaseResolution | None:
    from kimi_lsp.workspace import SourceText

    path = src.path
    masked = _scripts_only(src.text)
    if masked is None:
        return None
    from kimi_lsp.pins.install_cmds import read_install_pins

    pins_src = read_install_pins(SourceText(src.path, masked), "shell")
    found = [p for p in pins_src.pins_for(SGLANG)]
    if not found:
        return None
    versions = {p.version for p in found}
    if len(versions) > 1:
        shown = ", ".join(sorted(f"`{_pin_text(pins_src, p, workspace)}`" for p in found))
        return unknown(f"{path.name} installs several sglang requirements ({shown})", "pip", "", Location(path, found[0].span))
    p = found[-1]
    if p.version:
        return _from_pin("pip", pins_src, p, workspace)
    shown = _pin_text(pins_src, p, workspace)
    loc = Location(path, p.span)
    return unknown(f"`{shown}` at {where(loc, workspace)} is a range, not one release", "pip", f"`{shown}`", loc)


def _scripts_only(text: str) -> str | None:
    """``text`` with every character outside literal-block (``|``) and single-line string
    scalars replaced by a space (newlines kept)."""
    from kimi_lsp.syntax import yaml as reader
    from kimi_lsp.syntax import ynodes as yaml

    loaded = reader.load(text)
    if loaded.problems:
        return None
    keep: list[tuple[int, int]] = []
    stack = list(loaded.docs)
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            stack.extend(v for _, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.ScalarNode) and "install" in node.value:
            a, b = node.start_mark.index, node.end_mark.index
            if node.style == "|":
                nl = text.find("\n", a)
                if nl < 0:
                    continue
                keep.append((nl + 1, b))
            elif node.style is None and "\n" not in text[a:b]:
                keep.append((a, b))
            elif node.style in ("'", '"') and "\n" not in text[a:b]:
                keep.append((a + 1, b - 1))
    if not keep:
        return None
    out = ["\n" if c == "\n" else " " for c in text]
    for a, b in keep:
        out[a:b] = text[a:b]
    return "".join(out)


def project_release(gov: Governing, workspace: Workspace) -> ReleaseResolution:
    for proj in gov.projects:
        for src in proj.locks:
            for p in src.pins_for(SGLANG):
                if p.version:
                    return _from_pin("lock", src, p, workspace)
        ranged = None
        for src in proj.manifests:
            for p in src.pins_for(SGLANG):
                if p.version:
                    return _from_pin("manifest", src, p, workspace)
                ranged = ranged or (src, p)
        if ranged is not None:
            src, p = ranged
            shown = _pin_text(src, p, workspace)
            loc = Location(src.path, p.span)
            return unknown(f"`{shown}` at {where(loc, workspace)} is a range and no lock decides it", "manifest", f"`{shown}`", loc,
                           candidates=admitted(p.specifier))
    return unknown("no image tag, pip line, lock or manifest names it")


def admitted(specifier: str) -> tuple[str, ...] | None:
    """The shipped releases a range admits (pre-releases only when the range names one, as pip
    does); None when the specifier cannot be read (then the recent releases stand in)."""
    from kimi_lsp.pep440 import InvalidSpecifier, SpecifierSet

    from kimi_lsp.knowledge.schema import shipped_versions

    try:
        spec = SpecifierSet(specifier)
    except InvalidSpecifier:
        return None
    return tuple(spec.filter(shipped_versions()))


def _from_pin(kind: str, src: PinSource, p: Pin, workspace: Workspace) -> ReleaseResolution:
    assert p.version is not None
    loc = Location(src.path, p.span)
    if kind == "lock":
        text = ""  # "from uv.lock:2547" says it all
    else:
        text = f"`{_pin_text(src, p, workspace)}`"
    return ReleaseResolution(p.version, kind, text, loc, True)


def _pin_text(src: PinSource, p: Pin, workspace: Workspace) -> str:
    text = workspace.text(src.path)
    if text is None or p.span.end <= p.span.start:
        return f"sglang{p.specifier}"
    raw = text[p.span.start : p.span.end]
    if src.path.suffix.lower() == ".ipynb":
        raw = raw.replace('\\"', '"')  # a notebook cell's quotes, as the cell shows them
    shown = " ".join(raw.split()).strip("\"'")
    return shown if len(shown) <= 80 else f"sglang{p.specifier}"


def image_pin_source(res: ReleaseResolution, launch: Path) -> PinSource | None:
    """The official image's sglang, as a pin source that governs the launch before any other
    (its flashinfer-python is the one that release pins); None unless the launch runs in one."""
    from kimi_lsp.pins.model import Pin, PinFormat, PinSource

    if not res.from_image or res.version is None or res.location is None:
        return None
    span = res.location.span
    pin = Pin(SGLANG, Located(SGLANG, span), f"=={res.version}", res.version, span, None)
    return PinSource(res.location.path, PinFormat.IMAGE, False, (pin,))


# -- wording ---------------------------------------------------------------------------------


def where(loc: Location, workspace: Workspace) -> str:
    """``path:line`` of an evidence location, the path relative to the workspace root."""
    from kimi_lsp.workspace import SourceText

    root = workspace.root
    try:
        rel = loc.path.relative_to(root).as_posix() if root is not None else loc.path.name
    except ValueError:
        rel = loc.path.name
    src = workspace.read(loc.path)
    if not isinstance(src, SourceText):
        return rel
    return f"{rel}:{src.lines.line_of(loc.span.start) + 1}"


def describe(res: ReleaseResolution, workspace: Workspace) -> str:
    """"sglang 0.5.5.post3, from image `lmsysorg/sglang:v0.5.5.post3` at deploy.yaml:14"."""
    if res.location is None:
        return f"sglang {res.version}, from {res.source_text}"
    at = where(res.location, workspace)
    if res.source_kind == "setting":
        return f"sglang {res.version}, from {res.source_text} in {at.rsplit(':', 1)[0]}"
    return f"sglang {res.version}, from {res.source_text} at {at}" if res.source_text else f"sglang {res.version}, from {at}"


def releases_around(day: str) -> tuple[str, ...]:
    """The last shipped release built on or before ``day`` (YYYY-MM-DD) and the first built after
    it: a build of main from that day holds code between the two. One release when ``day`` is
    past the newest; () when it is before the oldest (no schema can speak for it)."""
    dates = _release_dates()
    before = [v for v, d in dates if d <= day]
    after = [v for v, d in dates if d > day]
    if not before:
        return ()
    return (before[-1], after[0]) if after else (before[-1],)


@functools.cache
def _release_dates() -> tuple[tuple[str, str], ...]:
    """(release, build day) in build order, from data/sglang_release_dates.json
    (scripts/build_release_dates.py)."""
    import json

    from kimi_lsp.knowledge.schema import DATA_DIR, shipped_versions

    try:
        with open(os.path.join(DATA_DIR, "sglang_release_dates.json"), encoding="utf-8") as fh:
            raw = json.load(fh)
    except (OSError, ValueError):
        return ()
    order = {v: i for i, v in enumerate(shipped_versions())}  # same-day builds: by version
    return tuple(sorted(((v, d) for v, d in raw.items() if v in order), key=lambda vd: (vd[1], order[vd[0]])))



@functools.cache
def _placer() -> Any:
    """``evidence.Placer``: this module's image and range readers, handed to evidence.py (which
    sits below this module)."""
    from kimi_lsp.evidence import Placer

    return Placer(parse_image, admitted)
