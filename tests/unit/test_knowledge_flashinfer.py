"""The flashinfer enable_dcp table and the specifier classifier, against the committed data."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from kimi_lsp.pep440 import Version

from kimi_lsp.knowledge import flashinfer as fi

DATA = Path(fi.__file__).with_name("data") / "flashinfer_dcp.json"
ROWS = json.loads(DATA.read_text())["releases"]
# Releases at or above min_enable_dcp() that lack enable_dcp anyway. None today; a regression
# release (or a yanked-and-reissued one) would be listed here with the reason.
NON_MONOTONIC: dict[str, str] = {}


# ---------------------------------------------------------------- the table itself


def test_table_header_says_how_and_when() -> None:
    info = fi.table_info()
    assert info["generator"] == "scripts/build_flashinfer_table.py"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(info["generated"]))
    assert info["function"] == "flashinfer.decode.trtllm_batch_decode_with_kv_cache_mla"
    assert info["count"] == len(ROWS)


def test_table_lists_every_release_once_in_pep440_order() -> None:
    versions = [Version(r["version"]) for r in ROWS]
    assert versions == sorted(versions)
    assert len(set(versions)) == len(versions) == 112
    assert fi.releases() == tuple(versions)


@pytest.mark.parametrize("version", ["0.6.16rc5", "0.6.16", "0.6.16.post4", "0.6.15.post1", "0.6.14"])
def test_known_releases_without_enable_dcp(version: str) -> None:
    assert fi.has_enable_dcp(version) is False


@pytest.mark.parametrize(
    "version", ["0.6.17rc1", "0.6.17rc5", "0.6.17", "0.6.18", "0.6.18.post1", "0.7.0", "0.7.2", "0.7.4"]
)
def test_known_releases_with_enable_dcp(version: str) -> None:
    assert fi.has_enable_dcp(version) is True


def test_thresholds() -> None:
    assert fi.min_enable_dcp() == Version("0.6.17rc1")
    assert fi.first_good_final() == "0.6.17"


def test_table_is_consistent_around_the_threshold() -> None:
    minimum = fi.min_enable_dcp()
    for row in ROWS:
        v = Version(row["version"])
        passes = row["decode_exports"] and row["enable_dcp"]
        if v < minimum:
            assert not passes, row
        elif row["version"] not in NON_MONOTONIC:
            assert passes, row
        assert not row["enable_dcp"] or row["has_function"], row
        assert not row["decode_exports"] or row["has_function"], row


def test_every_release_agrees_with_the_table() -> None:
    for row in ROWS:
        expected = row["decode_exports"] and row["enable_dcp"]
        assert fi.has_enable_dcp(row["version"]) is expected, row["version"]
        # a local label names a build of the same release
        assert fi.has_enable_dcp(row["version"] + "+cu130") is expected, row["version"]
        verdict = fi.classify([f"=={row['version']}"])
        assert verdict.kind == ("pinned-ok" if expected else "pinned-bad"), row["version"]
        assert verdict.exact == row["version"]


def test_rows_carry_where_the_function_is() -> None:
    row = next(r for r in ROWS if r["version"] == "0.6.17rc1")
    assert (row["file"], row["line"], row["params"]) == ("flashinfer/mla/_core.py", 2905, 31)
    info = fi.release_info("0.6.16.post4+cu128")
    assert info is not None and info.params == 26 and not info.enable_dcp


# ---------------------------------------------------------------- versions not in the table


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.6.17+cu130", True),  # local label stripped for lookup
        ("0.6.16.post4+cu128", False),
        ("0.6.17.post9", True),  # between releases: the threshold decides
        ("0.6.16.post9", False),
        ("0.6.17rc2", True),  # an rc between rc1 and rc5
        ("0.6.16rc9", False),
        ("0.9", True),  # newer than every release
        ("1.0.0rc1", True),
        ("0.1.0", False),  # older than every release
        ("0.0.0+unknown", None),  # editable / source install
        ("0.6.16.dev20260729", None),  # nightly: has the change yet sorts below the threshold
        ("0.8.0.dev1", None),
        ("0.6.x", None),
        ("", None),
    ],
)
def test_has_enable_dcp_beyond_the_table(version: str, expected: bool | None) -> None:
    assert fi.has_enable_dcp(version) is expected


# ---------------------------------------------------------------- the lockfiles.md §2 table


@pytest.mark.parametrize("spec", ["==0.6.10", "===0.6.10", "==0.6.16rc5", "==0.6.16.post4"])
def test_pinned_bad(spec: str) -> None:
    verdict = fi.classify([spec])
    assert verdict.kind == "pinned-bad"
    assert verdict.exact == spec.lstrip("=")
    assert verdict.lowest_bad == verdict.exact


@pytest.mark.parametrize("spec", ["==0.6.17rc1", "==0.6.17rc5", "==0.6.17+cu128"])
def test_pinned_ok(spec: str) -> None:
    verdict = fi.classify([spec])
    assert verdict.kind == "pinned-ok"
    assert verdict.exact == spec.lstrip("=")


@pytest.mark.parametrize(
    ("spec", "lowest_bad"),
    [
        (">=0.6.10,<0.7", "0.6.10"),
        ("~=0.6.10", "0.6.10"),
        (">=0.6.16", "0.6.16"),
        ("==0.6.*", "0.6.0"),
        ("!=0.6.10", "0.2.0.post1"),
        ("<=0.6.17rc5", "0.2.0.post1"),
    ],
)
def test_admits_bad(spec: str, lowest_bad: str) -> None:
    verdict = fi.classify([spec])
    assert verdict.kind == "admits-bad"
    assert verdict.lowest_bad == lowest_bad
    assert verdict.highest_bad == "0.6.16.post4"
    assert verdict.lowest_ok is not None
    assert verdict.detail.startswith(f"admits {lowest_bad} ... 0.6.16.post4")


@pytest.mark.parametrize(
    ("spec", "lowest_ok"),
    [
        (">=0.6.17", "0.6.17"),
        (">0.6.16", "0.6.17"),  # excludes 0.6.16.post*: PEP 440 `>` skips post-releases of 0.6.16
        (">=0.6.17,<0.7", "0.6.17"),
        (">=0.6.17rc1", "0.6.17rc1"),
        (">=0.6.17rc1,<0.6.18", "0.6.17rc1"),
    ],
)
def test_all_ok(spec: str, lowest_ok: str) -> None:
    verdict = fi.classify([spec])
    assert verdict.kind == "all-ok"
    assert verdict.lowest_ok == lowest_ok
    assert verdict.lowest_bad is None


@pytest.mark.parametrize("spec", ["<0.6.17", "<0.6.17rc1", "==0.6.16.*", "~=0.6.16.0"])
def test_all_bad(spec: str) -> None:
    verdict = fi.classify([spec])
    assert verdict.kind == "all-bad"
    assert verdict.highest_bad == "0.6.16.post4"


def test_future_only_range_is_ok() -> None:
    verdict = fi.classify([">=0.6.17.post9,<0.6.18"])
    assert verdict.kind == "all-ok"
    assert verdict.lowest_ok is None  # no release matches today
    assert "no release satisfies it yet" in verdict.detail


def test_future_gap_between_boundaries_is_ok() -> None:
    # nothing released in (0.6.18.post1, 0.7.0rc1), but 0.6.18.1 or 0.6.19 would be
    assert fi.classify([">0.6.18.post1,<0.7.0rc1"]).kind == "all-ok"


@pytest.mark.parametrize("spec", ["", "   "])
def test_unconstrained(spec: str) -> None:
    assert fi.classify([spec]).kind == "unconstrained"
    assert fi.classify([]).kind == "unconstrained"


@pytest.mark.parametrize("spec", [">=0.6.17+cu128", "0.6.x", "==0.6.17-cu128", "0.6.17", ">=", "==0.6.17rc1.*"])
def test_invalid(spec: str) -> None:
    assert fi.classify([spec]).kind == "invalid"


# ---------------------------------------------------------------- pins that cannot be decided


@pytest.mark.parametrize("spec", ["==0.0.0+unknown", "==0.6.16.dev20260729", "===not-a-version"])
def test_pinned_unknown(spec: str) -> None:
    verdict = fi.classify([spec])
    assert verdict.kind == "pinned-unknown"
    assert verdict.exact == spec.lstrip("=")


def test_pinned_between_releases_uses_the_threshold() -> None:
    assert fi.classify(["==0.6.17.post9"]).kind == "pinned-ok"
    assert fi.classify(["==0.6.16.post9"]).kind == "pinned-bad"
    assert fi.classify(["==1.2.3"]).kind == "pinned-ok"


# ---------------------------------------------------------------- pre-releases (pip's rule)


def test_prereleases_only_when_named() -> None:
    # >=0.6.16 names no pre-release: pip would not pick 0.6.17rc1, so the lowest good one is 0.6.17
    plain = fi.classify([">=0.6.16,<0.6.18"])
    assert (plain.kind, plain.lowest_bad, plain.lowest_ok) == ("admits-bad", "0.6.16", "0.6.17")
    # naming one opts the whole set in: the rc's are admitted on both sides of the threshold
    named = fi.classify([">=0.6.16rc3,<0.6.18"])
    assert (named.kind, named.lowest_bad, named.lowest_ok) == ("admits-bad", "0.6.16rc3", "0.6.17rc1")
    assert fi.classify(["<=0.6.17rc1"]).lowest_ok == "0.6.17rc1"
    # `!=` naming a pre-release does not opt in
    assert fi.classify([">=0.6.16,<0.6.18,!=0.6.17rc5"]).lowest_ok == "0.6.17"


def test_exclusive_bound_excludes_prereleases_of_itself() -> None:
    # PEP 440: <0.6.17 admits no 0.6.17rc*, so the rc's with enable_dcp do not rescue it
    assert fi.classify(["<0.6.17"]).highest_bad == "0.6.16.post4"
    assert fi.classify(["<0.6.17"]).lowest_ok is None


# ---------------------------------------------------------------- intersections


def test_intersection_of_requirement_and_constraint() -> None:
    verdict = fi.classify([">=0.6.10", "<0.6.17"])
    assert verdict.kind == "all-bad"
    assert (verdict.lowest_bad, verdict.highest_bad) == ("0.6.10", "0.6.16.post4")
    assert fi.classify([">=0.6.10,<0.7", ">=0.6.17"]).kind == "all-ok"
    assert fi.classify(["", ">=0.6.17"]).kind == "all-ok"


def test_pin_inside_a_range_is_a_pin() -> None:
    verdict = fi.classify([">=0.6,<0.7", "==0.6.16.post4"])
    assert (verdict.kind, verdict.exact) == ("pinned-bad", "0.6.16.post4")
    assert fi.classify(["==0.6.17", "==0.6.17+cu128"]).exact == "0.6.17+cu128"


def test_contradiction_admits_nothing() -> None:
    verdict = fi.classify(["==0.6.10", ">=0.7"])
    assert verdict.kind == "all-bad"
    assert verdict.lowest_bad is None and verdict.highest_bad is None
    assert "no release satisfies" in verdict.detail


def test_a_lone_string_is_one_specifier() -> None:
    assert fi.classify(">=0.6.10,<0.7") == fi.classify([">=0.6.10,<0.7"])


def test_an_invalid_part_makes_the_whole_invalid() -> None:
    assert fi.classify([">=0.6.17", "0.6.x"]).kind == "invalid"


# ---------------------------------------------------------------- bump target


@pytest.mark.parametrize(
    ("sglang", "target"),
    [
        (None, "0.6.17"),
        ("0.5.23", "0.7.2"),  # sglang's own pin has enable_dcp: stay consistent with it
        ("0.5.20", "0.6.18"),
        ("0.5.18", "0.6.17"),
        ("0.5.16", "0.6.17"),  # its pin 0.6.14 lacks it
        ("0.5.17", "0.6.17"),  # its pin 0.6.15.post1 lacks it
        ("9.9.9", "0.6.17"),  # unknown release
        ("not a version", "0.6.17"),
    ],
)
def test_bump_target(sglang: str | None, target: str) -> None:
    assert fi.bump_target(sglang) == target


def test_bump_target_is_a_final_with_enable_dcp() -> None:
    target = Version(fi.first_good_final())
    assert not target.is_prerelease and fi.has_enable_dcp(str(target))
    assert all(v.is_prerelease or not fi.has_enable_dcp(str(v)) for v in fi.releases() if v < target)


# ---------------------------------------------------------------- cost


def test_imports_only_the_standard_library() -> None:
    """Not even packaging: versions are kimi_lsp.pep440's (start-up; test_pep440.py holds it to packaging)."""
    code = (
        "import sys; before = set(sys.modules); import kimi_lsp.knowledge.flashinfer as f; "
        "f.releases(); f.classify(['>=0.6.10']); f.bump_target('0.5.23'); "
        "print('\\n'.join(sorted(set(sys.modules) - before)))"
    )
    src = str(Path(fi.__file__).parents[2])
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={"PYTHONPATH": src, "PATH": ""},
    ).stdout.split()
    roots = {m.split(".")[0] for m in out}
    assert roots - set(sys.stdlib_module_names) - {"kimi_lsp"} == set()


def test_loading_the_table_is_fast() -> None:
    from tests.reliability._support import work

    fi.releases()
    fi._table.cache_clear()
    # counted, not timed (a 10 ms limit failed on a busy machine): a few calls a release, the rows
    # read as kept; parsing each version string again would be dozens a release
    assert work(fi.releases) < 10 * len(fi.releases())
