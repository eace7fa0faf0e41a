"""The engine side of a server session: overlays, lint results, who depends on what.

Everything here runs on the single lint thread (``Session.pool``): the engine is synchronous and
not thread-safe, so one worker serialises overlay updates, lints, hovers and completions. The
event loop only takes snapshots of the open documents and hands them over.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types as T
from pygls.uris import from_fs_path, to_fs_path

from kimi_lsp.cache import Sig, signature
from kimi_lsp.diagnostics import Diagnostic, Location, Severity
from kimi_lsp.engine import FileResult, merged
from kimi_lsp.lsp import adapters, convert
from kimi_lsp.lsp._blake import blake2b
from kimi_lsp.lsp.multidoc import MultiDoc
from kimi_lsp.lsp.settings import EditorSettings
from kimi_lsp.text import LineIndex, Span
from kimi_lsp.workspace import SourceText, Workspace, record_touched, take_touched

log = logging.getLogger("kimi_lsp.lsp")

MAX_INDEXED_FILES = 5000
# A file modified this recently may change again within the clock's resolution, after it was read
# (the --check cache's "racy" rule): its signature is not trusted until it has been quiet this long.
RACY_SECONDS = 2.0
_RACY: Sig = (-1, -1, -1, -1, -1)
STAT_BATCH = 2000  # signatures checked per unit of a workspace pass (~5 ms)
# Files that changed on disk with no watcher event are found by the workspace passes' sweep of
# every path the lints read or probed (31,000 of them at 5,000 launch files). A client re-polls
# every ~2 s; sweeping all of them each time cost ~60 ms of CPU (3 % of a core, idle). A pass
# checks at least SWEEP_MIN paths and enough more that every path is checked at least every
# SWEEP_SECONDS: a smaller workspace is swept whole on every pass, as before.
SWEEP_SECONDS = 20.0
SWEEP_SECONDS_WATCHED = 60.0  # the client watches pin and launch files: the sweep is a backstop
SWEEP_MIN = 2000
_DONE = object()


@dataclass(frozen=True)
class DocSnap:
    uri: str
    version: int | None
    text: str


Snaps = dict[Path, DocSnap]


@dataclass(frozen=True)
class DocReport:
    uri: str
    version: int | None  # the document version the items were computed for
    items: list[T.Diagnostic]
    result_id: str


def uri_to_path(uri: str) -> Path | None:
    fs = to_fs_path(uri)
    return Path(fs).resolve() if fs else None


@dataclass
class Session:
    root: Path
    folders: list[Path]
    encoding: str = convert.UTF16
    tags_supported: bool = True
    editor: EditorSettings = field(default_factory=EditorSettings)
    pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="kimi-lint"))

    def __post_init__(self) -> None:
        self.workspace = Workspace(self.root)
        self.engine = self.new_engine(self.workspace)
        self.results: dict[Path, FileResult] = {}
        self.dependents: dict[Path, set[Path]] = {}
        self.synced: dict[Path, int | None] = {}
        self.uris: dict[Path, str] = {}
        self.indexed = False
        # freshness: a result is reused while neither its file nor what it depends on changed
        self.generation = 0
        self.changed_at: dict[Path, int] = {}
        self.linted_at: dict[Path, int] = {}
        self.all_stale_at = 0
        self.files: list[Path] | None = None  # the workspace walk, until files come or go
        # Freshness that does not depend on the client: every path a lint read or probed (pin
        # files, configs, settings, directories listed), with its signature when first seen.
        # Checked before each lint and, for clients without file watching, polled while idle.
        self.disk_paths: dict[Path, frozenset[str]] = {}
        self.disk_sigs: dict[str, Sig] = {}
        # each file's last report and what it was computed from: a re-poll of 5,000 unchanged
        # files must not convert and hash 5,000 diagnostic lists again
        self.report_cache: dict[Path, tuple[tuple[str, int], tuple[FileResult | None, ...], list[T.Diagnostic], str]] = {}
        self._indexer: Iterator[None] | None = None  # the walk in progress, advanced in slices
        self.capped = 0  # launch-file candidates left out of the index (MAX_INDEXED_FILES)
        self._disk_uris: dict[Path, str] = {}
        self.lint_count = 0  # lints run so far (the log says how many a workspace pass re-ran)
        self.multidoc = MultiDoc()
        self._last_snaps: Snaps | None = None  # what sync saw last (its fast path compares with it)
        self._open_strs: set[str] | None = None  # the open documents' paths as strings (disk_changes)
        self.absent_in: dict[str, tuple[str, Sig]] = {}  # an absent path -> its directory, and its signature then
        self._sweep_order: list[str] = []
        self._sweep_pos = 0
        self._sweep_at: float | None = None
        self.client_watches = False  # the client sends didChangeWatchedFiles (registered)
        self._last_pass: tuple[tuple[int, int, int, int], list[Path] | None, list[DocReport]] | None = None

    # -- engine -------------------------------------------------------------------------------
    def new_engine(self, workspace: Workspace) -> adapters.SessionEngine:
        eng = adapters.SessionEngine(workspace, dict(self.editor.overrides), self.editor.prefer_editor)
        if getattr(self, "engine", None) is not None:
            eng.referenced_configs |= self.engine.referenced_configs
        return eng

    def apply_settings(self, editor: EditorSettings) -> None:
        self.editor = editor
        self.engine = self.new_engine(self.workspace)
        self.multidoc.forget()
        self.workspace.invalidate(None)
        self.touch_all()

    def touch(self, path: Path) -> None:
        self.generation += 1
        self.changed_at[path] = self.generation

    def touch_all(self, files_changed: bool = False) -> None:
        """Everything may have changed (settings, a pin file created or deleted)."""
        self.generation += 1
        self.all_stale_at = self.generation
        if files_changed:
            self.files = None
            self._indexer = None  # a walk in progress may have missed what came or went

    def fresh(self, path: Path) -> bool:
        at, res = self.linted_at.get(path), self.results.get(path)
        if at is None or res is None or at < self.all_stale_at:
            return False
        return all(self.changed_at.get(p, 0) <= at for p in (path, *res.depends_on))

    def sync(self, snaps: Snaps) -> set[Path]:
        """Make the workspace overlays match the open documents; return the paths that changed."""
        prev, self._last_snaps = self._last_snaps, snaps
        if prev is not None and len(prev) == len(snaps):
            # the server's snapshots keep their keys and order while no document comes or goes:
            # then only the entries whose snapshot is new need a look (thousands open, one edited)
            changed_items = []
            for (pa, sa), (pb, sb) in zip(prev.items(), snaps.items()):
                if pa is not pb:
                    break
                if sa is not sb:
                    changed_items.append((pb, sb))
            else:
                return self._sync_items(changed_items)
        changed = self._sync_items(list(snaps.items()))
        for path in [p for p in self.synced if p not in snaps]:
            del self.synced[path]
            self._open_strs = None
            self.uris.pop(path, None)
            self.workspace.drop_overlay(path)
            self.multidoc.forget(path)
            self.invalidate(path)
            changed.add(path)
            self._forget_if_unused(path)
        return changed

    def _sync_items(self, items: list[tuple[Path, DocSnap]]) -> set[Path]:
        changed: set[Path] = set()
        for path, snap in items:
            self.uris[path] = snap.uri
            if path in self.synced and self.synced[path] == snap.version and snap.version is not None:
                continue
            self.workspace.set_overlay(path, without_lone_surrogates(snap.text))
            self.invalidate(path)
            if path not in self.synced:
                self._open_strs = None
            self.synced[path] = snap.version
            changed.add(path)
        return changed

    def _forget_if_unused(self, path: Path) -> None:
        """A closed document's result is kept only while something still needs it: a workspace
        file (workspace diagnostics list it), a file others depend on, or a ``--config`` that
        launches report into. Anything else (a file outside the folders, a scratch buffer) is
        dropped, so that opening and closing many files does not grow the session for ever."""
        if self.dependents.get(path) or path in self.engine.referenced_configs:
            return
        if self.files is not None:
            if path in self._indexed_set():
                return
        elif any(f == path.parent or f in path.parents for f in self.folders):
            return  # not indexed yet: a file in the workspace may still be listed
        old = self.results.pop(path, None)
        if old is not None:
            for dep in old.depends_on:
                for key in (dep, dep.resolve()):
                    self.dependents.get(key, set()).discard(path)
        self.linted_at.pop(path, None)
        self.changed_at.pop(path, None)
        self.disk_paths.pop(path, None)
        self.report_cache.pop(path, None)
        self._disk_uris.pop(path, None)

    def _indexed_set(self) -> set[Path]:
        files = self.files or []
        cached = getattr(self, "_indexed_cache", None)
        if cached is None or cached[0] is not files:
            cached = self._indexed_cache = (files, set(files))
        return cached[1]

    def invalidate(self, path: Path) -> None:
        self.engine.invalidate(path)
        self.touch(path)

    # -- reading ------------------------------------------------------------------------------
    def text_of(self, path: Path) -> str | None:
        return self.workspace.text(path)

    def lines_of(self, path: Path) -> LineIndex | None:
        src = self.workspace.read(path)
        return src.lines if isinstance(src, SourceText) else None

    def uri_of(self, path: Path) -> str:
        # from_fs_path costs ~30 us: a workspace pass asks for thousands, every poll
        uri = self.uris.get(path) or self._disk_uris.get(path)
        if uri is None:
            uri = self._disk_uris[path] = from_fs_path(str(path)) or path.as_uri()
        return uri

    # -- linting ------------------------------------------------------------------------------
    def lint(self, path: Path) -> FileResult:
        self.lint_count += 1
        record_touched()
        self.engine.errors.clear()
        try:
            result = self._lint_documents(path) or self.engine.lint_file(path)
        except Exception as exc:  # a bug in a reader must not take the server down
            log.exception("internal error while linting %s", path)
            result = FileResult(path, [unchecked(path, _exception_line(exc))], is_launch_file=True)
        finally:
            used, probed = take_touched()
        errors = self.engine.errors
        if errors:
            # A rule raised (the engine logged its traceback to the output channel): what it would
            # have said is unknown, so the file is not shown clean (`--check` exits 2 for this).
            # A document result kept by multidoc would hide the error on the next edit: forget it.
            self.multidoc.forget(path)
            result.diagnostics = [*result.diagnostics, unchecked(path, _error_summary(errors[0]), len(errors))]
            errors.clear()
        self._store(result)
        self.linted_at[path] = self.generation
        self._remember_disk(path, used | probed)
        return result

    def _lint_documents(self, path: Path) -> FileResult | None:
        """An open multi-document YAML file, re-linted document by document (multidoc.py)."""
        if path not in self.synced or path.suffix.lower() not in (".yaml", ".yml"):
            return None
        if path in self.engine.referenced_configs:
            return None
        text = self.workspace.text(path)
        if text is None:
            return None
        ws, engine, gen = self.workspace, self.engine, self.generation

        def lint_view(view: str) -> FileResult:
            ws.set_overlay(path, view)
            try:
                return engine.lint_file(path)
            finally:
                ws.set_overlay(path, text)

        def valid(res: FileResult, at: int) -> bool:
            if at < self.all_stale_at:
                return False
            return all(self.changed_at.get(p, 0) <= at for p in res.depends_on if p != path)

        try:
            return self.multidoc.lint(path, text, gen, lint_view, lambda: engine.lint_file(path), valid)
        except Exception:  # a bug here must cost a full lint, never the file's diagnostics
            log.exception("internal error while linting %s by documents", path)
            ws.set_overlay(path, text)
            self.multidoc.forget(path)
            return None

    # -- freshness without file watching --------------------------------------------------------
    def _remember_disk(self, path: Path, paths: set[str]) -> None:
        self.disk_paths[path] = frozenset(paths)
        dirs: dict[str, Sig] = {}
        for p in paths:
            if p not in self.disk_sigs:  # an older signature stays: what was read may be older too
                self._record(p, dirs)

    def _record(self, p: str, dirs: dict[str, Sig]) -> Sig:
        """Record ``p``'s signature; for an absent path, also its directory's, taken first:
        while the directory's is unchanged nothing was created in it (``disk_changes``)."""
        parent = os.path.dirname(p)
        dsig = dirs[parent] if parent in dirs else dirs.setdefault(parent, _trusted_signature(parent))
        sig = self.disk_sigs[p] = _trusted_signature(p)
        if sig is None and dsig is not None and dsig is not _RACY:
            self.absent_in[p] = (parent, dsig)
        else:
            self.absent_in.pop(p, None)
        return sig

    def disk_changes(
        self, only: set[Path] | None = None, keys: list[str] | None = None
    ) -> tuple[set[Path], bool]:
        """Paths earlier lints read or probed that changed on disk since (a ``git pull``, ``uv
        lock``, a pin bumped in another editor), and whether files came or went. Open documents
        are the editor's, not the disk's. ``only``: the paths read by these files' lints;
        ``keys``: exactly these paths (a slice of a workspace pass)."""
        if keys is not None:
            paths: set[str] | dict[str, Sig] | list[str] = keys
        elif only is None:
            paths = self.disk_sigs
        else:
            paths = set().union(*(self.disk_paths.get(p, frozenset()) for p in only))
        open_docs = self._open_strs
        if open_docs is None or len(open_docs) != len(self.synced):
            open_docs = self._open_strs = {str(p) for p in self.synced}
        changed: set[Path] = set()
        structural = False
        dirs: dict[str, Sig] = {}  # directory signatures taken in this call
        absent_in = self.absent_in
        for p in list(paths):
            if p in open_docs:
                continue
            seen = absent_in.get(p)
            if seen is not None:  # absent when last checked, and so is its directory's state
                parent, seen_dir = seen
                dsig = dirs[parent] if parent in dirs else dirs.setdefault(parent, _trusted_signature(parent))
                if dsig == seen_dir and dsig is not _RACY:
                    continue  # nothing was created in the directory since: still absent
            before = self.disk_sigs.get(p)
            if before is None or seen is not None:
                now = self._record(p, dirs)  # absent before: its directory's signature first
            else:
                now = _trusted_signature(p)
                if now == before and now is not _RACY:
                    continue
                # present before: recorded as seen, not as absent-in-directory (the directory's
                # signature would be taken after the path's); the next check records that
                self.disk_sigs[p] = now
                self.absent_in.pop(p, None)
            if now == before and now is not _RACY:
                continue
            changed.add(Path(p))
            structural = structural or before is None or now is None or _is_dir(before) or _is_dir(now)
        return changed, structural

    def refresh_from_disk(self, only: set[Path] | None = None, keys: list[str] | None = None) -> set[Path]:
        """Forget what changed on disk (see ``disk_changes``); return the changed paths."""
        changed, structural = self.disk_changes(only, keys)
        if structural:
            self.touch_all(files_changed=True)
        for p in changed:
            self.invalidate(p)
        return changed

    def lint_if_stale(self, path: Path) -> None:
        if not self.fresh(path):
            self.lint(path)

    def _store(self, result: FileResult) -> None:
        old = self.results.get(result.path)
        if old is not None:
            for dep in old.depends_on:
                self.dependents.get(dep, set()).discard(result.path)
        self.results[result.path] = result
        for dep in result.depends_on:
            self.dependents.setdefault(dep.resolve(), set()).add(result.path)

    def referrers(self, path: Path) -> set[Path]:
        """Launch files that pass ``path`` with ``--config`` (their lint reports into it)."""
        if path not in self.engine.referenced_configs:
            return set()
        return {r for r in self.dependents.get(path, set()) if r != path}

    def affected(self, paths: set[Path]) -> set[Path]:
        """What to re-lint after ``paths`` changed: the open documents among them and their
        dependents, the launches that report into those (``--config`` referrers), and the open
        configs those launches pass with ``--config``."""
        refs = self.engine.referenced_configs
        todo = set(paths)
        for p in paths:
            todo |= self.dependents.get(p, set())
        lint = {p for p in todo if p in self.synced}
        for p in todo - lint:  # a closed launch that reports into an open config
            res = self.results.get(p)
            if res is not None and any(d in self.synced and d in refs for d in res.depends_on):
                lint.add(p)
        for p in list(lint):
            lint |= self.referrers(p)
            res = self.results.get(p)
            if res is not None:
                lint |= {d for d in res.depends_on if d in self.synced and d in refs}
        return lint

    def diagnostics_for(self, path: Path) -> list[Diagnostic]:
        sources = [self.results.get(path)] + [self.results.get(r) for r in sorted(self.referrers(path))]
        return merged((res.diagnostics for res in sources if res is not None), only=path)

    def report(self, path: Path, version: int | None) -> DocReport:
        uri = self.uri_of(path)
        # The report follows from the results it merges (every lint makes a new FileResult) and
        # the text its positions are converted against. The results themselves are the key,
        # compared by identity: an id() could be reused by a later result.
        results = tuple(self.results.get(p) for p in (path, *sorted(self.referrers(path))))
        stamp = (uri, self.changed_at.get(path, 0))
        hit = self.report_cache.get(path)
        if hit is not None and hit[0] == stamp and _same(hit[1], results):
            return DocReport(uri, version, hit[2], hit[3])
        items = [
            convert.to_lsp_diagnostic(d, self.lines_of, self.text_of, self.uri_of, self.encoding, self.tags_supported)
            for d in self.diagnostics_for(path)
        ]
        rid = result_id(items)
        self.report_cache[path] = (stamp, results, items, rid)
        return DocReport(uri, version, items, rid)

    def lint_paths(self, paths: set[Path], snaps: Snaps) -> list[DocReport]:
        """Sync, re-lint what ``paths`` affect, and report every open document among them."""
        self.sync(snaps)
        todo = self.affected(paths | self.refresh_from_disk())
        for p in sorted(todo):
            self.lint(p)
        return [self.report(p, snaps[p].version) for p in sorted(todo) if p in snaps]

    def document_report(self, path: Path, snaps: Snaps) -> DocReport:
        """``textDocument/diagnostic``: the document's diagnostics as of the snapshot."""
        self.sync(snaps)
        self.refresh_from_disk({path, *self.referrers(path)})
        for r in sorted(self.referrers(path)):
            self.lint_if_stale(r)
        self.lint_if_stale(path)
        snap = snaps.get(path)
        return self.report(path, snap.version if snap else None)

    # -- the whole workspace ------------------------------------------------------------------
    # The walk and a workspace pass are generators that yield after each small unit of work
    # (one file walked, indexed or linted; a batch of stat calls): the server advances them a
    # few milliseconds per lint-thread job, so that edits, hovers and completions queued on the
    # same single-worker pool run between two slices instead of after the whole pass.
    def index(self) -> list[Path]:
        """The workspace's launch-file candidates (walked once until files come or go), and
        which of them are ``--config`` files of other launches."""
        for _ in self.index_steps():
            pass
        return self.files or []

    def index_steps(self) -> Iterator[None]:
        while self.files is None or not self.indexed:
            if self._indexer is None:
                self._indexer = self._walk_and_index()
            if next(self._indexer, _DONE) is _DONE:
                self._indexer = None
            yield None

    def _walk_and_index(self) -> Iterator[None]:
        self.indexed = False
        files: list[Path] = []
        over = 0
        for f in adapters.iter_workspace(self.folders):
            if len(files) < MAX_INDEXED_FILES:
                files.append(f)
            else:
                over += 1  # counted: the server tells the user how many are left out
            yield None
        for f in files:
            try:
                self.engine.index_config_references([f])
            except Exception:
                log.exception("internal error while indexing --config references of %s", f)
            yield None
        self.capped = over
        self.files = files
        self.indexed = True

    def workspace_pass(self, snaps: Snaps) -> Iterator[DocReport | None]:
        """``workspace/diagnostic``: the reports of launch files that are not open, one at a
        time (re-linted only when they or what they depend on changed; an unchanged file's
        report comes from the cache). Yields None between other units of work. When nothing
        changed since the last complete pass (no edit, no settings, nothing seen on disk), its
        reports are the answer: a re-poll of 5,000 unchanged files does no per-file work."""
        self.sync(snaps)
        yield from self.index_steps()
        keys = self._sweep_keys()
        for i in range(0, len(keys), STAT_BATCH):
            self.refresh_from_disk(keys=keys[i : i + STAT_BATCH])
            yield None
        if self.files is None:  # files came or went on disk: walk again
            yield from self.index_steps()
        files = self.files
        stamp = (self.generation, self.lint_count, id(files), len(self.synced))
        last = self._last_pass
        if last is not None and last[0] == stamp and last[1] is files:
            yield from last[2]
            return
        out: list[DocReport] = []
        own = 0  # lints of this pass (others, between its slices, change what it reported)
        for f in list(files or ()):
            if f in self.synced:  # open (perhaps since the pass began): the editor's business
                continue
            if not self.fresh(f):
                self.lint(f)
                own += 1
            r = self.report(f, None)
            out.append(r)
            yield r
        end = (self.generation, self.lint_count, id(self.files), len(self.synced))
        if end == (stamp[0], stamp[1] + own, *stamp[2:]) and self.files is files:
            self._last_pass = (end, files, out)  # nothing else changed while it ran: reusable

    def _sweep_keys(self) -> list[str]:
        """The paths this pass checks on disk: the next part of a round over every path read,
        at least ``SWEEP_MIN``, and enough that a round takes at most ``SWEEP_SECONDS``."""
        now = time.monotonic()
        elapsed = now - self._sweep_at if self._sweep_at is not None else SWEEP_SECONDS_WATCHED
        self._sweep_at = now
        if self._sweep_pos >= len(self._sweep_order):
            self._sweep_order, self._sweep_pos = list(self.disk_sigs), 0
        order = self._sweep_order
        period = SWEEP_SECONDS_WATCHED if self.client_watches else SWEEP_SECONDS
        count = max(SWEEP_MIN, int(len(order) * min(1.0, elapsed / period)) + 1)
        keys = order[self._sweep_pos : self._sweep_pos + count]
        self._sweep_pos += count
        if self._sweep_pos >= len(order) and len(keys) < count:
            # the round ended inside this pass: start the next with what is left of the count
            self._sweep_order, self._sweep_pos = list(self.disk_sigs), 0
            more = self._sweep_order[: count - len(keys)]
            seen = set(keys)
            keys += [k for k in more if k not in seen]
            self._sweep_pos = len(more)
        return keys

    def workspace_reports(self, snaps: Snaps) -> list[DocReport]:
        """The whole pass at once (tests, scripts)."""
        return [r for r in self.workspace_pass(snaps) if r is not None]


def advance(steps: Iterator[DocReport | None], budget_s: float) -> tuple[list[DocReport], bool]:
    """Run ``steps`` for about ``budget_s`` seconds; return the reports and whether it ended."""
    deadline = time.monotonic() + budget_s
    out: list[DocReport] = []
    for step in steps:
        if step is not None:
            out.append(step)
        if time.monotonic() >= deadline:
            return out, False
    return out, True


_SURROGATE = re.compile("[\ud800-\udfff]")


def without_lone_surrogates(text: str) -> str:
    """``text`` with each lone UTF-16 surrogate (JSON allows ``"\\ud800"``; no file can hold
    one) made U+FFFD: one code point and one UTF-16 unit for another, so every position holds.
    Left in, it makes the YAML reader raise, and a reader that raises finds no launch: the file
    would look clean."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def unchecked(path: Path, why: str, count: int = 1) -> Diagnostic:
    """An error at the top of ``path``: it could not be checked (an internal error). Fail closed:
    an empty list would show the editor a clean file. Not subject to suppression comments."""
    more = f" (and {count - 1} more)" if count > 1 else ""
    message = f"kimi-lsp could not check this file: {why}{more}; the traceback is in the kimi-lsp output"
    return Diagnostic("KL001", message, Location(path, Span(0, 0)), Severity.ERROR)


def _exception_line(exc: BaseException) -> str:
    return _clip(f"internal error: {type(exc).__name__}: {exc}")


def _error_summary(error: str) -> str:
    """``internal error in rule KL101 on PATH: Traceback ...`` -> its rule and the exception's
    last line (the engine's full message holds the traceback)."""
    if "Traceback" not in error:
        return _clip(error)  # one line already (a reader's note)
    head = error.split(" on ", 1)[0]
    lines = [x for x in error.strip().splitlines() if x.strip()]
    last = lines[-1].strip() if len(lines) > 1 else ""
    return _clip(f"{head} ({last})" if last else head)


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _trusted_signature(path: str) -> Sig:
    sig = signature(path)
    if sig is not None and time.time_ns() - sig[0] < RACY_SECONDS * 1e9:
        return _RACY  # never equal to what is seen next: checked again until it is quiet
    return sig


def _same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _is_dir(sig: Sig) -> bool:
    return sig is not None and sig is not _RACY and stat.S_ISDIR(sig[4])


def result_id(items: list[T.Diagnostic]) -> str:
    """A fingerprint of the items as the client receives them (what a ``previousResultId``
    names): every field, written out directly (lsprotocol's converter costs ~5 ms per 100
    diagnostics here, more than the rest of an edit's report)."""
    payload = json.dumps([_item_fields(d) for d in items], default=str)
    return blake2b(payload.encode(), digest_size=10).hexdigest()


def _range_fields(r: T.Range) -> tuple[int, int, int, int]:
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def _item_fields(d: T.Diagnostic) -> list[object]:
    related = [(x.location.uri, _range_fields(x.location.range), x.message) for x in d.related_information or ()]
    href = d.code_description.href if d.code_description is not None else None
    return [_range_fields(d.range), d.severity, d.code, d.message, d.source, related, d.tags, href, d.data]
