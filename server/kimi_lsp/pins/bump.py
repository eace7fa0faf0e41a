"""The bump fix: minimal text edits that make a manifest pin admit a target version.

Edits replace only the written specifier (``Pin.spec_span``), in the file's own notation:
PEP 440 clauses, poetry's ``^``/``~``/bare versions, conda's fuzzy ``=``, or a bare version in a
Dockerfile ``ARG`` default. Name spelling, extras, markers, quotes, comments and line endings are
never touched because they lie outside the span. Clause order is the written one (rebuilding
from ``SpecifierSet`` would sort it). Lockfiles are never edited (lockfiles.md §0.1); the lock
is regenerated with ``relock_hint``'s command after the manifest edit.
"""
from __future__ import annotations

import re

from kimi_lsp import _regex
from kimi_lsp._record import dataclass
from kimi_lsp.diagnostics import Edit
from kimi_lsp.pep440 import InvalidSpecifier, InvalidVersion, SpecifierSet, Version
from kimi_lsp.pins._pep508 import COMPANIONS, FLASHINFER, normalize_spec
from kimi_lsp.pins.model import Pin, PinFormat, PinSource
from kimi_lsp.text import Span

_VERSION_RE = _regex.compile(r"v?[0-9][0-9A-Za-z.!+_-]*")
_PEP440_CLAUSE = _regex.compile(r"(===|==|!=|~=|<=|>=|<|>)\s*([^\s,]+)")
_POETRY_CLAUSE = _regex.compile(r"(===|==|!=|~=|<=|>=|<|>|\^|~|=)?\s*([0-9A-Za-z*][0-9A-Za-z.*+!_-]*)")
_CONDA_CLAUSE = _regex.compile(r"(===|==|!=|~=|<=|>=|<|>|=)?\s*([0-9A-Za-z*][0-9A-Za-z.*+!_-]*)")
_SHELL_SPECIAL = set("<>|&;()")


@dataclass(frozen=True, slots=True)
class _Clause:
    start: int
    end: int
    op: str
    version: str
    version_start: int  # where the version begins (after the operator and any blanks)

    def core_prefix(self, core: str) -> str:
        """The operator as written, with the blanks between it and the version."""
        return core[self.start : self.version_start]


def _style(source: PinSource, pin: Pin) -> str:
    """Which notation the written specifier uses (native_spec is only set when it is not PEP 440)."""
    if pin.native_spec is not None and source.format is PinFormat.PYPROJECT:
        return "poetry"
    if pin.native_spec is not None and source.format is PinFormat.ENVIRONMENT_YML:
        return "conda"
    return "pep440"


def _to_pep440(text: str, style: str) -> str | None:
    # the pyproject and conda readers load only when a pin of theirs is bumped
    if style == "poetry":
        from kimi_lsp.pins.pyproject import poetry_to_pep440

        return poetry_to_pep440(text)
    if style == "conda":
        from kimi_lsp.pins.conda_env import conda_to_pep440

        return conda_to_pep440(text)
    return normalize_spec(text)


def _clauses(core: str, style: str) -> list[_Clause] | None:
    """Clauses of ``core`` with positions; None when anything between them is not understood.
    Commas separate clauses; poetry also ANDs on whitespace (``>=1.2 <2``)."""
    rx = {"poetry": _POETRY_CLAUSE, "conda": _CONDA_CLAUSE}.get(style, _PEP440_CLAUSE)
    out: list[_Clause] = []
    pos = 0
    while pos < len(core):
        if core[pos].isspace() or (core[pos] == "," and out):
            pos += 1
            continue
        m = rx.match(core, pos)
        if not m or m.end() == pos or (style == "pep440" and not m.group(1)):
            return None
        out.append(_Clause(m.start(), m.end(), m.group(1) or "", m.group(2), m.start(2)))
        pos = m.end()
    return out


def _release(version: str) -> list[int] | None:
    m = re.match(r"v?(\d+(?:\.\d+)*)", version)
    return [int(x) for x in m.group(1).split(".")] if m else None


def _vers(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _separator(core: str, clauses: list[_Clause]) -> str:
    """The separator the author used between clauses (``,`` / ``, `` / poetry's blank)."""
    if len(clauses) >= 2:
        return core[clauses[0].end : clauses[1].start] or ","
    return ","


def _bump_clauses(core: str, style: str, target: str, local: str | None) -> str | None:
    """``core`` (a specifier as written, no outer blanks) rewritten to admit ``target``."""
    if "|" in core:
        return None  # unions: which branch to move is a human decision
    clauses = _clauses(core, style)
    if clauses is None or not clauses:
        return None
    tv = _vers(target)
    if tv is None:
        return None
    exact_v = f"{target}+{local}" if local else target
    new: dict[int, str] = {}  # clause index -> replacement text
    had_floor = False
    for k, c in enumerate(clauses):
        wildcard = c.version.endswith("*")
        base = c.version.rstrip("*").rstrip(".")
        # same operator: only the version moves, the author's spacing stays
        keep_op = c.core_prefix(core)
        if c.op in ("==", "===", "") and not wildcard or (c.op == "=" and style == "poetry" and not wildcard):
            had_floor = True
            new[k] = keep_op + exact_v
        elif c.op == "=" and style == "conda":
            had_floor = True
            new[k] = keep_op + target  # conda's fuzzy pin keeps its notation: =0.6.17 (0.6.17.*)
        elif c.op in ("^", "~"):
            had_floor = True
            new[k] = keep_op + target
        elif c.op == "~=":
            had_floor = True
            rel = _release(c.version)
            if rel is not None and len(rel) == 2:
                new[k] = f">={target},<{rel[0] + 1}"  # ~=0.6 is >=0.6,<1: keep that cap
            else:
                new[k] = keep_op + target
        elif c.op in (">=", ">"):
            had_floor = True
            v = _vers(c.version)
            if v is None or v < tv or c.op == ">" and v <= tv:
                new[k] = (keep_op if c.op == ">=" else ">=") + target
        elif wildcard and c.op in ("==", "", "="):
            had_floor = True
            rel = _release(base)
            if rel and _admits(f"=={base}.*", "pep440", target):
                upper = rel[:-1] + [rel[-1] + 1]
                new[k] = f">={target},<{'.'.join(map(str, upper))}"
            else:
                new[k] = f">={target}"
    out = core
    for k in sorted(new, reverse=True):
        c = clauses[k]
        out = out[: c.start] + new[k] + out[c.end :]
    if not _admits(out, style, exact_v if local else target):
        if had_floor:
            return None  # a cap the user chose excludes the target: needs a human
        return f">={target}"  # only caps/exclusions (cannot-satisfy): replace them
    if not had_floor:
        out = f">={target}{_separator(core, clauses)}{out}"
    return out


def _admits(text: str, style: str, target: str) -> bool:
    pep = _to_pep440(text, style)
    if pep is None:
        return False
    try:
        return SpecifierSet(pep).contains(target, prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


def _has_floor_at_least(pep: str, target: str) -> bool:
    """Does the PEP 440 specifier exclude everything below ``target``?"""
    tv = _vers(target)
    if tv is None:
        return False
    for clause in pep.split(","):
        m = _PEP440_CLAUSE.fullmatch(clause.strip())
        if not m:
            continue
        # ==0.6.17.* (conda's fuzzy =0.6.17) starts at its prefix
        v = _vers(m.group(2)[:-2] if m.group(2).endswith(".*") else m.group(2))
        if v is None:
            continue
        if m.group(1) in ("==", "===", ">=", "~=") and v >= tv:
            return True
        if m.group(1) == ">" and v >= tv:
            return True
    return False


def _new_spec_text(old: str, pin: Pin, style: str, target: str, local: str | None) -> str | None:
    core = old.strip()
    pre = old[: len(old) - len(old.lstrip())]
    post = old[len(old.rstrip()) :]
    new_core: str | None
    pep: str | None
    if core in ("", "*"):
        new_core = f">={target}"
        pep = new_core
    elif _VERSION_RE.fullmatch(core) and "*" not in core:
        # a bare version: poetry/Pipfile exact pin, conda "name 1.2", or an ARG default that a
        # clause in the expanded specifier uses; which clause decides what moving it means
        found = _clause_of(pin.specifier, core)
        op = found[0] if found else None
        if op in ("==", "===") and found is not None:
            # a local label written after the variable (``==${V}+cu130``) stays where it is
            new_core = f"{target}+{local}" if local and found[1] == core else target
        elif op in (">=", "~="):
            new_core = target
        else:
            return None
        pep = _substitute(pin.specifier, core, new_core)
        if pep is None:
            return None
    else:
        new_core = _bump_clauses(core, style, target, local)
        if new_core is None:
            return None
        pep = _to_pep440(new_core, style)
        if pep is None:
            return None
    try:
        if not SpecifierSet(pep).contains(target if not local else f"{target}+{local}", prereleases=True):
            return None
    except (InvalidSpecifier, InvalidVersion):
        return None
    if not _has_floor_at_least(pep, target):
        return None
    return f"{pre}{new_core}{post}"


def _clause_of(specifier: str, version: str) -> tuple[str, str] | None:
    """(operator, written version) of the one clause whose version is ``version`` (or
    ``version+local``); None when there is no such single clause."""
    if "|" in specifier:
        return None
    found = []
    for clause in specifier.split(","):
        m = _PEP440_CLAUSE.fullmatch(clause.strip())
        if m and (m.group(2) == version or m.group(2).startswith(version + "+")):
            found.append((m.group(1), m.group(2)))
    return found[0] if len(found) == 1 else None


def _substitute(specifier: str, old_version: str, new_version: str) -> str | None:
    out = []
    for clause in specifier.split(","):
        m = _PEP440_CLAUSE.fullmatch(clause.strip())
        if m is None:
            return None
        ver = m.group(2)
        if ver == old_version or ver.startswith(old_version + "+"):
            ver = new_version + ver[len(old_version) :]
        out.append(m.group(1) + ver)
    return ",".join(out)


def _local_label(pin: Pin) -> str | None:
    if pin.version and "+" in pin.version:
        return pin.version.split("+", 1)[1]
    return None


def _pin_edit(source: PinSource, pin: Pin, target: str, text: str, local: str | None) -> Edit | None:
    if source.is_lock or pin.hashed or pin.spec_span is None:
        return None
    sp = pin.spec_span
    if sp.end > len(text):
        return None
    old = text[sp.start : sp.end]
    new = _new_spec_text(old, pin, _style(source, pin), target, local)
    if new is None:
        return None
    if source.format in (PinFormat.DOCKERFILE, PinFormat.SHELL):
        return _shell_safe(source, pin, sp, new, text)
    return Edit(source.path, sp, new)


def _shell_safe(source: PinSource, pin: Pin, sp: Span, new: str, text: str) -> Edit | None:
    """In an unquoted shell word ``>=`` would be a redirection: quote the whole word then."""
    word = pin.span
    if not (word.start <= sp.start and sp.end <= word.end) or not (_SHELL_SPECIAL & set(new)):
        return Edit(source.path, sp, new)
    prefix = text[word.start : sp.start]
    if prefix.count("'") % 2 == 1 or prefix.count('"') % 2 == 1:
        return Edit(source.path, sp, new)  # already inside quotes
    raw = prefix + new + text[sp.end : word.end]
    if "'" not in raw and "$" not in raw:
        return Edit(source.path, word, f"'{raw}'")
    if not any(ch in raw for ch in '"`\\') and source.path.suffix.lower() != ".ipynb":
        return Edit(source.path, word, f'"{raw}"')  # (in a notebook, a quote would need a JSON escape)
    return None


def bump_fix_edits(
    source: PinSource, pin: Pin, target: str, text: str, companions: bool = True
) -> tuple[Edit, ...] | None:
    """Edits (absolute path, code-point spans in ``text``) making ``pin`` admit ``target`` and
    nothing below it; None when no safe text edit exists (lockfile, hashes, URL, ``${VAR}`` from
    outside the file, a cap excluding the target, a poetry ``||`` union).

    With ``companions``, flashinfer-cubin / flashinfer-jit-cache pins of the same file move to
    the same version (flashinfer refuses mismatched versions at import); jit-cache keeps a
    ``+cuXXX`` local label on an exact pin. A companion that cannot be edited is left alone.
    An empty tuple means the pin already admits only ``target`` or newer as written.
    """
    try:
        return _bump(source, pin, target, text, companions)
    except Exception:
        return None


def _bump(source: PinSource, pin: Pin, target: str, text: str, companions: bool) -> tuple[Edit, ...] | None:
    # a target may carry its own local label (aligning a jit-cache pin to "0.6.17+cu130"):
    # exact clauses get it, floors get the public version (">=0.6.17+cu130" is invalid PEP 440)
    target, _, target_local = target.partition("+")
    if _vers(target) is None:
        return None
    local = target_local or (_local_label(pin) if pin.name == "flashinfer-jit-cache" else None)
    main = _pin_edit(source, pin, target, text, local)
    if main is None:
        return None
    edits: list[Edit] = []
    if text[main.span.start : main.span.end] != main.new_text:
        edits.append(main)
    if companions and pin.name == FLASHINFER:
        for other in source.pins:
            if other.name not in COMPANIONS:
                continue
            loc = _local_label(other) if other.name == "flashinfer-jit-cache" else None
            e = _pin_edit(source, other, target, text, loc)
            if e is None or text[e.span.start : e.span.end] == e.new_text:
                continue
            if any(_overlaps(e.span, d.span) for d in edits):
                continue  # e.g. two pins sharing one ARG default: already moved
            edits.append(e)
    edits.sort(key=lambda e: e.span.start)
    return tuple(edits)


def _overlaps(a: Span, b: Span) -> bool:
    return a.start < b.end and b.start < a.end or a == b


def relock_hint(source: PinSource, name: str, target: str, lock: PinSource | None = None) -> str | None:
    """The command that re-locks after ``source``'s pin of ``name`` was edited to admit ``target``.

    ``source`` is the edited manifest (or a compiled lock with its own template); ``lock``, when
    the caller knows it, is the lockfile that depends on the manifest and decides the tool.
    None when nothing is locked from this file (plain requirements, Dockerfiles).
    """
    if source.is_lock and source.relock_command:
        return _fill(source.relock_command, name, target)
    tool = (lock.tool if lock is not None and lock.tool else None) or source.tool
    if source.format is PinFormat.PYPROJECT:
        if tool == "uv":
            return f"uv lock --upgrade-package {name}"
        if tool == "poetry":
            return f"poetry update --lock {name}"
        if tool == "pdm":
            return f"pdm update --no-sync {name}"
        return None
    if source.format is PinFormat.PIPFILE:
        return "pipenv lock"
    if source.format in (PinFormat.REQUIREMENTS, PinFormat.CONSTRAINTS):
        if lock is not None and lock.relock_command:
            return _fill(lock.relock_command, name, target)
        if source.path.suffix == ".in":
            if lock is not None and lock.tool == "uv":
                out = lock.path.name
                return f"uv pip compile {source.path.name} -P {name}=={target} -o {out}"
            return f'pip-compile -P "{name}=={target}" {source.path.name}'
        return None
    if source.format is PinFormat.ENVIRONMENT_YML and lock is not None and lock.format is PinFormat.CONDA_LOCK:
        return f"conda-lock -f {source.path.name} --lockfile {lock.path.name}"
    return None


def _fill(template: str, name: str, target: str) -> str:
    return template.replace("{name}", name).replace("{version}", target)
