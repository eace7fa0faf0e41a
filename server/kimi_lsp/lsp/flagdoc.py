"""Markdown for one sglang flag (hover, completion documentation), from the release's schema."""

from __future__ import annotations

import re

from kimi_lsp.knowledge.schema import SUPPRESS, Flag, Schema

_MAX_CHOICES = 40


def help_text(flag: Flag) -> str:
    text = flag.help or ""
    if text == SUPPRESS:
        return ""
    text = text.replace("%(default)s", _show(flag.default)).replace(
        "%(choices)s", ", ".join(map(str, flag.choices or ()))
    )
    text = re.sub(r"%\((\w+)\)s", lambda m: m.group(1), text)
    return text.replace("%%", "%").strip()


def _show(value: object) -> str:
    if value is None or value == SUPPRESS:
        return "None"
    if isinstance(value, bool):
        return str(value)
    return str(value)


def type_name(flag: Flag) -> str:
    if not flag.takes_value:
        return "switch (no value)"
    base = flag.type or "str"
    if flag.nargs in ("+", "*") or isinstance(flag.nargs, int):
        return f"list of {base} (nargs={flag.nargs})"
    return base


def deprecation(flag: Flag, schema: Schema) -> str | None:
    """Why the flag is deprecated and what replaces it, or None."""
    if flag.deprecated:
        return f"Deprecated: use `{flag.deprecated}` instead."
    repl = schema.deprecated_flags.get(flag.dest)
    if repl:
        return f"Deprecated: sglang rewrites it to `{repl}` with a warning."
    if flag.action.startswith("deprecated"):
        return "Deprecated: sglang rejects or ignores it."
    return None


def is_deprecated(flag: Flag, schema: Schema) -> bool:
    return deprecation(flag, schema) is not None


def markdown(flag: Flag, schema: Schema, value: str | None = None) -> str:
    names = ", ".join(f"`{o}`" for o in flag.options)
    parts = [f"**{names}** · sglang {schema.version}"]
    text = help_text(flag)
    if text:
        parts.append(text)
    facts = [f"- type: {type_name(flag)}"]
    if flag.takes_value:
        facts.append(f"- default: `{_show(flag.default)}`")
    if flag.required:
        facts.append("- required")
    if flag.choices:
        shown = ", ".join(f"`{c}`" for c in flag.choices[:_MAX_CHOICES])
        more = f" … ({len(flag.choices) - _MAX_CHOICES} more)" if len(flag.choices) > _MAX_CHOICES else ""
        facts.append(f"- choices: {shown}{more}")
    old_values = schema.deprecated_values.get(flag.dest, {})
    if old_values:
        facts.append("- deprecated values: " + ", ".join(f"`{o}` → `{n}`" for o, n in old_values.items()))
    if flag.config_refused:
        facts.append(f"- not accepted in a `--config` YAML (sglang refuses `{flag.config_refused}` actions there)")
    parts.append("\n".join(facts))
    dep = deprecation(flag, schema)
    if dep:
        parts.append(f"⚠ {dep}")
    if value is not None and value in old_values:
        parts.append(f"⚠ `{value}` is a deprecated alias of `{old_values[value]}`.")
    elif value is not None and flag.choices and value not in map(str, flag.choices):
        parts.append(f"✗ `{value}` is not one of the choices.")
    return "\n\n".join(parts)
