"""`kimi-lsp verify` end to end: argument handling, launch files, exit codes, output formats.

In-process tests inject fakes through Dependencies; subprocess tests put a fake flashinfer tree
on PYTHONPATH and run the real adapters, as a user would on a host without a GPU."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kimi_lsp.verify.cli import Dependencies, build_parser, main
from kimi_lsp.verify.shapes import read_config_yaml
from verify_fakes import (
    DATA,
    FAKES,
    H200,
    FakeDevice,
    FakeKernel,
    FakeNumerics,
    FakePackages,
    FakeTimer,
    OldKernel,
)

SERVER = Path(__file__).resolve().parents[2] / "server"


def deps(kernel=None, device=None, packages=None, environ=None, read=read_config_yaml):
    numerics = FakeNumerics()
    return Dependencies(
        packages=packages or FakePackages(), kernel=kernel or FakeKernel(), device=device or FakeDevice(),
        numerics=lambda dev: numerics, timer=FakeTimer(), environ=environ if environ is not None else {},
        which=lambda name: None, home=Path("/nonexistent"), classify_version=lambda v: None, read_launches=read,
    )


def run_json(capsys, argv, **kwargs):
    code = main(["--json", *argv], deps=deps(**kwargs))
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_help_and_prog(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: kimi-lsp verify [-h] [--json] [--strict]")
    for flag in ("--dcp-size", "--tp-size", "--page-size", "--kv-cache-dtype", "--batch-size", "--seq-len"):
        assert flag in out


@pytest.mark.parametrize("argv", [["--bogus"], ["--dcp-size", "0"], ["--kv-cache-dtype", "fp8_e5m2"],
                                  ["--seq-len", "10,x"], ["a.yaml", "b.yaml"]])
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv, deps=deps()) == 2
    assert "kimi-lsp verify: error:" in capsys.readouterr().err


def test_verified_run(capsys):
    code, document = run_json(capsys, [])
    assert code == 0
    assert document["summary"]["verdict"] == "verified"
    assert document["summary"]["shapes"]["source"] == "defaults"


def test_table_is_the_default(capsys):
    assert main([], deps=deps(device=FakeDevice(None))) == 3
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith("exit 3: not verifiable here")


def test_h200_exit_4(capsys):
    code, document = run_json(capsys, [], kernel=FakeKernel(capability=(9, 0)), device=FakeDevice(H200))
    assert code == 4
    stages = {s["id"]: s for s in document["stages"]}
    assert stages["arch"]["status"] == "UNSUPPORTED" and stages["contract"]["status"] == "PASS"


def test_old_flashinfer_exit_1(capsys):
    code, document = run_json(capsys, [], kernel=OldKernel())
    assert code == 1
    assert "enable_dcp" in document["summary"]["message"]


def test_strict(capsys):
    packages = FakePackages(versions={**FakePackages().versions, "flashinfer-jit-cache": None})
    assert main(["--json"], deps=deps(packages=packages)) == 0
    assert main(["--json", "--strict"], deps=deps(packages=packages)) == 1
    capsys.readouterr()


def test_launch_file_shapes_and_overrides(capsys):
    code, document = run_json(capsys, [str(DATA / "k3-dcp8-fp8.yaml")])
    assert code == 0
    shapes = document["summary"]["shapes"]
    assert (shapes["heads"], shapes["dcp_size"], shapes["kv_dtype"]) == (96, 8, "fp8_e4m3")
    assert document["summary"]["launch"].endswith("k3-dcp8-fp8.yaml")
    kernel = {s["id"]: s for s in document["stages"]}["kernel"]
    assert len(kernel["evidence"]["ranks"]) == 8
    assert kernel["evidence"]["tolerance"]["out_atol"] == 0.1

    argv = [str(DATA / "k3-dcp8-fp8.yaml"), "--dcp-size", "2", "--tp-size", "2", "--page-size", "32",
            "--kv-cache-dtype", "bf16", "--batch-size", "3", "--seq-len", "64,129"]
    code, document = run_json(capsys, argv)
    shapes = document["summary"]["shapes"]
    assert (shapes["dcp_size"], shapes["heads"], shapes["page_size"], shapes["kv_dtype"]) == (2, 96, 32, "bf16")
    assert shapes["seq_lens"] == [64, 129, 64]


def test_launch_file_problems_exit_2(capsys, tmp_path):
    assert main([str(tmp_path / "missing.yaml")], deps=deps()) == 2
    assert "no such file" in capsys.readouterr().err
    assert main([str(DATA / "k3-bad-kv-dtype.yaml")], deps=deps()) == 2
    assert "fp8_e5m2" in capsys.readouterr().err
    assert main([str(DATA / "broken.yaml")], deps=deps()) == 2
    assert "not valid YAML" in capsys.readouterr().err
    (tmp_path / "list.yaml").write_text("- 1\n")
    assert main([str(tmp_path / "list.yaml")], deps=deps()) == 2
    assert "no sglang launch found" in capsys.readouterr().err


def test_offline_environment_during_the_run_only():
    environ = {"FLASHINFER_NO_DOWNLOAD": "0"}
    kernel = FakeKernel()
    seen = []
    original = kernel.decode

    def spy(case, rank, overrides=None):
        seen.append(dict(environ))
        return original(case, rank, overrides)

    kernel.decode = spy  # type: ignore[method-assign]
    assert main(["--json"], deps=deps(kernel=kernel, environ=environ)) == 0
    assert seen and all(s["FLASHINFER_NO_DOWNLOAD"] == "1" and s["FLASHINFER_DISABLE_JIT"] == "1" for s in seen)
    assert environ == {"FLASHINFER_NO_DOWNLOAD": "0"}

    seen.clear()
    assert main(["--json", "--allow-network"], deps=deps(kernel=kernel, environ=environ)) == 0
    assert seen and all("FLASHINFER_DISABLE_JIT" not in s for s in seen)


def test_internal_errors_exit_2(capsys):
    def explode(path):
        raise RuntimeError("reader bug")

    assert main([str(DATA / "k3-dcp8-fp8.yaml")], deps=deps(read=explode)) == 2
    assert "RuntimeError: reader bug" in capsys.readouterr().err


def test_iters_and_warmup_reach_the_timing_stage(capsys):
    code, document = run_json(capsys, ["--iters", "7", "--warmup", "0"])
    timing = {s["id"]: s for s in document["stages"]}["timing"]
    assert (timing["evidence"]["iters"], timing["evidence"]["warmup"]) == (7, 0)


def test_parser_defaults():
    args = build_parser().parse_args([])
    assert (args.launch, args.json, args.strict, args.iters, args.allow_network) == (None, False, False, 50, False)


# --- subprocess: the real adapters with a fake flashinfer on the path ----------------------------
def _verify(tree: str | None, *argv: str, torch_free: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLASHINFER_", "FAKE_FLASHINFER"))}
    paths = [str(SERVER)] + ([str(FAKES / tree)] if tree else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["CUDA_VISIBLE_DEVICES"] = ""  # the fakes are never run against a real GPU
    if torch_free:
        env["FAKE_FLASHINFER_TORCH_FREE"] = "1"
    return subprocess.run([sys.executable, "-m", "kimi_lsp.verify.cli", *argv], env=env,
                          capture_output=True, text=True, timeout=120)


def test_fake_old_flashinfer_exits_1_naming_enable_dcp():
    done = _verify("old")
    assert done.returncode == 1, done.stderr
    last = done.stdout.splitlines()[-1]
    assert last.startswith("exit 1: failed: signature-static: flashinfer-python 0.6.16.post4:")
    assert "has no enable_dcp" in last
    assert "requires enable_dcp in the signature" in done.stdout  # the runtime probe, sglang's message


def test_fake_new_flashinfer_without_gpu_exits_3_listing_static_checks():
    done = _verify("new", "--json")
    assert done.returncode == 3, done.stderr
    document = json.loads(done.stdout)
    stages = {s["id"]: s["status"] for s in document["stages"]}
    assert stages["signature-static"] == "PASS" and stages["signature-runtime"] == "PASS"
    assert stages["cuda"] == "SKIP"
    assert document["summary"]["verdict"] == "not verifiable here"
    message = document["summary"]["message"]
    assert "static checks: packages PASS, signature-static PASS, signature-runtime PASS" in message


def test_fake_flashinfer_that_needs_torch_skips_the_runtime_probe_without_it():
    if _has_torch():
        pytest.skip("torch is installed here; the fake imports it")
    done = _verify("new", "--json", torch_free=False)
    assert done.returncode == 3, done.stderr
    stages = {s["id"]: s for s in json.loads(done.stdout)["stages"]}
    assert stages["signature-runtime"]["status"] == "SKIP"
    assert "torch is not installed" in stages["signature-runtime"]["reason"]


def test_fake_version_mismatch_exits_1():
    done = _verify("mismatch")
    assert done.returncode == 1, done.stderr
    assert "import flashinfer raised RuntimeError: flashinfer-cubin version (0.6.16.post4)" in done.stdout


def test_no_flashinfer_at_all_exits_3():
    done = _verify(None, "--json")
    if _has_distribution("flashinfer-python"):
        pytest.skip("a real flashinfer is installed here")
    assert done.returncode == 3, done.stderr
    assert json.loads(done.stdout)["summary"]["verdict"] == "not verifiable here"


def test_usage_error_in_a_subprocess_exits_2():
    done = _verify(None, "--page-size", "zero")
    assert done.returncode == 2
    assert "usage: kimi-lsp verify" in done.stderr


def test_importing_verify_loads_neither_torch_nor_flashinfer():
    code = (
        "import sys\n"
        "import kimi_lsp.verify.cli, kimi_lsp.verify.adapters, kimi_lsp.verify.reference\n"
        "import kimi_lsp.verify.stages, kimi_lsp.verify.report, kimi_lsp.verify.static\n"
        "kimi_lsp.verify.cli.default_dependencies()\n"
        "print(sorted(m for m in ('torch', 'flashinfer') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SERVER)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _has_torch() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def _has_distribution(name: str) -> bool:
    import importlib.metadata

    try:
        importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True
