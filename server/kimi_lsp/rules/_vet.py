"""Vetting fixes: a fix is safe only if the launch it leaves behind has no new error.

A fix is checked the way the user would check it: its edits are applied to the texts in memory,
the launch file (and its ``--config`` YAML) is read again, the launch is resolved again with the
same schema, and the enabled rules run on the result. Any error-severity diagnostic that the
launch did not have before (counted by code and message) means the fix trades one error for
another, e.g. a did-you-mean that turns `--enable-deepep-moe --deepep-mode normal` into
`--deepep-mode --deepep-mode normal`. The engine calls ``vet_safe_fixes`` once per launch; a rule
may call ``leaves_new_error`` to decide whether to offer edits at all.

The re-lint runs the rules with a context marked as vetting, in which nothing is vetted again.
Fixes that edit other files (pins, lockfiles) change what pin discovery finds, which a launch-only
re-read cannot replay: they are left as their rule made them.

Vetting is linear in the number of fixes: a fix inside one shell block of a Markdown/MDX document
re-reads that block, not the document (a 2,910-line guide with 28 fixes spent 80 % of its 5 s
re-reading the whole document once per fix). Blocks are read one by one in documents, so the
block read alone gives the launch the whole document would (a test holds the two equal).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from kimi_lsp.diagnostics import Applicability, Diagnostic, Edit, Fix, Severity
from kimi_lsp.knowledge.schema import Schema, load_schema
from kimi_lsp.launch import ResolvedLaunch, resolve
from kimi_lsp.rules._base import _VETTING, LaunchContext, Rule, is_vetting
from kimi_lsp._record import replace
from kimi_lsp.surfaces import read_surface
from kimi_lsp.surfaces.model import ConfigFile, Entry, LaunchCommand, Surface
from kimi_lsp.text import Span
from kimi_lsp.workspace import ReadFailure, SourceText, Workspace, normalize_path

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from kimi_lsp.syntax.markdown import CodeBlock

_BEFORE = "_vet_before"  # LaunchContext.cache key: the launch's own errors, counted once

ErrorCount = Counter[tuple[str, str]]  # (code, message) -> how many


def vet_safe_fixes(ctx: LaunchContext, diagnostics: list[Diagnostic], rules: Iterable[Rule]) -> list[Diagnostic]:
    """``diagnostics`` with every safe fix that leaves a new error in the launch made unsafe."""
    if is_vetting(ctx) or not any(_vettable(ctx, f) for d in diagnostics for f in d.fixes if f.applicability is Applicability.SAFE):
        return diagnostics
    rules = tuple(rules)
    out = []
    for d in diagnostics:
        fixes = tuple(
            _unsafe(f) if f.applicability is Applicability.SAFE and leaves_new_error(ctx, f, rules) else f
            for f in d.fixes
        )
        out.append(d if fixes == d.fixes else Diagnostic(d.code, d.message, d.location, d.severity, fixes, d.related, d.data))
    return out


def leaves_new_error(ctx: LaunchContext, fix: Fix, rules: Iterable[Rule] | None = None) -> bool:
    """Whether applying ``fix`` leaves the launch with an error it did not have. A fix that
    cannot be replayed on the launch alone (it edits another file) answers False; one whose
    launch can no longer be found after the edit answers True."""
    if is_vetting(ctx) or not _vettable(ctx, fix):
        return False
    rules = _enabled(ctx, rules)
    before = ctx.memo(_BEFORE, lambda: _errors(_vetting_context(ctx, ctx.launch, ctx.workspace, ctx.source), rules, ()))
    try:
        after = _relint(ctx, fix, rules)
    except Exception:  # a reader's bug on the edited text: the fix is not proven safe
        return True
    if after is None:
        return True
    return bool(after - before)


# -- replaying one fix ---------------------------------------------------------------------


def _vettable(ctx: LaunchContext, fix: Fix) -> bool:
    if not fix.edits:
        return False
    own = {normalize_path(ctx.launch.command.path)}
    if ctx.launch.config is not None:
        own.add(normalize_path(ctx.launch.config.path))
    return all(normalize_path(e.path) in own for e in fix.edits)


def _relint(ctx: LaunchContext, fix: Fix, rules: tuple[Rule, ...]) -> ErrorCount | None:
    launch = ctx.launch
    texts: dict[Path, str] = {}
    for path in {normalize_path(e.path) for e in fix.edits}:
        text = ctx.workspace.text(path)
        if text is None:
            return None
        edits = [e for e in fix.edits if normalize_path(e.path) == path]
        if any(e.span.end > len(text) or e.span.start > e.span.end for e in edits):
            return None
        for e in sorted(edits, key=lambda e: (e.span.start, e.span.end), reverse=True):
            text = text[: e.span.start] + e.new_text + text[e.span.end :]
        texts[path] = text
    ws = _EditedWorkspace(ctx.workspace, texts)
    cmd_path = normalize_path(launch.command.path)
    problems: list[tuple[str, str]] = []
    command = launch.command
    src = ctx.source
    if cmd_path in texts:
        src = SourceText(cmd_path, texts[cmd_path], ctx.source.encoding, ctx.source.bom)
        cmd_edits = [e for e in fix.edits if normalize_path(e.path) == cmd_path]
        found = _reread_block(launch.command, ctx.source.text, cmd_edits)
        if found is _WHOLE:
            sr = read_surface(src, is_sglang_key=_is_sglang_key(load_schema(None)))
            problems.extend(("KL001", p.message) for p in sr.problems)
            found = _same_launch(launch.command, sr.launches, cmd_edits)
        if not isinstance(found, LaunchCommand):
            return None
        command = found
    config = None if command.entry is Entry.CONFIG_FILE else launch.config
    if launch.config is not None and command.entry is not Entry.CONFIG_FILE:
        cfg_path = normalize_path(launch.config.path)
        if cfg_path in texts:
            config, cfg_problems = _reread_config(SourceText(cfg_path, texts[cfg_path]), launch.schema)
            problems.extend(cfg_problems)
            if config is None:
                return None
    new_launch = resolve(command, launch.schema, config)
    return _errors(_vetting_context(ctx, new_launch, ws, src), rules, problems)


class _Whole:
    """``_reread_block``'s answer when only a read of the whole edited file is exact."""


_WHOLE = _Whole()
# Characters that make or unmake a fence line or a line break (syntax.markdown.fences reads
# lines split at `\n`): an edit near one may change which blocks the document has.
_STRUCTURAL = frozenset("`~\n\r")
# The original document's blocks, for the text they were found in: one document's launches are
# vetted one after another, each with its fixes (identity, not equality: no hashing of the text).
_blocks_memo: list[tuple[str, list[CodeBlock]]] = []


def _doc_blocks(text: str) -> list[CodeBlock]:
    from kimi_lsp.syntax import markdown as md

    if _blocks_memo and _blocks_memo[0][0] is text:
        return _blocks_memo[0][1]
    blocks = md.code_blocks(text)
    _blocks_memo[:] = [(text, blocks)]
    return blocks


def _reread_block(old: LaunchCommand, text: str, edits: list[Edit]) -> LaunchCommand | None | _Whole:
    """The launch ``old`` becomes once ``edits`` are applied to ``text`` (its document), read
    from its Markdown shell block alone: the launch (None: the block has it no more), or
    ``_WHOLE`` when the edited document must be read whole (not a Markdown fence, edits outside
    the block or near a fence line or line break, a ``cd`` in the block)."""
    path = old.path
    if old.surface is not Surface.MARKDOWN or not edits:
        return _WHOLE
    # only a documentation launch's fixes load the documentation readers (a YAML check never does)
    from kimi_lsp.surfaces.markdown import RST_SUFFIXES, shell_block_launches
    from kimi_lsp.surfaces.shell import LaunchContext as ShellContext
    from kimi_lsp.syntax import markdown as md

    if path.suffix.lower() in RST_SUFFIXES:
        return _WHOLE
    start = old.program.span.start
    block = next((b for b in _doc_blocks(text) if b.body.start <= start < b.body.end), None)
    if block is None or block.lang not in md.SHELL_LANGS or md.looks_like_yaml(text, block):
        return _WHOLE  # a YAML or Dockerfile block is read on a view of the whole document
    for e in edits:
        if not (block.body.start <= e.span.start <= e.span.end <= block.body.end):
            return _WHOLE
        line_start = text.rfind("\n", 0, e.span.start) + 1
        line_end = text.find("\n", e.span.end)
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        line = line[:-1] if line.endswith("\r") else line  # a CRLF document's line break
        if not _STRUCTURAL.isdisjoint(line) or not _STRUCTURAL.isdisjoint(e.new_text):
            return _WHOLE
    # the block and its last line break (what the document's read of the block sees)
    w0, body_end = block.body.start, block.body.end
    w1 = body_end + (2 if text.startswith("\r\n", body_end) else 1 if text.startswith("\n", body_end) else 0)
    local = text[w0:w1]
    for e in sorted(edits, key=lambda e: (e.span.start, e.span.end), reverse=True):
        local = local[: e.span.start - w0] + e.new_text + local[e.span.end - w0 :]
    shift = sum(len(e.new_text) - (e.span.end - e.span.start) for e in edits)
    edited = md.CodeBlock(block.lang, Span(0, body_end - w0 + shift), block.indent, block.closed)
    if md.looks_like_yaml(local, edited):
        return _WHOLE
    lctx = ShellContext(path, Surface.MARKDOWN, path.parent)
    found = _same_launch(old, tuple(shell_block_launches(local, edited, lctx, base=w0)), edits)
    if found is None:
        return None
    if found.base_dir != path.parent:
        return _WHOLE  # a `cd` in the block: where it leads depends on the blocks before
    # what earlier blocks of the document set: the directory their `cd`s lead to, their pip lines
    return replace(found, base_dir=old.base_dir, own_pins=old.own_pins or found.own_pins)


def _same_launch(old: LaunchCommand, launches: tuple[LaunchCommand, ...], edits: list[Edit]) -> LaunchCommand | None:
    """The launch at the old one's start, moved by the edits before it."""
    start = old.program.span.start
    shift = sum(len(e.new_text) - (e.span.end - e.span.start) for e in edits if e.span.end <= start)
    for cmd in launches:
        if cmd.program.span.start == start + shift and cmd.entry is old.entry:
            return cmd
    return None


def _reread_config(src: SourceText, schema: Schema) -> tuple[ConfigFile | None, list[tuple[str, str]]]:
    sr = read_surface(src, is_sglang_key=_is_sglang_key(schema), force=Surface.CONFIG_YAML)
    cfg = next((c.config for c in sr.launches if c.config is not None), None)
    return cfg, [("KL001", p.message) for p in sr.problems]


def _is_sglang_key(schema: Schema) -> Callable[[str], bool]:
    # the engine's reading of a YAML key (Engine._is_sglang_key): a config key or a whole option
    def pred(key: str) -> bool:
        if schema.config_key(key) is not None:
            return True
        m = schema.match("--" + key)
        return m is not None and not isinstance(m, tuple)

    return pred


# -- running the rules -----------------------------------------------------------------------


def _enabled(ctx: LaunchContext, rules: Iterable[Rule] | None) -> tuple[Rule, ...]:
    if rules is not None:
        return tuple(rules)
    from kimi_lsp.rules import LAUNCH_RULES  # the registry imports the rules, which import this

    return tuple(r for r in LAUNCH_RULES if ctx.settings.enabled(r.code))


def _vetting_context(ctx: LaunchContext, launch: ResolvedLaunch, ws: Workspace, src: SourceText) -> LaunchContext:
    return LaunchContext(launch, ws, ctx.settings, src, _governing_fn=lambda: ctx.governing, cache={_VETTING: True})


def _errors(ctx: LaunchContext, rules: tuple[Rule, ...], problems: Iterable[tuple[str, str]]) -> ErrorCount:
    found: ErrorCount = Counter(problems)
    for r in rules:
        try:
            for v in r.check(ctx):
                sev = ctx.settings.severity_for(r.code, v.severity or r.default_severity)
                if sev is Severity.ERROR:
                    found[(r.code, v.message)] += 1
        except Exception:  # the engine reports a rule's bug on the real launch; here it proves nothing
            continue
    return found


def _unsafe(fix: Fix) -> Fix:
    return Fix(fix.title, fix.edits, Applicability.UNSAFE, fix.followup)


class _EditedWorkspace(Workspace):
    """The project as it would read after the fix: edited texts first, the rest as it is."""

    def __init__(self, base: Workspace, texts: dict[Path, str]) -> None:  # noqa: D107 - no super(): a view
        self._base = base
        self._texts = texts
        self._sources: dict[Path, SourceText] = {}
        self.root = base.root

    def exists(self, path: Path) -> bool:
        return normalize_path(path) in self._texts or self._base.exists(path)

    def read(self, path: Path) -> SourceText | ReadFailure:
        p = normalize_path(path)
        if p in self._texts:
            if p not in self._sources:
                self._sources[p] = SourceText(p, self._texts[p])
            return self._sources[p]
        return self._base.read(path)

    def text(self, path: Path) -> str | None:
        r = self.read(path)
        return r.text if isinstance(r, SourceText) else None

    def resolve(self, path: Path) -> Path:
        return self._base.resolve(path)

    def repo_root(self, start: Path, fallback: Path | None = None) -> Path:
        return self._base.repo_root(start, fallback)

    def set_overlay(self, path: Path, text: str) -> None:
        raise TypeError("a vetting view is read-only")

    def drop_overlay(self, path: Path) -> None:
        raise TypeError("a vetting view is read-only")

    def invalidate(self, path: Path | None = None) -> None:
        return None
