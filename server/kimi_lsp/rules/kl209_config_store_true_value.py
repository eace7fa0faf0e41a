from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Applicability, Location, Severity
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule

_TRUTHY = {"true", "yes", "on", "1", "y"}
_FALSY = {"false", "no", "off", "0", "n"}


@rule(code="KL209", name="config-store-true-value", severity=Severity.ERROR, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A `--config` key for a flag without a value (`--trust-remote-code`) that is not a YAML
    boolean, or that the pinned release's merger does not know as a boolean key.

    ## What it does
    sglang's config merger turns `flag: true` into a bare `--flag` only for a YAML boolean under
    a key in its own list of boolean keys (per release; 0.5.21 and 0.5.22 list field names only).
    Any other value is passed as a word after the flag: a quoted `'true'`, `1`, or a boolean under
    a spelling the merger does not list.

    ## Why is this bad?
    argparse rejects the stray word: `trust-remote-code: "true"` fails with
    `error: unrecognized arguments: true`.

    ## Example
    ```yaml
    model-path: Qwen/Qwen3-8B
    trust-remote-code: "true"
    ```

    Use instead:
    ```yaml
    model-path: Qwen/Qwen3-8B
    trust-remote-code: true
    ```

    ## Fix safety
    Writing a boolean-looking string or number as the YAML boolean it spells, and renaming an
    alias to the field name the merger knows, are safe.
    """
    launch = ctx.launch
    config = launch.config
    if config is None:
        return
    schema = launch.schema
    for entry in config.entries:
        if _args.special_config_value(schema, entry) != "store-true":
            continue
        flag = _args.entry_flag(schema, entry.key.value)
        assert flag is not None
        if flag.action == "help":
            continue  # argparse prints the help as it reads `--help`, before any stray value (KL201)
        key = entry.key.value
        value = entry.value
        where = Location(config.path, entry.key.span.cover(entry.value_span))
        word = str(value).lower() if isinstance(value, bool) else str(value)
        import json  # here, not at start-up: only a finding needs it

        written = json.dumps(value) if isinstance(value, str) else word
        fixes = []
        if isinstance(value, bool):
            known = flag.dest.replace("_", "-")
            fix = None
            if _args.is_store_true_key(schema, known):
                fix = _args.key_rename_fix(ctx, entry, known, f"Rename the key to `{known}`", Applicability.SAFE)
            if fix is not None:
                fixes.append(fix)
            yield Violation(
                where,
                f"sglang {schema.version}'s config merger does not read `{key}` as a boolean key: "
                f"`{key}: {word}` is passed as `--{key} {word}` (unrecognized arguments: {word})",
                fixes=tuple(fixes),
            )
            continue
        spelled = str(value).strip().lower() if isinstance(value, (str, int, float)) else ""
        target = "true" if spelled in _TRUTHY else ("false" if spelled in _FALSY else None)
        if target is not None:
            fix = _args.entry_value_fix(ctx, entry, target, f"Write the YAML boolean `{target}`", Applicability.SAFE)
            if fix is not None:
                fixes.append(fix)
        yield Violation(
            where,
            f"`--{key}` takes no value, so `{key}: {written}` is passed as `--{key} {word}` (unrecognized arguments: {word})",
            fixes=tuple(fixes),
        )
