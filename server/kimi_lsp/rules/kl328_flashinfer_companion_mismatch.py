from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Applicability, Fix, Location, Related, Severity
from kimi_lsp.pep440 import InvalidVersion, Version
from kimi_lsp.pins.model import Pin, PinSource
from kimi_lsp.rules import _args, _flashinfer
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from pathlib import Path

    from kimi_lsp.text import Span

SKIP_ENV = "FLASHINFER_DISABLE_VERSION_CHECK"
COMPANIONS = ("flashinfer-cubin", "flashinfer-jit-cache")


@rule(code="KL328", name="flashinfer-companion-mismatch", severity=Severity.ERROR, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """flashinfer-cubin or flashinfer-jit-cache pinned at another version than flashinfer-python.

    ## What it does
    In the pin files that govern the launch (found as for KL101), compares an exact
    `flashinfer-cubin` pin with the flashinfer-python version (pinned directly, or through sglang's
    own exact pin), and checks that an exact `flashinfer-jit-cache` version starts with it (as
    `0.7.2+cu130` does). `FLASHINFER_DISABLE_VERSION_CHECK` on the launch turns the check off, as it
    does in flashinfer.

    ## Why is this bad?
    `import flashinfer` fails, and with it sglang's start-up: `RuntimeError: flashinfer-cubin
    version (0.7.1) does not match flashinfer version (0.7.2). Please install the same version of
    both packages.`

    ## Example
    ```bash
    # requirements.txt: flashinfer-python==0.7.2
    # requirements.txt: flashinfer-cubin==0.7.1
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B
    ```

    Use instead:
    ```bash
    # requirements.txt: flashinfer-python==0.7.2
    # requirements.txt: flashinfer-cubin==0.7.2
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B
    ```

    ## Fix safety
    Moving the companion pin to flashinfer-python's version is safe; in a lockfile it is shown with
    the re-lock command instead.
    """
    launch = ctx.launch
    if _args.env_set(launch, SKIP_ENV):
        return
    ev = _flashinfer.evaluate(ctx)
    seen: set[tuple[Path, Span]] = set()
    for f in ev.findings:
        fi_version = _fi_version(f)
        if fi_version is None:
            continue
        for name in COMPANIONS:
            for pin in f.source.pins_for(name):
                if not pin.version or (f.source.path, pin.span) in seen:
                    continue
                seen.add((f.source.path, pin.span))
                if _matches(name, pin.version, fi_version):
                    continue
                yield Violation(
                    _args.launch_anchor(launch),
                    f"{name} version ({pin.version}) does not match flashinfer version ({fi_version}): "
                    f"`import flashinfer` refuses to load ({f.where})",
                    fixes=_fixes(ctx, f.source, pin, fi_version),
                    related=(
                        Related(Location(f.source.path, pin.span), f"{name} {pin.version} is pinned here"),
                        *_flashinfer.related_for(ctx, f),
                    ),
                )


def _fi_version(f: _flashinfer.Finding) -> str | None:
    if f.via_sglang is not None:
        return f.shown
    versions = {p.version for p in f.pins if p.version}
    return versions.pop() if len(versions) == 1 else None


def _norm(text: str) -> str:
    try:
        return str(Version(text))
    except InvalidVersion:
        return text


def _matches(name: str, version: str, fi_version: str) -> bool:
    if name == "flashinfer-cubin":
        return _norm(version) == _norm(fi_version)
    return _norm(version).startswith(_norm(fi_version))


def _fixes(ctx: LaunchContext, source: PinSource, pin: Pin, fi_version: str) -> tuple[Fix, ...]:
    from kimi_lsp.pins import bump

    if source.is_lock:
        return (Fix(f"Install {pin.name}=={fi_version} (re-lock after aligning the manifest)", (), Applicability.DISPLAY_ONLY),)
    text = ctx.workspace.text(source.path)
    if text is None:
        return ()
    target = fi_version
    if pin.name == "flashinfer-jit-cache" and pin.version and "+" in pin.version:
        target = f"{fi_version}+{pin.version.split('+', 1)[1]}"
    edits = bump.bump_fix_edits(source, pin, target, text, companions=False)
    if not edits:
        return ()
    return (Fix(f"Pin {pin.name} to {target} in {source.path.name}", tuple(edits), Applicability.SAFE),)
