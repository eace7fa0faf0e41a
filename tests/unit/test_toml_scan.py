"""syntax/toml_scan.py against tomllib: the same tables for every document it reads.

The scan reads plain TOML (most pyproject.toml files) without importing tomllib. Whatever it
accepts must be exactly what ``tomllib.loads`` returns; everything else it must decline, never
misread. Held to that on every TOML file under tests/ and examples/, on seeded mutations of them,
on generated documents, and on the shapes it must leave to tomllib.
"""
from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from kimi_lsp._toml import tomllib
from kimi_lsp.syntax import toml_scan
from kimi_lsp.syntax.toml import parse
from tests.unit._mutate import mutate

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(p for d in ("tests", "examples") for p in (ROOT / d).rglob("*.toml") if p.stat().st_size < 1_000_000)


def _tomllib(text: str) -> object:
    try:
        return tomllib.loads(text)
    except (ValueError, RecursionError):
        return None


def _agrees(text: str) -> bool:
    """The scan declines, or gives what tomllib gives (types included: repr tells 1 from True)."""
    got = toml_scan.scan(text)
    if got is None:
        return True
    ref = _tomllib(text)
    return ref is not None and got == ref and repr(got) == repr(ref)


def test_every_toml_file_reads_as_tomllib_reads_it() -> None:
    scanned = 0
    for path in FILES:
        text = path.read_text("utf-8", errors="surrogateescape")
        assert _agrees(text), path
        scanned += toml_scan.scan(text) is not None
    assert scanned >= len(FILES) // 2  # the scan is not merely declining


def test_pyproject_fixtures_need_no_tomllib() -> None:
    plain = [p for p in FILES if p.name in ("pyproject.toml", "kimi-lsp.toml") and "broken" not in str(p)]
    read = [p for p in plain if toml_scan.scan(p.read_text("utf-8")) is not None]
    assert len(read) >= 0.8 * len(plain)


_NOISE = ["=", " ", "\n", "[", "]", "{", "}", ",", '"', "'", "#", ".", "-", "0", "1", "a", "\\", "\t", "\r", "\x00", "é", "_"]


def test_mutations_are_read_as_tomllib_reads_them_or_declined() -> None:
    rng = random.Random(1211)
    texts = [p.read_text("utf-8", errors="surrogateescape") for p in FILES if p.stat().st_size < 20_000]
    for _ in range(6000):
        text = mutate(rng, rng.choice(texts), _NOISE, longest_cut=1, last="shuffle")
        assert _agrees(text), text


def _gen_value(rng: random.Random, depth: int = 0) -> str:
    kind = rng.random()
    if kind < 0.3:
        return '"' + rng.choice(["", "x", "a b", "é", "say \\\"hi\\\"", "a\\\\b", "tab\\t", "#no", "1.0", "'q'"]) + '"'
    if kind < 0.4:
        return "'" + rng.choice(["", "raw \\d+", 'say "hi"', "#"]) + "'"
    if kind < 0.5:
        return rng.choice(["0", "-0", "7", "-12", "123456789", "1.5", "1e3", "01", "+1", "1_000", "0x1f", "inf"])
    if kind < 0.6:
        return rng.choice(["true", "false", "True", "1979-05-27", "07:32:00"])
    if kind < 0.65:
        return rng.choice(['"""\nml\n"""', "'''ml'''", '"""a"b"""', '"""x\\\n  y"""'])
    if kind < 0.85 and depth < 3:
        items = [_gen_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
        sep = rng.choice([", ", ",", ",\n  ", " , ", ",  # c\n  "])
        return "[" + rng.choice(["", "\n  ", " "]) + sep.join(items) + rng.choice(["", ",", ",\n", "\n"]) + "]"
    if depth < 3:
        keys = [rng.choice(["a", "b", "c-d", '"q k"', "'lit'", "a.b", "1"]) for _ in range(rng.randint(0, 3))]
        body = ", ".join(f"{k} = {_gen_value(rng, depth + 1)}" for k in keys)
        return "{" + (f" {body} " if body else "") + rng.choice(["}", ",}", "}"]) if body else "{}"
    return '"leaf"'


def _gen_document(rng: random.Random) -> str:
    lines: list[str] = []
    tables = ["project", "tool.uv", "tool.uv.sources", "tool", "a.b.c", "a", 'project."entry-points"', "tool . x"]
    for _ in range(rng.randint(1, 10)):
        r = rng.random()
        if r < 0.15:
            lines.append(f"[{rng.choice(tables)}]" + rng.choice(["", "  # t", " x"]))
        elif r < 0.22:
            lines.append(f"[[{rng.choice(['tool.uv.index', 'package', 'a'])}]]")
        elif r < 0.3:
            lines.append(rng.choice(["", "# comment", "  ", "#\t tab"]))
        else:
            key = rng.choice(["name", "version", "dependencies", "a", "b", "c-d", '"quoted"', "'lit'", "dotted.key", "x y"])
            lines.append(f"{key}{rng.choice([' = ', '=', '  =  ', ' ='])}{_gen_value(rng)}" + rng.choice(["", " # c", "  #"]))
    return "\n".join(lines) + rng.choice(["", "\n"])


def test_generated_documents_are_read_as_tomllib_reads_them_or_declined() -> None:
    rng = random.Random(44)
    read = 0
    for _ in range(20000):
        text = _gen_document(rng)
        assert _agrees(text), text
        read += toml_scan.scan(text) is not None
    assert read > 2000


@pytest.mark.parametrize("text", [
    "a.b = 1\n",  # dotted key
    "x = 1.5\n",  # float
    "d = 1979-05-27\n",  # date
    "a = 1\na = 2\n",  # a key twice
    "[t]\n[t]\n",  # a table twice
    "a = 1\n[a]\n",  # a table over a value
    "[[t]]\n[t]\n",  # an array of tables, then a table
    "[t]\n[[t]]\n",
    "i = {a = 1,}\n",  # trailing comma in an inline table
    "s = \"\\u00e9\"\n",  # an escape the scan leaves to tomllib
    "a = 1\r\n",  # CR
    "\ufeffa = 1\n",  # BOM
    "[ t ]\n",  # spaces in a header
    "s = \"\"\"a\\\n  b\"\"\"\n",  # line-ending backslash
    "n = 1_000\n",
    "[[a]]\n[a.b]\n",  # a sub-table of an array of tables' last element
    "s = '''it''s'''\n",
])
def test_shapes_left_to_tomllib(text: str) -> None:
    assert toml_scan.scan(text) is None


def test_values() -> None:
    text = ('esc = "say \\"hi\\" \\\\ \\t"\nml = """\nline\n"""\n'
            '[project]\nname = "x"  # c\ndependencies = [\n  "sglang==0.5.23",  # pinned\n  \'raw\',\n]\n'
            '[project."entry-points".g]\nk = { a = 1, b = [true, false], c = {} }\n'
            '[[tool.uv.index]]\nurl = "u"\n[[tool.uv.index]]\nurl = "v"\n')
    assert toml_scan.scan(text) == tomllib.loads(text) == {
        "esc": 'say "hi" \\ \t', "ml": "line\n",
        "project": {"name": "x", "dependencies": ["sglang==0.5.23", "raw"],
                    "entry-points": {"g": {"k": {"a": 1, "b": [True, False], "c": {}}}}},
        "tool": {"uv": {"index": [{"url": "u"}, {"url": "v"}]}},
    }


def test_a_plain_pyproject_is_parsed_without_tomllib() -> None:
    code = ("import sys; from kimi_lsp.syntax.toml import parse; "
            "print(parse('[project]\\nname = \"x\"\\n'), 'tomllib' in sys.modules, 'typing' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT / "server"), "PATH": ""}).stdout
    assert out.strip() == "{'project': {'name': 'x'}} False False"
    assert parse("a = 1.5\n") == {"a": 1.5}  # declined: tomllib reads it
