// Finding the kimi-lsp server to start, the way the well-kept Python tool extensions do (ruff-vscode,
// the vscode-python-tools template). Pure: the file system, process execution and the Python
// extension are injected, so every branch is unit-tested without VS Code.
//
// Order:
//   1. `kimi-lsp.path`: the first entry that is an existing executable file  -> `<path> serve`
//   2. `kimi-lsp.interpreter`                                                 -> `<python> -m kimi_lsp serve`
//   3. the Python extension's active environment (trusted workspaces only)    -> `<python> -m kimi_lsp serve`
//   4. `kimi-lsp` on PATH                                                     -> `kimi-lsp serve`
// Whatever is found must answer `--version` with `kimi-lsp X.Y.Z`, X.Y.Z >= MIN_SERVER_VERSION.
//
// A source the user configured explicitly (1 found, 2) never falls through silently to another one
// when it fails: a wrong setting is reported, not papered over (ruff-vscode#691 and #711 are what
// happens otherwise). The implicit sources (3, 4) fall through.

import { executableInvocation, installHint, interpreterInvocation, KimiInvocation, shellQuote, versionCommand } from './args';
import { EXECUTABLE_NAME, MIN_SERVER_VERSION, PYTHON_MODULE } from './constants';
import { LaunchSettings } from './settings';
import { isAtLeast, parseVersionOutput, Version } from './version';

export type ServerSource = 'path' | 'interpreter' | 'python-extension' | 'PATH';

export interface ExecResult {
  /** Exit code; null when the process did not exit normally (killed, timed out, not started). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when the process could not be started or was killed, e.g. `ENOENT` or `ETIMEDOUT`. */
  error?: string;
}

export interface ExecOptions {
  cwd?: string;
  timeoutMs: number;
}

export interface ResolveDeps {
  isExecutableFile(path: string): Promise<boolean>;
  findOnPath(name: string): Promise<string | undefined>;
  exec(command: string, args: string[], options: ExecOptions): Promise<ExecResult>;
  /** The active interpreter of the Python extension (argv form), or undefined when there is none. */
  pythonExtensionInterpreter?: () => Promise<string[] | undefined>;
}

export interface ResolveOptions {
  settings: LaunchSettings;
  cwd?: string;
  /** Workspace trust: an untrusted workspace's own Python environment is not run. */
  trusted?: boolean;
  minVersion?: string;
  timeoutMs?: number;
}

export interface ResolvedServer {
  source: ServerSource;
  invocation: KimiInvocation;
  version: Version;
}

export type Resolution =
  | { ok: true; server: ResolvedServer; log: string[] }
  | { ok: false; message: string; log: string[] };

type Probe = { ok: true; version: Version } | { ok: false; reason: string; notInstalled: boolean };

const DEFAULT_TIMEOUT_MS = 20_000;

export async function probe(inv: KimiInvocation, deps: ResolveDeps, opts: ResolveOptions): Promise<Probe> {
  const cmd = versionCommand(inv);
  const min = opts.minVersion ?? MIN_SERVER_VERSION;
  let res: ExecResult;
  try {
    res = await deps.exec(cmd.command, cmd.args, { cwd: opts.cwd, timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS });
  } catch (e) {
    res = { code: null, stdout: '', stderr: '', error: String(e) };
  }
  const shown = shellQuote([cmd.command, ...cmd.args]);
  if (res.error === 'ENOENT') {
    return { ok: false, reason: `\`${inv.command}\` was not found`, notInstalled: true };
  }
  if (res.error && res.code === null) {
    return { ok: false, reason: `\`${shown}\` did not finish (${res.error})`, notInstalled: false };
  }
  if (res.code !== 0) {
    if (new RegExp(`No module named '?${PYTHON_MODULE}\\b`).test(res.stderr)) {
      return { ok: false, reason: `kimi-lsp is not installed in \`${inv.command}\``, notInstalled: true };
    }
    return { ok: false, reason: `\`${shown}\` failed with exit code ${res.code}${lastLine(res.stderr)}`, notInstalled: false };
  }
  const version = parseVersionOutput(res.stdout) ?? parseVersionOutput(res.stderr);
  if (!version) {
    return { ok: false, reason: `\`${shown}\` printed no kimi-lsp version${lastLine(res.stdout)}`, notInstalled: false };
  }
  if (!isAtLeast(version, min)) {
    return {
      ok: false,
      reason: `kimi-lsp ${version.text} at \`${inv.command}\` is too old (${min} or newer is needed); upgrade it with \`${installHint(inv)} --upgrade\``,
      notInstalled: false,
    };
  }
  return { ok: true, version };
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0);
  return lines.length ? `: ${lines[lines.length - 1]}` : '';
}

export async function resolveServer(opts: ResolveOptions, deps: ResolveDeps): Promise<Resolution> {
  const log: string[] = [];
  const tried: string[] = [];
  const hints: string[] = [];
  const found = (source: ServerSource, invocation: KimiInvocation, version: Version): Resolution => {
    log.push(`using kimi-lsp ${version.text} from ${describeSource(source)}: ${shellQuote([invocation.command, ...invocation.prefix])}`);
    return { ok: true, server: { source, invocation, version }, log };
  };
  const fail = (message: string): Resolution => {
    log.push(message);
    return { ok: false, message, log };
  };

  // 1. kimi-lsp.path
  if (opts.settings.path.length) {
    for (const p of opts.settings.path) {
      if (await deps.isExecutableFile(p)) {
        const inv = executableInvocation(p);
        const r = await probe(inv, deps, opts);
        if (r.ok) {
          return found('path', inv, r.version);
        }
        return fail(`kimi-lsp.path: ${r.reason}. Fix or remove the setting, or install the server with \`${installHint(undefined)}\`.`);
      }
      log.push(`kimi-lsp.path: ${p} is not an executable file`);
    }
    log.push('kimi-lsp.path: no entry exists; trying the next way to find the server');
    tried.push(`kimi-lsp.path (${opts.settings.path.join(', ')}: none exists)`);
  }

  // 2. kimi-lsp.interpreter
  if (opts.settings.interpreter.length) {
    const inv = interpreterInvocation(opts.settings.interpreter);
    const r = await probe(inv, deps, opts);
    if (r.ok) {
      return found('interpreter', inv, r.version);
    }
    const hint = r.notInstalled ? ` Install it with \`${installHint(inv)}\`, or fix the setting.` : '';
    return fail(`kimi-lsp.interpreter: ${r.reason}.${hint}`);
  }

  // 3. The Python extension's active environment.
  if (deps.pythonExtensionInterpreter) {
    if (opts.trusted === false) {
      log.push('Python extension environment: skipped in an untrusted workspace');
    } else {
      let interpreter: string[] | undefined;
      try {
        interpreter = await deps.pythonExtensionInterpreter();
      } catch (e) {
        log.push(`Python extension environment: could not be read (${String(e)})`);
      }
      if (interpreter && interpreter.length) {
        const inv = interpreterInvocation(interpreter);
        const r = await probe(inv, deps, opts);
        if (r.ok) {
          return found('python-extension', inv, r.version);
        }
        log.push(`Python extension environment: ${r.reason}`);
        tried.push(`the selected Python environment (${r.reason})`);
        hints.push(`\`${installHint(inv)}\` (into the selected Python environment)`);
      } else if (interpreter !== undefined) {
        log.push('Python extension environment: none selected');
      }
    }
  }

  // 4. PATH
  const onPath = await deps.findOnPath(EXECUTABLE_NAME);
  if (onPath) {
    const inv = executableInvocation(onPath);
    const r = await probe(inv, deps, opts);
    if (r.ok) {
      return found('PATH', inv, r.version);
    }
    return fail(`${EXECUTABLE_NAME} on PATH (${onPath}): ${r.reason}.`);
  }
  tried.push(`\`${EXECUTABLE_NAME}\` on PATH (not found)`);

  hints.push(`\`${installHint(undefined)}\``);
  return fail(
    `The kimi-lsp server was not found. Tried: ${tried.join('; ')}. ` +
      `Install it with ${hints.join(' or ')}, or point the kimi-lsp.path or kimi-lsp.interpreter setting at it.`,
  );
}

/**
 * Whether selecting another interpreter in the Python extension can change which server runs: not
 * when the user pinned one with kimi-lsp.path or kimi-lsp.interpreter. (Undefined: none was found,
 * and the new environment may have it.)
 */
export function dependsOnPythonEnvironment(source: ServerSource | undefined): boolean {
  return source !== 'path' && source !== 'interpreter';
}

export function describeSource(source: ServerSource): string {
  switch (source) {
    case 'path':
      return 'the kimi-lsp.path setting';
    case 'interpreter':
      return 'the kimi-lsp.interpreter setting';
    case 'python-extension':
      return "the Python extension's selected environment";
    case 'PATH':
      return 'PATH';
  }
}

export interface PathLookupEnv {
  PATH?: string;
  PATHEXT?: string;
}

/**
 * `which`: the first `name` in the PATH directories that is an executable file. On Windows each
 * PATHEXT extension is tried too (kimi-lsp.exe from pip's Scripts directory).
 */
export function makeFindOnPath(
  env: PathLookupEnv,
  platform: string,
  isExecutableFile: (path: string) => Promise<boolean>,
): (name: string) => Promise<string | undefined> {
  const win = platform === 'win32';
  const sep = win ? '\\' : '/';
  const dirs = (env.PATH ?? '').split(win ? ';' : ':').filter((d) => d.length > 0);
  const exts = win ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';').filter((e) => e.length > 0)] : [''];
  return async (name: string) => {
    for (const dir of dirs) {
      const base = dir.endsWith('/') || dir.endsWith('\\') ? dir.slice(0, -1) : dir;
      for (const ext of exts) {
        const candidate = `${base}${sep}${name}${ext}`;
        if (await isExecutableFile(candidate)) {
          return candidate;
        }
      }
    }
    return undefined;
  };
}
