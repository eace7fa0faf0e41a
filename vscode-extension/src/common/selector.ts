// Which documents the client syncs to the server. Pure data, checked against package.json by a unit test.
//
// Launch files are matched by language *and* by file name, because other extensions re-label them
// (the Docker extension makes compose files `dockercompose`, the GitHub Actions extension makes
// workflows `github-actions-workflow`, and VS Code has no TOML language without an extension).
//
// Pin files are in the selector too: when a quick-fix edits requirements.txt, VS Code opens it as
// a dirty editor and the client sends didOpen/didChange only for selected documents ("transfer of
// ownership", vscode-languageserver-node#919). Without them the server would not know the buffer
// it must version its next edit against.

/** The shape of vscode.DocumentFilter used here (kept structural so this module needs no `vscode`). */
export interface DocumentFilterData {
  scheme: 'file';
  language?: string;
  pattern?: string;
}

export const LAUNCH_LANGUAGES = [
  'yaml',
  'dockercompose',
  'github-actions-workflow',
  'toml',
  'shellscript',
  'dockerfile',
  'pip-requirements',
  'markdown',
  'mdx',
  'restructuredtext',
  'python',
] as const;

export const FILE_PATTERNS = [
  // launch surfaces
  '**/*.{yaml,yml}',
  '**/*.toml',
  '**/*.{sh,bash}',
  '**/{Dockerfile,Containerfile}',
  '**/{Dockerfile,Containerfile}.*',
  '**/*.{dockerfile,Dockerfile,containerfile}',
  // documentation: launches in its code blocks
  '**/*.{md,mdx,markdown,rst}',
  // code: Python files, and notebooks opened as text (cells are located in the .ipynb JSON)
  '**/*.{py,pyw}',
  '**/*.ipynb',
  // pin files: requirements and constraints, manifests, lockfiles
  '**/requirements*.{txt,in}',
  '**/constraints*.txt',
  '**/pyproject.toml',
  '**/pylock*.toml',
  '**/{uv.lock,poetry.lock,pdm.lock}',
  '**/{Pipfile,Pipfile.lock}',
  '**/environment.{yml,yaml}',
] as const;

/** The cells of a Jupyter notebook open in the notebook editor (LSP's NotebookCellTextDocumentFilter).
 * The server synchronises notebooks itself (its `notebookDocumentSync`); the client pulls each
 * cell's diagnostics only for cells its document selector matches, and these never match the
 * `file` filters above (cells have the `vscode-notebook-cell` scheme). */
export interface NotebookCellFilterData {
  notebook: 'jupyter-notebook';
}

export const NOTEBOOK_CELLS: readonly NotebookCellFilterData[] = [{ notebook: 'jupyter-notebook' }];

export function documentSelector(): DocumentFilterData[] {
  return [
    ...LAUNCH_LANGUAGES.map((language) => ({ scheme: 'file' as const, language })),
    ...FILE_PATTERNS.map((pattern) => ({ scheme: 'file' as const, pattern })),
  ];
}
