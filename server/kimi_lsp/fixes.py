"""Applying fixes: splice edits into texts, re-lint until stable, write atomically.

A fix is all-or-nothing: when one of its edits overlaps an edit already taken, the whole fix
waits for the next pass (ruff's rule). A fix the caller may not apply (it edits a lockfile, or a
file reached through a link out of the repository) is never applied in part either; it is
reported in ``FixOutcome.refused`` with the reason. A pass whose output no longer parses as TOML
or YAML is rolled back (ruff rejects such a pass too).

Files keep their BOM, encoding, byte order, line endings and permissions; writes go through a
temporary file in the same directory and a rename, so a reader never sees half a file.
"""
from __future__ import annotations

import codecs
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from kimi_lsp import _regex
from kimi_lsp._record import dataclass, field
from kimi_lsp.diagnostics import Applicability, Diagnostic, Edit, Fix
from kimi_lsp.workspace import SourceText, Workspace, decode_bytes, find_repo_root

MAX_PASSES = 10

# ``may_edit(path) -> reason`` : None allows edits to ``path``; a string says why not.
EditPolicy = Callable[[Path], "str | None"]


def allowed(fix: Fix, unsafe: bool) -> bool:
    if fix.applicability is Applicability.SAFE:
        return bool(fix.edits)
    return unsafe and fix.applicability is Applicability.UNSAFE and bool(fix.edits)


def choose_fixes(diags: Iterable[Diagnostic], unsafe: bool) -> list[tuple[Diagnostic, Fix]]:
    """The first applicable fix of each diagnostic (fixes are listed safest first)."""
    out = []
    for d in diags:
        for f in d.fixes:
            if allowed(f, unsafe):
                out.append((d, f))
                break
    return out


def splice(text: str, edits: list[Edit]) -> str:
    for e in sorted(edits, key=lambda e: (e.span.start, e.span.end), reverse=True):
        text = text[: e.span.start] + e.new_text + text[e.span.end :]
    return text


def plan(fixes: list[tuple[Diagnostic, Fix]], texts: dict[Path, str]) -> tuple[dict[Path, list[Edit]], list[tuple[Diagnostic, Fix]]]:
    """Non-overlapping edits per file, taking whole fixes in order."""
    taken: dict[Path, list[Edit]] = {}
    applied: list[tuple[Diagnostic, Fix]] = []
    for d, f in fixes:
        if any(e.path not in texts or e.span.end > len(texts[e.path]) for e in f.edits):
            continue
        clash = False
        for e in f.edits:
            for o in taken.get(e.path, []):
                if e == o:
                    continue
                if e.span.start < o.span.end and o.span.start < e.span.end:
                    clash = True
                if e.span.start == e.span.end == o.span.start == o.span.end:
                    clash = True
        if clash:
            continue
        for e in f.edits:
            lst = taken.setdefault(e.path, [])
            if e not in lst:
                lst.append(e)
        applied.append((d, f))
    return taken, applied


@dataclass(frozen=True)
class Refusal:
    """A fix that was not applied, and why (for "could not fix" reports)."""

    diagnostic: Diagnostic
    fix: Fix
    reason: str


@dataclass
class FixOutcome:
    changed: dict[Path, tuple[str, str]] = field(default_factory=dict)  # path -> (before, after)
    sources: dict[Path, SourceText] = field(default_factory=dict)  # as read from disk, for writing back
    applied: list[tuple[Diagnostic, Fix]] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    converged: bool = True
    followups: list[str] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)


_FixKey = tuple[str, str, str, tuple[str, ...]]  # code, file, fix title, edited files


def _fix_key(d: Diagnostic, f: Fix) -> _FixKey:
    # stable across passes: spans move when an earlier edit in the same file changes its length
    return (d.code, str(d.path), f.title, tuple(str(e.path) for e in f.edits))


def fix_until_stable(
    lint: Callable[[], list[Diagnostic]],
    workspace: Workspace,
    unsafe: bool = False,
    max_passes: int = MAX_PASSES,
    may_edit: EditPolicy | None = None,
) -> FixOutcome:
    """Apply fixes in memory (as workspace overlays) and re-lint until nothing changes.

    ``lint`` must see the workspace's overlays and must not answer from caches keyed by path
    alone (build a fresh engine per call). Nothing is written to disk here.
    """
    out = FixOutcome()
    originals: dict[Path, str] = {}
    refused: dict[_FixKey, Refusal] = {}
    verdicts: dict[Path, str | None] = {}

    def refuse(d: Diagnostic, f: Fix, reason: str) -> None:
        refused.setdefault(_fix_key(d, f), Refusal(d, f, reason))

    def policy(p: Path) -> str | None:
        if may_edit is None:
            return None
        if p not in verdicts:
            verdicts[p] = may_edit(p)
        return verdicts[p]

    diags = lint()
    passes = 0
    while True:
        chosen: list[tuple[Diagnostic, Fix]] = []
        for d, f in choose_fixes(diags, unsafe):
            if _fix_key(d, f) in refused:
                continue
            reason = next((r for e in f.edits if (r := policy(e.path)) is not None), None)
            if reason is not None:
                refuse(d, f, reason)
                continue
            chosen.append((d, f))
        if not chosen:
            break
        if passes >= max_passes:
            out.converged = False
            break
        texts: dict[Path, str] = {}
        for p in {e.path for _, f in chosen for e in f.edits}:
            t = workspace.text(p)
            if t is not None:
                texts[p] = t
        noop = [(d, f) for d, f in chosen if all(_is_noop(e, texts) for e in f.edits)]
        for d, f in noop:
            refuse(d, f, "applying the fix changed nothing")
        chosen = [c for c in chosen if c not in noop]
        if not chosen:
            continue
        taken, applied = plan(chosen, texts)
        if not taken:
            for d, f in chosen:
                refuse(d, f, "the file it edits cannot be read")
            break
        new_texts = {p: splice(texts[p], [_with_newline(e, texts[p]) for e in edits]) for p, edits in taken.items()}
        broken = {p for p, t in new_texts.items() if t != texts[p] and _parses(p, texts[p]) and not _parses(p, t)}
        if broken:
            for d, f in applied:
                if any(e.path in broken for e in f.edits):
                    refuse(d, f, "the fixed file would no longer parse")
            continue  # plan the pass again without them
        if all(new_texts[p] == texts[p] for p in new_texts):
            for d, f in applied:
                refuse(d, f, "applying the fix changed nothing")
            continue
        passes += 1
        for p, new in new_texts.items():
            if p not in originals:
                originals[p] = texts[p]
                src = workspace.read(p)
                if isinstance(src, SourceText):
                    out.sources[p] = src
            workspace.set_overlay(p, new)
        out.applied.extend(applied)
        for _, f in applied:
            if f.followup and f.followup not in out.followups:
                out.followups.append(f.followup)
        diags = lint()
    out.remaining = diags
    out.refused = list(refused.values())
    for p, before in originals.items():
        after = workspace.text(p)
        if after is not None and after != before:
            out.changed[p] = (before, after)
    return out


def _is_noop(e: Edit, texts: dict[Path, str]) -> bool:
    t = texts.get(e.path)
    return t is not None and e.span.end <= len(t) and t[e.span.start : e.span.end] == e.new_text


_LONE_LF = _regex.compile(r"(?<!\r)\n")


def _with_newline(e: Edit, text: str) -> Edit:
    """Inserted text uses the file's own line ending (a rule builds edits with ``\\n``)."""
    if "\n" not in e.new_text:
        return e
    crlf = text.count("\r\n")
    if crlf <= text.count("\n") - crlf:
        return e
    return Edit(e.path, e.span, _LONE_LF.sub("\r\n", e.new_text))


def _parses(path: Path, text: str) -> bool:
    """Whether ``text`` parses as the file type its name says (True for types not checked)."""
    suffix = path.suffix.lower()
    name = path.name
    if suffix in (".toml", ".lock") and name != "Pipfile.lock" or name == "Pipfile":
        from kimi_lsp.syntax.toml import parse

        return isinstance(parse(text), dict)
    if suffix in (".yaml", ".yml"):
        import yaml

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        try:
            for _ in yaml.compose_all(text, Loader=loader):
                pass
        except yaml.YAMLError:
            return False
        return True
    return True


# -- where fixes may write -------------------------------------------------------------------


def is_lockfile(path: Path, workspace: Workspace | None = None) -> bool:
    """uv.lock, poetry.lock, pdm.lock, Pipfile.lock, pylock*.toml, conda-lock files, and compiled
    requirements output (pip-compile / uv pip compile / uv export): kimi-lsp never edits them."""
    from kimi_lsp.pins import discovery
    from kimi_lsp.pins.model import LOCK_FORMATS
    from kimi_lsp.pins.model import PinFormat

    fmt = discovery.pin_format(path)
    if fmt in LOCK_FORMATS:
        return True
    if fmt in (PinFormat.REQUIREMENTS, PinFormat.CONSTRAINTS) and workspace is not None:
        sources = discovery.read_pin_file(path, workspace)
        return bool(sources) and sources[0].is_lock
    return False


def edit_root(path: Path, fallback: Path) -> Path:
    """The repository holding ``path`` (found without following links), else ``fallback`` (the
    working directory) when ``path`` is under it, else the file's own directory. Applied to the
    LINTED files, this gives the directories their fixes may write in."""
    lexical = Path(os.path.abspath(path))
    repo = find_repo_root(lexical.parent, None)
    if repo != Path(repo.anchor):
        return repo
    fb = Path(os.path.abspath(fallback))
    if fb == lexical.parent or fb in lexical.parents:
        return fb
    return lexical.parent


def edit_refusal(path: Path, workspace: Workspace, roots: Path | Iterable[Path]) -> str | None:
    """None when a fix may write ``path``; otherwise the reason it may not. ``roots`` are the
    repositories of the files being linted: an edit never leaves them, whatever ``-r ../x.txt``
    include led to the file."""
    if is_lockfile(path, workspace):
        return f"{path.name} is a lockfile; kimi-lsp never edits a lockfile's text"
    allowed = [roots] if isinstance(roots, Path) else list(roots)
    if not any(inside(path, root) for root in allowed):
        return f"{path} leads outside the repository ({os.path.realpath(path)})"
    real = Path(os.path.realpath(path))
    if real.exists() and not real.is_file():
        return f"{path} is not a regular file"
    return write_refusal(real)


def write_refusal(real: Path) -> str | None:
    """Why replacing ``real`` would change more than its text: a read-only file (a write would
    replace it anyway, since the directory is writable), or one owned by another user when this
    process cannot give the new file back to that owner. None when the write may go ahead."""
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{real.name} cannot be examined ({exc.strerror or exc})"
    if not st.st_mode & 0o200:
        return f"{real.name} is read-only (mode {st.st_mode & 0o7777:04o}); make it writable to fix it"
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    if euid is not None and euid != 0 and st.st_uid != euid:
        return f"{real.name} belongs to another user (uid {st.st_uid}); the rewritten file would change its owner"
    return None


def inside(path: Path, root: Path) -> bool:
    """Does ``path`` lie under ``root`` once every link in both is followed?"""
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
        return True
    except ValueError:
        return False


# -- writing ---------------------------------------------------------------------------------


class ChangedOnDisk(OSError):
    """The file changed on disk after it was linted: the fix would overwrite that change."""


def encode_like(src: SourceText, text: str, head: bytes = b"") -> bytes:
    """``text`` in ``src``'s encoding, with its BOM; ``head`` (the file's first bytes) tells the
    byte order of UTF-16, which ``SourceText`` does not record."""
    if src.encoding.replace("_", "-").lower() in ("utf-16", "utf16"):
        if head.startswith(codecs.BOM_UTF16_BE):
            return codecs.BOM_UTF16_BE + text.encode("utf-16-be")
        return codecs.BOM_UTF16_LE + text.encode("utf-16-le")
    data = text.encode(src.encoding)
    if src.bom and src.encoding.replace("_", "-").lower() in ("utf-8", "utf8"):
        data = codecs.BOM_UTF8 + data
    return data


def write_atomic(src: SourceText, new_text: str, expected: str | None = None) -> Path:
    """Write ``new_text`` over ``src.path`` keeping BOM, encoding, byte order, permissions and
    (where allowed) ownership; returns the path written. A link is written through (the link
    stays a link). With ``expected``, the file must still decode to that text, else
    ``ChangedOnDisk`` is raised and nothing is written."""
    target = Path(os.path.realpath(src.path))
    current = target.read_bytes()
    if expected is not None:
        now = decode_bytes(target, current)
        if not isinstance(now, SourceText) or now.text != expected:
            raise ChangedOnDisk(f"{src.path} changed on disk while it was being fixed")
    refusal = write_refusal(target)
    if refusal is not None:
        raise PermissionError(13, refusal, str(target))
    data = encode_like(src, new_text, current[:2])
    st = os.stat(target)
    fd, tmp = _temp_file(target)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), st.st_mode & 0o7777)
            if hasattr(os, "fchown") and (st.st_uid, st.st_gid) != _owner(fh.fileno()):
                # keep the owner or do not write: a silently changed owner is a changed file
                os.fchown(fh.fileno(), st.st_uid, st.st_gid)
            os.fsync(fh.fileno())
            if tmp is None:  # an unnamed file until now: a kill before this leaves nothing behind
                tmp = _link_unnamed(fh.fileno(), target)
        os.replace(tmp, target)
    except BaseException:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise
    return target


def _owner(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_uid, st.st_gid


def _temp_file(target: Path) -> tuple[int, str | None]:
    """An unnamed file in ``target``'s directory (Linux O_TMPFILE: killed before the rename, it
    leaves no file in the repository), else a named one from mkstemp."""
    flag = getattr(os, "O_TMPFILE", 0)
    if flag and os.path.isdir("/proc/self/fd"):
        try:
            return os.open(target.parent, flag | os.O_WRONLY, 0o600), None
        except OSError:
            pass  # a filesystem without O_TMPFILE support
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".kimi-lsp", dir=target.parent)
    return fd, tmp


def _link_unnamed(fd: int, target: Path) -> str:
    """Give the finished unnamed file a name next to ``target`` (for the atomic rename)."""
    import secrets

    proc = os.open("/proc/self", os.O_RDONLY)
    try:
        for _ in range(10):
            name = str(target.parent / f".{target.name}.{secrets.token_hex(6)}.kimi-lsp")
            try:
                # linkat(AT_SYMLINK_FOLLOW) through /proc: a plain link() would link the magic
                # link itself (EXDEV); a dir fd makes CPython call linkat with the flag
                os.link(f"fd/{fd}", name, src_dir_fd=proc, follow_symlinks=True)
                return name
            except FileExistsError:
                continue
    finally:
        os.close(proc)
    raise FileExistsError(17, "no free temporary name", str(target.parent))
