// Finding the kimi-lsp server to start, the way the well-kept Python tool extensions do (ruff-vscode,
// the vscode-python-tools template). Pure: the file system, process execution and the Python
// extension are injected, so every branch is unit-tested without VS Code.
//
// Order:
//   1. `kimi-lsp.path`: the first entry that is an existing executable file  -> `<path> serve`
//   then, by `kimi-lsp.importStrategy`:
//   useBundled (default): the server bundled with the extension, run by the first Python >= 3.10 of
//     2. `kimi-lsp.interpreter`
//     3. the Python extension's active environment (trusted workspaces only)
//     4. `python3`, then `python`, on PATH
//     as `<python> -I -u bundled/tool/launch.py --storage <global storage> -- serve`: nothing is installed
//   fromEnvironment: a kimi-lsp installed by the user, found in
//     2. `kimi-lsp.interpreter`                                              -> `<python> -m kimi_lsp serve`
//     3. the Python extension's active environment (trusted workspaces only) -> `<python> -m kimi_lsp serve`
//     4. `kimi-lsp` on PATH                                                  -> `kimi-lsp serve`
// Whatever is found must answer `--version` with `kimi-lsp X.Y.Z`, X.Y.Z >= MIN_SERVER_VERSION.
//
// A source the user configured explicitly (1 found, 2) never falls through silently to another one
// when it fails: a wrong setting is reported, not papered over (ruff-vscode#691 and #711 are what
// happens otherwise). The implicit sources (3, 4) fall through, and what each said is logged.

import {
  BundleLocation,
  bundledInvocation,
  executableInvocation,
  installHint,
  interpreterInvocation,
  KimiInvocation,
  shellQuote,
  versionCommand,
} from './args';
import { BUNDLE_EXIT_TOO_OLD, BUNDLE_MESSAGE_PREFIX, EXECUTABLE_NAME, MIN_PYTHON, MIN_SERVER_VERSION, PYTHON_MODULE, PYTHON_NAMES } from './constants';
import { LaunchSettings } from './settings';
import { isAtLeast, parseVersionOutput, Version } from './version';

export type ServerSource = 'path' | 'interpreter' | 'python-extension' | 'PATH' | 'bundled';
/** Which interpreter runs the bundled server. */
export type InterpreterSource = 'interpreter' | 'python-extension' | 'PATH';

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
  /** The bundled server (needed for importStrategy useBundled). */
  bundle?: BundleLocation;
}

export interface ResolvedServer {
  source: ServerSource;
  invocation: KimiInvocation;
  version: Version;
  /** For the bundled server: where its interpreter came from. */
  interpreterSource?: InterpreterSource;
  /** What the bundle's bootstrap warned about (e.g. global storage not writable): shown to the user. */
  warnings: string[];
}

export type Resolution =
  | { ok: true; server: ResolvedServer; log: string[] }
  | { ok: false; message: string; log: string[] };

type Probe =
  | { ok: true; version: Version; warnings: string[] }
  | { ok: false; reason: string; notInstalled: boolean; tooOldPython?: boolean; warnings: string[] };

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
  const { warnings, errors } = bundleMessages(res.stderr);
  const fail = (reason: string, notInstalled: boolean, tooOldPython = false): Probe => ({ ok: false, reason, notInstalled, tooOldPython, warnings });
  if (res.error === 'ENOENT') {
    return fail(`\`${inv.command}\` was not found`, true);
  }
  if (res.error && res.code === null) {
    return fail(`\`${shown}\` did not finish (${res.error})`, false);
  }
  if (res.code !== 0) {
    if (errors.length) {
      // The bundle's bootstrap says what is wrong in words meant for the user.
      return fail(errors.join('; '), false, res.code === BUNDLE_EXIT_TOO_OLD);
    }
    if (new RegExp(`No module named '?${PYTHON_MODULE}\\b`).test(res.stderr)) {
      return fail(`kimi-lsp is not installed in \`${inv.command}\``, true);
    }
    return fail(`\`${shown}\` failed with exit code ${res.code}${lastLine(res.stderr)}`, false);
  }
  const version = parseVersionOutput(res.stdout) ?? parseVersionOutput(res.stderr);
  if (!version) {
    return fail(`\`${shown}\` printed no kimi-lsp version${lastLine(res.stdout)}`, false);
  }
  if (!isAtLeast(version, min)) {
    return fail(
      `kimi-lsp ${version.text} at \`${inv.command}\` is too old (${min} or newer is needed); upgrade it with \`${installHint(inv)} --upgrade\``,
      false,
    );
  }
  return { ok: true, version, warnings };
}

/** The lines of the bundle's bootstrap meant for the user (`kimi-lsp-bundle: warning: …` / `error: …`). */
export function bundleMessages(stderr: string): { warnings: string[]; errors: string[] } {
  const warnings: string[] = [];
  const errors: string[] = [];
  const re = new RegExp(`^${BUNDLE_MESSAGE_PREFIX}: (warning|error): (.*)$`);
  for (const line of stderr.split(/\r?\n/)) {
    const m = re.exec(line.trim());
    if (m) {
      (m[1] === 'warning' ? warnings : errors).push(m[2]);
    }
  }
  return { warnings, errors };
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0);
  return lines.length ? `: ${lines[lines.length - 1]}` : '';
}

export async function resolveServer(opts: ResolveOptions, deps: ResolveDeps): Promise<Resolution> {
  const log: string[] = [];
  const tried: string[] = [];
  const found = (source: ServerSource, invocation: KimiInvocation, r: Probe & { ok: true }, interpreterSource?: InterpreterSource): Resolution => {
    const from = source === 'bundled' && interpreterSource ? `the bundle, run by ${describeInterpreterSource(interpreterSource)}` : describeSource(source);
    log.push(`using kimi-lsp ${r.version.text} from ${from}: ${shellQuote([invocation.command, ...invocation.prefix])}`);
    for (const w of r.warnings) {
      log.push(`warning: ${w}`);
    }
    return { ok: true, server: { source, invocation, version: r.version, interpreterSource, warnings: r.warnings }, log };
  };
  const fail = (message: string): Resolution => {
    log.push(message);
    return { ok: false, message, log };
  };

  // 1. kimi-lsp.path, whatever the import strategy (as ruff.path).
  if (opts.settings.path.length) {
    for (const p of opts.settings.path) {
      if (await deps.isExecutableFile(p)) {
        const inv = executableInvocation(p);
        const r = await probe(inv, deps, opts);
        if (r.ok) {
          return found('path', inv, r);
        }
        return fail(`kimi-lsp.path: ${r.reason}. Fix or remove the setting, or install the server with \`${installHint(undefined)}\`.`);
      }
      log.push(`kimi-lsp.path: ${p} is not an executable file`);
    }
    log.push('kimi-lsp.path: no entry exists; trying the next way to find the server');
    tried.push(`kimi-lsp.path (${opts.settings.path.join(', ')}: none exists)`);
  }

  if (opts.settings.importStrategy === 'fromEnvironment') {
    return fromEnvironment(opts, deps, log, tried, found, fail);
  }
  return bundled(opts, deps, log, tried, found, fail);
}

type Found = (source: ServerSource, invocation: KimiInvocation, r: Probe & { ok: true }, interpreterSource?: InterpreterSource) => Resolution;
type Fail = (message: string) => Resolution;

/** The Python extension's interpreter, or undefined (none, untrusted, or unreadable: logged). */
async function pythonExtensionInterpreter(opts: ResolveOptions, deps: ResolveDeps, log: string[]): Promise<string[] | undefined> {
  if (!deps.pythonExtensionInterpreter) {
    return undefined;
  }
  if (opts.trusted === false) {
    log.push('Python extension environment: skipped in an untrusted workspace');
    return undefined;
  }
  let interpreter: string[] | undefined;
  try {
    interpreter = await deps.pythonExtensionInterpreter();
  } catch (e) {
    log.push(`Python extension environment: could not be read (${String(e)})`);
    return undefined;
  }
  if (interpreter !== undefined && interpreter.length === 0) {
    log.push('Python extension environment: none selected');
    return undefined;
  }
  return interpreter;
}

/** importStrategy useBundled: the extension's own server, run by the first Python >= 3.10 found. */
async function bundled(opts: ResolveOptions, deps: ResolveDeps, log: string[], tried: string[], found: Found, fail: Fail): Promise<Resolution> {
  const bundle = opts.bundle;
  if (!bundle) {
    return fail(
      'This installation of the extension has no bundled kimi-lsp server. Reinstall the extension, or set kimi-lsp.importStrategy to "fromEnvironment" to use a kimi-lsp you installed.',
    );
  }
  // 2. kimi-lsp.interpreter: explicit, so a failure is reported, never replaced by another Python.
  if (opts.settings.interpreter.length) {
    const inv = bundledInvocation(opts.settings.interpreter, bundle);
    const r = await probe(inv, deps, opts);
    if (r.ok) {
      return found('bundled', inv, r, 'interpreter');
    }
    return fail(`kimi-lsp.interpreter: ${r.reason}. The bundled server needs Python ${MIN_PYTHON} or newer; fix the setting or remove it.`);
  }
  // 3. The Python extension's active environment.
  const selected = await pythonExtensionInterpreter(opts, deps, log);
  if (selected) {
    const inv = bundledInvocation(selected, bundle);
    const r = await probe(inv, deps, opts);
    if (r.ok) {
      return found('bundled', inv, r, 'python-extension');
    }
    log.push(`Python extension environment: ${r.reason}`);
    tried.push(`the selected Python environment (${r.reason})`);
  }
  // 4. python3, python on PATH.
  for (const name of PYTHON_NAMES) {
    const onPath = await deps.findOnPath(name);
    if (!onPath) {
      tried.push(`\`${name}\` on PATH (not found)`);
      continue;
    }
    const inv = bundledInvocation([onPath], bundle);
    const r = await probe(inv, deps, opts);
    if (r.ok) {
      return found('bundled', inv, r, 'PATH');
    }
    log.push(`${name} on PATH (${onPath}): ${r.reason}`);
    tried.push(`${onPath} (${r.reason})`);
  }
  return fail(
    `No Python ${MIN_PYTHON} or newer was found to run the bundled kimi-lsp server. Tried: ${tried.join('; ')}. ` +
      `Install Python ${MIN_PYTHON}+ (nothing else is needed), select it in the Python extension, or set kimi-lsp.interpreter to it.`,
  );
}

/** importStrategy fromEnvironment: a kimi-lsp the user installed (the order before the bundle existed). */
async function fromEnvironment(opts: ResolveOptions, deps: ResolveDeps, log: string[], tried: string[], found: Found, fail: Fail): Promise<Resolution> {
  const hints: string[] = [];
  // 2. kimi-lsp.interpreter
  if (opts.settings.interpreter.length) {
    const inv = interpreterInvocation(opts.settings.interpreter);
    const r = await probe(inv, deps, opts);
    if (r.ok) {
      return found('interpreter', inv, r);
    }
    const hint = r.notInstalled ? ` Install it with \`${installHint(inv)}\`, or fix the setting.` : '';
    return fail(`kimi-lsp.interpreter: ${r.reason}.${hint}`);
  }

  // 3. The Python extension's active environment.
  const selected = await pythonExtensionInterpreter(opts, deps, log);
  if (selected) {
    const inv = interpreterInvocation(selected);
    const r = await probe(inv, deps, opts);
    if (r.ok) {
      return found('python-extension', inv, r);
    }
    log.push(`Python extension environment: ${r.reason}`);
    tried.push(`the selected Python environment (${r.reason})`);
    hints.push(`\`${installHint(inv)}\` (into the selected Python environment)`);
  }

  // 4. PATH
  const onPath = await deps.findOnPath(EXECUTABLE_NAME);
  if (onPath) {
    const inv = executableInvocation(onPath);
    const r = await probe(inv, deps, opts);
    if (r.ok) {
      return found('PATH', inv, r);
    }
    return fail(`${EXECUTABLE_NAME} on PATH (${onPath}): ${r.reason}.`);
  }
  tried.push(`\`${EXECUTABLE_NAME}\` on PATH (not found)`);

  hints.push(`\`${installHint(undefined)}\``);
  return fail(
    `The kimi-lsp server was not found. Tried: ${tried.join('; ')}. ` +
      `Install it with ${hints.join(' or ')}, point the kimi-lsp.path or kimi-lsp.interpreter setting at it, ` +
      'or set kimi-lsp.importStrategy to "useBundled" to use the server bundled with the extension.',
  );
}

/**
 * Whether selecting another interpreter in the Python extension can change which server runs: not
 * when the user pinned one with kimi-lsp.path or kimi-lsp.interpreter. (Undefined: none was found,
 * and the new environment may have it.)
 */
export function dependsOnPythonEnvironment(source: ServerSource | undefined, interpreterSource?: InterpreterSource): boolean {
  if (source === 'bundled') {
    return interpreterSource !== 'interpreter';
  }
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
    case 'bundled':
      return 'the extension (bundled)';
  }
}

export function describeInterpreterSource(source: InterpreterSource): string {
  switch (source) {
    case 'interpreter':
      return 'the kimi-lsp.interpreter setting';
    case 'python-extension':
      return "the Python extension's selected interpreter";
    case 'PATH':
      return 'the Python on PATH';
  }
}

/** One line for the status item: where the running server came from. */
export function describeServer(server: Pick<ResolvedServer, 'source' | 'interpreterSource' | 'invocation'>): string {
  if (server.source === 'bundled') {
    return `bundled with the extension, run by ${server.invocation.command}${server.interpreterSource ? ` (${describeInterpreterSource(server.interpreterSource)})` : ''}`;
  }
  return `from ${describeSource(server.source)}`;
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
