import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  LINT_KEYS,
  classifyChange,
  normalizeLaunchSettings,
  normalizeLintSettings,
  RECONFIGURE_KEYS,
  RESTART_KEYS,
  substituteVariables,
} from '../../src/common/settings';

const ctx = { workspaceFolder: '/w/proj', userHome: '/home/me', env: { VENV: '/opt/venv' } };

test('VS Code defaults send only the configuration preference', () => {
  // What workspace.getConfiguration('kimi-lsp') returns with nothing set.
  const defaults = {
    path: [],
    interpreter: [],
    args: [],
    trace: { server: 'off' },
    select: [],
    ignore: [],
    severity: {},
    'sglang-version': '',
    'target-gpu': '',
    'flashinfer-target': '',
    configurationPreference: 'project',
  };
  const r = normalizeLintSettings(defaults);
  assert.deepEqual(r.value, { configurationPreference: 'project' });
  assert.deepEqual(r.problems, []);
});

test('an empty select is dropped rather than sent as "report nothing"', () => {
  assert.equal(normalizeLintSettings({ select: [] }).value.select, undefined);
  assert.equal(normalizeLintSettings({ select: ['  '] }).value.select, undefined);
});

test('lint settings keep the [tool.kimi-lsp] keys and normalise codes', () => {
  const r = normalizeLintSettings({
    select: ['kl1', 'KL201', 'KL1'],
    ignore: 'KL204',
    severity: { kl102: 'Error', KL204: 'warn', KL901: 'information' },
    'sglang-version': ' 0.5.22 ',
    'target-gpu': 'b200',
    'flashinfer-target': '0.6.17',
    configurationPreference: 'editor',
    path: ['/ignored'],
  });
  assert.deepEqual(r.value, {
    select: ['KL1', 'KL201'],
    ignore: ['KL204'],
    severity: { KL102: 'error', KL204: 'warning', KL901: 'info' },
    'sglang-version': '0.5.22',
    'target-gpu': 'b200',
    'flashinfer-target': '0.6.17',
    configurationPreference: 'editor',
  });
  assert.deepEqual(r.problems, []);
  for (const key of Object.keys(r.value)) {
    assert.ok((LINT_KEYS as readonly string[]).includes(key), key);
  }
});

test('invalid lint values are dropped with a note, never passed on', () => {
  const r = normalizeLintSettings({
    select: ['KL101', 'E501', 3],
    severity: { KL1: 'error', KL102: 'fatal' },
    'target-gpu': 90,
    configurationPreference: 'workspace',
  });
  assert.deepEqual(r.value, { select: ['KL101'], configurationPreference: 'project' });
  assert.equal(r.problems.length, 6, r.problems.join('\n'));
  assert.match(r.problems.join('\n'), /E501/);
  assert.match(r.problems.join('\n'), /fatal/);
});

test('non-object settings normalise to the defaults', () => {
  assert.deepEqual(normalizeLintSettings(undefined).value, { configurationPreference: 'project' });
  assert.deepEqual(normalizeLintSettings(null).value, { configurationPreference: 'project' });
  assert.deepEqual(normalizeLintSettings([1]).value, { configurationPreference: 'project' });
  assert.deepEqual(normalizeLaunchSettings(undefined, ctx).value, { enable: true, importStrategy: 'useBundled', path: [], interpreter: [], args: [] });
});

test('launch settings substitute variables and drop empty entries', () => {
  const r = normalizeLaunchSettings(
    {
      path: ['', '  ', '${workspaceFolder}/.venv/bin/kimi-lsp', '~/bin/kimi-lsp'],
      interpreter: ['${env:VENV}/bin/python'],
      args: ['--log-level', 'DEBUG', ''],
    },
    ctx,
  );
  assert.deepEqual(r.value, {
    enable: true,
    importStrategy: 'useBundled',
    path: ['/w/proj/.venv/bin/kimi-lsp', '/home/me/bin/kimi-lsp'],
    interpreter: ['/opt/venv/bin/python'],
    args: ['--log-level', 'DEBUG'],
  });
});

test('a string where a list belongs is taken as a one-element list; other types are reported', () => {
  const r = normalizeLaunchSettings({ path: '/x/kimi-lsp', interpreter: 5, args: ['a', 7] }, ctx);
  assert.deepEqual(r.value, { enable: true, importStrategy: 'useBundled', path: ['/x/kimi-lsp'], interpreter: [], args: ['a'] });
  assert.equal(r.problems.length, 2);
});

test('variable substitution', () => {
  assert.equal(substituteVariables('${workspaceFolder}/a', ctx), '/w/proj/a');
  assert.equal(substituteVariables('${workspaceFolderBasename}', ctx), 'proj');
  assert.equal(substituteVariables('${userHome}/x', ctx), '/home/me/x');
  assert.equal(substituteVariables('~', ctx), '/home/me');
  assert.equal(substituteVariables('a~b', ctx), 'a~b');
  assert.equal(substituteVariables('${env:NOPE}x', ctx), 'x');
  assert.equal(substituteVariables('${unknown}/x', ctx), '${unknown}/x');
  assert.equal(substituteVariables('${workspaceFolder}/x', { userHome: '/h', env: {} }), '${workspaceFolder}/x');
});

test('launch settings restart the server, lint settings reconfigure it, the trace level does neither', () => {
  const change = (keys: string[]) => classifyChange((section) => keys.some((k) => k === section || k.startsWith(`${section}.`)));
  assert.equal(change(['kimi-lsp.interpreter']), 'restart');
  assert.equal(change(['kimi-lsp.path']), 'restart');
  assert.equal(change(['kimi-lsp.args']), 'restart');
  assert.equal(change(['kimi-lsp.args', 'kimi-lsp.select']), 'restart');
  assert.equal(change(['kimi-lsp.select']), 'reconfigure');
  assert.equal(change(['kimi-lsp.severity']), 'reconfigure');
  assert.equal(change(['kimi-lsp.sglang-version']), 'reconfigure');
  assert.equal(change(['kimi-lsp.configurationPreference']), 'reconfigure');
  assert.equal(change(['kimi-lsp.enable']), 'restart');
  assert.equal(change(['kimi-lsp.importStrategy']), 'restart');
  assert.equal(change(['kimi-lsp.workspaceDiagnostics']), 'reconfigure');
  assert.equal(change(['kimi-lsp.trace.server']), 'none');
  assert.equal(change(['editor.fontSize']), 'none');
  assert.ok([...RESTART_KEYS, ...RECONFIGURE_KEYS].every((k) => k.startsWith('kimi-lsp.')));
});

test('importStrategy: useBundled by default, fromEnvironment when chosen, anything else reported', () => {
  assert.equal(normalizeLaunchSettings({}, ctx).value.importStrategy, 'useBundled');
  assert.equal(normalizeLaunchSettings({ importStrategy: 'fromEnvironment' }, ctx).value.importStrategy, 'fromEnvironment');
  const bad = normalizeLaunchSettings({ importStrategy: 'fromPath' }, ctx);
  assert.equal(bad.value.importStrategy, 'useBundled');
  assert.match(bad.problems.join('\n'), /kimi-lsp\.importStrategy: must be "useBundled" or "fromEnvironment", not "fromPath"/);
});

test('enable: true unless set to false; a non-boolean is reported and leaves the server on', () => {
  assert.equal(normalizeLaunchSettings({ enable: false }, ctx).value.enable, false);
  assert.equal(normalizeLaunchSettings({ enable: true }, ctx).value.enable, true);
  const bad = normalizeLaunchSettings({ enable: 'no' }, ctx);
  assert.equal(bad.value.enable, true);
  assert.match(bad.problems.join('\n'), /kimi-lsp\.enable: expected true or false/);
});

test('workspaceDiagnostics is sent to the server only when turned off', () => {
  assert.deepEqual(normalizeLintSettings({ workspaceDiagnostics: true }).value, { configurationPreference: 'project' });
  assert.deepEqual(normalizeLintSettings({ workspaceDiagnostics: false }).value, { workspaceDiagnostics: false, configurationPreference: 'project' });
  const bad = normalizeLintSettings({ workspaceDiagnostics: 'off' });
  assert.deepEqual(bad.value, { configurationPreference: 'project' });
  assert.match(bad.problems.join('\n'), /kimi-lsp\.workspaceDiagnostics: expected true or false/);
});
