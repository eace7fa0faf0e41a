"""Seeded mutations for the differential tests of the scanners (test_yaml_scan, test_toml_scan)."""
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
