import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  executableInvocation,
  installHint,
  interpreterInvocation,
  serveCommand,
  shellQuote,
  verifyCommand,
  versionCommand,
} from '../../src/common/args';
import { MODULE_ARGS } from '../../src/common/constants';

test('an executable is started as `<path> serve` with the extra arguments after serve', () => {
  const inv = executableInvocation('/opt/venv/bin/kimi-lsp');
  assert.deepEqual(serveCommand(inv, ['--log-level', 'DEBUG']), {
    command: '/opt/venv/bin/kimi-lsp',
    args: ['serve', '--log-level', 'DEBUG'],
  });
  assert.deepEqual(versionCommand(inv), { command: '/opt/venv/bin/kimi-lsp', args: ['--version'] });
});

test('an interpreter runs the module with the working directory off sys.path', () => {
  const inv = interpreterInvocation(['/usr/bin/python3']);
  assert.deepEqual(serveCommand(inv), { command: '/usr/bin/python3', args: [...MODULE_ARGS, 'serve'] });
  assert.deepEqual(versionCommand(inv), { command: '/usr/bin/python3', args: [...MODULE_ARGS, '--version'] });
});

test('an interpreter setting with leading arguments keeps them before -m', () => {
  const inv = interpreterInvocation(['conda', 'run', '-n', 'serve', 'python']);
  assert.deepEqual(serveCommand(inv, ['--log-level', 'INFO']), {
    command: 'conda',
    args: ['run', '-n', 'serve', 'python', ...MODULE_ARGS, 'serve', '--log-level', 'INFO'],
  });
  assert.throws(() => interpreterInvocation([]));
});

test('verify runs on the given launch file, or on none', () => {
  const inv = interpreterInvocation(['python3']);
  assert.deepEqual(verifyCommand(inv, '/w/deploy/k3.yaml'), {
    command: 'python3',
    args: [...MODULE_ARGS, 'verify', '/w/deploy/k3.yaml'],
  });
  assert.deepEqual(verifyCommand(executableInvocation('kimi-lsp')), { command: 'kimi-lsp', args: ['verify'] });
});

test('the install hint names the environment the server would run in', () => {
  assert.equal(installHint(undefined), 'pip install kimi-lsp');
  assert.equal(installHint(executableInvocation('/x/kimi-lsp')), 'pip install kimi-lsp');
  assert.equal(installHint(interpreterInvocation(['/home/me/.venv/bin/python'])), '/home/me/.venv/bin/python -m pip install kimi-lsp');
  assert.equal(
    installHint(interpreterInvocation(['conda', 'run', '-n', 'my env', 'python'])),
    "conda run -n 'my env' python -m pip install kimi-lsp",
  );
});

test('shell quoting leaves safe words alone and single-quotes the rest', () => {
  assert.equal(shellQuote(['kimi-lsp', 'verify', 'deploy/k3.yaml']), 'kimi-lsp verify deploy/k3.yaml');
  assert.equal(shellQuote(['a b', '', "it's", '$HOME']), `'a b' '' 'it'\\''s' '$HOME'`);
});
