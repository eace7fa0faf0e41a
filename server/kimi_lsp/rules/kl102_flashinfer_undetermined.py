from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.knowledge import flashinfer as fi
from kimi_lsp.rules import _flashinfer, _kimi
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from pathlib import Path


@rule(code="KL102", name="flashinfer-version-undetermined", severity=Severity.WARNING, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A Kimi-K3 DCP launch on cutedsl_mla whose flashinfer-python version cannot be determined.

    ## What it does
    For the same launches as KL101, reports when no pin of flashinfer-python (or of sglang, whose
    own exact flashinfer pin then applies) governs the launch, or when the governing pin is a range
    that admits releases without `enable_dcp` and no lockfile decides.

    ## Why is this bad?
    Whatever the resolver picks on the day of the install decides whether sglang starts: a range
    like `>=0.6.10,<0.7` can install 0.6.16.post4 and fail with sglang's RuntimeError at launch.

    ## Example
    ```yaml
    # requirements.txt: flashinfer-python>=0.6.10,<0.7
    model-path: moonshotai/Kimi-K3
    dcp-size: 8
    decode-attention-backend: cutedsl_mla
    ```

    Use instead:
    ```yaml
    # requirements.txt: flashinfer-python>=0.6.17,<0.7
    model-path: moonshotai/Kimi-K3
    dcp-size: 8
    decode-attention-backend: cutedsl_mla
    ```

    ## Fix safety
    Raising the floor of the range (keeping its cap) is safe.
    """
    probed = _flashinfer.probed_launch(ctx)
    if probed is None:
        return
    k3, ev = probed
    if ev.failing or ev.broken:
        return  # KL101 speaks for this launch
    anchor = k3.anchor(ctx.launch)
    undecided = ev.undecided
    if not ev.findings:
        where = ", ".join(_rel(p, ctx) for p in ev.searched) or "the launch file's directory"
        yield Violation(
            anchor,
            f"Kimi-K3 DCP on cutedsl_mla needs flashinfer-python >= {fi.min_enable_dcp()} (with `enable_dcp`), "
            f"but no pin of flashinfer-python or sglang governs this launch (searched: {where})",
            related=_kimi.launched_from(ctx.launch, anchor),
        )
        return
    for f in undecided:
        fixes = _flashinfer.bump_fixes(ctx, ev, f) if f.via_sglang is None else ()
        detail = f": {f.detail}" if f.detail else ""
        yield Violation(
            anchor,
            f"Kimi-K3 DCP on cutedsl_mla needs `enable_dcp` (flashinfer-python >= {fi.first_good_final()}), but "
            f"`{_describe(f)}` in {f.where} admits releases without it and no lockfile decides{detail}",
            fixes=tuple(fixes),
            related=(*_flashinfer.related_for(ctx, f), *_kimi.launched_from(ctx.launch, anchor)),
        )


def _describe(f: _flashinfer.Finding) -> str:
    if f.via_sglang is not None or f.shown.startswith("sglang"):
        return f.shown
    return f"flashinfer-python{f.shown}" if f.shown[:1] in "=<>!~^" else f"flashinfer-python {f.shown}"


def _rel(p: Path, ctx: LaunchContext) -> str:
    try:
        r = p.relative_to(ctx.workspace.root).as_posix()
        return r or "."
    except ValueError:
        return str(p)
