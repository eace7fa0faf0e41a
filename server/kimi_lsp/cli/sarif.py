"""SARIF 2.1.0 as GitHub code scanning reads it."""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from kimi_lsp import __version__
from kimi_lsp.cli.output import Positions, display_path
from kimi_lsp.diagnostics import Diagnostic, Severity

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _region(pos: Positions, path: Path, span) -> dict:
    p = pos.of(path, span)
    return {"startLine": p.line, "startColumn": p.column, "endLine": p.end_line, "endColumn": p.end_column}


def render_sarif(diags: Sequence[Diagnostic], pos: Positions, cwd: Path) -> str:
    from kimi_lsp.catalogue import doc_url
    from kimi_lsp.rules import ALL_RULES

    rules = []
    index = {}
    for i, r in enumerate(ALL_RULES):
        index[r.code] = i
        rules.append({
            "id": r.code,
            "name": "".join(w.capitalize() for w in r.name.split("-")),
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": r.summary},
            "help": {"text": r.doc, "markdown": r.doc},
            "helpUri": doc_url(r),
            "defaultConfiguration": {"level": _LEVEL[r.default_severity]},
            "properties": {"tags": ["sglang", "kimi-lsp"]},
        })
    results = []
    for d in diags:
        res: dict = {
            "ruleId": d.code,
            "ruleIndex": index.get(d.code, 0),
            "level": _LEVEL[d.severity],
            "message": {"text": d.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": display_path(d.path, cwd), "uriBaseId": "%SRCROOT%"},
                    "region": _region(pos, d.path, d.location.span),
                }
            }],
        }
        if d.related:
            res["relatedLocations"] = [
                {
                    "id": k,
                    "message": {"text": r.message},
                    "physicalLocation": {
                        "artifactLocation": {"uri": display_path(r.location.path, cwd), "uriBaseId": "%SRCROOT%"},
                        "region": _region(pos, r.location.path, r.location.span),
                    },
                }
                for k, r in enumerate(d.related)
            ]
        fixes = [f for f in d.fixes if f.edits]
        if fixes:
            res["fixes"] = []
            for f in fixes:
                by_file: dict[Path, list] = {}
                for e in f.edits:
                    by_file.setdefault(e.path, []).append(e)
                res["fixes"].append({
                    "description": {"text": f.title},
                    "artifactChanges": [
                        {
                            "artifactLocation": {"uri": display_path(p, cwd), "uriBaseId": "%SRCROOT%"},
                            "replacements": [
                                {"deletedRegion": _region(pos, p, e.span), "insertedContent": {"text": e.new_text}}
                                for e in edits
                            ],
                        }
                        for p, edits in by_file.items()
                    ],
                })
        results.append(res)
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "kimi-lsp",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": "https://github.com/kimi-lsp/kimi-lsp",
                "rules": rules,
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": cwd.as_uri() + "/"}},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
