"""The sglang release table (flashinfer and kernel pins per release), against the committed data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from kimi_lsp.pep440 import Version

from kimi_lsp.knowledge import flashinfer as fi
from kimi_lsp.knowledge.sglang_releases import SglangRelease, sglang_release, sglang_versions

DATA = Path(fi.__file__).with_name("data") / "sglang_releases.json"
TABLE = json.loads(DATA.read_text())


def test_header_says_how_and_when() -> None:
    assert TABLE["generator"] == "scripts/build_sglang_table.py"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", TABLE["generated"])
    assert TABLE["count"] == len(TABLE["releases"])


def test_versions_are_unique_and_pep440_sorted() -> None:
    versions = sglang_versions()
    parsed = [Version(v) for v in versions]
    assert parsed == sorted(parsed) and len(set(parsed)) == len(parsed)
    assert versions[0] == "0.4.0"
    assert {"0.5.0rc0", "0.5.16", "0.5.20", "0.5.23"} <= set(versions)


@pytest.mark.parametrize(
    ("version", "requirement", "pinned"),
    [
        ("0.5.16", "flashinfer_python[cu13]==0.6.14", "0.6.14"),
        ("0.5.20", "flashinfer_python[cu13]==0.6.18", "0.6.18"),
        ("0.5.23", "flashinfer_python[cu13]==0.7.2", "0.7.2"),
    ],
)
def test_known_flashinfer_pins(version: str, requirement: str, pinned: str) -> None:
    release = sglang_release(version)
    assert release is not None
    assert release.flashinfer_requirement == requirement
    assert release.flashinfer_version == pinned
    assert release.flashinfer_extra is None


def test_kernel_pins_of_0_5_23() -> None:
    release = sglang_release("0.5.23")
    assert release is not None
    assert dict(release.pins) == {"sglang-kernel": "==0.4.10", "torch": "==2.14.1"}
    with pytest.raises(TypeError):
        release.pins["torch"] = "==0"  # type: ignore[index]


def test_old_releases_take_flashinfer_through_the_srt_extra() -> None:
    release = sglang_release("0.4.6")
    assert release is not None
    assert release.flashinfer_version == "0.2.3"
    assert release.flashinfer_extra == "srt"
    assert release.pins["sgl-kernel"] == "==0.0.9.post2"


def test_the_kimi_k3_dcp_check_appears_in_0_5_17() -> None:
    assert not sglang_release("0.5.16").has_k3_dcp_check  # type: ignore[union-attr]
    for version in sglang_versions():
        release = sglang_release(version)
        assert release is not None
        assert release.has_k3_dcp_check == (Version(version) >= Version("0.5.17")), version
    assert sglang_release("0.5.23").k3_dcp_check_file == (  # type: ignore[union-attr]
        "sglang/srt/arg_groups/model_overrides/kimi_k3.py"
    )


def test_only_0_5_17_ships_the_check_with_a_flashinfer_pin_that_fails_it() -> None:
    # sglang 0.5.17 pins flashinfer 0.6.15.post1 and asks for a DCP-patched FlashInfer: a plain
    # install of it cannot launch Kimi-K3 DCP with cutedsl_mla.
    failing = [
        r.version
        for r in map(sglang_release, sglang_versions())
        if r and r.has_k3_dcp_check and fi.has_enable_dcp(r.flashinfer_version or "") is False
    ]
    assert failing == ["0.5.17"]


def test_every_exact_flashinfer_pin_is_a_known_release() -> None:
    known = set(fi.releases())
    for version in sglang_versions():
        release = sglang_release(version)
        assert release is not None
        if release.flashinfer_version is not None:
            assert Version(release.flashinfer_version) in known, version
            assert release.flashinfer_requirement is not None
            req = Requirement(release.flashinfer_requirement)
            assert canonicalize_name(req.name) == "flashinfer-python"
            assert str(req.specifier) == f"=={release.flashinfer_version}"


def test_every_release_from_0_4_3_post3_pins_flashinfer_exactly() -> None:
    for version in sglang_versions():
        if Version(version) >= Version("0.4.3.post3"):
            assert sglang_release(version).flashinfer_version is not None, version  # type: ignore[union-attr]


def test_pins_use_canonical_names() -> None:
    allowed = {"sglang-kernel", "sgl-kernel", "torch", "flashinfer-cubin", "flashinfer-jit-cache"}
    for version in sglang_versions():
        release = sglang_release(version)
        assert release is not None and set(release.pins) <= allowed, version
        if "flashinfer-cubin" in release.pins and release.flashinfer_version:
            # sglang moves the companion with flashinfer (flashinfer refuses a mismatch)
            assert release.pins["flashinfer-cubin"] == f"=={release.flashinfer_version}", version


@pytest.mark.parametrize("spelling", ["0.5.23", "0.5.23.0", " 0.5.23 ", "0.5.23+cu130"])
def test_lookup_uses_pep440_equality(spelling: str) -> None:
    release = sglang_release(spelling)
    assert isinstance(release, SglangRelease) and release.version == "0.5.23"


@pytest.mark.parametrize("spelling", ["9.9.9", "0.5.99", "not-a-version", ""])
def test_unknown_versions(spelling: str) -> None:
    assert sglang_release(spelling) is None
