"""Which sglang releases a repository names, and which of them speak for a given launch.

Most launches have no pin beside them. The repository usually still says which sglang runs them,
somewhere: a benchmark matrix that maps each script to ``image: lmsysorg/sglang:v0.5.12-rocm700``,
a CI template's container, a compose ``build:`` whose Dockerfile starts ``FROM
lmsysorg/sglang:v0.5.14-runtime``, ``git clone -b v0.5.13 .../sglang``, ``SGLANG_TAG=v0.5.15`` in a
setup script, a README's "SGLang v0.5.17 + 26 local patches", a notebook's ``pip install
sglang==0.5.4.post2``. Judging such a launch by today's newest releases reports every flag that
sglang removed since as a failure, which it is not on the release that runs it.

``scan_text`` finds those statements in one file (each with its place and words);
``RepoIndex`` holds them for a whole repository (one bounded walk, kept per workspace) and answers
``for_launch``: the evidence of the nearest scope that has any, nearest first:

1. the launch file itself (prose, another image in the same compose file, a notebook's markdown);
2. files the launch refers to (a compose ``build:`` directory's Dockerfile) and files that refer to
   the launch by name (a matrix or workflow that runs ``{model}_{prec}_{gpu}.sh``);
3. the launch's own directory, then each directory above it, up to the repository root;
4. the whole repository.

Within a scope every release named counts: nothing there says which one runs this launch, so the
launch is judged by each (only what every one of them rejects is reported).
"""
from __future__ import annotations

import re
from pathlib import Path

from kimi_lsp._record import dataclass
from kimi_lsp.diagnostics import Location
from kimi_lsp.text import Span
from kimi_lsp.workspace import is_below

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from kimi_lsp.workspace import Workspace


@dataclass(frozen=True, slots=True)
class Placer:
    """What release.py knows of image tags and version ranges, handed in (release.py sits above
    this module): ``image(ref, location)`` is ``release.parse_image``, ``admitted(spec)``
    ``release.admitted``."""

    image: Callable[[str, Location], Any]
    admitted: Callable[[str], tuple[str, ...] | None]


@dataclass(frozen=True, slots=True)
class ReleaseEvidence:
    """One place that names sglang releases."""

    releases: tuple[str, ...]  # the shipped releases it stands for (one, or the pair a build lies between)
    location: Location
    what: str  # the words, as shown in messages: "image `lmsysorg/sglang:v0.5.12-rocm700-mi35x`"
    beyond: bool = False  # it names a release newer than every shipped schema
    fork: bool = False  # it installs sglang from a fork's branch: no release's schema speaks for it
    # it installs sglang's main (an unpinned `git+…/sglang`, a clone without a tag, an official
    # image tag naming no release such as `dev-gemma4`): code newer than any release may run
    main: bool = False
    # evidence only for launches in the same file: an official image of a model's own build
    # (`lmsysorg/sglang:deepseek-v4-hopper`) says what its own container runs, not its neighbours
    own_only: bool = False


# -- what names a release --------------------------------------------------------------------

_VERSION = r"\d+\.\d+(?:\.\d+){1,2}(?:(?:a|b|rc)\d+)?(?:\.post\d+)?"
# an image reference whose repository name says sglang (any registry), or sglang's AMD dev builds
# an image reference whose repository name says sglang (any registry), or sglang's AMD dev builds;
# matched on the word around each "sglang"/"sgl-dev" (_image_words), never scanned for
_IMAGE = re.compile(r"(?:[\w.-]+(?::\d+)?/)*(?:[\w.-]*sglang[\w.-]*|sgl-dev):[\w.+-]+", re.IGNORECASE)
_IMAGE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/:+@")
_IMAGE_NAME = re.compile(r"sglang|sgl-dev", re.IGNORECASE)
# another package of the sglang project, with its own version numbers
_NOT_SGLANG_IMAGE = re.compile(r"router|gateway|kt-kernel|sgl-kernel|diffusion", re.IGNORECASE)
# another project's image that ships sglang inside, tagged with that project's own release
# (NVIDIA Dynamo's `ai-dynamo/sglang-runtime:0.4.1` is Dynamo 0.4.1, not sglang 0.4.1)
_VENDOR_IMAGE = re.compile(r"(?:^|/)(?:ai-)?dynamo(?:/|$)", re.IGNORECASE)
_TAG_RELEASE = re.compile(rf"^v?(?P<version>{_VERSION})(?:[-_.+][\w.+-]*)?$")
_PIN = re.compile(
    r"(?<![\w.-])sglang(?:\[[^\]\n]{0,80}\])?[ \t]{0,8}(?P<spec>(?:===?|>=|~=|<=|!=|>|<)[ \t]{0,8}v?[\w.*+!-]{1,40}"
    r"(?:[ \t]{0,8},[ \t]{0,8}(?:===?|>=|~=|<=|!=|>|<)[ \t]{0,8}[\w.*+!-]{1,40}){0,4})", re.IGNORECASE)
_LOCK_ENTRY = re.compile(r'(?m)^name[ \t]*=[ \t]*"sglang"[ \t]*\r?\nversion[ \t]*=[ \t]*"(?P<version>[^"\n]{1,40})"')
_GIT_URL_REF = re.compile(rf"git\+\S{{0,200}}?/sglang(?:\.git)?@v?(?P<version>{_VERSION})(?![\w]|\.\d)", re.IGNORECASE)
_CLONE = re.compile(r"\bgit[ \t]+clone\b")
_CLONE_BRANCH = re.compile(rf"(?:-b|--branch)(?:[ \t]+|=)[\"']?v?(?P<version>{_VERSION})[\"']?(?![\w]|\.\d)")
# an install of sglang from git without a tag: its main branch (`#subdirectory=python` follows)
_GIT_URL_MAIN = re.compile(r"git\+\S{0,200}?/sgl-project/sglang(?:\.git)?(?=[#\s\"']|$)", re.IGNORECASE)
_CLONE_OWNER = re.compile(r"[/:](?P<owner>[\w.-]+)/sglang(?:\.git)?(?![\w.-])", re.IGNORECASE)
_CHECKOUT = re.compile(rf"\bgit[ \t]+(?:checkout|switch)(?:[ \t]+-[\w-]+)*[ \t]+(?:tags/)?v(?P<version>{_VERSION})(?![\w]|\.\d)")
_VARIABLE = re.compile(
    rf"\b(?P<name>SGLANG_[A-Z0-9_]{{0,40}}(?:VERSION|TAG|REF|RELEASE|BRANCH)[A-Z0-9_]{{0,20}})[ \t]*[:=][ \t]*[\"']?v?(?P<version>{_VERSION})(?![\w]|\.\d)",
    re.IGNORECASE)
_PROSE = re.compile(rf"(?<![\w/.-])SGLang[ \t]+(?:version[ \t]+|release[ \t]+)?v?(?P<version>{_VERSION})(?![\w]|\.\d)", re.IGNORECASE)


def scan_text(path: Path, text: str, place: Placer) -> list[ReleaseEvidence]:
    """Every statement in ``text`` that names an sglang release shipped with kimi-lsp (or one it
    can place among them), in file order. Only the lines that mention sglang (and the line after
    each, where a lock's version follows its name) are read: a repository's text is mostly other
    things, and patterns tried at every position of it cost seconds on a large repository."""
    low = text.lower()
    if "sgl" not in low:
        return []
    found: list[tuple[int, ReleaseEvidence]] = []
    taken: list[tuple[int, int]] = []  # spans already read as one statement (an image's tag is no prose)

    def add(start: int, end: int, what: str, releases: tuple[str, ...], beyond: bool = False, fork: bool = False,
            main: bool = False, own_only: bool = False) -> None:
        if not releases and not beyond and not fork and not main:
            return
        if any(a <= start < b or start <= a < end for a, b in taken):
            return
        taken.append((start, end))
        found.append((start, ReleaseEvidence(releases, Location(path, Span(start, end)), what, beyond, fork, main, own_only)))

    clones_sglang = False
    for lo, hi in _windows(text, low):
        clones_sglang |= _scan_window(text, lo, hi, path, add, place)
    if clones_sglang:
        for m in _CHECKOUT.finditer(text):
            add(m.start(), m.end(), f"`{_short(m.group(0))}` of sglang", *_placed(m.group("version")))
    found.sort(key=lambda se: se[0])
    return [e for _, e in found]


def _windows(text: str, low: str) -> list[tuple[int, int]]:
    """The spans of the lines that mention ``sgl``, each with the line after it, merged."""
    out: list[tuple[int, int]] = []
    i = low.find("sgl")
    while i >= 0:
        start = text.rfind("\n", 0, i) + 1
        end = text.find("\n", i)
        if end < 0:
            end = len(text)
        after = text.find("\n", end + 1) if end < len(text) else -1
        stop = len(text) if after < 0 else after
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], stop))
        else:
            out.append((start, stop))
        i = low.find("sgl", end)
    return out


def _scan_window(text: str, lo: int, hi: int, path: Path, add: Any, place: Placer) -> bool:
    """The statements in ``text[lo:hi]``; whether a line there clones sglang."""
    for start, end in _image_words(text, lo, hi):
        ref = text[start:end]
        if _IMAGE.fullmatch(ref) is None:
            continue
        placed = _image_releases(ref, Location(path, Span(start, end)), place)
        if placed is _MAIN_BUILD:
            add(start, end, f"image `{ref}` (a build no release describes)", (), main=True, own_only=True)
        elif placed is not None:
            add(start, end, f"image `{ref}`", *placed)
    for m in _GIT_URL_REF.finditer(text, lo, hi):
        add(m.start(), m.end(), f"`{_short(m.group(0))}`", *_placed(m.group("version")))
    for m in _GIT_URL_MAIN.finditer(text, lo, hi):
        add(m.start(), m.end(), f"`{_short(m.group(0))}` (sglang's main branch)", (), main=True)
    for m in _PIN.finditer(text, lo, hi):
        spec = re.sub(r"\s+", "", m.group("spec"))
        placed = _spec_releases(spec, place)
        if placed is not None:
            add(m.start(), m.end(), f"`{_short(m.group(0))}`", *placed)
    for m in _LOCK_ENTRY.finditer(text, lo, hi):
        add(m.start(), m.end(), f"sglang {m.group('version')} in the lock", *_placed(m.group("version")))
    clones_sglang = False
    for m in _CLONE.finditer(text, lo, hi):
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        line_end = len(text) if line_end < 0 else line_end
        line = text[line_start:line_end]
        if "sglang" not in line.lower():
            continue
        clones_sglang = True
        b = _CLONE_BRANCH.search(line)
        if b is not None:
            add(line_start + b.start(), line_start + b.end(), f"`git clone -b v{b.group('version')}` of sglang",
                *_placed(b.group("version")))
            continue
        owner = _CLONE_OWNER.search(line)
        if owner is not None and owner.group("owner").lower() != "sgl-project":
            add(line_start + owner.start(), line_start + owner.end(),
                f"a clone of the fork `{owner.group(0).lstrip('/:')}`", (), fork=True)
        elif owner is not None and _CHECKOUT.search(text) is None and "-b" not in line.split() and "--branch" not in line:
            add(line_start + owner.start(), line_start + owner.end(),
                "a clone of sglang's main branch", (), main=True)
    for m in _VARIABLE.finditer(text, lo, hi):
        add(m.start(), m.end(), f"`{_short(m.group(0))}`", *_placed(m.group("version")))
    for m in _PROSE.finditer(text, lo, hi):
        add(m.start(), m.end(), f"\"{_short(m.group(0))}\"", *_placed(m.group("version")))
    return clones_sglang


def _image_words(text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """The spans of the words (image-reference characters) around each ``sglang``/``sgl-dev``, a
    digest cut off: linear in the text, where a pattern tried at every position backtracks."""
    out: list[tuple[int, int]] = []
    last_end = -1
    for m in _IMAGE_NAME.finditer(text, lo, len(text) if hi is None else hi):
        if m.start() < last_end:
            continue  # inside the word already read
        a = m.start()
        while a > 0 and text[a - 1] in _IMAGE_CHARS and m.start() - a < 300:
            a -= 1
        b = m.end()
        while b < len(text) and text[b] in _IMAGE_CHARS and b - m.end() < 300:
            b += 1
        last_end = b
        while a < m.start() and text[a] in ":/@.-":
            a += 1  # a reference starts with a name
        word = text[a:b].split("@", 1)[0].rstrip(".:-/")
        if ":" in word:
            out.append((a, a + len(word)))
    return out


def _short(words: str) -> str:
    shown = " ".join(words.split())
    return shown if len(shown) <= 100 else shown[:97] + "..."


def _placed(version: str) -> tuple[tuple[str, ...], bool]:
    """The shipped releases that stand for ``version``: itself, the two it lies between (a
    release candidate, a post release kimi-lsp does not ship), or the newest with ``beyond`` set
    when it is newer than every shipped one."""
    from kimi_lsp.knowledge.schema import shipped_versions
    from kimi_lsp.pep440 import InvalidVersion, Version

    shipped = shipped_versions()
    if version in shipped:
        return (version,), False
    try:
        v = Version(version)
        if len(str(v)) > 40:
            return (), False
        below = [s for s in shipped if Version(s) < v]
        above = [s for s in shipped if Version(s) > v]
    except (InvalidVersion, ValueError):
        return (), False
    if not below:
        return (), False  # older than every shipped schema: nothing speaks for it
    if not above:
        return (below[-1],), True
    return (below[-1], above[0]), False


_MAIN_BUILD: tuple[tuple[str, ...], bool] = ((), True)  # (compared by identity)


def _spec_releases(spec: str, place: Placer) -> tuple[tuple[str, ...], bool] | None:
    """``==X`` names X; a range names every shipped release it admits."""
    m = re.fullmatch(rf"===?v?({_VERSION})", spec)
    if m is not None:
        return _placed(m.group(1))
    admits = place.admitted(spec)
    if admits is None:
        return None
    return admits, False


def _image_releases(ref: str, location: Location, place: Placer) -> tuple[tuple[str, ...], bool] | None:
    name = ref.split("@", 1)[0]
    repo, _, tag = name.rpartition(":")
    if not repo or "/" in tag:
        return None
    official = place.image(ref, location)
    if official is not None:
        if official.version is not None:
            return _placed(official.version)
        if official.candidates:
            return official.candidates, official.beyond
        if official.beyond or (tag and not official.moving and "digest" not in official.why):
            return _MAIN_BUILD  # `dev`, a nightly, a model's own build (`gemma4`): newer code than a release
        return None  # `latest` or a digest: names no release
    if _NOT_SGLANG_IMAGE.search(repo.rsplit("/", 1)[-1]) or _VENDOR_IMAGE.search(repo):
        return None
    m = _TAG_RELEASE.match(tag)
    return _placed(m.group("version")) if m else None


# -- names a file uses for other files -----------------------------------------------------------

_SCRIPT_SUFFIX = re.compile(r"\.(?:sh|bash|py|ya?ml|toml|sbatch|slurm)(?![\w])")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_${}.*-")
_PLACEHOLDER = re.compile(r"\$\{[^}]*\}|\{[^}]*\}|\$[A-Za-z_]\w*")
_BUILD_REF = re.compile(r"(?m)^[ \t-]*(?:build|context|dockerfile)[ \t]*:[ \t]*[\"']?(?P<path>[\w./-]+)[\"']?[ \t]*(?:#.*)?$")


def name_patterns(text: str) -> tuple[str, ...]:
    """The file names ``text`` mentions, as shell-style patterns: a matrix's
    ``{model}_{prec}_{gpu}.sh`` becomes ``*_*_*.sh``."""
    out: set[str] = set()
    for m in _SCRIPT_SUFFIX.finditer(text):
        a = m.start()
        while a > 0 and text[a - 1] in _NAME_CHARS and m.start() - a < 120:
            a -= 1
        word = text[a:m.end()]
        glob = _PLACEHOLDER.sub("*", word)
        if glob.strip("*.") and len(glob.replace("*", "")) >= 4:
            out.add(glob)
    return tuple(sorted(out))


def referenced_files(launch: Path, text: str, workspace: Workspace) -> list[Path]:
    """Files a compose/CI launch names by path for its build (``build: ./docker``,
    ``dockerfile: Dockerfile.sglang``): their ``FROM`` is the image its service runs."""
    out: list[Path] = []
    for m in _BUILD_REF.finditer(text):
        rel = m.group("path")
        if rel.startswith(("http:", "https:", "git@")) or ".." in Path(rel).parts:
            continue
        target = launch.parent / rel
        if workspace.is_dir(target):
            for name in ("Dockerfile", "Containerfile"):
                if workspace.exists(target / name):
                    out.append(target / name)
        elif workspace.exists(target):
            out.append(target)
    return out


# -- the repository's index ----------------------------------------------------------------------

# The walk is bounded: a repository is read for evidence once per run (and kept by the server),
# so its cost is paid by the first unknown-release launch.
_MAX_ENTRIES = 50_000
_MAX_FILES = 6_000
_MAX_BYTES = 1 << 20  # per file


@dataclass(frozen=True, slots=True)
class _Entry:
    evidence: tuple[ReleaseEvidence, ...]
    names: tuple[str, ...]  # the file names it mentions (name_patterns)


class RepoIndex:
    """The release evidence of every text file of one repository (bounded walk)."""

    def __init__(self, root: Path, place: Placer) -> None:
        self.root = root
        self.place = place
        self.entries: dict[Path, _Entry] = {}
        self.complete = True  # False when a bound stopped the walk
        self.files_read = 0

    def build(self) -> RepoIndex:
        from kimi_lsp.walk import TextWalk

        files = TextWalk(self.root, _MAX_ENTRIES, _MAX_FILES)
        for path in files:
            self._read(path)
        self.complete = files.complete
        return self

    def _read(self, path: Path) -> None:
        from kimi_lsp.workspace import read_regular

        try:
            data = read_regular(path, _MAX_BYTES)
        except (OSError, ValueError):
            return
        self.files_read += 1
        if b"sgl" not in data and b"SGL" not in data and b"Sgl" not in data:
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return
        if "\r" in text:
            text = text.replace("\r\n", "\n")  # offsets as the engine reads the file (see decode_bytes)
        found = [e for e in scan_text(path, text, self.place) if not e.own_only]
        if found:
            self.entries[path] = _Entry(tuple(found), name_patterns(text))

    def forget(self, path: Path) -> None:
        """``path`` changed (the server's file watcher): read it again."""
        from kimi_lsp.walk import is_text_name

        self.entries.pop(path, None)
        if path.is_file() and is_text_name(path.name):
            self._read(path)

    def for_launch(self, launch: Path, own: list[ReleaseEvidence], referenced: list[Path]) -> tuple[str, list[ReleaseEvidence]]:
        """(scope, evidence) of the nearest scope that has any; ("", []) when none has."""
        if own:
            return "in this file", own
        near: list[ReleaseEvidence] = []
        for path in referenced:
            entry = self.entries.get(path)
            if entry is not None:
                near.extend(entry.evidence)
        for path, entry in self.entries.items():
            if path != launch and any(_glob_match(launch.name, g) for g in entry.names):
                near.extend(entry.evidence)
        if near:
            return "in a file that names or builds this launch", near
        d = launch.parent
        while True:
            here = [e for p, entry in self.entries.items() if p.parent == d and p != launch for e in entry.evidence]
            if here:
                return ("beside it" if d == launch.parent else f"in {_rel(d, self.root)}/"), here
            if d == self.root or d.parent == d or not is_below(d, self.root):  # (not `in d.parents`: quadratic in depth)
                break
            d = d.parent
        return "", []


def _glob_match(name: str, glob: str) -> bool:
    """``fnmatchcase`` for the globs ``name_patterns`` makes (``*`` its only wildcard), without
    compiling a regular expression for each of a repository's thousands of names."""
    if "*" not in glob:
        return name == glob
    parts = glob.split("*")
    if not (name.startswith(parts[0]) and name.endswith(parts[-1])) or len(name) < len(parts[0]) + len(parts[-1]):
        return False
    at = len(parts[0])
    stop = len(name) - len(parts[-1])
    for part in parts[1:-1]:
        found = name.find(part, at, stop)
        if found < 0:
            return False
        at = found + len(part)
    return True


def _rel(d: Path, root: Path) -> str:
    try:
        rel = d.relative_to(root).as_posix()
    except ValueError:
        return d.as_posix()
    return rel if rel != "." else "the repository root"


def repo_index(root: Path, workspace: Workspace, place: Placer) -> RepoIndex:
    """The repository's index, made once per workspace (one CLI run; the server keeps it until a
    file under the root changes, when only that file is read again)."""
    indexes: dict[Path, RepoIndex] = workspace.__dict__.setdefault("_kimi_lsp_repo_index", {})
    index = indexes.get(root)
    if index is None:
        index = indexes[root] = RepoIndex(root, place).build()
    return index


def any_main(evidence: list[ReleaseEvidence]) -> ReleaseEvidence | None:
    """The first place that installs sglang's main branch or a build no release describes."""
    return next((e for e in evidence if e.main), None)


def releases_of(evidence: list[ReleaseEvidence]) -> tuple[tuple[str, ...], bool]:
    """The union of the releases ``evidence`` names, in shipped order, and whether any is newer
    than every shipped schema."""
    from kimi_lsp.knowledge.schema import shipped_versions

    order = {v: i for i, v in enumerate(shipped_versions())}
    named = {v for e in evidence for v in e.releases if v in order}
    return tuple(sorted(named, key=order.__getitem__)), any(e.beyond for e in evidence)
