"""PEP 440 versions and specifiers: the part of ``packaging`` kimi-lsp's rules use, start-up cheap.

``packaging.version`` and ``packaging.specifiers`` cost ~5 ms to import (their verbose regexes,
``typing``), on every one-file ``kimi-lsp --check`` (issue 16). This module answers the same
questions with the standard library only:

- :class:`Version` parses the whole PEP 440 grammar (its appendix's regex, alternate spellings
  included), normalises (``str``), orders and hashes as ``packaging.version.Version`` does, and has
  the attributes the rules read (``public``, ``base_version``, ``release``, ``pre``, ``post``,
  ``dev``, ``local``, ``is_prerelease`` ...).
- :class:`SpecifierSet` evaluates clauses whose version is written in normal form (``>=0.6.17``,
  ``==0.7.*``, ``~=2.9``, ``!=0.6.16.post4``): the PEP 440 comparison rules, with the pre-release
  handling of ``contains(v, prereleases=True/False)`` and pip's default in :meth:`SpecifierSet.filter`.
  A clause in any other spelling (``>=1.0RC1``, ``===`` arbitrary equality, ``== v1``) is handed to
  ``packaging`` itself, imported then: what it accepts and what it admits stay packaging's.

``tests/unit/test_pep440.py`` holds both to packaging: every version and specifier in the
fixtures and knowledge tables, and generated ones, parse, normalise, order and match alike.
"""
from __future__ import annotations

import re

from kimi_lsp import _regex

TYPE_CHECKING = False  # typing is not imported at run time (start-up; see _record.py)
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

__all__ = ["InvalidSpecifier", "InvalidVersion", "Specifier", "SpecifierSet", "Version"]


class InvalidVersion(ValueError):
    """Not a PEP 440 version (as ``packaging.version.InvalidVersion``)."""


class InvalidSpecifier(ValueError):
    """Not a PEP 440 version specifier (as ``packaging.specifiers.InvalidSpecifier``)."""


# Normal form, the common case: `0.6.17`, `0.7.2rc1`, `2.9.1.post1`, `1.0.dev3`, `2.9.1+cu128`.
_NORMAL = _regex.compile(r"([0-9]+(?:\.[0-9]+)*)(?:(a|b|rc)([0-9]+))?(?:\.post([0-9]+))?(?:\.dev([0-9]+))?(?:\+([a-z0-9]+(?:\.[a-z0-9]+)*))?")
_FULL: re.Pattern[str] | None = None  # PEP 440's appendix regex, compiled on first need

_PRE_SPELLING = {"a": "a", "alpha": "a", "b": "b", "beta": "b", "c": "rc", "rc": "rc", "pre": "rc", "preview": "rc"}
_PRE_RANK = {"a": 0, "b": 1, "rc": 2}


def _full() -> re.Pattern[str]:
    global _FULL
    if _FULL is None:
        _FULL = re.compile(
            r"""\s*v?
            (?:(?P<epoch>[0-9]+)!)?
            (?P<release>[0-9]+(?:\.[0-9]+)*)
            (?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
            (?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?
            (?P<dev>[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
            (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
            \s*""",
            re.VERBOSE | re.IGNORECASE,
        )
    return _FULL


def _local_parts(text: str) -> tuple[int | str, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[-_.]", text.lower()))


# int() refuses a number of more digits than sys.get_int_max_str_digits() (4,300 by default, never
# under 640) with a ValueError: a pin `==000...0` of 10,000 digits would crash every rule that reads
# it. No release number is that long: such a text is not a version (packaging's own int() fails
# the same way, with a bare ValueError).
_MAX_DIGITS = 640


def _overlong(text: str) -> bool:
    return len(text) > _MAX_DIGITS and any(len(run) > _MAX_DIGITS for run in re.split(r"[^0-9]+", text))


_PARSED: dict[str, Version] = {}  # text -> its Version (Version.__new__)
_PARSED_MAX = 4096


class Version:
    """A PEP 440 version: ``packaging.version.Version``'s parsing, normal form and order."""

    __slots__ = ("epoch", "release", "pre", "post", "dev", "_local", "_key", "_str")

    epoch: int
    release: tuple[int, ...]
    pre: tuple[str, int] | None
    post: int | None
    dev: int | None

    # One object per text: a lint asks for the same few versions for every launch (the releases
    # a rule compares against, the pins' versions), and a Version is never changed once made.
    def __new__(cls, version: str = "") -> Version:  # (no argument: unpickling)
        hit = _PARSED.get(version) if cls is Version and type(version) is str else None
        return hit if hit is not None else object.__new__(cls)

    def __init__(self, version: str) -> None:
        if type(version) is str and _PARSED.get(version) is self:
            return  # made before
        if _overlong(version):
            raise InvalidVersion(f"Invalid version: a number of more than {_MAX_DIGITS} digits")
        m = _NORMAL.fullmatch(version)
        if m is not None:
            rel, pre_l, pre_n, post, dev, local = m.groups()
            self.epoch = 0
            self.release = tuple(map(int, rel.split(".")))
            self.pre = None if pre_l is None else (pre_l, int(pre_n))
            self.post = None if post is None else int(post)
            self.dev = None if dev is None else int(dev)
            self._local = None if local is None else _local_parts(local)
        else:
            m = _full().fullmatch(version)
            if m is None:
                raise InvalidVersion(f"Invalid version: {version!r}")
            g = m.group
            self.epoch = int(g("epoch") or 0)
            self.release = tuple(map(int, g("release").split(".")))
            self.pre = None if g("pre") is None else (_PRE_SPELLING[g("pre_l").lower()], int(g("pre_n") or 0))
            if g("post") is None:
                self.post = None
            else:
                self.post = int(g("post_n1") or g("post_n2") or 0)
            self.dev = None if g("dev") is None else int(g("dev_n") or 0)
            self._local = None if g("local") is None else _local_parts(g("local"))
        release = self.release
        end = len(release)
        while end and release[end - 1] == 0:
            end -= 1
        # packaging's _cmpkey with its ±infinity sentinels as ordered tuples: a dev-only release
        # sorts before its pre-releases, a final after them; no post before any post; no local
        # before any local, whose numeric parts sort after alphanumeric ones.
        if self.pre is not None:
            pre_key: tuple[int, int] = (_PRE_RANK[self.pre[0]], self.pre[1])
        elif self.post is None and self.dev is not None:
            pre_key = (-1, 0)
        else:
            pre_key = (3, 0)
        local_key: tuple[Any, ...] = () if self._local is None else (
            (1,) + tuple((1, p, "") if isinstance(p, int) else (0, 0, p) for p in self._local))
        self._key = (self.epoch, release[:end], pre_key, -1 if self.post is None else self.post,
                     (1, 0) if self.dev is None else (0, self.dev), local_key)
        self._str = ""
        if type(self) is Version and len(_PARSED) < _PARSED_MAX:
            _PARSED[version] = self

    def _parts(self) -> tuple[Any, ...]:
        """What the version is made of, as marshal keeps it (knowledge/_compiled.py)."""
        return (self.epoch, self.release, self.pre, self.post, self.dev, self._local, self._key)

    @classmethod
    def _from_parts(cls, parts: tuple[Any, ...]) -> Version:
        """The version ``_parts`` describes, without parsing its text again."""
        v = object.__new__(cls)
        v.epoch, v.release, v.pre, v.post, v.dev, v._local, v._key = parts
        v._str = ""
        return v

    # -- the normal form ------------------------------------------------------------------------

    @property
    def base_version(self) -> str:
        return (f"{self.epoch}!" if self.epoch else "") + ".".join(map(str, self.release))

    @property
    def public(self) -> str:
        text = self.base_version
        if self.pre is not None:
            text += f"{self.pre[0]}{self.pre[1]}"
        if self.post is not None:
            text += f".post{self.post}"
        if self.dev is not None:
            text += f".dev{self.dev}"
        return text

    @property
    def local(self) -> str | None:
        return None if self._local is None else ".".join(map(str, self._local))

    def __str__(self) -> str:
        if not self._str:
            self._str = self.public if self._local is None else f"{self.public}+{self.local}"
        return self._str

    def __repr__(self) -> str:
        return f"<Version('{self}')>"

    # -- properties ----------------------------------------------------------------------------

    @property
    def is_prerelease(self) -> bool:
        return self.pre is not None or self.dev is not None

    @property
    def is_postrelease(self) -> bool:
        return self.post is not None

    @property
    def is_devrelease(self) -> bool:
        return self.dev is not None

    @property
    def major(self) -> int:
        return self.release[0]

    @property
    def minor(self) -> int:
        return self.release[1] if len(self.release) > 1 else 0

    @property
    def micro(self) -> int:
        return self.release[2] if len(self.release) > 2 else 0

    # -- order ---------------------------------------------------------------------------------

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        return self._key == other._key if isinstance(other, Version) else NotImplemented

    def __ne__(self, other: object) -> bool:
        return self._key != other._key if isinstance(other, Version) else NotImplemented

    def __lt__(self, other: Version) -> bool:
        return self._key < other._key if isinstance(other, Version) else NotImplemented

    def __le__(self, other: Version) -> bool:
        return self._key <= other._key if isinstance(other, Version) else NotImplemented

    def __gt__(self, other: Version) -> bool:
        return self._key > other._key if isinstance(other, Version) else NotImplemented

    def __ge__(self, other: Version) -> bool:
        return self._key >= other._key if isinstance(other, Version) else NotImplemented


# ---------------------------------------------------------------------------------------------
# Specifiers
# ---------------------------------------------------------------------------------------------

_OPERATORS = ("===", "~=", "==", "!=", "<=", ">=", "<", ">")


def _as_version(item: Version | str) -> Version:
    return item if isinstance(item, Version) else Version(item)


class Specifier:
    """One clause (``>=0.6.17``); ``operator`` and ``version`` as written, like packaging's."""

    __slots__ = ("operator", "version", "_v", "_prefix", "_fast", "_theirs")

    def __init__(self, spec: str) -> None:
        text = spec.strip()
        op = next((o for o in _OPERATORS if text.startswith(o)), None)
        if op is None:
            raise InvalidSpecifier(f"Invalid specifier: {spec!r}")
        self.operator = op
        self.version = text[len(op):].strip()
        if _overlong(self.version):
            raise InvalidSpecifier(f"Invalid specifier: a number of more than {_MAX_DIGITS} digits")
        self._theirs: Any = None
        self._prefix: tuple[int, ...] | None = None
        self._v: Version | None = None
        self._fast = False
        if self._normal(op, self.version):
            v = self._v
            assert v is not None
            # Where packaging's releases disagree (23 and 26 judge `>1.0a1` against 1.0.post1,
            # or `<1.0.post2` against 1.0rc1, differently), the installed packaging answers.
            self._fast = not (v.epoch or (op == ">" and (v.pre is not None or v.post is not None or v.dev is not None))
                              or (op == "<" and v.post is not None))
        else:
            self._packaging(text)  # another spelling: packaging says whether it is valid at all

    def _packaging(self, text: str | None = None) -> Any:
        if self._theirs is None:
            from packaging.specifiers import InvalidSpecifier as TheirInvalid, Specifier as Theirs

            try:
                self._theirs = Theirs(text or str(self))
            except TheirInvalid as exc:
                raise InvalidSpecifier(str(exc)) from None
        return self._theirs

    def _normal(self, op: str, text: str) -> bool:
        """Parse a version written in normal form for ``op``; False for anything else."""
        if op == "===" or not text:
            return False
        wildcard = text.endswith(".*")
        if wildcard:
            if op not in ("==", "!="):
                return False
            text = text[:-2]
        if _NORMAL.fullmatch(text) is None:
            return False
        v = Version(text)
        if str(v) != text:  # `1.0` and `1.0.0` are normal; `01.0` is not
            return False
        if wildcard:
            if v.pre is not None or v.post is not None or v.dev is not None or v.local is not None:
                return False
            self._prefix = v.release
        elif v.local is not None and op not in ("==", "!="):
            return False
        elif op == "~=" and len(v.release) < 2:
            return False
        self._v = v
        return True

    def __str__(self) -> str:
        return f"{self.operator}{self.version}"

    def __repr__(self) -> str:
        return f"<Specifier({str(self)!r})>"

    def __hash__(self) -> int:
        return hash((self.operator, self.version))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Specifier):
            return NotImplemented
        return (self.operator, self.version) == (other.operator, other.version)

    @property
    def prereleases(self) -> bool:
        """Whether the clause names a pre-release (so admits them): never for ``!=`` or ``==X.*``."""
        if self.operator == "!=" or self.version.endswith(".*"):
            return False
        try:
            return Version(self.version).is_prerelease
        except InvalidVersion:
            return False

    def contains(self, item: Version | str, *, prereleases: bool) -> bool:
        """Whether ``item`` matches; ``prereleases`` must be said (packaging's default, None, is
        a rule of its own that no caller here wants)."""
        v = _as_version(item)
        if not prereleases and v.is_prerelease:
            return False
        return self._match(v)

    def _match(self, v: Version) -> bool:
        if not self._fast or v._local is not None or v.epoch:  # local builds and epochs: as packaging's
            # releases handle them (23 matches `==0.*` against `2!1.0b2`)
            return bool(self._packaging().contains(str(v), prereleases=True))
        op, spec = self.operator, self._v
        assert spec is not None
        if self._prefix is not None:  # ==X.* / !=X.*: a release prefix, zero-padded
            hit = _prefix_match(v, spec.epoch, self._prefix)
            return hit if op == "==" else not hit
        key, spec_key = v._key, spec._key
        if op == "==":
            return key == spec_key
        if op == "!=":
            return key != spec_key
        if op == ">=":
            return key >= spec_key
        if op == "<=":
            return key <= spec_key
        if op == "<":
            # `<1.0` excludes 1.0's own pre-releases unless it names one itself
            return key < spec_key and (spec.is_prerelease or not v.is_prerelease or key[:2] != spec_key[:2])
        if op == ">":  # a plain release: `>1.0` excludes 1.0's post-releases
            return key > spec_key and (v.post is None or key[:2] != spec_key[:2])
        # ~=X.Y: >= X.Y and == X.*
        return key >= spec_key and _prefix_match(v, spec.epoch, spec.release[:-1])


def _prefix_match(v: Version, epoch: int, prefix: tuple[int, ...]) -> bool:
    if v.epoch != epoch:
        return False
    release = v.release
    if len(release) < len(prefix):
        release = release + (0,) * (len(prefix) - len(release))
    return release[:len(prefix)] == prefix


class SpecifierSet:
    """Comma-separated clauses, all of which must hold (``packaging.specifiers.SpecifierSet``)."""

    __slots__ = ("_specs",)

    def __init__(self, specifiers: str = "") -> None:
        specs: list[Specifier] = []
        for part in specifiers.split(","):
            if part.strip():
                clause = Specifier(part)
                if clause not in specs:
                    specs.append(clause)
        self._specs = tuple(specs)

    @classmethod
    def _of(cls, specs: Iterable[Specifier]) -> SpecifierSet:
        out = cls()
        out._specs = tuple(dict.fromkeys(specs))
        return out

    def __and__(self, other: SpecifierSet | str) -> SpecifierSet:
        if isinstance(other, str):
            other = SpecifierSet(other)
        return SpecifierSet._of(self._specs + other._specs)

    def __iter__(self) -> Iterator[Specifier]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def __str__(self) -> str:
        return ",".join(sorted(str(s) for s in self._specs))

    def __repr__(self) -> str:
        return f"<SpecifierSet({str(self)!r})>"

    @property
    def prereleases(self) -> bool:
        return any(s.prereleases for s in self._specs)

    def contains(self, item: Version | str, *, prereleases: bool) -> bool:
        """Whether ``item`` matches; ``prereleases`` must be said (packaging's default, None, is
        a rule of its own that no caller here wants)."""
        v = _as_version(item)
        if not prereleases and v.is_prerelease:
            return False
        return all(s._match(v) for s in self._specs)

    def filter(self, iterable: Iterable[str]) -> Iterator[str]:
        """The items the set admits, as pip picks them: pre-releases only when a clause names
        one or when no final release is admitted."""
        matched: list[str] = []
        finals: list[str] = []
        for item in iterable:
            try:
                v = Version(item)
            except InvalidVersion:
                continue
            if all(s._match(v) for s in self._specs):
                matched.append(item)
                if not v.is_prerelease:
                    finals.append(item)
        return iter(matched if self.prereleases or not finals else finals)
