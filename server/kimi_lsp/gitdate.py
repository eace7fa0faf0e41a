"""When a file was last changed, from its repository's history.

A launch written in 2025 ran a 2025 sglang: when nothing in the repository names the release, the
day the file was last committed bounds the releases it can have been written for. The date comes
from ``git log``, run so that nothing the repository configures is executed: no pager, hooks are
not run by ``log`` and pointed nowhere anyway, no fsmonitor, no signature verification (which
would run ``gpg.program``), no external diff or textconv; the index is not read or refreshed
(``GIT_OPTIONAL_LOCKS=0``), and no prompt can wait on a terminal. Nothing is asked of the
network. A shallow clone answers with the date of its oldest commit for files older than it: a
later day than the true one, so the releases it admits are a superset (the check says less, never
more), and the evidence says so. A file whose text differs from the committed one is being
written now: no date from history bounds it.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from kimi_lsp._record import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kimi_lsp.workspace import Workspace

_TIMEOUT = 10.0  # seconds for one git call; a repository that slow gives no date
# What a repository's configuration could make git run, turned off for our calls.
_SAFE_CONFIG = (
    "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "log.showSignature=false",
    "-c", "diff.external=", "-c", "core.pager=cat", "-c", "gc.auto=0", "-c", "maintenance.auto=false",
)


@dataclass(frozen=True, slots=True)
class LastChange:
    day: str  # YYYY-MM-DD (UTC) of the commit that last changed the file
    commit: str  # its abbreviated hash
    shallow: bool  # the clone is shallow: the day may be later than the true one


@dataclass(frozen=True, slots=True)
class NoDate:
    why: str  # in words: "the file has changes not yet committed", "not in a git repository"


def git_dir(root: Path) -> Path | None:
    """The repository's git directory (``.git``, or the one a ``.git`` file points to)."""
    dot = root / ".git"
    try:
        if dot.is_dir():
            return dot if (dot / "HEAD").is_file() else None
        if dot.is_file():
            head = dot.read_text("utf-8", "replace").strip()
            if head.startswith("gitdir:"):
                target = Path(head[7:].strip())
                target = target if target.is_absolute() else (root / target)
                return target if (target / "HEAD").is_file() else None
    except OSError:
        return None
    return None


def last_change(path: Path, root: Path, workspace: Workspace | None = None) -> LastChange | NoDate:
    """The last commit that changed ``path`` in the repository at ``root``; or why there is none."""
    gd = git_dir(root)
    if gd is None:
        return NoDate("the repository has no git history")
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        return NoDate("the file is outside its repository")
    from kimi_lsp.workspace import probed, touched

    for p in history_files(root):  # a new commit changes the answer: the result cache must see it
        if p.exists():
            touched(p)
        else:
            probed(p)
    out = _git(root, "log", "-1", "--no-ext-diff", "--no-textconv", "--no-show-signature", "--format=%ct %h", "--", rel)
    if out is None:
        return NoDate("git could not read the repository's history")
    words = out.split()
    if len(words) != 2 or not words[0].isdigit():
        return NoDate("the file has never been committed")
    blob = _git(root, "rev-parse", "--verify", "--quiet", f"HEAD:{rel}")
    if blob is None or _blob_id(path, workspace) != blob.strip():
        return NoDate("the file has changes not yet committed")
    day = time.strftime("%Y-%m-%d", time.gmtime(int(words[0])))
    return LastChange(day, words[1], (gd / "shallow").exists())


def history_files(root: Path) -> tuple[Path, ...]:
    """The files whose change changes what ``last_change`` answers (HEAD and the refs): the result
    cache keys on them."""
    gd = git_dir(root)
    if gd is None:
        return ()
    out = [gd / "HEAD", gd / "packed-refs", gd / "shallow"]
    try:
        head = (gd / "HEAD").read_text("utf-8", "replace").strip()
    except OSError:
        return tuple(out)
    if head.startswith("ref:"):
        out.append(gd / head[4:].strip())
    return tuple(out)


def _blob_id(path: Path, workspace: Workspace | None) -> str | None:
    """The git blob id of the file's text as the lint sees it (an editor's unsaved buffer differs
    from the disk, and from the commit)."""
    data: bytes | None = None
    if workspace is not None:
        overlay = workspace.overlay(path)
        if overlay is not None:
            data = overlay.encode("utf-8")
            try:
                with open(path, "rb") as fh:
                    disk = fh.read()
            except OSError:
                return None
            if disk.replace(b"\r\n", b"\n") != data.replace(b"\r\n", b"\n"):
                return None  # unsaved changes: written now
            data = disk
    if data is None:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
    import hashlib

    h = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    h.update(data)
    return h.hexdigest()


def _git(root: Path, *args: str) -> str | None:
    import subprocess  # (only where a repository has history to read)

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", PAGER="cat", LC_ALL="C",
               GIT_CONFIG_NOSYSTEM="1", GIT_NO_REPLACE_OBJECTS="1")
    try:
        done = subprocess.run(["git", "--no-pager", *_SAFE_CONFIG, "-C", str(root), *args],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=_TIMEOUT, env=env, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")
