/**
 * Loads the YAML config file: parse with positions, resolve `${env:NAME}` secrets, cut disabled
 * sections, validate against the schema (defaults filled in), then the cross-field rules. Every
 * problem is collected and reported at once with `file:line:column` and the key path.
 */
import { readFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { ErrorObject } from 'ajv';
import { ConfigError, type ConfigIssue } from './errors.js';
import { emptyRequired, pruneDisabled } from './prune.js';
import { checkRules, type RuleFinding } from './rules.js';
import { ConfigFileSchema, type SvcConfig } from './schema.js';
import { validateConfigFile } from './validate.js';
import { getPath, isRecord } from '../util/records.js';
import { describeSchema, displayPath, pointerToPath, schemaAt, type PathSegment, type SchemaNode } from './walk.js';

export const DEFAULT_CONFIG_PATH = './config/svc.yaml';
const ROOT_SCHEMA = ConfigFileSchema as SchemaNode;
const ENV_REF = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/;

export interface LoadedConfig {
  /** The file as given (for messages) and resolved. */
  file: string;
  absoluteFile: string;
  /** How the file was chosen. */
  source: 'option' | 'SVC_CONFIG' | 'default';
  config: SvcConfig;
  /** Valid but probably unintended settings, for the log. */
  warnings: string[];
}

/** `--config`, else `SVC_CONFIG`, else `./config/svc.yaml`. */
export function chooseConfigFile(option: string | undefined, env: NodeJS.ProcessEnv = process.env): { file: string; source: LoadedConfig['source'] } {
  if (option) return { file: option, source: 'option' };
  const fromEnv = env['SVC_CONFIG'];
  if (fromEnv) return { file: fromEnv, source: 'SVC_CONFIG' };
  return { file: DEFAULT_CONFIG_PATH, source: 'default' };
}

/** Reads and validates a config file; throws ConfigError listing every problem. */
export function loadConfigFile(file: string, source: LoadedConfig['source'] = 'option', env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const ext = extname(file).toLowerCase();
  if (ext !== '.yaml' && ext !== '.yml') {
    throw new ConfigError([{ file, line: 0, column: 0, path: '', message: `a config file must end in .yaml or .yml (got "${ext || 'no extension'}")` }]);
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = isRecord(err) && typeof err['code'] === 'string' ? err['code'] : 'unknown error';
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : code;
    throw new ConfigError([{ file, line: 0, column: 0, path: '', message: `cannot read the config file: ${why}` }]);
  }
  const { config, warnings } = parseConfigText(text, file, env);
  return { file, absoluteFile: resolve(file), source, config, warnings };
}

/** Parses and validates config text; `file` is used in messages only. */
export function parseConfigText(text: string, file: string, env: NodeJS.ProcessEnv = process.env): { config: SvcConfig; warnings: string[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  const at = (offset: number, path: PathSegment[], message: string): ConfigIssue => {
    const pos = lineCounter.linePos(offset);
    return { file, line: pos.line, column: pos.col, path: displayPath(path), message };
  };
  if (doc.errors.length > 0) {
    throw new ConfigError(doc.errors.map((e) => at(e.pos[0], [], `YAML syntax error: ${(e.message.split('\n')[0] ?? e.code).replace(/ at line \d+, column \d+:?$/, '')}`)));
  }
  const issueAt: IssueAt = (path, message, key = false) => at(nodeOffset(doc, path, key), path, message);

  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  if (!isRecord(data) || !('Svc' in data)) {
    throw new ConfigError([issueAt([], 'the file must hold a mapping with the root key "Svc" (an empty section is written "Svc: {}")')]);
  }
  if (data['Svc'] === null) data['Svc'] = {};

  const issues: ConfigIssue[] = [];
  resolveEnvRefs(data, [], env, (path, name) => issues.push(issueAt(path, `environment variable ${name} is not set (referenced as \${env:${name}})`)));
  const disabled = pruneDisabled(data, ROOT_SCHEMA);
  const result = validateConfigFile(data);
  if (!result.ok) issues.push(...schemaIssues(result.errors, data, issueAt));
  // Defaults are filled in even when validation failed, so empty required settings are found either way.
  for (const path of emptyRequired(data, ROOT_SCHEMA, disabled)) issues.push(issueAt(path, `must be set ${whyInUse(path, data)}`));
  if (issues.length > 0 || !result.ok) throw new ConfigError(sortIssues(issues));

  const findings = checkRules(result.value.Svc);
  const ruleErrors = findings.filter((f) => f.severity === 'error').map((f: RuleFinding) => issueAt(['Svc', ...f.path], f.message));
  if (ruleErrors.length > 0) throw new ConfigError(sortIssues(ruleErrors));
  const warnings = findings.filter((f) => f.severity === 'warning').map((f) => `${displayPath(['Svc', ...f.path])}: ${f.message}`);
  return { config: result.value.Svc, warnings };
}

/** Names the switch that puts the section holding `path` in use: "because Svc.heartbeat.enable is true". */
function whyInUse(path: PathSegment[], data: unknown): string {
  for (let i = path.length - 1; i > 0; i--) {
    const section = path.slice(0, i);
    const schema = schemaAt(ROOT_SCHEMA, section);
    const onlyWhen = schemaAt(ROOT_SCHEMA, path.slice(0, i + 1))?.['x-only-when'];
    if (onlyWhen) return `because ${displayPath([...section, onlyWhen.key])} is ${String(onlyWhen.value)}`;
    const gate = schema?.['x-gate']?.find((rel) => getPath(data, [...section, ...rel.split('.')]) === true);
    if (gate) return `because ${displayPath([...section, ...gate.split('.')])} is true`;
  }
  return '';
}

function sortIssues(issues: ConfigIssue[]): ConfigIssue[] {
  return [...issues].sort((a, b) => a.line - b.line || a.column - b.column);
}

/**
 * Character offset of the node at `path` (of its key when `key`). A path that is not in the file
 * (a missing setting) points at the key of its nearest ancestor that is.
 */
function nodeOffset(doc: Document, path: PathSegment[], key: boolean): number {
  let node: unknown = doc.contents;
  let offset = (doc.contents)?.range?.[0] ?? 0;
  let keyOffset = offset;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    let next: Node | null | undefined;
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      if (!pair) return keyOffset;
      keyOffset = (pair.key as Node).range?.[0] ?? keyOffset;
      next = pair.value as Node | null;
      if (i === path.length - 1 && key) return keyOffset;
    } else if (isSeq(node) && typeof seg === 'number') {
      next = node.items[seg] as Node | undefined;
      if (!next?.range) return keyOffset;
      keyOffset = next.range[0];
    } else {
      return keyOffset;
    }
    offset = next?.range?.[0] ?? keyOffset;
    node = next;
  }
  return offset;
}

/** Replaces every string value `${env:NAME}` by the variable; numbers and booleans are converted where the schema wants them. */
function resolveEnvRefs(value: unknown, path: PathSegment[], env: NodeJS.ProcessEnv, missing: (path: PathSegment[], name: string) => void): unknown {
  if (typeof value === 'string') {
    const match = ENV_REF.exec(value);
    if (!match) return value;
    const name = match[1] ?? '';
    const resolved = env[name];
    if (resolved === undefined) {
      missing(path, name);
      return value;
    }
    return convertForSchema(resolved, schemaAt(ROOT_SCHEMA, path));
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => (value[i] = resolveEnvRefs(item, [...path, i], env, missing)));
  } else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) value[k] = resolveEnvRefs(v, [...path, k], env, missing);
  }
  return value;
}

function convertForSchema(text: string, schema: SchemaNode | undefined): unknown {
  const type = schema?.type;
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(text.trim())) return Number(text.trim());
  if (type === 'boolean' && /^(true|false)$/i.test(text.trim())) return text.trim().toLowerCase() === 'true';
  return text;
}

type IssueAt = (path: PathSegment[], message: string, key?: boolean) => ConfigIssue;

/** One issue per offending key, from ajv's errors; problems in disabled sections are silenced. */
function schemaIssues(errors: ErrorObject[], data: unknown, issueAt: IssueAt): ConfigIssue[] {
  const byPath = new Map<string, ConfigIssue>();
  for (const err of errors) {
    const base = pointerToPath(err.instancePath, data);
    let path = base;
    let message: string;
    let onKey = false;
    if (err.keyword === 'additionalProperties') {
      const name = String((err.params as { additionalProperty: string }).additionalProperty);
      path = [...base, name];
      onKey = true;
      const known = Object.keys(schemaAt(ROOT_SCHEMA, base)?.properties ?? {});
      const suggestion = closest(name, known);
      message = suggestion ? `unknown key; did you mean "${suggestion}"?` : known.length > 0 ? `unknown key (known keys here: ${known.join(', ')})` : 'unknown key';
    } else if (err.keyword === 'required') {
      const name = String((err.params as { missingProperty: string }).missingProperty);
      path = [...base, name];
      message = 'is required';
    } else if (err.keyword === 'x-schedule') {
      message = err.message ?? 'is not a text schedule';
    } else if (err.keyword === 'minProperties' && schemaAt(ROOT_SCHEMA, base)?.properties) {
      message = `must give at least one of: ${Object.keys(schemaAt(ROOT_SCHEMA, base)?.properties ?? {}).join(', ')}`;
    } else {
      const schema = schemaAt(ROOT_SCHEMA, base) ?? (err.parentSchema as SchemaNode | undefined);
      message = `must be ${schema ? describeSchema(schema) : (err.message ?? 'valid')} (got ${preview(getPath(data, base))})`;
    }
    const display = displayPath(path);
    if (!byPath.has(display)) byPath.set(display, issueAt(path, message, onKey));
  }
  return [...byPath.values()];
}

function preview(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (typeof value === 'string') return value.length > 40 ? `"${value.slice(0, 40)}…"` : `"${value}"`;
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return 'a section';
}

/** The known key a likely typo was meant to be: same letters in another case, or an edit distance of at most 2. */
export function closest(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const sameCase = known.find((k) => k.toLowerCase() === lower);
  if (sameCase) return sameCase;
  let best: { key: string; d: number } | undefined;
  for (const key of known) {
    const d = editDistance(lower, key.toLowerCase());
    const limit = Math.max(1, Math.min(2, Math.floor(Math.max(name.length, key.length) / 3)));
    if (d <= limit && (!best || d < best.d)) best = { key, d };
  }
  return best?.key;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number) => d[i]?.[j] ?? Number.MAX_SAFE_INTEGER;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}
