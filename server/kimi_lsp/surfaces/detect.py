"""Which launch surface a file is, from its path and content.

Names decide first (Dockerfile*, ``*.sh``/``*.sbatch``..., ``*.toml``, ``*.yaml``/``*.yml``), a
shell shebang makes an extension-less file a script. A YAML file is then classified by its
composed documents: Kubernetes (``apiVersion`` + ``kind``), CI (by path), compose (a ``services``
mapping), an sglang ``--config`` (root keys that are exact sglang option names, a model among them;
see ``config_verdict``), or any other YAML that runs a launch somewhere (CI_YAML). A YAML file a
launch names with ``--config`` is read as one whatever its keys (the engine forces it).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path, PurePath

from kimi_lsp import _regex
from kimi_lsp.syntax.ynodes import MappingNode, Node, ScalarNode

from kimi_lsp._record import dataclass
from kimi_lsp.syntax import yaml as _yaml
from kimi_lsp.surfaces.model import Surface
from kimi_lsp.walk import (  # the one list of file kinds
    DOC_SUFFIXES,
    MAKE_NAMES,
    MAKE_SUFFIXES,
    NOTEBOOK_SUFFIXES,
    PYTHON_SUFFIXES,
    SERVICE_SUFFIXES,
    TEXT_SUFFIXES,
    VSCODE_LAUNCH,
)

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Literal

SHELL_SUFFIXES = frozenset({".sh", ".bash", ".zsh", ".ksh", ".sbatch", ".slurm", ".pbs"})
YAML_SUFFIXES = frozenset({".yaml", ".yml"})
_SHEBANG_RE = _regex.compile(r"#![ \t]*(\S+)(?:[ \t]+(?:-\S+[ \t]+)*(\S+))?")
_SHELL_NAMES = frozenset({"sh", "bash", "zsh", "ksh", "dash", "ash", "mksh"})
_LAUNCH_RE = _regex.compile(
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
_FLAG_KEY_RE = _regex.compile(r"-{0,2}[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")
_TOP_KEY_RE = _regex.compile(r"^[\"']?([A-Za-z0-9_-]+)[\"']?[ \t]*:", re.MULTILINE)

SglangKey = Callable[[str], bool]
# How near a key is to an option: "prefix", "typo" or "" (far); see detect._near_key.
NearKey = Callable[[str], "str | bool"]


# Suffixes that name a language or format of their own: `dockerfile.py`, `Dockerfile.md` and
# `Dockerfile.dockerignore` (BuildKit's per-Dockerfile ignore file) are not Dockerfiles, while
# `Dockerfile.prod`, `Dockerfile.cuda12`, `Dockerfile.cmd` and `Containerfile.rocm` (a variant, not
# a language) are: only suffixes no one names a variant by are listed.
# Read as a Dockerfile, a Python module got one KL001 "unknown Dockerfile instruction" per line.
_FOREIGN_SUFFIXES = frozenset(
    {
        ".py", ".pyw", ".pyi", ".pyc", ".ipynb", ".md", ".mdx", ".markdown", ".rst", ".txt",
        ".adoc", ".json", ".jsonc", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".xml", ".html",
        ".htm", ".css", ".csv", ".lock", ".log", ".diff", ".patch", ".sh", ".bash", ".zsh", ".ksh",
        ".fish", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".kt", ".rb",
        ".php", ".lua", ".nix", ".sql", ".svg", ".png", ".jpg", ".jpeg", ".gif", ".pdf", ".zip",
        ".gz", ".tgz", ".tar", ".dockerignore", ".containerignore",
    }
)


def is_dockerfile_name(name: str) -> bool:
    low = name.lower()
    if low in ("dockerfile", "containerfile") or low.endswith((".dockerfile", ".containerfile")):
        return True
    if not low.startswith(("dockerfile.", "containerfile.")):
        return False
    return PurePath(low).suffix not in _FOREIGN_SUFFIXES  # a known language suffix wins


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


def guess_by_name(path: Path, text: str) -> Surface | Literal["yaml"] | None:
    """A surface decided by the name alone, ``"yaml"`` for YAML to classify, or None."""
    if is_dockerfile_name(path.name):
        return Surface.DOCKERFILE
    suffix = path.suffix.lower()
    if suffix in SHELL_SUFFIXES:
        return Surface.SHELL
    if suffix == ".toml":
        from kimi_lsp.surfaces.toml_profile import has_sglang_table  # with the first TOML file

        return Surface.TOML if has_sglang_table(text) else None
    if suffix in YAML_SUFFIXES:
        return "yaml"
    if not suffix and has_shell_shebang(text):
        return Surface.SHELL
    if suffix in DOC_SUFFIXES:
        return Surface.MARKDOWN
    if suffix in NOTEBOOK_SUFFIXES:
        return Surface.NOTEBOOK
    if suffix in PYTHON_SUFFIXES:
        return Surface.PYTHON
    if suffix in SERVICE_SUFFIXES:
        return Surface.SYSTEMD
    if suffix in TEXT_SUFFIXES:
        return Surface.TEXT
    if path.name == VSCODE_LAUNCH and path.parent.name == ".vscode":
        return Surface.VSCODE
    if path.name in MAKE_NAMES or suffix in MAKE_SUFFIXES:
        return Surface.MAKEFILE
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
# Unknown keys a probable config may have (each is checked for being near an option).
MAX_GUESSED_KEYS = 16


# sglang's model option (``--model`` is its alias): an sglang config without one is a fragment
# that only a launch naming it can make sense of.
_MODEL_KEYS = frozenset({"model-path", "model"})
# The shape of an option name: anything else (``Image``, ``my.key``) is some other format's key.
_NEAR_FLAG_RE = _regex.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")


@dataclass(frozen=True, slots=True)
class ConfigVerdict:
    """Whether root keys make a file an sglang ``--config`` on their own, and the doubt if only
    probably (``doubt`` is None when the keys prove it)."""

    is_config: bool
    doubt: str | None = None


NOT_CONFIG = ConfigVerdict(False)


def _norm(key: str) -> str:
    return key.lstrip("-").replace("_", "-")


def _near_key(key: str, near_sglang_key: NearKey | None) -> str:
    """How ``key`` is near an option: ``"prefix"`` (argparse accepts it, or finds it ambiguous),
    ``"typo"`` (close to one), ``""`` (far from every option)."""
    if near_sglang_key is not None:
        try:
            near = near_sglang_key(key)
        except Exception:  # a faulty predicate must not break reading
            return ""
        return near if isinstance(near, str) else ("typo" if near else "")
    import difflib  # only for files that name a model path and have an unknown key

    name = _norm(key)
    if any(f.startswith(name) for f in _COMMON_FLAGS):
        return "prefix"
    return "typo" if difflib.get_close_matches(name, _COMMON_FLAGS, n=1, cutoff=0.8) else ""


def config_verdict(
    keys: list[str], is_sglang_key: SglangKey | None, near_sglang_key: NearKey | None = None
) -> ConfigVerdict:
    """Root keys of a YAML file no launch names with ``--config``: a config when every key is an
    exact sglang option name (prefixes prove nothing: ``host``/``image``/``config`` are Helm
    keys too) and one of them is the model; probably one when the model path is there and every
    other key is near an option (a prefix argparse may accept, or a typo: ``near_sglang_key``);
    otherwise not a launch file at all."""
    keys = keys[:MAX_CLASSIFY_KEYS]
    if not keys:
        return NOT_CONFIG
    seen: dict[str, bool] = {}
    unknown: list[str] = []
    model = model_path = False
    known = 0
    for k in keys:
        hit = seen.get(k)
        if hit is None:
            hit = seen[k] = _sglang_key(k, is_sglang_key)
        if not hit:
            if k in _FOREIGN_ROOT_KEYS or not _NEAR_FLAG_RE.fullmatch(k.lstrip("-")):
                return NOT_CONFIG
            unknown.append(k)
            if len(unknown) > MAX_GUESSED_KEYS:
                return NOT_CONFIG  # a config is not mostly typos (and each guess costs a fuzzy match)
            continue
        known += 1
        name = _norm(k)
        model = model or name in _MODEL_KEYS
        model_path = model_path or name == "model-path"
    if not model:
        return NOT_CONFIG
    if not unknown:
        return ConfigVerdict(True)
    if not model_path:
        return NOT_CONFIG  # `model:` alone is too common a key to carry a guess
    nearness = [_near_key(k, near_sglang_key) for k in dict.fromkeys(unknown)]
    if not all(nearness):
        return NOT_CONFIG  # a key far from every option: some other format that names a model
    if nearness.count("typo") > known + nearness.count("prefix"):
        return NOT_CONFIG  # more guesses than options: another tool's config that names a model
    shown = ", ".join(f"`{k}`" for k in dict.fromkeys(unknown))
    return ConfigVerdict(
        True,
        f"kimi-lsp only guesses this file is an sglang --config: no launch names it, and {shown} "
        f"{'is no sglang option' if len(unknown) == 1 else 'are no sglang options'}",
    )


def looks_like_config(
    keys: list[str], is_sglang_key: SglangKey | None, near_sglang_key: NearKey | None = None
) -> bool:
    """Whether root keys make the file an sglang ``--config`` (surely or probably)."""
    return config_verdict(keys, is_sglang_key, near_sglang_key).is_config


def _root_keys(node: Node) -> list[str]:
    if not isinstance(node, MappingNode):
        return []
    # `model:` holding a mapping is another tool's model section (a Stable Diffusion or Lightning
    # config: `model: {target: ..., params: ...}`), never sglang's model path: it proves nothing
    return [k.value for k, v in node.value
            if k.id == "scalar" and not (v.id == "mapping" and _norm(k.value) in _MODEL_KEYS)]


def classify_yaml(
    path: Path,
    text: str,
    loaded: _yaml.Loaded,
    is_sglang_key: SglangKey | None = None,
    near_sglang_key: NearKey | None = None,
) -> Surface | None:
    docs = loaded.docs
    if not docs:
        if loaded.problems:
            # a limit we enforce (alias bomb, nesting) is no broken line: every key counts
            error_at = loaded.problems[0].span.start if loaded.syntax_error else -1
            return _guess_broken_yaml(text, is_sglang_key, error_at)
        return None
    keysets = [_root_keys(d) for d in docs]
    if any("apiVersion" in ks and "kind" in ks for ks in keysets):
        return Surface.KUBERNETES
    if any("backend" in ks or "base" in ks for ks in keysets):
        from kimi_lsp.surfaces.srt_slurm import is_recipe  # with the first file that may be one

        if is_recipe(docs):
            return Surface.SRT_SLURM
    if is_ci_path(path):
        return Surface.CI_YAML
    first = docs[0]
    if isinstance(first, MappingNode):
        for k, v in first.value:
            if isinstance(k, ScalarNode) and k.value == "services" and isinstance(v, MappingNode):
                return Surface.COMPOSE
        if looks_like_config(keysets[0], is_sglang_key, near_sglang_key):
            return Surface.CONFIG_YAML
    if _LAUNCH_RE.search(text):
        return Surface.CI_YAML
    return None


def config_like_text(text: str, is_sglang_key: SglangKey | None = None) -> bool:
    """Whether a line scan finds a top-level model key: a cheap gate before parsing a YAML file
    that does not mention sglang (every sglang config names its model)."""
    return any(_norm(k) in _MODEL_KEYS and _sglang_key(k, is_sglang_key) for k in _TOP_KEY_RE.findall(text))


def root_keys(loaded: _yaml.Loaded) -> list[str]:
    """The first document's root keys (what sglang's ``safe_load`` would read)."""
    return _root_keys(loaded.docs[0]) if loaded.docs else []


def _guess_broken_yaml(text: str, is_sglang_key: SglangKey | None, error_at: int = -1) -> Surface | None:
    """A YAML file that does not parse: what it was probably meant to be, from its text."""
    keys = _TOP_KEY_RE.findall(text)
    if "apiVersion" in keys and "kind" in keys:
        return Surface.KUBERNETES
    if "services" in keys:
        return Surface.COMPOSE
    # A config is proven by the keys written before the line the parser stopped on (that line
    # is the broken one: what looks like a key there may be anything).
    if error_at >= 0:
        line_start = text.rfind("\n", 0, error_at) + 1
        keys = [m.group(1) for m in _TOP_KEY_RE.finditer(text, 0, line_start)]
    verdict = config_verdict(keys, is_sglang_key)
    if verdict.is_config and verdict.doubt is None:  # a broken guess would be an error: say less
        return Surface.CONFIG_YAML
    if _LAUNCH_RE.search(text):
        return Surface.CI_YAML
    return None


def unreadable_severity(
    path: Path,
    lossy: str | None,
    proven: bool,
    is_sglang_key: SglangKey | None = None,
    near_sglang_key: NearKey | None = None,
) -> Literal["error", "warning"] | None:
    """How a launch candidate that cannot be decoded is reported (KL001), or None for not at all.

    ``lossy``: its bytes decoded with replacement characters (None when no byte could be read:
    permission denied, a device, too large); ``proven``: a launch names it with ``--config``.
    Pre-commit passes every changed ``*.sh``/``*.toml``/``*.yml`` to the hook, and a latin-1
    build script that never names sglang must not fail the commit: outside the domain, silence.
    What the readable part proves a launch (a YAML made of exact option names, a model among
    them) is an error, as is a file nothing could be read of (fail closed); a file that only
    probably is a config, or only names sglang, may be a launch, unproven: a warning."""
    if proven or lossy is None:
        return "error"
    if path.suffix.lower() in YAML_SUFFIXES:
        verdict = config_verdict(_TOP_KEY_RE.findall(lossy), is_sglang_key, near_sglang_key)
        if verdict.is_config:
            return "error" if verdict.doubt is None else "warning"
    return "warning" if "sglang" in lossy.lower() else None


def detect_surface(path: Path, text: str, is_sglang_key: SglangKey | None = None) -> Surface | None:
    """The surface of ``path`` (None: not a launch surface kimi-lsp reads)."""
    try:
        guess = guess_by_name(path, text)
        if guess != "yaml":
            return guess
        return classify_yaml(path, text, _yaml.load(text), is_sglang_key)
    except Exception:  # detection must never take the engine down
        return None
