// The e2e test applies the server's edits with this helper; a wrong helper would hide server bugs.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { applyTextEdits } from '../e2e/edits';

const r = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

test('replaces a whole line without touching its newline', () => {
  const text = 'numpy==2.0\nflashinfer-python==0.6.16.post4\ntorch\n';
  assert.equal(
    applyTextEdits(text, [{ range: r(1, 0, 1, 31), newText: 'flashinfer-python==0.6.17' }]),
    'numpy==2.0\nflashinfer-python==0.6.17\ntorch\n',
  );
});

test('applies several edits against the original positions', () => {
  const text = 'a\nbb\nccc';
  assert.equal(applyTextEdits(text, [{ range: r(0, 0, 0, 1), newText: 'A1' }, { range: r(2, 1, 2, 3), newText: 'Z' }]), 'A1\nbb\ncZ');
});

test('inserts at the end of the text and clamps positions past a line end', () => {
  assert.equal(applyTextEdits('x\n', [{ range: r(1, 0, 1, 0), newText: 'y\n' }]), 'x\ny\n');
  assert.equal(applyTextEdits('ab\ncd', [{ range: r(0, 1, 0, 99), newText: '' }]), 'a\ncd');
  assert.equal(applyTextEdits('ab', [{ range: r(5, 0, 5, 0), newText: '!' }]), 'ab!');
});
