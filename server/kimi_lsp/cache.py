"""The ``--check`` result cache: a repeated run over unchanged files answers without linting.

Pre-commit and editors' save hooks run ``kimi-lsp --check`` on the same files again and again.
Like pre-commit's and pip's caches, this one lives in the user's cache directory
(``$KIMI_LSP_CACHE_DIR``, else ``$XDG_CACHE_HOME/kimi-lsp``, else ``~/.cache/kimi-lsp``), never in
the linted repository, and an entry is keyed by everything its result depends on:

- the run: the resolved files checked (a run of explicit files only; a directory walk is not
  cached, because a new file anywhere in the tree would change it), the working directory, the
  command-line settings, the environment variables lint reads (``HOME``, ``HF_*``,
  ``XDG_CACHE_HOME``, ``KIMI_LSP_*``), the Python version and the installed kimi-lsp, PyYAML and
  packaging files (size and mtime of every module and data file);
- the files: every path the run read, probed or listed (the launch files, pin files, ``--config``
  files, settings, model ``config.json``s) is recorded while it lints (``workspace.touched``) with
  its ``stat``; a path that was missing records its nearest existing directory, whose mtime
  changes when an entry is added, so a pin file created next to a launch invalidates the entry as
  surely as an edit to the lockfile does. ``.git`` is recorded as present or absent only: git's
  own writes do not invalidate anything.

An entry is written only after a clean run (no internal errors, one process) and only when none
of the recorded paths changed in the two seconds before the run began, so that an edit racing the
lint (or a filesystem with coarse timestamps) cannot pin a stale answer (git's "racy clean"
problem). Any doubt is a miss: an unreadable, corrupt or foreign entry is ignored and replaced.

``--no-cache`` or ``KIMI_LSP_NO_CACHE=1`` turn it off. This module imports only the standard
library's cheapest parts: a hit loads no engine, rules, schema, YAML or pin readers.
"""
from __future__ import annotations

import marshal
import os
import sys
import zlib
from typing import Any

FORMAT = 1
MAX_ENTRIES = 2048
RACY_SECONDS = 2.0
_ENV_PREFIXES = ("HF_", "HUGGINGFACE_", "XDG_CACHE_HOME", "KIMI_LSP_", "HOME")
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by kimi-lsp.\n"

Sig = tuple[int, int, int, int, int] | None


def enabled(no_cache: bool = False) -> bool:
    return not no_cache and os.environ.get("KIMI_LSP_NO_CACHE", "") in ("", "0")


def _sig(path: str) -> Sig:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_mode)


def _tree_sig(top: str) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".json", ".typed")):
                p = os.path.join(dirpath, name)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                out.append((p, st.st_mtime_ns, st.st_size))
    return out


def _installed() -> list[Any]:
    """What the code that answers is: kimi-lsp's files and the parsers it relies on."""
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    sigs: list[Any] = [sys.version, _tree_sig(here)]
    for mod in ("yaml", "packaging"):
        spec = importlib.util.find_spec(mod)
        origin = spec.origin if spec is not None else None
        sigs.append(_tree_sig(os.path.dirname(origin)) if origin else None)
    return sigs


def directory() -> str | None:
    """Where entries live; None when there is no home to put them in."""
    where = os.environ.get("KIMI_LSP_CACHE_DIR")
    if where:
        return os.path.abspath(where)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "kimi-lsp")
    home = os.path.expanduser("~")
    return os.path.join(home, ".cache", "kimi-lsp") if os.path.isabs(home) else None


class Cache:
    """The cache for one run of ``--check`` over ``files`` (resolved paths) from ``cwd``."""

    def __init__(self, directory: str, key: bytes) -> None:
        self.directory = directory
        self.key = key
        self.entry_path = os.path.join(directory, f"results-v{FORMAT}", f"{zlib.crc32(key):08x}{zlib.adler32(key):08x}.bin")

    @classmethod
    def for_run(cls, files: list[str], cwd: str, settings: dict[str, Any]) -> Cache | None:
        """None when nothing may be cached: no files, or nowhere to keep the cache."""
        where = directory()
        if not files or where is None:
            return None
        env = sorted((k, v) for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES))
        key = marshal.dumps((FORMAT, tuple(files), cwd, sorted(settings.items()), env, _installed()))
        return cls(where, key)

    # -- reading ---------------------------------------------------------------------------
    def load(self) -> Any | None:
        """The stored result when every recorded path is as it was, else None."""
        try:
            with open(self.entry_path, "rb") as fh:
                stored = marshal.load(fh)
            key, deps, result = stored
        except (OSError, EOFError, ValueError, TypeError):
            return None
        if key != self.key:
            return None  # another run's entry under the same short name
        try:
            for path, sig in deps:
                now = os.path.exists(path) if sig.__class__ is bool else _sig(path)
                if now != sig:
                    return None
        except (TypeError, ValueError, AttributeError):
            return None
        return result

    # -- writing ---------------------------------------------------------------------------
    def prepare(self) -> None:
        """Create the cache directory before the run, so that its creation (which changes its
        parent's mtime, e.g. ~/.cache's) cannot look like a change to what the run read."""
        try:
            os.makedirs(os.path.join(self.directory, f"results-v{FORMAT}"), exist_ok=True)
            tag = os.path.join(self.directory, "CACHEDIR.TAG")  # backup tools skip the directory
            if not os.path.exists(tag):
                with open(tag, "w", encoding="utf-8") as fh:
                    fh.write(_TAG)
        except OSError:
            pass  # no writable cache directory: same answers, nothing kept (store then fails)

    def store(self, touched: tuple[set[str], set[str]], result: Any, started: float) -> bool:
        """Write the entry; False when it is not safe or not possible to.

        ``touched``: (paths whose content or listing the run used, paths it only tested for
        existence). A missing path also records its directory, whose mtime changes when the
        path appears."""
        used, probed = touched
        deps: list[tuple[str, Any]] = []
        newest = (started - _racy_seconds()) * 1e9
        pending = sorted(used)
        seen: set[str] = set()
        while pending:
            p = pending.pop()
            if p in seen:
                continue
            seen.add(p)
            sig = _sig(p)
            if sig is None:
                parent = os.path.dirname(p)
                if parent != p:
                    pending.append(parent)
            elif sig[0] >= newest or sig[1] >= newest:
                return False  # changed just before or during the run: maybe not what was linted
            deps.append((p, sig))
        deps.extend((p, os.path.exists(p)) for p in sorted(probed - seen))
        try:
            data = marshal.dumps((self.key, deps, result))
        except ValueError:
            return False  # a diagnostic carried data marshal cannot hold
        target = self.entry_path
        tmp = f"{target}.{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return False
        self._prune()
        return True

    def _prune(self) -> None:
        folder = os.path.dirname(self.entry_path)
        try:
            with os.scandir(folder) as it:
                entries = [e for e in it if e.name.endswith(".bin")]
            if len(entries) <= MAX_ENTRIES:
                return
            entries.sort(key=lambda e: e.stat().st_mtime_ns)
            for e in entries[: len(entries) - MAX_ENTRIES]:
                os.unlink(e.path)
        except OSError:
            pass


def _racy_seconds() -> float:
    """RACY_SECONDS; ``KIMI_LSP_CACHE_RACY_SECONDS`` lowers it for tests on freshly copied files."""
    try:
        return max(0.0, float(os.environ.get("KIMI_LSP_CACHE_RACY_SECONDS", RACY_SECONDS)))
    except ValueError:
        return RACY_SECONDS
