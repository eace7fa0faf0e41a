"""Hover on a pin line: what the pinned flashinfer-python / sglang version means for the launches
that depend on the file (the ``enable_dcp`` table, sglang's own flashinfer pin)."""

from __future__ import annotations

import logging
from pathlib import Path

from kimi_lsp.knowledge import flashinfer as fi
from kimi_lsp.lsp import adapters
from kimi_lsp.lsp.session import Session
from kimi_lsp.pins.model import Pin
from kimi_lsp.text import Span

log = logging.getLogger("kimi_lsp.lsp")
_MAX_LAUNCHES = 8
_MAX_LINTED = 200  # launch files linted for one hover at most


def pin_at(session: Session, path: Path, offset: int) -> Pin | None:
    from kimi_lsp.pins import discovery

    if adapters.pin_format(path) is None:
        return None
    try:
        sources = discovery.read_pin_file(path, session.workspace)
    except Exception:
        log.debug("cannot read pins of %s", path, exc_info=True)
        return None
    own = [s for s in sources if Path(s.path).resolve() == path]
    for src in own:
        for pin in src.pins:
            if pin.span.contains(offset):
                return pin
    return None


def flashinfer_text(pin: Pin) -> str:
    first, final = fi.min_enable_dcp(), fi.first_good_final()
    if pin.version:
        ok = fi.has_enable_dcp(pin.version)
        if ok is True:
            return (
                f"✓ `{pin.name}` {pin.version} has `enable_dcp`: "
                "Kimi-K3 DCP with the cutedsl_mla decode backend can start."
            )
        if ok is False:
            return (
                f"✗ `{pin.name}` {pin.version} lacks `enable_dcp` in `trtllm_batch_decode_with_kv_cache_mla`: "
                f"sglang refuses to start Kimi-K3 with DCP on cutedsl_mla. First release with it: {first} "
                f"(first final: {final})."
            )
        return (
            f"? `{pin.name}` {pin.version}: whether it has `enable_dcp` cannot be told from the version; "
            "`kimi-lsp verify` checks the installed kernel."
        )
    verdict = fi.classify([pin.specifier])
    return f"`{pin.name}{pin.specifier}`: {verdict.kind}. {verdict.detail}".strip()


def sglang_text(pin: Pin) -> str | None:
    from kimi_lsp.knowledge.sglang_releases import sglang_release

    if not pin.version:
        return None
    rel = sglang_release(pin.version)
    if rel is None:
        return f"sglang {pin.version} is not in kimi-lsp's release table."
    lines = [f"sglang {rel.version} requires `{rel.flashinfer_requirement or 'flashinfer-python (unpinned)'}`."]
    if rel.flashinfer_version:
        ok = fi.has_enable_dcp(rel.flashinfer_version)
        state = "has" if ok else ("lacks" if ok is False else "may lack")
        lines.append(f"That flashinfer-python {state} `enable_dcp`.")
    if not rel.has_k3_dcp_check:
        lines.append("This release does not run the Kimi-K3 DCP check.")
    return " ".join(lines)


def lint_governed(session: Session, path: Path) -> None:
    """Lint (when stale) the workspace's launch files this pin file can govern, so that the hover
    can say what the pin means for them even when none is open."""
    from kimi_lsp.pins import discovery
    from kimi_lsp.workspace import find_repo_root

    try:
        roots = discovery.governed_roots(path, session.workspace, find_repo_root(path.parent, None))
    except Exception:
        log.debug("cannot find what %s governs", path, exc_info=True)
        return
    files = [f for f in session.index() if any(r == f.parent or r in f.parents for r in roots)]
    for f in files[:_MAX_LINTED]:
        session.lint_if_stale(f)


def launches_text(session: Session, path: Path) -> str:
    deps = sorted(session.dependents.get(path, set()))
    if not deps:
        return "No launch in the workspace depends on this file."
    rows = []
    for d in deps[:_MAX_LAUNCHES]:
        res = session.results.get(d)
        codes = sorted({x.code for x in res.diagnostics}) if res is not None else []
        rel = _rel(d, session.root)
        rows.append(f"- `{rel}`" + (f": {', '.join(codes)}" if codes else ": no problems"))
    if len(deps) > _MAX_LAUNCHES:
        rows.append(f"- … and {len(deps) - _MAX_LAUNCHES} more")
    return "Launches that depend on this file:\n" + "\n".join(rows)


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def pin_hover(session: Session, path: Path, offset: int) -> tuple[str, Span] | None:
    pin = pin_at(session, path, offset)
    if pin is None:
        return None
    if pin.name == "flashinfer-python":
        text = flashinfer_text(pin)
    elif pin.name in fi.WATCHED:
        text = (
            f"`{pin.name}` ships kernels for flashinfer-python and must carry the same version "
            "(a bump moves them together)."
        )
    elif pin.name == "sglang":
        text = sglang_text(pin) or f"`sglang{pin.specifier}`"
    else:
        return None
    lint_governed(session, path)
    return f"{text}\n\n{launches_text(session, path)}", pin.span
