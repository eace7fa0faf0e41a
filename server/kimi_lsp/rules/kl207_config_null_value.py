from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Location, Severity
from kimi_lsp.knowledge.schema import check_value
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule


@rule(code="KL207", name="config-null-value", severity=Severity.ERROR, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A `--config` key set to `null` (`~`, or nothing after the colon).

    ## What it does
    sglang's config merger turns every value into a word with `str()`, so `null` becomes the
    string `None`. That is an error for numbers, choices and flags without a value; for a plain
    string flag it silently sets the value to the text `None` (a warning). Flags whose parser
    reads `None` as "unset" are fine.

    ## Why is this bad?
    `attention-backend: ~` fails with `argument --attention-backend: invalid choice: 'None'`,
    `tp-size:` with `invalid int value: 'None'`; an empty `served-model-name:` serves the model
    under the name `None`. A key left empty to mean "use the default" does the opposite.

    ## Example
    ```yaml
    model-path: Qwen/Qwen3-8B
    attention-backend: ~
    ```

    Use instead:
    ```yaml
    model-path: Qwen/Qwen3-8B
    ```

    ## Fix safety
    Deleting the key keeps sglang's default, which may not be what the empty value was meant to
    say: unsafe.
    """
    launch = ctx.launch
    if launch.config is None:
        return
    schema = launch.schema
    for entry in launch.config.entries:
        if entry.value is not None:
            continue
        flag = _args.entry_flag(schema, entry.key.value)
        if flag is None or _args.is_refused_key(schema, entry.key.value):
            continue
        key = entry.key.value
        where = Location(launch.config.path, entry.key.span.cover(entry.value_span))
        fix = _args.delete_entry_fix(ctx, entry, f"Remove `{key}` (keep sglang's default)")
        fixes = (fix,) if fix is not None else ()
        if not flag.takes_value:
            yield Violation(
                where,
                f"`{key}: null` is passed as `--{key} None`, but `--{key}` takes no value (unrecognized arguments: None)",
                fixes=fixes,
            )
            continue
        msg = check_value(flag, "None")
        if msg is not None:
            if msg.startswith("invalid choice"):
                msg = f"`None` is not a choice of `--{key}`"
            yield Violation(where, f"`{key}: null` is passed as the string `None`: {msg}", fixes=fixes)
        elif flag.type != "nullable_str":
            yield Violation(
                where,
                f"`{key}: null` sets `--{key}` to the literal string `None`, not to its default",
                fixes=fixes,
                severity=Severity.WARNING,
            )
