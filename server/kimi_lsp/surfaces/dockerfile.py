"""Dockerfiles and Containerfiles: the launch the image runs, and launches in ``RUN``.

Instructions, heredocs, exec form, ``ENV``/``ARG`` and ``FROM`` come from the one Dockerfile
reader (``kimi_lsp.syntax.dockerfile``); shell text from the one shell lexer. This module only
decides which of them are launches. Each launch carries the image of its stage (``FROM``, with
global ``ARG`` defaults substituted; a ``FROM <stage>`` inherits that stage's image).

The image's launch follows Docker's rules for the final stage: exec-form ``ENTRYPOINT`` plus
``CMD`` (exec form appended, shell form appended as ``/bin/sh -c TEXT``), a shell-form
``ENTRYPOINT`` ignores ``CMD``, ``ENTRYPOINT`` resets a ``CMD`` inherited from a parent stage, the
last of each wins. ``ENV`` (inherited from a parent stage) is the launch's environment; ``RUN``
launches also see the stage's ``ARG`` defaults. The Dockerfile's own ``pip install`` lines govern
what its launches import, so every launch here has ``own_pins=True``.
"""
from __future__ import annotations

from pathlib import Path

from kimi_lsp._record import dataclass, field, replace
from kimi_lsp.surfaces.model import EnvVar, LaunchCommand, Surface, SurfaceResult, Token
from kimi_lsp.surfaces.shell import (
    FlatSource,
    LaunchContext,
    Source,
    Word,
    entry_script_launches,
    launches_from_commands,
    launches_from_words,
    lex,
    mentions_sglang,
    SCRIPT_TARGET,
    WRITTEN_DOUBT,
    written_launches,
)
from kimi_lsp.syntax.dockerfile import (  # parse is re-exported: the tests read instructions here
    Instruction,
    arg_vars,
    env_vars,
    exec_form,
    parse,
    read_from,
    run_offset,
    substitute_args,
)
from kimi_lsp.text import Located

__all__ = ["parse", "read_dockerfile"]

# ------------------------------------------------------------------------------------------------
# Argument forms
# ------------------------------------------------------------------------------------------------


@dataclass
class _Form:
    """An exec-form JSON array (``words``) or a shell-form command line (``shell``)."""

    instruction: Instruction
    words: list[Word] | None = None
    shell: Source | None = None


def _form(ins: Instruction, escape: str, offset: int = 0) -> _Form:
    words = exec_form(ins, escape, offset)
    if words is not None:
        return _Form(ins, words=words)
    return _Form(ins, shell=FlatSource(ins.args[offset:], ins.start + offset))


# ------------------------------------------------------------------------------------------------
# Stages and launches
# ------------------------------------------------------------------------------------------------


@dataclass
class _Stage:
    name: str | None
    env: list[EnvVar] = field(default_factory=list)  # ENV, inherited from a parent stage
    build_env: list[EnvVar] = field(default_factory=list)  # ARG and ENV in order (what RUN sees)
    entrypoint: _Form | None = None
    cmd: _Form | None = None
    cmd_set: bool = False
    image: Located[str] | None = None  # the FROM image (a parent stage's, for FROM <stage>)


def _from_instruction(ins: Instruction, escape: str, stages: list[_Stage], global_args: dict[str, EnvVar]) -> _Stage:
    line = read_from(ins, escape)
    image = line.image
    if image is not None and "$" in image.value:
        # FROM ${BASE}: the global ARG default is what a build without --build-arg uses
        value = substitute_args(image.value, global_args)
        if value is not None:
            image = Located(value, image.span)
    ref = image.value.lower() if image is not None else ""
    parent = next((s for s in reversed(stages) if s.name is not None and s.name == ref), None)
    if parent is None:
        return _Stage(line.name, image=image)
    return _Stage(
        line.name, env=list(parent.env), build_env=list(parent.env), entrypoint=parent.entrypoint,
        cmd=parent.cmd, image=parent.image,
    )


def _form_launches(form: _Form, ctx: LaunchContext, escape: str, env: list[EnvVar], head: int | None = None) -> list[LaunchCommand]:
    if form.words is not None:
        return launches_from_words(form.words, ctx, env, head)
    assert form.shell is not None
    commands, problems = lex(form.shell, escape=escape)
    ctx.problems.extend(problems)
    # `RUN echo "python -m sglang.launch_server ..." > /start.sh`: the script the image runs later
    return [*launches_from_commands(commands, ctx, env), *written_launches(form.shell, commands, ctx)]


def _image_launches(stage: _Stage, ctx: LaunchContext, escape: str) -> list[LaunchCommand]:
    ep, cmd = stage.entrypoint, stage.cmd
    env = list(stage.env)
    if ep is not None and ep.shell is not None:
        return _form_launches(ep, ctx, escape, env)  # shell-form ENTRYPOINT ignores CMD
    if ep is not None and ep.words is not None:
        words = list(ep.words)
        if cmd is not None and cmd.words is not None:
            words.extend(cmd.words)
        elif cmd is not None and cmd.shell is not None:
            # Docker appends a shell-form CMD as `/bin/sh -c "TEXT"`; the synthesized words sit
            # on the CMD keyword and are not exact.
            at = cmd.instruction.keyword_span
            text = cmd.shell.text.strip()
            lead = len(cmd.shell.text) - len(cmd.shell.text.lstrip())
            src = FlatSource(text, cmd.shell.start(0) + lead) if text else FlatSource("", at.end)
            words.append(Word(Token("/bin/sh", at, False), FlatSource("/bin/sh", at.start)))
            words.append(Word(Token("-c", at, False), FlatSource("-c", at.start)))
            words.append(Word(Token(text, src.span(0, len(text)), True), src))
        return launches_from_words(words, ctx, env) or entry_script_launches(words, ctx, env)
    if cmd is not None:
        return _form_launches(cmd, ctx, escape, env)
    return []


def read_dockerfile(path: Path, text: str) -> SurfaceResult:
    escape, instructions, problems = parse(text)
    ctx = LaunchContext(path, Surface.DOCKERFILE, path.parent, own_pins=True)
    stages: list[_Stage] = []
    global_args: dict[str, EnvVar] = {}
    launches: list[LaunchCommand] = []
    for ins in instructions:
        kw = ins.keyword
        if kw == "FROM":
            stages.append(_from_instruction(ins, escape, stages, global_args))
            continue
        if not stages:
            if kw == "ARG":  # global ARG: visible to FROM and as a default for ARG in stages
                for env in arg_vars(ins, escape, problems, {}):
                    global_args[env.name.value] = env
            continue
        stage = stages[-1]
        if kw == "ENV":
            found = env_vars(ins, escape, problems)
            stage.env.extend(found)
            stage.build_env.extend(found)
        elif kw == "ARG":
            stage.build_env.extend(arg_vars(ins, escape, problems, global_args))
        elif kw == "RUN":
            ctx.image = stage.image
            launches.extend(_run_launches(ins, ctx, escape, stage.build_env))
        elif kw == "CMD":
            stage.cmd = _form(ins, escape)
            stage.cmd_set = True
        elif kw == "ENTRYPOINT":
            stage.entrypoint = _form(ins, escape)
            if not stage.cmd_set:
                stage.cmd = None
    if stages:
        ctx.image = stages[-1].image
        launches.extend(_image_launches(stages[-1], ctx, escape))
    problems.extend(ctx.problems)
    return SurfaceResult(
        launches=tuple(launches),
        problems=tuple(problems),
        is_launch_file=bool(launches) or (bool(problems) and mentions_sglang(text)),
    )


def _run_launches(ins: Instruction, ctx: LaunchContext, escape: str, env: list[EnvVar]) -> list[LaunchCommand]:
    form = _form(ins, escape, run_offset(ins.args))
    found = _form_launches(form, ctx, escape, list(env))
    if form.shell is not None:
        # `RUN <<EOF` and `RUN bash <<EOF` run the body as a script; `RUN python3 <<EOF` does not
        for body in ins.heredocs:
            if body.script:
                src = FlatSource(body.text, body.span.start)
                found.extend(_form_launches(_Form(ins, shell=src), ctx, "\\", list(env)))
            elif body.written and "sglang" in body.text:
                # `RUN cat > /start.sh <<EOF`: the script the image runs later (CMD/ENTRYPOINT)
                src = FlatSource(body.text, body.span.start)
                got = _form_launches(_Form(ins, shell=src), ctx, "\\", list(env))
                doubt = None if SCRIPT_TARGET.search(ins.args) else WRITTEN_DOUBT
                found.extend(replace(lc, doubt=lc.doubt or doubt) for lc in got)
    return found


def image_entrypoint(text: str, target: str | None = None) -> tuple[list[str], list[EnvVar]] | None:
    """The exec-form ``ENTRYPOINT`` words of the image a Dockerfile builds (its last stage, or the
    stage named ``target``), and that stage's ``ENV``: what runs with the arguments a compose
    ``command:`` (or ``docker run IMAGE ARGS``) gives the image. None when the stage has no
    ENTRYPOINT, a shell-form one (Docker then ignores the arguments), or the text is no Dockerfile."""
    escape, instructions, _problems = parse(text)
    stages: list[_Stage] = []
    global_args: dict[str, EnvVar] = {}
    for ins in instructions:
        kw = ins.keyword
        if kw == "FROM":
            stages.append(_from_instruction(ins, escape, stages, global_args))
        elif not stages:
            if kw == "ARG":
                for env in arg_vars(ins, escape, [], {}):
                    global_args[env.name.value] = env
        elif kw == "ENV":
            stages[-1].env.extend(env_vars(ins, escape, []))
        elif kw == "ENTRYPOINT":
            stages[-1].entrypoint = _form(ins, escape)
    if target is not None:
        named = [s for s in stages if s.name is not None and s.name == target.lower()]
        stage = named[-1] if named else None
    else:
        stage = stages[-1] if stages else None
    if stage is None or stage.entrypoint is None or stage.entrypoint.words is None:
        return None
    return [w.value for w in stage.entrypoint.words], list(stage.env)
