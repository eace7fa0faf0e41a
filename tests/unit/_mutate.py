"""Mutations for the differential tests of the scanners (test_yaml_scan, test_toml_scan, test_uv_lock_scan,
test_pylock_scan)."""
from __future__ import annotations

import random


def mutate(rng: random.Random, text: str, alphabet: list[str], *, longest_cut: int = 3, last: str = "reindent") -> str:
    """One to three edits: insert a character of ``alphabet`` (40 %), cut up to ``longest_cut``
    characters (30 %), double a line (15 %), then ``last`` (15 %): re-indent a line, or shuffle
    the lines."""
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(text) + 1)
        op = rng.random()
        if op < 0.4:
            text = text[:i] + rng.choice(alphabet) + text[i:]
        elif op < 0.7:
            text = text[:i] + text[i + rng.randint(1, longest_cut):]
        else:
            lines = text.split("\n")
            j = rng.randrange(len(lines))
            if op < 0.85:
                lines.insert(j, lines[j])
            elif last == "shuffle":
                rng.shuffle(lines)
            else:
                lines[j] = " " * rng.randint(0, 4) + lines[j].lstrip(" ")
            text = "\n".join(lines)
    return text


def line_edits(text: str, step: int) -> list[str]:
    """Every ``step``-th line dropped, doubled (a key defined twice, ...), given a trailing
    comment, its first quotes made single, and its first `` = `` made ``=``: one edit each."""
    lines = text.split("\n")
    out: list[str] = []
    for i in range(0, len(lines), step):
        out.append("\n".join(lines[:i] + lines[i + 1 :]))
        out.append("\n".join(lines[: i + 1] + lines[i:]))
        out.append("\n".join(lines[:i] + [lines[i] + " # note"] + lines[i + 1 :]))
        out.append("\n".join(lines[:i] + [lines[i].replace('"', "'", 2)] + lines[i + 1 :]))
        out.append("\n".join(lines[:i] + [lines[i].replace(" = ", "=", 1)] + lines[i + 1 :]))
    return out


def apply_edit(text: str, old: str, new: str) -> str:
    """``text`` with its first ``old`` made ``new`` (every line end, when ``old`` is one; ``new``
    appended, when ``old`` is empty). ``old`` must be in the text: an edit that finds nothing to
    change would test the unchanged file."""
    assert old in text
    if not old:
        return text + new
    return text.replace(old, new) if old == "\n" else text.replace(old, new, 1)
