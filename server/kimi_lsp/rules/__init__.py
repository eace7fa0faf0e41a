"""The rule registry: one explicit, ordered list (ruff's codes.rs, yamllint's _RULES)."""
from __future__ import annotations

from kimi_lsp.diagnostics import Severity
from kimi_lsp.rules import (
    kl101_flashinfer_lacks_enable_dcp,
    kl102_flashinfer_undetermined,
    kl103_k3_dcp_decode_backend,
)
from kimi_lsp.rules._base import Rule

# Rules the engine itself raises (parsing, configuration, suppressions); documented like the others.
ENGINE_RULES: tuple[Rule, ...] = (
    Rule(
        "KL001", "unparseable-launch-file", Severity.ERROR,
        "A launch file cannot be read or parsed (YAML/TOML syntax, encoding, binary, too large).",
        """A launch file cannot be read or parsed (YAML/TOML syntax, encoding, binary, too large).

## What it does
Reports a launch file (sglang `--config` YAML, TOML launch profile, Kubernetes/compose/CI YAML,
shell script, Dockerfile) that cannot be decoded or parsed, at the position of the error.

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
        "never", "file", lambda ctx: iter(()),
    ),
    Rule(
        "KL002", "invalid-configuration", Severity.ERROR,
        "The kimi-lsp configuration (`[tool.kimi-lsp]` or kimi-lsp.toml) is invalid.",
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
        "never", "file", lambda ctx: iter(()),
    ),
    Rule(
        "KL901", "unused-suppression", Severity.WARNING,
        "A `# kimi-lsp: ignore[...]` comment that suppresses nothing.",
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
        "always", "file", lambda ctx: iter(()),
    ),
)

LAUNCH_RULES: tuple[Rule, ...] = (
    kl101_flashinfer_lacks_enable_dcp.check,
    kl102_flashinfer_undetermined.check,
    kl103_k3_dcp_decode_backend.check,
)

ALL_RULES: tuple[Rule, ...] = tuple(sorted(ENGINE_RULES + LAUNCH_RULES, key=lambda r: r.code))
BY_CODE: dict[str, Rule] = {r.code: r for r in ALL_RULES}
BY_NAME: dict[str, Rule] = {r.name: r for r in ALL_RULES}


def get(code_or_name: str) -> Rule | None:
    return BY_CODE.get(code_or_name.upper()) or BY_NAME.get(code_or_name)
