"""Small subcommands: ``rules``, ``explain CODE``, ``export --to yaml|args FILE.toml``."""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path


def rules_cmd(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="kimi-lsp rules", description="List the rules.")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    ns = p.parse_args(list(argv))
    from kimi_lsp.catalogue import render_index_markdown
    from kimi_lsp.rules import ALL_RULES

    if ns.format == "json":
        print(json.dumps([
            {"code": r.code, "name": r.name, "severity": r.default_severity.value, "fix": r.fix.value, "summary": r.summary}
            for r in ALL_RULES
        ], indent=2))
    elif ns.format == "markdown":
        sys.stdout.write(render_index_markdown())
    else:
        width = max(len(r.name) for r in ALL_RULES)
        for r in ALL_RULES:
            print(f"{r.code}  {r.name:<{width}}  {r.default_severity.value:<7}  {r.summary}")
    return 0


def explain_cmd(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="kimi-lsp explain", description="Print one rule's documentation.")
    p.add_argument("code", help="rule code (KL101) or name (flashinfer-lacks-enable-dcp)")
    ns = p.parse_args(list(argv))
    from kimi_lsp.catalogue import render_rule_markdown
    from kimi_lsp.rules import get

    r = get(ns.code)
    if r is None:
        print(f"kimi-lsp: error: unknown rule {ns.code!r} (see `kimi-lsp rules`)", file=sys.stderr)
        return 2
    sys.stdout.write(render_rule_markdown(r))
    return 0


def export_cmd(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(
        prog="kimi-lsp export",
        description="Turn a TOML launch profile ([sglang] table) into an sglang --config YAML or a command line.",
    )
    p.add_argument("--to", choices=("yaml", "args"), required=True)
    p.add_argument("file", help="a *.toml with a top-level [sglang] table")
    ns = p.parse_args(list(argv))
    from kimi_lsp.surfaces import read_surface
    from kimi_lsp.surfaces.model import Surface
    from kimi_lsp.workspace import SourceText, Workspace

    path = Path(ns.file).resolve()
    src = Workspace().read(path)
    if not isinstance(src, SourceText):
        print(f"kimi-lsp: error: {ns.file}: {src.reason}", file=sys.stderr)
        return 2
    res = read_surface(src, force=Surface.TOML)
    if res.problems:
        for prob in res.problems:
            line, col = src.lines.position(prob.span.start)
            print(f"{ns.file}:{line + 1}:{col + 1}: {prob.message}", file=sys.stderr)
        return 2
    cfg = next((c.config for c in res.launches if c.config is not None), None)
    if cfg is None:
        print(f"kimi-lsp: error: {ns.file}: no [sglang] table", file=sys.stderr)
        return 2
    entries = [(e.key.value.replace("_", "-"), e.value) for e in cfg.entries]
    if ns.to == "yaml":
        import yaml

        if cfg.env:
            print("# environment for this launch (set it in the shell; sglang's --config has no env section):")
            for v in cfg.env:
                print(f"#   {v.name.value}={v.value.value if v.value else ''}")
        sys.stdout.write(yaml.safe_dump(dict(entries), sort_keys=False, default_flow_style=False, allow_unicode=True))
        return 0
    from kimi_lsp.knowledge.schema import load_schema

    schema = load_schema(None)
    words: list[str] = [f"{v.name.value}={v.value.value if v.value else ''}" for v in cfg.env]
    words += ["python3", "-m", "sglang.launch_server"]
    for key, value in entries:
        flag = schema.config_key(key)
        if isinstance(value, bool):
            if flag is not None and not flag.takes_value:
                if value:
                    words.append(f"--{key}")
                elif flag.action == "boolean_optional":
                    words.append(f"--no-{key}")
                continue
            words += [f"--{key}", str(value).lower()]
        elif isinstance(value, list):
            if value:
                words.append(f"--{key}")
                words += [str(x) for x in value]
        elif isinstance(value, dict):
            words += [f"--{key}", json.dumps(value)]
        else:
            words += [f"--{key}", str(value)]
    print(" ".join(shlex.quote(w) if "=" not in w or w.startswith("-") else _quote_assign(w) for w in words))
    return 0


def _quote_assign(word: str) -> str:
    name, _, value = word.partition("=")
    return f"{name}={shlex.quote(value)}"
