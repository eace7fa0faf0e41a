// Starting, stopping and restarting the kimi-lsp language client. The decisions (which server, which
// arguments, which settings) are made by the pure modules in common/; this file wires them to VS Code.

import { homedir } from 'node:os';

import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  ResponseError,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';

import { BundleLocation, serveCommand, shellQuote } from './common/args';
import { CONFIG_SECTION, EXTENSION_ID, SERVER_NAME } from './common/constants';
import { nodeResolveDeps } from './common/node';
import { describeServer, Resolution, ResolvedServer, resolveServer } from './common/resolve';
import { documentSelector, NOTEBOOK_CELLS } from './common/selector';
import { LaunchSettings, LINT_KEYS, LintSettings, normalizeLaunchSettings, normalizeLintSettings } from './common/settings';
import { PythonEnvironments } from './python';

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private resolved: ResolvedServer | undefined;
  /** Start/stop/restart run one at a time, in the order they were asked for. */
  private queue: Promise<void> = Promise.resolve();
  private readonly status: vscode.LanguageStatusItem;
  /** Set while the extension itself stops the client, so that a stop is not taken for a crash. */
  private stopping = false;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly python: PythonEnvironments,
    /** The server bundled with the extension; undefined when this installation lacks it. */
    private readonly bundle?: BundleLocation,
  ) {
    this.status = vscode.languages.createLanguageStatusItem(`${EXTENSION_ID}.status`, documentSelector());
    this.status.name = 'kimi-lsp';
    this.status.command = { title: 'Show Logs', command: `${EXTENSION_ID}.showLogs` };
    this.setStatus('kimi-lsp: starting', vscode.LanguageStatusSeverity.Information, undefined, true);
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
      { settings: launch.value, cwd: folder?.uri.fsPath, trusted: vscode.workspace.isTrusted, bundle: this.bundle },
      nodeResolveDeps(() => this.python.activeInterpreter(folder?.uri)),
    );
  }

  private async doStart(): Promise<void> {
    if (this.client) {
      return;
    }
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!readLaunchSettings(folder).value.enable) {
      this.resolved = undefined;
      this.log.info('kimi-lsp.enable is false: the server is not started');
      this.setStatus('kimi-lsp: disabled', vscode.LanguageStatusSeverity.Information, 'kimi-lsp.enable is false');
      return;
    }
    this.setStatus('kimi-lsp: starting', vscode.LanguageStatusSeverity.Information, 'finding the server', true);
    const resolution = await this.resolve();
    for (const line of resolution.log) {
      this.log.info(line);
    }
    if (!resolution.ok) {
      this.resolved = undefined;
      this.log.error(resolution.message);
      this.setStatus('kimi-lsp: no server', vscode.LanguageStatusSeverity.Error, resolution.message);
      void showStartError(resolution.message);
      return;
    }
    this.resolved = resolution.server;
    const server = resolution.server;
    for (const w of server.warnings) {
      this.log.warn(w);
    }
    const launch = readLaunchSettings(folder).value;
    const cmd = serveCommand(server.invocation, launch.args);
    this.log.info(`starting: ${shellQuote([cmd.command, ...cmd.args])}`);

    const serverOptions: ServerOptions = {
      command: cmd.command,
      args: cmd.args,
      options: { cwd: folder?.uri.fsPath, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    };
    const clientOptions: LanguageClientOptions = {
      // notebook cells too: diagnostics are pulled only for documents the selector matches
      documentSelector: [...documentSelector(), ...NOTEBOOK_CELLS],
      outputChannel: this.log,
      traceOutputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: { settings: readLintSettings(folder) },
      middleware: {
        // kimi-lsp.workspaceDiagnostics false: the client does not pull reports for files that are
        // not open, whatever the server offers (the server is told too, through its settings).
        provideWorkspaceDiagnostics: (resultIds, token, resultReporter, next) =>
          readLintSettings(folder).workspaceDiagnostics === false ? { items: [] } : next(resultIds, token, resultReporter),
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
    const running = (): void => {
      const detail = [describeServer(server), ...server.warnings].join('; ');
      const severity = server.warnings.length ? vscode.LanguageStatusSeverity.Warning : vscode.LanguageStatusSeverity.Information;
      this.setStatus(`kimi-lsp ${server.version.text}`, severity, detail);
    };
    // The language client restarts a server that exits (a few times); the item follows it.
    client.onDidChangeState((e) => {
      if (this.client !== client || this.stopping) {
        return;
      }
      if (e.newState === State.Starting) {
        this.setStatus('kimi-lsp: starting', vscode.LanguageStatusSeverity.Information, 'restarting the server', true);
      } else if (e.newState === State.Running) {
        running();
      } else if (e.newState === State.Stopped && e.oldState === State.Running) {
        this.log.error('the kimi-lsp server stopped unexpectedly; see the messages above');
        this.setStatus('kimi-lsp: crashed', vscode.LanguageStatusSeverity.Error, 'The server stopped unexpectedly. Show Logs for its messages; kimi-lsp: Restart Server starts it again.');
      }
    });
    try {
      await client.start();
      running();
    } catch (e) {
      this.log.error(`the kimi-lsp server did not start: ${String(e)}`);
      this.setStatus('kimi-lsp: failed to start', vscode.LanguageStatusSeverity.Error, String(e));
      void showStartError(`The kimi-lsp server did not start: ${String(e)}`);
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) {
      return;
    }
    this.stopping = true;
    try {
      await client.stop(5000);
    } catch (e) {
      this.log.warn(`stopping the server: ${String(e)}`);
    }
    try {
      await client.dispose();
    } catch {
      // already stopped
    } finally {
      this.stopping = false;
    }
  }

  private setStatus(text: string, severity: vscode.LanguageStatusSeverity, detail?: string, busy = false): void {
    this.status.text = text;
    this.status.severity = severity;
    this.status.detail = detail;
    this.status.busy = busy;
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
  const raw = {
    enable: config.get('enable'),
    importStrategy: config.get('importStrategy'),
    path: config.get('path'),
    interpreter: config.get('interpreter'),
    args: config.get('args'),
  };
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
