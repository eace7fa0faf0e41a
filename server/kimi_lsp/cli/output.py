"""Reporters: text, json, github, sarif. The engine's diagnostics in, one string out."""
from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from kimi_lsp import _regex
from kimi_lsp import __version__
from kimi_lsp._record import dataclass
from kimi_lsp.diagnostics import Diagnostic, Edit, Severity
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText, Workspace

TYPE_CHECKING = False  # typing itself is not imported: see _record.py
if TYPE_CHECKING:
    from typing import Any

# C0 controls (but tab), DEL, C1 controls, and the Unicode line/paragraph separators and bidi
# overrides that reorder what a terminal or log viewer shows. ASCII text (nearly every message)
# is matched with the ASCII part alone; the whole class compiles on the first other text.
_ASCII_CONTROLS = {False: _regex.compile("[\x00-\x08\x0a-\x1f\x7f]"), True: _regex.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")}
_OTHER_CONTROLS = "\x80-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_ALL_CONTROLS: dict[bool, re.Pattern[str]] = {}


def _escape_controls(text: str, keep_newlines: bool) -> str:
    if text.isascii():
        pattern = _ASCII_CONTROLS[keep_newlines]
    else:
        found = _ALL_CONTROLS.get(keep_newlines)
        if found is None:
            ascii_part = _ASCII_CONTROLS[keep_newlines].pattern[1:-1]
            found = _ALL_CONTROLS[keep_newlines] = re.compile(f"[{ascii_part}{_OTHER_CONTROLS}]")
        pattern = found
    return pattern.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)
DOCS_URL = "https://github.com/kimi-lsp/kimi-lsp/blob/main/docs/rules.md"


@dataclass(frozen=True)
class Pos:
    line: int  # 1-based
    column: int  # 1-based, characters
    end_line: int
    end_column: int


class Positions:
    """Span -> 1-based line/column, reading each file once through the workspace."""

    def __init__(self, workspace: Workspace) -> None:
        self.ws = workspace
        self._books: dict[Path, Any] = {}

    def cell(self, path: Path, span: Span) -> tuple[int, int, int] | None:
        """For a notebook: (cell number, line, column) of the span's start as a notebook editor
        shows it, all 1-based; None for any other file or a place outside every cell."""
        if path.suffix != ".ipynb":
            return None
        from kimi_lsp.syntax import notebook as nb

        if path not in self._books:
            src = self.ws.read(path)
            self._books[path] = nb.read(src.text) if isinstance(src, SourceText) else None
        book = self._books[path]
        return nb.cell_position(book, span.start) if book is not None else None

    def cell_note(self, path: Path, span: Span) -> str:
        """`` (cell 3, line 2)`` after a notebook diagnostic's message; empty elsewhere."""
        c = self.cell(path, span)
        return f" (cell {c[0]}, line {c[1]})" if c is not None else ""

    def of(self, path: Path, span: Span) -> Pos:
        src = self.ws.read(path)
        if not isinstance(src, SourceText):
            return Pos(1, 1, 1, 1)
        li = src.lines
        l1, c1 = li.position(span.start)
        l2, c2 = li.position(span.end)
        return Pos(l1 + 1, c1 + 1, l2 + 1, c2 + 1)


def printable(text: str) -> str:
    """``text`` with control characters escaped (ESC, CR, BEL, C1 and the bidi/line separators):
    repository text must not move the cursor, recolour or overwrite what the terminal shows."""
    return _escape_controls(text, keep_newlines=False)


def display_path(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return path.as_posix()


def fixable(d: Diagnostic) -> bool:
    return any(f.applicability.value == "safe" and f.edits for f in d.fixes)


# ANSI styles for a terminal (ruff's palette): the code by severity, the location bold, the caret
_STYLE = {"error": "\033[1;31m", "warning": "\033[1;33m", "info": "\033[1;34m", "bold": "\033[1m",
          "dim": "\033[2m", "reset": "\033[0m"}


def use_color(stream: Any) -> bool:
    """Colour and source excerpts on a terminal, as ruff and hadolint do: ``FORCE_COLOR`` (not
    empty or 0) turns them on, ``NO_COLOR`` (https://no-color.org, not empty) off, else only a
    TTY that is not ``TERM=dumb``. Pipes, files and CI logs get the plain contract lines."""
    force = os.environ.get("FORCE_COLOR", "")
    if force and force != "0":
        return True
    if os.environ.get("NO_COLOR", ""):
        return False
    try:
        return bool(stream.isatty()) and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError, OSError):
        return False


def _excerpt(d: Diagnostic, pos: Positions, color: bool) -> list[str]:
    """The diagnostic's source line with a caret under its span (its first line only), ruff's
    way: `  |` gutter, the line number, the text with control characters escaped."""
    src = pos.ws.read(d.path)
    if not isinstance(src, SourceText) or d.path.suffix == ".ipynb":
        return []
    p = pos.of(d.path, d.location.span)
    text = src.lines.line_text(p.line - 1).rstrip("\r\n")
    if len(text) > 200:
        return []  # a minified line says nothing at a glance
    shown = printable(text.expandtabs(1))
    width = max(1, (p.end_column if p.end_line == p.line else len(text) + 1) - p.column)
    if len(shown) != len(text):  # escapes widen the line: point at its start
        width, col = 1, 1
    else:
        col = p.column
    gutter = " " * len(str(p.line))
    caret = " " * (col - 1) + "^" * min(width, max(1, len(text) - col + 1))
    if color:
        caret = f"{_STYLE[d.severity.value]}{caret}{_STYLE['reset']}"
    return [f"{gutter} |", f"{p.line} | {shown}", f"{gutter} | {caret}"]


def render_text(diags: Sequence[Diagnostic], pos: Positions, cwd: Path, *, files: int, quiet: bool = False,
                show_source: bool = True, color: bool = False) -> str:
    """The text report. With ``color`` (a terminal: ``use_color``) the codes are coloured by
    severity, which is named too, and each diagnostic shows its source line with a caret; the
    contract lines (``path:line:col: CODE message``) stay as they are without it."""
    out: list[str] = []
    for d in diags:
        p = pos.of(d.path, d.location.span)
        mark = " [*]" if fixable(d) else ""
        note = pos.cell_note(d.path, d.location.span)
        where = f"{printable(display_path(d.path, cwd))}:{p.line}:{p.column}:"
        if color:
            sev = d.severity.value
            out.append(f"{_STYLE['bold']}{where}{_STYLE['reset']} {_STYLE[sev]}{d.code}{_STYLE['reset']}{mark} "
                       f"{_STYLE[sev]}{sev}{_STYLE['reset']}: {printable(d.message)}{note}")
        else:
            out.append(f"{where} {d.code}{mark} {printable(d.message)}{note}")
        if quiet:
            continue
        if color and show_source:
            out.extend(_excerpt(d, pos, color))
        for r in d.related:
            rp = pos.of(r.location.path, r.location.span)
            rnote = pos.cell_note(r.location.path, r.location.span)
            out.append(f"  --> {printable(display_path(r.location.path, cwd))}:{rp.line}:{rp.column}: {printable(r.message)}{rnote}")
        for f in d.fixes:
            tag = {"safe": "fix", "unsafe": "unsafe fix", "display-only": "hint"}[f.applicability.value]
            out.append(f"  {tag}: {printable(f.title)}")
    if not quiet:
        c = Counter(d.severity for d in diags)
        n_fix = sum(1 for d in diags if fixable(d))
        if diags:
            summary = f"Found {len(diags)} problem{'s' if len(diags) != 1 else ''} ({c[Severity.ERROR]} error{'s' if c[Severity.ERROR] != 1 else ''}, {c[Severity.WARNING]} warning{'s' if c[Severity.WARNING] != 1 else ''}, {c[Severity.INFO]} info) in {files} file{'s' if files != 1 else ''} checked."
            if n_fix:
                summary += f"\n[*] {n_fix} fixable with `kimi-lsp --check --fix`."
            out.append(summary)
        else:
            out.append(f"All checks passed ({files} file{'s' if files != 1 else ''} checked).")
    return "\n".join(out) + ("\n" if out else "")


def _edit_json(e: Edit, pos: Positions, cwd: Path) -> dict[str, Any]:
    p = pos.of(e.path, e.span)
    return {
        "path": display_path(e.path, cwd),
        "line": p.line,
        "column": p.column,
        "end_line": p.end_line,
        "end_column": p.end_column,
        "new_text": e.new_text,
    }


def diagnostic_json(d: Diagnostic, pos: Positions, cwd: Path) -> dict[str, Any]:
    p = pos.of(d.path, d.location.span)
    obj: dict[str, Any] = {
        "path": display_path(d.path, cwd),
        "line": p.line,
        "column": p.column,
        "end_line": p.end_line,
        "end_column": p.end_column,
        "code": d.code,
        "severity": d.severity.value,
        "message": d.message,
        "related": [],
        "fixes": [],
    }
    cell = pos.cell(d.path, d.location.span)
    if cell is not None:  # a notebook: where its editor shows the place (the file's line is JSON's)
        obj["cell"] = {"number": cell[0], "line": cell[1], "column": cell[2]}
    for r in d.related:
        rp = pos.of(r.location.path, r.location.span)
        rel: dict[str, Any] = {"path": display_path(r.location.path, cwd), "line": rp.line, "column": rp.column, "message": r.message}
        rcell = pos.cell(r.location.path, r.location.span)
        if rcell is not None:
            rel["cell"] = {"number": rcell[0], "line": rcell[1], "column": rcell[2]}
        obj["related"].append(rel)
    for f in d.fixes:
        fj: dict[str, Any] = {
            "title": f.title,
            "applicability": f.applicability.value,
            "edits": [_edit_json(e, pos, cwd) for e in f.edits],
        }
        if f.followup:
            fj["followup"] = f.followup
        obj["fixes"].append(fj)
    return obj


def summary(diags: Sequence[Diagnostic], files: int) -> dict[str, int]:
    c = Counter(d.severity for d in diags)
    return {"files": files, "errors": c[Severity.ERROR], "warnings": c[Severity.WARNING], "infos": c[Severity.INFO]}


def render_json(diags: Sequence[Diagnostic], pos: Positions, cwd: Path, *, files: int,
                errors: Sequence[str] = (), diff: str | None = None) -> str:
    """The JSON document. ``errors`` (the key ``run_errors``): why the run exits 2 (a path that cannot be read, a bad
    option, an internal error); the key is there only then, so that a reader of the document
    alone never takes a failed run for a clean one. ``diff`` (the key ``diff``, with --diff
    only): the unified diff --fix would write, "" when it would change nothing."""
    doc: dict[str, object] = {
        "version": __version__,
        "diagnostics": [diagnostic_json(d, pos, cwd) for d in diags],
        "summary": summary(diags, files),
    }
    if diff is not None:
        doc["diff"] = diff
    if errors:
        doc["run_errors"] = [first_line(e) for e in errors]
    import json  # only here: a text report (pre-commit's) loads no JSON encoder

    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def first_line(message: str) -> str:
    """An error's first line (a traceback's last is in the text on stderr), printable."""
    lines = message.strip().splitlines()
    return printable(lines[0]) if lines else "internal error"


def _gh_escape(s: str, prop: bool = False) -> str:
    s = _escape_controls(s, keep_newlines=True)
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        s = s.replace(":", "%3A").replace(",", "%2C")
    return s


def annotation_base(cwd: Path) -> Path:
    """Directory annotation paths are relative to: the repository checkout GitHub reports
    against (``GITHUB_WORKSPACE``) when the run is inside it, else the working directory."""
    ws = os.environ.get("GITHUB_WORKSPACE")
    if ws:
        base = Path(ws).resolve()
        if base == cwd or base in cwd.parents:
            return base
    return cwd


def render_github(diags: Sequence[Diagnostic], pos: Positions, cwd: Path, *, files: int) -> str:
    """GitHub Actions workflow commands (``::error file=…,line=…::message``), one per diagnostic;
    the related locations and fix titles follow the message on lines of their own."""
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    base = annotation_base(cwd)
    out = []
    for d in diags:
        p = pos.of(d.path, d.location.span)
        props = (
            f"file={_gh_escape(display_path(d.path, base), True)},line={p.line},col={p.column},"
            f"endLine={p.end_line},endColumn={p.end_column},title={_gh_escape(f'kimi-lsp {d.code}', True)}"
        )
        body = [f"{d.code} {d.message}{pos.cell_note(d.path, d.location.span)}"]
        for r in d.related:
            rp = pos.of(r.location.path, r.location.span)
            body.append(f"  --> {display_path(r.location.path, base)}:{rp.line}:{rp.column}: {r.message}")
        for f in d.fixes:
            tag = {"safe": "fix", "unsafe": "unsafe fix", "display-only": "hint"}[f.applicability.value]
            body.append(f"  {tag}: {f.title}")
        out.append(f"::{level[d.severity]} {props}::{_gh_escape(chr(10).join(body))}")
    return "\n".join(out) + ("\n" if out else "")


def render_statistics(diags: Sequence[Diagnostic]) -> str:
    """Counts per rule, most frequent first (``[*]``: has a safe fix)."""
    from kimi_lsp.rules import get

    count = Counter(d.code for d in diags)
    fixable_codes = {d.code for d in diags if fixable(d)}
    lines = []
    for code, n in sorted(count.items(), key=lambda kv: (-kv[1], kv[0])):
        r = get(code)
        mark = "[*] " if code in fixable_codes else "    "
        lines.append(f"{n:5d}  {code}  {mark}{r.name if r else ''}".rstrip())
    return "\n".join(lines) + ("\n" if lines else "")
