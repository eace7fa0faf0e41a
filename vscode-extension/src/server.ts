// Starting, stopping and restarting the kimi-lsp language client. The decisions (which server, which
// arguments, which settings) are made by the pure modules in common/; this file wires them to VS Code.

import { homedir } from 'node:os';

import * as vscode from 'vscode';
import { DidChangeConfigurationNotification, LanguageClient, LanguageClientOptions, ResponseError, RevealOutputChannelOn, ServerOptions } from 'vscode-languageclient/node';

import { serveCommand } from './common/args';
import { CONFIG_SECTION, EXTENSION_ID, SERVER_NAME } from './common/constants';
import { nodeResolveDeps } from './common/node';
import { describeSource, Resolution, ResolvedServer, resolveServer } from './common/resolve';
import { documentSelector } from './common/selector';
import { LaunchSettings, LINT_KEYS, LintSettings, normalizeLaunchSettings, normalizeLintSettings } from './common/settings';
import { PythonEnvironments } from './python';

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private resolved: ResolvedServer | undefined;
  /** Start/stop/restart run one at a time, in the order they were asked for. */
  private queue: Promise<void> = Promise.resolve();
  private readonly status: vscode.LanguageStatusItem;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly python: PythonEnvironments,
  ) {
    this.status = vscode.languages.createLanguageStatusItem(`${EXTENSION_ID}.status`, documentSelector());
    this.status.name = 'kimi-lsp';
    this.status.command = { title: 'Show Logs', command: `${EXTENSION_ID}.showLogs` };
    this.setStatus('kimi-lsp: starting', vscode.LanguageStatusSeverity.Information);
  }

  get languageClient(): LanguageClient | undefined {
    return this.client;
  }

  /** The server currently running (or last found), for commands that run the CLI. */
  get server(): ResolvedServer | undefined {
    return this.resolved;
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  /**
   * Lint settings changed: `settings: null` makes the server pull the "kimi-lsp" section again
   * through workspace/configuration, so it gets the normalised values from the middleware below
   * (pushing the raw section would send VS Code's empty defaults, e.g. `select: []`).
   */
  async reconfigure(): Promise<void> {
    const client = this.client;
    if (client?.isRunning()) {
      await client.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
    }
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const next = this.queue.then(step, step);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** What the settings and environment resolve to right now (used by start and by the verify command). */
  async resolve(): Promise<Resolution> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const launch = readLaunchSettings(folder);
    for (const p of launch.problems) {
      this.log.warn(p);
    }
    return resolveServer(
      { settings: launch.value, cwd: folder?.uri.fsPath, trusted: vscode.workspace.isTrusted },
      nodeResolveDeps(() => this.python.activeInterpreter(folder?.uri)),
    );
  }

  private async doStart(): Promise<void> {
    if (this.client) {
      return;
    }
    const folder = vscode.workspace.workspaceFolders?.[0];
    const resolution = await this.resolve();
    for (const line of resolution.log) {
      this.log.info(line);
    }
    if (!resolution.ok) {
      this.resolved = undefined;
      this.log.error(resolution.message);
      this.setStatus('kimi-lsp: server not found', vscode.LanguageStatusSeverity.Error, resolution.message);
      void showStartError(resolution.message);
      return;
    }
    this.resolved = resolution.server;
    const launch = readLaunchSettings(folder).value;
    const cmd = serveCommand(resolution.server.invocation, launch.args);
    this.log.info(`starting: ${[cmd.command, ...cmd.args].join(' ')}`);

    const serverOptions: ServerOptions = {
      command: cmd.command,
      args: cmd.args,
      options: { cwd: folder?.uri.fsPath, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: documentSelector(),
      outputChannel: this.log,
      traceOutputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: { settings: readLintSettings(folder) },
      middleware: {
        workspace: {
          // The client answers workspace/configuration from the "kimi-lsp" section itself; send the
          // server only the lint keys, normalised, so empty editor defaults never override a project.
          configuration: async (params, token, next) => {
            const result = await next(params, token);
            if (result instanceof ResponseError || !Array.isArray(result)) {
              return result;
            }
            return params.items.map((item, i) => {
              if (item.section !== CONFIG_SECTION) {
                return result[i];
              }
              const lint = normalizeLintSettings(result[i]);
              for (const p of lint.problems) {
                this.log.warn(p);
              }
              return lint.value;
            });
          },
        },
      },
    };
    const client = new LanguageClient(EXTENSION_ID, SERVER_NAME, serverOptions, clientOptions);
    this.client = client;
    try {
      await client.start();
      const v = resolution.server.version.text;
      this.setStatus(`kimi-lsp ${v}`, vscode.LanguageStatusSeverity.Information, `from ${describeSource(resolution.server.source)}`);
    } catch (e) {
      this.log.error(`the kimi-lsp server did not start: ${String(e)}`);
      this.setStatus('kimi-lsp: server failed', vscode.LanguageStatusSeverity.Error, String(e));
      void showStartError(`The kimi-lsp server did not start: ${String(e)}`);
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) {
      return;
    }
    try {
      await client.stop(5000);
    } catch (e) {
      this.log.warn(`stopping the server: ${String(e)}`);
    }
    try {
      await client.dispose();
    } catch {
      // already stopped
    }
  }

  private setStatus(text: string, severity: vscode.LanguageStatusSeverity, detail?: string): void {
    this.status.text = text;
    this.status.severity = severity;
    this.status.detail = detail;
  }

  dispose(): void {
    this.status.dispose();
  }
}

/** The lint settings as the server should see them at initialize (the same as the middleware answers). */
export function readLintSettings(folder: vscode.WorkspaceFolder | undefined): LintSettings {
  const config = vscode.workspace.getConfiguration(CONFIG_SECTION, folder);
  const raw: Record<string, unknown> = {};
  for (const key of LINT_KEYS) {
    raw[key] = config.get(key);
  }
  return normalizeLintSettings(raw).value;
}

export function readLaunchSettings(folder: vscode.WorkspaceFolder | undefined): { value: LaunchSettings; problems: string[] } {
  const config = vscode.workspace.getConfiguration(CONFIG_SECTION, folder);
  const raw = { path: config.get('path'), interpreter: config.get('interpreter'), args: config.get('args') };
  return normalizeLaunchSettings(raw, {
    workspaceFolder: folder?.uri.fsPath,
    userHome: homedir(),
    env: process.env,
  });
}

async function showStartError(message: string): Promise<void> {
  const choice = await vscode.window.showErrorMessage(message, 'Show Logs', 'Open Settings');
  if (choice === 'Show Logs') {
    await vscode.commands.executeCommand(`${EXTENSION_ID}.showLogs`);
  } else if (choice === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', `@ext:kimi-lsp.kimi-lsp ${CONFIG_SECTION}`);
  }
}
