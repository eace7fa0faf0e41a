// Entry point: the commands, and restarting the server when what it depends on changes.
// No lint logic lives in the extension; it is all in the kimi-lsp server.

import { existsSync } from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { shellQuote, verifyCommand } from './common/args';
import { BundleLocation } from './common/args';
import { BUNDLE_LAUNCH_SCRIPT, COMMANDS, FIX_ALL_KIND, OUTPUT_CHANNEL_NAME } from './common/constants';
import { dependsOnPythonEnvironment } from './common/resolve';
import { classifyChange } from './common/settings';
import { PythonEnvironments } from './python';
import { ServerManager } from './server';

const RESTART_DEBOUNCE_MS = 300;

let manager: ServerManager | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel(OUTPUT_CHANNEL_NAME, { log: true });
  const python = new PythonEnvironments(log);
  manager = new ServerManager(log, python, bundleLocation(context, log));
  const mgr = manager;
  context.subscriptions.push(log, python, mgr);

  let timer: NodeJS.Timeout | undefined;
  const scheduleRestart = (why: string): void => {
    if (timer) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => {
      timer = undefined;
      log.info(`restarting the server: ${why}`);
      void mgr.restart();
    }, RESTART_DEBOUNCE_MS);
  };
  context.subscriptions.push({ dispose: () => timer && clearTimeout(timer) });

  context.subscriptions.push(
    vscode.commands.registerCommand(COMMANDS.restart, () => mgr.restart()),
    vscode.commands.registerCommand(COMMANDS.showLogs, () => log.show()),
    vscode.commands.registerCommand(COMMANDS.verify, () => runVerify(mgr, log)),
    vscode.commands.registerCommand(COMMANDS.fixAll, () => fixAll(mgr)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      const change = classifyChange((section) => e.affectsConfiguration(section));
      if (change === 'restart') {
        scheduleRestart('settings changed');
      } else if (change === 'reconfigure') {
        void mgr.reconfigure();
      }
    }),
    python.onDidChange(() => {
      if (dependsOnPythonEnvironment(mgr.server?.source, mgr.server?.interpreterSource)) {
        scheduleRestart('the Python environment changed');
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => scheduleRestart('the workspace is now trusted')),
  );

  // Not awaited: finding the server runs `--version` (seconds on a cold Python), and activation
  // should not wait for it. Failures are reported by the manager itself.
  mgr.start().catch((e) => log.error(`starting the server: ${String(e)}`));
}

/** The bundled server: its bootstrap in the extension, and the extension's global storage to unpack into. */
function bundleLocation(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): BundleLocation | undefined {
  const launchScript = path.join(context.extensionPath, ...BUNDLE_LAUNCH_SCRIPT);
  if (!existsSync(launchScript)) {
    log.warn(`this installation has no bundled server (${launchScript} is missing)`);
    return undefined;
  }
  return { launchScript, storageDir: context.globalStorageUri.fsPath };
}

export async function deactivate(): Promise<void> {
  await manager?.stop();
  manager = undefined;
}

/** `kimi-lsp verify <active file>` in a terminal, run without a shell so no quoting can go wrong. */
async function runVerify(mgr: ServerManager, log: vscode.LogOutputChannel): Promise<void> {
  let server = mgr.server;
  if (!server) {
    const r = await mgr.resolve();
    if (!r.ok) {
      void vscode.window.showErrorMessage(r.message);
      return;
    }
    server = r.server;
  }
  const doc = vscode.window.activeTextEditor?.document;
  const file = doc && doc.uri.scheme === 'file' ? doc.uri.fsPath : undefined;
  if (doc && file && doc.isDirty) {
    await doc.save();
  }
  const folder = (doc && vscode.workspace.getWorkspaceFolder(doc.uri)) ?? vscode.workspace.workspaceFolders?.[0];
  const cwd = folder?.uri.fsPath ?? (file ? path.dirname(file) : undefined);
  const cmd = verifyCommand(server.invocation, file);
  log.info(`running: ${shellQuote([cmd.command, ...cmd.args])}${cwd ? ` (in ${cwd})` : ''}`);
  const terminal = vscode.window.createTerminal({
    name: 'kimi-lsp verify',
    shellPath: cmd.command,
    shellArgs: cmd.args,
    cwd,
  });
  terminal.show();
}

/** Apply the server's `source.fixAll.kimi-lsp` action to the active document. */
async function fixAll(mgr: ServerManager): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('kimi-lsp: open a launch file to fix.');
    return;
  }
  if (!mgr.languageClient?.isRunning()) {
    void vscode.window.showWarningMessage('kimi-lsp: the server is not running (see kimi-lsp: Show Logs).');
    return;
  }
  const doc = editor.document;
  const whole = new vscode.Range(0, 0, doc.lineCount, 0);
  // The last argument resolves the returned actions, so an action whose edit is filled in by
  // codeAction/resolve arrives with its edit.
  const actions =
    (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', doc.uri, whole, FIX_ALL_KIND, 10)) ?? [];
  const kind = vscode.CodeActionKind.SourceFixAll.append('kimi-lsp');
  const ours = actions.filter((a) => a.kind && kind.contains(a.kind) && !a.disabled);
  let applied = 0;
  for (const action of ours) {
    if (action.edit && (await vscode.workspace.applyEdit(action.edit))) {
      applied++;
    }
    if (action.command) {
      await vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
      applied++;
    }
  }
  if (applied === 0) {
    void vscode.window.showInformationMessage(`kimi-lsp: nothing to fix automatically in ${path.basename(doc.uri.fsPath)}.`);
  }
}
