// scripts/bundle-server.js: `npm run package` builds the server bundle itself (vscode:prepublish),
// with a Python it picks the way a user would expect and never a different one than was asked for.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

interface Run {
  status: number | null;
  stderr?: string;
  error?: { code?: string; message?: string };
}
const root = resolve(__dirname, '..', '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const bs = require(join(root, 'scripts', 'bundle-server.js')) as {
  pickPython(env: Record<string, string | undefined>, platform: string, run: (cmd: string, args: string[]) => Run): { python?: string[]; tried: string[]; hint?: string };
};

/** A fake spawnSync: each command's answer to the probe, and the commands asked. */
function fakeRun(answers: Record<string, Run>, asked: string[]) {
  return (cmd: string, args: string[]): Run => {
    const line = [cmd, ...args.slice(0, args.indexOf('-c'))].join(' ');
    asked.push(line);
    return answers[line] ?? { status: null, error: { code: 'ENOENT' } };
  };
}

test('packaging builds the server bundle first: vscode:prepublish runs bundle-server before it checks bundled/libs', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const steps = pkg.scripts['vscode:prepublish'].split('&&').map((s) => s.trim());
  assert.deepEqual(steps.slice(0, 2), ['node scripts/bundle-server.js', 'node scripts/check-vsix.js --libs']);
  assert.match(pkg.scripts.package, /^vsce package /, 'vsce runs vscode:prepublish');
  assert.equal(pkg.scripts['bundle-server'], 'node scripts/bundle-server.js');
});

test('the first python3/python on PATH that is 3.10+ with pip builds the bundle', () => {
  const asked: string[] = [];
  const picked = bs.pickPython({}, 'linux', fakeRun({ python3: { status: 3 }, python: { status: 0 } }, asked));
  assert.deepEqual(picked.python, ['python']);
  assert.deepEqual(asked, ['python3', 'python']);
  assert.deepEqual(picked.tried, ['python3: older than Python 3.10']);
});

test('on Windows the py launcher is the last resort', () => {
  const asked: string[] = [];
  const picked = bs.pickPython({}, 'win32', fakeRun({ 'py -3': { status: 0 }, python: { status: 1, stderr: "No module named pip" } }, asked));
  assert.deepEqual(picked.python, ['py', '-3']);
  assert.deepEqual(picked.tried, ['python3: not found', 'python: has no pip']);
});

test('KIMI_LSP_PYTHON is the only Python tried when set: one that cannot build is an error, not a fallback', () => {
  const asked: string[] = [];
  const picked = bs.pickPython({ KIMI_LSP_PYTHON: '/opt/py39/bin/python' }, 'linux', fakeRun({ '/opt/py39/bin/python': { status: 3 }, python3: { status: 0 } }, asked));
  assert.equal(picked.python, undefined);
  assert.deepEqual(asked, ['/opt/py39/bin/python']);
  assert.match(picked.hint ?? '', /KIMI_LSP_PYTHON must name a Python 3\.10\+ with pip/);
  const ok = bs.pickPython({ KIMI_LSP_PYTHON: '/venv/bin/python' }, 'linux', fakeRun({ '/venv/bin/python': { status: 0 } }, []));
  assert.deepEqual(ok.python, ['/venv/bin/python']);
});

test('no usable Python: every one tried is named, with what to do', () => {
  const picked = bs.pickPython({}, 'linux', fakeRun({}, []));
  assert.equal(picked.python, undefined);
  assert.deepEqual(picked.tried, ['python3: not found', 'python: not found']);
  assert.match(picked.hint ?? '', /python3 or python, or set KIMI_LSP_PYTHON/);
});
