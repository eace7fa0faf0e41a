#!/usr/bin/env node
// Check what a packaged .vsix contains: the compiled extension, its manifest and docs, and the
// production dependencies, and nothing else (no source maps, no tests, no TypeScript sources, no
// dev dependencies). Reads the zip's central directory itself, so it needs no unzip tool.
//
//   node scripts/check-vsix.js kimi-lsp.vsix [--list]
'use strict';

const fs = require('node:fs');
const path = require('node:path');

function zipEntries(buf) {
  // End of central directory: signature 0x06054b50, within the last 64 KiB + 22 bytes.
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65557); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) {
    throw new Error('not a zip file (no end of central directory)');
  }
  const count = buf.readUInt16LE(eocd + 10);
  let off = buf.readUInt32LE(eocd + 16);
  const entries = [];
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(off) !== 0x02014b50) {
      throw new Error(`bad central directory entry at ${off}`);
    }
    const compressed = buf.readUInt32LE(off + 20);
    const size = buf.readUInt32LE(off + 24);
    const nameLen = buf.readUInt16LE(off + 28);
    const extraLen = buf.readUInt16LE(off + 30);
    const commentLen = buf.readUInt16LE(off + 32);
    const name = buf.toString('utf8', off + 46, off + 46 + nameLen);
    entries.push({ name, size, compressed });
    off += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** Packages in package-lock.json that `npm ci --omit=dev` would install. */
function productionPackages(lockPath) {
  const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
  const prod = new Set();
  for (const [key, meta] of Object.entries(lock.packages || {})) {
    if (key.startsWith('node_modules/') && !meta.dev && !meta.optional) {
      prod.add(key.slice('node_modules/'.length));
    }
  }
  return prod;
}

function main(argv) {
  const file = argv.find((a) => !a.startsWith('--'));
  if (!file) {
    console.error('usage: check-vsix.js FILE.vsix [--list]');
    return 2;
  }
  const root = path.resolve(__dirname, '..');
  const buf = fs.readFileSync(path.resolve(file));
  const entries = zipEntries(buf);
  const names = entries.map((e) => e.name);
  const problems = [];

  if (argv.includes('--list')) {
    for (const e of entries) {
      console.log(`${String(e.size).padStart(9)}  ${e.name}`);
    }
  }

  const required = [
    'extension.vsixmanifest',
    'extension/package.json',
    'extension/out/src/extension.js',
    'extension/out/src/server.js',
    'extension/out/src/python.js',
    'extension/out/src/common/resolve.js',
    'extension/README.md',
    'extension/CHANGELOG.md',
    'extension/node_modules/vscode-languageclient/package.json',
    'extension/node_modules/vscode-languageclient/lib/node/main.js',
  ];
  // vsce stores README.md and CHANGELOG.md as readme.md and changelog.md.
  const lower = new Set(names.map((n) => n.toLowerCase()));
  for (const r of required) {
    if (!lower.has(r.toLowerCase())) {
      problems.push(`missing: ${r}`);
    }
  }
  if (!names.some((n) => /^extension\/LICENSE(\.txt|\.md)?$/i.test(n))) {
    problems.push('missing: the LICENSE');
  }

  const forbidden = [
    [/\.map$/, 'a source map'],
    [/\.ts$/, 'a TypeScript file'],
    [/^extension\/src\//, 'TypeScript sources'],
    [/^extension\/test\//, 'test sources'],
    [/^extension\/out\/test\//, 'compiled tests'],
    [/^extension\/scripts\//, 'build scripts'],
    [/(^|\/)tsconfig[^/]*\.json$/, 'a tsconfig'],
    [/^extension\/ci\.sh$/, 'the CI script'],
    [/\.vsix$/, 'another .vsix'],
    [/^extension\/\.git/, 'git files'],
  ];
  for (const n of names) {
    for (const [re, what] of forbidden) {
      if (re.test(n)) {
        problems.push(`${what}: ${n}`);
      }
    }
  }

  // Production dependencies only: every package directory shipped must be a non-dev package of the lock.
  const prod = productionPackages(path.join(root, 'package-lock.json'));
  const shipped = new Set();
  for (const n of names) {
    const m = /^extension\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(n);
    if (m) {
      shipped.add(m[1]);
    }
  }
  for (const pkg of shipped) {
    if (!prod.has(pkg)) {
      problems.push(`not a production dependency: node_modules/${pkg}`);
    }
  }
  for (const pkg of prod) {
    if (!shipped.has(pkg)) {
      problems.push(`production dependency missing from the package: node_modules/${pkg}`);
    }
  }

  const size = fs.statSync(path.resolve(file)).size;
  const unpacked = entries.reduce((a, e) => a + e.size, 0);
  console.log(
    `${path.basename(file)}: ${entries.length} files, ${(size / 1024).toFixed(1)} KiB packed, ${(unpacked / 1024).toFixed(1)} KiB unpacked; ` +
      `node_modules: ${[...shipped].sort().join(', ')}`,
  );
  if (problems.length) {
    for (const p of problems) {
      console.error(`check-vsix: ${p}`);
    }
    console.error(`check-vsix: ${problems.length} problem(s)`);
    return 1;
  }
  console.log('check-vsix: ok');
  return 0;
}

process.exitCode = main(process.argv.slice(2));
