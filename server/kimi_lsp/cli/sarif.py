"""SARIF 2.1.0 as GitHub code scanning reads it.

One run; ``tool.driver.rules`` carries every rule with its documentation (``help``) and
``helpUri``; each result has ``ruleId``/``ruleIndex``, ``level``, a ``physicalLocation`` with a
1-based region, ``relatedLocations`` (linked from the message, which is how code scanning shows
them) and ``fixes`` (the edits of every fix that has any). Artifact URIs are relative to
``%SRCROOT%``: the checkout GitHub reports against (``GITHUB_WORKSPACE``), else the repository
root, else the working directory. Regions count Unicode code points (``columnKind``), as the
text and JSON outputs do.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from kimi_lsp import __version__
from kimi_lsp.cli.output import Positions, annotation_base, first_line
from kimi_lsp.diagnostics import Diagnostic, Edit, Fix, Severity
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText, find_repo_root

if TYPE_CHECKING:
    from kimi_lsp.rules._base import Rule

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def sarif_base(cwd: Path) -> Path:
    if os.environ.get("GITHUB_WORKSPACE"):
        base = annotation_base(cwd)
        if base != cwd:
            return base
    return find_repo_root(cwd, cwd)


def _artifact(path: Path, base: Path) -> dict[str, str]:
    try:
        rel = Path(os.path.abspath(path)).relative_to(base).as_posix()
    except ValueError:
        return {"uri": Path(os.path.abspath(path)).as_uri()}
    return {"uri": quote(rel, safe="/"), "uriBaseId": SRCROOT}


def _region(pos: Positions, path: Path, span: Span) -> dict[str, int]:
    p = pos.of(path, span)
    return {"startLine": p.line, "startColumn": p.column, "endLine": p.end_line, "endColumn": p.end_column}


def _escape(text: str) -> str:
    """Plain-text SARIF messages treat ``[text](id)`` as a link: literal brackets are escaped."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _rule_descriptor(r: Rule) -> dict[str, Any]:
    from kimi_lsp.catalogue import doc_url, render_rule_markdown

    try:
        markdown = render_rule_markdown(r)
    except Exception:  # the catalogue renderer is for docs; a rule it cannot render keeps its docstring
        markdown = r.doc
    return {
        "id": r.code,
        "name": "".join(w.capitalize() for w in r.name.split("-")),
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.summary},
        "help": {"text": r.doc, "markdown": markdown},
        "helpUri": doc_url(r),
        "defaultConfiguration": {"level": _LEVEL[r.default_severity]},
        "properties": {"tags": ["sglang", "kimi-lsp"], "fix": r.fix.value},
    }


def _fix(f: Fix, pos: Positions, base: Path) -> dict[str, Any]:
    by_file: dict[Path, list[Edit]] = {}
    for e in f.edits:
        by_file.setdefault(e.path, []).append(e)
    return {
        "description": {"text": f.title},
        "artifactChanges": [
            {
                "artifactLocation": _artifact(p, base),
                "replacements": [
                    {"deletedRegion": _region(pos, p, e.span), "insertedContent": {"text": e.new_text}}
                    for e in sorted(edits, key=lambda e: e.span.start)
                ],
            }
            for p, edits in by_file.items()
        ],
        "properties": {"applicability": f.applicability.value, **({"followup": f.followup} if f.followup else {})},
    }


def _line_text(pos: Positions, d: Diagnostic) -> str:
    src = pos.ws.read(d.path)
    if not isinstance(src, SourceText):
        return ""
    return src.lines.line_text(src.lines.line_of(d.location.span.start)).strip()


def render_sarif(
    diags: Sequence[Diagnostic], pos: Positions, cwd: Path, *, engine_errors: Sequence[str] = ()
) -> str:
    """The SARIF log; ``engine_errors`` (every reason the run exits 2) make the invocation
    unsuccessful, each a notification."""
    from kimi_lsp.rules import ALL_RULES

    base = sarif_base(cwd)
    rules = [_rule_descriptor(r) for r in ALL_RULES]
    index = {r.code: i for i, r in enumerate(ALL_RULES)}
    results = []
    seen: Counter[str] = Counter()
    for d in diags:
        loc = _artifact(d.path, base)
        text = d.message
        res: dict[str, Any] = {"ruleId": d.code}
        if d.code in index:
            res["ruleIndex"] = index[d.code]
        res["level"] = _LEVEL[d.severity]
        if d.related:
            links = []
            for k, r in enumerate(d.related):
                p = pos.of(r.location.path, r.location.span)
                name = _artifact(r.location.path, base)["uri"].rsplit("/", 1)[-1]
                links.append(f"[{_escape(f'{name}:{p.line}')}]({k})")
            text = f"{_escape(d.message)} (see {', '.join(links)})"
        cell = pos.cell(d.path, d.location.span)
        if cell is not None:  # a notebook: the region is the JSON file's; the cell is where an editor shows it
            text += f" (cell {cell[0]}, line {cell[1]})"
        res["message"] = {"text": text}
        res["locations"] = [{"physicalLocation": {"artifactLocation": loc, "region": _region(pos, d.path, d.location.span)}}]
        if cell is not None:
            res["locations"][0]["logicalLocations"] = [{"name": f"cell {cell[0]}", "kind": "notebookCell"}]
            res["properties"] = {"notebookCell": {"number": cell[0], "line": cell[1], "column": cell[2]}}
        if d.related:
            res["relatedLocations"] = [
                {
                    "id": k,
                    "message": {"text": r.message},
                    "physicalLocation": {
                        "artifactLocation": _artifact(r.location.path, base),
                        "region": _region(pos, r.location.path, r.location.span),
                    },
                }
                for k, r in enumerate(d.related)
            ]
        fixes = [_fix(f, pos, base) for f in d.fixes if f.edits]
        if fixes:
            res["fixes"] = fixes
        # stable across runs as long as the line reads the same (code scanning tracks alerts by it)
        key = f"{d.code}\0{loc['uri']}\0{_line_text(pos, d)}"
        seen[key] += 1
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        res["partialFingerprints"] = {"kimiLsp/v1": f"{digest}:{seen[key]}"}
        results.append(res)
    invocation: dict[str, Any] = {"executionSuccessful": not engine_errors}
    if engine_errors:
        invocation["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": first_line(e)}} for e in engine_errors
        ]
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "kimi-lsp",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": "https://github.com/kimi-lsp/kimi-lsp",
                        "rules": rules,
                    }
                },
                "invocations": [invocation],
                "originalUriBaseIds": {SRCROOT: {"uri": base.as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
