""".gitignore matching in the walk (kimi_lsp.walk): git's semantics, held to ``git check-ignore
--no-index`` and to the regex translation it replaced, without backtracking, and a walk whose cost
per entry does not grow with depth on any Python."""
from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kimi_lsp import walk as walk_mod
from kimi_lsp.walk import IgnorePattern, compile_line, is_ignored, walk

K3 = "model-path: moonshotai/Kimi-K3\ndcp-size: 8\n"


# -- the matcher does not backtrack -------------------------------------------------------------


def _steps(fn: Callable[[], object]) -> int:
    before = walk_mod.steps
    fn()
    return walk_mod.steps - before


def test_a_line_of_stars_costs_at_most_pattern_times_name() -> None:
    """``*a*a*a*a*a*a*a*a*a*b`` against 60 (and 120) ``a``s: the regex translation backtracked
    about C(60, 9) times; the glob takes at most len(pattern) x len(name) steps, and twice the
    name takes about twice the steps."""
    pat = compile_line("*a*a*a*a*a*a*a*a*a*b")
    assert pat is not None
    small = _steps(lambda: pat.matches("a" * 60, False))
    large = _steps(lambda: pat.matches("a" * 120, False))
    assert not pat.matches("a" * 60, False) and pat.matches("a" * 60 + "b", False)
    assert 0 < small <= 20 * 60 and large <= 20 * 120
    assert large <= 2.5 * small, (small, large)


def test_a_line_of_globstars_is_linear_in_depth(monkeypatch: pytest.MonkeyPatch) -> None:
    """``**/**/.../x`` against a 40- and an 80-deep path: the positions a path reaches are a
    set (at most one per segment), so each component costs the same at any depth."""
    calls = 0
    real = walk_mod._seg_match

    def counting(seg: object, name: str) -> bool:
        nonlocal calls
        calls += 1
        return real(seg, name)  # type: ignore[arg-type]

    monkeypatch.setattr(walk_mod, "_seg_match", counting)
    pat = compile_line("**/" * 20 + "x")
    assert pat is not None
    counts = []
    for depth in (40, 80):
        calls = 0
        assert not pat.matches("/".join(["a"] * depth), False)
        assert pat.matches("/".join(["a"] * depth + ["x"]), False)
        counts.append(calls)
    assert counts[1] <= 2.2 * counts[0], counts


def test_the_reproducers_tree_is_walked(tmp_path: Path) -> None:
    """The red-team case end to end: the committed line and a file named with 60 ``a``s."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*a*a*a*a*a*a*a*a*a*b\n*a*a*a*a*a*a*a*a*a*.yaml\n", "utf-8")
    (tmp_path / "k3.yaml").write_text(K3, "utf-8")
    (tmp_path / ("a" * 60 + ".yaml")).write_text(K3, "utf-8")
    (tmp_path / ("a" * 60 + ".toml")).write_text("", "utf-8")
    before = walk_mod.steps
    found = list(walk(tmp_path, tmp_path))
    assert found == [tmp_path / ("a" * 60 + ".toml"), tmp_path / "k3.yaml"]
    assert walk_mod.steps - before < 5_000


# -- git's semantics, case by case ---------------------------------------------------------------

# (line, path relative to the .gitignore's directory, is a directory, matched)
CASES = [
    ("*.log", "x/y.log", False, True),
    ("*.log", "y.log", True, True),
    ("/a/b", "a/b", False, True),
    ("/a/b", "x/a/b", False, False),
    ("a/b", "x/a/b", False, False),  # a slash in the middle anchors too
    ("/x", "x", False, True),
    ("/x", "q/x", False, False),
    ("x", "q/x", False, True),
    ("a/**/b", "a/b", False, True),
    ("a/**/b", "a/x/y/b", False, True),
    ("**/x", "x", False, True),
    ("**/x", "q/r/x", False, True),
    ("a/**", "a", True, False),  # everything inside, not the directory itself
    ("a/**", "a/x/y", False, True),
    ("/**", "anything", False, True),
    ("**", "q/anything", False, True),
    ("a**b/c", "axyb/c", False, True),  # "**" inside a name is "*"
    ("a**b/c", "ax/yb/c", False, False),
    ("a**/c", "ax/y/c", False, True),  # ...but right after a literal prefix it crosses them, as in git
    ("a**/c", "a/c", False, True),
    ("*a**/c", "ax/y/c", False, False),
    ("build/", "build", False, False),  # a trailing slash: directories only
    ("build/", "build", True, True),
    ("build/", "q/build", True, True),
    ("[!a]b", "cb", False, True),
    ("[^a]b", "ab", False, False),
    ("[a-c]x", "bx", False, True),
    ("[]]x", "]x", False, True),  # "]" first is a member
    ("[[:digit:]]x", "7x", False, True),
    ("[[:nope:]]x", "7x", False, False),  # an unknown class: nothing
    ("[ab", "[ab", False, False),  # an unclosed class: nothing (git), not a literal "["
    ("?", "a", False, True),
    ("a?b", "a/b", False, False),
    ("\\!x", "!x", False, True),
    ("\\#x", "#x", False, True),
    ("\\*", "*", False, True),
    ("\\*", "a", False, False),
    ("a\\ ", "a ", False, True),  # an escaped trailing space stays
    ("a  ", "a", False, True),  # unescaped trailing spaces go
    ("a\\", "a", False, False),  # a trailing backslash: nothing
    ("a\\/b", "a/b", False, True),
]


@pytest.mark.parametrize(("line", "rel", "is_dir", "want"), CASES)
def test_one_line(line: str, rel: str, is_dir: bool, want: bool) -> None:
    pat = compile_line(line)
    assert (pat is not None and pat.matches(rel, is_dir)) == want


@pytest.mark.parametrize("line", ["", "   ", "# a comment", "!", "/", "\r"])
def test_lines_that_are_no_pattern(line: str) -> None:
    assert compile_line(line) is None


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, "utf-8")


def test_precedence_negation_and_ignored_directories(tmp_path: Path) -> None:
    """The last matching line wins, a deeper .gitignore over a shallower one; a ``!`` line cannot
    bring back a file whose directory is ignored (git never looks inside it); CRLF, a byte-order
    mark and ``\\`` escapes are read as git reads them."""
    _tree(tmp_path, {
        ".gitignore": "\ufeff*.yaml\r\n!keep.yaml\r\nlogs/\n!logs/k.yaml\n\\#hash.yaml\n",
        "keep.yaml": K3, "drop.yaml": K3, "#hash.yaml": K3, "logs/k.yaml": K3,
        "sub/.gitignore": "!*.yaml\nkeep.yaml\n", "sub/a.yaml": K3, "sub/keep.yaml": K3,
        "sub/deeper/b.yaml": K3,
    })
    found = {p.relative_to(tmp_path).as_posix() for p in walk(tmp_path, tmp_path)}
    assert found == {"keep.yaml", "sub/a.yaml", "sub/deeper/b.yaml"}
    assert is_ignored(str(tmp_path), "logs/k.yaml", False)
    assert is_ignored(str(tmp_path), "logs", True) and not is_ignored(str(tmp_path), "logs", False)
    assert not is_ignored(str(tmp_path), "sub/deeper/b.yaml", False)


def test_a_walk_below_an_ignored_directory_finds_nothing(tmp_path: Path) -> None:
    """``kimi-lsp --check out2/sub`` where the repository ignores ``out2/``: the .gitignore files
    above the walked directory apply, and an ignored directory on the way hides it all."""
    _tree(tmp_path, {".gitignore": "out2/\n", "out2/sub/k3.yaml": K3, "src/k3.yaml": K3,
                     "src/.gitignore": "/deep/x/\n", "src/deep/x/y/k3.yaml": K3})
    assert list(walk(tmp_path / "out2" / "sub", tmp_path)) == []
    assert list(walk(tmp_path / "src" / "deep" / "x" / "y", tmp_path)) == []
    assert list(walk(tmp_path / "src", tmp_path)) == [tmp_path / "src" / "k3.yaml"]


# -- differential: the regex translation this replaced (short patterns, where it is safe) ---------


def _old_regex(line: str) -> tuple[re.Pattern[str], bool, bool] | None:
    """walk.py's translation before: (regex, negate, dir_only)."""
    line = line.rstrip("\n").rstrip("\r")
    if not line.strip() or line.startswith("#"):
        return None
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    anchored = "/" in line
    line = line.lstrip("/")
    rx = ""
    i = 0
    while i < len(line):
        c = line[i]
        if line.startswith("**/", i):
            rx += "(?:.*/)?"
            i += 3
        elif line.startswith("/**", i) and i + 3 == len(line):
            rx += "/.*"
            i += 3
        elif line.startswith("**", i):
            rx += ".*"
            i += 2
        elif c == "*":
            rx += "[^/]*"
            i += 1
        elif c == "?":
            rx += "[^/]"
            i += 1
        elif c == "[":
            j = line.find("]", i + 1)
            body = line[i + 1 : j]
            rx += f"[{body}]"
            i = j + 1
        else:
            rx += re.escape(c)
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"^{prefix}{rx}(?:/.*)?$"), negate, dir_only


def _old_ignored(line: str, rel: str, is_dir: bool) -> bool:
    """The old ``IgnoreRules.ignored`` for one line (its regexes also matched below a match)."""
    compiled = _old_regex(line)
    assert compiled is not None
    rx, _negate, dir_only = compiled
    if dir_only and not is_dir:
        parent = rel.rsplit("/", 1)[0] if "/" in rel else None
        return parent is not None and bool(rx.match(parent))
    return bool(rx.match(rel))


def _new_ignored(pat: IgnorePattern, rel: str, is_dir: bool) -> bool:
    """The same question of the new matcher: the path, or a directory above it, matches."""
    parts = rel.split("/")
    above = any(pat.matches("/".join(parts[:k]), True) for k in range(1, len(parts)))
    return above or pat.matches(rel, is_dir)


def _short_segment(rng: random.Random) -> str:
    # the forms both translations read alike: "**" only as a whole segment (the regex read "a**"
    # as crossing directories), positive classes (its negated class matched "/"), no escapes
    seg = ""
    for _ in range(rng.randint(1, 3)):
        atom = rng.choice(["a", "b", "*", "?", "[ab]", "[a-b]", "a"])
        seg += "" if atom == "*" and seg.endswith("*") else atom
    return seg


def _short_pattern(rng: random.Random) -> str:
    segs = [("**" if rng.random() < 0.2 else _short_segment(rng)) for _ in range(rng.randint(1, 3))]
    line = "/".join(segs)
    if rng.random() < 0.3:
        line = "/" + line
    if rng.random() < 0.3:
        line += "/"
    return line


def _short_path(rng: random.Random) -> str:
    return "/".join(rng.choice(["a", "b", "ab", "ba", "aa", "bab", "abb"]) for _ in range(rng.randint(1, 4)))


def test_differential_against_the_old_regex_translation() -> None:
    rng = random.Random(32)
    checked = 0
    for _ in range(600):
        line = _short_pattern(rng)
        pat = compile_line(line)
        assert pat is not None, line
        for _ in range(25):
            rel, is_dir = _short_path(rng), rng.random() < 0.5
            assert _new_ignored(pat, rel, is_dir) == _old_ignored(line, rel, is_dir), (line, rel, is_dir)
            checked += 1
    assert checked == 15_000


# -- differential: git itself --------------------------------------------------------------------

NAMES = ["a", "b", "ab", "ba", "a b", "x.yaml", "ab.yaml", "b-a.yaml", "#c.yaml", "!d.yaml", "*"]


def _git_segment(rng: random.Random) -> str:
    atoms = ["a", "b", "*", "?", "[ab]", "[!a]", "[^b]", "[a-b]", "[]a]", "[[:alpha:]]", "\\*", "\\a",
             ".yaml", "x", "-", "\\ "]
    return "".join(rng.choice(atoms) for _ in range(rng.randint(1, 3)))


def _git_line(rng: random.Random) -> str:
    segs = [("**" if rng.random() < 0.2 else _git_segment(rng)) for _ in range(rng.choice([1, 1, 2, 3]))]
    line = "/".join(segs)
    if rng.random() < 0.25:
        line = "/" + line
    if rng.random() < 0.25:
        line += "/"
    if rng.random() < 0.2:
        line = "!" + line
    if rng.random() < 0.1:
        line += "  "
    return line


def _paths(rng: random.Random) -> Iterator[tuple[str, bool]]:
    for _ in range(30):
        parts = [rng.choice(NAMES[:5]) for _ in range(rng.randint(0, 3))]
        for k in range(1, len(parts) + 1):
            yield "/".join(parts[:k]), True
        yield "/".join([*parts, rng.choice(NAMES)]), False


@pytest.mark.skipif(shutil.which("git") is None, reason="no git here")
def test_differential_against_git_check_ignore(tmp_path: Path) -> None:
    """Random .gitignore files (a top one and one in a subdirectory) over a random tree: each
    path's verdict is ``git check-ignore --no-index``'s (git reads the files; it runs in a
    repository of its own with no user or system configuration)."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "HOME": str(tmp_path)}
    rng = random.Random(33)
    compared = 0
    for round_ in range(25):
        top = tmp_path / f"r{round_}"
        top.mkdir()
        subprocess.run(["git", "init", "-q", str(top)], check=True, env=env)
        wanted = list(_paths(rng))
        for rel, is_dir in wanted:
            if is_dir:
                (top / rel).mkdir(parents=True, exist_ok=True)
        for rel, is_dir in wanted:
            if not is_dir and not (top / rel).exists():  # (a name another path made a directory)
                (top / rel).write_text("", "utf-8")
        paths = {rel: (top / rel).is_dir() for rel, _ in wanted}
        (top / ".gitignore").write_text("".join(_git_line(rng) + "\n" for _ in range(rng.randint(1, 6))), "utf-8")
        subdirs = sorted(rel for rel, d in paths.items() if d)
        if subdirs:
            (top / rng.choice(subdirs) / ".gitignore").write_text(
                "".join(_git_line(rng) + "\n" for _ in range(rng.randint(1, 4))), "utf-8")
        asked = sorted(rel for rel in paths if not rel.endswith(".gitignore"))
        out = subprocess.run(["git", "-C", str(top), "check-ignore", "--no-index", "--stdin", "-z"],
                             input="\0".join(asked) + "\0", capture_output=True, text=True, env=env)
        assert out.returncode in (0, 1), out.stderr
        git_says = {p for p in out.stdout.split("\0") if p}
        for rel in asked:
            mine = is_ignored(str(top), rel, paths[rel])
            lines = (top / ".gitignore").read_text("utf-8")
            assert mine == (rel in git_says), (rel, paths[rel], lines)
            compared += 1
    assert compared > 500


# -- the walk's cost per entry does not grow with depth ----------------------------------------


def _make_chain(root: Path, depth: int) -> Path:
    deep = root
    for i in range(depth):
        deep = deep / "d"
        os.mkdir(deep)
        (deep / f"f{i}.log").write_text("", "utf-8")
        (deep / "x.log").write_text("", "utf-8")
    (deep / "k3.yaml").write_text(K3, "utf-8")
    return deep


def _remove_chain(top: Path) -> None:
    subprocess.run(["rm", "-rf", str(top)], check=True)  # (shutil.rmtree recurses once per level)


def _calls(fn: Callable[[], object]) -> int:
    """Python and builtin calls made by ``fn``: an operation count that a quadratic pathlib
    helper (Path.relative_to, ``in path.parents``: one path object per ancestor on 3.12+) shows
    as it does in time, and that a busy machine does not change."""
    count = 0

    def prof(_frame: object, event: str, _arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def test_the_walk_costs_the_same_per_entry_at_any_depth(tmp_path: Path) -> None:
    """Twice as deep, about twice the calls (quadratic would be four times), from the top and
    from a walked directory deep below it, with name, path and ``**`` lines in force."""
    counts: dict[tuple[int, bool], int] = {}
    for depth in (100, 200):
        root = tmp_path / f"r{depth}"
        (root / ".git").mkdir(parents=True)
        (root / ".gitignore").write_text("*.log\n!x.log\n**/d/x.log\n/d/d/*.log\nd/**/f7.log\n", "utf-8")
        deep = _make_chain(root, depth)
        try:
            found: list[Path] = []
            counts[depth, False] = _calls(lambda: found.extend(walk(root, root)))
            assert found == [deep / "k3.yaml"]
            counts[depth, True] = _calls(lambda: found.extend(walk(deep.parent, root)))
            assert found[1:] == [deep / "k3.yaml"]
        finally:
            _remove_chain(root / "d")
    for below in (False, True):
        ratio = counts[200, below] / counts[100, below]
        assert ratio < 2.5, (below, counts)
