from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Applicability, Fix, Location, Related, Severity
from kimi_lsp.knowledge import flashinfer as fi
from kimi_lsp.rules import _flashinfer, _kimi
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule
from kimi_lsp.rules._fixes import add_flag_fix, set_value_fix

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from pathlib import Path

SGLANG_ERROR = (
    "Kimi-K3 DCP with decode_attention_backend='cutedsl_mla' requires enable_dcp in the signature of "
    "flashinfer.decode.trtllm_batch_decode_with_kv_cache_mla; upgrade to FlashInfer 0.6.17 or newer."
)


@rule(code="KL101", name="flashinfer-lacks-enable-dcp", severity=Severity.ERROR, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """Kimi-K3 with decode context parallelism on cutedsl_mla needs a flashinfer-python whose
    `trtllm_batch_decode_with_kv_cache_mla` accepts `enable_dcp`.

    ## What it does
    Finds launches of `KimiK3ForConditionalGeneration` with `--dcp-size` > 1 whose decode attention
    backend resolves to `cutedsl_mla` (explicitly, through `--attention-backend`, through the
    deprecated alias `tokenspeed_mla`, or by leaving it unset, which sglang fills with
    `cutedsl_mla`), and checks the flashinfer-python pinned for that launch against a table built
    from every released wheel's signature (first release with `enable_dcp`: 0.6.17rc1).

    ## Why is this bad?
    sglang refuses to start, after minutes of loading, with
    `RuntimeError: Kimi-K3 DCP with decode_attention_backend='cutedsl_mla' requires enable_dcp in
    the signature of flashinfer.decode.trtllm_batch_decode_with_kv_cache_mla; upgrade to FlashInfer
    0.6.17 or newer.`

    ## Example
    ```yaml
    # requirements.txt: flashinfer-python==0.6.16.post4
    model-path: moonshotai/Kimi-K3
    dcp-size: 8
    decode-attention-backend: cutedsl_mla
    ```

    Use instead:
    ```yaml
    # requirements.txt: flashinfer-python==0.6.17
    model-path: moonshotai/Kimi-K3
    dcp-size: 8
    decode-attention-backend: cutedsl_mla
    ```

    ## Fix safety
    Bumping the pin (and flashinfer-cubin / flashinfer-jit-cache pinned beside it) in a
    requirements, constraints, pyproject, Pipfile, environment.yml or Dockerfile/shell
    `pip install` line is safe. Lockfiles are never edited: the manifest that produces the lock is
    bumped and the re-lock command is named. `--dcp-size 1` and `--decode-attention-backend aiter`
    (ROCm only) are unsafe alternatives: they change how the model is served.
    """
    probed = _flashinfer.probed_launch(ctx)
    if probed is None:
        return
    k3, ev = probed
    launch = ctx.launch
    anchor = k3.anchor(launch)
    how = _decode_how(k3)
    model = k3.model.model or "the model"
    who = "Kimi-K3 (by model name)" if k3.model.guessed else "Kimi-K3"
    first = str(fi.min_enable_dcp())
    for f in ev.failing:
        fixes = list(_flashinfer.bump_fixes(ctx, ev, f))
        fixes.extend(_alternatives(ctx, k3))
        if f.via_sglang is not None:
            found = f"flashinfer-python {f.shown} (pinned by sglang {f.via_sglang.version} in {f.where})"
        elif f.source.is_lock:
            found = f"flashinfer-python {f.shown} locked in {f.where}"
        else:
            found = f"flashinfer-python{_spec(f.shown)} in {f.where}"
        # the culprit first, then what needs it (the kernel and sglang's own error: `explain KL101`)
        msg = f"{found} lacks `enable_dcp`, which {who} DCP (dcp-size {k3.dcp_size}) on `cutedsl_mla`{how} needs (>= {first})"
        yield Violation(
            anchor,
            msg,
            fixes=tuple(fixes),
            related=(*_flashinfer.related_for(ctx, f), *_kimi.launched_from(ctx.launch, anchor)),
            data={"sglang_error": SGLANG_ERROR, "model": model, "flashinfer": f.shown, "pin_file": str(f.source.path)},
        )
    if ev.failing:
        return
    for f in ev.broken:
        # fail closed: a governing pin file that cannot be read proves nothing, and the install
        # it drives would fail or install something unknown
        yield Violation(
            anchor,
            f"{who} DCP (dcp-size {k3.dcp_size}) on decode backend `cutedsl_mla`{how} needs flashinfer-python "
            f">= {first} (with `enable_dcp`), but the pin file that governs it, {_shown_path(ctx, f.source.path)}, "
            f"cannot be read: {f.detail}",
            related=(Related(Location(f.source.path, f.source.problems[0].span), f"{f.source.path.name} cannot be read"),
                     *_kimi.launched_from(ctx.launch, anchor)),
            data={"model": model, "pin_file": str(f.source.path)},
        )


def _shown_path(ctx: LaunchContext, path: Path) -> str:
    try:
        return path.relative_to(ctx.workspace.root).as_posix()
    except ValueError:
        return str(path)


def _spec(shown: str) -> str:
    return shown if shown[:1] in "=<>!~^" else f" {shown}"


def _decode_how(k3: _kimi.K3Dcp) -> str:
    d = k3.decode
    if d.use is None:
        return " (unset: sglang's default)"
    flag = d.use.option.value.lstrip("-")
    if d.written and d.written != d.name:
        return f" (`{flag}: {d.written}`, a deprecated alias)"
    if flag != "decode-attention-backend":
        return f" (via `{flag}`)"
    return ""


def _alternatives(ctx: LaunchContext, k3: _kimi.K3Dcp) -> list[Fix]:
    launch = ctx.launch
    out: list[Fix] = []
    f = set_value_fix(launch, k3.dcp_use, "1", "Serve without decode context parallelism (`--dcp-size 1`)", ctx.workspace)
    if f is not None:
        out.append(f)
    if k3.decode.use is not None and k3.decode.use.flag.dest == "decode_attention_backend":
        f = set_value_fix(
            launch, k3.decode.use, "aiter", "Use the aiter decode backend instead (ROCm only)", ctx.workspace
        )
    else:
        f = add_flag_fix(
            launch,
            k3.decode.use or k3.dcp_use,
            "--decode-attention-backend",
            "aiter",
            "Use the aiter decode backend instead (ROCm only)",
            ctx.workspace,
        )
    if f is not None:
        out.append(f)
    return [Fix(x.title, x.edits, Applicability.UNSAFE, x.followup) for x in out]
