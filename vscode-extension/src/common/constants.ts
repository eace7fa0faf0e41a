// Names shared by the extension and its pure modules. No `vscode` import here: the unit tests load it.

export const EXTENSION_ID = 'kimi-lsp';
export const CONFIG_SECTION = 'kimi-lsp';
export const SERVER_NAME = 'kimi-lsp';
export const OUTPUT_CHANNEL_NAME = 'kimi-lsp';

/** The module the interpreter runs. */
export const PYTHON_MODULE = 'kimi_lsp';
/**
 * How an interpreter runs it: like `-m kimi_lsp`, but with the working directory (the user's
 * workspace, an untrusted repository) taken off `sys.path` before anything is imported, so a
 * `kimi_lsp/`, `yaml/` or `packaging/` directory in the workspace is never executed. `-P` does the
 * same but needs Python 3.11; the server supports 3.10.
 */
export const MODULE_ARGS: readonly string[] = [
  '-c',
  "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; " +
    `import runpy; runpy.run_module('${PYTHON_MODULE}', run_name='__main__', alter_sys=True)`,
];
/** `kimi-lsp.importStrategy`, as ruff's extension has it; the first is the default. */
export const IMPORT_STRATEGIES = ['useBundled', 'fromEnvironment'] as const;
export const DEFAULT_IMPORT_STRATEGY = 'useBundled';

/** The bundled server's bootstrap, relative to the extension's directory, and its wheels. */
export const BUNDLE_LAUNCH_SCRIPT = ['bundled', 'tool', 'launch.py'] as const;
export const BUNDLE_LIBS_DIR = ['bundled', 'libs'] as const;
/**
 * How an interpreter runs the bootstrap: `-I` (isolated) keeps the working directory (the user's
 * workspace), PYTHONPATH and the user site-packages off `sys.path`, so only the bundle and the
 * interpreter's own standard library and site-packages are importable; `-u` leaves nothing of the
 * LSP stream in a buffer.
 */
export const BUNDLE_PYTHON_ARGS: readonly string[] = ['-I', '-u'];
/** The oldest Python the bundled server runs on (pyproject.toml's requires-python). */
export const MIN_PYTHON = '3.10';
/** Interpreters looked for on PATH to run the bundled server, in order. */
export const PYTHON_NAMES: readonly string[] = ['python3', 'python'];
/** The bootstrap's exit code for a Python older than MIN_PYTHON, and its stderr prefix. */
export const BUNDLE_EXIT_TOO_OLD = 3;
export const BUNDLE_MESSAGE_PREFIX = 'kimi-lsp-bundle';

/** The console script pip installs. */
export const EXECUTABLE_NAME = 'kimi-lsp';
export const INSTALL_COMMAND = 'pip install kimi-lsp';

/** Oldest server this client speaks to (the first release with the LSP). */
export const MIN_SERVER_VERSION = '0.1.0';

/** The code action kind the server offers for "apply every safe fix in this file". */
export const FIX_ALL_KIND = 'source.fixAll.kimi-lsp';

export const PYTHON_EXTENSION_ID = 'ms-python.python';

export const COMMANDS = {
  restart: 'kimi-lsp.restart',
  showLogs: 'kimi-lsp.showLogs',
  verify: 'kimi-lsp.verify',
  fixAll: 'kimi-lsp.fixAll',
} as const;
