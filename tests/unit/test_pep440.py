"""kimi_lsp.pep440 against packaging: the same versions, order, specifiers and matches.

kimi-lsp's rules read versions with ``kimi_lsp.pep440`` (packaging costs ~5 ms of every start).
A pin wrongly judged in or out of a range is a false diagnostic, so this holds the two equal on
every version and specifier in the knowledge tables and fixtures, and on seeded generated ones
in every spelling PEP 440 allows (and many it does not). It runs against whatever packaging is
installed: the newest in the main job, the declared floor in the floors job.
"""
from __future__ import annotations

import random
import re
from pathlib import Path

import packaging
import pytest
from packaging import specifiers as theirs_spec
from packaging import version as theirs_ver

from kimi_lsp import pep440
from kimi_lsp.knowledge import flashinfer
from kimi_lsp.knowledge.schema import shipped_versions
from kimi_lsp.knowledge.sglang_releases import sglang_versions

REPO = Path(__file__).resolve().parents[2]

_PRE = ["a", "b", "rc", "c", "alpha", "beta", "pre", "preview", "A", "RC"]
_SEP = ["", ".", "-", "_"]


def _gen_version(rng: random.Random) -> str:
    """A version string: mostly valid PEP 440 in assorted spellings, sometimes broken."""
    parts = [str(rng.choice([0, 0, 1, 2, 5, 9, 10, 17, 99999]) if rng.random() < 0.9 else "0" + str(rng.randint(0, 9)))
             for _ in range(rng.choice([1, 2, 2, 3, 3, 3, 4]))]
    text = ".".join(parts)
    normal = rng.random() < 0.55
    if rng.random() < 0.05:
        text = f"{rng.randint(0, 2)}!{text}"
    if rng.random() < 0.3:
        text += (rng.choice(["a", "b", "rc"]) if normal else rng.choice(_SEP) + rng.choice(_PRE) + rng.choice(_SEP)) + (
            str(rng.randint(0, 3)) if normal or rng.random() < 0.8 else "")
    if rng.random() < 0.25:
        text += ".post" + str(rng.randint(0, 3)) if normal else rng.choice(["-1", "post", ".post2", "_r3", "rev", "-post-4"])
    if rng.random() < 0.15:
        text += ".dev" + str(rng.randint(0, 3)) if normal else rng.choice(["dev", "-dev1", "_DEV2", ".dev"])
    if rng.random() < 0.15:
        text += "+" + rng.choice(["cu128", "local.7", "abc.007", "1.2", "Ubuntu-1", "a_b"])
    if not normal and rng.random() < 0.15:
        text = rng.choice(["v", "V", " ", ""]) + text + rng.choice(["", " ", "\n"])
    if rng.random() < 0.04:  # broken
        text = rng.choice([text + "..", "x" + text, text.replace(".", ",", 1), text + "+", text + "-", "", "1.0+x+y"])
    return text


def _versions() -> list[str]:
    rng = random.Random(440)
    known = [str(v) for v in flashinfer.releases()] + list(shipped_versions()) + list(sglang_versions())
    return known + [_gen_version(rng) for _ in range(3000)]


def _attrs(v: object) -> tuple[object, ...]:
    return tuple(getattr(v, a) for a in ("epoch", "release", "pre", "post", "dev", "local", "public", "base_version",
                                           "is_prerelease", "is_postrelease", "is_devrelease")) + (str(v),)


def _parse(mod: object, text: str) -> object:
    try:
        return mod.Version(text)  # type: ignore[attr-defined]
    except mod.InvalidVersion:  # type: ignore[attr-defined]
        return None


def test_versions_parse_and_normalise_as_packaging() -> None:
    for text in _versions():
        ours, theirs = _parse(pep440, text), _parse(theirs_ver, text)
        assert (ours is None) == (theirs is None), text
        if ours is not None:
            assert _attrs(ours) == _attrs(theirs), text


def test_versions_order_as_packaging() -> None:
    pairs = [(pep440.Version(t), theirs_ver.Version(t)) for t in _versions() if _parse(theirs_ver, t) is not None]
    rng = random.Random(7)
    ours_sorted = sorted(range(len(pairs)), key=lambda i: (pairs[i][0], i))
    theirs_sorted = sorted(range(len(pairs)), key=lambda i: (pairs[i][1], i))
    assert ours_sorted == theirs_sorted
    for _ in range(20000):
        (a, ta), (b, tb) = rng.choice(pairs), rng.choice(pairs)
        assert (a < b, a == b, a > b, a <= b, a != b) == (ta < tb, ta == tb, ta > tb, ta <= tb, ta != tb), (ta, tb)
        if a == b:
            assert hash(a) == hash(b)


def _gen_clause(rng: random.Random, versions: list[str]) -> str:
    op = rng.choice(["==", "==", ">=", ">=", "<", "<=", ">", "!=", "~=", "==="])
    v = rng.choice(versions)
    if rng.random() < 0.2 and op in ("==", "!=", ">="):
        v = re.sub(r"(a|b|rc|\.post|\.dev|\+).*$", "", v.strip()) + ".*"
    return rng.choice(["", " "]) + op + rng.choice(["", "", " "]) + v


def _spec(mod: object, text: str) -> object:
    try:
        return mod.SpecifierSet(text)  # type: ignore[attr-defined]
    except mod.InvalidSpecifier:  # type: ignore[attr-defined]
        return None


def _clause_pool() -> tuple[list[str], list[str]]:
    rng = random.Random(508)
    versions = [t for t in _versions() if _parse(theirs_ver, t) is not None]
    short = [t for t in versions if len(t) < 24]
    clauses = [_gen_clause(rng, short) for _ in range(2500)]
    clauses += [">=0.6.17", "==0.6.16.post4", ">=0.6.17rc1,<0.8", "~=0.6.0", "==0.7.*", "!=0.6.16.post4", "<0.6.17",
                ">0.6.16", "~=2.9", "==2.9.1+cu128", ">=1.0.0.dev0", "<=1.0a1", "==1.0.0", "~=1", "<=1.0+x", ">=1.*"]
    return clauses, versions


def test_specifiers_accept_what_packaging_accepts() -> None:
    clauses, _ = _clause_pool()
    for text in clauses:
        assert (_spec(pep440, text) is None) == (_spec(theirs_ver and theirs_spec, text) is None), text


def test_specifiers_match_as_packaging() -> None:
    clauses, versions = _clause_pool()
    rng = random.Random(3)
    probes = [(pep440.Version(t), theirs_ver.Version(t)) for t in versions]
    sets = [c for c in clauses if _spec(theirs_spec, c) is not None]
    sets += [",".join(rng.sample(sets, 2)) for _ in range(400)]
    for text in sets:
        ours, theirs = pep440.SpecifierSet(text), theirs_spec.SpecifierSet(text)
        for v, tv in rng.sample(probes, 60):
            for pre in (True, False):
                assert ours.contains(v, prereleases=pre) == theirs.contains(tv, prereleases=pre), (text, str(tv), pre)
        for clause, their_clause in zip(ours, sorted(theirs, key=lambda c: [str(s) for s in ours].index(str(c)))):
            assert (clause.operator, clause.version) == (their_clause.operator, their_clause.version)
            v, tv = rng.choice(probes)
            assert clause.contains(v, prereleases=True) == their_clause.contains(tv, prereleases=True), (str(clause), str(tv))


@pytest.mark.skipif(int(packaging.__version__.split(".")[0]) < 26, reason=(
    "which clauses opt a set into pre-releases, and whether filter falls back to them, changed across "
    "packaging 23-25 (23 does not count `<1.0rc1`; 24.2-25 never fall back); kimi-lsp keeps 26's rule"))
def test_filter_picks_as_pip_does() -> None:
    """Pre-releases only when a clause names one or when no final release is admitted."""
    clauses, versions = _clause_pool()
    rng = random.Random(11)
    pool = rng.sample([v for v in versions if v == v.strip()], 200) + list(shipped_versions())
    for text in [c for c in clauses if _spec(theirs_spec, c) is not None and "===" not in c][:800]:
        assert list(pep440.SpecifierSet(text).filter(pool)) == list(theirs_spec.SpecifierSet(text).filter(pool)), text
    assert list(pep440.SpecifierSet(">=0.5").filter(["0.5.1rc1", "0.4"])) == ["0.5.1rc1"]  # no final: the pre-release
    assert list(pep440.SpecifierSet(">=0.5rc1").filter(["0.5.1rc1", "0.5.1"])) == ["0.5.1rc1", "0.5.1"]


def test_intersection_keeps_every_clause() -> None:
    both = pep440.SpecifierSet(">=0.6") & pep440.SpecifierSet("<0.7,!=0.6.3")
    assert [str(c) for c in both] == [">=0.6", "<0.7", "!=0.6.3"]
    assert both.contains("0.6.2", prereleases=True) and not both.contains("0.6.3", prereleases=True)
    assert not both.contains("0.7", prereleases=True)
    assert list(pep440.SpecifierSet()) == [] and pep440.SpecifierSet().contains("1.0rc1", prereleases=True)


@pytest.mark.parametrize("text", ["1.0", "0.6.17rc1", "2.9.1+cu128", "1.0.post1.dev2"])
def test_the_common_forms_need_no_packaging(text: str) -> None:
    """The normal-form path never reaches packaging (the reason the module exists)."""
    assert pep440.SpecifierSet(f">={text.split('+')[0]},!={text}")._specs[0]._theirs is None
    assert str(pep440.Version(text)) == text


def test_a_kept_version_is_the_parsed_one() -> None:
    """The knowledge tables keep their versions as ``_parts`` (marshal): rebuilt, each is the
    version its text parses to, in every attribute, in order and in hash."""
    import marshal

    for text in _versions():
        v = _parse(pep440, text)
        if v is None:
            continue
        kept = pep440.Version._from_parts(marshal.loads(marshal.dumps(v._parts())))  # type: ignore[attr-defined]
        assert _attrs(kept) == _attrs(v) and kept == v and hash(kept) == hash(v) and not kept < v, text
