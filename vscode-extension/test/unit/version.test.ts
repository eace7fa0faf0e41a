import assert from 'node:assert/strict';
import { test } from 'node:test';

import { compareVersions, isAtLeast, parseVersion, parseVersionOutput } from '../../src/common/version';

test('parses the line kimi-lsp --version prints', () => {
  const v = parseVersionOutput('kimi-lsp 0.1.0\n');
  assert.ok(v);
  assert.deepEqual([v.major, v.minor, v.patch], [0, 1, 0]);
  assert.equal(v.text, '0.1.0');
});

test('accepts development and local version suffixes', () => {
  const v = parseVersionOutput('kimi-lsp 0.2.0.dev3+g1a2b3c\n');
  assert.ok(v);
  assert.deepEqual([v.major, v.minor, v.patch], [0, 2, 0]);
  assert.equal(v.rest, '.dev3+g1a2b3c');
});

test('ignores lines that do not name kimi-lsp', () => {
  assert.equal(parseVersionOutput('Python 3.11.7\nWARNING: something 9.9.9\n'), undefined);
  assert.equal(parseVersionOutput(''), undefined);
  const v = parseVersionOutput('DeprecationWarning: 1.2.3\nkimi-lsp 1.4.2\n');
  assert.equal(v?.text, '1.4.2');
});

test('a missing patch number reads as zero', () => {
  const v = parseVersion('1.2');
  assert.deepEqual([v?.major, v?.minor, v?.patch], [1, 2, 0]);
});

test('compares numerically, not as text', () => {
  const a = parseVersion('0.10.0')!;
  const b = parseVersion('0.9.9')!;
  assert.ok(compareVersions(a, b) > 0);
  assert.ok(isAtLeast(a, '0.1.0'));
  assert.ok(isAtLeast(parseVersion('0.1.0')!, '0.1.0'));
  assert.ok(!isAtLeast(parseVersion('0.0.9')!, '0.1.0'));
  assert.throws(() => isAtLeast(a, 'latest'));
});
