from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Applicability, Fix, Location, Related, Severity
from kimi_lsp.rules import _flashinfer, _kimi
from kimi_lsp.rules._base import LaunchContext, Violation, rule


@rule(code="KL104", name="stale-flashinfer-lock", severity=Severity.ERROR, fix="never")
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A lockfile still pins a flashinfer-python that its own manifest no longer admits, for a
    Kimi-K3 DCP launch on cutedsl_mla.

    ## What it does
    After the flashinfer-python requirement in pyproject.toml / Pipfile / requirements.in was raised
    (for example by KL101's fix), the lock (uv.lock, poetry.lock, pdm.lock, Pipfile.lock, a compiled
    requirements.txt) still holds the old version. The lock must be regenerated; kimi-lsp never
    edits lock text (hashes and new dependencies make a hand edit invalid), so it names the command.

    ## Why is this bad?
    `uv sync --frozen`, `poetry install`, `pip install -r requirements.txt` and friends install what
    the lock says: the old flashinfer-python, and sglang fails at launch with the `enable_dcp`
    RuntimeError.

    ## Example
    ```yaml
    # pyproject.toml: flashinfer-python>=0.6.17  (uv.lock still locks 0.6.16.post4)
    model-path: moonshotai/Kimi-K3
    dcp-size: 8
    ```

    Use instead:
    ```yaml
    # after `uv lock --upgrade-package flashinfer-python`
    model-path: moonshotai/Kimi-K3
    dcp-size: 8
    ```
    """
    k3 = _kimi.k3_dcp(ctx)
    if k3 is None or k3.decode.name not in (None, "cutedsl_mla"):
        return
    ev = _flashinfer.evaluate(ctx)
    if not _flashinfer.sglang_checks(ev):
        return
    anchor = k3.anchor(ctx.launch)
    for f in ev.stale:
        cmd = (f.source.relock_command or "").replace("{name}", _flashinfer.FI).replace(
            "{version}", _flashinfer.bump_target(ctx, ev)
        ) or None
        how = f"; run `{cmd}`" if cmd else "; regenerate it with the tool that wrote it"
        fixes = (Fix(f"Re-lock: `{cmd}`", (), Applicability.DISPLAY_ONLY, cmd),) if cmd else ()
        yield Violation(
            anchor,
            f"{f.where} still locks flashinfer-python {f.shown}, which lacks `enable_dcp` for this Kimi-K3 DCP "
            f"launch, but {f.detail}: the lock is out of date{how}",
            fixes=fixes,
            related=(
                Related(Location(f.source.path, f.pins[0].span), f"flashinfer-python {f.shown} is locked here"),
                *_kimi.launched_from(ctx.launch, anchor),
            ),
        )
