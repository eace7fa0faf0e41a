"""Pins written as install commands in Dockerfiles and shell scripts.

``pip|pip3 install``, ``python[3] -m pip install``, ``uv pip install`` and ``uv add`` lines are
found with the one shell lexer and Dockerfile reader (``kimi_lsp.syntax``); each requirement word is then unquoted and its
``$VAR``/``${VAR}`` references expanded *with positions*: a Dockerfile ``ARG``/``ENV`` default or
a shell assignment carries the offsets of its value, so ``flashinfer-python==${FLASHINFER_VERSION}``
gets the expanded specifier and a ``spec_span`` on the ``ARG`` default (lockfiles.md §4.9: the
edit goes where the version is defined). ``--build-arg`` overrides are invisible here.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kimi_lsp import _regex
from kimi_lsp._record import dataclass, replace
from kimi_lsp.pins._pep508 import (
    OffsetMap,
    canonical,
    egg_name,
    failed_source,
    pin_from_string,
    scan_requirement,
    sole_version,
    version_from_filename,
)
from kimi_lsp.pins.model import Pin, PinFormat, PinProblem, PinSource
from kimi_lsp.pins.requirements import DIRECT_REF_RE, read_included, resolve_include
from kimi_lsp.syntax.dockerfile import Instruction, arg_vars, env_vars, exec_form, parse, run_offset
from kimi_lsp.syntax import EnvVar
from kimi_lsp.syntax.shell import FlatSource, Source, Word, lex
from kimi_lsp.syntax.shell_expand import Expanded, expand, expand_text
from kimi_lsp.text import Located, Span
from kimi_lsp.workspace import SourceText, Workspace

# options of pip / uv install-like commands that consume the next word
_VALUE_OPTS = {
    "-r", "--requirement", "--requirements", "-c", "--constraint", "--constraints", "-i", "--index-url",
    "--extra-index-url", "-f", "--find-links", "--python", "-p", "-e", "--editable", "--target", "-t",
    "--prefix", "--root", "--src", "--platform", "--python-version", "--implementation", "--abi",
    "--config-settings", "-C", "--global-option", "--trusted-host", "--cache-dir", "--log", "--progress-bar",
    "--upgrade-strategy", "--index-strategy", "--keyring-provider", "--resolution", "--prerelease",
    "--only-binary", "--no-binary", "--exclude-newer", "--group", "--optional", "--extra", "--index",
    "--default-index", "--overrides", "--override", "--build-constraints", "-b", "--config-file", "--directory",
    "--project", "--package", "--link-mode", "--python-platform", "--torch-backend", "--tag", "--branch",
    "--rev", "--marker", "--script", "--report", "--proxy", "--timeout", "--retries", "--cert",
    "--client-cert", "--exists-action", "--no-build-isolation-package", "--reinstall-package",
    "--upgrade-package", "-P", "--refresh-package", "--color", "--python-preference", "--compile-bytecode-dir",
}
_NAME_ASSIGN_RE = _regex.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")
_PREFIX_WORDS = {"sudo", "env", "time", "exec", "command", "nice", "nohup", "stdbuf"}


# -- install commands ---------------------------------------------------------------------------


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _install_args(words: list[Expanded]) -> tuple[list[Expanded], str] | None:
    """The arguments after ``install``/``add`` of an install command, and the program shape."""
    vals = [w.text for w in words]
    i = 0
    while i < len(vals):
        v = vals[i]
        if _NAME_ASSIGN_RE.match(v) or v in _PREFIX_WORDS or (v.startswith("-") and i > 0 and vals[i - 1] in _PREFIX_WORDS):
            i += 1
            continue
        break
    if i >= len(vals):
        return None
    prog = _basename(vals[i])
    rest = i + 1
    # `$PYTHON -m pip`, a notebook's `!{sys.executable} -m pip` (its braces read as a variable): an
    # interpreter known only where it runs, but `-m pip` says what it does
    if re.fullmatch(r"python(\d+(\.\d+)?)?", prog) or (prog.startswith("$") and vals[rest : rest + 2] == ["-m", "pip"]):
        while rest < len(vals) and vals[rest].startswith("-") and vals[rest] != "-m":
            rest += 1
        if vals[rest : rest + 2] != ["-m", "pip"]:
            return None
        prog, rest = "pip", rest + 2
    if re.fullmatch(r"pip(\d+(\.\d+)?)?", prog):
        sub = _subcommand(vals, rest)
        if sub is None or vals[sub] != "install":
            return None
        return words[sub + 1 :], "pip"
    if prog in _CONDA_PROGS:
        sub = _subcommand(vals, rest)
        if sub is not None and vals[sub] == "install":
            return words[sub + 1 :], "conda"
        return None
    if prog == "uv":
        sub = _subcommand(vals, rest)
        if sub is None:
            return None
        if vals[sub] == "add":
            return words[sub + 1 :], "uv add"
        if vals[sub] == "pip":
            sub2 = _subcommand(vals, sub + 1)
            if sub2 is not None and vals[sub2] == "install":
                return words[sub2 + 1 :], "uv pip"
    return None


def _subcommand(vals: list[str], i: int) -> int | None:
    while i < len(vals):
        v = vals[i]
        if not v.startswith("-"):
            return i
        i += 2 if (v in _VALUE_OPTS and "=" not in v) else 1
    return None


@dataclass
class _Result:
    pins: list[Pin]
    problems: list[PinProblem]
    includes: list[tuple[str, bool, Span]]


def _scan_install(args: list[Expanded], res: _Result, shape: str = "pip") -> None:
    if shape == "conda":
        _scan_conda(args, res)
        return
    i = 0
    while i < len(args):
        w = args[i]
        v = w.text
        i += 1
        if v.startswith("-"):
            opt, eq, val = v.partition("=")
            target: Expanded | None = None
            path_text: str | None = None
            if eq and opt.startswith("--"):
                path_text = val
            elif v[:2] in ("-r", "-c") and len(v) > 2 and not v.startswith("--"):
                opt, path_text = v[:2], v[2:]
            elif v in _VALUE_OPTS and i < len(args):
                target = args[i]
                path_text = target.text
                i += 1
            if opt in ("-r", "--requirement", "--requirements", "-c", "--constraint", "--constraints") and path_text:
                res.includes.append((path_text, opt.startswith(("-c", "--c")), (target or w).span))
            continue
        pin = _requirement_pin(w, res)
        if pin is not None:
            res.pins.append(pin)


# `conda install` (and mamba's, micromamba's): MatchSpecs, not PEP 508 (`name=1.2` is 1.2.*), read
# as environment.yml reads them; never edited here (a bump would write PEP 440 into a MatchSpec)
_CONDA_PROGS = ("conda", "mamba", "micromamba")
_CONDA_VALUE_OPTS = {"-c", "--channel", "-n", "--name", "-p", "--prefix", "--file", "--solver", "--subdir",
                     "--platform", "--repodata-fn"}
_CONDA_SPEC = _regex.compile(r"^(?:[^\s:]+::)?(?P<name>[A-Za-z0-9_][A-Za-z0-9_.-]*)(?P<rest>.*)$", re.S)


def _scan_conda(args: list[Expanded], res: _Result) -> None:
    i = 0
    while i < len(args):
        w = args[i]
        i += 1
        if w.text.startswith("-"):
            if w.text in _CONDA_VALUE_OPTS:
                i += 1
            continue
        pin = _conda_pin(w, res)
        if pin is not None:
            res.pins.append(pin)


def _conda_pin(w: Expanded, res: _Result) -> Pin | None:
    from kimi_lsp.pins.conda_env import conda_to_pep440  # (PyYAML loads only for a conda install)

    m = _CONDA_SPEC.match(w.text.strip())
    if m is None or "$" in w.text:
        return None
    name, rest = m.group("name"), m.group("rest").strip()
    spec = rest
    if rest[:1] == "[" or " " in rest:
        spec = ""  # name[version=...] or "name 1.2 build": what it pins is not read here
    elif re.match(r"^=[^=<>!|,]+=.+$", rest):
        spec = rest[: rest.index("=", 1)]  # name=1.2=build_0
    conv = conda_to_pep440(spec) if spec else ""
    if conv is None:
        res.problems.append(PinProblem(f"cannot read conda version spec {rest!r} for {name}", w.span))
        return None
    return Pin(canonical(name), Located(name, w.span), conv, sole_version(conv), w.span, None,
               native_spec=spec if spec and spec != conv else None)


def _looks_like_archive(v: str) -> bool:
    if DIRECT_REF_RE.match(v):
        return False
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://|^file:", v)) or v.startswith((".", "/", "~")) or v.endswith(
        (".whl", ".tar.gz", ".zip")
    )


def _offset_map(w: Expanded) -> OffsetMap:
    where = OffsetMap()
    for k, off in enumerate(w.offsets):
        if off is not None:
            where.add(k, off, 1)
    return where


def _requirement_pin(w: Expanded, res: _Result) -> Pin | None:
    v = w.text
    if not v.strip():
        return None
    if _looks_like_archive(v):
        found = version_from_filename(v)
        if found is not None:
            return Pin(found[0], Located(found[0], w.span), f"=={found[1]}", found[1], w.span, None)
        egg = egg_name(v)
        if egg is not None:
            return Pin(canonical(egg), Located(egg, w.span), "", None, w.span, None)
        return None
    where = _offset_map(w)
    draft = pin_from_string(v, where, w.span)
    if draft.problem is not None:
        res.problems.append(draft.problem)
    pin = draft.pin
    if pin is None:
        return None
    # the pin locates at the whole word (quotes included): that is what a reader sees
    pin = _replace(pin, span=w.span)
    if pin.spec_span is None and "$" not in pin.specifier and pin.specifier:
        sp = _indirect_spec_span(v, w.span, where)
        if sp is not None:
            pin = _replace(pin, spec_span=sp)
    return pin


def _indirect_spec_span(value: str, span: Span, where: OffsetMap) -> Span | None:
    """When the specifier is part literal, part variable (``==${V}``, ``==${V}+${CUDA}``), the
    variable right after the operator is where the version is defined: point at its value, but
    only when it is the whole public version (a local label may follow)."""
    parts = scan_requirement(value)
    if parts is None:
        return None
    a, b = parts.spec_range
    outside = [p for p in where.overlapping(a, b) if not (span.start <= p.file_start < span.end)]
    if not outside:
        return None
    p = outside[0]
    if p.start < a or p.start + p.length > b:
        return None  # the variable holds more than the specifier
    if not re.search(r"(===|==|~=|>=|<=|!=|<|>)\s*$", value[a : p.start]):
        return None  # the variable does not start a clause's version
    inner = value[p.start : p.start + p.length]
    after = value[p.start + p.length : b]
    if after and not re.match(r"^(\+[A-Za-z0-9.]+)?\s*(,|$)", after):
        return None  # e.g. ==${V}.post1: the variable is only part of the version
    clause_end = p.start + p.length + len(after.split(",")[0])
    if any(q.start >= clause_end for q in outside[1:]):
        return None  # more variables in later clauses: which one moves is unclear
    if not re.fullmatch(r"[0-9A-Za-z.!_-]+", inner):
        return None
    return Span(p.file_start, p.file_start + p.length)


def _replace(pin: Pin, **changes: Any) -> Pin:
    from kimi_lsp._record import replace

    return replace(pin, **changes)


# -- shell scripts ------------------------------------------------------------------------------


def _scan_shell(text: str, a: int, b: int, env: dict[str, Expanded], escape: str, res: _Result) -> None:
    """Install commands in the shell text ``text[a:b]``; assignments update ``env`` in order."""
    commands, _ = lex(FlatSource(text[a:b], a), escape=escape)
    for cmd in commands:
        assigned = dict(zip((id(w) for w in cmd.assignment_words), cmd.assignments))
        words = sorted((*cmd.words, *cmd.assignment_words), key=lambda w: w.token.span.start)
        expanded = [expand(w, env) for w in words]
        _note_assignments(text, words, expanded, assigned, env)
        got = _install_args(expanded)
        if got is not None:
            _scan_install(got[0], res, got[1])


def _note_assignments(
    text: str, words: list[Word], expanded: list[Expanded], assigned: dict[int, EnvVar], env: dict[str, Expanded]
) -> None:
    """``NAME=value`` alone (or after ``export``/``declare``/``readonly``/``local``) defines a variable."""
    vals = [w.text for w in expanded]
    k = 0
    while k < len(vals) and _NAME_ASSIGN_RE.match(vals[k]):
        k += 1
    if k == len(vals):
        idx = range(len(vals))  # only assignments: they persist
    elif vals[k] in ("export", "declare", "readonly", "local", "typeset"):
        idx = range(k + 1, len(vals))
    else:
        return  # prefix assignments apply to that command only
    for j in idx:
        var = assigned.get(id(words[j]))
        if var is None or var.value is None:
            continue
        m = _NAME_ASSIGN_RE.match(text[var.name.span.start : var.value.span.end])
        if not m:
            continue
        got = expand(words[j], env)
        env[m.group(1)] = got.tail(len(m.group(0)))


# -- Dockerfiles -------------------------------------------------------------------------------


def _docker_vars(
    view: str, ins: Instruction, env: dict[str, Expanded], escape: str, global_args: dict[str, Expanded] | None = None
) -> None:
    """ARG / ENV definitions, expanded against what is defined so far. Inside a stage, ``ARG NAME``
    re-imports the global default (``global_args``); otherwise a bare ``ARG NAME`` defines nothing we
    can know (a --build-arg may set it)."""
    found = env_vars(ins, escape, []) if ins.keyword == "ENV" else arg_vars(ins, escape, [], {})
    for var in found:
        name = var.name.value
        if var.value is None:
            if global_args is not None and name in global_args:
                env[name] = global_args[name]
            continue
        sp = var.value.span
        env[name] = expand_text(view, sp.start, sp.end, env, escape=escape)


def _scan_dockerfile(source: SourceText, res: _Result) -> None:
    text = source.text
    escape, instructions, _ = parse(text)
    global_args: dict[str, Expanded] = {}
    env: dict[str, Expanded] = {}
    in_stage = False
    for ins in instructions:
        kw = ins.keyword
        if kw == "FROM":
            in_stage = True
            env = {}
            continue
        if kw not in ("ARG", "ENV", "RUN"):
            continue
        # the instruction's masked arguments (continuations and inner comment lines blanked) in
        # place of its text: same length, so offsets found in the view are file offsets
        view = text[: ins.start] + ins.args + text[ins.span.end :]
        if kw == "ARG":
            if in_stage:
                _docker_vars(view, ins, env, escape, global_args)
            else:
                _docker_vars(view, ins, global_args, escape)
            continue
        if kw == "ENV":
            _docker_vars(view, ins, env, escape)
            continue
        run_env = dict(env)
        a = run_offset(ins.args)
        words = exec_form(ins, escape, a)
        if words is not None:
            _scan_exec_form(view, words, run_env, res)
        else:
            _scan_shell(view, ins.start + a, ins.span.end, run_env, escape, res)
        for body in ins.heredocs:
            if body.script:
                _scan_shell(text, body.span.start, body.span.end, run_env, "\\", res)


def _scan_exec_form(text: str, argv: list[Word], env: dict[str, Expanded], res: _Result) -> None:
    """``RUN ["pip", "install", "x==1"]`` (and ``["bash", "-c", "…"]``): JSON strings, no expansion."""
    words: list[Expanded] = []
    for w in argv:
        span = w.token.span
        n = len(w.value)
        offsets: tuple[int | None, ...] = tuple(range(span.start + 1, span.start + 1 + n)) if w.token.exact else (None,) * n
        words.append(Expanded(w.value, offsets, span))
    if len(words) >= 3 and _basename(words[0].text) in ("sh", "bash") and words[1].text == "-c":
        if argv[2].token.exact:
            script = words[2]
            _scan_shell(text, script.span.start + 1, script.span.end - 1, env, "\\", res)
        return
    got = _install_args(words)
    if got is not None:
        _scan_install(got[0], res, got[1])


# -- public ------------------------------------------------------------------------------------


def read_install_pins(source: SourceText, kind: str, workspace: Workspace | None = None) -> PinSource:
    if kind == "notebook":
        script, chars = _notebook_script(source)
        return _located(read_install_pins(script, "shell", workspace), chars)
    return _read_install_pins(source, kind, workspace)


def _read_install_pins(source: SourceText, kind: str, workspace: Workspace | None = None) -> PinSource:
    """Pins installed by the commands of a Dockerfile (``kind="dockerfile"``) or shell script
    (``kind="shell"``) or documentation file (``kind="markdown"``: its shell blocks).
    ``includes``: the ``-r``/``-c`` files, resolved against this file's directory (the build
    context for a Dockerfile, usually); ``read_install_tree`` reads them."""
    source, kind = _as_script(source, kind)
    fmt = PinFormat.DOCKERFILE if kind == "dockerfile" else PinFormat.SHELL
    try:
        res = _Result([], [], [])
        if fmt is PinFormat.DOCKERFILE:
            _scan_dockerfile(source, res)
        else:
            _scan_shell(source.text, 0, len(source.text), {}, "\\", res)
        includes: list[Path] = []
        for path_text, _is_c, span in res.includes:
            resolved = resolve_include(source.path, path_text, shell=True)
            if resolved is None:
                continue
            if resolved not in includes:
                includes.append(resolved)
            if workspace is not None and not workspace.exists(resolved):
                res.problems.append(PinProblem(f"requirements file not found next to {source.path.name}: {path_text}", span))
        return PinSource(source.path, fmt, False, tuple(res.pins), tool="pip", problems=tuple(res.problems),
                         includes=tuple(includes))
    except Exception as exc:
        return failed_source(source.path, fmt, f"could not read {source.path.name}: {exc}")


def _as_script(source: SourceText, kind: str) -> tuple[SourceText, str]:
    """A documentation file's installs are the commands of its shell blocks (``kind="markdown"``),
    read on the document blanked around them, so that offsets stay the document's."""
    if kind != "markdown":
        return source, kind
    from kimi_lsp.syntax.markdown import shell_view

    view = shell_view(source.text, rst=source.path.suffix.lower() == ".rst")
    return SourceText(source.path, view, source.encoding, source.bom), "shell"


def _notebook_script(source: SourceText) -> tuple[SourceText, Source]:
    """A notebook's shell cells and ``!`` lines as one script, and where each of its characters
    sits in the ``.ipynb`` text (JSON escapes between them)."""
    from kimi_lsp.syntax import notebook

    chars = notebook.install_text(notebook.read(source.text))
    return SourceText(source.path, chars.text, source.encoding, source.bom), chars


def _located(src: PinSource, chars: Source) -> PinSource:
    """``src`` read from a script made of a notebook's cells, its spans put back into the notebook."""

    def at(span: Span) -> Span:
        return chars.span(span.start, span.end)

    pins = tuple(
        replace(
            p,
            written_name=Located(p.written_name.value, at(p.written_name.span)),
            span=at(p.span),
            spec_span=at(p.spec_span) if p.spec_span is not None else None,
        )
        for p in src.pins
    )
    problems = tuple(PinProblem(q.message, at(q.span)) for q in src.problems)
    return replace(src, pins=pins, problems=problems)


def read_install_tree(source: SourceText, kind: str, workspace: Workspace) -> tuple[PinSource, ...]:
    """The install pins of ``source`` plus every requirements file its commands name (one that
    cannot be read is a source that says why: ``requirements.read_included``)."""
    if kind == "notebook":
        script, chars = _notebook_script(source)
        first = read_install_pins(script, "shell", workspace)
        # the directives' lines are the notebook file's
        found = [(t, c, chars.span(sp.start, sp.end).start) for t, c, sp in _install_includes(script, "shell")]
        return (_located(first, chars), *_included_trees(source, found, workspace, {first.path}))
    source, kind = _as_script(source, kind)
    first = read_install_pins(source, kind, workspace)
    found = [(t, c, sp.start) for t, c, sp in _install_includes(source, kind)]
    return (first, *_included_trees(source, found, workspace, {first.path}))


def _included_trees(
    source: SourceText, found: list[tuple[str, bool, int]], workspace: Workspace, seen: set[Path]
) -> list[PinSource]:
    out: list[PinSource] = []
    budget = [256]  # files all the trees read together
    first_at: dict[tuple[str, bool], int] = {}
    for path_text, is_c, at in found:
        first_at.setdefault((path_text, is_c), at)
    for (path_text, is_c), at in first_at.items():
        # (a -c file is read as constraints; a -r one as its name says, as before)
        for child in read_included(workspace, source, path_text, True if is_c else None, at, shell=True, budget=budget):
            if child.path not in seen:
                seen.add(child.path)
                out.append(child)
    return out


def _install_includes(source: SourceText, kind: str) -> list[tuple[str, bool, Span]]:
    """The ``-r``/``-c`` arguments of the install commands in ``source``, in order."""
    res = _Result([], [], [])
    try:
        if kind == "dockerfile":
            _scan_dockerfile(source, res)
        else:
            _scan_shell(source.text, 0, len(source.text), {}, "\\", res)
    except Exception:
        return []
    return res.includes
