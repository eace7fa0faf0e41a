// The real (Node) implementations injected into the resolver, run against real files and processes.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { exec, isExecutableFile } from '../../src/common/node';
import { makeFindOnPath, resolveServer } from '../../src/common/resolve';

const posix = process.platform !== 'win32';
const dir = mkdtempSync(join(tmpdir(), 'kimi-lsp-ext-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function script(name: string, body: string): string {
  const p = join(dir, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

test('exec returns stdout, stderr and the exit code', async () => {
  const r = await exec(process.execPath, ['-e', 'console.log("out"); console.error("err"); process.exit(3)'], { timeoutMs: 10_000 });
  assert.equal(r.code, 3);
  assert.equal(r.stdout.trim(), 'out');
  assert.equal(r.stderr.trim(), 'err');
  assert.equal(r.error, undefined);
  const ok = await exec(process.execPath, ['-e', 'console.log("kimi-lsp 0.1.0")'], { timeoutMs: 10_000 });
  assert.deepEqual([ok.code, ok.stdout.trim()], [0, 'kimi-lsp 0.1.0']);
});

test('exec reports a missing program as ENOENT', async () => {
  const r = await exec(join(dir, 'no-such-program'), [], { timeoutMs: 10_000 });
  assert.equal(r.code, null);
  assert.equal(r.error, 'ENOENT');
});

test('exec kills a program that does not answer in time', async () => {
  const r = await exec(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { timeoutMs: 300 });
  assert.equal(r.code, null);
  assert.equal(r.error, 'ETIMEDOUT');
});

test('isExecutableFile: files with the execute bit only', { skip: !posix }, async () => {
  const exe = script('exe', 'true');
  const plain = join(dir, 'plain');
  writeFileSync(plain, 'x');
  const sub = join(dir, 'subdir');
  mkdirSync(sub);
  assert.equal(await isExecutableFile(exe), true);
  assert.equal(await isExecutableFile(plain), false);
  assert.equal(await isExecutableFile(sub), false);
  assert.equal(await isExecutableFile(join(dir, 'missing')), false);
});

test('resolution end to end: a kimi-lsp console script on PATH', { skip: !posix }, async () => {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'kimi-lsp'), '#!/bin/sh\n[ "$1" = "--version" ] && echo "kimi-lsp 0.1.0" && exit 0\nexit 2\n');
  chmodSync(join(bin, 'kimi-lsp'), 0o755);
  const r = await resolveServer(
    { settings: { enable: true, importStrategy: 'fromEnvironment', path: [], interpreter: [], args: [] }, timeoutMs: 10_000 },
    { isExecutableFile, exec, findOnPath: makeFindOnPath({ PATH: `${join(dir, 'nothing')}:${bin}` }, process.platform, isExecutableFile) },
  );
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.equal(r.server.invocation.command, join(bin, 'kimi-lsp'));
  assert.equal(r.server.version.text, '0.1.0');
});

test('resolution end to end: an interpreter that lacks the module', { skip: !posix }, async () => {
  const py = script('fakepython', 'echo "$0: No module named kimi_lsp" >&2; exit 1');
  const r = await resolveServer(
    { settings: { enable: true, importStrategy: 'fromEnvironment', path: [], interpreter: [py], args: [] }, timeoutMs: 10_000 },
    { isExecutableFile, exec, findOnPath: async () => undefined },
  );
  assert.ok(!r.ok);
  assert.match(r.message, /kimi-lsp is not installed in/);
  assert.match(r.message, /-m pip install kimi-lsp/);
});
