"""Small subcommands: ``rules``, ``explain CODE``, ``export --to yaml|args FILE.toml``."""
from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from kimi_lsp.cli.usage import Parser


def rules_cmd(argv: Sequence[str]) -> int:
    p = Parser(prog="kimi-lsp rules", description="List the rules.")
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
    p = Parser(prog="kimi-lsp explain", description="Print one rule's documentation.")
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
    p = Parser(
        prog="kimi-lsp export",
        description="Turn a TOML launch profile ([sglang] table) into an sglang --config YAML or a command line.",
    )
    p.add_argument("--to", choices=("yaml", "args"), required=True)
    p.add_argument("file", help="a *.toml with a top-level [sglang] table")
    ns = p.parse_args(list(argv))
    from kimi_lsp.surfaces import read_surface
    from kimi_lsp.surfaces.model import Surface
    from kimi_lsp.workspace import SourceText, Workspace

    from kimi_lsp.cli.output import printable

    path = Path(ns.file).resolve()
    src = Workspace().read(path)
    if not isinstance(src, SourceText):
        print(f"kimi-lsp: error: {printable(ns.file)}: {printable(src.reason)}", file=sys.stderr)
        return 2
    res = read_surface(src, force=Surface.TOML)
    if res.problems:
        for prob in res.problems:
            line, col = src.lines.position(prob.span.start)
            print(f"{printable(ns.file)}:{line + 1}:{col + 1}: {printable(prob.message)}", file=sys.stderr)
        return 2
    cfg = next((c.config for c in res.launches if c.config is not None), None)
    if cfg is None:
        print(f"kimi-lsp: error: {printable(ns.file)}: no [sglang] table", file=sys.stderr)
        return 2
    entries = [(e.key.value.replace("_", "-"), e.value) for e in cfg.entries]
    if ns.to == "yaml":
        import yaml

        if cfg.env:
            print("# environment for this launch (set it in the shell; sglang's --config has no env section):")
            for v in cfg.env:
                print(printable(f"#   {v.name.value}={v.value.value if v.value else ''}"))
        text = yaml.safe_dump(dict(entries), sort_keys=False, default_flow_style=False, allow_unicode=True)
        if printable(text.replace("\n", "")) != text.replace("\n", ""):
            # YAML passes the bidi overrides and C1 controls through as text; escaped, they are the same value
            text = yaml.safe_dump(dict(entries), sort_keys=False, default_flow_style=False, allow_unicode=False)
        sys.stdout.write(text)
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
    if any("\0" in w for w in words):
        # no command line can carry a NUL: bash's $'\0' would cut the value short, silently
        print(f"kimi-lsp: error: {printable(ns.file)}: a value holds a NUL character, which no command line can pass", file=sys.stderr)
        return 2
    print(" ".join(shell_word(w) if "=" not in w or w.startswith("-") else _quote_assign(w) for w in words))
    return 0


def _quote_assign(word: str) -> str:
    name, _, value = word.partition("=")
    return f"{name}={shell_word(value)}"


# bash's ANSI-C quoting: the escapes its $'...' reads back as the character
_ANSI_C = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r",
           "\x1b": "\\E", "'": "\\'", "\\": "\\\\"}


def shell_word(word: str) -> str:
    """``word`` quoted for a POSIX shell: ``shlex.quote`` when it holds no control character,
    else bash's ``$'...'`` (zsh, ksh and busybox sh read it too) with each control escaped, so
    that a profile's value reaches the terminal as text and still reads back as itself."""
    from kimi_lsp.cli.output import printable

    if printable(word) == word:
        return shlex.quote(word)
    out: list[str] = []
    for ch in word:
        if ch in _ANSI_C:
            out.append(_ANSI_C[ch])
        elif printable(ch) != ch:
            # four hex digits always: \u takes up to four, so a following digit is not read into it
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x80 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"
