#!/usr/bin/env node
// Build the server the .vsix bundles (bundled/libs) before packaging, unless it is current: runs
// `scripts/bundle_server.py --reuse` with a Python 3.10+ that has pip. `npm run package` (vsce's
// vscode:prepublish) runs this first, so packaging is one command after `npm ci`.
//
// The Python: $KIMI_LSP_PYTHON when set (and then only it: a Python that was asked for and cannot
// build is an error, not a reason to take another), else the first of python3, python (and
// `py -3` on Windows) on PATH that is 3.10+ with pip.
//
//   node scripts/bundle-server.js [--force]       --force: rebuild even when bundled/libs is current
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');

const PROBE = 'import sys, pip; sys.exit(0 if sys.version_info >= (3, 10) else 3)';

/** The interpreter command lines to try, in order. */
function candidates(env, platform) {
  if (env.KIMI_LSP_PYTHON) {
    return { explicit: true, list: [[env.KIMI_LSP_PYTHON]] };
  }
  const list = [['python3'], ['python']];
  if (platform === 'win32') {
    list.push(['py', '-3']);
  }
  return { explicit: false, list };
}

/** Why `cmd` cannot build the bundle ('' when it can). */
function unusable(cmd, run = spawnSync) {
  const r = run(cmd[0], [...cmd.slice(1), '-c', PROBE], { encoding: 'utf8' });
  if (r.error) {
    return r.error.code === 'ENOENT' ? 'not found' : String(r.error.message || r.error);
  }
  if (r.status === 3) {
    return 'older than Python 3.10';
  }
  if (r.status !== 0) {
    return /No module named '?pip/.test(r.stderr || '') ? 'has no pip' : `exits ${r.status}`;
  }
  return '';
}

/** The first usable interpreter, or the reasons none is. */
function pickPython(env = process.env, platform = process.platform, run = spawnSync) {
  const { explicit, list } = candidates(env, platform);
  const tried = [];
  for (const cmd of list) {
    const why = unusable(cmd, run);
    if (!why) {
      return { python: cmd, tried };
    }
    tried.push(`${cmd.join(' ')}: ${why}`);
  }
  const hint = explicit
    ? 'KIMI_LSP_PYTHON must name a Python 3.10+ with pip'
    : 'put a Python 3.10+ with pip on PATH as python3 or python, or set KIMI_LSP_PYTHON';
  return { python: undefined, tried, hint };
}

function main(argv) {
  const root = path.resolve(__dirname, '..');
  const picked = pickPython();
  if (!picked.python) {
    console.error(`bundle-server: no Python to build the bundled server with (${picked.tried.join('; ')}); ${picked.hint}`);
    return 1;
  }
  const args = [...picked.python.slice(1), path.join(root, 'scripts', 'bundle_server.py'), ...(argv.includes('--force') ? [] : ['--reuse'])];
  const r = spawnSync(picked.python[0], args, { cwd: root, stdio: 'inherit' });
  if (r.error) {
    console.error(`bundle-server: ${picked.python.join(' ')}: ${r.error.message}`);
    return 1;
  }
  if (r.status !== 0) {
    console.error(`bundle-server: scripts/bundle_server.py failed (exit ${r.status}${r.signal ? `, ${r.signal}` : ''}); the .vsix was not packaged`);
    return 1;
  }
  return 0;
}

module.exports = { candidates, pickPython, unusable };

if (require.main === module) {
  process.exitCode = main(process.argv.slice(2));
}
