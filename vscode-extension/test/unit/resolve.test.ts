import assert from 'node:assert/strict';
import { test } from 'node:test';

import { bundleMessages, dependsOnPythonEnvironment, describeServer, ExecResult, makeFindOnPath, resolveServer, ResolveDeps, ResolveOptions } from '../../src/common/resolve';
import { LaunchSettings } from '../../src/common/settings';
import { MODULE_ARGS } from '../../src/common/constants';

/** How an interpreter runs the module, as the fake machine sees the command line. */
const M = MODULE_ARGS.join(' ');

interface Fake {
  deps: ResolveDeps;
  calls: string[];
}

/**
 * A fake machine: `files` are the executable files, `run` answers a command line (joined by spaces)
 * or is absent (ENOENT), `python` is the Python extension's interpreter.
 */
function fake(opts: {
  files?: string[];
  path?: string[];
  run?: Record<string, ExecResult>;
  python?: string[] | undefined | Error;
}): Fake {
  const calls: string[] = [];
  const files = new Set(opts.files ?? []);
  const deps: ResolveDeps = {
    isExecutableFile: async (p) => files.has(p),
    findOnPath: makeFindOnPath({ PATH: (opts.path ?? []).join(':') }, 'linux', async (p) => files.has(p)),
    exec: async (command, args) => {
      const line = [command, ...args].join(' ');
      calls.push(line);
      return opts.run?.[line] ?? { code: null, stdout: '', stderr: '', error: 'ENOENT' };
    },
  };
  if ('python' in opts) {
    deps.pythonExtensionInterpreter = async () => {
      if (opts.python instanceof Error) {
        throw opts.python;
      }
      return opts.python;
    };
  }
  return { deps, calls };
}

const ok = (v = '0.1.0'): ExecResult => ({ code: 0, stdout: `kimi-lsp ${v}\n`, stderr: '' });
const noModule: ExecResult = { code: 1, stdout: '', stderr: '/usr/bin/python3: No module named kimi_lsp\n' };

function options(settings: Partial<LaunchSettings> = {}, extra: Partial<ResolveOptions> = {}): ResolveOptions {
  return { settings: { enable: true, importStrategy: 'fromEnvironment', path: [], interpreter: [], args: [], ...settings }, ...extra };
}

test('kimi-lsp.path: the first entry that exists wins', async () => {
  const f = fake({
    files: ['/b/kimi-lsp', '/c/kimi-lsp', '/usr/bin/kimi-lsp'],
    path: ['/usr/bin'],
    run: { '/b/kimi-lsp --version': ok('0.3.1'), '/c/kimi-lsp --version': ok() },
  });
  const r = await resolveServer(options({ path: ['/a/kimi-lsp', '/b/kimi-lsp', '/c/kimi-lsp'] }), f.deps);
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.equal(r.server.source, 'path');
  assert.deepEqual(r.server.invocation, { command: '/b/kimi-lsp', prefix: [] });
  assert.equal(r.server.version.text, '0.3.1');
  assert.deepEqual(f.calls, ['/b/kimi-lsp --version']);
  assert.match(r.log.join('\n'), /\/a\/kimi-lsp is not an executable file/);
});

test('kimi-lsp.path: when no entry exists, the next source is tried', async () => {
  const f = fake({ files: ['/usr/bin/kimi-lsp'], path: ['/usr/bin'], run: { '/usr/bin/kimi-lsp --version': ok() } });
  const r = await resolveServer(options({ path: ['/nope/kimi-lsp'] }), f.deps);
  assert.ok(r.ok);
  assert.equal(r.server.source, 'PATH');
});

test('kimi-lsp.path: an entry that exists but is too old is an error, not a silent fallback', async () => {
  const f = fake({
    files: ['/old/kimi-lsp', '/usr/bin/kimi-lsp'],
    path: ['/usr/bin'],
    run: { '/old/kimi-lsp --version': ok('0.0.9'), '/usr/bin/kimi-lsp --version': ok() },
  });
  const r = await resolveServer(options({ path: ['/old/kimi-lsp'] }), f.deps);
  assert.ok(!r.ok);
  assert.match(r.message, /kimi-lsp\.path: kimi-lsp 0\.0\.9 at `\/old\/kimi-lsp` is too old \(0\.1\.0 or newer is needed\)/);
  assert.match(r.message, /pip install kimi-lsp --upgrade/);
  assert.deepEqual(f.calls, ['/old/kimi-lsp --version']);
});

test('kimi-lsp.interpreter: started with -m kimi_lsp and checked with --version', async () => {
  const f = fake({ run: { [`/venv/bin/python ${M} --version`]: ok('0.1.0') }, python: ['/other/python'] });
  const r = await resolveServer(options({ interpreter: ['/venv/bin/python'] }), f.deps);
  assert.ok(r.ok);
  assert.equal(r.server.source, 'interpreter');
  assert.deepEqual(r.server.invocation, { command: '/venv/bin/python', prefix: [...MODULE_ARGS] });
  assert.deepEqual(f.calls, [`/venv/bin/python ${M} --version`]);
});

test('kimi-lsp.interpreter without kimi-lsp installed: an error with the install command for it', async () => {
  const f = fake({
    files: ['/usr/bin/kimi-lsp'],
    path: ['/usr/bin'],
    run: { [`/venv/bin/python ${M} --version`]: noModule, '/usr/bin/kimi-lsp --version': ok() },
  });
  const r = await resolveServer(options({ interpreter: ['/venv/bin/python'] }), f.deps);
  assert.ok(!r.ok);
  assert.match(r.message, /kimi-lsp\.interpreter: kimi-lsp is not installed in `\/venv\/bin\/python`/);
  assert.match(r.message, /`\/venv\/bin\/python -m pip install kimi-lsp`/);
});

test('kimi-lsp.interpreter that does not exist is reported as not found', async () => {
  const f = fake({});
  const r = await resolveServer(options({ interpreter: ['/missing/python'] }), f.deps);
  assert.ok(!r.ok);
  assert.match(r.message, /`\/missing\/python` was not found/);
});

test('the Python extension environment is used when nothing is configured', async () => {
  const f = fake({
    files: ['/usr/bin/kimi-lsp'],
    path: ['/usr/bin'],
    python: ['/proj/.venv/bin/python'],
    run: { [`/proj/.venv/bin/python ${M} --version`]: ok('0.2.0'), '/usr/bin/kimi-lsp --version': ok() },
  });
  const r = await resolveServer(options(), f.deps);
  assert.ok(r.ok);
  assert.equal(r.server.source, 'python-extension');
  assert.deepEqual(r.server.invocation.prefix, [...MODULE_ARGS]);
});

test('the Python extension environment without kimi-lsp falls through to PATH', async () => {
  const f = fake({
    files: ['/home/me/.local/bin/kimi-lsp'],
    path: ['/usr/bin', '/home/me/.local/bin'],
    python: ['/proj/.venv/bin/python'],
    run: { [`/proj/.venv/bin/python ${M} --version`]: noModule, '/home/me/.local/bin/kimi-lsp --version': ok() },
  });
  const r = await resolveServer(options(), f.deps);
  assert.ok(r.ok);
  assert.equal(r.server.source, 'PATH');
  assert.equal(r.server.invocation.command, '/home/me/.local/bin/kimi-lsp');
  assert.match(r.log.join('\n'), /Python extension environment: kimi-lsp is not installed/);
});

test('an untrusted workspace never runs its own Python environment', async () => {
  const f = fake({
    files: ['/usr/bin/kimi-lsp'],
    path: ['/usr/bin'],
    python: ['/proj/.venv/bin/python'],
    run: { [`/proj/.venv/bin/python ${M} --version`]: ok(), '/usr/bin/kimi-lsp --version': ok() },
  });
  const r = await resolveServer(options({}, { trusted: false }), f.deps);
  assert.ok(r.ok);
  assert.equal(r.server.source, 'PATH');
  assert.ok(!f.calls.some((c) => c.startsWith('/proj/')));
});

test('a failing Python extension API is logged and skipped', async () => {
  const f = fake({ files: ['/usr/bin/kimi-lsp'], path: ['/usr/bin'], python: new Error('boom'), run: { '/usr/bin/kimi-lsp --version': ok() } });
  const r = await resolveServer(options(), f.deps);
  assert.ok(r.ok);
  assert.match(r.log.join('\n'), /could not be read \(Error: boom\)/);
});

test('nothing found: a clear error with the install command', async () => {
  const f = fake({ path: ['/usr/bin'] });
  const r = await resolveServer(options(), f.deps);
  assert.ok(!r.ok);
  assert.match(r.message, /The kimi-lsp server was not found/);
  assert.match(r.message, /`pip install kimi-lsp`/);
  assert.match(r.message, /kimi-lsp\.path or kimi-lsp\.interpreter/);
});

test('nothing found with a Python environment selected: both install commands are offered', async () => {
  const f = fake({ python: ['/proj/.venv/bin/python'], run: { [`/proj/.venv/bin/python ${M} --version`]: noModule } });
  const r = await resolveServer(options(), f.deps);
  assert.ok(!r.ok);
  assert.match(r.message, /`\/proj\/\.venv\/bin\/python -m pip install kimi-lsp` \(into the selected Python environment\) or `pip install kimi-lsp`/);
});

test('a version check that prints garbage, crashes or hangs is reported', async () => {
  const cases: [ExecResult, RegExp][] = [
    [{ code: 0, stdout: 'usage: something\n', stderr: '' }, /printed no kimi-lsp version: usage: something/],
    [{ code: 2, stdout: '', stderr: 'Traceback\nImportError: cannot import name x\n' }, /failed with exit code 2: ImportError: cannot import name x/],
    [{ code: null, stdout: '', stderr: '', error: 'ETIMEDOUT' }, /did not finish \(ETIMEDOUT\)/],
  ];
  for (const [result, re] of cases) {
    const f = fake({ files: ['/usr/bin/kimi-lsp'], path: ['/usr/bin'], run: { '/usr/bin/kimi-lsp --version': result } });
    const r = await resolveServer(options(), f.deps);
    assert.ok(!r.ok);
    assert.match(r.message, re);
  }
});

test('a throwing exec is treated as a failed start', async () => {
  const deps: ResolveDeps = {
    isExecutableFile: async () => false,
    findOnPath: async () => '/usr/bin/kimi-lsp',
    exec: async () => {
      throw new Error('spawn EACCES');
    },
  };
  const r = await resolveServer(options(), deps);
  assert.ok(!r.ok);
  assert.match(r.message, /spawn EACCES/);
});

test('the minimum version is configurable for tests of newer features', async () => {
  const f = fake({ files: ['/usr/bin/kimi-lsp'], path: ['/usr/bin'], run: { '/usr/bin/kimi-lsp --version': ok('0.1.0') } });
  const r = await resolveServer(options({}, { minVersion: '0.2.0' }), f.deps);
  assert.ok(!r.ok);
  assert.match(r.message, /too old \(0\.2\.0 or newer/);
});

test('PATH lookup: POSIX takes the first directory with an executable', async () => {
  const find = makeFindOnPath({ PATH: '/a::/b/:/c' }, 'linux', async (p) => p === '/b/kimi-lsp' || p === '/c/kimi-lsp');
  assert.equal(await find('kimi-lsp'), '/b/kimi-lsp');
  assert.equal(await makeFindOnPath({}, 'linux', async () => true)('kimi-lsp'), undefined);
});

test('PATH lookup: Windows tries the PATHEXT extensions', async () => {
  const seen: string[] = [];
  const find = makeFindOnPath({ PATH: 'C:\\Python\\Scripts;C:\\bin\\', PATHEXT: '.COM;.EXE' }, 'win32', async (p) => {
    seen.push(p);
    return p === 'C:\\bin\\kimi-lsp.EXE';
  });
  assert.equal(await find('kimi-lsp'), 'C:\\bin\\kimi-lsp.EXE');
  assert.deepEqual(seen.slice(0, 3), ['C:\\Python\\Scripts\\kimi-lsp', 'C:\\Python\\Scripts\\kimi-lsp.COM', 'C:\\Python\\Scripts\\kimi-lsp.EXE']);
});

test('only a server that was not pinned by a setting follows the Python environment', () => {
  assert.equal(dependsOnPythonEnvironment('path'), false);
  assert.equal(dependsOnPythonEnvironment('interpreter'), false);
  assert.equal(dependsOnPythonEnvironment('python-extension'), true);
  assert.equal(dependsOnPythonEnvironment('PATH'), true);
  assert.equal(dependsOnPythonEnvironment(undefined), true);
});

// importStrategy useBundled: the extension's own server, run by a Python >= 3.10.

const BUNDLE = { launchScript: '/ext/bundled/tool/launch.py', storageDir: '/store' };
/** How an interpreter runs the bundle's bootstrap, as the fake machine sees the command line. */
const B = `-I -u ${BUNDLE.launchScript} --storage ${BUNDLE.storageDir} --`;
const tooOld = (v: string): ExecResult => ({
  code: 3,
  stdout: '',
  stderr: `kimi-lsp-bundle: error: the bundled kimi-lsp server needs Python 3.10 or newer; /usr/bin/python3 is Python ${v}\n`,
});

function bundledOptions(settings: Partial<LaunchSettings> = {}, extra: Partial<ResolveOptions> = {}): ResolveOptions {
  return options({ importStrategy: 'useBundled', ...settings }, { bundle: BUNDLE, ...extra });
}

test('useBundled: the Python extension\'s interpreter runs the bundle, isolated, with the storage directory', async () => {
  const f = fake({
    files: ['/usr/bin/python3', '/usr/bin/kimi-lsp'],
    path: ['/usr/bin'],
    python: ['/proj/.venv/bin/python'],
    run: { [`/proj/.venv/bin/python ${B} --version`]: ok(), '/usr/bin/kimi-lsp --version': ok('9.9.9') },
  });
  const r = await resolveServer(bundledOptions(), f.deps);
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.equal(r.server.source, 'bundled');
  assert.equal(r.server.interpreterSource, 'python-extension');
  assert.deepEqual(r.server.invocation, {
    command: '/proj/.venv/bin/python',
    prefix: ['-I', '-u', BUNDLE.launchScript, '--storage', BUNDLE.storageDir, '--'],
  });
  assert.deepEqual(f.calls, [`/proj/.venv/bin/python ${B} --version`], 'no installed kimi-lsp is asked');
  assert.equal(describeServer(r.server), "bundled with the extension, run by /proj/.venv/bin/python (the Python extension's selected interpreter)");
});

test('useBundled: a selected Python older than 3.10 is logged, and python3 on PATH is used', async () => {
  const f = fake({
    files: ['/usr/bin/python3'],
    path: ['/usr/bin'],
    python: ['/old/bin/python'],
    run: { [`/old/bin/python ${B} --version`]: tooOld('3.9.18'), [`/usr/bin/python3 ${B} --version`]: ok() },
  });
  const r = await resolveServer(bundledOptions(), f.deps);
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.equal(r.server.interpreterSource, 'PATH');
  assert.equal(r.server.invocation.command, '/usr/bin/python3');
  assert.match(r.log.join('\n'), /Python extension environment: the bundled kimi-lsp server needs Python 3\.10 or newer; .* is Python 3\.9\.18/);
});

test('useBundled: python3, then python, on PATH', async () => {
  const f = fake({ files: ['/usr/bin/python'], path: ['/usr/bin'], run: { [`/usr/bin/python ${B} --version`]: ok() } });
  const r = await resolveServer(bundledOptions(), f.deps);
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.equal(r.server.invocation.command, '/usr/bin/python');
  assert.deepEqual(f.calls, [`/usr/bin/python ${B} --version`]);
});

test('useBundled: kimi-lsp.interpreter runs the bundle; when it is too old that is an error, not a fallback', async () => {
  const good = fake({ files: ['/usr/bin/python3'], path: ['/usr/bin'], run: { [`conda run -n s python ${B} --version`]: ok() } });
  const r = await resolveServer(bundledOptions({ interpreter: ['conda', 'run', '-n', 's', 'python'] }), good.deps);
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.equal(r.server.interpreterSource, 'interpreter');
  assert.deepEqual(r.server.invocation.prefix.slice(0, 5), ['run', '-n', 's', 'python', '-I']);
  assert.equal(dependsOnPythonEnvironment(r.server.source, r.server.interpreterSource), false);

  const old = fake({
    files: ['/usr/bin/python3'],
    path: ['/usr/bin'],
    run: { [`/opt/py39/bin/python ${B} --version`]: tooOld('3.9.18'), [`/usr/bin/python3 ${B} --version`]: ok() },
  });
  const bad = await resolveServer(bundledOptions({ interpreter: ['/opt/py39/bin/python'] }), old.deps);
  assert.ok(!bad.ok);
  assert.match(bad.message, /^kimi-lsp\.interpreter: the bundled kimi-lsp server needs Python 3\.10 or newer; .*Python 3\.9\.18/);
  assert.deepEqual(old.calls, [`/opt/py39/bin/python ${B} --version`], 'no other Python is tried');
});

test('useBundled: kimi-lsp.path still takes precedence', async () => {
  const f = fake({ files: ['/x/kimi-lsp', '/usr/bin/python3'], path: ['/usr/bin'], run: { '/x/kimi-lsp --version': ok() } });
  const r = await resolveServer(bundledOptions({ path: ['/x/kimi-lsp'] }), f.deps);
  assert.ok(r.ok);
  assert.equal(r.server.source, 'path');
});

test('useBundled: no Python 3.10+ anywhere is one clear error naming every interpreter tried', async () => {
  const f = fake({
    files: ['/usr/bin/python3', '/usr/bin/python'],
    path: ['/usr/bin'],
    run: {
      [`/usr/bin/python3 ${B} --version`]: tooOld('3.8.18'),
      [`/usr/bin/python ${B} --version`]: { code: 1, stdout: '', stderr: '  File "launch.py", line 1\nSyntaxError: invalid syntax\n' },
    },
  });
  const r = await resolveServer(bundledOptions(), f.deps);
  assert.ok(!r.ok);
  assert.match(r.message, /^No Python 3\.10 or newer was found to run the bundled kimi-lsp server/);
  assert.match(r.message, /\/usr\/bin\/python3 \(the bundled kimi-lsp server needs Python 3\.10 or newer; .*3\.8\.18\)/);
  assert.match(r.message, /\/usr\/bin\/python \(.*SyntaxError: invalid syntax\)/);
  assert.match(r.message, /Install Python 3\.10\+/);
});

test('useBundled: the bootstrap\'s warnings (storage not writable) are kept for the user', async () => {
  const warned: ExecResult = {
    code: 0,
    stdout: 'kimi-lsp 0.1.0\n',
    stderr: 'kimi-lsp-bundle: warning: could not unpack the bundled server into /store (Permission denied); using a temporary copy\n',
  };
  const f = fake({ files: ['/usr/bin/python3'], path: ['/usr/bin'], run: { [`/usr/bin/python3 ${B} --version`]: warned } });
  const r = await resolveServer(bundledOptions(), f.deps);
  assert.ok(r.ok);
  assert.deepEqual(r.server.warnings, ['could not unpack the bundled server into /store (Permission denied); using a temporary copy']);
  assert.match(r.log.join('\n'), /warning: could not unpack/);
  assert.deepEqual(bundleMessages('noise\nkimi-lsp-bundle: error: bad\n'), { warnings: [], errors: ['bad'] });
});

test('useBundled without a bundle in this installation: an error that names fromEnvironment', async () => {
  const f = fake({ files: ['/usr/bin/python3'], path: ['/usr/bin'] });
  const r = await resolveServer(bundledOptions({}, { bundle: undefined }), f.deps);
  assert.ok(!r.ok);
  assert.match(r.message, /no bundled kimi-lsp server.*importStrategy to "fromEnvironment"/);
  assert.deepEqual(f.calls, []);
});

test('fromEnvironment never runs the bundle, and its not-found error mentions useBundled', async () => {
  const f = fake({ files: ['/usr/bin/python3'], path: ['/usr/bin'], run: { [`/usr/bin/python3 ${B} --version`]: ok() } });
  const r = await resolveServer(options({}, { bundle: BUNDLE }), f.deps);
  assert.ok(!r.ok);
  assert.match(r.message, /The kimi-lsp server was not found.*importStrategy to "useBundled"/);
  assert.deepEqual(f.calls, []);
});

test('a bundled server follows the Python environment unless kimi-lsp.interpreter pins its interpreter', () => {
  assert.equal(dependsOnPythonEnvironment('bundled', 'python-extension'), true);
  assert.equal(dependsOnPythonEnvironment('bundled', 'PATH'), true);
  assert.equal(dependsOnPythonEnvironment('bundled', 'interpreter'), false);
});
