// Building the command lines the extension runs. Pure.

import { BUNDLE_PYTHON_ARGS, MODULE_ARGS } from './constants';

/**
 * How to run kimi-lsp: either its console script (`prefix` empty) or a Python interpreter with
 * `-m kimi_lsp` (`command` is the interpreter, `prefix` its leading arguments plus `MODULE_ARGS`, which
 * runs the module without the working directory on `sys.path`).
 */
export interface KimiInvocation {
  command: string;
  prefix: string[];
}

export interface CommandLine {
  command: string;
  args: string[];
}

export function executableInvocation(executable: string): KimiInvocation {
  return { command: executable, prefix: [] };
}

/** `interpreter` is the `kimi-lsp.interpreter` setting: an executable plus optional leading arguments. */
export function interpreterInvocation(interpreter: readonly string[]): KimiInvocation {
  if (interpreter.length === 0) {
    throw new Error('empty interpreter');
  }
  return { command: interpreter[0], prefix: [...interpreter.slice(1), ...MODULE_ARGS] };
}

/** Where the extension's own server is: its bootstrap script, and the directory it may unpack into. */
export interface BundleLocation {
  launchScript: string;
  storageDir: string;
}

/**
 * The bundled server run by `interpreter` (an executable plus optional leading arguments):
 * `<python> -I -u <launch.py> --storage <dir> …`, then the kimi-lsp arguments as for the console script.
 */
export function bundledInvocation(interpreter: readonly string[], bundle: BundleLocation): KimiInvocation {
  if (interpreter.length === 0) {
    throw new Error('empty interpreter');
  }
  return {
    command: interpreter[0],
    prefix: [...interpreter.slice(1), ...BUNDLE_PYTHON_ARGS, bundle.launchScript, '--storage', bundle.storageDir, '--'],
  };
}

/** `kimi-lsp serve [extra...]`: stdio is the default transport, so nothing else is needed. */
export function serveCommand(inv: KimiInvocation, extraArgs: readonly string[] = []): CommandLine {
  return { command: inv.command, args: [...inv.prefix, 'serve', ...extraArgs] };
}

export function versionCommand(inv: KimiInvocation): CommandLine {
  return { command: inv.command, args: [...inv.prefix, '--version'] };
}

/** `kimi-lsp verify [LAUNCH-FILE]`; without a file the server picks the launch in the working directory. */
export function verifyCommand(inv: KimiInvocation, launchFile?: string): CommandLine {
  return { command: inv.command, args: [...inv.prefix, 'verify', ...(launchFile ? [launchFile] : [])] };
}

/** The pip command that installs kimi-lsp into the environment `inv` runs in (for error messages). */
export function installHint(inv: KimiInvocation | undefined): string {
  const n = MODULE_ARGS.length;
  if (inv && inv.prefix.length >= n && MODULE_ARGS.every((a, i) => inv.prefix[inv.prefix.length - n + i] === a)) {
    const python = [inv.command, ...inv.prefix.slice(0, -n)];
    return `${shellQuote(python)} -m pip install kimi-lsp`;
  }
  return 'pip install kimi-lsp';
}

/**
 * Quote an argv for display or for a POSIX shell: each word is left bare when it is made of safe
 * characters, and single-quoted otherwise.
 */
export function shellQuote(argv: readonly string[]): string {
  return argv.map(quoteWord).join(' ');
}

function quoteWord(word: string): string {
  if (word.length === 0) {
    return "''";
  }
  if (/^[A-Za-z0-9_@%+=:,./~-]+$/.test(word)) {
    return word;
  }
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
