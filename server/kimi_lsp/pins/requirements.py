"""requirements.txt / constraints.txt / *.in, read the way pip reads them.

pip's grammar (``pip/_internal/req/req_file.py``): physical lines ending in ``\\`` are joined
(a comment line never continues), then ``(^|\\s)#.*`` is cut, then ``${VAR}`` is expanded; a line
starting with ``-`` is options only, otherwise the requirement is everything before the first
space-separated word starting with ``-`` (``--hash``, ``--config-settings``). ``-r``/``-c`` paths
are relative to the including file. Positions stay exact through the joins via ``OffsetMap``.

A file written by pip-compile or ``uv pip compile`` (header, ``# via`` lines, hashes) is the
*output* of a resolve: it is read as a lock (``is_lock``), never edited, and points at its ``.in``.
"""
from __future__ import annotations

import os
import re
from collections import deque
from pathlib import Path

from kimi_lsp import _regex
from kimi_lsp._record import dataclass, field
from kimi_lsp.pins._pep508 import (
    OffsetMap,
    canonical,
    egg_name,
    failed_source,
    pin_from_string,
    version_from_filename,
)
from kimi_lsp.pins.model import Pin, PinFormat, PinProblem, PinSource
from kimi_lsp.text import Located, Span
from kimi_lsp.workspace import ReadFailure, SourceText, Workspace

_PHYSICAL_RE = _regex.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
_URL_RE = _regex.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^file:")
_COMMENT_LINE_RE = _regex.compile(r"\s*#")
_WORD_RE = _regex.compile(r"\S+")
# PEP 508 `name @ url`. (Not ``name\s*(\[...\])?\s*@``: two ``\s*`` around an absent group split a
# run of n spaces n ways, quadratic in a line's spaces; this one matches the same strings.)
DIRECT_REF_RE = _regex.compile(r"^[A-Za-z0-9._-]+(?:\s*\[[^\]]*\])?\s*@")
# pip: options that consume the next word when written without '='
_VALUE_OPTS = {
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url",
    "--extra-index-url", "-f", "--find-links", "--no-binary", "--only-binary", "--trusted-host",
    "--use-feature", "--hash", "--config-settings", "-C", "--global-option",
}
_MAX_INCLUDED_FILES = 256  # files one tree reads (each once, at any depth, as pip does)


@dataclass
class _Logical:
    """One logical line (continuations joined), comment removed, with its offset map."""

    text: str
    where: OffsetMap
    whole: Span  # physical extent, for problems


@dataclass
class LineResult:
    pins: list[Pin] = field(default_factory=list)
    problems: list[PinProblem] = field(default_factory=list)
    # (path text as written, is constraint, span of the path)
    includes: list[tuple[str, bool, Span]] = field(default_factory=list)


def logical_lines(text: str, base: int = 0) -> list[_Logical]:
    """pip's ``join_lines`` + ``ignore_comments`` with positions."""
    out: list[_Logical] = []
    pending: list[tuple[str, int]] = []  # (segment, file offset) of an open continuation
    for m in _PHYSICAL_RE.finditer(text):
        if m.start() == m.end():
            continue  # the empty match at the very end
        raw = m.group(0).rstrip("\r\n")
        start = base + m.start()
        is_comment = _COMMENT_LINE_RE.match(raw) is not None
        if raw.endswith("\\") and not is_comment:
            pending.append((raw.rstrip("\\"), start))
            continue
        pending.append((raw, start))
        out.append(_join(pending))
        pending = []
    if pending:
        out.append(_join(pending))
    return out


def comment_start(text: str) -> int | None:
    """Where pip's ``COMMENT_RE`` (``(^|\\s+)#.*$``) first matches in ``text``, by hand: searched as a
    regular expression, ``\\s+`` backtracks over a run of n spaces from each of its n starts (a
    30 KB line of spaces took 12 s). The match is the first ``#`` at the start or after whitespace
    with no line break after it (``.`` stops at one, ``$`` allows one last), cut from the start of
    the whitespace run before it."""
    n = len(text)
    last_break = text.rfind("\n", 0, n - 1)  # ``.*$`` cannot cross a "\n" but a final one
    j = text.find("#")
    while j >= 0:
        if (j == 0 or text[j - 1].isspace()) and j > last_break:
            i = j
            while i > 0 and text[i - 1].isspace():  # (re's \s is str.isspace: both are Py_UNICODE_ISSPACE)
                i -= 1
            return i
        j = text.find("#", j + 1)
    return None


def _join(segments: list[tuple[str, int]]) -> _Logical:
    where = OffsetMap()
    parts: list[str] = []
    pos = 0
    for seg, off in segments:
        where.add(pos, off, len(seg))
        parts.append(seg)
        pos += len(seg)
    text = "".join(parts)
    cut = comment_start(text)
    if cut is not None:
        text = text[:cut]
    first = segments[0][1]
    last_seg, last_off = segments[-1]
    return _Logical(text, where, Span(first, last_off + len(last_seg)))


def _words(text: str) -> list[tuple[str, int]]:
    return [(m.group(0), m.start()) for m in _WORD_RE.finditer(text)]


def parse_line(
    line: _Logical,
    *,
    constraint: bool,
    editable: bool,
    group: str | None = None,
) -> LineResult:
    """Pins, includes and problems of one logical requirements line."""
    res = LineResult()
    text = line.text
    stripped = text.strip()
    if not stripped:
        return res
    lead = len(text) - len(text.lstrip())
    if stripped.startswith("-"):
        _parse_options(line, lead, res)
        return res
    # pip's break_args_options: the requirement ends at the first " -word"
    req_end = len(text)
    for word, off in _words(text):
        if off > lead and word.startswith("-") and text[off - 1] == " ":
            req_end = off
            break
    req_text = text[:req_end]
    options = text[req_end:]
    hashed = "--hash" in options
    span = line.where.cover(lead, len(req_text.rstrip())) or line.whole
    if _looks_like_path_or_url(req_text.strip()):
        pin = _archive_pin(req_text.strip(), line, lead, span, constraint, hashed, group)
        if pin is not None:
            res.pins.append(pin)
        return res
    draft = pin_from_string(
        req_text,
        line.where,
        span,
        group=group,
        constraint=constraint,
        hashed=hashed,
        editable=editable and not hashed,
    )
    if draft.problem is not None:
        res.problems.append(draft.problem)
    if draft.pin is not None:
        if constraint and draft.pin.extras:
            res.problems.append(
                PinProblem("constraints cannot have extras (pip: 'Constraints cannot have extras')", draft.pin.span)
            )
        res.pins.append(draft.pin)
    return res


def _parse_options(line: _Logical, lead: int, res: LineResult) -> None:
    text = line.text
    words = _words(text)
    i = 0
    while i < len(words):
        word, off = words[i]
        opt, eq, val = word.partition("=")
        value: tuple[str, int] | None = None
        if eq and opt.startswith("--"):
            value = (val, off + len(opt) + 1)
        elif word[:2] in ("-r", "-c", "-e", "-i", "-f", "-C") and len(word) > 2 and not word.startswith("--"):
            opt, value = word[:2], (word[2:], off + 2)
        elif word in _VALUE_OPTS and i + 1 < len(words):
            value = words[i + 1]
            i += 1
        i += 1
        if opt in ("-r", "--requirement", "-c", "--constraint") and value is not None:
            path_text = _unquote(value[0])
            where = line.where.span(value[1], value[1] + len(value[0])) or line.whole
            res.includes.append((path_text, opt in ("-c", "--constraint"), where))


def _unquote(word: str) -> str:
    if not any(c in word for c in "'\"\\"):
        return word  # nothing shlex would change (the common case, and 20,000-line files)
    import shlex  # here, not at start-up: only a quoted word needs it

    try:
        parts = shlex.split(word)
    except ValueError:
        return word
    return parts[0] if len(parts) == 1 else word


def _looks_like_path_or_url(req: str) -> bool:
    if " @ " in req or DIRECT_REF_RE.match(req):
        return False  # PEP 508 direct reference: name @ url
    return bool(_URL_RE.match(req)) or req.startswith((".", "/", "~")) or req.endswith((".whl", ".tar.gz", ".zip"))


def _archive_pin(
    req: str, line: _Logical, lead: int, span: Span, constraint: bool, hashed: bool, group: str | None
) -> Pin | None:
    """A bare wheel/sdist path or URL: the file name names the package and version."""
    target = req.split(";", 1)[0].strip()
    found = version_from_filename(target)
    if found is not None:
        name, version = found
        return Pin(name, Located(name, span), f"=={version}", version, span, None, group=group,
                   hashed=hashed, constraint=constraint)
    egg = egg_name(target)
    if egg is not None:
        return Pin(canonical(egg), Located(egg, span), "", None, span, None, group=group,
                   hashed=hashed, constraint=constraint)
    return None


# -- compiled output -------------------------------------------------------------------------

_PIP_COMPILE_RE = _regex.compile(r"autogenerated by pip-compile", re.I)
_UV_RE = _regex.compile(r"autogenerated by uv\b", re.I)
_VIA_RE = _regex.compile(r"^\s*#\s+(?:via\s+)?(?:\(from\s+)?(-[rc])\s+(\S+?)\)?\s*$")
_VIA_WORD_RE = _regex.compile(r"^\s*#\s+via\b")


@dataclass(frozen=True, slots=True)
class CompiledInfo:
    tool: str  # "pip-tools" | "uv"
    command: str | None  # the command in the header, as written
    inputs: tuple[str, ...]  # the .in / manifest paths it names, as written


def compiled_info(text: str, has_hashes: bool) -> CompiledInfo | None:
    """Recognise pip-compile / uv pip compile output from its header, ``# via`` lines or hashes."""
    head = text[:4000].splitlines()[:40]
    tool: str | None = None
    command: str | None = None
    for i, line in enumerate(head):
        if _PIP_COMPILE_RE.search(line):
            tool = "pip-tools"
        elif _UV_RE.search(line):
            tool = "uv"
        if tool and command is None:
            for follow in head[i + 1 : i + 5]:
                body = follow.lstrip("#").strip()
                if body.startswith(("pip-compile", "uv ")):
                    command = body
                    break
        if tool:
            break
    inputs: list[str] = []
    vias = False
    for line in text.splitlines():
        if _VIA_WORD_RE.match(line):
            vias = True
        m = _VIA_RE.match(line)
        if m and m.group(1) == "-r":
            vias = True
            if m.group(2) not in inputs:
                inputs.append(m.group(2))
    if command:
        for word in _positional_args(command):
            if word not in inputs:
                inputs.insert(0, word)
    if tool is None and not vias and not has_hashes:
        return None
    return CompiledInfo(tool or "pip-tools", command, tuple(inputs))


def _positional_args(command: str) -> list[str]:
    """Input files named in a pip-compile / uv pip compile command line."""
    import shlex  # here, not at start-up: only a compiled file's header needs it

    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if words[:1] == ["uv"]:
        if words[1:3] != ["pip", "compile"]:
            return []  # uv export: the manifest is the project's pyproject
        words = words[3:]
    else:
        words = words[1:]
    takes_value = {"-o", "--output-file", "-c", "--constraint", "--constraints", "-P", "--upgrade-package",
                   "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--python-version",
                   "-p", "--python", "--extra", "--pip-args", "--cache-dir", "--overrides",
                   "--build-constraints", "-b", "--override", "--group", "--python-platform"}
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w.startswith("-"):
            if w in takes_value:
                skip = True
            continue
        out.append(w)
    return out


_PLAIN_WORD = _regex.compile(r"^[A-Za-z0-9_@%+=:,./-]+$")


def _plain_command(command: str | None) -> str | None:
    if not command:
        return None
    import shlex  # here, not at start-up: only a compiled file's header needs it

    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or not all(_PLAIN_WORD.match(w) for w in words):
        return None
    return " ".join(words)


def _relock_template(info: CompiledInfo, out_name: str) -> str | None:
    """Re-run the compile moving only the named package ({name}/{version} placeholders)."""
    # placeholders are substituted with str.replace (not format): braces in the command stay as written
    # The header is repository text: it becomes a suggested command only when every word is a
    # plain word (no `;`, `|`, `$(...)`, redirections, quotes or control characters), and is
    # then re-quoted; anything else is never offered (a `; curl ... | sh` must not ride along).
    cmd = _plain_command(info.command)
    if cmd and info.tool == "uv" and cmd.startswith("uv pip compile"):
        return cmd.replace("uv pip compile", "uv pip compile -P {name}=={version}", 1)
    if cmd and info.tool == "uv" and cmd.startswith("uv export"):
        return "uv lock --upgrade-package {name}=={version} && " + cmd
    if cmd and cmd.startswith("pip-compile"):
        return cmd.replace("pip-compile", 'pip-compile -P "{name}=={version}"', 1)
    if info.inputs and _PLAIN_WORD.match(info.inputs[0]) and _PLAIN_WORD.match(out_name):
        inp = info.inputs[0]
        if info.tool == "uv":
            return f"uv pip compile {inp} -P {{name}}=={{version}} -o {out_name}"
        return f'pip-compile -P "{{name}}=={{version}}" -o {out_name} {inp}'
    return None


# -- readers -------------------------------------------------------------------------------


def _is_constraints_name(path: Path) -> bool:
    return path.name.lower().startswith("constraint")


def read_requirements(
    source: SourceText,
    workspace: Workspace | None = None,
    *,
    constraints: bool | None = None,
) -> PinSource:
    """One requirements/constraints file. ``constraints`` None: decided from the file name.

    ``includes`` lists the ``-r``/``-c`` files (resolved against this file's directory) and, for
    compiled output, the ``.in`` it was compiled from; read them with ``read_requirements_tree``.
    """
    is_constraints = _is_constraints_name(source.path) if constraints is None else constraints
    fmt = PinFormat.CONSTRAINTS if is_constraints else PinFormat.REQUIREMENTS
    try:
        return _read(source, workspace, is_constraints, fmt)
    except Exception as exc:  # a reader never raises: the file becomes a problem
        return failed_source(source.path, fmt, f"could not read {source.path.name}: {exc}")


def _read(source: SourceText, workspace: Workspace | None, is_constraints: bool, fmt: PinFormat) -> PinSource:
    text = source.text
    lines = logical_lines(text)
    has_hashes = any("--hash" in ln.text for ln in lines)
    info = compiled_info(text, has_hashes)
    pins: list[Pin] = []
    problems: list[PinProblem] = []
    includes: dict[Path, None] = {}  # ordered and O(1) to test: 20,000 `-r` lines stay linear
    exists: dict[Path, bool] = {}
    resolved_memo: dict[str, Path | None] = {}
    for ln in lines:
        res = parse_line(ln, constraint=is_constraints, editable=info is None)
        pins.extend(res.pins)
        problems.extend(res.problems)
        for path_text, _is_c, where in res.includes:
            if path_text not in resolved_memo:
                resolved_memo[path_text] = resolve_include(source.path, path_text)
            resolved = resolved_memo[path_text]
            if resolved is None:
                problems.append(PinProblem(f"{path_text}: remote or variable requirement files are not read", where))
                continue
            includes[resolved] = None
            if resolved not in exists:
                exists[resolved] = workspace is None or workspace.exists(resolved)
            if not exists[resolved]:
                problems.append(PinProblem(f"included file not found: {path_text}", where))
    tool = None
    relock = None
    if info is not None:
        tool = info.tool
        relock = _relock_template(info, source.path.name)
        for inp in info.inputs:
            resolved = resolve_include(source.path, inp)
            if resolved is not None and resolved != source.path:
                includes.setdefault(resolved)
        if relock is None:
            # no header naming the input: a sibling ``<stem>.in`` is pip-compile's convention
            sibling = source.path.with_suffix(".in")
            if workspace is not None and workspace.exists(sibling):
                relock = f'pip-compile -P "{{name}}=={{version}}" -o {source.path.name} {sibling.name}'
                includes.setdefault(sibling)
    elif source.path.suffix == ".in":
        tool = "pip-tools"
    return PinSource(
        path=source.path,
        format=fmt,
        is_lock=info is not None,
        pins=tuple(pins),
        tool=tool,
        relock_command=relock,
        problems=tuple(problems),
        includes=tuple(includes),
    )


# pip's own: only ``${NAME}`` (upper case, digits, underscore) is expanded from the environment
_ENV_VAR_RE = _regex.compile(r"\$\{[A-Z0-9_]+\}")


def include_target(including: Path, path_text: str, *, shell: bool = False) -> Path | str:
    """The file a ``-r``/``-c`` names, resolved as pip resolves it (against the including file's
    directory, ``~`` taken literally); or why it cannot be read here: a URL (nothing is fetched),
    a ``${VAR}`` pip expands from the environment of the install (kimi-lsp does not read its
    own environment into a result). ``shell``: the path was a word of a shell command, where
    ``$`` and ``~`` are the shell's, known only where it runs."""
    if not path_text:
        return "an empty path"
    if _URL_RE.match(path_text):
        return "a URL, which kimi-lsp does not fetch"
    if shell and ("$" in path_text or path_text.startswith("~")):
        return "a shell expansion, known only where the command runs"
    m = _ENV_VAR_RE.search(path_text)
    if m is not None:
        return f"pip expands {m.group(0)} from the environment of the install, which kimi-lsp does not read"
    if "\x00" in path_text:
        return "a path with a NUL character"
    p = Path(path_text)
    if not p.is_absolute():
        p = including.parent / p
    return Path(os.path.normpath(p))


def resolve_include(including: Path, path_text: str, *, shell: bool = False) -> Path | None:
    """``include_target``'s path; None when it names nothing kimi-lsp can read."""
    got = include_target(including, path_text, shell=shell)
    return got if isinstance(got, Path) else None


def read_include(workspace: Workspace, path: Path) -> SourceText | ReadFailure:
    """An included requirements file, decoded as pip decodes it: a file that is not UTF-8 is read
    in the encoding its PEP 263 coding line names (``# -*- coding: latin-1 -*-`` on one of its first
    two lines: pip's ``auto_decode``); pip's last resort, the locale's encoding, is the
    environment's, so anything else stays unreadable."""
    got = workspace.read(path)
    if not isinstance(got, ReadFailure):
        return got
    from kimi_lsp.workspace import MAX_FILE_BYTES, read_regular

    try:  # (the same checks as the workspace's read: never a FIFO or device, never past the limit)
        data = read_regular(path, MAX_FILE_BYTES)
    except (OSError, ValueError):
        return got  # missing, not a file, too large, no permission
    decoded = pip_decode(data)
    if decoded is None:
        return got
    text, encoding = decoded
    return SourceText(got.path, text, encoding)


_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")  # (UTF-32-LE's begins as UTF-16-LE's)


def pip_decode(data: bytes) -> tuple[str, str] | None:
    """(text, codec name) as pip's ``auto_decode`` gives them for bytes without a BOM whose first or
    second line is a comment naming an encoding; None for other bytes (a BOM decides as the
    workspace read it) or when they do not decode so."""
    import codecs

    if data.startswith(_BOMS):
        return None
    coding = re.compile(rb"coding[:=]\s*([-\w.]+)")  # pip's ENCODING_RE (here: only an undecodable file needs it)
    for line in data.split(b"\n", 2)[:2]:
        m = coding.search(line) if line[:1] == b"#" else None
        if m is None:
            continue
        try:
            name = codecs.lookup(m.group(1).decode("ascii")).name
            text = data.decode(name)
        except (LookupError, UnicodeDecodeError, ValueError):
            return None
        return (text, name) if "\x00" not in text else None
    return None


def unreadable_include(
    target: Path, constraint: bool, why: str, including: SourceText, at: int, written: str,
    *, directive: str | None = None,
) -> PinSource:
    """What an include that cannot be read pins is unknown: a source with no pins and the one
    problem an unreadable pin file has (``{name}: why`` at 0:0), naming the directive (``-r``/``-c``
    and the path as written, unless ``directive`` says otherwise) and its line (of offset ``at``),
    so that the launch it governs fails closed as it does for the pin file itself."""
    line = including.lines.line_of(max(0, min(at, len(including.text)))) + 1
    shown = directive if directive is not None else f"{'-c' if constraint else '-r'} {written}"
    fmt = PinFormat.CONSTRAINTS if constraint else PinFormat.REQUIREMENTS
    message = f"{target.name}: {why} (`{shown}` on line {line} of {including.path.name})"
    return PinSource(target, fmt, False, (), problems=(PinProblem(message, Span(0, 0)),))


def _placeholder_path(including: Path, path_text: str) -> Path:
    """A path that stands for an include with no file here (a URL, ``${VAR}``): one name beside
    the including file, made of the text as written, so that no real file can be mistaken for it."""
    return including.parent / path_text.replace("%", "%25").replace("/", "%2F").replace("\x00", "%00")


def read_included(
    workspace: Workspace,
    including: SourceText,
    path_text: str,
    constraint: bool | None,
    at: int,
    *,
    shell: bool = False,
    budget: list[int] | None = None,
    unread: list[PinSource] | None = None,
) -> tuple[PinSource, ...]:
    """One ``-r``/``-c`` of ``including`` (at offset ``at`` of its text): the tree of the file it
    names, or the source that says why that file cannot be read. ``unread``: where to add the
    sources of includes that cannot be read, for the caller to ``settle_unread`` over everything
    it read (None: kept)."""
    target = include_target(including.path, path_text, shell=shell)
    is_c = bool(constraint)
    if isinstance(target, str):
        got: SourceText | ReadFailure | None = None
        placeholder = unreadable_include(_placeholder_path(including.path, path_text), is_c, target, including, at, path_text)
    else:
        got = read_include(workspace, target)
        if isinstance(got, SourceText):
            return read_requirements_tree(got, workspace, constraints=constraint, budget=budget, unread=unread)
        placeholder = unreadable_include(target, is_c, got.reason, including, at, path_text)
    if unread is not None:
        unread.append(placeholder)
    return (placeholder,)


# What a requirements tree must pin for an include it cannot read to fail the launch closed: the
# stack a Kimi-K3 launch runs on. A tree that pins neither is another install (docs, tests, lint
# tools): its dangling ``-r`` stays a problem of the file that names it ("included file not found")
# and hides nothing a launch needs, so a good pin beside it decides (zero false positives).
_STACK_NAMES = ("sglang", "flashinfer")


def settle_unread(sources: list[PinSource], unread: list[PinSource]) -> tuple[PinSource, ...]:
    """``sources`` with the ``unread`` ones (``unreadable_include``'s) kept only when ``sources``
    pin the launch's stack (sglang, a flashinfer package)."""
    if not unread or any(p.name.startswith(_STACK_NAMES) for s in sources for p in s.pins):
        return tuple(sources)
    drop = {id(s) for s in unread}
    return tuple(s for s in sources if id(s) not in drop)


def read_requirements_tree(
    source: SourceText,
    workspace: Workspace,
    *,
    constraints: bool | None = None,
    budget: list[int] | None = None,
    unread: list[PinSource] | None = None,
) -> tuple[PinSource, ...]:
    """The file and every file it includes with ``-r``/``-c`` (recursively, each once, at any
    depth, as pip does), each its own PinSource so that pins keep their own path. Files reached
    through ``-c`` are read as constraints (format "constraints", pins ``constraint=True``), as pip
    does for the file named by ``-c`` (a ``-r`` inside it is a plain requirements file again).

    An include that cannot be read (missing, not a file, too large, undecodable, a URL, a
    ``${VAR}``) becomes a source with no pins and the reason (``unreadable_include``): what it
    would pin is unknown, so a launch whose stack the tree installs is never proven safe by
    leaving it out (``settle_unread``; ``unread``: a caller reading more than this tree settles
    it over all it read). So does the first include past ``_MAX_INCLUDED_FILES`` (``budget``:
    files left, shared by a caller that reads several trees).
    """
    left = budget if budget is not None else [_MAX_INCLUDED_FILES]
    lost: list[PinSource] = unread if unread is not None else []
    first = read_requirements(source, workspace, constraints=constraints)
    out = [first]
    left[0] -= 1
    seen = {(source.path, first.format is PinFormat.CONSTRAINTS)}
    todo: deque[SourceText] = deque([source])
    while todo:
        src = todo.popleft()
        for (path_text, is_c), at in _include_directives(src).items():
            target = include_target(src.path, path_text)
            if isinstance(target, str):
                lost.append(unreadable_include(_placeholder_path(src.path, path_text), is_c, target, src, at, path_text))
                out.append(lost[-1])
                continue
            if (target, is_c) in seen:
                continue  # already read: pip would loop forever on a cycle, we don't
            seen.add((target, is_c))
            if left[0] <= 0:
                why = f"more than {_MAX_INCLUDED_FILES} requirements files are included; kimi-lsp reads no further"
                lost.append(unreadable_include(target, is_c, why, src, at, path_text))
                out.append(lost[-1])
                todo.clear()
                break
            got = read_include(workspace, target)
            if isinstance(got, ReadFailure):
                lost.append(unreadable_include(target, is_c, got.reason, src, at, path_text))
                out.append(lost[-1])
                continue
            left[0] -= 1
            out.append(read_requirements(got, workspace, constraints=is_c))
            todo.append(got)
    return tuple(out) if unread is not None else settle_unread(out, lost)


def _include_directives(source: SourceText) -> dict[tuple[str, bool], int]:
    """Each ``-r``/``-c`` of the file once, with the offset of its first occurrence."""
    out: dict[tuple[str, bool], int] = {}
    try:
        for ln in logical_lines(source.text):
            if "-" not in ln.text:
                continue
            res = parse_line(ln, constraint=False, editable=False)
            for p, c, where in res.includes:
                out.setdefault((p, c), where.start)
    except Exception:
        return out
    return out


def read_line_string(
    value: str,
    where: OffsetMap,
    whole: Span,
    *,
    constraint: bool = False,
    group: str | None = None,
) -> LineResult:
    """One requirements-syntax line held somewhere else (a conda ``pip:`` entry)."""
    line = _Logical(value, where, whole)
    cut = comment_start(value)
    if cut is not None:
        line.text = value[:cut]
    return parse_line(line, constraint=constraint, editable=True, group=group)

