"""pylock.toml as ``uv export --format pylock.toml`` writes it, read by a scan.

uv writes PEP 751's lock with the TOML writer of its uv.lock (``syntax/uv_lock.py``): a header of
comments, the top-level keys, then one ``[[packages]]`` table per package (name, version, marker,
index, then its ``sdist`` and ``wheels`` artifact lines). ``scan_pylock`` reads exactly that, with
uv_lock's grammar for a line, and answers None for anything else (a sub-table, a key PEP 751 gives
a package that uv's export does not write there, a package without a version, a comment after the
header): ``pins/locks.py`` then reads the file with tomllib and the locator. Its own module: a run
whose project has a uv.lock never loads it. ``tests/unit/test_pylock_scan.py`` holds the two
readings equal.
"""
from __future__ import annotations

from kimi_lsp import _regex
from kimi_lsp._record import dataclass
from kimi_lsp.syntax import uv_lock

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import TypeAlias

_COMMENT_LINE = _regex.compile(r"#[^\x00-\x08\x0a-\x1f\x7f]*\n")
_PYLOCK_TOP_KEYS = frozenset(
    {"lock-version", "environments", "requires-python", "extras", "dependency-groups", "default-groups", "created-by"})
_PYLOCK_PACKAGE_KEYS = frozenset({"name", "version", "marker", "requires-python", "index"})

# name, offset of its ``name`` line, version, offset of its ``version`` line, marker (None when
# absent), whether an artifact list sits in its table
if TYPE_CHECKING:
    PylockRow: TypeAlias = tuple[str, int, str, int, str | None, bool]


@dataclass(frozen=True, slots=True)
class Pylock:
    created_by: str | None  # the top-level ``created-by`` when it is a string
    has_lock_version: bool
    rows: tuple[PylockRow, ...]  # the [[packages]] tables in file order


def scan_pylock(text: str) -> Pylock | None:
    """The packages of a pylock.toml written as uv exports it, or None (read it with tomllib)."""
    if not text.endswith("\n"):
        return None
    match_block = uv_lock.block_pattern().match
    match_artifacts = uv_lock.artifacts().match
    n = len(text)
    pos = 0
    while pos < n and text[pos] == "#":  # the header uv writes: comments before the first key
        m = _COMMENT_LINE.match(text, pos)
        if m is None:
            return None
        pos = m.end()
    top: dict[str, str] = {}
    keys: set[str] = set()
    rows: list[PylockRow] = []
    in_package = False
    name: str | None = None
    name_at = version_at = 0
    version: str | None = None
    marker: str | None = None
    has_artifacts = False
    while pos < n:
        c = text[pos]
        if c == "\n":
            pos += 1
            continue
        if in_package and c in "swf":
            m = match_artifacts(text, pos)
            if m is not None:
                has_artifacts = True
                pos = m.end() + 1  # the pattern ends at the line end, which is a "\n"
                continue
        m = match_block(text, pos)
        if m is None:
            return None
        pos = m.end()
        kind = m.lastgroup
        if kind == "blank":
            continue
        if kind == "value":
            got = uv_lock.new_key(m, keys)
            if got is None:
                return None
            key, value = got
            if not in_package:
                if key not in _PYLOCK_TOP_KEYS:
                    return None
                top[key] = value
                continue
            if key not in _PYLOCK_PACKAGE_KEYS:
                return None
            if key in ("name", "version", "marker"):
                if value[0] != '"':
                    return None  # not a string: tomllib's reading says what that means
                if key == "name":  # the line is `name = "..."`, the string unescaped (_STR)
                    name, name_at = value[1:-1], m.start()
                elif key == "version":
                    version, version_at = value[1:-1], m.start()
                else:
                    marker = value[1:-1]
            continue
        if kind != "aot" or m.group("aot") != "packages":
            return None  # a table uv's export does not write
        if in_package:
            if not name or version is None:
                return None
            rows.append((name, name_at, version, version_at, marker, has_artifacts))
        in_package = True
        keys = set()
        name = version = marker = None
        has_artifacts = False
    if in_package:
        if not name or version is None:
            return None
        rows.append((name, name_at, version, version_at, marker, has_artifacts))
    creator = top.get("created-by")
    return Pylock(creator[1:-1] if creator is not None and creator[0] == '"' else None, "lock-version" in top,
                  tuple(rows))



__all__ = ["Pylock", "scan_pylock"]
