"""The rule catalogue: unique codes and names, documented sections, docs/rules.md current."""
from __future__ import annotations

import re
from pathlib import Path

from kimi_lsp.catalogue import render_docs
from kimi_lsp.rules import ALL_RULES

ROOT = Path(__file__).resolve().parents[1]
FIXED_CODES = {
    "KL001": "error", "KL101": "error", "KL102": "warning", "KL103": "error",
    "KL201": "error", "KL202": "error", "KL203": "error", "KL204": "warning", "KL205": "error", "KL206": "error",
}


def test_codes_and_names_are_unique_and_well_formed() -> None:
    codes = [r.code for r in ALL_RULES]
    names = [r.name for r in ALL_RULES]
    assert len(codes) == len(set(codes))
    assert len(names) == len(set(names))
    for r in ALL_RULES:
        assert re.fullmatch(r"KL\d{3}", r.code), r.code
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name), r.name


def test_fixed_codes_keep_their_severity() -> None:
    by_code = {r.code: r for r in ALL_RULES}
    for code, sev in FIXED_CODES.items():
        if code in by_code:
            assert by_code[code].default_severity.value == sev, code


def test_every_rule_documents_what_why_and_an_example() -> None:
    for r in ALL_RULES:
        for section in ("## What it does", "## Why is this bad?", "## Example", "Use instead:"):
            assert section in r.doc, f"{r.code} lacks {section!r}"


def test_docs_rules_md_is_current() -> None:
    current = (ROOT / "docs" / "rules.md").read_text("utf-8")
    assert current == render_docs(), "docs/rules.md is stale: run python scripts/gen_rules_doc.py"


def test_every_launch_rule_has_fixture_cases() -> None:
    fixtures = ROOT / "tests" / "fixtures"
    text = "\n".join(p.read_text("utf-8", "replace") for p in fixtures.rglob("*") if p.is_file())
    for r in ALL_RULES:
        assert f"expect: {r.code}" in text or f": {r.code}" in text, f"no fixture expects {r.code}"
