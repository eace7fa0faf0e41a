"""Which Dockerfile of this repository builds an image named in another file (issue 31).

A Kubernetes container given only ``args:`` runs them through its image's ENTRYPOINT. When the
repository itself builds that image, the link is written plainly somewhere in it: a
``docker build -t NAME[:tag] [-f FILE] [--target STAGE] DIR`` line (a script, Makefile, README,
CI file) or a compose service with both ``build:`` and ``image: NAME``. This module finds that
link by reading the repository's text, never running anything.

The walk is bounded like the release evidence's (``evidence.RepoIndex``): at most
``_MAX_ENTRIES`` directory entries, ``_MAX_FILES`` files of a text kind, ``_MAX_BYTES`` each;
only a file whose bytes hold the image's name is decoded and parsed. Every directory and file
looked at is recorded as touched (the --check result cache keys on them); the file the link
was found in and the Dockerfile read go to ``reads`` (the server re-lints on their change).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kimi_lsp.surfaces.model import EnvVar, Surface
from kimi_lsp.syntax.shell import FlatSource, lex
from kimi_lsp.syntax.ynodes import MappingNode, ScalarNode

_MAX_ENTRIES = 50_000
_MAX_FILES = 6_000
_MAX_BYTES = 1 << 20
_MAX_DOCKERFILE = 1 << 20
_COMPOSE_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class BuiltImage:
    """Where an image name is built: its Dockerfile (and stage) and the file that says so."""

    dockerfile: Path
    target: str | None
    source: Path  # the script/README/compose file holding the build
    how: str  # "`docker build`" or "compose `build:`"


def image_ref(name: str) -> str:
    """``name`` as docker resolves it: an untagged, undigested name means ``:latest``."""
    last = name.rsplit("/", 1)[-1]
    return name if ":" in last or "@" in name else name + ":latest"


def _repository(ref: str) -> str:
    """The name without its tag or digest (what a file that builds it must spell)."""
    name = ref.split("@", 1)[0]
    head, _, last = name.rpartition("/")
    last = last.split(":", 1)[0]
    return f"{head}/{last}" if head else last


def find_built(image: str, start: Path, reads: list[Path]) -> BuiltImage | None:
    """The one build of ``image`` (as written in a manifest) this repository spells out; None
    when there is none, when two differ (which one made the pulled image is not known), when
    the name holds a variable, or when the bounded walk stopped before the end."""
    from kimi_lsp.workspace import find_repo_root

    if not image or "$" in image or "{" in image:
        return None
    ref = image_ref(image)
    needle = _repository(ref).encode()
    root = find_repo_root(start, fallback=start.parent)
    found: dict[tuple[Path, str | None], BuiltImage] = {}
    complete = _walk(root, needle, ref, found)
    if not complete or len(found) != 1:
        return None
    (built,) = found.values()
    reads.append(built.source)
    return built


def _walk(root: Path, needle: bytes, ref: str, found: dict[tuple[Path, str | None], BuiltImage]) -> bool:
    """Read every text file under ``root`` that names ``needle``; False when a bound stopped it."""
    from kimi_lsp.walk import TextWalk  # (the same text kinds the release evidence reads)
    from kimi_lsp.workspace import read_regular

    files = TextWalk(root, _MAX_ENTRIES, _MAX_FILES)
    for path in files:
        try:
            data = read_regular(path, _MAX_BYTES)
        except (OSError, ValueError):
            continue
        if needle not in data:
            continue
        try:
            text = data.decode("utf-8").replace("\r\n", "\n")
        except UnicodeDecodeError:
            continue
        for b in _builds_in(path, text, ref):
            found.setdefault((b.dockerfile, b.target), b)
    return files.complete


def _builds_in(path: Path, text: str, ref: str) -> list[BuiltImage]:
    out = _docker_builds(path, text, ref)
    if path.name.lower().endswith(_COMPOSE_SUFFIXES) and "build" in text:
        out.extend(_compose_builds(path, text, ref))
    return out


def _docker_builds(path: Path, text: str, ref: str) -> list[BuiltImage]:
    """``docker [buildx|image] build ... -t NAME ... DIR`` on a line (continued with ``\\``) of
    any text: a script, a Makefile recipe, a README's code block (a ``$ `` prompt dropped)."""
    from kimi_lsp.surfaces.shell import LaunchContext, _image_ref, _note_build, basename

    out: list[BuiltImage] = []
    for line in text.replace("\\\n", " ").split("\n"):
        if "docker" not in line or "build" not in line:
            continue
        line = line.strip().lstrip("@").strip()  # a Makefile recipe's @
        if line.startswith("$ "):  # a shell prompt in a README (a `#` line is a comment: not run)
            line = line[2:]
        commands, _problems = lex(FlatSource(line))
        for command in commands:
            words = list(command.words)
            i = 1 if words and words[0].value == "sudo" else 0
            if len(words) < i + 3 or basename(words[i].value) != "docker":
                continue
            j = i + 1
            if words[j].value in ("buildx", "image") and j + 1 < len(words):
                j += 1
            if words[j].value != "build":
                continue
            ctx = LaunchContext(path, Surface.SHELL, path.parent)
            _note_build(words, j + 1, ctx)
            build = ctx.built.get(_image_ref(ref))
            if build is not None:
                out.append(BuiltImage(build.dockerfile, build.target, path, "`docker build`"))
    return out


def _compose_builds(path: Path, text: str, ref: str) -> list[BuiltImage]:
    """A compose service with ``image: NAME`` and ``build:`` (a context, or a mapping of
    ``context``/``dockerfile``/``target``): compose tags what it builds with that name."""
    from kimi_lsp.syntax import yaml as syntax_yaml

    out: list[BuiltImage] = []
    loaded = syntax_yaml.load(text)
    for doc in loaded.docs:
        services = _field(doc, "services")
        if not isinstance(services, MappingNode):
            continue
        for _name, svc in services.value:
            image, build = _field(svc, "image"), _field(svc, "build")
            if not isinstance(image, ScalarNode) or image_ref(str(image.value).strip()) != ref:
                continue
            if isinstance(build, ScalarNode):
                context, name, target = str(build.value).strip(), "Dockerfile", None
            elif isinstance(build, MappingNode):
                if _field(build, "dockerfile_inline") is not None:
                    continue
                context = _scalar(_field(build, "context")) or "."
                name = _scalar(_field(build, "dockerfile")) or "Dockerfile"
                target = _scalar(_field(build, "target"))
            else:
                continue
            if "$" in context + name or "://" in context or context.startswith("git@"):
                continue
            dockerfile = Path(os.path.normpath(path.parent / context / name))
            out.append(BuiltImage(dockerfile, target, path, "compose `build:`"))
    return out


def _field(node: object, key: str) -> object:
    if not isinstance(node, MappingNode):
        return None
    for k, v in node.value:
        if isinstance(k, ScalarNode) and k.value == key:
            return v
    return None


def _scalar(node: object) -> str | None:
    if isinstance(node, ScalarNode) and str(node.value).strip():
        return str(node.value).strip()
    return None


def read_entrypoint(built: BuiltImage, reads: list[Path]) -> tuple[list[str], list[EnvVar]] | None:
    """The exec-form ENTRYPOINT (and ENV) of the stage ``built`` names; None when the Dockerfile
    is missing, too large, unreadable or has none. The Dockerfile goes to ``reads``."""
    from kimi_lsp.surfaces.dockerfile import image_entrypoint
    from kimi_lsp.workspace import touched

    reads.append(built.dockerfile)
    touched(built.dockerfile)
    try:
        if not built.dockerfile.is_file() or built.dockerfile.stat().st_size > _MAX_DOCKERFILE:
            return None
        text = built.dockerfile.read_text("utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return image_entrypoint(text, built.target)
