// package.json is the other half of the extension's code: check it agrees with the modules.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

import { COMMANDS, CONFIG_SECTION, FIX_ALL_KIND } from '../../src/common/constants';
import { documentSelector, FILE_PATTERNS, LAUNCH_LANGUAGES } from '../../src/common/selector';
import { CLIENT_CHOICE_KEYS, LAUNCH_KEYS, LINT_KEYS } from '../../src/common/settings';
import { IMPORT_STRATEGIES } from '../../src/common/constants';

const root = resolve(__dirname, '..', '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const props: Record<string, { default?: unknown; scope?: string }> = pkg.contributes.configuration.properties;

test('every setting the modules read is contributed, and nothing else', () => {
  const expected = [...LAUNCH_KEYS, ...CLIENT_CHOICE_KEYS, ...LINT_KEYS, 'trace.server'].map((k) => `${CONFIG_SECTION}.${k}`).sort();
  assert.deepEqual(Object.keys(props).sort(), expected);
});

test('the configuration preference offers project and editor, project first', () => {
  const pref = props[`${CONFIG_SECTION}.configurationPreference`] as { enum: string[]; default: string };
  assert.deepEqual(pref.enum, ['project', 'editor']);
  assert.equal(pref.default, 'project');
});

test('importStrategy offers useBundled (the default) and fromEnvironment; enable and workspaceDiagnostics are switches, on', () => {
  const strategy = props[`${CONFIG_SECTION}.importStrategy`] as { enum: string[]; default: string };
  assert.deepEqual(strategy.enum, [...IMPORT_STRATEGIES]);
  assert.equal(strategy.default, 'useBundled');
  for (const key of ['enable', 'workspaceDiagnostics']) {
    const p = props[`${CONFIG_SECTION}.${key}`] as { type: string; default: unknown };
    assert.equal(p.type, 'boolean', key);
    assert.equal(p.default, true, key);
  }
});

test('every command is contributed', () => {
  const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual(contributed, Object.values(COMMANDS).sort());
  assert.equal(FIX_ALL_KIND, 'source.fixAll.kimi-lsp');
});

test('activation covers every language in the selector, and the pin files', () => {
  const events: string[] = pkg.activationEvents;
  for (const lang of LAUNCH_LANGUAGES) {
    assert.ok(events.includes(`onLanguage:${lang}`), lang);
  }
  const joined = events.join('\n');
  for (const name of ['requirements*', 'uv.lock', 'poetry.lock', 'pdm.lock', 'Pipfile', 'Pipfile.lock', 'pylock*.toml', 'environment.yml']) {
    assert.ok(joined.includes(name), name);
  }
  assert.ok(events.includes('onNotebook:jupyter-notebook'), 'a notebook opened in the notebook editor starts the server');
  assert.ok(!events.includes('*'), 'no star activation');
});

test('the document selector includes the pin files, all on the file scheme', () => {
  const sel = documentSelector();
  assert.ok(sel.every((f) => f.scheme === 'file'));
  const patterns = sel.map((f) => f.pattern).filter(Boolean);
  for (const p of ['**/requirements*.{txt,in}', '**/{uv.lock,poetry.lock,pdm.lock}', '**/{Pipfile,Pipfile.lock}', '**/pylock*.toml', '**/environment.{yml,yaml}']) {
    assert.ok(patterns.includes(p), p);
  }
  const langs = sel.map((f) => f.language).filter(Boolean);
  for (const l of ['yaml', 'toml', 'shellscript', 'dockerfile', 'pip-requirements']) {
    assert.ok(langs.includes(l), l);
  }
  assert.equal(sel.length, LAUNCH_LANGUAGES.length + FILE_PATTERNS.length);
});

test('untrusted workspaces cannot choose the executable', () => {
  const restricted: string[] = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations;
  for (const k of ['path', 'interpreter']) {
    assert.ok(restricted.includes(`${CONFIG_SECTION}.${k}`), k);
  }
});

test('versions: types match the engine, vsce runs on Node 20, the client is pinned', () => {
  const engine = String(pkg.engines.vscode).replace(/^\^/, '');
  assert.equal(pkg.devDependencies['@types/vscode'], engine, '@types/vscode must not be newer than engines.vscode');
  assert.equal(pkg.devDependencies['@vscode/vsce'], '3.9.2', 'vsce 4 needs Node 22');
  assert.match(pkg.dependencies['vscode-languageclient'], /^\d+\.\d+\.\d+$/);
  assert.deepEqual(Object.keys(pkg.dependencies), ['vscode-languageclient']);
  assert.equal(pkg.license, 'Apache-2.0');
  assert.equal(pkg.main, './dist/extension.js', 'the esbuild bundle');
  assert.ok(pkg.devDependencies.esbuild, 'esbuild bundles the client');
  assert.match(pkg.scripts.package, /--no-dependencies/, 'node_modules stay out of the .vsix: they are in the bundle');
});

test('the pure modules do not import vscode', () => {
  const dir = join(root, 'src', 'common');
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
    const text = readFileSync(join(dir, f), 'utf8');
    assert.ok(!/from\s+['"]vscode['"]|require\(\s*['"]vscode['"]\s*\)/.test(text), `${f} imports vscode`);
    assert.ok(!/from\s+['"]vscode-languageclient/.test(text), `${f} imports vscode-languageclient`);
  }
});
