// Reading and comparing the version a `kimi-lsp --version` prints. Pure.

export interface Version {
  major: number;
  minor: number;
  patch: number;
  /** What followed X.Y.Z (e.g. `.dev3+gabc`, `rc1`); informational only. */
  rest: string;
  text: string;
}

const VERSION_RE = /(\d+)\.(\d+)(?:\.(\d+))?([0-9A-Za-z.+-]*)/;

export function parseVersion(text: string): Version | undefined {
  const m = VERSION_RE.exec(text.trim());
  if (!m) {
    return undefined;
  }
  return {
    major: Number(m[1]),
    minor: Number(m[2]),
    patch: m[3] === undefined ? 0 : Number(m[3]),
    rest: m[4] ?? '',
    text: m[0],
  };
}

/**
 * The version in `kimi-lsp --version` output (`kimi-lsp 0.1.0`). Only a line that names kimi-lsp
 * counts, so a stray warning printed by a broken environment is not mistaken for a version.
 */
export function parseVersionOutput(stdout: string): Version | undefined {
  for (const line of stdout.split(/\r?\n/)) {
    const m = /^\s*kimi[-_]lsp\s+v?(\S+)/i.exec(line);
    if (m) {
      return parseVersion(m[1]);
    }
  }
  return undefined;
}

export function compareVersions(a: Version, b: Version): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

/** True when `found` is at least `minimum` (pre-release suffixes are ignored: 0.1.0.dev1 counts as 0.1.0). */
export function isAtLeast(found: Version, minimum: string): boolean {
  const min = parseVersion(minimum);
  if (!min) {
    throw new Error(`not a version: ${minimum}`);
  }
  return compareVersions(found, min) >= 0;
}
