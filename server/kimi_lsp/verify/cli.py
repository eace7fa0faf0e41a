"""``kimi-lsp verify [LAUNCH-FILE]``: check the DCP decode kernel a Kimi-K3 launch will use.

Exit codes: 0 verified; 1 a check failed; 2 usage or internal error; 3 not verifiable here (no
torch or no CUDA device; the static stages still ran); 4 the GPU's architecture cannot run the
kernel. ``--strict`` counts WARN as failure.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import traceback
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kimi_lsp import __version__
from kimi_lsp.verify.model import StageResult
from kimi_lsp.verify.probes import DeviceProbe, KernelAdapter, NumericsFactory, PackageProbe, Timer, Which
from kimi_lsp.verify.report import RunInfo, render_json, render_table
from kimi_lsp.verify.shapes import (
    KV_CACHE_DTYPE_CHOICES,
    ShapeError,
    ShapeOverrides,
    Shapes,
    derive_shapes,
    pick_launch,
    read_launches,
)
from kimi_lsp.verify.stages import Context, Options, exit_code, offline_environment, run_stages, version_has_enable_dcp


@dataclass(frozen=True)
class Dependencies:
    """Everything main() touches outside itself; tests hand in fakes."""

    packages: PackageProbe
    kernel: KernelAdapter
    device: DeviceProbe
    numerics: NumericsFactory
    timer: Timer
    environ: MutableMapping[str, str] = field(default_factory=lambda: os.environ)
    which: Which = shutil.which
    home: Path = field(default_factory=Path.home)
    classify_version: Callable[[str], bool | None] = version_has_enable_dcp
    read_launches: Callable[[Path], list[dict[str, object]]] = read_launches


def default_dependencies() -> Dependencies:
    # adapters import nothing heavy until a method runs
    from kimi_lsp.verify.adapters import CudaTimer, FlashinferKernel, TorchDevice, torch_numerics
    from kimi_lsp.verify.static import MetadataPackages

    return Dependencies(MetadataPackages(), FlashinferKernel(), TorchDevice(), torch_numerics, CudaTimer())


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _lengths(text: str) -> tuple[int, ...]:
    return tuple(_positive_int(part) for part in text.split(",") if part.strip())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kimi-lsp verify",
        description="Check, on this host's GPU, the flashinfer DCP MLA decode kernel that a Kimi-K3 "
        "launch with --dcp-size > 1 and the cutedsl_mla decode backend will use.",
        epilog="exit codes: 0 verified, 1 a check failed, 2 usage or internal error, 3 not verifiable "
        "here (no torch or no CUDA device), 4 the GPU architecture cannot run the kernel",
    )
    parser.add_argument("launch", nargs="?", type=Path, metavar="LAUNCH-FILE",
                        help="a launch file (sglang --config YAML, script, ...); its shapes are used")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--strict", action="store_true", help="count WARN as failure")
    shapes = parser.add_argument_group("shapes (override the launch file)")
    shapes.add_argument("--dcp-size", type=_positive_int, help="decode context-parallel world size W")
    shapes.add_argument("--tp-size", type=_positive_int, help="tensor-parallel size (heads = 96 / attn_tp * W)")
    shapes.add_argument("--page-size", type=_positive_int, help="KV page size (sglang uses 32 or 64)")
    shapes.add_argument("--kv-cache-dtype", choices=KV_CACHE_DTYPE_CHOICES, help="KV cache dtype")
    shapes.add_argument("--batch-size", type=_positive_int, help="decode batch size (default 2)")
    shapes.add_argument("--seq-len", type=_lengths, metavar="N[,N...]",
                        help="global KV lengths, cycled over the batch (default 257,1000)")
    run = parser.add_argument_group("run")
    run.add_argument("--iters", type=_positive_int, default=50, help="timed calls (default 50)")
    run.add_argument("--warmup", type=int, default=3, help="untimed calls before timing (default 3)")
    run.add_argument("--allow-network", action="store_true",
                     help="do not set FLASHINFER_NO_DOWNLOAD / FLASHINFER_DISABLE_JIT for the run")
    run.add_argument("--no-evidence", action="store_true", help="table: reasons only")
    return parser


@dataclass(frozen=True)
class _Launch:
    path: str | None
    index: int | None
    count: int | None
    settings: dict[str, object] | None


def _load_launch(path: Path | None, deps: Dependencies) -> _Launch:
    if path is None:
        return _Launch(None, None, None, None)
    if not path.is_file():
        raise ShapeError(f"{path}: no such file")
    launches = deps.read_launches(path)
    index = pick_launch(launches)
    if index is None:
        raise ShapeError(f"{path}: no sglang launch found")
    return _Launch(str(path), index, len(launches), launches[index])


def _shapes(args: argparse.Namespace, launch: _Launch) -> Shapes:
    overrides = ShapeOverrides(
        dcp_size=args.dcp_size, tp_size=args.tp_size, page_size=args.page_size,
        kv_cache_dtype=args.kv_cache_dtype, batch_size=args.batch_size, seq_lens=args.seq_len,
    )
    return derive_shapes(launch.settings, overrides, launch.path or "defaults")


def _render(args: argparse.Namespace, results: Sequence[StageResult], code: int, info: RunInfo) -> str:
    if args.json:
        return render_json(results, code, info) + "\n"
    return render_table(results, code, info, evidence=not args.no_evidence)


def main(argv: Sequence[str] | None = None, *, deps: Dependencies | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # argparse: 2 on a usage error, 0 for --help
        return exc.code if isinstance(exc.code, int) else 2
    try:
        deps = deps or default_dependencies()
        try:
            launch = _load_launch(args.launch, deps)
            shapes = _shapes(args, launch)
        except (ShapeError, OSError, UnicodeDecodeError) as exc:
            print(f"kimi-lsp verify: error: {exc}", file=sys.stderr)
            return 2
        ctx = Context(
            packages=deps.packages, kernel=deps.kernel, device=deps.device, numerics=deps.numerics,
            timer=deps.timer, shapes=shapes, environ=dict(deps.environ), which=deps.which, home=deps.home,
            classify_version=deps.classify_version,
            options=Options(strict=args.strict, allow_network=args.allow_network, iters=args.iters,
                            warmup=max(args.warmup, 0)),
        )
        with offline_environment(deps.environ, args.allow_network):
            results = run_stages(ctx)
        code = exit_code(results, strict=args.strict)
        info = RunInfo(__version__, shapes, launch.path, launch.index, launch.count, args.strict)
        output = _render(args, results, code, info)
    except Exception:  # noqa: BLE001 - exit 2 with the traceback, never a bare crash
        traceback.print_exc(file=sys.stderr)
        return 2
    sys.stdout.write(output)
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
