// The real file system and process functions injected into resolve.ts. Node only, no `vscode`.

import { execFile } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';

import { ExecOptions, ExecResult, makeFindOnPath, ResolveDeps } from './resolve';

export async function isExecutableFile(path: string): Promise<boolean> {
  try {
    const st = await fs.stat(path);
    if (!st.isFile()) {
      return false;
    }
    if (process.platform === 'win32') {
      return true;
    }
    await fs.access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function exec(command: string, args: string[], options: ExecOptions): Promise<ExecResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, timeout: options.timeoutMs, maxBuffer: 1024 * 1024, windowsHide: true, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (!err) {
          resolve({ code: 0, stdout, stderr });
          return;
        }
        const e = err as NodeJS.ErrnoException & { code?: string | number; killed?: boolean; signal?: string };
        if (typeof e.code === 'number') {
          resolve({ code: e.code, stdout, stderr });
        } else if (e.killed || e.signal) {
          resolve({ code: null, stdout, stderr, error: e.signal === 'SIGTERM' ? 'ETIMEDOUT' : (e.signal ?? 'killed') });
        } else {
          resolve({ code: null, stdout, stderr, error: typeof e.code === 'string' ? e.code : e.message });
        }
      },
    );
  });
}

export function nodeResolveDeps(pythonExtensionInterpreter?: () => Promise<string[] | undefined>): ResolveDeps {
  return {
    isExecutableFile,
    exec,
    findOnPath: makeFindOnPath(process.env, process.platform, isExecutableFile),
    pythonExtensionInterpreter,
  };
}
