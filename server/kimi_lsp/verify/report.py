"""Rendering verify results: a table for people, one JSON object for scripts. Pure functions."""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kimi_lsp.verify.model import StageResult, Status
from kimi_lsp.verify.shapes import Shapes

STATIC_STAGES = ("packages", "signature-static", "signature-runtime", "offline")
VERDICTS = {
    0: "verified",
    1: "failed",
    2: "internal error",
    3: "not verifiable here",
    4: "unsupported architecture",
}


@dataclass(frozen=True)
class RunInfo:
    """What the summary says about the run besides the stages themselves."""

    version: str
    shapes: Shapes | None
    launch: str | None = None
    launch_index: int | None = None
    launch_count: int | None = None
    strict: bool = False


def _by_id(results: Sequence[StageResult]) -> dict[str, StageResult]:
    return {r.id: r for r in results}


def verdict_line(results: Sequence[StageResult], code: int) -> str:
    by_id = _by_id(results)
    if code == 0:
        return "verified: the DCP decode kernel runs on this GPU and matches the reference"
    if code == 1:
        failed = next((r for r in results if r.status is Status.FAIL), None)
        if failed is None:
            warned = next(r for r in results if r.status is Status.WARN)
            return f"failed (--strict): {warned.id}: {warned.reason}"
        return f"failed: {failed.id}: {failed.reason}"
    if code == 2:
        broken = next((r for r in results if r.internal), None)
        return f"{broken.id}: {broken.reason}" if broken else "internal error in verify (see stderr)"
    if code == 4:
        return f"unsupported architecture: {by_id['arch'].reason}"
    ran = ", ".join(f"{sid} {by_id[sid].status.value}" for sid in STATIC_STAGES if sid in by_id)
    reasons = [by_id[sid].reason for sid in ("packages", "cuda") if sid in by_id and by_id[sid].status is Status.SKIP]
    why = "; ".join(reason.split(";")[0] for reason in reasons) or "the GPU stages did not run"
    return f"not verifiable here ({why}); static checks: {ran}"


def summary(results: Sequence[StageResult], code: int, info: RunInfo) -> dict[str, object]:
    by_id = _by_id(results)
    runtime, static = by_id.get("signature-runtime"), by_id.get("signature-static")
    dcp_signature = None
    for stage in (runtime, static):
        if stage is not None and isinstance(stage.evidence.get("enable_dcp"), bool):
            dcp_signature = stage.evidence["enable_dcp"]
            break
    cuda = by_id.get("cuda")
    device = cuda.evidence.get("device") if cuda is not None else None
    cc = cuda.evidence.get("cc") if cuda is not None else None
    packages = by_id.get("packages")
    return {
        "verdict": VERDICTS.get(code, "unknown"),
        "exit_code": code,
        "message": verdict_line(results, code),
        "strict": info.strict,
        "launch": info.launch,
        "launch_index": info.launch_index,
        "launch_count": info.launch_count,
        "shapes": info.shapes.as_dict() if info.shapes is not None else None,
        "flashinfer": packages.evidence.get("flashinfer-python") if packages is not None else None,
        "dcp_signature": dcp_signature,
        "device": device,
        "cc": cc,
    }


def stage_dict(result: StageResult) -> dict[str, object]:
    return {
        "id": result.id,
        "status": result.status.value,
        "reason": result.reason,
        "evidence": _jsonable(result.evidence),
        "seconds": result.seconds,
    }


def _jsonable(value: object) -> object:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def render_json(results: Sequence[StageResult], code: int, info: RunInfo) -> str:
    document = {
        "version": info.version,
        "stages": [stage_dict(r) for r in results],
        "summary": summary(results, code, info),
    }
    return json.dumps(document, indent=2, sort_keys=False)


def _evidence_lines(evidence: Mapping[str, object], width: int = 150) -> list[str]:
    lines = []
    for key, value in evidence.items():
        if key == "traceback":
            continue
        text = value if isinstance(value, str) else json.dumps(_jsonable(value), separators=(",", ":"))
        text = text if len(text) <= width else text[: width - 3] + "..."
        lines.append(f"{'':22}{key}: {text}")
    return lines


def render_table(results: Sequence[StageResult], code: int, info: RunInfo, evidence: bool = True) -> str:
    header = f"kimi-lsp verify {info.version}"
    if info.launch:
        where = info.launch
        if info.launch_count and info.launch_count > 1 and info.launch_index is not None:
            where += f" (launch {info.launch_index + 1} of {info.launch_count})"
        header += f": {where}"
    lines = [header]
    if info.shapes is not None:
        lines.append(f"shapes: {info.shapes.describe()}")
        lines.extend(f"  note: {note}" for note in info.shapes.notes)
    lines.append("")
    lines.append(f"{'STAGE':<18} {'STATUS':<11} {'TIME':>7}  REASON")
    for r in results:
        lines.append(f"{r.id:<18} {r.status.value:<11} {r.seconds:>6.2f}s  {r.reason}")
        if evidence:
            lines.extend(_evidence_lines(r.evidence))
    lines.append("")
    lines.append(f"exit {code}: {verdict_line(results, code)}")
    return "\n".join(lines) + "\n"
