from __future__ import annotations

from collections.abc import Iterator

from kimi_lsp.diagnostics import Severity
from kimi_lsp.knowledge import flashinfer as fi
from kimi_lsp.knowledge.sglang_releases import sglang_release
from kimi_lsp.launch import ArgUse
from kimi_lsp.pep440 import InvalidSpecifier, InvalidVersion, SpecifierSet, Version
from kimi_lsp.rules import _args, _flashinfer, _kimi
from kimi_lsp.rules._base import FixAvailability, LaunchContext, Violation, rule

SKIP_ENV = "SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK"
_FAR_FUTURE = Version("99999")


@rule(code="KL327", name="flashinfer-below-minimum", severity=Severity.ERROR, fix=FixAvailability.SOMETIMES,
      whole_launch=True)
def check(ctx: LaunchContext) -> Iterator[Violation]:
    """A launch on a flashinfer attention backend whose flashinfer-python is older than the
    version sglang asserts at start-up.

    ## What it does
    When the resolved prefill or decode attention backend is `flashinfer`, or
    `--dsa-topk-backend` / `--speculative-dsa-topk-backend` is `flashinfer`, sglang checks the
    installed flashinfer-python against its own pin (0.7.2 for sglang 0.5.23) unless
    `SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK` is set. The pin that governs the launch is found the same
    way as for KL101 (the launch file's own `pip install`, else the nearest lockfile or manifest).
    The Kimi-K3 DCP override replaces the attention backends, so there only the top-k backends
    count.

    ## Why is this bad?
    `Exception: flashinfer_python is installed with version 0.6.18, which is less than the minimum
    required version 0.7.2. ...` right after the arguments are resolved.

    ## Example
    ```bash
    # requirements.txt: flashinfer-python==0.6.18
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --attention-backend flashinfer
    ```

    Use instead:
    ```bash
    # requirements.txt: flashinfer-python==0.7.2
    python -m sglang.launch_server --model-path Qwen/Qwen3-8B --attention-backend flashinfer
    ```

    ## Fix safety
    Bumping the pin to sglang's own flashinfer version is safe (lockfiles: the manifest is bumped
    and the re-lock command named), as for KL101.
    """
    launch = ctx.launch
    if _args.env_set(launch, SKIP_ENV):
        return
    trigger = _trigger(ctx)
    if trigger is None:
        return
    use, why = trigger
    ev = _flashinfer.evaluate(ctx)
    sglang_version = ev.sglang_version or launch.schema.version
    rel = sglang_release(sglang_version)
    if rel is None or not rel.flashinfer_version:
        return
    minimum = Version(rel.flashinfer_version)
    target = _flashinfer.bump_target(ctx, ev)
    for f in ev.findings:
        if f.via_sglang is not None or f.lock_decides:
            continue
        if not _too_old(f, minimum):
            continue
        fixes = _flashinfer.bump_fixes(ctx, ev, f) if _at_least(target, minimum) else ()
        what = f"locked in {f.where}" if f.source.is_lock else f"in {f.where}"
        shown = f.shown if f.shown[:1] in "=<>!~^" else f" {f.shown}"
        older = "is older" if any(p.version for p in f.pins) else "admits only older releases"
        yield Violation(
            _args.use_location(launch, use),
            f"{why} needs flashinfer-python >= {minimum} (sglang {sglang_version} asserts it at start-up), "
            f"but flashinfer-python{shown} ({what}) {older}",
            fixes=tuple(fixes),
            related=_flashinfer.related_for(ctx, f),
        )


def _trigger(ctx: LaunchContext) -> tuple[ArgUse, str] | None:
    """The flag that makes sglang assert the flashinfer version, and how to say it."""
    launch = ctx.launch
    (p_name, p_use), (d_name, d_use) = _args.attention_backends(launch)
    k3 = _kimi.k3_dcp(ctx)
    if k3 is not None and k3.decode.name in (None, "cutedsl_mla", "aiter"):
        p_name = d_name = None  # the Kimi-K3 DCP override sets both backends itself
    for name, use, phase in ((p_name, p_use, "prefill "), (d_name, d_use, "decode ")):
        if name == "flashinfer" and use is not None:
            if use.flag.dest == "attention_backend":
                phase = ""
            return use, f"The flashinfer {phase}attention backend (`{_args.spelled(use)}`)"
    for dest in ("dsa_topk_backend", "speculative_dsa_topk_backend"):
        use = _args.explicit(launch, dest)
        if use is not None and use.value == "flashinfer":
            return use, f"The flashinfer DSA top-k backend (`{_args.spelled(use)}`)"
    return None


def _too_old(f: _flashinfer.Finding, minimum: Version) -> bool:
    versions = [p.version for p in f.pins if p.version]
    if versions:
        parsed = [_version(v) for v in versions]
        return any(v is not None and v < minimum for v in parsed)
    try:
        spec = SpecifierSet(",".join(p.specifier for p in f.pins if p.specifier))
    except InvalidSpecifier:
        return False
    if not any(p.specifier for p in f.pins):
        return False  # unconstrained: the newest release is installed
    if spec.contains(minimum, prereleases=True) or spec.contains(_FAR_FUTURE, prereleases=True):
        return False
    return not any(r >= minimum and spec.contains(r, prereleases=True) for r in fi.releases())


def _version(text: str) -> Version | None:
    try:
        v = Version(text)
    except InvalidVersion:
        return None
    if v.is_devrelease or not any(v.release):
        return None  # a source build: its number says nothing (see knowledge/flashinfer.py)
    return Version(v.public)


def _at_least(target: str, minimum: Version) -> bool:
    v = _version(target)
    return v is not None and v >= minimum
