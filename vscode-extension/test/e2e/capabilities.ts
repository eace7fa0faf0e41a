// Client capabilities shaped like those vscode-languageclient 11 sends from VS Code, with one
// deliberate difference: no `textDocument.diagnostic`, so the server pushes diagnostics
// (publishDiagnostics) instead of waiting to be pulled. `pull: true` adds it back.

import { ClientCapabilities } from 'vscode-languageserver-protocol/node';

export function vscodeLikeCapabilities(opts: { pull?: boolean } = {}): ClientCapabilities {
  const caps: ClientCapabilities = {
    general: {
      positionEncodings: ['utf-16'],
      regularExpressions: { engine: 'ECMAScript', version: 'ES2020' },
      markdown: { parser: 'marked', version: '1.1.0' },
      staleRequestSupport: {
        cancel: true,
        retryOnContentModified: ['textDocument/semanticTokens/full', 'textDocument/semanticTokens/range', 'textDocument/semanticTokens/full/delta'],
      },
    },
    window: {
      workDoneProgress: true,
      showMessage: { messageActionItem: { additionalPropertiesSupport: true } },
      showDocument: { support: true },
    },
    workspace: {
      applyEdit: true,
      workspaceEdit: {
        documentChanges: true,
        resourceOperations: ['create', 'rename', 'delete'],
        failureHandling: 'textOnlyTransactional',
        normalizesLineEndings: true,
        changeAnnotationSupport: { groupsOnLabel: true },
      },
      didChangeConfiguration: { dynamicRegistration: true },
      didChangeWatchedFiles: { dynamicRegistration: true, relativePatternSupport: true },
      symbol: { dynamicRegistration: true },
      executeCommand: { dynamicRegistration: true },
      configuration: true,
      workspaceFolders: true,
      semanticTokens: { refreshSupport: true },
      codeLens: { refreshSupport: true },
      inlineValue: { refreshSupport: true },
      inlayHint: { refreshSupport: true },
      fileOperations: {
        dynamicRegistration: true,
        didCreate: true,
        didRename: true,
        didDelete: true,
        willCreate: true,
        willRename: true,
        willDelete: true,
      },
    },
    notebookDocument: { synchronization: { dynamicRegistration: true, executionSummarySupport: true } },
    textDocument: {
      synchronization: { dynamicRegistration: true, willSave: true, willSaveWaitUntil: true, didSave: true },
      publishDiagnostics: {
        relatedInformation: true,
        versionSupport: false,
        tagSupport: { valueSet: [1, 2] },
        codeDescriptionSupport: true,
        dataSupport: true,
      },
      completion: {
        dynamicRegistration: true,
        contextSupport: true,
        completionItem: {
          snippetSupport: true,
          commitCharactersSupport: true,
          documentationFormat: ['markdown', 'plaintext'],
          deprecatedSupport: true,
          preselectSupport: true,
          tagSupport: { valueSet: [1] },
          insertReplaceSupport: true,
          resolveSupport: { properties: ['documentation', 'detail', 'additionalTextEdits'] },
          insertTextModeSupport: { valueSet: [1, 2] },
          labelDetailsSupport: true,
        },
        insertTextMode: 2,
        completionItemKind: { valueSet: Array.from({ length: 25 }, (_, i) => (i + 1) as 1) },
        completionList: { itemDefaults: ['commitCharacters', 'editRange', 'insertTextFormat', 'insertTextMode', 'data'] },
      },
      hover: { dynamicRegistration: true, contentFormat: ['markdown', 'plaintext'] },
      codeAction: {
        dynamicRegistration: true,
        isPreferredSupport: true,
        disabledSupport: true,
        dataSupport: true,
        resolveSupport: { properties: ['edit'] },
        codeActionLiteralSupport: {
          codeActionKind: {
            valueSet: ['', 'quickfix', 'refactor', 'refactor.extract', 'refactor.inline', 'refactor.rewrite', 'source', 'source.organizeImports'],
          },
        },
        honorsChangeAnnotations: true,
      },
      definition: { dynamicRegistration: true, linkSupport: true },
      documentSymbol: { dynamicRegistration: true, hierarchicalDocumentSymbolSupport: true },
    },
  };
  if (opts.pull) {
    caps.textDocument!.diagnostic = { dynamicRegistration: true, relatedDocumentSupport: false };
    caps.workspace!.diagnostics = { refreshSupport: true };
  }
  return caps;
}
