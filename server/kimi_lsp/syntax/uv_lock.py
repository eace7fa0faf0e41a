"""uv.lock as uv writes it, read by a scan: the packages' names, versions and fork markers, located.

A uv.lock is most of the TOML a ``--check`` run reads (the real lock of an sglang project is
~360 KB), and ``syntax/toml.py``'s ``parse`` + ``locate`` spend ~40 ms on one. uv writes its
lock in one fixed shape: one key per line, single spaces around ``=``, strings without escapes,
inline tables ``{ k = v, ... }``, arrays on one line or one item per line with a trailing comma.
``scan`` reads exactly that subset of TOML, block by block with compiled patterns, and returns
``None`` on anything else (a comment, an escape, a quoted or dotted key, a table uv does not write,
a duplicate key, a table defined twice): the caller then reads the file with tomllib and the
locator, so the scan only ever answers for files whose every line it has checked against TOML's
grammar and whose every table and key it has seen defined once. On those files its answer equals
what tomllib's values and the locator's positions give (``tests/unit/test_uv_lock_scan.py`` holds
it to that on every uv.lock fixture).

Artifact lists (``sdist``/``wheels``/``files`` lines written the way uv writes them) are matched
by ``artifacts()`` and not looked into, as ``pins/locks.py`` leaves them out of the tomllib parse.
"""
from __future__ import annotations

import re

from kimi_lsp import _regex
from kimi_lsp._record import dataclass
from kimi_lsp.text import Span

# Artifact lists as the tools write them (shared with pins/locks.py, which blanks the same lines
# before tomllib sees them). Compiled on first use: a run whose project has no lock never needs it.
_ARTIFACTS = (
    r"^(?:wheels|files)[ \t]*=[ \t]*\[[ \t]*\n(?:[ \t]+\{[^\n]*\}[ \t]*,?[ \t]*\n)*\][ \t]*$"
    r"|^(?:wheels|files)[ \t]*=[ \t]*\[\{[^\n]*\}\][ \t]*$"
    r"|^sdist[ \t]*=[ \t]*\{[^\n]*\}[ \t]*$"
)


_artifacts: re.Pattern[str] | None = None


def artifacts() -> re.Pattern[str]:
    """The artifact-list pattern (multi-line mode), compiled once."""
    global _artifacts
    if _artifacts is None:
        _artifacts = _regex.compile(_ARTIFACTS, re.M)
    return _artifacts


# A TOML basic string without escapes (control characters other than tab are not allowed in one).
_STR = r'"[^"\\\x00-\x08\x0a-\x1f\x7f]*"'
_KEY = r"[A-Za-z0-9_-]+"
_SCALAR = rf"(?:{_STR}|true|false|0|[1-9][0-9]*)"
# Each value pattern appears once in the next (a separator looks ahead instead of repeating the
# item), which keeps the compiled pattern small: it is compiled when the first uv.lock is read.
# Arrays may end in a comma (TOML allows it), inline tables may not.
_SARR = rf"\[(?:{_SCALAR}(?:, |(?=\])))*\]"
_IT1 = rf"(?:\{{(?: {_KEY} = (?:{_SCALAR}|{_SARR})(?:,(?= [A-Za-z0-9_-])|(?= \}})))+ \}}|\{{\}})"
_IT2 = rf"(?:\{{(?: {_KEY} = (?:{_SCALAR}|{_SARR}|{_IT1})(?:,(?= [A-Za-z0-9_-])|(?= \}})))+ \}}|\{{\}})"
_ITEM = rf"(?:{_SCALAR}|{_IT2})"
# Arrays: items separated by commas, a trailing comma allowed, spaces and newlines between them
# (TOML's array syntax without comments), so one pattern covers uv's one-line arrays, its one
# item per line, and ``conflicts``' array of arrays.
_ARRAY1 = rf"\[[ \n]*(?:{_ITEM}[ \n]*(?:,[ \n]*|(?=\])))*\]"
_VALUE = rf"(?:{_ITEM}|\[[ \n]*(?:(?:{_ITEM}|{_ARRAY1})[ \n]*(?:,[ \n]*|(?=\])))*\])"
# One block: a blank line, a table header, or a key and its value (the value may span lines).
_BLOCK_PATTERN = (
    rf"(?P<blank>\n)"
    rf"|\[\[(?P<aot>[a-z.-]+)\]\]\n"
    rf"|\[(?P<table>[a-z.-]+)\]\n"
    rf"|(?P<key>{_KEY}) = (?P<value>{_VALUE})\n"
)
_block: re.Pattern[str] | None = None
# A whole [[package]] table in the shape uv writes for almost every package, read in one match
# (a 359 KB lock is ~200 of these against ~1,600 blocks): its keys in uv's order, each once, and
# each value in a narrower grammar than _VALUE's (a one-key ``source``, dependencies whose keys
# come in a fixed order), so the table has no duplicate key to look for. Anything else in a
# package (another key, another order, a sub-table) is left to the block loop, which carries on
# from where this match ends with the keys it saw; the answer is the loop's own (tested).
# A dependency's keys in uv's order: ``version`` and ``source`` are written together, for a package
# the lock holds more than one version of (numpy, one per Python range).
_DEP = (rf'\{{ name = {_STR}(?:, version = {_STR}, source = \{{ [a-z]+ = {_STR} \}})?'
        rf'(?:, extra = \[{_STR}(?:, {_STR})*\])?(?:, marker = {_STR})? \}}')
_PACKAGE_PATTERN = (
    r"\[\[package\]\]\n"
    rf"name = (?P<name>{_STR})\n"
    rf"version = (?P<version>{_STR})\n"
    rf"source = \{{ [a-z]+ = {_STR} \}}\n"
    rf"(?:resolution-markers = (?P<markers>\[\n(?:    {_STR},\n)*\])\n)?"
    rf"(?P<deps>dependencies = \[\n(?:    {_DEP},\n)*\]\n)?"
    r"(?P<sdist>sdist = \{[^\n]*\}\n)?"
    r"(?P<wheels>wheels = \[\n(?:[ \t]+\{[^\n]*\}[ \t]*,?[ \t]*\n)*\]\n|wheels = \[\{[^\n]*\}\]\n)?"
)
_package: re.Pattern[str] | None = None
USE_PACKAGE_PATTERN = True  # tests turn it off to hold its answers to the block loop's
_STR_RE = _regex.compile(_STR)
_INNERMOST = _regex.compile(r"\{ ([^{}]*) \}")
# A key of an inline table (after "{ " or ", "), or a brace. Arrays inside a table hold scalars
# only, so a ", KEY = " between two braces is a key of the innermost table around it.
_KEY_OR_BRACE = _regex.compile(rf"(?:\{{ |, )(?P<key>{_KEY}) = |[{{}}]")

_TOP_KEYS = frozenset(
    {"version", "revision", "requires-python", "resolution-markers", "supported-markers", "required-markers", "conflicts"}
)
_PACKAGE_KEYS = frozenset({"name", "version", "source", "resolution-markers", "dependencies"})
# Tables in the order uv writes them; a table may only follow one of a lower rank (so none is
# defined twice), except that each [[package]] starts its own run of sub-tables.
_TOP_TABLES = {"options": 1, "options.exclude-newer-package": 2, "manifest": 3}
_TOP_ARRAYS = {"manifest.dependency-metadata": 4, "package": 5}
_PACKAGE_TABLES = {"package.optional-dependencies": 1, "package.dev-dependencies": 2, "package.metadata": 3,
                   "package.metadata.requires-dev": 4}
# A sub-table's name is a key of the table above it: defining both is an error in TOML.
_PARENT_KEY = {"options.exclude-newer-package": ("options", "exclude-newer-package"),
               "manifest.dependency-metadata": ("manifest", "dependency-metadata"),
               "package.metadata.requires-dev": ("package.metadata", "requires-dev")}


# One [[package]] table as the scan leaves it: a plain tuple, not a record. A 359 KB lock has ~200
# packages and a run asks for a handful of them (``pins/locks.py`` makes pins by name, on demand):
# name, offset of its ``name`` line, version (None when absent), offset of its ``version`` line
# (None with it), resolution-markers (None when absent), whether an artifact list sits in it.
# Both lines read ``key = "string"`` with the string unescaped, so the offsets place the rest.
TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import TypeAlias

    PackageRow: TypeAlias = tuple[str, int, str | None, int | None, tuple[str, ...] | None, bool]


@dataclass(frozen=True, slots=True)
class UvPackage:
    """One ``[[package]]`` table: its name and version strings, each with the span of its key/value
    (key start to closing quote) and of its content; its ``resolution-markers`` (None when absent);
    whether an artifact list sits in its table."""

    name: str
    name_kv: Span
    name_content: Span
    version: str | None
    version_kv: Span | None
    resolution_markers: tuple[str, ...] | None
    artifacts: bool


def package(row: PackageRow) -> UvPackage:
    """The located package a scan row stands for."""
    name, at, version, version_at, markers, artifacts = row
    return UvPackage(name, Span(at, at + 9 + len(name)), Span(at + 8, at + 8 + len(name)), version,
                     None if version is None or version_at is None else Span(version_at, version_at + 12 + len(version)),
                     markers, artifacts)


@dataclass(frozen=True, slots=True)
class UvLock:
    has_version: bool  # the top-level ``version`` key
    rows: tuple[PackageRow, ...]  # the [[package]] tables in file order

    @property
    def packages(self) -> tuple[UvPackage, ...]:
        return tuple(package(r) for r in self.rows)


def block_pattern() -> re.Pattern[str]:
    """One block of the TOML uv writes (a blank line, a table header, a key and its value, which
    may span lines), compiled on first use (shared with ``syntax/pylock.py``)."""
    global _block
    if _block is None:
        _block = _regex.compile(_BLOCK_PATTERN)
    return _block


def new_key(m: re.Match[str], keys: set[str]) -> tuple[str, str] | None:
    """A key/value block's key and value, the key added to its table's ``keys``; None when the
    table has that key already or an inline table in the value repeats one of its own (then the
    file is not in uv's shape: tomllib decides)."""
    key, value = m.group("key", "value")
    if key in keys or ("{ " in value and ", " in value and inline_duplicates(value)):
        return None
    keys.add(key)
    return key, value


def inline_duplicates(value: str) -> bool:
    """Whether an inline table in ``value`` (a value ``_VALUE`` matched) repeats a key.

    Strings blanked, the innermost tables are searched for a key written twice (the pattern cannot
    cross a brace), then replaced by a scalar, until no table is left."""
    flat = _STR_RE.sub('""', value)
    while "{" in flat:
        if _repeated_key(flat):
            return True
        nxt = _INNERMOST.sub("0", flat).replace("{}", "0")
        if nxt == flat:
            return True  # not an inline table _VALUE makes: let tomllib decide
        flat = nxt
    return False


def _repeated_key(flat: str) -> bool:
    """Whether a key appears twice between two braces of ``flat``: what the pattern
    ``(?:\\{ |, )(KEY) = [^{}]*?, \\1 = `` finds, in one pass. (That pattern, searched, scanned the
    rest of the table from each key: quadratic in the keys of one inline table, 16,000 keys > 30 s.)"""
    seen: set[str] = set()
    for m in _KEY_OR_BRACE.finditer(flat):
        key = m.group("key")
        if key is None or m.group(0)[0] == "{":
            seen.clear()  # a brace ends the stretch the pattern's ``[^{}]*?`` could cross
        if key is not None:
            if key in seen:
                return True
            seen.add(key)
    return False


def scan(text: str) -> UvLock | None:
    """The packages of a uv.lock written in uv's own shape, or None (read it with tomllib)."""
    if not text.endswith("\n"):
        return None
    global _package
    if _package is None:
        _package = _regex.compile(_PACKAGE_PATTERN)
    n = len(text)
    pos = 0
    match_block = block_pattern().match
    match_package = _package.match if USE_PACKAGE_PATTERN else None
    match_artifacts = artifacts().match
    table = ""  # "" = the root table
    keys: set[str] = set()
    table_keys: dict[str, set[str]] = {"": keys}
    top_rank = 0
    sub_rank = 0
    rows: list[PackageRow] = []
    in_package = False
    name: str | None = None
    name_at = 0  # where the package's `name = ` line starts
    version: str | None = None
    version_at: int | None = None
    markers: tuple[str, ...] | None = None
    has_artifacts = False

    while pos < n:
        c = text[pos]
        if c == "\n":  # a blank line (the block pattern's first alternative, without its call)
            pos += 1
            continue
        if c == "[" and match_package is not None and top_rank <= 5:
            m = match_package(text, pos)
            if m is not None:  # as the block loop reads it: the header, then each key once
                if not _next_package(rows, table_keys, in_package, name, name_at, version, version_at, markers,
                                     has_artifacts):
                    return None
                in_package = True
                sub_rank = 0
                top_rank = 5
                table = "package"
                keys = {"name", "version", "source"}
                table_keys["package"] = keys
                quoted, version, got, deps, sdist, wheels = m.group("name", "version", "markers", "deps", "sdist",
                                                                    "wheels")
                name = quoted[1:-1]
                name_at = pos + 12  # after `[[package]]\n`
                version_at = name_at + len(quoted) + 8  # after `name = "..."\n`
                version = version[1:-1]
                markers = None
                if got is not None:
                    keys.add("resolution-markers")
                    markers = tuple(x[1:-1] for x in _STR_RE.findall(got))
                if deps is not None:
                    keys.add("dependencies")
                has_artifacts = sdist is not None or wheels is not None
                pos = m.end()
                continue
        if c in "swf":
            m = match_artifacts(text, pos)
            if m is not None:
                if table == "package":
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
        if kind == "value":  # (the last group a key/value block closes)
            got = new_key(m, keys)
            if got is None:
                return None
            key, value = got
            if table == "package":
                if key not in _PACKAGE_KEYS:
                    return None
                if key == "name" or key == "version":
                    if value[0] != '"':
                        return None
                    if key == "name":  # the line is `name = "..."`, the string unescaped (_STR)
                        name = value[1:-1]
                        name_at = m.start()
                    else:
                        version = value[1:-1]
                        version_at = m.start()
                elif key == "resolution-markers":
                    if value[0] != "[" or _STR_RE.sub("", value).strip("[], \n"):
                        return None  # not an array of strings
                    markers = tuple(s[1:-1] for s in _STR_RE.findall(value))
            elif table == "" and key not in _TOP_KEYS:
                return None
            continue
        # a header
        if kind == "aot":
            got = m.group("aot")
            rank = _TOP_ARRAYS.get(got)
            if rank is None or rank < top_rank:
                return None
            if got == "package":
                if not _next_package(rows, table_keys, in_package, name, name_at, version, version_at, markers,
                                     has_artifacts):
                    return None
                in_package = True
                name = version = None
                version_at = None
                markers = None
                has_artifacts = False
                sub_rank = 0
            elif top_rank < rank and _parent_defines(table_keys, got):
                return None
            top_rank = rank
        else:
            got = m.group("table")
            if got.startswith("package."):
                rank = _PACKAGE_TABLES.get(got)
                if not in_package or rank is None or rank <= sub_rank:
                    return None
                sub_rank = rank
            else:
                rank = _TOP_TABLES.get(got)
                if rank is None or rank <= top_rank:
                    return None
                top_rank = rank
            if _parent_defines(table_keys, got):
                return None
        table = got
        keys = set()
        table_keys[got] = keys
    if in_package:
        if not name:
            return None
        rows.append((name, name_at, version, version_at, markers, has_artifacts))
    return UvLock("version" in table_keys[""], tuple(rows))


def _next_package(rows: list[PackageRow], table_keys: dict[str, set[str]], in_package: bool, name: str | None,
                  name_at: int, version: str | None, version_at: int | None, markers: tuple[str, ...] | None,
                  has_artifacts: bool) -> bool:
    """A new [[package]] begins: the one before it is done (False when it had no name: not uv's
    shape), and the sub-tables it defined may be defined again."""
    if in_package:
        if not name:
            return False
        rows.append((name, name_at, version, version_at, markers, has_artifacts))
    for sub in _PACKAGE_TABLES:
        table_keys.pop(sub, None)
    return True


def _parent_defines(table_keys: dict[str, set[str]], table: str) -> bool:
    parent = _PARENT_KEY.get(table)
    return parent is not None and parent[1] in table_keys.get(parent[0], ())


__all__ = ["UvLock", "UvPackage", "artifacts", "block_pattern", "inline_duplicates", "new_key", "package", "scan"]
