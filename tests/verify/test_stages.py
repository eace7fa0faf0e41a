"""Every stage over fakes, and the exit code a whole run gives. No torch needed."""
from __future__ import annotations

import dataclasses
import os

import pytest
from kimi_lsp.verify.model import DeviceInfo, StageResult, Status, Unavailable
from kimi_lsp.verify.stages import (
    OFFLINE_ENV,
    SGLANG_IMPORT_MESSAGE,
    SGLANG_SIGNATURE_MESSAGE,
    Options,
    arch_policy,
    exit_code,
    offline_environment,
    run_stages,
)
from verify_fakes import (
    B200,
    FAKES,
    H200,
    AcceptEverythingKernel,
    BrokenImportKernel,
    CorruptKernel,
    FakeDevice,
    FakeKernel,
    FakeNumerics,
    FakePackages,
    OldKernel,
    default_shapes,
    make_context,
)

OLD_PACKAGES = FakePackages(
    versions={"flashinfer-python": "0.6.16.post4", "flashinfer-cubin": "0.6.16.post4",
              "flashinfer-jit-cache": "0.6.16.post4+cu129", "nvidia-cutlass-dsl": "4.8.0", "apache-tvm-ffi": "0.1.11"},
    flashinfer_dir=FAKES / "old" / "flashinfer",
)


def run(**kwargs):
    results = run_stages(make_context(**kwargs))
    return {r.id: r for r in results}, results


def statuses(by_id):
    return {k: v.status.value for k, v in by_id.items()}


# --- whole runs -----------------------------------------------------------------------------------
def test_b200_with_new_flashinfer_verifies():
    by_id, results = run()
    assert statuses(by_id) == {
        "packages": "PASS", "signature-static": "PASS", "signature-runtime": "PASS", "cuda": "PASS",
        "arch": "PASS", "offline": "PASS", "contract": "PASS", "kernel": "PASS", "timing": "PASS",
    }
    assert exit_code(results) == 0
    assert [r.id for r in results] == list(by_id)


def test_h200_reports_unsupported_arch_after_checking_the_contract():
    kernel = FakeKernel(capability=(9, 0))
    by_id, results = run(kernel=kernel, device=FakeDevice(H200))
    assert by_id["arch"].status is Status.UNSUPPORTED
    assert "requires SM100+" in by_id["arch"].reason
    assert "passes here" in by_id["arch"].reason  # sglang's Kimi-K3 DCP probe would not stop the launch
    assert by_id["contract"].status is Status.PASS
    assert by_id["contract"].evidence["valid_call_below_sm100"]["ok"] is True
    assert "got SM90" in by_id["contract"].evidence["valid_call_below_sm100"]["got"]
    assert by_id["kernel"].status is Status.SKIP and "architecture" in by_id["kernel"].reason
    assert by_id["timing"].status is Status.SKIP
    assert exit_code(results) == 4


@pytest.mark.parametrize("device", [B200, H200])
def test_old_flashinfer_fails_naming_enable_dcp(device):
    by_id, results = run(kernel=OldKernel(capability=device.capability), device=FakeDevice(device),
                         packages=OLD_PACKAGES)
    assert by_id["signature-static"].status is Status.FAIL
    assert "has no enable_dcp" in by_id["signature-static"].reason
    assert by_id["signature-static"].evidence["missing"] == [
        "enable_dcp", "cp_world", "cp_rank", "causal_seqlens_kv_global"]
    assert by_id["signature-runtime"].status is Status.FAIL
    assert SGLANG_SIGNATURE_MESSAGE in by_id["signature-runtime"].reason
    assert by_id["contract"].status is Status.FAIL
    assert "unexpected keyword argument 'enable_dcp'" in by_id["contract"].reason
    assert by_id["kernel"].status is Status.SKIP
    assert exit_code(results) == 1  # a FAIL outranks the H200's unsupported arch


def test_corrupted_output_fails_the_kernel_stage():
    by_id, results = run(kernel=CorruptKernel(bad_rank=1))
    kernel = by_id["kernel"]
    assert kernel.status is Status.FAIL
    assert "cp_rank 1 (q_len 1): 7 out" in kernel.reason
    assert "LSE merge" in kernel.reason
    ranks = kernel.evidence["ranks"]
    assert [r["out_mismatches"] for r in ranks] == [0, 7]
    assert by_id["timing"].status is Status.SKIP
    assert exit_code(results) == 1


def test_nan_output_fails_the_kernel_stage():
    by_id, _ = run(kernel=CorruptKernel(bad_rank=0, nan=True))
    assert by_id["kernel"].status is Status.FAIL
    assert "3 NaN" in by_id["kernel"].reason


def test_import_time_version_mismatch_fails_the_runtime_probe():
    packages = FakePackages(versions={**FakePackages().versions, "flashinfer-cubin": "0.6.16.post4"})
    by_id, results = run(kernel=BrokenImportKernel(), packages=packages)
    assert by_id["packages"].status is Status.WARN
    assert "flashinfer-cubin 0.6.16.post4 != flashinfer-python 0.6.17" in by_id["packages"].reason
    assert by_id["signature-static"].status is Status.PASS
    runtime = by_id["signature-runtime"]
    assert runtime.status is Status.FAIL
    assert runtime.reason.startswith("import flashinfer raised RuntimeError: flashinfer-cubin version")
    assert by_id["contract"].status is Status.SKIP
    assert by_id["kernel"].status is Status.SKIP
    assert exit_code(results) == 1


def test_version_check_bypass_silences_the_mismatch_warning():
    packages = FakePackages(versions={**FakePackages().versions, "flashinfer-cubin": "0.6.16.post4"})
    by_id, _ = run(packages=packages, environ={"FLASHINFER_DISABLE_VERSION_CHECK": "1"})
    assert by_id["packages"].status is Status.PASS


@pytest.mark.parametrize("error", [ImportError("cannot import name 'trtllm_batch_decode_with_kv_cache_mla'"),
                                   TypeError("not a callable"), ValueError("no signature found")])
def test_errors_sglang_catches_become_its_import_message(error):
    by_id, results = run(kernel=BrokenImportKernel(error=error))
    assert by_id["signature-runtime"].status is Status.FAIL
    assert SGLANG_IMPORT_MESSAGE in by_id["signature-runtime"].reason
    assert type(error).__name__ in by_id["signature-runtime"].evidence["cause"]
    assert exit_code(results) == 1


def test_other_import_errors_fail_too():
    by_id, _ = run(kernel=BrokenImportKernel(error=OSError("libcuda.so.1: cannot open shared object file")))
    assert by_id["signature-runtime"].status is Status.FAIL
    assert "OSError" in by_id["signature-runtime"].reason


def test_no_cuda_device_is_not_verifiable_but_static_stages_ran():
    by_id, results = run(device=FakeDevice(None))
    assert [by_id[s].status for s in ("packages", "signature-static", "signature-runtime")] == [Status.PASS] * 3
    assert by_id["cuda"].status is Status.SKIP
    assert all(by_id[s].status is Status.SKIP for s in ("arch", "contract", "kernel", "timing"))
    assert exit_code(results) == 3


def test_no_torch_skips_the_runtime_probe():
    by_id, results = run(kernel=BrokenImportKernel(error=Unavailable("torch is not installed")),
                         device=FakeDevice(None, "torch is not installed"))
    assert by_id["signature-runtime"].status is Status.SKIP
    assert by_id["signature-static"].status is Status.PASS
    assert exit_code(results) == 3


def test_flashinfer_not_installed_is_not_verifiable():
    packages = FakePackages(versions={"torch": "2.13.0"}, flashinfer_dir=None)
    by_id, results = run(packages=packages, device=FakeDevice(None),
                         kernel=BrokenImportKernel(error=ModuleNotFoundError("No module named 'flashinfer'",
                                                                             name="flashinfer")))
    assert statuses(by_id)["packages"] == "SKIP"
    assert SGLANG_IMPORT_MESSAGE in by_id["packages"].reason
    assert by_id["signature-static"].status is Status.SKIP
    assert by_id["signature-runtime"].status is Status.SKIP
    assert by_id["offline"].status is Status.SKIP
    assert exit_code(results) == 3


def test_a_missing_flashinfer_dependency_fails_the_runtime_probe():
    error = ModuleNotFoundError("No module named 'tvm_ffi'", name="tvm_ffi")
    by_id, _ = run(kernel=BrokenImportKernel(error=error))
    assert by_id["signature-runtime"].status is Status.FAIL


def test_strict_turns_warnings_into_failure():
    packages = FakePackages(versions={**FakePackages().versions, "flashinfer-jit-cache": None})
    _, results = run(packages=packages, which=lambda name: "/usr/local/cuda/bin/nvcc")
    assert {r.id: r.status for r in results}["offline"] is Status.WARN
    assert exit_code(results) == 0
    assert exit_code(results, strict=True) == 1


def test_internal_error_in_a_stage_exits_2_and_the_rest_still_run():
    def broken(ctx, done):
        raise KeyError("oops")

    from kimi_lsp.verify import stages

    plan = list(stages.STAGES)
    plan[1] = ("signature-static", broken)
    results = run_stages(make_context(), plan)
    by_id = {r.id: r for r in results}
    assert by_id["signature-static"].internal
    assert "internal error in verify: KeyError" in by_id["signature-static"].reason
    assert "traceback" in by_id["signature-static"].evidence
    assert by_id["kernel"].status is Status.PASS
    assert exit_code(results) == 2


def test_stage_times_are_recorded():
    ticks = iter(range(100))
    results = run_stages(make_context(), clock=lambda: float(next(ticks)))
    assert all(r.seconds == 1.0 for r in results)


# --- S1 -------------------------------------------------------------------------------------------
def test_static_signature_reads_the_fake_trees():
    by_id, _ = run()
    static = by_id["signature-static"]
    assert static.evidence["parameters"] == 31
    assert static.evidence["definition"].endswith("mla/_core.py:12")


def test_release_table_disagreeing_with_the_signature_warns():
    by_id, _ = run(classify=lambda version: False)
    assert by_id["signature-static"].status is Status.WARN
    assert "predates enable_dcp" in by_id["signature-static"].reason


def test_release_table_agreeing_is_evidence():
    by_id, _ = run(classify=lambda version: True)
    assert by_id["signature-static"].status is Status.PASS
    assert by_id["signature-static"].evidence["release_table_has_enable_dcp"] is True


def test_function_missing_from_the_package_fails(tmp_path):
    (tmp_path / "flashinfer").mkdir()
    (tmp_path / "flashinfer" / "__init__.py").write_text("")
    packages = FakePackages(flashinfer_dir=tmp_path / "flashinfer")
    by_id, _ = run(packages=packages)
    assert by_id["signature-static"].status is Status.FAIL
    assert "is not defined" in by_id["signature-static"].reason


def test_runtime_and_static_disagreement_is_noted():
    by_id, _ = run(packages=OLD_PACKAGES)  # static reads 0.6.16.post4, runtime imports a new build
    assert by_id["signature-runtime"].status is Status.PASS
    assert "disagree" in by_id["signature-runtime"].evidence["note"]


# --- S4 -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cc", "cuda", "kv", "status", "phrase"),
    [
        ((9, 0), "12.9", "bf16", Status.UNSUPPORTED, "requires SM100+, got SM90"),
        ((8, 0), "12.9", "bf16", Status.UNSUPPORTED, "got SM80"),
        ((10, 0), "12.9", "bf16", Status.PASS, "validated"),
        ((10, 3), "13.0", "bf16", Status.PASS, "validated"),
        ((10, 0), "12.4", "bf16", Status.WARN, "CUDA 12.4 < 12.8"),
        ((10, 1), "12.9", "fp8_e4m3", Status.WARN, "other than SM100/SM103"),
        ((11, 0), "13.0", "bf16", Status.WARN, "no sm_110 branch"),
        ((11, 0), "13.0", "fp8_e4m3", Status.WARN, "FP8 path lists sm_110"),
        ((11, 0), "12.9", "bf16", Status.WARN, "< 13.0"),
        ((12, 0), "12.9", "bf16", Status.UNSUPPORTED, "treated as unsupported"),
        ((12, 1), "13.0", "bf16", Status.UNSUPPORTED, "SM121"),
    ],
)
def test_arch_policy(cc, cuda, kv, status, phrase):
    got, reason = arch_policy(cc, cuda, kv)
    assert got is status
    assert phrase in reason


def test_arch_warn_still_runs_the_kernel_and_strict_fails_it():
    sm110 = DeviceInfo("NVIDIA Thor", (11, 0), "2.13.0", "13.0")
    by_id, results = run(device=FakeDevice(sm110), kernel=FakeKernel(capability=(11, 0)))
    assert by_id["arch"].status is Status.WARN
    assert by_id["kernel"].status is Status.PASS
    assert exit_code(results) == 0
    assert exit_code(results, strict=True) == 1


def test_sm120_is_unsupported():
    sm120 = DeviceInfo("NVIDIA RTX PRO 6000", (12, 0), "2.13.0", "12.9")
    by_id, results = run(device=FakeDevice(sm120), kernel=FakeKernel(capability=(12, 0)))
    assert by_id["arch"].status is Status.UNSUPPORTED
    assert by_id["kernel"].status is Status.SKIP
    assert exit_code(results) == 4


def test_flashinfer_saying_the_arch_is_unsupported_wins():
    by_id, results = run(kernel=FakeKernel(arch_supported=False))
    assert by_id["arch"].status is Status.UNSUPPORTED
    assert "is_cute_dsl_arch_supported(10, 0) is False" in by_id["arch"].reason
    assert exit_code(results) == 4


def test_arch_question_raising_is_not_a_verdict():
    class Raising(FakeKernel):
        def cute_dsl_arch_supported(self, capability):
            raise ImportError("cutlass")

    by_id, _ = run(kernel=Raising())
    assert by_id["arch"].status is Status.PASS
    assert by_id["arch"].evidence["is_cute_dsl_arch_supported"] is None


# --- S5 -------------------------------------------------------------------------------------------
def test_offline_ready_with_matching_cubin_and_jit_cache():
    by_id, _ = run()
    assert by_id["offline"].status is Status.PASS
    assert by_id["offline"].evidence["cubins"] == "flashinfer-cubin 0.6.17"
    assert by_id["offline"].evidence["launcher"] == "flashinfer-jit-cache 0.6.17+cu129"


def test_offline_warns_about_downloads_and_nvcc():
    packages = FakePackages(versions={"flashinfer-python": "0.6.17"})
    by_id, results = run(packages=packages)
    offline = by_id["offline"]
    assert offline.status is Status.WARN
    assert "nvidia-cutlass-dsl>=4.5.0" in offline.reason
    assert "apache-tvm-ffi" in offline.reason
    assert "download FMHA cubins" in offline.reason
    assert "no flashinfer-jit-cache and no nvcc" in offline.reason
    assert exit_code(results) == 0  # WARN only


def test_offline_cubin_sources(tmp_path):
    packages = FakePackages(versions={**FakePackages().versions, "flashinfer-cubin": None})
    empty = tmp_path / "empty"
    empty.mkdir()
    by_id, _ = run(packages=packages, environ={"FLASHINFER_CUBIN_DIR": str(empty)})
    assert "is empty" in by_id["offline"].reason

    cache = tmp_path / "home" / ".cache" / "flashinfer" / "cubins"
    cache.mkdir(parents=True)
    (cache / "fmha.cubin").write_bytes(b"\0")
    by_id, _ = run(packages=packages, home=tmp_path / "home")
    assert by_id["offline"].status is Status.PASS
    assert "downloaded earlier" in by_id["offline"].evidence["cubins"]


def test_offline_launcher_from_aot_or_nvcc(tmp_path):
    package = tmp_path / "flashinfer"
    (package / "data" / "aot").mkdir(parents=True)
    versions = {**FakePackages().versions, "flashinfer-jit-cache": "0.6.16+cu129"}
    by_id, _ = run(packages=FakePackages(versions=versions, flashinfer_dir=package))
    assert by_id["offline"].evidence["launcher"].startswith("AOT modules")

    cuda_home = tmp_path / "cuda"
    (cuda_home / "bin").mkdir(parents=True)
    (cuda_home / "bin" / "nvcc").write_text("")
    by_id, _ = run(packages=FakePackages(versions=versions), environ={"CUDA_HOME": str(cuda_home)})
    assert by_id["offline"].status is Status.WARN
    assert "JIT-built with nvcc" in by_id["offline"].reason
    assert by_id["offline"].evidence["nvcc"] == str(cuda_home / "bin" / "nvcc")


# --- S6 -------------------------------------------------------------------------------------------
def test_contract_cases_and_their_refusals():
    kernel = FakeKernel()
    by_id, _ = run(kernel=kernel)
    contract = by_id["contract"]
    assert contract.status is Status.PASS
    assert set(contract.evidence) == {"return_lse_false", "backend_trtllm_gen", "dcp_args_without_enable_dcp"}
    overrides = [o for _, o in kernel.calls[:3]]
    assert overrides == [{"return_lse": False}, {"backend": "trtllm-gen"}, {"enable_dcp": False}]


def test_contract_fails_when_a_bad_call_is_accepted():
    by_id, results = run(kernel=AcceptEverythingKernel())
    assert by_id["contract"].status is Status.FAIL
    assert "accepted; flashinfer must refuse it" in by_id["contract"].reason
    assert exit_code(results) == 1


def test_contract_fails_on_a_different_refusal():
    class Other(FakeKernel):
        def decode(self, case, rank, overrides=None):
            if overrides:
                raise ValueError("something else entirely")
            return super().decode(case, rank, overrides)

    by_id, _ = run(kernel=Other())
    assert by_id["contract"].status is Status.FAIL
    assert "refused with a different error" in by_id["contract"].reason


def test_contract_on_h200_without_the_arch_refusal_fails():
    # a build that would let a valid DCP call through on SM90 contradicts flashinfer's own check
    by_id, results = run(kernel=FakeKernel(capability=(10, 0)), device=FakeDevice(H200))
    assert by_id["contract"].status is Status.FAIL
    assert "valid_call_below_sm100" in by_id["contract"].reason
    assert exit_code(results) == 1


# --- S7 / S8 --------------------------------------------------------------------------------------
def test_kernel_runs_every_rank_and_the_merge():
    numerics = FakeNumerics()
    kernel = FakeKernel()
    shapes = default_shapes(dcp_size=4, heads=96)
    by_id, _ = run(kernel=kernel, numerics=numerics, shapes=shapes)
    kernel_result = by_id["kernel"]
    assert kernel_result.status is Status.PASS
    assert [r["cp_rank"] for r in kernel_result.evidence["ranks"]] == [0, 1, 2, 3]
    assert kernel_result.evidence["merged"][0]["out_mismatches"] == 0
    assert kernel_result.evidence["first_call_s"] == {"1": 1.5}
    assert kernel_result.evidence["tolerance"]["out_atol"] == 0.01


def test_kernel_uses_fp8_tolerances_for_an_fp8_cache():
    by_id, _ = run(shapes=default_shapes(kv_dtype="fp8_e4m3"))
    assert by_id["kernel"].evidence["tolerance"] == {"out_atol": 0.1, "out_rtol": 0.1, "lse_atol": 0.2, "lse_rtol": 0.1}


def test_speculative_width_is_a_second_variant():
    numerics = FakeNumerics()
    by_id, _ = run(numerics=numerics, shapes=default_shapes(q_lens=(1, 4)))
    assert by_id["kernel"].status is Status.PASS
    assert set(by_id["kernel"].evidence["first_call_s"]) == {"1", "4"}
    assert [c.q_len for c in numerics.cases if c.shapes.source != "contract"] == [1, 4]
    assert by_id["timing"].evidence["q_len"] == 1


def test_kernel_launch_error_fails():
    class Crashing(FakeKernel):
        def decode(self, case, rank, overrides=None):
            if not overrides:
                raise RuntimeError("cute.compile failed: ptxas error")
            return super().decode(case, rank, overrides)

    by_id, results = run(kernel=Crashing())
    assert by_id["kernel"].status is Status.FAIL
    assert "cp_rank 0) raised RuntimeError: cute.compile failed" in by_id["kernel"].reason
    assert exit_code(results) == 1


def test_shapes_outside_the_kernel_limits_fail():
    by_id, results = run(shapes=default_shapes(heads=192, page_size=48))
    assert by_id["kernel"].status is Status.FAIL
    assert "192 decode heads" in by_id["kernel"].reason
    assert "page size 48" in by_id["kernel"].reason
    assert exit_code(results) == 1


def test_timing_reports_median_p90_and_bandwidth():
    by_id, _ = run(options=Options(iters=5, warmup=2))
    timing = by_id["timing"]
    assert timing.status is Status.PASS
    assert timing.evidence["median_us"] == 12.0
    assert timing.evidence["p90_us"] == 14.0
    assert timing.evidence["first_call_s"] == 1.5
    assert timing.evidence["kv_gb_per_s"] == round(1_000_000 / 12e-6 / 1e9, 1)
    assert "first call (compile) 1.50 s" in timing.reason


def test_kernel_skips_when_the_probe_fails_even_on_a_good_gpu():
    by_id, _ = run(kernel=FakeKernel(params=tuple(p for p in FakeKernel().params if p != "enable_dcp")))
    assert by_id["signature-runtime"].status is Status.FAIL
    assert by_id["kernel"].status is Status.SKIP


# --- environment ----------------------------------------------------------------------------------
def test_offline_environment_sets_and_restores(monkeypatch):
    monkeypatch.setenv("FLASHINFER_NO_DOWNLOAD", "0")
    monkeypatch.delenv("FLASHINFER_DISABLE_JIT", raising=False)
    kernel = FakeKernel()
    ctx = make_context(kernel=kernel)
    with offline_environment(os.environ, allow_network=False):
        run_stages(ctx)
    assert kernel.environ_seen and all(
        seen["FLASHINFER_NO_DOWNLOAD"] == "1" and seen["FLASHINFER_DISABLE_JIT"] == "1" for seen in kernel.environ_seen)
    assert os.environ["FLASHINFER_NO_DOWNLOAD"] == "0"
    assert "FLASHINFER_DISABLE_JIT" not in os.environ


def test_offline_environment_restores_after_an_exception():
    environ = {"FLASHINFER_DISABLE_JIT": "0"}
    with pytest.raises(RuntimeError), offline_environment(environ, allow_network=False):
        assert environ == {**OFFLINE_ENV}
        raise RuntimeError
    assert environ == {"FLASHINFER_DISABLE_JIT": "0"}


def test_allow_network_leaves_the_environment_alone():
    environ: dict[str, str] = {}
    with offline_environment(environ, allow_network=True):
        assert environ == {}


# --- exit-code aggregation ------------------------------------------------------------------------
def _results(**statuses: str) -> list[StageResult]:
    order = ("packages", "signature-static", "signature-runtime", "cuda", "arch", "offline", "contract", "kernel",
             "timing")
    return [StageResult(sid, Status(statuses.get(sid.replace("-", "_"), "PASS")), "") for sid in order]


@pytest.mark.parametrize(
    ("statuses", "strict", "code"),
    [
        ({}, False, 0),
        ({"offline": "WARN"}, False, 0),
        ({"offline": "WARN"}, True, 1),
        ({"arch": "WARN"}, True, 1),
        ({"kernel": "FAIL", "timing": "SKIP"}, False, 1),
        ({"signature_static": "FAIL", "arch": "UNSUPPORTED", "kernel": "SKIP"}, False, 1),
        ({"arch": "UNSUPPORTED", "kernel": "SKIP", "timing": "SKIP"}, False, 4),
        ({"arch": "UNSUPPORTED", "kernel": "SKIP", "offline": "WARN"}, True, 1),
        ({"cuda": "SKIP", "arch": "SKIP", "contract": "SKIP", "kernel": "SKIP", "timing": "SKIP"}, False, 3),
        ({"signature_runtime": "SKIP", "cuda": "SKIP", "arch": "SKIP", "contract": "SKIP", "kernel": "SKIP"}, False, 3),
        ({"timing": "SKIP"}, False, 0),
    ],
)
def test_exit_code(statuses, strict, code):
    assert exit_code(_results(**statuses), strict=strict) == code


def test_internal_error_outranks_everything():
    results = _results(kernel="FAIL")
    results[0] = dataclasses.replace(results[0], internal=True)
    assert exit_code(results) == 2



# --- the release table, as verify asks it -----------------------------------------------------------
@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.6.16rc5", False), ("0.6.16.post4", False),
        ("0.6.17rc1", True), ("0.6.17rc5", True), ("0.6.17", True), ("0.7.2", True),
        # a nightly with the DCP commit, and an editable install: only the signature can tell
        ("0.6.16.dev20260729", None), ("0.0.0+unknown", None),
    ],
)
def test_version_classifier(version, expected):
    import importlib.util

    from kimi_lsp.verify.stages import version_has_enable_dcp

    if importlib.util.find_spec("kimi_lsp.knowledge.flashinfer") is None:
        assert version_has_enable_dcp(version) is None  # no table: unknown, never a guess
        return
    assert version_has_enable_dcp(version) is expected


def test_version_classifier_without_the_table(monkeypatch):
    import sys

    from kimi_lsp.verify.stages import version_has_enable_dcp

    monkeypatch.setitem(sys.modules, "kimi_lsp.knowledge.flashinfer", None)
    assert version_has_enable_dcp("0.6.16.post4") is None
