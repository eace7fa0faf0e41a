"""Launches written in documentation: Markdown/MDX fences and reStructuredText code blocks.

Deploy guides, cookbooks and READMEs are where most launches are written and copied from. Only
code blocks are read, never prose: shell blocks (``bash``, ``console`` with ``$`` prompts, an
untagged fence) with the shell reader, ``yaml`` blocks as an sglang ``--config`` or a
Kubernetes/compose manifest, ``dockerfile`` blocks with the Dockerfile reader. Each block is read
on ``syntax.markdown.code_view`` of the document (same length, everything else blanked), so the
positions are the document's own. A block's shell or YAML syntax is not reported: documentation
is not run as written, and a half-written example is not a broken file. The document's own
``pip install sglang==…`` blocks are its release evidence (``pins.install_cmds``, kind markdown).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kimi_lsp._record import replace
from kimi_lsp.surfaces.model import LaunchCommand, Surface, SurfaceResult
from kimi_lsp.surfaces.shell import (
    FlatSource,
    LaunchContext,
    function_spans,
    launches_from_commands,
    launches_in_source,
    lex,
    mentions_sglang,
    written_launches,
)
from kimi_lsp.syntax import markdown as md
from kimi_lsp.text import Span

RST_SUFFIXES = frozenset({".rst"})


def blocks_in(path: Path, text: str) -> list[md.CodeBlock]:
    return md.code_blocks(text, rst=path.suffix.lower() in RST_SUFFIXES)


def read_markdown(
    path: Path,
    text: str,
    read_yaml: Callable[[Path, str], SurfaceResult] | None = None,
) -> SurfaceResult:
    """Launches in the code blocks of a documentation file. ``read_yaml`` reads one YAML block
    (the view of the document with only that block kept) the way a YAML file is read."""
    if not mentions_sglang(text):
        return SurfaceResult()
    blocks = blocks_in(path, text)
    launches: list[LaunchCommand] = []
    ctx = LaunchContext(path, Surface.MARKDOWN, path.parent)
    shell_blocks = [b for b in md.blocks_of(blocks, md.SHELL_LANGS) if not md.looks_like_yaml(text, b)]
    yaml_blocks = md.blocks_of(blocks, md.YAML_LANGS) + [b for b in md.blocks_of(blocks, md.SHELL_LANGS) if md.looks_like_yaml(text, b)]
    for block in shell_blocks:
        launches.extend(shell_block_launches(text, block, ctx))
    for block in yaml_blocks:
        if read_yaml is None or not mentions_sglang_or_config(text[block.body.start : block.body.end]):
            continue
        got = read_yaml(path, md.code_view(text, [block]))
        launches.extend(replace(lc, own_pins=False) for lc in got.launches)
    for block in md.blocks_of(blocks, md.PYTHON_LANGS):
        launches.extend(python_block_launches(path, text, block))
    for block in md.blocks_of(blocks, md.UNIT_LANGS):
        if "ExecStart" in text[block.body.start : block.body.end] and mentions_sglang(text[block.body.start : block.body.end]):
            from kimi_lsp.surfaces.other_files import unit_launches

            launches.extend(unit_launches(path, text, block.body, Surface.MARKDOWN))
    for block in md.blocks_of(blocks, md.TEXT_LANGS):
        found = shell_block_launches(text, block, ctx)
        launches.extend(replace(lc, doubt=_TEXT_DOUBT) for lc in found)
    for block in md.blocks_of(blocks, md.DOCKERFILE_LANGS):
        if not mentions_sglang(text[block.body.start : block.body.end]):
            continue
        from kimi_lsp.surfaces.dockerfile import read_dockerfile

        got = read_dockerfile(path, md.code_view(text, [block]))
        launches.extend(_as_doc(lc) for lc in got.launches)
    return SurfaceResult(launches=tuple(launches), is_launch_file=bool(launches), reads=tuple(dict.fromkeys(ctx.reads)))


def shell_block_launches(text: str, block: md.CodeBlock, ctx: LaunchContext, base: int = 0) -> list[LaunchCommand]:
    """Launches of one shell block of ``text``. ``text`` is the document, or a part of it that
    starts at offset ``base`` and holds the block and its last line break (fix vetting re-reads
    one edited block this way, not the whole document once per fix)."""
    if not mentions_sglang(text[block.body.start : block.body.end]):
        return []
    # the block alone, at its own offset (the rest of the document is blank in the view
    # anyway), with its last line break: a final `\` continues onto nothing, as in the document
    end = block.body.end
    end += 2 if text.startswith("\r\n", end) else 1 if text.startswith("\n", end) else 0
    view = md.code_view(text, [block], shell=True, window=Span(block.body.start, end))
    src = FlatSource(view, base + block.body.start)
    commands, _problems = lex(src)  # an example's syntax is not reported
    return [*launches_from_commands(commands, ctx, functions=function_spans(src)), *written_launches(src, commands, ctx)]


_TEXT_DOUBT = "kimi-lsp only guesses this is a launch: it is written in a plain-text block, which may show output"
_MISLABELLED_DOUBT = "kimi-lsp only guesses this is a launch: it is written in a Python block that is not Python"
# what a command in a Python block that is no Python starts with (a shell line labelled python)
_SHELL_LAUNCH = ("sglang.launch_server", "sglang serve", "sglang.cli.main")
# ``if 1:`` written where the view is blank, before an indented block (a fence in a list item,
# every reStructuredText block): the block's lines are then its body, and positions stay the same
_INDENT_HEAD = "if 1:"


def python_block_launches(path: Path, text: str, block: md.CodeBlock) -> list[LaunchCommand]:
    """Launches of one Python block, read with the Python reader on the block's own window of
    the view (positions are the document's): ``launch_server_cmd("...")``, ``sgl.Engine(...)``,
    argv lists; IPython's ``!cmd`` lines and ``%%bash`` bodies with the shell reader, as in a
    notebook cell. A block labelled Python that is not Python but a launch command (a shell line
    people label ``python``) is read as shell, with a doubt."""
    body = text[block.body.start : block.body.end]
    if not mentions_sglang(body):
        return []
    # with the first Python block: a document of shell blocks loads no AST reader
    from kimi_lsp.surfaces.python import python_launches
    from kimi_lsp.syntax import notebook as nb
    from kimi_lsp.syntax import python as py

    start = block.body.start
    if block.indent:
        head = _head_line(text, start)
        if head is None:
            return []  # no room to say the block is a body: not read (never mislocated)
        start = head
    view = md.code_view(text, [block], window=Span(start, block.body.end))
    if block.indent:
        view = _INDENT_HEAD + view[len(_INDENT_HEAD) :]
    cell = nb.Cell(0, "code", FlatSource(view, start).sub(view, [(k, k + 1) for k in range(len(view))]), block.body)
    out: list[LaunchCommand] = []
    ctx = LaunchContext(path, Surface.MARKDOWN, path.parent)
    for part in nb.shell_parts(cell):
        if mentions_sglang(part.text):
            out.extend(launches_in_source(part, ctx))
    code = nb.python_text(cell)
    if code is None:
        return out
    if py.parse(code) is None:
        if any(w in body for w in _SHELL_LAUNCH):
            found = shell_block_launches(text, block, LaunchContext(path, Surface.MARKDOWN, path.parent))
            out.extend(replace(lc, doubt=_MISLABELLED_DOUBT) for lc in found)
        return out
    out.extend(python_launches(path, code, FlatSource(view, start), Surface.MARKDOWN))
    return out


def _head_line(text: str, body_start: int) -> int | None:
    """The start of the nearest line above the block (its fence or directive, or a line between)
    long enough to hold ``if 1:``; None when there is none within a few lines."""
    end = body_start - 1  # the line break before the body
    for _ in range(8):
        if end <= 0:
            return None
        a = text.rfind("\n", 0, end) + 1
        if len(text[a:end].rstrip("\r")) >= len(_INDENT_HEAD):
            return a
        end = a - 1
    return None


def mentions_sglang_or_config(block: str) -> bool:
    """A YAML block worth reading: it names sglang, or it may be an sglang ``--config`` (a
    ``model-path`` key)."""
    return mentions_sglang(block) or "model-path:" in block or "model_path:" in block


def _as_doc(lc: LaunchCommand) -> LaunchCommand:
    """A launch of a Dockerfile block still lives in the document: its pins are the document's
    install blocks, not the document read as a whole Dockerfile."""
    return replace(lc, surface=Surface.MARKDOWN, own_pins=False)
