// The Python extension (ms-python.python), when installed: its selected environment is where
// kimi-lsp was most likely pip-installed. Only the two calls the vscode-python-tools template uses
// (environments.getActiveEnvironmentPath / resolveEnvironment) and the change event are typed here,
// so the extension does not depend on @vscode/python-extension (which needs Node 22 to install).

import * as vscode from 'vscode';

import { PYTHON_EXTENSION_ID } from './common/constants';

interface EnvironmentPath {
  id: string;
  path: string;
}

interface ResolvedEnvironment {
  executable: { uri: vscode.Uri | undefined };
  version?: { major?: number; minor?: number; micro?: number } | undefined;
}

interface PythonExtensionApi {
  ready?: Promise<void>;
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri | vscode.WorkspaceFolder): EnvironmentPath;
    resolveEnvironment(env: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
  };
}

export class PythonEnvironments implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when the user selects another interpreter in the Python extension. */
  readonly onDidChange = this.changed.event;
  private hooked = false;
  private present = vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;

  constructor(private readonly log: vscode.LogOutputChannel) {
    this.disposables.push(this.changed);
    // The Python extension may be installed or enabled after kimi-lsp started (or removed).
    this.disposables.push(
      vscode.extensions.onDidChange(() => {
        const present = vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
        if (present !== this.present) {
          this.present = present;
          if (!present) {
            this.hooked = false;
          }
          this.changed.fire();
        }
      }),
    );
  }

  private async api(): Promise<PythonExtensionApi | undefined> {
    const ext = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
    if (!ext) {
      return undefined;
    }
    try {
      const api = ext.isActive ? ext.exports : await ext.activate();
      await api?.ready;
      if (api?.environments && !this.hooked) {
        this.hooked = true;
        this.disposables.push(api.environments.onDidChangeActiveEnvironmentPath(() => this.changed.fire()));
      }
      return api;
    } catch (e) {
      this.log.warn(`The Python extension could not be activated: ${String(e)}`);
      return undefined;
    }
  }

  /**
   * The selected interpreter as an argv, `[]` when the Python extension has none selected, or
   * undefined when the Python extension is not installed.
   */
  async activeInterpreter(resource?: vscode.Uri): Promise<string[] | undefined> {
    const api = await this.api();
    if (!api?.environments) {
      return undefined;
    }
    const envPath = api.environments.getActiveEnvironmentPath(resource);
    const env = await api.environments.resolveEnvironment(envPath);
    const exe = env?.executable.uri?.fsPath;
    if (!exe) {
      this.log.info(`The Python extension's environment ${envPath.path} could not be resolved to an interpreter`);
      return [];
    }
    return [exe];
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
