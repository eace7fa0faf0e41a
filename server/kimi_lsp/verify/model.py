"""Values shared by the verify stages, probes and reports. Pure data: no torch, no flashinfer."""
from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field


class Status(str, enum.Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    WARN = "WARN"
    SKIP = "SKIP"
    UNSUPPORTED = "UNSUPPORTED"


@dataclass(frozen=True)
class StageResult:
    """One stage's verdict. ``payload`` hands live objects (device info, a prepared case) to later
    stages and never reaches the report; ``internal`` marks a bug in verify itself (exit 2)."""

    id: str
    status: Status
    reason: str
    evidence: Mapping[str, object] = field(default_factory=dict)
    seconds: float = 0.0
    internal: bool = False
    payload: object = field(default=None, compare=False, repr=False)


class Unavailable(Exception):
    """A probe cannot run on this host (no torch, no CUDA device): the stage is SKIP, not FAIL."""


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    capability: tuple[int, int]
    torch_version: str
    cuda_version: str | None  # torch.version.cuda: the toolkit torch was built with
    sm_count: int | None = None
    driver: str | None = None

    @property
    def sm(self) -> str:
        return f"SM{self.capability[0]}{self.capability[1]}"


@dataclass(frozen=True)
class Tolerance:
    """allclose-style bounds, |actual - expected| <= atol + rtol * |expected|."""

    out_atol: float
    out_rtol: float
    lse_atol: float
    lse_rtol: float


# flashinfer's own DCP test (tests/attention/test_cute_dsl_mla_dcp.py:369-382 at v0.6.17).
TOLERANCES: Mapping[str, Tolerance] = {
    "bf16": Tolerance(1e-2, 1e-2, 1e-2, 1e-2),
    "fp8_e4m3": Tolerance(0.1, 0.1, 0.2, 0.1),
}


@dataclass(frozen=True)
class Comparison:
    """How far one (out, lse) pair is from its reference."""

    out_max_abs_err: float
    lse_max_abs_err: float
    out_mismatches: int  # elements outside the tolerance
    lse_mismatches: int
    nans: int
    bad_empty_rows: int  # finite LSE where the reference row has no visible key, or the reverse

    @property
    def ok(self) -> bool:
        return not (self.out_mismatches or self.lse_mismatches or self.nans or self.bad_empty_rows)

    def summary(self) -> dict[str, object]:
        return {
            "out_max_abs_err": round(self.out_max_abs_err, 6),
            "lse_max_abs_err": round(self.lse_max_abs_err, 6),
            "out_mismatches": self.out_mismatches,
            "lse_mismatches": self.lse_mismatches,
            "nans": self.nans,
            "bad_empty_rows": self.bad_empty_rows,
        }
