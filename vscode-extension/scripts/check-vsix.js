#!/usr/bin/env node
// Check what a packaged .vsix contains: the manifest and docs, the client bundled into one file
// (dist/extension.js, which may require only `vscode` and Node's own modules), and the bundled
// server (bundled/tool/launch.py and one pure-Python wheel per package: kimi-lsp and every pin of
// bundled/requirements.txt), fewer than MAX_FILES files in all, and nothing else (no node_modules,
// no source maps, no tests, no TypeScript). Reads the zip itself (central directory + inflate), so
// it needs no unzip tool.
//
//   node scripts/check-vsix.js kimi-lsp.vsix [--list]
//   node scripts/check-vsix.js --libs      before packaging: is bundled/libs built and complete?
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { builtinModules } = require('node:module');
const zlib = require('node:zlib');

const MAX_FILES = 30;

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
    const method = buf.readUInt16LE(off + 10);
    const compressed = buf.readUInt32LE(off + 20);
    const size = buf.readUInt32LE(off + 24);
    const nameLen = buf.readUInt16LE(off + 28);
    const extraLen = buf.readUInt16LE(off + 30);
    const commentLen = buf.readUInt16LE(off + 32);
    const local = buf.readUInt32LE(off + 42);
    const name = buf.toString('utf8', off + 46, off + 46 + nameLen);
    entries.push({ name, size, compressed, method, local });
    off += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** The uncompressed bytes of one entry (stored or deflated). */
function entryData(buf, entry) {
  const off = entry.local;
  if (buf.readUInt32LE(off) !== 0x04034b50) {
    throw new Error(`bad local header for ${entry.name}`);
  }
  const start = off + 30 + buf.readUInt16LE(off + 26) + buf.readUInt16LE(off + 28);
  const raw = buf.subarray(start, start + entry.compressed);
  if (entry.method === 0) {
    return raw;
  }
  if (entry.method === 8) {
    return zlib.inflateRawSync(raw);
  }
  throw new Error(`${entry.name}: compression method ${entry.method} is not supported`);
}

/** `name==version` pins of bundled/requirements.txt, names normalised as in wheel file names. */
function bundledPins(file) {
  const pins = [];
  for (const raw of fs.readFileSync(file, 'utf8').split(/\r?\n/)) {
    const line = raw.split('#')[0].trim();
    const m = /^([A-Za-z0-9_.-]+)==(\S+)/.exec(line);
    if (m) {
      pins.push({ name: m[1].toLowerCase().replace(/[-_.]+/g, '_'), version: m[2] });
    }
  }
  return pins;
}

/** Problems with one bundled wheel: binaries inside, or a WHEEL tag other than `*-none-any`. */
function wheelProblems(name, data) {
  const problems = [];
  const inner = zipEntries(data);
  const binaries = inner.filter((e) => /\.(so|pyd|dylib|dll)$/i.test(e.name)).map((e) => e.name);
  if (binaries.length) {
    problems.push(`${name} is not pure Python: ${binaries.join(', ')}`);
  }
  const wheelFile = inner.find((e) => /^[^/]+\.dist-info\/WHEEL$/.test(e.name));
  if (!wheelFile) {
    problems.push(`${name} has no .dist-info/WHEEL`);
  } else {
    const tags = entryData(data, wheelFile)
      .toString('utf8')
      .split(/\r?\n/)
      .filter((l) => l.startsWith('Tag:'))
      .map((l) => l.slice(4).trim());
    if (!tags.length || !tags.every((t) => t.endsWith('-none-any'))) {
      problems.push(`${name} is tagged ${tags.join(', ') || '(nothing)'}, not pure Python`);
    }
  }
  return problems;
}

/** Modules the bundled client requires at run time; only `vscode` and Node's own may remain. */
function requiredModules(js) {
  const found = new Set();
  for (const m of js.matchAll(/\brequire\(\s*["'`]([^"'`]+)["'`]\s*\)/g)) {
    found.add(m[1]);
  }
  return [...found];
}

/** Problems with the wheel names in bundled/libs: one for kimi-lsp and one per pin, nothing else. */
function libsProblems(wheelNames, root) {
  const problems = [];
  const expected = [{ name: 'kimi_lsp', version: undefined }, ...bundledPins(path.join(root, 'bundled', 'requirements.txt'))];
  for (const pin of expected) {
    const matches = wheelNames.filter((w) => {
      const [dist, version] = w.split('-');
      return dist.toLowerCase() === pin.name && (pin.version === undefined || version === pin.version);
    });
    if (matches.length !== 1) {
      problems.push(`bundled server: expected one wheel for ${pin.name}${pin.version ? `==${pin.version}` : ''} in bundled/libs, found ${matches.length}`);
    }
  }
  for (const w of wheelNames) {
    if (!w.endsWith('.whl') || !expected.some((p) => w.split('-')[0].toLowerCase() === p.name)) {
      problems.push(`bundled server: unexpected file bundled/libs/${w}`);
    }
  }
  return problems;
}

function main(argv) {
  const root = path.resolve(__dirname, '..');
  if (argv.includes('--libs')) {
    const dir = path.join(root, 'bundled', 'libs');
    const problems = fs.existsSync(dir) ? libsProblems(fs.readdirSync(dir), root) : [`${dir} does not exist`];
    for (const p of problems) {
      console.error(`check-vsix: ${p}`);
    }
    if (problems.length) {
      console.error('check-vsix: build the bundled server first: npm run bundle-server (npm run package does)');
      return 1;
    }
    return 0;
  }
  const file = argv.find((a) => !a.startsWith('--'));
  if (!file) {
    console.error('usage: check-vsix.js FILE.vsix [--list]');
    return 2;
  }
  const buf = fs.readFileSync(path.resolve(file));
  const entries = zipEntries(buf);
  const byName = new Map(entries.map((e) => [e.name, e]));
  const names = entries.map((e) => e.name);
  const problems = [];

  if (argv.includes('--list')) {
    for (const e of entries) {
      console.log(`${String(e.size).padStart(9)}  ${e.name}`);
    }
  }

  if (entries.length >= MAX_FILES) {
    problems.push(`${entries.length} files; fewer than ${MAX_FILES} are expected (is node_modules in again?)`);
  }

  const required = [
    'extension.vsixmanifest',
    'extension/package.json',
    'extension/dist/extension.js',
    'extension/bundled/tool/launch.py',
    'extension/README.md',
    'extension/CHANGELOG.md',
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

  const pkgEntry = byName.get('extension/package.json');
  if (pkgEntry) {
    const pkg = JSON.parse(entryData(buf, pkgEntry).toString('utf8'));
    const main = `extension/${String(pkg.main).replace(/^\.\//, '')}`;
    if (main !== 'extension/dist/extension.js') {
      problems.push(`package.json "main" is ${pkg.main}, not the bundle ./dist/extension.js`);
    }
  }

  // The client: one file, everything but vscode and Node built-ins inside it.
  const jsEntry = byName.get('extension/dist/extension.js');
  if (jsEntry) {
    const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
    const outside = requiredModules(entryData(buf, jsEntry).toString('utf8')).filter((m) => m !== 'vscode' && !builtins.has(m));
    if (outside.length) {
      problems.push(`dist/extension.js requires modules that are not bundled: ${outside.join(', ')}`);
    }
  }

  // The server: exactly one pure wheel for kimi-lsp and for each pin of bundled/requirements.txt.
  const wheels = names.filter((n) => n.startsWith('extension/bundled/libs/'));
  const wheelNames = wheels.map((n) => n.slice('extension/bundled/libs/'.length));
  problems.push(...libsProblems(wheelNames, root));
  for (const n of wheels.filter((w) => w.endsWith('.whl'))) {
    problems.push(...wheelProblems(n.slice('extension/'.length), entryData(buf, byName.get(n))));
  }

  const allowed = [
    /^extension\.vsixmanifest$/,
    /^\[Content_Types\]\.xml$/,
    /^extension\/package\.json$/,
    /^extension\/(readme|changelog)\.md$/i,
    /^extension\/LICENSE(\.txt|\.md)?$/i,
    /^extension\/dist\/extension\.js$/,
    /^extension\/bundled\/tool\/launch\.py$/,
    /^extension\/bundled\/libs\/[^/]+$/,
  ];
  for (const n of names) {
    if (!allowed.some((re) => re.test(n))) {
      problems.push(`not part of the extension: ${n}`);
    }
  }

  const size = fs.statSync(path.resolve(file)).size;
  const unpacked = entries.reduce((a, e) => a + e.size, 0);
  console.log(
    `${path.basename(file)}: ${entries.length} files, ${(size / 1024).toFixed(1)} KiB packed, ${(unpacked / 1024).toFixed(1)} KiB unpacked; ` +
      `bundled server: ${wheelNames.join(', ')}`,
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

module.exports = { zipEntries, entryData };

if (require.main === module) {
  process.exitCode = main(process.argv.slice(2));
}
