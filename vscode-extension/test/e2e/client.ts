// A small LSP test client on vscode-languageserver-protocol, the protocol layer under
// vscode-languageclient: what it sends and parses is what VS Code's client sends and parses.

import { ChildProcess, spawn } from 'node:child_process';
import { delimiter, resolve } from 'node:path';

import * as P from 'vscode-languageserver-protocol/node';

import { CommandLine, interpreterInvocation, serveCommand } from '../../src/common/args';
import { CONFIG_SECTION } from '../../src/common/constants';
import { normalizeLintSettings } from '../../src/common/settings';

/** The repository's server/ directory, so the server runs without being installed. */
export const SERVER_DIR = resolve(__dirname, '..', '..', '..', '..', 'server');
export const PYTHON = process.env.KIMI_LSP_PYTHON || 'python3';

/** The environment with PYTHONPATH pointing at the repository's server/. */
export function serverEnv(): NodeJS.ProcessEnv {
  const existing = process.env.PYTHONPATH;
  return { ...process.env, PYTHONPATH: existing ? `${SERVER_DIR}${delimiter}${existing}` : SERVER_DIR, PYTHONUNBUFFERED: '1' };
}

/** What workspace.getConfiguration('kimi-lsp') returns in VS Code when the user set nothing. */
export const VSCODE_DEFAULT_SETTINGS = {
  enable: true,
  importStrategy: 'useBundled',
  path: [],
  interpreter: [],
  args: [],
  trace: { server: 'off' },
  select: [],
  ignore: [],
  severity: {},
  'sglang-version': '',
  'target-gpu': '',
  'flashinfer-target': '',
  workspaceDiagnostics: true,
  configurationPreference: 'project',
};

export class TestClient {
  readonly proc: ChildProcess;
  readonly conn: P.ProtocolConnection;
  readonly diagnostics = new Map<string, P.Diagnostic[]>();
  readonly messages: P.ShowMessageParams[] = [];
  readonly logs: P.LogMessageParams[] = [];
  readonly registrations: P.Registration[] = [];
  readonly configurationRequests: P.ConfigurationParams[] = [];
  readonly appliedEdits: P.ApplyWorkspaceEditParams[] = [];
  stderr = '';
  private readonly exited: Promise<number | null>;
  private waiters: (() => void)[] = [];
  /** What the editor's settings hold (before the extension's middleware normalises them). */
  settings: Record<string, unknown> = { ...VSCODE_DEFAULT_SETTINGS };

  /** By default the repository's server/ run by PYTHON; `server` starts another command instead. */
  constructor(cwd: string, server?: { cmd: CommandLine; env: NodeJS.ProcessEnv }) {
    const cmd = server?.cmd ?? serveCommand(interpreterInvocation([PYTHON]));
    this.proc = spawn(cmd.command, cmd.args, { cwd, env: server?.env ?? serverEnv(), stdio: 'pipe' });
    this.proc.stderr!.setEncoding('utf8');
    this.proc.stderr!.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((res) => {
      this.proc.on('exit', (code) => {
        res(code);
        this.notify();
      });
      this.proc.on('error', (e) => {
        this.stderr += `spawn error: ${String(e)}\n`;
        res(null);
        this.notify();
      });
    });
    this.conn = P.createProtocolConnection(new P.StreamMessageReader(this.proc.stdout!), new P.StreamMessageWriter(this.proc.stdin!));
    this.conn.onNotification(P.PublishDiagnosticsNotification.type, (p) => {
      this.diagnostics.set(p.uri, p.diagnostics);
      this.notify();
    });
    this.conn.onNotification(P.ShowMessageNotification.type, (p) => {
      this.messages.push(p);
      this.notify();
    });
    this.conn.onNotification(P.LogMessageNotification.type, (p) => {
      this.logs.push(p);
    });
    // Answered as the extension's configuration middleware answers it.
    this.conn.onRequest(P.ConfigurationRequest.type, (p) => {
      this.configurationRequests.push(p);
      return p.items.map((item) => (item.section === CONFIG_SECTION ? normalizeLintSettings(this.settings).value : null));
    });
    this.conn.onRequest(P.RegistrationRequest.type, (p) => {
      this.registrations.push(...p.registrations);
      this.notify();
    });
    this.conn.onRequest(P.UnregistrationRequest.type, () => undefined);
    this.conn.onRequest(P.WorkDoneProgressCreateRequest.type, () => undefined);
    this.conn.onRequest(P.DiagnosticRefreshRequest.type, () => undefined);
    this.conn.onRequest(P.ShowDocumentRequest.type, () => ({ success: true }));
    this.conn.onRequest(P.ApplyWorkspaceEditRequest.type, (p) => {
      this.appliedEdits.push(p);
      return { applied: true };
    });
    this.conn.onNotification(P.TelemetryEventNotification.type, () => undefined);
    this.conn.listen();
  }

  private notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) {
      f();
    }
  }

  /** Resolves with `check()`'s value once it is not undefined; rejects after `timeoutMs`. */
  async waitFor<T>(what: string, check: () => T | undefined, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = check();
      if (v !== undefined) {
        return v;
      }
      if (this.proc.exitCode !== null) {
        throw new Error(`the server exited (code ${this.proc.exitCode}) while waiting for ${what}\n--- server stderr ---\n${this.stderr}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`timed out waiting for ${what}\n--- server stderr ---\n${this.stderr.slice(-4000)}`);
      }
      await new Promise<void>((res) => {
        const t = setTimeout(res, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(t);
          res();
        });
      });
    }
  }

  waitForDiagnostics(uri: string, what: string, pred: (d: P.Diagnostic[]) => boolean, timeoutMs?: number): Promise<P.Diagnostic[]> {
    return this.waitFor(`diagnostics of ${uri}: ${what}`, () => {
      const d = this.diagnostics.get(uri);
      return d !== undefined && pred(d) ? d : undefined;
    }, timeoutMs);
  }

  async initialize(params: Omit<P.InitializeParams, 'processId'>): Promise<P.InitializeResult> {
    // A server that dies at start-up (missing dependency, import error) never answers: say why.
    const died = this.exited.then((code) => {
      throw new Error(`the server exited (code ${code}) before answering initialize\n--- server stderr ---\n${this.stderr.slice(-4000)}`);
    });
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer to initialize in 30 s\n--- server stderr ---\n${this.stderr.slice(-4000)}`)), 30_000).unref(),
    );
    const result = await Promise.race([
      this.conn.sendRequest(P.InitializeRequest.type, { processId: process.pid, ...params } as P.InitializeParams),
      died,
      timeout,
    ]);
    await this.conn.sendNotification(P.InitializedNotification.type, {});
    return result;
  }

  /** shutdown + exit, as vscode-languageclient's stop() does; resolves with the exit code. */
  async shutdown(timeoutMs = 10_000): Promise<number | null> {
    await this.conn.sendRequest(P.ShutdownRequest.type);
    await this.conn.sendNotification(P.ExitNotification.type);
    const timer = new Promise<'timeout'>((res) => setTimeout(() => res('timeout'), timeoutMs).unref());
    const code = await Promise.race([this.exited, timer]);
    this.conn.dispose();
    if (code === 'timeout') {
      this.proc.kill();
      throw new Error(`the server did not exit within ${timeoutMs} ms of exit\n${this.stderr.slice(-4000)}`);
    }
    return code;
  }

  /** For test teardown after a failure: never leave a server behind. */
  kill(): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill();
    }
    this.conn.dispose();
  }
}
