"""Stdlib-only probes: package metadata, flashinfer's files located and parsed without running them.

``importlib.util.find_spec`` on a top-level name locates the package without executing its
``__init__``; ``ast`` then reads the signature. This works with no torch and no GPU, and it is
what separates the 0.6.16.post4 wheel (no ``enable_dcp``) from 0.6.17rc1 and later.
"""
from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

FUNCTION = "trtllm_batch_decode_with_kv_cache_mla"
DCP_KWARGS = ("enable_dcp", "cp_world", "cp_rank", "causal_seqlens_kv_global")
# Every keyword sglang 0.5.23 passes in its DCP decode (cutedsl_mla_backend.py:120-143).
SGLANG_KWARGS = (
    "query", "kv_cache", "workspace_buffer", "qk_nope_head_dim", "kv_lora_rank",
    "qk_rope_head_dim", "block_tables", "seq_lens", "max_seq_len", "bmm1_scale",
    "skip_softmax_threshold_scale_factor", "backend", "enable_dcp", "cp_world", "cp_rank",
    "causal_seqlens_kv_global", "return_lse",
)
DISTRIBUTIONS = (
    "flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache", "nvidia-cutlass-dsl",
    "apache-tvm-ffi", "torch", "sglang",
)


class MetadataPackages:
    """PackageProbe over importlib.metadata / find_spec: nothing is imported."""

    def version(self, distribution: str) -> str | None:
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            return None

    def package_dir(self, module: str) -> Path | None:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            return None
        if spec is None or not spec.submodule_search_locations:
            return None
        return Path(next(iter(spec.submodule_search_locations)))


@dataclass(frozen=True)
class FoundSignature:
    path: Path
    line: int
    parameters: tuple[str, ...]
    var_keyword: bool  # **kwargs: sglang's probe still wants the name itself

    def missing(self, names: Sequence[str]) -> tuple[str, ...]:
        return tuple(name for name in names if name not in self.parameters)


def _statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, looking through if/try/with but not into defs or classes."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for part in ("body", "orelse", "finalbody"):
                yield from _statements(getattr(node, part, []))
            for handler in getattr(node, "handlers", []):
                yield from _statements(handler.body)


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8", errors="replace"), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return None


def _signature_of(node: ast.FunctionDef | ast.AsyncFunctionDef, path: Path) -> FoundSignature:
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    return FoundSignature(path, node.lineno, tuple(names), args.kwarg is not None)


def _module_file(package_dir: Path, parts: Sequence[str]) -> tuple[Path, bool] | None:
    base = package_dir.joinpath(*parts)
    if (base / "__init__.py").is_file():
        return base / "__init__.py", True
    if parts and base.with_suffix(".py").is_file():
        return base.with_suffix(".py"), False
    return None


def _follow(package_dir: Path, parts: tuple[str, ...], name: str, depth: int) -> FoundSignature | None:
    """Resolve ``name`` in module ``parts`` the way ``from flashinfer.decode import name`` would."""
    located = _module_file(package_dir, parts)
    if located is None or depth > 8:
        return None
    path, is_package = located
    tree = _parse(path)
    if tree is None:
        return None
    for node in _statements(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return _signature_of(node, path)
    package = parts if is_package else parts[:-1]
    for node in _statements(tree.body):
        if not isinstance(node, ast.ImportFrom):
            continue
        if not any(alias.name in (name, "*") and alias.asname in (None, name) for alias in node.names):
            continue
        if node.level:
            anchor = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            target = (*anchor, *(node.module.split(".") if node.module else ()))
        elif node.module and node.module.split(".")[0] == package_dir.name:
            target = tuple(node.module.split(".")[1:])
        else:
            continue
        found = _follow(package_dir, tuple(target), name, depth + 1)
        if found is not None:
            return found
    return None


def _scan(package_dir: Path, name: str) -> FoundSignature | None:
    # data/ holds bundled third-party trees (cutlass, headers); never flashinfer's API
    for path in sorted(package_dir.rglob("*.py")):
        relative = path.relative_to(package_dir).parts
        if relative and relative[0] == "data":
            continue
        tree = _parse(path)
        if tree is None:
            continue
        for node in _statements(tree.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return _signature_of(node, path)
    return None


def find_signature(package_dir: Path, name: str = FUNCTION) -> FoundSignature | None:
    """The definition sglang's ``from flashinfer.decode import name`` reaches, read statically.

    Follows the re-export chain from ``decode.py``; if that fails (a refactor we do not know),
    falls back to the first top-level definition anywhere in the package outside ``data/``.
    """
    return _follow(package_dir, ("decode",), name, 0) or _scan(package_dir, name)
