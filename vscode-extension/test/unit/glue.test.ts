// The VS Code glue (extension.ts, server.ts, python.ts) run against a fake `vscode` module and a
// fake language client: VS Code itself cannot run offline (reference §4.2), but the wiring can.
// Checks: activation registers the commands, the server is found and started with the right
// command line and document selector, settings changes restart or reconfigure, the configuration
// middleware normalises, and the verify and fix-all commands do what they say.

import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Listener = (e: any) => void;

class EventEmitter {
  private listeners: Listener[] = [];
  event = (l: Listener) => {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  };
  fire(e?: any): void {
    for (const l of this.listeners) {
      l(e);
    }
  }
  dispose(): void {
    this.listeners = [];
  }
}

class CodeActionKind {
  constructor(readonly value: string) {}
  static SourceFixAll = new CodeActionKind('source.fixAll');
  append(part: string): CodeActionKind {
    return new CodeActionKind(`${this.value}.${part}`);
  }
  contains(other: CodeActionKind): boolean {
    return other.value === this.value || other.value.startsWith(`${this.value}.`);
  }
}

const fake = {
  config: {} as Record<string, unknown>,
  commands: new Map<string, (...a: any[]) => any>(),
  executed: [] as { id: string; args: any[] }[],
  messages: [] as { level: string; text: string }[],
  terminals: [] as any[],
  clients: [] as FakeClient[],
  configListeners: new EventEmitter(),
  trust: new EventEmitter(),
  extChange: new EventEmitter(),
  activeTextEditor: undefined as any,
  codeActions: [] as any[],
  appliedEdits: [] as any[],
  log: [] as string[],
  status: undefined as any,
};

class FakeClient {
  running = false;
  notifications: { type: any; params: any }[] = [];
  stopped = false;
  readonly stateChanges = new EventEmitter();
  onDidChangeState = this.stateChanges.event;
  constructor(
    readonly id: string,
    readonly name: string,
    readonly serverOptions: any,
    readonly clientOptions: any,
  ) {
    fake.clients.push(this);
  }
  async start(): Promise<void> {
    this.running = true;
  }
  async stop(): Promise<void> {
    this.running = false;
    this.stopped = true;
  }
  async dispose(): Promise<void> {
    this.running = false;
  }
  isRunning(): boolean {
    return this.running;
  }
  async sendNotification(type: any, params: any): Promise<void> {
    this.notifications.push({ type, params });
  }
}

class ResponseError extends Error {}

const vscodeStub = {
  EventEmitter,
  CodeActionKind,
  Range: class {
    constructor(
      readonly a: number,
      readonly b: number,
      readonly c: number,
      readonly d: number,
    ) {}
  },
  LanguageStatusSeverity: { Information: 0, Warning: 1, Error: 2 },
  window: {
    createOutputChannel: () => ({
      info: (m: string) => fake.log.push(`info ${m}`),
      warn: (m: string) => fake.log.push(`warn ${m}`),
      error: (m: string) => fake.log.push(`error ${m}`),
      show: () => fake.log.push('shown'),
      dispose: () => undefined,
    }),
    showErrorMessage: async (text: string) => void fake.messages.push({ level: 'error', text }),
    showWarningMessage: async (text: string) => void fake.messages.push({ level: 'warning', text }),
    showInformationMessage: async (text: string) => void fake.messages.push({ level: 'info', text }),
    createTerminal: (opts: any) => {
      const t = { opts, shown: false, show: () => (t.shown = true) };
      fake.terminals.push(t);
      return t;
    },
    get activeTextEditor() {
      return fake.activeTextEditor;
    },
  },
  workspace: {
    workspaceFolders: [] as any[],
    isTrusted: true,
    getConfiguration: (section: string) => ({
      get: (key: string) => fake.config[`${section}.${key}`],
    }),
    getWorkspaceFolder: () => vscodeStub.workspace.workspaceFolders[0],
    onDidChangeConfiguration: (l: Listener) => fake.configListeners.event(l),
    onDidGrantWorkspaceTrust: (l: Listener) => fake.trust.event(l),
    applyEdit: async (edit: any) => {
      fake.appliedEdits.push(edit);
      return true;
    },
  },
  commands: {
    registerCommand: (id: string, fn: (...a: any[]) => any) => {
      assert.ok(!fake.commands.has(id), `command ${id} registered twice`);
      fake.commands.set(id, fn);
      return { dispose: () => fake.commands.delete(id) };
    },
    executeCommand: async (id: string, ...args: any[]) => {
      fake.executed.push({ id, args });
      if (id === 'vscode.executeCodeActionProvider') {
        return fake.codeActions;
      }
      return fake.commands.get(id)?.(...args);
    },
  },
  extensions: {
    getExtension: () => undefined,
    onDidChange: (l: Listener) => fake.extChange.event(l),
  },
  languages: {
    createLanguageStatusItem: (id: string, selector: any) => (fake.status = { id, selector, dispose: () => undefined }),
  },
};

const clientStub = {
  LanguageClient: FakeClient,
  ResponseError,
  RevealOutputChannelOn: { Never: 4 },
  DidChangeConfigurationNotification: { type: { method: 'workspace/didChangeConfiguration' } },
  State: { Stopped: 1, Running: 2, Starting: 3 },
};

const M = Module as unknown as { _load: (request: string, parent: unknown, isMain: boolean) => unknown };
const realLoad = M._load;
let ext: { activate(ctx: any): void; deactivate(): Promise<void> };
const dir = mkdtempSync(join(tmpdir(), 'kimi-lsp-glue-'));
const context = {
  subscriptions: [] as { dispose(): unknown }[],
  extensionPath: join(dir, 'ext'),
  globalStorageUri: { fsPath: join(dir, 'storage') },
};
const savedPath = process.env.PATH;
const posix = process.platform !== 'win32';

async function settle(ms = 50): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) {
      throw new Error(`timed out: ${what}\n${fake.log.join('\n')}`);
    }
    await settle(20);
  }
}

before(() => {
  M._load = function (request: string, parent: unknown, isMain: boolean) {
    if (request === 'vscode') {
      return vscodeStub;
    }
    if (request === 'vscode-languageclient/node') {
      return clientStub;
    }
    return realLoad.call(this, request, parent, isMain);
  };
  // The extension's bundle (only its bootstrap's existence is looked at here).
  mkdirSync(join(dir, 'ext', 'bundled', 'tool'), { recursive: true });
  writeFileSync(join(dir, 'ext', 'bundled', 'tool', 'launch.py'), '');
  // A kimi-lsp console script on PATH, and importStrategy fromEnvironment: the PATH source is used.
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'kimi-lsp'), '#!/bin/sh\n[ "$1" = "--version" ] && echo "kimi-lsp 0.1.0"\n');
  chmodSync(join(bin, 'kimi-lsp'), 0o755);
  process.env.PATH = `${bin}:${savedPath ?? ''}`;
  vscodeStub.workspace.workspaceFolders = [{ uri: { fsPath: dir }, name: 'w', index: 0 }];
  ext = require('../../src/extension');
});

after(async () => {
  await ext?.deactivate();
  for (const d of context.subscriptions) {
    d.dispose();
  }
  M._load = realLoad;
  process.env.PATH = savedPath;
  rmSync(dir, { recursive: true, force: true });
});

test('activation registers the commands and starts `kimi-lsp serve` from PATH', { skip: !posix }, async () => {
  fake.config['kimi-lsp.importStrategy'] = 'fromEnvironment';
  fake.config['kimi-lsp.select'] = ['kl1'];
  fake.config['kimi-lsp.target-gpu'] = 'b200';
  fake.config['kimi-lsp.ignore'] = [];
  ext.activate(context);
  assert.deepEqual([...fake.commands.keys()].sort(), ['kimi-lsp.fixAll', 'kimi-lsp.restart', 'kimi-lsp.showLogs', 'kimi-lsp.verify']);
  await until('a client', () => fake.clients.length === 1 && fake.clients[0].running);
  const c = fake.clients[0];
  assert.equal(c.id, 'kimi-lsp');
  assert.deepEqual(c.serverOptions.command, join(dir, 'bin', 'kimi-lsp'));
  assert.deepEqual(c.serverOptions.args, ['serve']);
  assert.equal(c.serverOptions.options.cwd, dir);
  assert.equal(c.serverOptions.transport, undefined, 'a transport would make the client append --stdio');
  const sel = c.clientOptions.documentSelector as { pattern?: string; notebook?: string }[];
  assert.ok(sel.some((f) => f.pattern === '**/requirements*.{txt,in}'));
  // a notebook's cells (vscode-notebook-cell: URIs) are pulled for only when the selector has them
  assert.ok(sel.some((f) => f.notebook === 'jupyter-notebook'));
  assert.deepEqual(c.clientOptions.initializationOptions, {
    settings: { select: ['KL1'], 'target-gpu': 'b200', configurationPreference: 'project' },
  });
  assert.deepEqual(fake.messages, []);
});

test('the configuration middleware sends the server normalised lint settings only', { skip: !posix }, async () => {
  const c = fake.clients[0];
  const mw = c.clientOptions.middleware.workspace.configuration;
  const raw = { path: ['/x'], trace: { server: 'off' }, select: [], ignore: ['kl204'], 'sglang-version': '', configurationPreference: 'editor' };
  const out = await mw({ items: [{ section: 'kimi-lsp' }, { section: 'editor' }] }, {}, async () => [raw, { tabSize: 4 }]);
  assert.deepEqual(out, [{ ignore: ['KL204'], configurationPreference: 'editor' }, { tabSize: 4 }]);
  const err = new ResponseError('x');
  assert.equal(await mw({ items: [{ section: 'kimi-lsp' }] }, {}, async () => err), err);
});

test('a lint setting change reconfigures; a launch setting change restarts', { skip: !posix }, async () => {
  const first = fake.clients[0];
  const affects = (keys: string[]) => ({ affectsConfiguration: (s: string) => keys.includes(s) });
  fake.configListeners.fire(affects(['kimi-lsp.select']));
  await until('didChangeConfiguration', () => first.notifications.length === 1);
  assert.deepEqual(first.notifications[0].params, { settings: null });
  assert.equal(fake.clients.length, 1);

  fake.configListeners.fire(affects(['kimi-lsp.trace.server']));
  await settle(400);
  assert.equal(fake.clients.length, 1);
  assert.equal(first.notifications.length, 1);

  fake.config['kimi-lsp.args'] = ['--log-level', 'DEBUG'];
  fake.configListeners.fire(affects(['kimi-lsp.args']));
  fake.configListeners.fire(affects(['kimi-lsp.args'])); // debounced into one restart
  await until('a restarted client', () => fake.clients.length === 2 && fake.clients[1].running);
  await settle(400);
  assert.equal(fake.clients.length, 2);
  assert.ok(first.stopped);
  assert.deepEqual(fake.clients[1].serverOptions.args, ['serve', '--log-level', 'DEBUG']);
});

test('a configured interpreter that lacks kimi-lsp is an error with the install command', { skip: !posix }, async () => {
  const py = join(dir, 'python');
  writeFileSync(py, '#!/bin/sh\necho "$0: No module named kimi_lsp" >&2; exit 1\n');
  chmodSync(py, 0o755);
  fake.config['kimi-lsp.interpreter'] = [py];
  await fake.commands.get('kimi-lsp.restart')!();
  assert.equal(fake.clients.length, 2, 'no client is started');
  assert.ok(!fake.clients[1].running);
  const err = fake.messages.find((m) => m.level === 'error');
  assert.ok(err, 'an error is shown');
  assert.match(err.text, /kimi-lsp is not installed in/);
  assert.match(err.text, /-m pip install kimi-lsp/);
  fake.messages.length = 0;
  delete fake.config['kimi-lsp.interpreter'];
  await fake.commands.get('kimi-lsp.restart')!();
  assert.equal(fake.clients.length, 3);
  assert.ok(fake.clients[2].running);
});

test('verify runs `kimi-lsp verify <active file>` in a terminal without a shell', { skip: !posix }, async () => {
  let saved = false;
  const file = join(dir, 'k3.yaml');
  fake.activeTextEditor = { document: { uri: { scheme: 'file', fsPath: file }, isDirty: true, save: async () => (saved = true) } };
  await fake.commands.get('kimi-lsp.verify')!();
  assert.ok(saved, 'a dirty launch file is saved first');
  const t = fake.terminals.at(-1);
  assert.equal(t.opts.shellPath, join(dir, 'bin', 'kimi-lsp'));
  assert.deepEqual(t.opts.shellArgs, ['verify', file]);
  assert.equal(t.opts.cwd, dir);
  assert.ok(t.shown);
});

test('fix all applies the server\'s source.fixAll.kimi-lsp edits and says when there is nothing', { skip: !posix }, async () => {
  const doc = { uri: { scheme: 'file', fsPath: join(dir, 'k3.yaml') }, lineCount: 3 };
  fake.activeTextEditor = { document: doc };
  fake.codeActions = [
    { title: 'Fix all', kind: new CodeActionKind('source.fixAll.kimi-lsp'), edit: { id: 1 } },
    { title: 'other tool', kind: new CodeActionKind('source.fixAll.other'), edit: { id: 2 } },
    { title: 'disabled', kind: new CodeActionKind('source.fixAll.kimi-lsp'), edit: { id: 3 }, disabled: { reason: 'x' } },
  ];
  await fake.commands.get('kimi-lsp.fixAll')!();
  const call = fake.executed.find((e) => e.id === 'vscode.executeCodeActionProvider');
  assert.ok(call);
  assert.equal(call.args[0], doc.uri);
  assert.equal(call.args[2], 'source.fixAll.kimi-lsp');
  assert.ok(call.args[3] > 0, 'actions are resolved so their edits arrive');
  assert.deepEqual(fake.appliedEdits, [{ id: 1 }]);

  fake.codeActions = [];
  await fake.commands.get('kimi-lsp.fixAll')!();
  assert.match(fake.messages.at(-1)?.text ?? '', /nothing to fix/);
});

test('the status item follows the server: running, crashed (with Show Logs), restarting', { skip: !posix }, async () => {
  const c = fake.clients.at(-1)!;
  assert.ok(c.running);
  assert.equal(fake.status.text, 'kimi-lsp 0.1.0');
  assert.equal(fake.status.busy, false);
  assert.equal(fake.status.detail, 'from PATH');
  assert.deepEqual(fake.status.command, { title: 'Show Logs', command: 'kimi-lsp.showLogs' });
  c.stateChanges.fire({ oldState: 2, newState: 1 });
  assert.equal(fake.status.text, 'kimi-lsp: crashed');
  assert.equal(fake.status.severity, 2);
  assert.match(fake.log.join('\n'), /stopped unexpectedly/);
  c.stateChanges.fire({ oldState: 1, newState: 3 });
  assert.equal(fake.status.text, 'kimi-lsp: starting');
  assert.equal(fake.status.busy, true);
  c.stateChanges.fire({ oldState: 3, newState: 2 });
  assert.equal(fake.status.text, 'kimi-lsp 0.1.0');
  assert.equal(fake.status.severity, 0);
});

test('workspaceDiagnostics false: sent to the server, and the client pulls no workspace reports', { skip: !posix }, async () => {
  const c = fake.clients.at(-1)!;
  const pull = c.clientOptions.middleware.provideWorkspaceDiagnostics;
  let asked = 0;
  const next = async () => {
    asked++;
    return { items: [{ uri: 'x' }] };
  };
  assert.deepEqual(await pull([], {}, {}, next), { items: [{ uri: 'x' }] });
  fake.config['kimi-lsp.workspaceDiagnostics'] = false;
  assert.deepEqual(await pull([], {}, {}, next), { items: [] });
  assert.equal(asked, 1);
  const mw = c.clientOptions.middleware.workspace.configuration;
  const out = await mw({ items: [{ section: 'kimi-lsp' }] }, {}, async () => [{ workspaceDiagnostics: false }]);
  assert.deepEqual(out, [{ workspaceDiagnostics: false, configurationPreference: 'project' }]);
  delete fake.config['kimi-lsp.workspaceDiagnostics'];
});

test('useBundled: the bundle is started by python3 on PATH, isolated, with the extension\'s global storage', { skip: !posix }, async () => {
  const pybin = join(dir, 'pybin');
  mkdirSync(pybin);
  const py = join(pybin, 'python3');
  // Answers the bootstrap's `--version` as the real one does, with a storage warning on stderr.
  writeFileSync(py, '#!/bin/sh\nfor a; do last="$a"; done\n[ "$last" = "--version" ] && echo "kimi-lsp 0.1.0" && echo "kimi-lsp-bundle: warning: storage is read-only" >&2\nexit 0\n');
  chmodSync(py, 0o755);
  const saved = process.env.PATH;
  process.env.PATH = `${pybin}:${saved ?? ''}`;
  try {
    fake.config['kimi-lsp.importStrategy'] = 'useBundled';
    const before = fake.clients.length;
    await fake.commands.get('kimi-lsp.restart')!();
    assert.equal(fake.clients.length, before + 1);
    const c = fake.clients.at(-1)!;
    assert.ok(c.running);
    assert.equal(c.serverOptions.command, py);
    const launch = join(dir, 'ext', 'bundled', 'tool', 'launch.py');
    assert.deepEqual(c.serverOptions.args, ['-I', '-u', launch, '--storage', join(dir, 'storage'), '--', 'serve', '--log-level', 'DEBUG']);
    assert.equal(fake.status.severity, 1, 'a bootstrap warning shows as a warning');
    assert.match(fake.status.detail, /^bundled with the extension, run by .*python3 \(the Python on PATH\); storage is read-only$/);
    assert.match(fake.log.join('\n'), /warn storage is read-only/);
  } finally {
    process.env.PATH = saved;
  }
});

test('enable false: the server is stopped and not started again, and the status says so', { skip: !posix }, async () => {
  const c = fake.clients.at(-1)!;
  fake.config['kimi-lsp.enable'] = false;
  const before = fake.clients.length;
  await fake.commands.get('kimi-lsp.restart')!();
  assert.ok(c.stopped);
  assert.equal(fake.clients.length, before, 'no client is created');
  assert.equal(fake.status.text, 'kimi-lsp: disabled');
  assert.equal(fake.status.busy, false);
  delete fake.config['kimi-lsp.enable'];
});
