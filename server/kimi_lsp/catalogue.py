"""Rule documentation rendered from rule metadata: `kimi-lsp rules/explain`, docs/rules.md, hovers."""
from __future__ import annotations

from kimi_lsp.rules import ALL_RULES
from kimi_lsp.rules._base import FixAvailability, Rule

DOCS_BASE = "https://github.com/kimi-lsp/kimi-lsp/blob/main/docs/rules.md"


def anchor(r: Rule) -> str:
    return f"{r.code.lower()}-{r.name}"


def doc_url(r: Rule) -> str:
    return f"{DOCS_BASE}#{anchor(r)}"


def render_rule_markdown(r: Rule, heading: str = "#") -> str:
    fix = {
        FixAvailability.ALWAYS: "Fix is always available.",
        FixAvailability.SOMETIMES: "Fix is sometimes available.",
        FixAvailability.NEVER: "No automatic fix.",
    }[r.fix]
    body = r.doc.split("\n\n", 1)[1] if "\n\n" in r.doc else ""
    # the rule's own sections sit one level below its title
    body = body.replace("\n## ", f"\n{heading}# ")
    if body.startswith("## "):
        body = f"{heading}# " + body[3:]
    return (
        f"{heading} {r.code} {r.name}\n\n"
        f"{r.summary}\n\n"
        f"Default severity: **{r.default_severity.value}**. {fix}\n\n"
        f"{body.strip()}\n"
    )


def render_index_markdown() -> str:
    rows = ["| code | name | severity | fix | summary |", "|---|---|---|---|---|"]
    for r in ALL_RULES:
        rows.append(f"| [{r.code}](#{anchor(r)}) | {r.name} | {r.default_severity.value} | {r.fix.value} | {r.summary} |")
    return "\n".join(rows) + "\n"


def render_docs() -> str:
    """docs/rules.md: the index, then every rule (regenerated with `python scripts/gen_rules_doc.py`)."""
    parts = [
        "# kimi-lsp rules\n",
        "<!-- Generated from the rule modules by scripts/gen_rules_doc.py; CI fails when it is stale. -->\n",
        render_index_markdown(),
    ]
    for r in ALL_RULES:
        parts.append(render_rule_markdown(r, heading="##"))
    return "\n".join(parts)
