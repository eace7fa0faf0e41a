"""Which launch surface a file is, from its path and content.

Names decide first (Dockerfile*, ``*.sh``/``*.sbatch``..., ``*.toml``, ``*.yaml``/``*.yml``), a
shell shebang makes an extension-less file a script. A YAML file is then classified by its
composed documents: Kubernetes (``apiVersion`` + ``kind``), CI (by path), compose (a ``services``
mapping), an sglang ``--config`` (a root mapping whose keys are mostly sglang flags and that has
none of the keys of the other kinds), or any other YAML that runs a launch somewhere (CI_YAML).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path, PurePath

from yaml.nodes import MappingNode, Node, ScalarNode

from kimi_lsp.surfaces import _yaml
from kimi_lsp.surfaces.model import Surface
from kimi_lsp.surfaces.toml_profile import has_sglang_table

SHELL_SUFFIXES = frozenset({".sh", ".bash", ".zsh", ".ksh", ".sbatch", ".slurm", ".pbs"})
YAML_SUFFIXES = frozenset({".yaml", ".yml"})
_SHEBANG_RE = re.compile(r"#![ \t]*(\S+)(?:[ \t]+(?:-\S+[ \t]+)*(\S+))?")
_SHELL_NAMES = frozenset({"sh", "bash", "zsh", "ksh", "dash", "ash", "mksh"})
_LAUNCH_RE = re.compile(
    r"sglang\.(?:launch_server|bench_one_batch_server|benchmark\.|compile_deep_gemm|cli\.main)|\bsglang['\"]?\s+serve\b"
)
# Root keys of YAML files that are not sglang configs (k8s, compose, CI, pre-commit, SkyPilot, ...).
_FOREIGN_ROOT_KEYS = frozenset(
    {
        "apiVersion", "kind", "services", "jobs", "on", "steps", "stages", "include", "repos",
        "workflows", "resources", "run", "setup", "script", "pipeline", "tasks", "hosts", "spec",
        "metadata",
    }
)
# Flags nearly every sglang config sets; used only when the engine gives no schema predicate.
_COMMON_FLAGS = frozenset(
    {
        "model-path", "model", "tokenizer-path", "tp-size", "tp", "tensor-parallel-size", "dp-size",
        "pp-size", "ep-size", "dcp-size", "port", "host", "attention-backend",
        "decode-attention-backend", "prefill-attention-backend", "mem-fraction-static",
        "trust-remote-code", "served-model-name", "context-length", "chunked-prefill-size",
        "max-running-requests", "quantization", "dtype", "kv-cache-dtype", "enable-dp-attention",
        "disable-radix-cache", "cuda-graph-max-bs", "log-level", "speculative-algorithm", "nnodes",
        "node-rank", "dist-init-addr", "moe-runner-backend", "page-size", "load-format",
        "max-total-tokens", "schedule-policy", "random-seed", "disable-cuda-graph",
    }
)
_FLAG_KEY_RE = re.compile(r"-{0,2}[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")
_TOP_KEY_RE = re.compile(r"^[\"']?([A-Za-z0-9_-]+)[\"']?[ \t]*:", re.MULTILINE)

SglangKey = Callable[[str], bool]


def is_dockerfile_name(name: str) -> bool:
    low = name.lower()
    return (
        low in ("dockerfile", "containerfile")
        or low.startswith(("dockerfile.", "containerfile."))
        or low.endswith((".dockerfile", ".containerfile"))
    )


def has_shell_shebang(text: str) -> bool:
    if not text.startswith("#!"):
        return False
    m = _SHEBANG_RE.match(text.split("\n", 1)[0])
    if m is None:
        return False
    program = PurePath(m.group(1)).name
    if program == "env" and m.group(2):
        program = PurePath(m.group(2)).name
    return program in _SHELL_NAMES


def is_ci_path(path: Path) -> bool:
    parts = [p.lower() for p in path.parts]
    name = path.name.lower()
    if ".github" in parts and ("workflows" in parts or name in ("action.yml", "action.yaml")):
        return True
    if name in (".gitlab-ci.yml", ".gitlab-ci.yaml", "azure-pipelines.yml", "bitbucket-pipelines.yml", ".drone.yml"):
        return True
    return ".circleci" in parts or ".buildkite" in parts or ".gitlab" in parts


def guess_by_name(path: Path, text: str) -> Surface | str | None:
    """A surface decided by the name alone, ``"yaml"`` for YAML to classify, or None."""
    if is_dockerfile_name(path.name):
        return Surface.DOCKERFILE
    suffix = path.suffix.lower()
    if suffix in SHELL_SUFFIXES:
        return Surface.SHELL
    if suffix == ".toml":
        return Surface.TOML if has_sglang_table(text) else None
    if suffix in YAML_SUFFIXES:
        return "yaml"
    if not suffix and has_shell_shebang(text):
        return Surface.SHELL
    return None


def _sglang_key(key: str, is_sglang_key: SglangKey | None) -> bool:
    if is_sglang_key is None:
        return key.lstrip("-").replace("_", "-") in _COMMON_FLAGS
    candidates = {key, key.replace("_", "-"), key.lstrip("-"), key.lstrip("-").replace("_", "-")}
    try:
        return any(is_sglang_key(k) for k in candidates)
    except Exception:  # a faulty predicate must not break reading
        return False


# sglang has about 650 options; a YAML file with more top-level keys than this is classified from
# its first ones (each unknown key costs the schema an argparse-style prefix scan: a hostile file
# with 300,000 keys took 30 s to classify).
MAX_CLASSIFY_KEYS = 4096


def looks_like_config(keys: list[str], is_sglang_key: SglangKey | None) -> bool:
    """Whether root keys are those of an sglang ``--config``: most of them are sglang flags."""
    keys = keys[:MAX_CLASSIFY_KEYS]
    if not keys or any(k in _FOREIGN_ROOT_KEYS and not _sglang_key(k, is_sglang_key) for k in keys):
        return False
    seen: dict[str, bool] = {}
    known = unknown = 0
    for k in keys:
        hit = seen.get(k)
        if hit is None:
            hit = seen[k] = _sglang_key(k, is_sglang_key)
        if hit:
            known += 1
        else:
            unknown += 1
            if is_sglang_key is not None and unknown * 2 >= len(keys):
                return False  # a majority can no longer be known keys
    if known == 0:
        return False
    if is_sglang_key is not None:
        return known * 2 > len(keys)
    # Without the schema: one well-known flag, and most keys shaped like flag names.
    flaglike = sum(1 for k in keys if _FLAG_KEY_RE.fullmatch(k))
    return flaglike * 2 > len(keys)


def _root_keys(node: Node) -> list[str]:
    if not isinstance(node, MappingNode):
        return []
    return [k.value for k, _ in node.value if isinstance(k, ScalarNode)]


def classify_yaml(path: Path, text: str, loaded: _yaml.Loaded, is_sglang_key: SglangKey | None = None) -> Surface | None:
    docs = loaded.docs
    if not docs:
        if loaded.problems:
            return _guess_broken_yaml(text, is_sglang_key)
        return None
    keysets = [_root_keys(d) for d in docs]
    if any("apiVersion" in ks and "kind" in ks for ks in keysets):
        return Surface.KUBERNETES
    if is_ci_path(path):
        return Surface.CI_YAML
    first = docs[0]
    if isinstance(first, MappingNode):
        for k, v in first.value:
            if isinstance(k, ScalarNode) and k.value == "services" and isinstance(v, MappingNode):
                return Surface.COMPOSE
        if looks_like_config(keysets[0], is_sglang_key):
            return Surface.CONFIG_YAML
    if _LAUNCH_RE.search(text):
        return Surface.CI_YAML
    return None


def config_like_text(text: str, is_sglang_key: SglangKey | None = None) -> bool:
    """Whether the top-level keys found by a line scan look like an sglang ``--config``."""
    return looks_like_config(_TOP_KEY_RE.findall(text), is_sglang_key)


def _guess_broken_yaml(text: str, is_sglang_key: SglangKey | None) -> Surface | None:
    """A YAML file that does not parse: what it was probably meant to be, from its text."""
    keys = _TOP_KEY_RE.findall(text)
    if "apiVersion" in keys and "kind" in keys:
        return Surface.KUBERNETES
    if "services" in keys:
        return Surface.COMPOSE
    if looks_like_config(keys, is_sglang_key):
        return Surface.CONFIG_YAML
    if _LAUNCH_RE.search(text):
        return Surface.CI_YAML
    return None


def detect_surface(path: Path, text: str, is_sglang_key: SglangKey | None = None) -> Surface | None:
    """The surface of ``path`` (None: not a launch surface kimi-lsp reads)."""
    try:
        guess = guess_by_name(path, text)
        if guess != "yaml":
            return guess  # type: ignore[return-value]
        return classify_yaml(path, text, _yaml.load(text), is_sglang_key)
    except Exception:  # detection must never take the engine down
        return None
