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
