// End to end against the real Python server (`python3 -m kimi_lsp serve`, run from ../server so no
// installation is needed), through vscode-languageserver-protocol, the protocol layer VS Code's
// client is built on. The flow is what a VS Code user does: open a Kimi-K3 DCP launch, see KL101,
// take the quick-fix that bumps the flashinfer pin in requirements.txt, and see the error go.
//
// KIMI_LSP_PYTHON picks the interpreter (default python3); it needs the server's dependencies
// (pygls 2, lsprotocol, pyyaml, tomlkit, packaging).

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, test } from 'node:test';

import * as P from 'vscode-languageserver-protocol/node';

import { interpreterInvocation } from '../../src/common/args';
import { COMMANDS, FIX_ALL_KIND, MIN_SERVER_VERSION } from '../../src/common/constants';
import { exec, isExecutableFile } from '../../src/common/node';
import { resolveServer } from '../../src/common/resolve';
import { isAtLeast } from '../../src/common/version';
import { vscodeLikeCapabilities } from './capabilities';
import { PYTHON, SERVER_DIR, TestClient } from './client';
import { applyTextEdits } from './edits';

const K3_YAML = 'model-path: moonshotai/Kimi-K3\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\n';
const OLD_PIN = 'flashinfer-python==0.6.16.post4\n';
const TEST_TIMEOUT = 60_000;

const tmpRoots: string[] = [];
after(() => {
  for (const d of tmpRoots) {
    rmSync(d, { recursive: true, force: true });
  }
});

interface Project {
  root: string;
  rootUri: string;
  k3: string;
  k3Uri: string;
  req: string;
  reqUri: string;
}

function makeProject(): Project {
  const root = mkdtempSync(join(tmpdir(), 'kimi-lsp-e2e-'));
  tmpRoots.push(root);
  mkdirSync(join(root, '.git'));
  const k3 = join(root, 'k3.yaml');
  const req = join(root, 'requirements.txt');
  writeFileSync(k3, K3_YAML);
  writeFileSync(req, OLD_PIN);
  const uri = (p: string) => pathToFileURL(p).href;
  return { root, rootUri: uri(root), k3, k3Uri: uri(k3), req, reqUri: uri(req) };
}

async function start(project: Project): Promise<{ client: TestClient; init: P.InitializeResult }> {
  const client = new TestClient(project.root);
  const init = await client.initialize({
    clientInfo: { name: 'Visual Studio Code', version: '1.91.0' },
    locale: 'en',
    rootPath: project.root,
    rootUri: project.rootUri,
    workspaceFolders: [{ uri: project.rootUri, name: 'k3' }],
    capabilities: vscodeLikeCapabilities(),
    initializationOptions: { settings: { configurationPreference: 'project' } },
    trace: 'off',
  });
  return { client, init };
}

function open(client: TestClient, uri: string, languageId: string, text: string, version = 1): Promise<void> {
  return client.conn.sendNotification(P.DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId, version, text } });
}

/**
 * A CodeAction rather than a bare Command. (P.CodeAction.is wants an edit or a command, so it
 * rejects exactly the unresolved actions that codeAction/resolve exists for.)
 */
function isCodeAction(a: P.Command | P.CodeAction): a is P.CodeAction {
  return typeof a.command !== 'string';
}

function kl101(diags: P.Diagnostic[]): P.Diagnostic | undefined {
  return diags.find((d) => d.code === 'KL101');
}

/** Ask for code actions on the KL101 diagnostic, as VS Code does for the light bulb, and resolve the pin bump. */
async function bumpAction(client: TestClient, p: Project, diag: P.Diagnostic): Promise<P.CodeAction> {
  const actions = await client.conn.sendRequest(P.CodeActionRequest.type, {
    textDocument: { uri: p.k3Uri },
    range: diag.range,
    context: { diagnostics: [diag], triggerKind: P.CodeActionTriggerKind.Invoked },
  });
  assert.ok(actions && actions.length, 'the server offered no code action for KL101');
  const quickfixes = actions.filter((a): a is P.CodeAction => isCodeAction(a) && a.kind === P.CodeActionKind.QuickFix);
  const bump = quickfixes.find((a) => /flashinfer/i.test(a.title) && a.diagnostics?.some((d) => d.code === 'KL101'));
  assert.ok(bump, `no flashinfer quick-fix among: ${actions.map((a) => a.title).join(' | ')}`);
  assert.equal(bump.edit, undefined, 'the edit is left to codeAction/resolve for a client with resolveSupport');
  const resolved = await client.conn.sendRequest(P.CodeActionResolveRequest.type, bump);
  assert.ok(resolved.edit, `codeAction/resolve returned no edit for "${bump.title}"`);
  return resolved;
}

/** The single TextDocumentEdit of a resolved pin bump, checked to target requirements.txt. */
function pinEdit(action: P.CodeAction, p: Project): { version: number | null; edits: P.TextEdit[] } {
  const edit = action.edit!;
  assert.equal(edit.changes, undefined, 'a client with documentChanges support gets documentChanges');
  assert.ok(edit.documentChanges, 'no documentChanges in the WorkspaceEdit');
  const textEdits = edit.documentChanges.filter((c): c is P.TextDocumentEdit => P.TextDocumentEdit.is(c));
  assert.equal(textEdits.length, edit.documentChanges.length, 'only text edits are expected (no file operations)');
  assert.equal(textEdits.length, 1, `expected one document edit, got ${textEdits.map((t) => t.textDocument.uri).join(', ')}`);
  const [tde] = textEdits;
  assert.equal(tde.textDocument.uri, p.reqUri);
  const edits = tde.edits.filter((e): e is P.TextEdit => P.TextEdit.is(e));
  assert.equal(edits.length, tde.edits.length, 'only plain text edits are expected (no snippet edits)');
  return { version: tde.textDocument.version, edits };
}

function assertBumped(text: string): void {
  const m = /^flashinfer-python==(\d+)\.(\d+)\.(\d+)\S*$/m.exec(text);
  assert.ok(m, `no exact flashinfer-python pin after the fix:\n${text}`);
  const v = [Number(m[1]), Number(m[2]), Number(m[3])];
  assert.ok(v[0] > 0 || v[1] > 6 || (v[1] === 6 && v[2] >= 17), `the pin ${m[0]} is still older than 0.6.17`);
  assert.ok(!text.includes('0.6.16.post4'), 'the old pin is still there');
}

test('the extension\'s resolver finds and version-checks the repository\'s server', { timeout: TEST_TIMEOUT }, async () => {
  const saved = process.env.PYTHONPATH;
  process.env.PYTHONPATH = saved ? `${SERVER_DIR}${delimiter}${saved}` : SERVER_DIR;
  try {
    const r = await resolveServer(
      { settings: { enable: true, importStrategy: 'fromEnvironment', path: [], interpreter: [PYTHON], args: [] }, timeoutMs: 30_000 },
      { isExecutableFile, exec, findOnPath: async () => undefined },
    );
    assert.ok(r.ok, r.ok ? '' : r.message);
    assert.equal(r.server.source, 'interpreter');
    assert.deepEqual(r.server.invocation, interpreterInvocation([PYTHON]));
    assert.ok(isAtLeast(r.server.version, MIN_SERVER_VERSION), r.server.version.text);
  } finally {
    if (saved === undefined) {
      delete process.env.PYTHONPATH;
    } else {
      process.env.PYTHONPATH = saved;
    }
  }
});

test('KL101 quick-fix bumps a closed requirements.txt (version null), and the diagnostic clears', { timeout: TEST_TIMEOUT }, async () => {
  const p = makeProject();
  const { client, init } = await start(p);
  try {
    // What the extension relies on from initialize.
    const caps = init.capabilities;
    assert.equal(init.serverInfo?.name, 'kimi-lsp');
    assert.ok(caps.textDocumentSync !== undefined, 'no textDocumentSync');
    const cap = caps.codeActionProvider;
    assert.ok(cap && typeof cap === 'object' && cap.resolveProvider, 'code actions must be resolvable');
    assert.ok(cap.codeActionKinds?.includes(FIX_ALL_KIND), `${FIX_ALL_KIND} not among ${cap.codeActionKinds?.join(', ')}`);
    assert.ok(caps.hoverProvider, 'no hover');
    assert.ok(caps.completionProvider, 'no completion');
    // vscode-languageclient registers each server command as a VS Code command: none may clash with ours.
    const serverCommands = caps.executeCommandProvider?.commands ?? [];
    for (const c of Object.values(COMMANDS)) {
      assert.ok(!serverCommands.includes(c), `the server's command ${c} clashes with the extension's`);
    }

    await open(client, p.k3Uri, 'yaml', K3_YAML);
    const diags = await client.waitForDiagnostics(p.k3Uri, 'KL101', (d) => kl101(d) !== undefined);
    const diag = kl101(diags)!;
    assert.equal(diag.severity, P.DiagnosticSeverity.Error);
    assert.equal(diag.range.start.line, 2, 'KL101 sits on the decode-attention-backend line');
    assert.ok(
      diag.relatedInformation?.some((r) => r.location.uri === p.reqUri && r.location.range.start.line === 0),
      `the pin's location is not in relatedInformation: ${JSON.stringify(diag.relatedInformation)}`,
    );

    // The server asked for the "kimi-lsp" section, and registered watchers for the pin files.
    await client.waitFor('workspace/configuration for kimi-lsp', () =>
      client.configurationRequests.some((r) => r.items.some((i) => i.section === 'kimi-lsp')) ? true : undefined,
    );
    const watch = await client.waitFor('a didChangeWatchedFiles registration', () =>
      client.registrations.find((r) => r.method === P.DidChangeWatchedFilesNotification.method),
    );
    const globs = ((watch.registerOptions as P.DidChangeWatchedFilesRegistrationOptions).watchers ?? []).map((w) =>
      typeof w.globPattern === 'string' ? w.globPattern : w.globPattern.pattern,
    );
    assert.ok(globs.some((g) => g.includes('requirements')), `no watcher for requirements files: ${globs.join(', ')}`);

    const action = await bumpAction(client, p, diag);
    const tde = pinEdit(action, p);
    assert.equal(tde.version, null, 'requirements.txt is not open: version must be null');

    // VS Code would open the file as a dirty editor; a save writes it and the watcher reports it.
    const fixed = applyTextEdits(readFileSync(p.req, 'utf8'), tde.edits);
    assertBumped(fixed);
    writeFileSync(p.req, fixed);
    await client.conn.sendNotification(P.DidChangeWatchedFilesNotification.type, {
      changes: [{ uri: p.reqUri, type: P.FileChangeType.Changed }],
    });
    const after = await client.waitForDiagnostics(p.k3Uri, 'cleared after the bump', (d) => d.length === 0);
    assert.deepEqual(after, []);
    assert.deepEqual(
      client.messages.filter((m) => m.type <= P.MessageType.Warning),
      [],
      'the server showed an error or warning (e.g. about the settings the extension sends)',
    );

    assert.equal(await client.shutdown(), 0, `the server exited non-zero\n${client.stderr}`);
  } finally {
    client.kill();
  }
});

test('KL101 quick-fix on an open requirements.txt carries its version, and the edited buffer clears KL101', { timeout: TEST_TIMEOUT }, async () => {
  const p = makeProject();
  const { client } = await start(p);
  try {
    await open(client, p.k3Uri, 'yaml', K3_YAML);
    // The extension's document selector includes requirements files, so VS Code sends didOpen for them.
    await open(client, p.reqUri, 'pip-requirements', OLD_PIN, 7);
    const diags = await client.waitForDiagnostics(p.k3Uri, 'KL101', (d) => kl101(d) !== undefined);

    const action = await bumpAction(client, p, kl101(diags)!);
    const tde = pinEdit(action, p);
    assert.equal(tde.version, 7, 'the edit must be versioned against the open document');

    // What VS Code does with the edit: change the buffer (didChange, version 8), then the user saves.
    const fixed = applyTextEdits(OLD_PIN, tde.edits);
    assertBumped(fixed);
    await client.conn.sendNotification(P.DidChangeTextDocumentNotification.type, {
      textDocument: { uri: p.reqUri, version: 8 },
      contentChanges: tde.edits.map((e) => ({ range: e.range, text: e.newText })),
    });
    await client.waitForDiagnostics(p.k3Uri, 'cleared by the unsaved edit', (d) => d.length === 0);

    writeFileSync(p.req, fixed);
    await client.conn.sendNotification(P.DidSaveTextDocumentNotification.type, { textDocument: { uri: p.reqUri } });
    await client.conn.sendNotification(P.DidChangeWatchedFilesNotification.type, {
      changes: [{ uri: p.reqUri, type: P.FileChangeType.Changed }],
    });
    await client.conn.sendNotification(P.DidCloseTextDocumentNotification.type, { textDocument: { uri: p.reqUri } });

    // Still clean once the saved file is the truth.
    await new Promise((res) => setTimeout(res, 300));
    assert.deepEqual(client.diagnostics.get(p.k3Uri), []);

    assert.equal(await client.shutdown(), 0, `the server exited non-zero\n${client.stderr}`);
  } finally {
    client.kill();
  }
});

test('source.fixAll.kimi-lsp, hover and completion answer on the launch file', { timeout: TEST_TIMEOUT }, async () => {
  const p = makeProject();
  const { client } = await start(p);
  try {
    await open(client, p.k3Uri, 'yaml', K3_YAML);
    await client.waitForDiagnostics(p.k3Uri, 'KL101', (d) => kl101(d) !== undefined);

    // What the extension's "Fix All" command asks for (vscode.executeCodeActionProvider with the kind).
    const actions = await client.conn.sendRequest(P.CodeActionRequest.type, {
      textDocument: { uri: p.k3Uri },
      range: { start: { line: 0, character: 0 }, end: { line: 3, character: 0 } },
      context: { diagnostics: [], only: [FIX_ALL_KIND], triggerKind: P.CodeActionTriggerKind.Invoked },
    });
    for (const a of actions ?? []) {
      assert.ok(isCodeAction(a), 'a fix-all entry must be a CodeAction');
      assert.equal(a.kind, FIX_ALL_KIND, `"${a.title}" is not of kind ${FIX_ALL_KIND}`);
      const resolved = a.edit ? a : await client.conn.sendRequest(P.CodeActionResolveRequest.type, a);
      const changes = resolved.edit?.documentChanges ?? [];
      for (const c of changes) {
        assert.ok(P.TextDocumentEdit.is(c));
        assert.ok([p.k3Uri, p.reqUri].includes(c.textDocument.uri), `fix-all edits an unexpected file ${c.textDocument.uri}`);
      }
    }

    const hover = await client.conn.sendRequest(P.HoverRequest.type, { textDocument: { uri: p.k3Uri }, position: { line: 1, character: 2 } });
    assert.ok(hover, 'no hover on dcp-size');
    const text = JSON.stringify(hover.contents);
    assert.match(text, /dcp/i);

    const completion = await client.conn.sendRequest(P.CompletionRequest.type, {
      textDocument: { uri: p.k3Uri },
      position: { line: 3, character: 0 },
      context: { triggerKind: P.CompletionTriggerKind.Invoked },
    });
    const items = Array.isArray(completion) ? completion : (completion?.items ?? []);
    assert.ok(items.length > 0, 'no completion items for a new key');

    assert.equal(await client.shutdown(), 0, `the server exited non-zero\n${client.stderr}`);
  } finally {
    client.kill();
  }
});

test('a notebook in the notebook editor: KL101 on its cell, at the cell\'s line, and the bump offered there', { timeout: TEST_TIMEOUT }, async () => {
  const p = makeProject();
  const { client, init } = await start(p);
  try {
    const sync = init.capabilities.notebookDocumentSync;
    assert.ok(sync && 'notebookSelector' in sync, 'no notebookDocumentSync');
    assert.deepEqual(sync.notebookSelector, [{ notebook: 'jupyter-notebook' }]);
    const nbUri = pathToFileURL(join(p.root, 'serve.ipynb')).href;
    const cells = [
      { kind: P.NotebookCellKind.Markup, languageId: 'markdown', text: '# Serve Kimi-K3' },
      {
        kind: P.NotebookCellKind.Code,
        languageId: 'python',
        text: '!python -m sglang.launch_server --model-path moonshotai/Kimi-K3 \\\n    --dcp-size 8 --decode-attention-backend cutedsl_mla',
      },
    ];
    // VS Code's cell URIs: the notebook's path, the cell in the fragment
    const cellUris = cells.map((_, k) => `vscode-notebook-cell:${new URL(nbUri).pathname}#W${k}sZmlsZQ%3D%3D`);
    await client.conn.sendNotification(P.DidOpenNotebookDocumentNotification.type, {
      notebookDocument: {
        uri: nbUri,
        notebookType: 'jupyter-notebook',
        version: 1,
        cells: cells.map((c, k) => ({ kind: c.kind, document: cellUris[k] })),
      },
      cellTextDocuments: cells.map((c, k) => ({ uri: cellUris[k], languageId: c.languageId, version: 1, text: c.text })),
    });
    const diags = await client.waitForDiagnostics(cellUris[1], 'KL101 on the launch cell', (d) => kl101(d) !== undefined);
    const diag = kl101(diags)!;
    assert.deepEqual(diag.range.start, { line: 1, character: 17 }, 'on --decode-attention-backend, line 2 of the cell');
    const action = await bumpAction(client, { ...p, k3Uri: cellUris[1] }, diag);
    assertBumped(applyTextEdits(readFileSync(p.req, 'utf8'), pinEdit(action, p).edits));
    assert.equal(await client.shutdown(), 0, `the server exited non-zero\n${client.stderr}`);
  } finally {
    client.kill();
  }
});
