"""The rule registry: one explicit, ordered list (ruff's codes.rs, yamllint's _RULES)."""
from __future__ import annotations

import sys
from types import ModuleType

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules._base import FixAvailability, Rule

# Rules the engine itself raises (parsing, configuration, suppressions); documented like the others.
ENGINE_RULES: tuple[Rule, ...] = (
    Rule(
        "KL001", "unparseable-launch-file", Severity.ERROR,
        """A launch file cannot be read or parsed (YAML/TOML syntax, encoding, binary, too large).

## What it does
Reports a launch file (sglang `--config` YAML, TOML launch profile, Kubernetes/compose/CI YAML,
shell script, Dockerfile) that cannot be decoded or parsed, at the position of the error. As a
warning, a launch that is not checked at all, never a silent pass: past the number of launches
one file is checked for, or run by an sglang release older than every one kimi-lsp knows
(`sglang==0.3.6`), whose arguments no schema can judge.

## Why is this bad?
sglang's `yaml.safe_load` fails the same way at launch, and nothing else in the file can be
checked until it parses.

## Example
```yaml
model-path: moonshotai/Kimi-K3
dcp-size: [8
```

Use instead:
```yaml
model-path: moonshotai/Kimi-K3
dcp-size: 8
```
""",
        FixAvailability.NEVER, lambda ctx: iter(()),
    ),
    Rule(
        "KL002", "invalid-configuration", Severity.ERROR,
        """The kimi-lsp configuration (`[tool.kimi-lsp]` or kimi-lsp.toml) is invalid.

## What it does
Reports unknown keys, wrong value types, unknown rule codes and unknown GPUs in the
configuration, on the configuration file.

## Why is this bad?
A setting that is silently ignored hides the problems it was meant to tune.

## Example
```toml
[tool.kimi-lsp]
selct = ["KL1"]
```

Use instead:
```toml
[tool.kimi-lsp]
select = ["KL1"]
```
""",
        FixAvailability.NEVER, lambda ctx: iter(()),
    ),
    Rule(
        "KL240", "removed-in-later-release", Severity.INFO,
        """A flag the launch's own sglang release accepts, which a later release removed or renamed.

## What it does
Reports, as information, an argument that is valid on the release the launch runs (its image,
pins, or the releases the repository names or the file's last commit date admits) but unknown
to the newest sglang release kimi-lsp knows, with what sglang itself said replaces it; likewise
an entry-point module the launch's release has and the newest lacks (`python -m
sglang.bench_one_batch`, gone from 0.5.21), with the module that replaced it. It is a
claim about staleness, not a failure: the launch works on its release. It says nothing when the
launch's release is today's newest, or unknown and unnarrowed.

## Why is this bad?
Whoever copies the launch onto today's sglang (an image bump, a guide's reader) gets
`error: unrecognized arguments` at start-up.

## Example
The launch runs sglang 0.5.12 (here by the `sglang-version` setting; as well its image, a pin, a
release the repository names, or the day the file was last committed):
```bash
# kimi-lsp.toml: sglang-version = "0.5.12"
python -m sglang.launch_server --model-path Qwen/Qwen3-8B --cuda-graph-max-bs 256
```

Use instead: the replacement sglang named, once the launch moves to a release that has it:
```bash
python -m sglang.launch_server --model-path Qwen/Qwen3-8B --cuda-graph-max-bs-decode 256
```

## Fix safety
No fix is offered: the replacement is not valid on the launch's own release. Select the rule
out (`ignore = ["KL240"]`) where a repository stays on its release on purpose.
""",
        FixAvailability.NEVER, lambda ctx: iter(()),
    ),
    Rule(
        "KL901", "unused-suppression", Severity.WARNING,
        """A `# kimi-lsp: ignore[...]` comment that suppresses nothing.

## What it does
Reports suppression comments that matched no diagnostic, so that they do not outlive the
problem they were written for.

## Why is this bad?
A stale suppression silently hides the next real problem on that line.

## Example
```yaml
tp-size: 8  # kimi-lsp: ignore[KL101]
```

Use instead:
```yaml
tp-size: 8
```

## Fix safety
Removing the comment is safe.
""",
        FixAvailability.ALWAYS, lambda ctx: iter(()),
    ),
)

# The launch rules, in registry order: one module each (DESIGN.md), loaded by _load (below).
_MODULES = (
    "kl101_flashinfer_lacks_enable_dcp",
    "kl102_flashinfer_undetermined",
    "kl103_k3_dcp_decode_backend",
    "kl104_stale_lock",
    "kl201_unknown_argument",
    "kl202_invalid_choice",
    "kl203_invalid_value_type",
    "kl204_deprecated_argument",
    "kl205_config_key_underscore",
    "kl206_config_key_refused",
    "kl207_config_null_value",
    "kl208_config_list_for_scalar",
    "kl209_config_store_true_value",
    "kl210_config_false_no_effect",
    "kl211_config_flag_ignored",
    "kl212_config_file_not_yaml",
    "kl213_config_file_not_found",
    "kl214_multiple_config_files",
    "kl215_config_path_missing",
    "kl216_missing_model_path",
    "kl217_duplicate_config_key",
    "kl301_dcp_size_invalid",
    "kl302_dcp_with_prefill_cp",
    "kl303_dcp_comm_backend_without_dcp",
    "kl304_dcp_replicate_q_proj_conflict",
    "kl305_dcp_with_kv_cache_sharding",
    "kl306_dcp_with_hicache",
    "kl307_dcp_with_lmcache",
    "kl308_pd_decode_dcp_transfer_backend",
    "kl309_attn_dp_conflict",
    "kl310_tp_not_divisible_by_nnodes",
    "kl311_multi_node_dp_replicas",
    "kl312_prefill_cp_without_strategy",
    "kl313_served_model_name_colon",
    "kl314_retraction_priority_without_scheduling",
    "kl315_watermark_config_without_watermark",
    "kl316_sidecar_args_without_sidecar",
    "kl317_grpc_port_equals_port",
    "kl318_mis_requires_flashinfer",
    "kl319_unknown_speculative_algorithm",
    "kl320_dflash_requirements",
    "kl321_k3_dcp_dspark_ragged_verify",
    "kl322_k3_dspark_case",
    "kl323_mla_kv_cache_dtype",
    "kl324_cutedsl_mla_prefill",
    "kl325_mla_backend_gpu",
    "kl326_k3_dcp_symm_mem",
    "kl327_flashinfer_below_minimum",
    "kl328_flashinfer_companion_mismatch",
    "kl329_sglang_pin_drift",
    "kl330_invalid_log_level",
    "kl331_grpc_serving_conflict",
)


def _load(names: tuple[str, ...]) -> list[ModuleType]:
    """The rule modules, in registry order (imported through ``_imports``'s one file of bytecode
    when it holds them, which spares importlib's finders ~2 ms of every one-file check)."""
    out = []
    for name in names:
        full = f"{__name__}.{name}"
        mod = sys.modules.get(full)
        if mod is None:
            __import__(full)
            mod = sys.modules[full]
        out.append(mod)
    return out


LAUNCH_RULES: tuple[Rule, ...] = tuple(m.check for m in _load(_MODULES))

ALL_RULES: tuple[Rule, ...] = tuple(sorted(ENGINE_RULES + LAUNCH_RULES, key=lambda r: r.code))
BY_CODE: dict[str, Rule] = {r.code: r for r in ALL_RULES}
BY_NAME: dict[str, Rule] = {r.name: r for r in ALL_RULES}


def get(code_or_name: str) -> Rule | None:
    return BY_CODE.get(code_or_name.upper()) or BY_NAME.get(code_or_name)
