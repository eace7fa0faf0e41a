"""Hover, completion, configuration, positions and robustness, end to end over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as T

from .conftest import (
    diagnostics,
    eventually,
    lsp,
    make_project,
    open_doc,
    push_capabilities,
    utf8_capabilities,
)

pytestmark = pytest.mark.asyncio

PREFIX = 'echo "模型 🚀 ünïcode" && python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --dcp-size 8 '
SCRIPT = f"#!/bin/bash\n{PREFIX}--decode-attention-backend cutedsl_mla\n"


def _utf16(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


async def test_hover_on_yaml_key_flag_and_pin(tmp_path: Path) -> None:
    serve = "python -m sglang.launch_server --model-path moonshotai/Kimi-K3 --dcp-size 4\n"
    project = make_project(tmp_path, {"deploy/serve.sh": serve})
    async with lsp(project, push_capabilities()) as client:
        u = open_doc(client, project / "k3.yaml")
        await diagnostics(client, u)
        hover = await client.text_document_hover_async(
            T.HoverParams(text_document=T.TextDocumentIdentifier(uri=u), position=T.Position(line=2, character=5))
        )
        text = hover.contents.value
        assert "`--decode-attention-backend`" in text and "cutedsl_mla" in text
        assert "sglang 0." in text and "choices" in text
        assert hover.range.start == T.Position(line=2, character=0)
        assert hover.range.end == T.Position(line=2, character=len("decode-attention-backend"))

        # the pin line: what the version means for the launches that depend on it, open or not
        ru = open_doc(client, project / "requirements.txt", "pip-requirements")
        hover = await client.text_document_hover_async(
            T.HoverParams(text_document=T.TextDocumentIdentifier(uri=ru), position=T.Position(line=0, character=3))
        )
        assert "lacks `enable_dcp`" in hover.contents.value
        assert "`k3.yaml`: KL101" in hover.contents.value
        assert "`deploy/serve.sh`: KL101" in hover.contents.value


async def test_hover_on_suppression_code_shows_rule_docs(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"k3.yaml": "model-path: moonshotai/Kimi-K3  # kimi-lsp: ignore[KL101]\n"})
    async with lsp(root, push_capabilities()) as client:
        u = open_doc(client, root / "k3.yaml")
        line = (root / "k3.yaml").read_text().splitlines()[0]
        hover = await client.text_document_hover_async(
            T.HoverParams(
                text_document=T.TextDocumentIdentifier(uri=u),
                position=T.Position(line=0, character=line.index("KL101") + 2),
            )
        )
        assert "KL101 flashinfer-lacks-enable-dcp" in hover.contents.value


async def test_completion_of_keys_flags_and_values(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "k3.yaml": "model-path: moonshotai/Kimi-K3\ndcp-si\ndecode-attention-backend: cut\n",
            "serve.sh": "python -m sglang.launch_server --tp\n",
        },
    )
    async with lsp(root, push_capabilities()) as client:
        u = open_doc(client, root / "k3.yaml")
        result = await client.text_document_completion_async(
            T.CompletionParams(text_document=T.TextDocumentIdentifier(uri=u), position=T.Position(line=1, character=6))
        )
        by_label = {i.label: i for i in result.items}
        item = by_label["dcp-size"]
        assert item.text_edit.new_text == "dcp-size: "
        assert item.text_edit.range.start == T.Position(line=1, character=0)
        assert all(i.label.startswith("dcp-si") for i in result.items)  # filtered by what is typed
        assert result.is_incomplete is False
        doc = (await client.completion_item_resolve_async(item)).documentation
        assert "decode context parallelism" in doc.value

        result = await client.text_document_completion_async(
            T.CompletionParams(text_document=T.TextDocumentIdentifier(uri=u), position=T.Position(line=2, character=29))
        )
        values = {i.label: i for i in result.items}
        assert set(values) == {"cutedsl_mla"}
        assert values["cutedsl_mla"].text_edit.range.start == T.Position(line=2, character=26)
        result = await client.text_document_completion_async(
            T.CompletionParams(text_document=T.TextDocumentIdentifier(uri=u), position=T.Position(line=2, character=26))
        )
        values = {i.label: i for i in result.items}
        assert "cutedsl_mla" in values and "flashinfer" in values  # nothing typed yet: every choice
        assert T.CompletionItemTag.Deprecated in (values["tokenspeed_mla"].tags or ())

        su = open_doc(client, root / "serve.sh", "shellscript")
        result = await client.text_document_completion_async(
            T.CompletionParams(
                text_document=T.TextDocumentIdentifier(uri=su), position=T.Position(line=0, character=35)
            )
        )
        labels = {i.label for i in result.items}
        assert "--tp-size" in labels and "tp-size" not in labels
        assert all("tp" in label for label in labels) and len(labels) < 20


async def test_completion_on_a_half_written_config(tmp_path: Path) -> None:
    """A typo in another key, an ambiguous prefix and a YAML syntax error below the cursor do not
    stop completion; deprecated spellings keep their tag; an empty prefix gets a cut list that
    the client is told to ask for again."""
    text = (
        "model-path: moonshotai/Kimi-K3\n"
        "tp-sise: 8\n"  # a typo
        "dis: true\n"  # an ambiguous prefix
        "disable-cu\n"  # the cursor: line 3
        "decode-attention-backend: [cutedsl_mla\n"  # a flow sequence never closed
        "\n"
    )
    root = make_project(tmp_path, {"k3.yaml": text})
    async with lsp(root, push_capabilities()) as client:
        u = open_doc(client, root / "k3.yaml")
        at = lambda line, col: T.CompletionParams(  # noqa: E731
            text_document=T.TextDocumentIdentifier(uri=u), position=T.Position(line=line, character=col)
        )
        result = await client.text_document_completion_async(at(3, 10))
        assert result is not None and result.is_incomplete is False
        by_label = {i.label: i for i in result.items}
        assert "disable-cuda-graph" in by_label and all(lb.startswith("disable-cu") for lb in by_label)
        assert T.CompletionItemTag.Deprecated in (by_label["disable-cuda-graph"].tags or ())
        assert by_label["disable-cuda-graph"].text_edit.new_text == "disable-cuda-graph: "

        result = await client.text_document_completion_async(at(5, 0))  # an empty line
        assert result is not None and result.is_incomplete is True and 0 < len(result.items) <= 100

        client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                text_document=T.VersionedTextDocumentIdentifier(uri=u, version=2),
                content_changes=[T.TextDocumentContentChangeWholeDocument(text=text.replace("disable-cu\n", "backend\n"))],
            )
        )
        result = await client.text_document_completion_async(at(3, 7))
        labels = {i.label for i in result.items}
        assert {"attention-backend", "decode-attention-backend"} <= labels  # a part of the name
        assert all("backend" in lb for lb in labels)


async def test_configuration_select_and_ignore(project: Path) -> None:
    async with lsp(project, push_capabilities(), settings={"ignore": ["KL101"]}) as client:
        u = open_doc(client, project / "k3.yaml")
        await eventually(lambda: u in client.diagnostics, what="first publish")
        assert list(client.diagnostics[u]) == []
        # the user changes the settings: re-read on didChangeConfiguration
        client.set_configuration({"kimi-lsp": {"select": ["KL1"]}})
        client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
        (d,) = await diagnostics(client, u)
        assert d.code == "KL101"
        client.set_configuration({"kimi-lsp": {"select": ["KL2"]}})
        client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
        await diagnostics(client, u, lambda ds: ds == [])


async def test_project_configuration_wins_unless_editor_preferred(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"kimi-lsp.toml": 'select = ["KL1"]\n'})
    async with lsp(root, push_capabilities(), settings={"ignore": ["KL101"]}) as client:
        u = open_doc(client, root / "k3.yaml")
        (d,) = await diagnostics(client, u)
        assert d.code == "KL101"
        client.set_configuration({"kimi-lsp": {"ignore": ["KL101"], "configurationPreference": "editor"}})
        client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
        await diagnostics(client, u, lambda ds: ds == [])


async def test_utf16_positions_after_non_ascii_text(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"serve.sh": SCRIPT})
    async with lsp(root, push_capabilities()) as client:
        assert client.init_result.capabilities.position_encoding in (None, T.PositionEncodingKind.Utf16)
        u = open_doc(client, root / "serve.sh", "shellscript")
        (d,) = await diagnostics(client, u)
        assert d.range.start == T.Position(line=1, character=_utf16(PREFIX))
        assert _utf16(PREFIX) != len(PREFIX)  # the emoji takes two UTF-16 units
        hover = await client.text_document_hover_async(
            T.HoverParams(
                text_document=T.TextDocumentIdentifier(uri=u), position=T.Position(line=1, character=_utf16(PREFIX) + 3)
            )
        )
        assert "`--decode-attention-backend`" in hover.contents.value
        assert hover.range.start.character == _utf16(PREFIX)


async def test_utf8_is_negotiated_when_offered(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"serve.sh": SCRIPT})
    async with lsp(root, utf8_capabilities()) as client:
        assert client.init_result.capabilities.position_encoding == T.PositionEncodingKind.Utf8
        u = open_doc(client, root / "serve.sh", "shellscript")
        (d,) = await diagnostics(client, u)
        assert d.range.start == T.Position(line=1, character=len(PREFIX.encode("utf-8")))


async def test_broken_yaml_is_kl001_and_server_stays_up(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"broken.yaml": "model-path: moonshotai/Kimi-K3\ndcp-size: [8\n"})
    async with lsp(root, push_capabilities()) as client:
        bu = open_doc(client, root / "broken.yaml")
        (d,) = await diagnostics(client, bu)
        assert d.code == "KL001" and d.range.start.line == 2
        # garbage of every kind, then the server still answers
        client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                text_document=T.VersionedTextDocumentIdentifier(uri=bu, version=2),
                content_changes=[T.TextDocumentContentChangeWholeDocument(text="\x00\ufeff: : [\n\t- {\n")],
            )
        )
        u = open_doc(client, root / "k3.yaml")
        (d,) = await diagnostics(client, u)
        assert d.code == "KL101"
        hover = await client.text_document_hover_async(
            T.HoverParams(text_document=T.TextDocumentIdentifier(uri=bu), position=T.Position(line=40, character=99))
        )
        assert hover is None


async def test_hover_on_a_launch_shows_its_release_and_evidence(tmp_path: Path) -> None:
    # nothing beside the script pins sglang; the matrix that names it gives its image
    serve = "#!/bin/bash\npython3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --cuda-graph-max-bs 256\n"
    matrix = 'bench:\n  image: lmsysorg/sglang:v0.5.12-cu129\n  script: "bench_{gpu}.sh"\n'
    project = make_project(tmp_path, {"bench/bench_h100.sh": serve, "configs/matrix.yaml": matrix})
    (project / "requirements.txt").unlink()
    async with lsp(project, push_capabilities()) as client:
        u = open_doc(client, project / "bench/bench_h100.sh", "shellscript")
        await diagnostics(client, u)
        on_program = await client.text_document_hover_async(
            T.HoverParams(text_document=T.TextDocumentIdentifier(uri=u), position=T.Position(line=1, character=12)))
        text = on_program.contents.value
        assert "sglang launch" in text and "0.5.12" in text and "configs/matrix.yaml:2" in text
        on_flag = await client.text_document_hover_async(
            T.HoverParams(text_document=T.TextDocumentIdentifier(uri=u), position=T.Position(line=1, character=70)))
        assert "`--cuda-graph-max-bs`" in on_flag.contents.value and "configs/matrix.yaml:2" in on_flag.contents.value
