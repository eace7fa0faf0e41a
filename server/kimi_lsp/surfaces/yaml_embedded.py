"""Launches written inside other YAML: Kubernetes, docker compose, CI and job files.

Three shapes are recognised anywhere in any document:

* a container-like mapping with ``command``/``args`` (Kubernetes containers and initContainers at
  any depth, so Pod, Deployment, Job, CronJob, LeaderWorkerSet leader/worker templates, Argo...)
  or ``entrypoint``/``command`` (compose services): list items become tokens with their node's
  span, a string is split like a shell line, and ``["/bin/sh", "-c", SCRIPT]`` is followed into
  the script;
* any string scalar that runs a launch, lexed as a shell script with positions mapped through
  the scalar's quoting and indentation (GitHub Actions ``run: |``, SkyPilot ``run:``, GitLab
  ``script:`` items, a ConfigMap holding a script);
* a launch is whole or it is nothing: a bare entry point with no words after it (a
  ``server_command:`` prefix, an operator resource's ``command`` whose ``args`` live in another
  subtree) is not read as a launch missing everything; ``command`` and ``args`` join only within
  one container (the Kubernetes rule);
* the container's (or compose service's) ``image:`` is the launch's release evidence, kept as
  written; in templated YAML, words from template actions are unknown values, a rendered block
  inside ``args`` is one unknown word, and a condition around visible words makes a doubt;
* environment from ``env`` (Kubernetes ``[{name, value}]`` lists and GitHub maps),
  ``environment`` (compose, list or map), ``envs`` (SkyPilot), ``variables`` (GitLab), applied
  to launches found below them.
"""
from __future__ import annotations

import bisect
import os
import re
from typing import TYPE_CHECKING, cast
from pathlib import Path

from kimi_lsp import _regex
from kimi_lsp.syntax.ynodes import MappingNode, Node, ScalarNode, SequenceNode

from kimi_lsp._record import replace
from kimi_lsp.surfaces.model import EnvVar, LaunchCommand, Surface, SurfaceResult, SyntaxProblem, Token
from kimi_lsp.surfaces.shell import (
    LaunchContext,
    MappedSource,
    Word,
    basename,
    entry_script_launches,
    launches_from_commands,
    launches_from_words,
    lex,
    mentions_sglang,
)
from kimi_lsp.syntax.shell import SHELLS
from kimi_lsp.syntax.yaml import STR_TAG, Loaded, Masked, YamlText
from kimi_lsp.text import Located, Span
from kimi_lsp.workspace import touched

if TYPE_CHECKING:
    from kimi_lsp.surfaces.built_images import BuiltImage

_ENV_KEYS = frozenset({"env", "environment", "envs", "variables"})
_CONTAINER_KEYS = ("entrypoint", "command", "args")
_CONTAINER_KEY_SET = frozenset(_CONTAINER_KEYS)
# Lexer problems in a scalar count only when the scalar looks like it runs sglang: a YAML
# description with an apostrophe is not a broken shell script.
_LAUNCH_HINT = _regex.compile(r"sglang(?:\.launch_server|\.bench|\.benchmark|\.compile_deep_gemm|\.cli)|sglang['\"]?\s+serve\b")
# What puts two words in one command: a blank between them, or a process substitution right
# after a word (``a<(b)``); without any, each command of a script is one word or none.
_SEPARATES_WORDS = _regex.compile(r"[ \t\n\r\f\v]|[<>]\(")
_VARIABLE_REF = _regex.compile(r"\$[({A-Za-z_]")
_SHELL_NAMES = _regex.compile(r"(?:^|[/\s])(?:ba|z|k|da)?sh\b")


_SGLANG = _regex.compile("sglang", re.IGNORECASE)
# What is left of masked text once blanks, list dashes and template-value placeholders (``$___``,
# unknown words already) are removed: the words a template condition may drop.
_WORDS_SEEN = _regex.compile(r"[\s,\[\]-]|\$_+")


def _offsets_of_sglang(text: str) -> list[int]:
    """Where "sglang" is written in ``text``, any case: ``_SGLANG``'s matches, found with
    ``str.find`` on the lowered text when it is ASCII (the regex also folds ``ſ`` to ``s``)."""
    if not text.isascii():
        return [m.start() for m in _SGLANG.finditer(text)]
    low = text.lower()
    out: list[int] = []
    i = low.find("sglang")
    while i >= 0:
        out.append(i)
        i = low.find("sglang", i + 6)
    return out


def _chars(y: YamlText, node: ScalarNode) -> MappedSource:
    c = y.scalar_source(node)
    return MappedSource(c.text, c.starts, c.ends, c.anchor)


class _Walker:
    def __init__(self, y: YamlText, ctx: LaunchContext, written: str, masked: Masked | None) -> None:
        self.y = y
        self.ctx = ctx
        self.written = written  # the file as written (templated text unmasked)
        self.blocks = masked.blocks if masked is not None else ()
        self.controls = masked.controls if masked is not None else ()
        self.launches: list[LaunchCommand] = []
        self.seen: set[int] = set()
        self.reads: list[Path] = []  # Dockerfiles read for a compose `build:` (SurfaceResult.reads)
        self.built: dict[str, BuiltImage | None] = {}  # an args-only container's image: its build here
        # Where "sglang" is written (any case): a collection whose text has none holds no launch
        # (mentions_sglang gates every one), so most of a large manifest is never walked.
        self.mentions = _offsets_of_sglang(y.text)

    def _may_launch(self, node: Node) -> bool:
        i = bisect.bisect_left(self.mentions, node.start_mark.index)
        return i < len(self.mentions) and self.mentions[i] < node.end_mark.index

    # -- traversal ------------------------------------------------------------------------------
    def walk(self, node: Node, env: tuple[EnvVar, ...]) -> None:
        if id(node) in self.seen:  # an alias: its launches were found where it is defined
            return
        self.seen.add(id(node))
        # by ``id``, not isinstance: the hottest loop here, and for PyYAML's nodes isinstance
        # with syntax.ynodes' classes is a Python-level check
        kind = node.id
        if kind != "scalar" and not self._may_launch(node):
            if kind == "mapping" and self.ctx.surface is Surface.COMPOSE:
                # a service built here whose image's ENTRYPOINT is the launch: its own text
                # (`build: .`, `command: --tp 2`) need not name sglang
                self._built_service(cast(MappingNode, node), env, 0)
            return
        if kind == "mapping":
            self._mapping(cast(MappingNode, node), env)
        elif kind == "sequence":
            for item in node.value:
                self.walk(item, env)
        elif node.tag == STR_TAG and mentions_sglang(node.value):
            self._script(cast(ScalarNode, node), env)

    def _mapping(self, node: MappingNode, env: tuple[EnvVar, ...]) -> None:
        # the pairs as composed (map_items' nodes, without the spans it would work out for
        # every key and value: only what a launch is read from needs a span)
        items = node.value
        by_key: dict[str, Node] = {}
        for key, value in items:
            if key.id == "scalar":
                by_key[key.value] = value
        local = env if _ENV_KEYS.isdisjoint(by_key) else env + tuple(self._env(by_key))
        consumed: set[int] = set()
        if not _CONTAINER_KEY_SET.isdisjoint(by_key):
            consumed = self._container(by_key, local)
        shell = by_key.get("shell")
        skip_run = (
            shell is not None and isinstance(shell, ScalarNode) and shell.value and not _SHELL_NAMES.search(shell.value)
        )  # GitHub `shell: python` runs the step as Python
        for key, value in items:
            name = key.value if key.id == "scalar" else None
            if id(value) in consumed or name in _ENV_KEYS or (skip_run and name == "run"):
                continue
            self.walk(value, local)

    # -- environment ----------------------------------------------------------------------------
    def _env(self, by_key: dict[str, Node]) -> list[EnvVar]:
        out: list[EnvVar] = []
        for key in ("env", "environment", "envs", "variables"):
            node = by_key.get(key)
            if node is None:
                continue
            if isinstance(node, SequenceNode):
                for item, span in self.y.seq_items(node):
                    if isinstance(item, MappingNode):  # Kubernetes {name, value | valueFrom}
                        found = self._k8s_env(item)
                        if found is not None:
                            out.append(found)
                    elif isinstance(item, ScalarNode):  # compose "NAME=value" / "NAME"
                        out.append(self._env_string(item))
            elif isinstance(node, MappingNode):
                for k, kspan, v, vspan in self.y.map_items(node):
                    if not isinstance(k, ScalarNode):
                        continue
                    if isinstance(v, MappingNode):  # GitLab {value: ..., description: ...}
                        inner = {ik.value: (iv, ivs) for ik, _, iv, ivs in self.y.map_items(v) if isinstance(ik, ScalarNode)}
                        hit = inner.get("value")
                        value = Located(hit[0].value, hit[1]) if hit and isinstance(hit[0], ScalarNode) else None
                    elif isinstance(v, ScalarNode) and v.tag != "tag:yaml.org,2002:null":
                        value = Located(v.value, vspan)
                    else:
                        value = None
                    out.append(EnvVar(Located(k.value, kspan), value))
        return out

    def _k8s_env(self, item: MappingNode) -> EnvVar | None:
        fields = {k.value: (v, vs) for k, ks, v, vs in self.y.map_items(item) if isinstance(k, ScalarNode)}
        name = fields.get("name")
        if name is None or not isinstance(name[0], ScalarNode):
            return None
        value = fields.get("value")
        located = Located(value[0].value, value[1]) if value and isinstance(value[0], ScalarNode) else None
        return EnvVar(Located(name[0].value, name[1]), located)

    def _env_string(self, node: ScalarNode) -> EnvVar:
        chars = _chars(self.y, node)
        name, eq, value = node.value.partition("=")
        if not eq:
            return EnvVar(Located(name, chars.span(0, len(name))), None)
        return EnvVar(
            Located(name, chars.span(0, len(name))),
            Located(value, chars.span(len(name) + 1, len(node.value))),
        )

    # -- containers -----------------------------------------------------------------------------
    def _word(self, node: ScalarNode, span: Span) -> Word:
        chars = _chars(self.y, node)
        inner = chars.span(0, len(node.value))
        # exact: the value sits verbatim inside the written span (an alias's value does not)
        exact = (
            chars.exact(0, len(node.value))
            and span.start <= inner.start
            and inner.end <= span.end
            # $(VAR) (Kubernetes), ${VAR} (compose) and ${{ }} (CI) are substituted before the
            # process sees the word
            and _VARIABLE_REF.search(node.value) is None
        )
        return Word(Token(node.value, span, exact), chars)

    def _container(self, by_key: dict[str, Node], env: tuple[EnvVar, ...]) -> set[int]:
        """Launches of a command/args (or entrypoint/command) mapping; the nodes it used."""
        words: list[Word] = []
        used: set[int] = set()
        entry_words = 0
        for key in _CONTAINER_KEYS:
            node = by_key.get(key)
            if node is None:
                continue
            if key == "command":
                entry_words = len(words)
            if isinstance(node, SequenceNode):
                for item, span in self.y.seq_items(node):
                    if isinstance(item, ScalarNode):
                        words.append(self._word(item, span))
                used.add(id(node))
            elif isinstance(node, ScalarNode) and node.tag == STR_TAG and node.value.strip():
                commands, problems = lex(_chars(self.y, node))
                if len(commands) != 1:
                    continue  # a whole script: the scalar walk reads it as one
                words.extend(commands[0].words)
                used.add(id(node))
                if _LAUNCH_HINT.search(node.value):
                    self.ctx.problems.extend(problems)
        if not words:
            return set()
        words.extend(self._hidden_words(by_key))
        found = launches_from_words(words, self.ctx, env)
        if not found and self.ctx.surface is Surface.COMPOSE and "entrypoint" not in by_key:
            found = self._built_launches(by_key, words, env)
        if not found:
            found = entry_script_launches(words, self.ctx, env)  # command: [/start.sh], args: [python3, ...]
        if not found and self.ctx.surface is Surface.KUBERNETES and "args" in by_key and "command" not in by_key:
            found = self._k8s_built_launches(by_key, words, env)
        if not found and self.ctx.surface is Surface.COMPOSE:
            found = self._split_script(by_key, words[:entry_words], env, used)
        if not found:
            return set()
        image = self._image(by_key)
        if image is not None:
            found = [replace(f, image=image) for f in found]
        doubt = self._template_doubt(by_key)
        if doubt is not None:
            found = [replace(f, doubt=doubt) for f in found]
        self.launches.extend(found)
        return used

    def _split_script(
        self, by_key: dict[str, Node], entry: list[Word], env: tuple[EnvVar, ...], used: set[int]
    ) -> list[LaunchCommand]:
        """``entrypoint: [sh, -c]`` with a string ``command: python3 -m sglang.launch_server ...``:
        compose splits a string command into words, so the shell's script is only the first word
        and the launch never runs as written. It is read (it is what the author meant) with a
        doubt that says so, and the command is not read again as a script."""
        node = by_key.get("command")
        if (
            len(entry) != 2
            or basename(entry[0].value) not in SHELLS
            or _C_OPTION.fullmatch(entry[1].value) is None
            or not isinstance(node, ScalarNode)
            or node.tag != STR_TAG
        ):
            return []
        commands, _problems = lex(_chars(self.y, node))
        if not commands or len(commands) + len(commands[0].words) < 3:
            return []  # one word (`command: "'python3 -m ...'"`): the shell gets it whole
        found = launches_from_commands(commands, self.ctx, env)
        if found:
            used.add(id(node))
        first = commands[0].words[0].value if commands[0].words else node.value.split()[0]
        doubt = _SPLIT_DOUBT.format(shell=" ".join(w.value for w in entry), first=first)
        return [replace(f, doubt=f.doubt or doubt) for f in found]

    def _built_service(self, node: MappingNode, env: tuple[EnvVar, ...], depth: int) -> None:
        """A compose service that does not name sglang itself: read only when it is built here
        (``build:``) and gives its image arguments (``command:``). Looked for down to the
        services (root -> ``services`` -> service), as the file's text need not name sglang."""
        keys = {k.value for k, _ in node.value if k.id == "scalar"}
        if "build" in keys and "command" in keys and "entrypoint" not in keys:
            self._mapping(node, env)
            return
        if depth < 2:
            for _key, value in node.value:
                if value.id == "mapping" and id(value) not in self.seen:  # (an alias: read once)
                    self.seen.add(id(value))
                    self._built_service(cast(MappingNode, value), env, depth + 1)

    def _built_launches(self, by_key: dict[str, Node], words: list[Word], env: tuple[EnvVar, ...]) -> list[LaunchCommand]:
        """A compose service whose image is built from a Dockerfile (``build:``) with an exec-form
        ``ENTRYPOINT`` that launches sglang: compose appends ``command:`` to that ENTRYPOINT
        (it replaces only ``CMD``), so the command's words are the launch's arguments. The
        ENTRYPOINT's own words are placed on the ``build:`` value (they are written in the
        Dockerfile: not exact, no fix edits them), as is the image's ``ENV``."""
        built = _build_entrypoint(self.y, by_key.get("build"), self.ctx.path, self.reads)
        if built is None:
            return []
        values, image_env, at = built
        lead = [_placed_word(v, at) for v in values]
        moved = tuple(EnvVar(Located(e.name.value, at), None if e.value is None else Located(e.value.value, at)) for e in image_env)
        found = launches_from_words(lead + words, self.ctx, moved + env)
        # a launch whose words are all the ENTRYPOINT's (the command named no argument) is the
        # Dockerfile's own, read there
        return [f for f in found if any(t.exact or t.span != at for t in f.argv)]

    def _k8s_built_launches(self, by_key: dict[str, Node], words: list[Word], env: tuple[EnvVar, ...]) -> list[LaunchCommand]:
        """A Kubernetes container with only ``args:``: they go to the image's ENTRYPOINT. When this
        repository builds that image (a ``docker build -t NAME`` line or a compose service with
        ``build:`` and ``image: NAME``) from a Dockerfile whose exec-form ENTRYPOINT launches
        sglang, the args are that launch's arguments. The link is a guess (the image pulled may
        be another build of that name), so the launch carries a doubt naming it."""
        from kimi_lsp.surfaces.built_images import find_built, read_entrypoint  # rare: imported when needed

        image = self._image(by_key)
        if image is None:
            return []
        if image.value not in self.built:  # one walk of the repository per image name and file
            self.built[image.value] = find_built(image.value, self.ctx.path, self.reads)
        built = self.built[image.value]
        if built is None:
            return []
        entry = read_entrypoint(built, self.reads)
        if entry is None:
            return []
        values, image_env = entry
        at = image.span
        lead = [_placed_word(v, at) for v in values]
        moved = tuple(EnvVar(Located(e.name.value, at), None if e.value is None else Located(e.value.value, at)) for e in image_env)
        found = launches_from_words(lead + words, self.ctx, moved + env)
        base = self.ctx.path.parent
        doubt = _K8S_BUILT_DOUBT.format(
            image=image.value, how=built.how, source=os.path.relpath(built.source, base),
            dockerfile=os.path.relpath(built.dockerfile, base),
        )
        return [replace(f, doubt=f.doubt or doubt) for f in found if any(t.exact or t.span != at for t in f.argv)]

    def _hidden_words(self, by_key: dict[str, Node]) -> list[Word]:
        """A template action that renders text inside ``command``/``args`` (``{{ toYaml
        .Values.extraArgs | nindent 12 }}``) adds words nobody can see: one unknown word stands
        for them, so rules treat the argv as partly unknown (as for ``"$@"`` in a script)."""
        out: list[Word] = []
        for key in _CONTAINER_KEYS:
            node = by_key.get(key)
            if node is None or not self.blocks:
                continue
            lo, hi = node.start_mark.index, node.end_mark.index
            for b in self.blocks:
                if lo <= b.start < hi:
                    value = "$" + "_" * (b.end - b.start - 1)
                    chars = MappedSource(value, [b.start] * len(value), [b.start] * len(value), b.start)
                    out.append(Word(Token(value, b, exact=False), chars))
        return out

    def _template_doubt(self, by_key: dict[str, Node]) -> str | None:
        """A template condition or loop inside ``command``/``args`` picks which words are passed;
        the masked text holds all branches at once, so the launch is only a guess."""
        masked = self.y.text
        for key in _CONTAINER_KEYS:
            node = by_key.get(key)
            if node is None:
                continue
            lo, hi = node.start_mark.index, node.end_mark.index
            inside = [c for c in self.controls if lo <= c.start < hi]
            # only a condition around words we read matters (`{{- with .Values.x }}` around a
            # `toYaml` block or a `{{ . }}` hides nothing: those are unknown words already)
            for c, nxt in zip(inside, inside[1:]):
                if _WORDS_SEEN.sub("", masked[c.end : nxt.start]):
                    written = " ".join(self.written[c.start : c.end].split())
                    return f"the template action `{written}` decides which of these words are passed; all were read"
        return None

    def _image(self, by_key: dict[str, Node]) -> Located[str] | None:
        """The ``image:`` of the same container (or compose service), exactly as written."""
        node = by_key.get("image")
        if not isinstance(node, ScalarNode) or node.tag != STR_TAG or not node.value.strip():
            return None
        span = self.y.span(node)
        raw = self.written[span.start : span.end]
        if node.style in ('"', "'") and len(raw) >= 2:
            span = Span(span.start + 1, span.end - 1)
            raw = raw[1:-1]
        return Located(raw, span)

    # -- scripts in scalars ----------------------------------------------------------------------
    def _script(self, node: ScalarNode, env: tuple[EnvVar, ...]) -> None:
        if _SEPARATES_WORDS.search(node.value) is None and _LAUNCH_HINT.search(node.value) is None:
            # one word per command at most (`app: sglang-1163`, an image name, a URL): every
            # launch, pip install and `cd` takes two words or more, so nothing here is read
            return
        chars = _chars(self.y, node)
        if "```" in chars.text or "~~~" in chars.text:
            # documentation kept in a YAML value (a playbook's instructions, a model card): only
            # its shell fences are commands, and an example's shell syntax is not reported
            from kimi_lsp.syntax import markdown as md  # only a value that holds fences needs it

            fences = md.blocks_of(md.fences(chars.text), md.SHELL_LANGS)
            view = MappedSource(md.code_view(chars.text, fences, shell=True), chars.starts, chars.ends, chars.anchor())
            commands, _problems = lex(view)
            self.launches.extend(launches_from_commands(commands, self.ctx, env))
            return
        commands, problems = lex(chars)
        found = launches_from_commands(commands, self.ctx, env)
        self.launches.extend(found)
        if found or _LAUNCH_HINT.search(node.value):
            self.ctx.problems.extend(problems)


def read_embedded(
    path: Path, text: str, loaded: Loaded, surface: Surface, *, masked: Masked | None = None, written: str | None = None
) -> SurfaceResult:
    """Launches inside YAML ``text`` (the masked text when the file is templated: ``masked``
    then says where the template actions were, ``written`` is the file as written)."""
    ctx = LaunchContext(path, surface, path.parent)
    written = text if written is None else written
    walker = _Walker(YamlText(text), ctx, written, masked)
    for doc in loaded.docs:
        start = len(walker.launches)
        walker.walk(doc, ())
        owner = _operator_kind(doc) if surface is Surface.KUBERNETES else None
        if owner is not None:
            walker.launches[start:] = [_operator_words(c, owner) for c in walker.launches[start:]]
    # A templated file that does not parse says nothing: the template engine, not YAML, decides.
    yaml_problems = () if masked is not None else tuple(SyntaxProblem(p.message, p.span) for p in loaded.problems)
    problems = yaml_problems + tuple(ctx.problems)
    # A bare entry point with no words after it (``server_command: python -m sglang.launch_server``
    # next to a mapping of flags, or a Kubernetes ``command`` whose args live in another resource)
    # is the prefix of a launch assembled elsewhere, not a launch missing everything.
    launches = tuple(c for c in walker.launches if c.argv)
    return SurfaceResult(
        launches=launches,
        problems=problems,
        is_launch_file=bool(launches) or (bool(problems) and mentions_sglang(text)),
        reads=tuple(dict.fromkeys(walker.reads)),
    )


# API groups whose containers run exactly as written (core workloads, LeaderWorkerSet, Argo, Ray,
# Knative). Any other kind is an operator's custom resource: the operator builds the pod and may
# add arguments of its own (KServe/OME serving runtimes, llmaz BackendRuntime, RoleBasedGroup).
_AS_WRITTEN_GROUPS = frozenset({"", "apps", "batch", "leaderworkerset.x-k8s.io", "argoproj.io", "ray.io", "serving.knative.dev"})


def _operator_kind(doc: Node) -> str | None:
    """The kind of a custom resource whose operator assembles the command line, else None."""
    if not isinstance(doc, MappingNode):
        return None
    fields = {k.value: v for k, v in doc.value if isinstance(k, ScalarNode)}
    api, kind = fields.get("apiVersion"), fields.get("kind")
    if not isinstance(api, ScalarNode) or not isinstance(kind, ScalarNode):
        return None
    group = api.value.rpartition("/")[0] if "/" in api.value else ""
    return None if group in _AS_WRITTEN_GROUPS else str(kind.value)


def _operator_words(cmd: LaunchCommand, kind: str) -> LaunchCommand:
    """The launch with one unknown word at its end: what the operator adds. Rules then judge the
    written words but never call anything "missing" (as for ``"$@"`` in a script)."""
    end = cmd.span.end
    word = Token(f"${{{kind}_OPERATOR_ARGS}}", Span(end, end), exact=False)
    return replace(cmd, argv=cmd.argv + (word,))


_C_OPTION = _regex.compile(r"-[a-z]*c[a-z]*")  # sh -c, bash -lc, sh -ec
_SPLIT_DOUBT = (
    "this launch does not run as written: compose splits a string `command:` into words, so "
    "`{shell}` runs only `{first}` (give the command as a one-item list to run it)"
)


_K8S_BUILT_DOUBT = (
    "kimi-lsp only guesses this is the launch: `{image}` is built by {how} in {source} from "
    "{dockerfile}, whose ENTRYPOINT runs the server with these args (the image the cluster pulls "
    "may be another build of that name)"
)


# A Dockerfile named by a compose ``build:`` is read from disk only when it is this small (the
# largest real-world Dockerfiles are ~40 KB); a bigger or unreadable one gives no launch.
_MAX_DOCKERFILE = 1 << 20


def _placed_word(value: str, at: Span) -> Word:
    """A word written elsewhere (a Dockerfile's ENTRYPOINT), placed at ``at`` and not exact."""
    chars = MappedSource(value, [at.start] * len(value), [at.end] * len(value), at.end)
    return Word(Token(value, at, exact=False), chars)


def _build_entrypoint(
    y: YamlText, node: Node | None, compose: Path, reads: list[Path]
) -> tuple[list[str], list[EnvVar], Span] | None:
    """The exec-form ENTRYPOINT (and ENV) of the image a compose ``build:`` makes, with the span
    of the ``build:`` value it is placed on; None when it cannot be known from files here. The
    Dockerfile looked at goes to ``reads`` (found or not: creating it changes the launch)."""
    from kimi_lsp.surfaces.dockerfile import image_entrypoint  # only a built service needs it

    if isinstance(node, ScalarNode) and node.tag == STR_TAG:
        fields: dict[str, ScalarNode] = {"context": node}
    elif isinstance(node, MappingNode):
        fields = {k.value: v for k, v in node.value if isinstance(k, ScalarNode) and isinstance(v, ScalarNode) and v.tag == STR_TAG}
    else:
        return None
    context = fields.get("context")
    at_node = fields.get("dockerfile_inline") or fields.get("dockerfile") or context or node
    target = fields["target"].value if "target" in fields else None
    inline = fields.get("dockerfile_inline")
    if inline is not None:
        text = inline.value
    else:
        ctx_dir = context.value.strip() if context is not None else "."
        name = fields["dockerfile"].value.strip() if "dockerfile" in fields else "Dockerfile"
        if "$" in ctx_dir + name or "://" in ctx_dir or ctx_dir.startswith("git@") or not name:
            return None  # a variable, or a remote context: not a file here
        file = Path(os.path.normpath(compose.parent / ctx_dir / name))
        reads.append(file)
        touched(file)  # read around the Workspace: the --check result cache must key on it
        try:
            if not file.is_file() or file.stat().st_size > _MAX_DOCKERFILE:
                return None
            text = file.read_text("utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            return None
    found = image_entrypoint(text, target)
    if found is None:
        return None
    return found[0], found[1], y.span(at_node)
