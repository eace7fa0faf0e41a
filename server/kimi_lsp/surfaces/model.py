"""What every launch-surface reader produces: located launch commands and config entries.

A reader never knows sglang's flags. It turns a file into ``LaunchCommand``s whose ``argv`` is the
list of words after the entry point, exactly as the shell (or YAML/JSON) hands them to sglang,
each with the span of its raw text in the file. Interpreting the words (argparse semantics,
``--config`` merging) happens later, with the schema of the pinned sglang release.
"""
from __future__ import annotations

from pathlib import Path

from kimi_lsp._record import StrEnum, dataclass, field, str_enum
# Token, EnvVar and SyntaxProblem are the lexers' records, re-exported here.
from kimi_lsp.syntax import EnvVar, SyntaxProblem, Token
from kimi_lsp.text import Located, Span

__all__ = [
    "ConfigEntry", "ConfigFile", "Entry", "EnvVar", "LaunchCommand", "Surface", "SurfaceResult",
    "SyntaxProblem", "Token", "Unknown",
]


@str_enum
class Entry(StrEnum):
    LAUNCH_SERVER = "launch_server"  # python[3] -m sglang.launch_server ...
    SERVE = "serve"  # sglang serve [MODEL] ...
    NO_CONFIG = "no-config"  # entry points that register --config but ignore it (benchmarks)
    CONFIG_FILE = "config-file"  # a standalone sglang --config YAML / TOML profile
    # sglang.Engine(...) / ServerArgs(...) in Python: keyword arguments are ServerArgs fields (no
    # argparse: exact field names, no prefixes, no aliases); ``config`` holds them (format "python")
    ENGINE = "engine"


@str_enum
class Surface(StrEnum):
    CONFIG_YAML = "config-yaml"  # sglang --config YAML
    TOML = "toml"  # kimi-lsp TOML launch profile ([sglang] table)
    SHELL = "shell"
    DOCKERFILE = "dockerfile"
    KUBERNETES = "kubernetes"
    COMPOSE = "compose"
    CI_YAML = "ci-yaml"  # a YAML block scalar running a launch (GitHub Actions, SkyPilot, ...)
    MARKDOWN = "markdown"  # a code block in documentation (Markdown, MDX, reStructuredText)
    NOTEBOOK = "notebook"  # a Jupyter notebook's code cells (Python and shell escapes)
    PYTHON = "python"  # a Python file: launch strings, subprocess argv lists, sglang.Engine(...)
    SYSTEMD = "systemd"  # a systemd unit's ExecStart= (a *.service file, or an ini block in docs)
    VSCODE = "vscode"  # a VS Code launch.json debug configuration (module + args)
    TEXT = "text"  # a .txt file of commands
    MAKEFILE = "makefile"  # a Makefile's recipe lines (shell run by make)
    SRT_SLURM = "srt-slurm"  # an srt-slurm recipe: backend.sglang_config.{prefill,decode,aggregated} maps


@dataclass(frozen=True, slots=True)
class Unknown:
    """A value known only when the program runs (a Python name, a call, an f-string)."""

    text: str  # the expression as written, for messages


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One top-level key of an sglang ``--config`` YAML (or a TOML profile's ``[sglang]`` table)."""

    key: Located[str]  # exactly as written (dashes/underscores kept)
    value: object  # what yaml.safe_load / tomllib gives (YAML 1.1 booleans apply); Python: the literal, or Unknown
    value_span: Span  # the value node's text (quotes included); for a null value, the key's end
    item_spans: tuple[Span, ...] = ()  # list values: one span per item


@dataclass(frozen=True, slots=True)
class ConfigFile:
    path: Path
    format: str  # "yaml" | "toml" | "python" (an Engine/ServerArgs call's keyword arguments)
    entries: tuple[ConfigEntry, ...]
    # Duplicate keys: (later key, earlier key). PyYAML keeps the last one silently.
    duplicates: tuple[tuple[Located[str], Located[str]], ...] = ()
    env: tuple[EnvVar, ...] = ()  # TOML [sglang.env]


@dataclass(frozen=True, slots=True)
class LaunchCommand:
    path: Path  # the file the launch is written in (absolute)
    surface: Surface
    entry: Entry
    program: Located[str]  # e.g. "python3 -m sglang.launch_server" / "sglang serve" and its span
    argv: tuple[Token, ...]  # words after the entry point
    span: Span  # the whole command (for diagnostics with no better place)
    base_dir: Path  # directory relative paths in the launch are resolved against
    env: tuple[EnvVar, ...] = ()  # VAR=x prefixes, export, ENV, k8s env, [sglang.env]
    config: ConfigFile | None = None  # Entry.CONFIG_FILE: the file's own entries
    # The file's own dependency pins govern this launch (Dockerfile / shell ``pip install``).
    own_pins: bool = False
    # The container image that runs this launch, exactly as written (``FROM`` of the Dockerfile
    # stage, ``docker run ... IMAGE``, the Kubernetes/compose ``image:`` of the same container;
    # Go/Helm template text kept as written). Evidence of the sglang release: the engine, not the
    # reader, decides what release (if any) the reference names.
    image: Located[str] | None = None
    # None: the reader is sure this is an sglang launch. Otherwise the doubt, in words ("no launch
    # names this file with --config and ..."): the engine then caps every diagnostic of the launch
    # at warning, names the doubt, and offers no fix as safe (DESIGN.md: a guess is never an error).
    doubt: str | None = None


@dataclass(frozen=True, slots=True)
class SurfaceResult:
    launches: tuple[LaunchCommand, ...] = ()
    problems: tuple[SyntaxProblem, ...] = ()
    # Whether the file is (or looks like) a launch file at all; unrelated files produce nothing.
    is_launch_file: bool = False
    notes: tuple[str, ...] = field(default=())
    # Other files the reader read from disk to find the launches (the Dockerfile a compose
    # `build:` or a `docker build -t` names): a change to one changes this file's launches.
    reads: tuple[Path, ...] = field(default=())


def mentions_sglang(text: str) -> bool:
    return "sglang" in text.lower()
