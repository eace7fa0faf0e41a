"""Launch surfaces: every place a launch is written down, read into located ``LaunchCommand``s.

``read_surface`` is the one entry point the engine uses. It detects the surface (or takes the
one the engine forces, e.g. CONFIG_YAML for a file named by ``--config``), parses the file and
returns launches and syntax problems. It never raises: broken input becomes a ``SyntaxProblem``
at the error's position, and a reader bug becomes a note on an otherwise empty result.
"""
from __future__ import annotations

import os
from collections.abc import Callable

from pathlib import Path

from kimi_lsp import _regex
from kimi_lsp.surfaces.detect import (
    classify_yaml,
    config_like_text,
    config_verdict,
    detect_surface,
    guess_by_name,
    root_keys,
)
from kimi_lsp.surfaces.model import (
    ConfigEntry,
    ConfigFile,
    Entry,
    EnvVar,
    LaunchCommand,
    Surface,
    SurfaceResult,
    SyntaxProblem,
    Token,
    mentions_sglang,
)
from kimi_lsp.surfaces.yaml_config import as_problem, read_config_yaml
from kimi_lsp.syntax import yaml as syntax_yaml
from kimi_lsp.workspace import SourceText

__all__ = [
    "ConfigEntry",
    "ConfigFile",
    "Entry",
    "EnvVar",
    "LaunchCommand",
    "Surface",
    "SurfaceResult",
    "SyntaxProblem",
    "Token",
    "detect_surface",
    "read_surface",
]

# The readers of the other surfaces (shell, Dockerfile, TOML profile, Markdown, YAML that embeds
# launches) are imported with the first file that needs them: a pre-commit run over one --config
# YAML loads none of them (eight modules and the shell lexer's regexes).
_YAML_SURFACES = frozenset({Surface.CONFIG_YAML, Surface.KUBERNETES, Surface.COMPOSE, Surface.CI_YAML})


def read_surface(
    source: SourceText,
    *,
    is_sglang_key: Callable[[str], bool] | None = None,
    force: Surface | None = None,
    near_sglang_key: Callable[[str], "str | bool"] | None = None,
) -> SurfaceResult:
    """Launches and syntax problems of one file; never raises.

    ``is_sglang_key``: whether a YAML key is exactly an sglang option name (dashes or
    underscores); ``near_sglang_key``: whether an unknown key is near one (a prefix argparse
    accepts, a typo). Without them a small built-in list of common flags stands in."""
    try:
        return read_surface_strict(source, is_sglang_key=is_sglang_key, force=force, near_sglang_key=near_sglang_key)
    except Exception as exc:  # a reader bug must not take the engine (or the editor) down
        return SurfaceResult(
            is_launch_file=force is not None,
            notes=(f"internal error reading {source.path.name}: {type(exc).__name__}: {exc}",),
        )


def read_surface_strict(
    source: SourceText,
    *,
    is_sglang_key: Callable[[str], bool] | None = None,
    force: Surface | None = None,
    near_sglang_key: Callable[[str], "str | bool"] | None = None,
) -> SurfaceResult:
    """``read_surface`` without the safety net (tests use it to see reader bugs)."""
    path, text = source.path, source.text
    kind = force if force is not None else guess_by_name(path, text)
    if kind == Surface.DOCKERFILE:
        from kimi_lsp.surfaces.dockerfile import read_dockerfile

        return read_dockerfile(path, text)
    if kind == Surface.SHELL:
        from kimi_lsp.surfaces.shell import read_shell

        return read_shell(path, text)
    if kind == Surface.TOML:
        from kimi_lsp.surfaces.toml_profile import read_toml

        return read_toml(path, text, forced=force is not None)
    if kind == "yaml" or kind in _YAML_SURFACES:
        return _read_yaml(path, text, is_sglang_key, near_sglang_key, force)
    if kind == Surface.MARKDOWN:
        from kimi_lsp.surfaces.markdown import read_markdown

        return read_markdown(path, text, lambda p, view: _read_yaml(p, view, is_sglang_key, near_sglang_key, None))
    if kind in (Surface.SYSTEMD, Surface.TEXT, Surface.VSCODE, Surface.MAKEFILE):
        if not mentions_sglang(text):
            return SurfaceResult()
        from kimi_lsp.surfaces import other_files

        return other_files.read(kind, path, text)
    if kind == Surface.NOTEBOOK or kind == Surface.PYTHON:
        if not mentions_sglang(text):
            return SurfaceResult()  # most Python never names sglang: not even parsed
        # imported here: `kimi-lsp --check` on YAML and shell never loads ast or the JSON reader
        if kind == Surface.NOTEBOOK:
            from kimi_lsp.surfaces.notebook import read_notebook

            return read_notebook(path, text)
        from kimi_lsp.surfaces.python import read_python

        return read_python(path, text)
    return SurfaceResult()


def _helm_template_dir(path: Path) -> bool:
    """A file under a Helm chart's ``templates/`` (a ``Chart.yaml`` beside that directory)."""
    s = os.fspath(path)
    rooted = s if s.startswith("/") else "/" + s  # (a relative path's top directory counts too)
    i = rooted.rfind("/templates/")  # the nearest such directory: the last one in the path
    if i < 0:
        return False
    chart = rooted[:i] + "/Chart.yaml"
    return os.path.isfile(chart if s.startswith("/") else chart[1:])


# A compose service built here that gives its image arguments (`build:` and `command:` keys).
_BUILD_KEY = _regex.compile(r"(?m)^[ \t]+build[ \t]*:")
_COMMAND_KEY = _regex.compile(r"(?m)^[ \t]+command[ \t]*:")


def _builds(text: str) -> bool:
    return _BUILD_KEY.search(text) is not None and _COMMAND_KEY.search(text) is not None


def _read_yaml(
    path: Path,
    text: str,
    is_sglang_key: Callable[[str], bool] | None,
    near_sglang_key: Callable[[str], "str | bool"] | None,
    force: Surface | None,
) -> SurfaceResult:
    # Templated YAML (Helm/Go, Jinja) is read with its actions masked, offsets unchanged.
    actions = syntax_yaml.template_actions(text)
    masked = syntax_yaml.mask_templates(text, actions) if actions else None
    templated = masked is not None or _helm_template_dir(path)
    ytext = masked.text if masked is not None else text
    if force is None and not mentions_sglang(text) and not config_like_text(ytext, is_sglang_key) and not _builds(ytext):
        # Every launch names sglang; only a --config YAML, or a compose service whose built
        # image's ENTRYPOINT is the launch (yaml_embedded), may not. Skip parsing the rest.
        return SurfaceResult()
    loaded = syntax_yaml.load(ytext)
    if templated and loaded.problems:
        # What does not parse is the template's business: say nothing about YAML syntax.
        loaded = syntax_yaml.Loaded(docs=loaded.docs, problems=[], count=loaded.count)
    surface = force if force is not None else classify_yaml(path, ytext, loaded, is_sglang_key, near_sglang_key)
    if surface == Surface.CONFIG_YAML:
        doubt = None
        if force is None:
            doubt = config_verdict(root_keys(loaded), is_sglang_key, near_sglang_key).doubt
        return read_config_yaml(path, ytext, loaded, doubt=doubt)
    if surface == Surface.SRT_SLURM:
        from kimi_lsp.surfaces.srt_slurm import read_recipe

        return read_recipe(path, ytext, loaded)
    problems = tuple(as_problem(p) for p in loaded.problems)
    if surface is None:
        return SurfaceResult(problems=problems, is_launch_file=bool(problems) and mentions_sglang(text))
    if not loaded.docs and problems:
        return SurfaceResult(problems=problems, is_launch_file=force is not None or mentions_sglang(text))
    from kimi_lsp.surfaces.yaml_embedded import read_embedded

    return read_embedded(path, ytext, loaded, surface, masked=masked, written=text)
