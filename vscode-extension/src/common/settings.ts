// Settings normalisation. Pure: the extension hands in what `workspace.getConfiguration('kimi-lsp')`
// returned, and these functions decide what the server and the launcher see.

import { CONFIG_SECTION, DEFAULT_IMPORT_STRATEGY, IMPORT_STRATEGIES } from './constants';
import {
  CODE_OR_PREFIX,
  DEFAULT_PREFERENCE,
  FULL_CODE,
  LAUNCH_KEYS,
  LINT_KEYS,
  PREFERENCES,
  SEVERITIES,
  SEVERITY_ALIASES,
  STRING_KEYS,
} from './settingsSchema';

// The keys, patterns and values come from the one settings schema (server/kimi_lsp/settings_schema.py,
// through scripts/gen_settings.py), so the extension and the server accept the same settings.
export { LAUNCH_KEYS, LINT_KEYS };

export type ImportStrategy = (typeof IMPORT_STRATEGIES)[number];

/** Settings that decide how the server is started (read by the extension, never sent to the server). */
export interface LaunchSettings {
  /** `kimi-lsp.enable`: false starts no server. */
  enable: boolean;
  /** `useBundled`: the extension's own server, run by a Python >= 3.10; `fromEnvironment`: an installed kimi-lsp. */
  importStrategy: ImportStrategy;
  path: string[];
  interpreter: string[];
  args: string[];
}

/**
 * Launch settings that are not in the generated schema's LAUNCH_KEYS (a client setting with
 * choices is generated like `trace.server`, without a list); a change restarts the server too.
 */
export const CLIENT_CHOICE_KEYS = ['importStrategy'] as const;

export type Severity = (typeof SEVERITIES)[number];
export type ConfigurationPreference = (typeof PREFERENCES)[number];

/**
 * The lint settings the server reads through `workspace/configuration` (section "kimi-lsp"), with the
 * same keys as `[tool.kimi-lsp]`. A key is present only when the user set something meaningful, so
 * an empty editor default never overrides the project (an empty `select` would otherwise mean
 * "report nothing").
 */
export interface LintSettings {
  select?: string[];
  ignore?: string[];
  severity?: Record<string, Severity>;
  'sglang-version'?: string;
  'target-gpu'?: string;
  'flashinfer-target'?: string;
  /**
   * Present (false) only when the user turned workspace diagnostics off: the default (on) is the
   * server's own default, and a server without the switch would report the key as unknown.
   */
  workspaceDiagnostics?: false;
  configurationPreference: ConfigurationPreference;
}

export interface Normalized<T> {
  value: T;
  /** Human-readable notes about values that were dropped or corrected; the extension logs them. */
  problems: string[];
}

/**
 * What a settings change calls for. A launch setting starts a different process: restart. A lint
 * setting only changes what the running server reports: tell it (didChangeConfiguration), and it
 * pulls the section again through workspace/configuration. `trace.server` needs neither: the
 * language client applies it to the running connection.
 */
export type SettingsChange = 'restart' | 'reconfigure' | 'none';

export const RESTART_KEYS: readonly string[] = [...LAUNCH_KEYS, ...CLIENT_CHOICE_KEYS].map((k) => `${CONFIG_SECTION}.${k}`);
export const RECONFIGURE_KEYS: readonly string[] = LINT_KEYS.map((k) => `${CONFIG_SECTION}.${k}`);

/** `affects` is `ConfigurationChangeEvent.affectsConfiguration`. */
export function classifyChange(affects: (section: string) => boolean): SettingsChange {
  if (RESTART_KEYS.some((key) => affects(key))) {
    return 'restart';
  }
  if (RECONFIGURE_KEYS.some((key) => affects(key))) {
    return 'reconfigure';
  }
  return 'none';
}

export interface VariableContext {
  workspaceFolder?: string;
  userHome: string;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * Expand the variables the Python tool extensions accept in path-like settings: `${workspaceFolder}`,
 * `${workspaceFolderBasename}`, `${userHome}`, `${env:NAME}` and a leading `~`. An unknown variable
 * is left as written so the error message shows what the user typed.
 */
export function substituteVariables(value: string, ctx: VariableContext): string {
  let out = value.replace(/\$\{([^}]+)\}/g, (whole, name: string) => {
    if (name === 'workspaceFolder') {
      return ctx.workspaceFolder ?? whole;
    }
    if (name === 'workspaceFolderBasename') {
      return ctx.workspaceFolder ? basename(ctx.workspaceFolder) : whole;
    }
    if (name === 'userHome') {
      return ctx.userHome;
    }
    if (name.startsWith('env:')) {
      return ctx.env[name.slice(4)] ?? '';
    }
    return whole;
  });
  if (out === '~' || out.startsWith('~/') || out.startsWith('~\\')) {
    out = ctx.userHome + out.slice(1);
  }
  return out;
}

function basename(p: string): string {
  const parts = p.split(/[\\/]+/).filter((s) => s.length > 0);
  return parts.length ? parts[parts.length - 1] : p;
}

function stringList(raw: unknown, key: string, problems: string[]): string[] {
  if (raw === undefined || raw === null) {
    return [];
  }
  // A plain string is a common hand-edit mistake for a one-element list; accept it.
  const items = typeof raw === 'string' ? [raw] : raw;
  if (!Array.isArray(items)) {
    problems.push(`${CONFIG_SECTION}.${key}: expected a list of strings, ignored`);
    return [];
  }
  const out: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') {
      problems.push(`${CONFIG_SECTION}.${key}: ignored a non-string entry ${JSON.stringify(item)}`);
      continue;
    }
    out.push(item);
  }
  return out;
}

export function normalizeLaunchSettings(raw: unknown, ctx: VariableContext): Normalized<LaunchSettings> {
  const obj = isRecord(raw) ? raw : {};
  const problems: string[] = [];
  const paths = (key: 'path' | 'interpreter'): string[] =>
    stringList(obj[key], key, problems)
      .map((s) => s.trim())
      .filter((s) => s.length > 0)
      .map((s) => substituteVariables(s, ctx));
  // Arguments keep their whitespace (an argument may legitimately contain spaces) but not empties.
  const args = stringList(obj.args, 'args', problems)
    .filter((s) => s.length > 0)
    .map((s) => substituteVariables(s, ctx));
  let enable = true;
  if (typeof obj.enable === 'boolean') {
    enable = obj.enable;
  } else if (obj.enable !== undefined && obj.enable !== null) {
    problems.push(`${CONFIG_SECTION}.enable: expected true or false, using true`);
  }
  let importStrategy: ImportStrategy = DEFAULT_IMPORT_STRATEGY;
  const strategy = obj.importStrategy;
  if (typeof strategy === 'string' && (IMPORT_STRATEGIES as readonly string[]).includes(strategy)) {
    importStrategy = strategy as ImportStrategy;
  } else if (strategy !== undefined && strategy !== null) {
    problems.push(
      `${CONFIG_SECTION}.importStrategy: must be ${IMPORT_STRATEGIES.map((p) => JSON.stringify(p)).join(' or ')}, not ${JSON.stringify(strategy)}; using "${DEFAULT_IMPORT_STRATEGY}"`,
    );
  }
  return { value: { enable, importStrategy, path: paths('path'), interpreter: paths('interpreter'), args }, problems };
}

/** `error`/`warning`/`info` for a severity as written (the schema's aliases, any case); undefined if none. */
function severityName(raw: unknown): Severity | undefined {
  if (typeof raw !== 'string') {
    return undefined;
  }
  const s = raw.trim().toLowerCase();
  const name = SEVERITY_ALIASES[s] ?? s;
  return (SEVERITIES as readonly string[]).includes(name) ? (name as Severity) : undefined;
}

function codeList(raw: unknown, key: string, problems: string[]): string[] | undefined {
  const out: string[] = [];
  for (const item of stringList(raw, key, problems)) {
    const code = item.trim().toUpperCase();
    if (code.length === 0) {
      continue;
    }
    if (!CODE_OR_PREFIX.test(code)) {
      problems.push(`${CONFIG_SECTION}.${key}: "${item}" is not a rule code or prefix (like KL101 or KL2), ignored`);
      continue;
    }
    if (!out.includes(code)) {
      out.push(code);
    }
  }
  return out.length ? out : undefined;
}

function optionalString(raw: unknown, key: string, problems: string[]): string | undefined {
  if (raw === undefined || raw === null) {
    return undefined;
  }
  if (typeof raw !== 'string') {
    problems.push(`${CONFIG_SECTION}.${key}: expected a string, ignored`);
    return undefined;
  }
  const s = raw.trim();
  return s.length ? s : undefined;
}

export function normalizeLintSettings(raw: unknown): Normalized<LintSettings> {
  const obj = isRecord(raw) ? raw : {};
  const problems: string[] = [];
  const value: LintSettings = { configurationPreference: DEFAULT_PREFERENCE };

  const select = codeList(obj.select, 'select', problems);
  if (select) {
    value.select = select;
  }
  const ignore = codeList(obj.ignore, 'ignore', problems);
  if (ignore) {
    value.ignore = ignore;
  }

  if (obj.severity !== undefined && obj.severity !== null) {
    if (!isRecord(obj.severity)) {
      problems.push(`${CONFIG_SECTION}.severity: expected an object like {"KL102": "error"}, ignored`);
    } else {
      const severity: Record<string, Severity> = {};
      for (const [key, sev] of Object.entries(obj.severity)) {
        const code = key.trim().toUpperCase();
        const level = severityName(sev);
        if (!FULL_CODE.test(code)) {
          problems.push(`${CONFIG_SECTION}.severity: "${key}" is not a rule code like KL102, ignored`);
        } else if (!level) {
          problems.push(`${CONFIG_SECTION}.severity: ${code} must be error, warning or info, not ${JSON.stringify(sev)}; ignored`);
        } else {
          severity[code] = level;
        }
      }
      if (Object.keys(severity).length) {
        value.severity = severity;
      }
    }
  }

  for (const key of STRING_KEYS) {
    const s = optionalString(obj[key], key, problems);
    if (s !== undefined) {
      value[key] = s;
    }
  }

  if (obj.workspaceDiagnostics === false) {
    value.workspaceDiagnostics = false;
  } else if (obj.workspaceDiagnostics !== undefined && obj.workspaceDiagnostics !== null && obj.workspaceDiagnostics !== true) {
    problems.push(`${CONFIG_SECTION}.workspaceDiagnostics: expected true or false, ignored`);
  }

  const pref = obj.configurationPreference;
  if (typeof pref === 'string' && (PREFERENCES as readonly string[]).includes(pref)) {
    value.configurationPreference = pref as ConfigurationPreference;
  } else if (pref !== undefined && pref !== null) {
    problems.push(
      `${CONFIG_SECTION}.configurationPreference: must be ${PREFERENCES.map((p) => JSON.stringify(p)).join(' or ')}, using "${DEFAULT_PREFERENCE}"`,
    );
  }
  return { value, problems };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
