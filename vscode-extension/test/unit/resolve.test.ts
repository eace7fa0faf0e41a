import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dependsOnPythonEnvironment, ExecResult, makeFindOnPath, resolveServer, ResolveDeps, ResolveOptions } from '../../src/common/resolve';
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
