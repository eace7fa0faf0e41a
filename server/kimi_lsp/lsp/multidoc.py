"""Re-linting one document of a multi-document YAML file (a Kubernetes manifest of dozens of
Deployments) instead of the whole file, on an edit in the editor.

A lint of a 2,000-line manifest with ~40 launches costs ~45 ms (the YAML of every document, then
the rules of every launch); an edit touches one document. Each document is linted alone, on its
own text, and its positions are shifted to the file's: the cost of a file is linear in its size
(a view of the whole file per document, as before, made 1,000 ConfigMaps cost ~20 s). Only a
result one of whose messages names a line ("the image at deploy.yaml:12") is linted again on the
file's text up to the document, blanked (newlines kept), so that its lines are the file's too. A
document's result is kept by its text and first line and reused while nothing it depends on
changed; a document that moved is shifted, unless one of its messages names a line: then it is
linted again where it moved. The first lint of a file is a full one (the editor's first
diagnostics cost what ``--check`` costs); documents are linted alone from the next edit on.

Exactness comes first: the merged result must equal a full lint. Only files where documents are
independent qualify (no suppression comment, no template, no ``pip install`` of sglang, which is
evidence for every launch of the file, no ``--config`` file, no document directives); a document
with a syntax problem falls back to a full lint (YAML stops reading there); and the first time a
file qualifies, the per-document result is checked against the full lint, and a file where they
differ is linted whole from then on. tests/lsp/test_multidoc.py holds it to a full lint after
random edits, and the text it lints to linear in the file.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

from kimi_lsp.diagnostics import Diagnostic, Edit, Fix, Location, Related
from kimi_lsp import engine
from kimi_lsp.engine import FileResult, merged
from kimi_lsp.syntax import yaml as syntax_yaml
from kimi_lsp.text import Span

log = logging.getLogger("kimi_lsp.lsp")

MIN_DOCUMENTS = 4  # below this a full lint is as cheap
_INSTALL = re.compile(r"\binstall\b")

Key = tuple[str, int]  # a document's text and its first line


def _unsafe(text: str) -> bool:
    """What makes one document's diagnostics depend on another's text, or the split unsafe:
    suppression comments (``ignore-file`` anywhere; unused ones are reported per file), template
    actions, a ``pip install`` (evidence for every launch of the file), YAML directives and
    document-end markers, a lone carriage return. Plain substring tests first: a regex that
    starts at a line start scans a 2,000-line file character by character (~3 ms)."""
    if "kimi-lsp:" in text or "{{" in text or "{%" in text:
        return True
    if "install" in text and _INSTALL.search(text):
        return True
    if text.startswith(("%", "...")) or "\n%" in text or "\n..." in text:
        return True
    return "\r" in text and text.count("\r") != text.count("\r\n")


def split(text: str) -> list[tuple[int, int, int]] | None:
    """``(start, end, first line)`` of each document (a ``---`` line starts one), or None when
    the file does not qualify."""
    if _unsafe(text):
        return None
    starts = [0]
    at = 0 if text.startswith("---") else text.find("\n---")
    while at != -1:
        s = at if at == 0 and text.startswith("---") else at + 1
        e = text.find("\n", s)
        rest = text[s + 3 : len(text) if e == -1 else e]
        if rest.strip(" \t\r"):
            return None  # `--- value`, `----`: not a plain document start
        if s:
            starts.append(s)
        at = text.find("\n---", s + 3)
    if len(starts) < MIN_DOCUMENTS:
        return None
    out = []
    line = 0
    for i, s in enumerate(starts):
        e = starts[i + 1] if i + 1 < len(starts) else len(text)
        out.append((s, e, line))
        line += text.count("\n", s, e)
    return out


def blank(text: str) -> str:
    """``text`` with every character but line breaks a space (same length, same lines)."""
    return "\n".join(" " * (len(x) - 1) + "\r" if x.endswith("\r") else " " * len(x) for x in text.split("\n"))


def _shift_span(span: Span, delta: int) -> Span:
    return Span(span.start + delta, span.end + delta)


def _shift_loc(loc: Location, path: Path, delta: int) -> Location:
    return Location(loc.path, _shift_span(loc.span, delta)) if loc.path == path else loc


def _shift_edit(e: Edit, path: Path, delta: int) -> Edit:
    return Edit(e.path, _shift_span(e.span, delta), e.new_text) if e.path == path else e


def shift(d: Diagnostic, path: Path, delta: int) -> Diagnostic:
    """``d`` with every position in ``path`` moved by ``delta`` characters."""
    if delta == 0:
        return d
    fixes = tuple(
        Fix(f.title, tuple(_shift_edit(e, path, delta) for e in f.edits), f.applicability, f.followup) for f in d.fixes
    )
    related = tuple(Related(_shift_loc(r.location, path, delta), r.message) for r in d.related)
    return Diagnostic(d.code, d.message, _shift_loc(d.location, path, delta), d.severity, fixes, related, d.data)


class Entry:
    __slots__ = ("start", "line", "result", "generation", "line_free")

    def __init__(self, start: int, line: int, result: FileResult, generation: int) -> None:
        self.start, self.line, self.result, self.generation = start, line, result, generation
        # no message names a line of this file: the result holds for the document on any line
        name = result.path.name
        self.line_free = not any(
            name in m or "line" in m
            for d in result.diagnostics
            for m in (d.message, *(r.message for r in d.related))
        )


class MultiDoc:
    """Per-path memo of document results. ``lint_view(path, text)`` lints ``path`` as if its
    text were ``text`` (the session swaps the overlay); ``valid(result, generation)`` says
    whether nothing a result depends on changed since ``generation``."""

    def __init__(self) -> None:
        self.memo: dict[Path, dict[Key, Entry]] = {}
        self.checked: dict[Path, bool] = {}  # verified against a full lint: True = same
        self.seen: set[Path] = set()  # linted whole once (the first lint of a file)
        self.reused = 0  # documents whose result was reused (tests and the log)
        self.linted = 0

    def forget(self, path: Path | None = None) -> None:
        if path is None:
            self.memo.clear()
            self.checked.clear()
            self.seen.clear()
        else:
            self.memo.pop(path, None)
            self.checked.pop(path, None)
            self.seen.discard(path)

    def lint(
        self,
        path: Path,
        text: str,
        generation: int,
        lint_view: Callable[[str], FileResult],
        full: Callable[[], FileResult],
        valid: Callable[[FileResult, int], bool],
    ) -> FileResult | None:
        """The file's result assembled from its documents, or None (lint it whole)."""
        if self.checked.get(path) is False:
            return None
        docs = split(text)
        if docs is None:
            self.memo.pop(path, None)
            return None
        if path not in self.checked and path not in self.seen:
            # A file just opened: one full lint answers at once (per document, then the check
            # against a full lint, would cost both); the documents are linted from the next edit.
            self.seen.add(path)
            return None
        old = self.memo.get(path, {})
        moved = {k[0]: e for k, e in old.items() if e.line_free}  # found by text alone
        new: dict[Key, Entry] = {}
        blanked: str | None = None
        parts: list[tuple[int, FileResult]] = []
        launches = 0
        for start, end, line in docs:
            key = (text[start:end], line)
            hit = old.get(key) or new.get(key) or moved.get(key[0])
            if hit is not None and valid(hit.result, hit.generation):
                self.reused += 1
            else:
                if syntax_yaml.load(key[0]).problems:
                    # YAML stops reading the file at a syntax error (launches after it are not
                    # read; fixes are vetted against it): a full lint says what that means
                    return None
                hit = Entry(start, line, _shifted(lint_view(key[0]), path, start), generation)
                self.linted += 1
                if not hit.line_free:
                    # a message names a line: lint it where its lines are the file's
                    if blanked is None:
                        blanked = blank(text)
                    hit = Entry(start, line, lint_view(blanked[:start] + key[0]), generation)
                    self.linted += 1
            new[key] = hit
            parts.append((start - hit.start, hit.result))
            launches += hit.result.launches
            if launches > engine.MAX_LAUNCHES_PER_FILE:
                # a full lint checks only so many launches of a file (and says so): document by
                # document, every launch would be checked, at every edit. Linted whole from now.
                self.checked[path] = False
                self.memo.pop(path, None)
                return None
        self.memo[path] = new
        result = FileResult(
            path,
            merged(
                [shift(d, path, delta) for d in r.diagnostics] for delta, r in parts
            ),
            launches=sum(r.launches for _, r in parts),
            is_launch_file=any(r.is_launch_file for _, r in parts),
            depends_on=set().union(*(r.depends_on for _, r in parts)),
        )
        if path not in self.checked:
            whole = full()
            same = _same_result(whole, result)
            self.checked[path] = same
            if not same:
                log.info("%s: documents are not independent; linted whole", path)
                self.memo.pop(path, None)
            return whole
        return result


def _shifted(res: FileResult, path: Path, delta: int) -> FileResult:
    """``res`` of a document linted on its own text, in the positions of the file it starts at
    offset ``delta`` of."""
    if delta == 0:
        return res
    diags = [shift(d, path, delta) for d in res.diagnostics]
    return FileResult(res.path, diags, res.launches, res.is_launch_file, set(res.depends_on))


def _same_result(a: FileResult, b: FileResult) -> bool:
    return (
        a.diagnostics == b.diagnostics
        and a.launches == b.launches
        and a.is_launch_file == b.is_launch_file
        and a.depends_on == b.depends_on
    )
