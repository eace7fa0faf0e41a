from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Fix, Location, Related, Severity
from kimi_lsp.knowledge.sglang_releases import sglang_release
from kimi_lsp.pep440 import InvalidSpecifier, InvalidVersion, SpecifierSet, Version
from kimi_lsp.pins.model import PinSource
from kimi_lsp.rules import _args, _flashinfer
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from pathlib import Path

    from kimi_lsp.text import Span

FI = "flashinfer-python"


@rule(code="KL329", name="sglang-pin-drift", severity=Severity.WARNING, fix=FixAvailability.SOMETIMES)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A pin file that pins sglang together with a flashinfer-python (or sglang-kernel, torch)
    other than the exact version that sglang release itself requires.

    ## What it does
    Every recent sglang release pins its kernels exactly (sglang 0.5.23:
    `flashinfer_python[cu13]==0.7.2`, `sglang-kernel==0.4.10`, `torch==2.14.1`). In the lockfile,
    requirements file or Dockerfile that governs the launch, an exact sglang pin next to an exact pin
    of one of those packages at another version cannot come from one resolution: it comes from
    `--no-deps`, a hand edit, or a second `pip install` in the image. A declared override
    (uv `override-dependencies`, pdm `resolution.overrides`) is deliberate and not reported.

    ## Why is this bad?
    The combination was never tested by sglang and `pip check` reports it broken; with an older
    flashinfer the Kimi-K3 DCP check (KL101) or the flashinfer version assert (KL327) fails at
    start-up, with a newer one kernels may not match sglang's calls.

    ## Example
    ```bash
    # requirements.txt: sglang==0.5.23
    # requirements.txt: flashinfer-python==0.7.1
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B
    ```

    Use instead:
    ```bash
    # requirements.txt: sglang==0.5.23
    # requirements.txt: flashinfer-python==0.7.2
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B
    ```

    ## Fix safety
    Moving flashinfer-python to sglang's own pin is safe (in a manifest; a lockfile is re-locked);
    the other packages get no automatic fix.
    """
    launch = ctx.launch
    ev = _flashinfer.evaluate(ctx)
    seen: set[tuple[Path, Span]] = set()
    for f in ev.findings:
        if f.via_sglang is not None:
            continue
        src = f.source
        sg = next((p for p in src.pins_for("sglang") if p.version), None)
        if sg is None or sg.version is None:
            continue
        rel = sglang_release(sg.version)
        if rel is None:
            continue
        wanted = {FI: f"=={rel.flashinfer_version}"} if rel.flashinfer_version else {}
        wanted.update({k: v for k, v in rel.pins.items() if v.startswith("==") and k != FI})
        for name, spec in wanted.items():
            for pin in src.pins_for(name):
                key = (src.path, pin.span)
                if not pin.version or key in seen or _satisfies(pin.version, spec):
                    continue
                if _overridden(ctx, f, name):
                    continue  # a declared override (uv override-dependencies, pdm overrides) is deliberate
                seen.add(key)
                fixes: tuple[Fix, ...] = ()
                if name == FI and _flashinfer.bump_target(ctx, ev) == rel.flashinfer_version:
                    fixes = _flashinfer.bump_fixes(ctx, ev, f)
                yield Violation(
                    _args.launch_anchor(launch),
                    f"sglang {sg.version} requires {name}{spec}, but {_where(src)} pins {name} {pin.version} next to it",
                    fixes=tuple(fixes),
                    related=(
                        Related(Location(src.path, pin.span), f"{name} {pin.version} is pinned here"),
                        Related(Location(src.path, sg.span), f"sglang {sg.version} is pinned here"),
                    ),
                )


def _overridden(ctx: LaunchContext, f: _flashinfer.Finding, name: str) -> bool:
    sources = [f.source]
    for project in ctx.governing.projects:
        if project.dir == f.project_dir:
            sources.extend((*project.locks, *project.manifests))
    return any(p.override for src in sources for p in src.pins_for(name))


def _satisfies(version: str, spec: str) -> bool:
    try:
        return SpecifierSet(spec).contains(Version(version).public, prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return True


def _where(src: PinSource) -> str:
    return f"the lockfile {src.path.name}" if src.is_lock else src.path.name
