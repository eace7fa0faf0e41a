// End to end from the packaged .vsix: the server bundled in it starts with a FRESH interpreter (a
// new venv without pip and without any package, so no kimi-lsp, pygls, lsprotocol, attrs, cattrs,
// yaml, tomlkit, packaging, typing_extensions, exceptiongroup or tomli) and publishes KL101 for a
// Kimi-K3 DCP launch whose flashinfer pin is too old. What runs is what a user gets: the files are
// taken out of kimi-lsp.vsix (not from bundled/ in the checkout), the extension's resolver picks
// the command line (importStrategy useBundled, kimi-lsp.interpreter = the fresh venv's python), and
// PYTHONPATH is set to the repository's server/ on purpose: `-I` must keep it off sys.path, and the
// test checks that kimi_lsp was imported from the unpacked bundle in the extension's storage.
//
// The .vsix is KIMI_LSP_VSIX, else ./kimi-lsp.vsix; ci.sh packages it before the tests and sets
// KIMI_LSP_REQUIRE_VSIX=1, so there a missing .vsix fails instead of skipping. The fresh venv is
// made by KIMI_LSP_FRESH_PYTHON, else KIMI_LSP_PYTHON, else python3 (`-m venv` bases it on that
// interpreter's base installation, never on the site-packages of the venv it may run from).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, test } from 'node:test';

import * as P from 'vscode-languageserver-protocol/node';

import { serveCommand } from '../../src/common/args';
import { BUNDLE_LAUNCH_SCRIPT } from '../../src/common/constants';
import { exec, isExecutableFile } from '../../src/common/node';
import { resolveServer } from '../../src/common/resolve';
import { vscodeLikeCapabilities } from './capabilities';
import { PYTHON, SERVER_DIR, TestClient } from './client';

interface ZipEntry {
  name: string;
  size: number;
}
const EXT_ROOT = resolve(__dirname, '..', '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const zip = require(join(EXT_ROOT, 'scripts', 'check-vsix.js')) as {
  zipEntries(buf: Buffer): ZipEntry[];
  entryData(buf: Buffer, e: ZipEntry): Buffer;
};

const VSIX = process.env.KIMI_LSP_VSIX || join(EXT_ROOT, 'kimi-lsp.vsix');
const REQUIRED = process.env.KIMI_LSP_REQUIRE_VSIX === '1';
const FRESH_BASE = process.env.KIMI_LSP_FRESH_PYTHON || PYTHON;
const SERVER_PACKAGES = ['kimi_lsp', 'pygls', 'lsprotocol', 'attrs', 'cattrs', 'yaml', 'tomlkit', 'packaging', 'typing_extensions', 'exceptiongroup', 'tomli'];
// The anchor on the last line is outside the subset syntax/yaml_scan.py reads without PyYAML, so
// the bundle's PyYAML (packed from its sdist's Python sources) composes this file.
const K3_YAML = 'model-path: moonshotai/Kimi-K3\ndcp-size: 8\ndecode-attention-backend: cutedsl_mla\nserved-model-name: &name kimi-k3\n';
const OLD_PIN = 'flashinfer-python==0.6.16.post4\n';
const posix = process.platform !== 'win32';

const tmpRoots: string[] = [];
after(() => {
  for (const d of tmpRoots) {
    rmSync(d, { recursive: true, force: true });
  }
});

function skipReason(): string | false {
  if (!posix) {
    return 'the fresh venv layout (bin/python) is POSIX';
  }
  if (!existsSync(VSIX) && !REQUIRED) {
    return `no ${VSIX} (run npm run package first; ci.sh does)`;
  }
  return false;
}

/** The vsix's extension/ directory, written out as VS Code installs it. */
function unpackVsix(dest: string): void {
  assert.ok(existsSync(VSIX), `${VSIX} is missing`);
  const buf = readFileSync(VSIX);
  for (const e of zip.zipEntries(buf)) {
    if (!e.name.startsWith('extension/') || e.name.endsWith('/')) {
      continue;
    }
    const out = join(dest, e.name.slice('extension/'.length));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, zip.entryData(buf, e));
  }
}

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      walk(p, out);
    } else {
      out.push(p);
    }
  }
  return out;
}

test('the .vsix\'s bundled server runs on a fresh interpreter with no packages and publishes KL101', { timeout: 120_000, skip: skipReason() }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'kimi-lsp-bundle-e2e-'));
  tmpRoots.push(root);
  const ext = join(root, 'extension');
  const storage = join(root, 'globalStorage');
  unpackVsix(ext);

  // A fresh interpreter: a new venv with nothing installed (not even pip).
  const venv = join(root, 'fresh-venv');
  execFileSync(FRESH_BASE, ['-m', 'venv', '--without-pip', venv], { stdio: 'pipe' });
  const fresh = join(venv, 'bin', 'python');
  const probe = execFileSync(
    fresh,
    ['-I', '-c', 'import importlib.util, json, sys; print(json.dumps({"found": [m for m in sys.argv[1:] if importlib.util.find_spec(m)], "path": sys.path}))', ...SERVER_PACKAGES],
    { encoding: 'utf8' },
  );
  const seen = JSON.parse(probe) as { found: string[]; path: string[] };
  assert.deepEqual(seen.found, [], `the fresh interpreter already has ${seen.found.join(', ')}: it proves nothing`);
  const repo = resolve(EXT_ROOT, '..');
  assert.ok(!seen.path.some((p) => p.startsWith(repo)), `the fresh interpreter sees the repository: ${seen.path.join(', ')}`);

  // A Kimi-K3 DCP launch on cutedsl_mla with flashinfer pinned too old, in a git work tree.
  const project = join(root, 'project');
  mkdirSync(join(project, '.git'), { recursive: true });
  writeFileSync(join(project, 'k3.yaml'), K3_YAML);
  writeFileSync(join(project, 'requirements.txt'), OLD_PIN);

  // The extension's own resolution: useBundled, run by kimi-lsp.interpreter.
  const r = await resolveServer(
    {
      settings: { enable: true, importStrategy: 'useBundled', path: [], interpreter: [fresh], args: [] },
      cwd: project,
      bundle: { launchScript: join(ext, ...BUNDLE_LAUNCH_SCRIPT), storageDir: storage },
      timeoutMs: 60_000,
    },
    { isExecutableFile, exec, findOnPath: async () => undefined },
  );
  assert.ok(r.ok, r.ok ? '' : `${r.message}\n${r.log.join('\n')}`);
  assert.equal(r.server.source, 'bundled');
  assert.equal(r.server.interpreterSource, 'interpreter');
  assert.deepEqual(r.server.warnings, [], 'the storage directory is writable here: no fallback');
  const pkg = JSON.parse(readFileSync(join(ext, 'package.json'), 'utf8')) as { version: string };
  assert.equal(r.server.version.text, pkg.version, 'the bundled server is the release the extension was built with');

  // Unpacked once, into one versioned directory of the storage, with every package of the bundle.
  const unpacked = readdirSync(join(storage, 'server')).filter((n) => !n.startsWith('.'));
  assert.equal(unpacked.length, 1, `expected one unpacked bundle: ${unpacked.join(', ')}`);
  const libs = join(storage, 'server', unpacked[0]);
  for (const m of SERVER_PACKAGES) {
    assert.ok(existsSync(join(libs, m)) || existsSync(join(libs, `${m}.py`)), `${m} is not in the unpacked bundle`);
  }
  assert.ok(!walk(libs).some((f) => /\.(so|pyd|dylib)$/.test(f)), 'a compiled extension module in the bundle');

  const cmd = serveCommand(r.server.invocation);
  // PYTHONPATH points at this checkout's server/ on purpose: the isolated bootstrap must ignore it.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root, PYTHONPATH: SERVER_DIR, KIMI_LSP_NO_CACHE: '1' };
  const client = new TestClient(project, { cmd, env });
  try {
    const uri = (p: string) => pathToFileURL(p).href;
    await client.initialize({
      clientInfo: { name: 'Visual Studio Code', version: '1.91.0' },
      rootUri: uri(project),
      workspaceFolders: [{ uri: uri(project), name: 'k3' }],
      capabilities: vscodeLikeCapabilities(),
      initializationOptions: { settings: { configurationPreference: 'project' } },
    });
    const k3 = uri(join(project, 'k3.yaml'));
    await client.conn.sendNotification(P.DidOpenTextDocumentNotification.type, {
      textDocument: { uri: k3, languageId: 'yaml', version: 1, text: K3_YAML },
    });
    const diags = await client.waitForDiagnostics(k3, 'KL101', (d) => d.some((x) => x.code === 'KL101'), 60_000);
    const kl101 = diags.find((d) => d.code === 'KL101')!;
    assert.equal(kl101.severity, P.DiagnosticSeverity.Error);
    assert.equal(kl101.range.start.line, 2, 'on the decode-attention-backend line');
    assert.ok(
      kl101.relatedInformation?.some((x) => x.location.uri === uri(join(project, 'requirements.txt'))),
      `the pin is not in relatedInformation: ${JSON.stringify(kl101.relatedInformation)}`,
    );
    assert.equal(await client.shutdown(), 0, `the server exited non-zero\n${client.stderr}`);
  } finally {
    client.kill();
  }

  // The language server itself was imported from the unpacked bundle (Python wrote its bytecode
  // there), not from the checkout that PYTHONPATH named.
  const cached = walk(join(libs, 'kimi_lsp', 'lsp')).filter((f) => f.includes('__pycache__') && f.endsWith('.pyc'));
  assert.ok(cached.length > 0, 'kimi_lsp.lsp was not imported from the unpacked bundle');
  assert.ok(existsSync(join(libs, 'yaml', '__pycache__')), 'yaml was not imported from the bundle');

  // A second start reuses the unpacked directory (and its bytecode) instead of unpacking again.
  const again = await resolveServer(
    {
      settings: { enable: true, importStrategy: 'useBundled', path: [], interpreter: [fresh], args: [] },
      cwd: project,
      bundle: { launchScript: join(ext, ...BUNDLE_LAUNCH_SCRIPT), storageDir: storage },
      timeoutMs: 60_000,
    },
    { isExecutableFile, exec, findOnPath: async () => undefined },
  );
  assert.ok(again.ok);
  assert.deepEqual(readdirSync(join(storage, 'server')), unpacked);
});

test('the bundled server falls back to a temporary copy, with a warning, when the storage cannot be written', { timeout: 60_000, skip: skipReason() }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'kimi-lsp-bundle-ro-'));
  tmpRoots.push(root);
  const ext = join(root, 'extension');
  unpackVsix(ext);
  // A storage path under a regular file can never be created, whoever runs the test (even root).
  writeFileSync(join(root, 'not-a-directory'), '');
  const r = await resolveServer(
    {
      settings: { enable: true, importStrategy: 'useBundled', path: [], interpreter: [PYTHON], args: [] },
      bundle: { launchScript: join(ext, ...BUNDLE_LAUNCH_SCRIPT), storageDir: join(root, 'not-a-directory', 'storage') },
      timeoutMs: 60_000,
    },
    { isExecutableFile, exec, findOnPath: async () => undefined },
  );
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.equal(r.server.warnings.length, 1, r.log.join('\n'));
  assert.match(r.server.warnings[0], /could not unpack the bundled server into .*not-a-directory.*using a temporary copy/);
});

test('windows starting at the same time unpack the bundle into one directory, atomically', { timeout: 60_000, skip: skipReason() }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'kimi-lsp-bundle-race-'));
  tmpRoots.push(root);
  const ext = join(root, 'extension');
  const storage = join(root, 'globalStorage');
  unpackVsix(ext);
  const launch = join(ext, ...BUNDLE_LAUNCH_SCRIPT);
  const runs = await Promise.all(
    [1, 2, 3, 4].map(() => exec(PYTHON, ['-I', '-u', launch, '--storage', storage, '--', '--version'], { timeoutMs: 60_000 })),
  );
  for (const r of runs) {
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^kimi-lsp \d+\.\d+\.\d+/);
    assert.equal(r.stderr.trim(), '', 'no warning: every process found or made the directory');
  }
  const entries = readdirSync(join(storage, 'server'));
  assert.equal(entries.length, 1, `one unpacked bundle and no half-built directory left: ${entries.join(', ')}`);
  assert.ok(existsSync(join(storage, 'server', entries[0], '.kimi-lsp-bundle-complete')));
});
