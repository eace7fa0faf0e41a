"""The compact schema store loses nothing: every shipped release unpacks to exactly the document
the extractor produced for it (by digest, tests/data/oracle/extractor-digests.json, written by
`scripts/extract_sglang_schema.py --add/--rebuild` from the extractor output before packing), and
packing the unpacked releases again reproduces the shipped file byte for byte."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from kimi_lsp.knowledge import _schema_store
from kimi_lsp.knowledge import schema as schema_mod

ROOT = Path(__file__).resolve().parents[2]
DIGESTS = json.loads((ROOT / "tests" / "data" / "oracle" / "extractor-digests.json").read_text(encoding="utf-8"))
VERSIONS = schema_mod.shipped_versions()


def _store_module() -> Any:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import sglang_schema_store
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return sglang_schema_store


def _digest(doc: dict[str, Any]) -> str:
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_digests_cover_exactly_the_shipped_releases() -> None:
    assert list(DIGESTS) == list(VERSIONS)


@pytest.mark.parametrize("version", VERSIONS)
def test_release_unpacks_to_the_extractor_output(version: str) -> None:
    doc = _schema_store._unpack_release(version)
    assert doc["version"] == version and doc["source"].startswith(f"sglang-{version}-")
    assert _digest(doc) == DIGESTS[version]


def test_packing_the_unpacked_releases_reproduces_the_file() -> None:
    store = _store_module()
    docs = [_schema_store._unpack_release(v) for v in VERSIONS]
    shipped = (Path(schema_mod.DATA_DIR) / schema_mod.STORE_FILE).read_text(encoding="utf-8")
    assert store.dump(store.pack(docs)) == shipped


def test_pack_keeps_what_differs_between_releases() -> None:
    # Two tiny releases: a flag that only the old one has, a choice list that grew, a default
    # that changed type (1 -> 1.0 must not merge: argparse would show another default).
    store = _store_module()

    def flag(opt: str, **kw: Any) -> dict[str, Any]:
        return {"dest": opt[2:].replace("-", "_"), "options": [opt], "choices": None, "default": None, **kw}

    old = {"version": "1.0", "format": 1, "config": {"keys": "none"},
           "flags": [flag("--gone"), flag("--backend", choices=["a"]), flag("--ratio", default=1)]}
    new = {"version": "1.1", "format": 1, "config": {"keys": "dest", "extra": [1]},
           "flags": [flag("--ratio", default=1.0), flag("--backend", choices=["a", "b"])]}
    packed = store.pack([new, old])
    assert packed["versions"] == ["1.0", "1.1"]
    assert packed["order"] == {"1.0": [0, 1, 2], "1.1": [2, 1]}
    by_opt = {e["k"]["options"][0]: e for e in packed["flags"]}
    assert by_opt["--gone"]["r"] == [[0, 0]]
    assert by_opt["--backend"]["t"]["choices"] == [[0, 0, ["a"]], [1, 1, ["a", "b"]]]
    assert by_opt["--ratio"]["t"]["default"] == [[0, 0, 1], [1, 1, 1.0]]
    assert packed["sections"]["config"]["dict"]["extra"] == [[1, 1, [1]]]


def test_did_you_mean_on_a_huge_word_is_immediate() -> None:
    """A fuzzed 30 KB word must not make difflib quadratic: nothing that long is near an option."""
    from kimi_lsp.knowledge.schema import load_schema
    from tests.reliability._support import cpu_growth, growth

    schema = load_schema("0.5.23")
    assert schema.closest("--" + "tp-size" * 4000) is None
    # quadratic on 28,000 characters took seconds: four times the word, at most ~4x the work
    assert growth(lambda n: schema.closest("--" + "tp-size" * n), 1000) < 6
    assert cpu_growth(lambda n: schema.closest("--" + "tp-size" * n), 1000) < 8
    assert schema.closest("--tp-sise") == "--tp-size"
