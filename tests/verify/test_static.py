"""The stdlib probes: metadata versions and the AST signature, without importing flashinfer."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from kimi_lsp.verify.static import DCP_KWARGS, SGLANG_KWARGS, MetadataPackages, find_signature
from verify_fakes import FAKES, NEW_PARAMS, OLD_PARAMS


def test_new_fake_tree_has_the_dcp_signature():
    found = find_signature(FAKES / "new" / "flashinfer")
    assert found is not None
    assert found.parameters == NEW_PARAMS
    assert found.missing(SGLANG_KWARGS) == ()
    assert found.path.name == "_core.py" and not found.var_keyword


def test_old_fake_tree_lacks_the_dcp_kwargs():
    found = find_signature(FAKES / "old" / "flashinfer")
    assert found is not None and found.parameters == OLD_PARAMS
    assert len(found.parameters) == 26
    assert found.missing(DCP_KWARGS) == DCP_KWARGS


def _tree(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def test_follows_absolute_and_multi_level_reexports(tmp_path):
    package = _tree(tmp_path / "flashinfer", {
        "__init__.py": "",
        "decode.py": "from flashinfer.attention import trtllm_batch_decode_with_kv_cache_mla\n",
        "attention/__init__.py": "from .mla.api import *\n",
        "attention/mla/__init__.py": "",
        "attention/mla/api.py": "from ..impl import trtllm_batch_decode_with_kv_cache_mla\n",
        "attention/impl.py": """
            try:
                import torch
            except ImportError:
                pass
            else:
                def trtllm_batch_decode_with_kv_cache_mla(query, *, enable_dcp=False, **kwargs):
                    pass
            """,
        # a decoy defined elsewhere: the chain, not the scan order, decides
        "aaa.py": "def trtllm_batch_decode_with_kv_cache_mla(query):\n    pass\n",
    })
    found = find_signature(package)
    assert found is not None
    assert found.path == package / "attention" / "impl.py"
    assert found.parameters == ("query", "enable_dcp") and found.var_keyword


def test_scan_fallback_skips_data_and_bad_files(tmp_path):
    package = _tree(tmp_path / "flashinfer", {
        "__init__.py": "",
        "decode.py": "import something_dynamic\n",
        "data/cutlass/a.py": "def trtllm_batch_decode_with_kv_cache_mla(query, enable_dcp):\n    pass\n",
        "broken.py": "def (:\n",
        "mla/_core.py": "def trtllm_batch_decode_with_kv_cache_mla(query):\n    pass\n",
    })
    found = find_signature(package)
    assert found is not None and found.path == package / "mla" / "_core.py"
    assert found.parameters == ("query",)


def test_nested_definitions_do_not_count(tmp_path):
    package = _tree(tmp_path / "flashinfer", {
        "decode.py": """
            class Wrapper:
                def trtllm_batch_decode_with_kv_cache_mla(self, enable_dcp):
                    pass
            """,
    })
    assert find_signature(package) is None


def test_reexport_under_another_name_is_not_followed(tmp_path):
    package = _tree(tmp_path / "flashinfer", {
        "decode.py": "from .mla import other as trtllm_batch_decode_with_kv_cache_mla\n",
        "mla.py": "def other(enable_dcp):\n    pass\n",
    })
    assert find_signature(package) is None


def test_metadata_probe_reads_the_fake_without_importing_it(monkeypatch):
    monkeypatch.syspath_prepend(str(FAKES / "old"))
    packages = MetadataPackages()
    assert packages.version("flashinfer-python") == "0.6.16.post4"
    assert packages.version("flashinfer_python") == "0.6.16.post4"  # PEP 503 names
    assert packages.version("no-such-distribution-xyz") is None
    assert packages.package_dir("flashinfer") == FAKES / "old" / "flashinfer"
    assert packages.package_dir("no_such_module_xyz") is None
    assert "flashinfer" not in sys.modules


def test_package_dir_of_a_plain_module_is_none(monkeypatch):
    assert MetadataPackages().package_dir("textwrap") is None


@pytest.mark.parametrize("tree", ["new", "old", "mismatch"])
def test_static_probe_never_runs_the_package(tree, tmp_path):
    # the mismatch fake raises at import: reading it statically must not
    code = (
        "import sys; from kimi_lsp.verify.static import MetadataPackages, find_signature;"
        "p = MetadataPackages(); d = p.package_dir('flashinfer'); f = find_signature(d);"
        "print(p.version('flashinfer-python'), len(f.parameters), 'flashinfer' in sys.modules, 'torch' in sys.modules)"
    )
    env = {"PYTHONPATH": f"{FAKES / tree}:{FAKES.parent.parent.parent / 'server'}", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    version, count, imported_flashinfer, imported_torch = out.split()
    assert (imported_flashinfer, imported_torch) == ("False", "False")
    assert count == ("26" if tree == "old" else "31")
