"""Registration of the features the first diagnostics do not need: completion, hover, code
actions. Their modules (and what they import: the fix planner, the rules catalogue, flag docs,
cursor reading) load on their first request, so that a server starts and publishes its first
diagnostics with only the lint path imported (bench/lsp_latency.py measures start-up against
``python -c "import pygls.lsp.server"``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as T

if TYPE_CHECKING:
    from kimi_lsp.lsp.server import KimiLanguageServer

FIX_ALL = "source.fixAll.kimi-lsp"  # code_actions.FIX_ALL (named here so that options need no import)


def register(ls: KimiLanguageServer) -> None:
    completion_options = T.CompletionOptions(trigger_characters=["-", ":", "="], resolve_provider=True)

    @ls.feature(T.TEXT_DOCUMENT_COMPLETION, completion_options)
    async def completion(ls: KimiLanguageServer, params: T.CompletionParams) -> T.CompletionList | None:
        from kimi_lsp.lsp import completion as impl

        if ls.session is None:
            return None
        return await ls.on_lint_thread(
            impl.complete, ls.session, ls.snapshots(), params.text_document.uri, params.position, impl.client_shape(ls)
        )

    @ls.feature(T.COMPLETION_ITEM_RESOLVE)
    def completion_resolve(ls: KimiLanguageServer, item: T.CompletionItem) -> T.CompletionItem:
        from kimi_lsp.lsp import completion as impl

        return impl.resolve_item(item)

    @ls.feature(T.TEXT_DOCUMENT_HOVER)
    async def hover(ls: KimiLanguageServer, params: T.HoverParams) -> T.Hover | None:
        from kimi_lsp.lsp import hover as impl

        if ls.session is None:
            return None
        return await ls.on_lint_thread(impl.hover_at, ls.session, ls.snapshots(), params.text_document.uri, params.position)

    action_options = T.CodeActionOptions(
        code_action_kinds=[T.CodeActionKind.QuickFix, T.CodeActionKind.SourceFixAll, FIX_ALL], resolve_provider=True
    )

    @ls.feature(T.TEXT_DOCUMENT_CODE_ACTION, action_options)
    async def code_action(ls: KimiLanguageServer, params: T.CodeActionParams) -> list[T.CodeAction] | None:
        from kimi_lsp.lsp import code_actions as impl

        if ls.session is None:
            return None
        notebook = None
        if ls.notebooks and ls.path_of(params.text_document.uri) is None:  # a notebook cell
            from kimi_lsp.lsp import notebooks

            on_cell = notebooks.cell_action_params(ls, params)
            if on_cell is None:
                return None
            params, notebook = on_cell
        actions = await ls.on_lint_thread(impl.list_actions, ls.session, ls.snapshots(), params, notebook)
        if not impl.can_resolve(ls):
            actions = [await impl.resolve(ls, a) for a in actions]
        return actions or None

    @ls.feature(T.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: KimiLanguageServer, action: T.CodeAction) -> T.CodeAction:
        from kimi_lsp.lsp import code_actions as impl

        return await impl.resolve(ls, action)
