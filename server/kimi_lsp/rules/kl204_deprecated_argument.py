from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Applicability, Edit, Fix, Severity
from kimi_lsp.launch import ArgUse, Origin
from kimi_lsp.rules import _args
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule
from kimi_lsp.surfaces.model import Entry

# Deprecated values whose rename does more than rename (serving_hook.py): their fix is unsafe.
_SIDE_EFFECTS = {
    "tokenspeed_mla": (
        "; it also forces `--kv-cache-dtype fp8_e4m3` and decode-mode speculative attention, "
        "and as a prefill backend it becomes `trtllm_mla`"
    ),
}


@rule(code="KL204", name="deprecated-argument", severity=Severity.WARNING, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A deprecated sglang flag or value, with its replacement.

    ## What it does
    Reports flags that the pinned release keeps only for compatibility (`--enable-dp-attention`,
    `--disable-cuda-graph`, `--grpc-mode`, `--disable-fast-image-processor`,
    `--enable-flashinfer-allreduce-fusion`, `--monokernel-backend`) and deprecated values that
    sglang renames while resolving the arguments (`--attention-backend tokenspeed_mla` ->
    `cutedsl_mla`, `compressed` -> `dsv4`, `--tool-call-parser qwen25` -> `qwen`, `glm45` -> `glm`).
    A flag registered as `DeprecatedAction` that only warns on its release (0.5.8 on, when it has
    no `error_message`) does nothing at all: that is said too. (One that stops the parse is KL201.)

    ## Why is this bad?
    The launch still works today but prints a deprecation warning, and the next sglang release may
    reject it. Some renames also change other settings behind your back (`tokenspeed_mla` forces an
    fp8 KV cache).

    ## Example
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tool-call-parser qwen25 --grpc-mode
    ```

    Use instead:
    ```bash
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tool-call-parser qwen --smg-grpc-mode
    ```

    ## Fix safety
    Replacing a deprecated value that sglang merely renames is safe. `tokenspeed_mla` (whose
    rename changes other settings) and flag replacements are unsafe; a replacement that needs
    more than one word (`--attn-dp-size <dp-size>`) has no automatic fix.
    """
    launch = ctx.launch
    schema = launch.schema
    for use in launch.uses:
        flag = use.flag
        if use.entry is not None and _args.special_config_value(schema, use.entry) is not None:
            continue
        if flag.action == "deprecated" and launch.command.entry is not Entry.ENGINE:
            if flag.config_refused and use.origin is Origin.CONFIG:
                continue  # the merger refuses the key (KL206)
            from kimi_lsp.knowledge.launch_checks import parse_error

            head = use.option.value.split("=", 1)[0]
            full = next((o for o in flag.options if o.startswith(head)), head)
            if parse_error(schema.version, full) is None:  # (one that stops the parse is KL201's)
                said = f" ({flag.help})" if flag.help else ""
                yield Violation(
                    _args.use_location(launch, use),
                    f"`{_args.flag_text(use)}` is deprecated: sglang only prints a warning and ignores it{said}",
                )
            continue
        new_flag = flag.deprecated or (schema.deprecated_flags.get(flag.dest) if not flag.takes_value else None)
        if new_flag:
            fix = _flag_fix(ctx, use, new_flag)
            yield Violation(
                _args.use_location(launch, use),
                f"`{_args.flag_text(use)}` is deprecated and will be removed in a future release (use `{new_flag}`)",
                fixes=(fix,) if fix is not None else (),
            )
            continue
        renames = schema.deprecated_values.get(flag.dest)
        if not renames:
            continue
        for tok in use.values:
            new = renames.get(tok.value)
            if new is None or (flag.choices is not None and tok.value not in flag.choices):
                continue  # not accepted at all: KL202
            extra = _SIDE_EFFECTS.get(tok.value, "")
            fix = _args.replace_token(
                ctx, tok, use.origin, new, f"Replace `{tok.value}` with `{new}`",
                Applicability.UNSAFE if extra else Applicability.SAFE,
            )
            yield Violation(
                _args.value_location(launch, use, tok),
                f"`{tok.value}` is a deprecated value of `{_args.flag_text(use)}`: sglang renames it to `{new}`{extra}",
                fixes=(fix,) if fix is not None else (),
            )


def _flag_fix(ctx: LaunchContext, use: ArgUse, new_flag: str) -> Fix | None:
    """Replace a deprecated store-true flag by a one-word replacement (`--x` or `--x=v`)."""
    if " " in new_flag or "<" in new_flag or "{" in new_flag or use.flag.takes_value:
        return None
    title = f"Replace with `{new_flag}`"
    if use.origin is Origin.CLI:
        return _args.replace_token(ctx, use.option, Origin.CLI, new_flag, title)
    entry = use.entry
    if entry is None or ctx.launch.config is None or entry.value is not True:
        return None
    option, _, value = new_flag.partition("=")
    rename = _args.key_rename_fix(ctx, entry, option[2:], title)
    if rename is None:
        return None
    edits = list(rename.edits)
    if value:
        edits.append(Edit(ctx.launch.config.path, entry.value_span, value))
    return Fix(title, tuple(edits), Applicability.UNSAFE)
