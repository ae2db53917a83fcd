/**
 * Loads the YAML config file: read it within bounds (read.ts), parse with positions, resolve
 * `${env:NAME}` secrets, cut disabled sections, list the secret references (`${aws-secret:…}`,
 * `${aws-ssm:…}`: secret-refs.ts) and put in those already fetched, validate against the schema
 * (defaults filled in), then the cross-field rules. Every problem is collected and reported at once with
 * `file:line:column` and the key path. Every step is linear in the size of the file, and no message
 * shows the value of a secret.
 */
import { extname, resolve } from 'node:path';
import type { ErrorObject } from 'ajv';
import { type Document, isMap, isSeq, LineCounter, type Node, type Pair, parseDocument, type YAMLMap } from 'yaml';
import { getPath, isRecord } from '../util/records.js';
import { closest } from './closest.js';
import { convertForSchema, envRefName } from './env-refs.js';
import { ConfigError, type ConfigIssue, formatIssue, preview, quote, type RuleFinding } from './errors.js';
import { emptyRequired, pruneDisabled } from './prune.js';
import { documentData, keyText, MAX_CONFIG_BYTES, readConfigBytes, tooLarge, yamlProblems } from './read.js';
import { checkRules, notBuiltFindings } from './rules.js';
import { ConfigFileSchema, type SvcConfig } from './schema.js';
import { looksLikeSecretRef, parseSecretRef, type SecretRefAt } from './secret-refs.js';
import { isSecretPath, secretValues } from './secrets.js';
import { type UnknownKey, unknownKeys } from './unknown-keys.js';
import { validateConfigFile } from './validate.js';
import { describeSchema, displayPath, type PathSegment, pointerToPath, type SchemaNode, schemaAt } from './walk.js';

export const DEFAULT_CONFIG_PATH = './config/svc.yaml';
const ROOT_SCHEMA = ConfigFileSchema as SchemaNode;

export interface LoadedConfig {
  /** The file as given (for messages) and resolved. */
  file: string;
  absoluteFile: string;
  /** How the file was chosen. */
  source: 'option' | 'SVC_CONFIG' | 'default';
  config: SvcConfig;
  /** Valid but probably unintended settings, for the log. */
  warnings: string[];
  /**
   * Switches that are on for features not built yet (rules.ts NOT_BUILT), each `Svc.key: …`: for
   * `svc validate-config` and the start-up log of the edge agent, which would run those features.
   */
  notBuilt: string[];
  /**
   * The secret references of the sections in use, as written in the file (before `options.secrets`
   * replaced any): what shared/secrets/ fetches and the CDK app grants.
   */
  secretRefs: SecretRefAt[];
  /**
   * Secret keys in use that hold a value written in the file (not a reference, not `${env:NAME}`,
   * not empty): the CDK app refuses them, since the file is bundled into the functions' code.
   */
  secretLiterals: { path: PathSegment[]; line: number; column: number }[];
  /**
   * The `${env:NAME}` values of the sections in use, as written in the file: what a function
   * resolves from its own environment at cold start (resolved.ts lists them in the document).
   */
  envRefs: EnvRefAt[];
}

/** A `${env:NAME}` value found in a config file: the key it is in, the variable, and where. */
export interface EnvRefAt {
  /** Path below the file's root (`Svc` first). */
  path: PathSegment[];
  name: string;
  line: number;
  column: number;
}

export interface LoadOptions {
  /**
   * Fetched values of secret references, by the reference's text: each reference found here is
   * replaced by its value before validation; the others stay as they are written.
   */
  secrets?: ReadonlyMap<string, string>;
}

/** `--config`, else `SVC_CONFIG`, else `./config/svc.yaml`. */
export function chooseConfigFile(
  option: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { file: string; source: LoadedConfig['source'] } {
  if (option) return { file: option, source: 'option' };
  const fromEnv = env['SVC_CONFIG'];
  if (fromEnv) return { file: fromEnv, source: 'SVC_CONFIG' };
  return { file: DEFAULT_CONFIG_PATH, source: 'default' };
}

/** Reads and validates a config file; throws ConfigError listing every problem. */
export function loadConfigFile(
  file: string,
  source: LoadedConfig['source'] = 'option',
  env: NodeJS.ProcessEnv = process.env,
  options: LoadOptions = {},
): LoadedConfig {
  const fileIssue = (message: string, line = 0, column = 0): ConfigError =>
    new ConfigError([{ file, line, column, path: '', message }]);
  const ext = extname(file).toLowerCase();
  if (ext !== '.yaml' && ext !== '.yml')
    throw fileIssue(`a config file must end in .yaml or .yml (got ${quote(ext || 'no extension')})`);
  const read = readConfigBytes(file);
  if (!read.ok) throw fileIssue(read.problem, read.line, read.column);
  return { file, absoluteFile: resolve(file), source, ...parseConfigText(read.text, file, env, options) };
}

/** Parses and validates config text; `file` is used in messages only. */
export function parseConfigText(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
  options: LoadOptions = {},
): Pick<LoadedConfig, 'config' | 'warnings' | 'notBuilt' | 'secretRefs' | 'secretLiterals' | 'envRefs'> {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_CONFIG_BYTES)
    throw new ConfigError([{ file, line: 0, column: 0, path: '', message: tooLarge(bytes) }]);
  const lineCounter = new LineCounter();
  // uniqueKeys off: the library's check compares every key with every other; documentData uses a Set.
  const doc = parseDocument(text, { lineCounter, uniqueKeys: false, prettyErrors: false });
  const at = (offset: number, path: PathSegment[], message: string): ConfigIssue => {
    const pos = lineCounter.linePos(offset);
    return { file, line: pos.line, column: pos.col, path: issuePath(path), message };
  };
  const syntax = yamlProblems(doc);
  if (syntax.length > 0) throw new ConfigError(sortIssues(syntax.map((p) => at(p.offset, p.path, p.message))));
  const { data, problems } = documentData(doc);
  // A key set twice is reported with every other problem of the file; the others stop here.
  const issues: ConfigIssue[] = problems.map((p) => at(p.offset, p.path, p.message));
  if (problems.some((p) => p.recoverable !== true)) throw new ConfigError(sortIssues(issues));

  const offsetOf = nodeOffsets(doc);
  const issueAt: IssueAt = (path, message, key = false) => at(offsetOf(path, key), path, message);
  if (!isRecord(data) || !('Svc' in data)) {
    throw new ConfigError([
      ...issues,
      issueAt([], 'the file must hold a mapping with the root key "Svc" (an empty section is written "Svc: {}")'),
    ]);
  }
  if (data['Svc'] === null) data['Svc'] = {};

  const fromEnv = new Map<string, { path: PathSegment[]; name: string }>();
  resolveEnvRefs(
    data,
    [],
    env,
    (path, name) =>
      issues.push(issueAt(path, `environment variable ${name} is not set (referenced as \${env:${name}})`)),
    fromEnv,
  );
  // Taken before validation, so a secret is recognised even where it has the wrong type or shape.
  const scrub = secretScrubber(data['Svc'], [...(options.secrets?.values() ?? [])]);
  // Looked for in the whole file, before disabled sections are cut: a typo there is a warning.
  const unknown = unknownKeys(data, ROOT_SCHEMA);
  const disabled = pruneDisabled(data, ROOT_SCHEMA);
  const unknownInDisabled = unknown
    .filter(({ path }) => getPath(data, path) === undefined)
    .map((key) => formatIssue(issueAt(key.path, unknownKeyMessage(key, disabled), true)));
  // After pruning: a disabled section's placeholders are neither checked nor fetched.
  const found = findSecretRefs(data, new Set(fromEnv.keys()), options.secrets, issueAt, issues);
  // After pruning too: a variable of a disabled section is not resolved where the config is used.
  const envRefs = [...fromEnv.values()]
    .filter(({ path }) => getPath(data, path) !== undefined)
    .map(({ path, name }): EnvRefAt => {
      const { line, column } = issueAt(path, '');
      return { path, name, line, column };
    });
  const result = validateConfigFile(data);
  if (!result.ok) issues.push(...schemaIssues(result.errors, data, issueAt));
  // Defaults are filled in even when validation failed, so empty required settings are found either way.
  for (const path of emptyRequired(data, ROOT_SCHEMA, disabled))
    issues.push(issueAt(path, `must be set ${whyInUse(path, data)}`));
  if (issues.length > 0 || !result.ok) throw new ConfigError(sortIssues(issues).map(scrub));

  const findings = checkRules(result.value.Svc);
  const ruleErrors = findings
    .filter((f) => f.severity === 'error')
    .map((f: RuleFinding) => scrub(issueAt(['Svc', ...f.path], f.message)));
  if (ruleErrors.length > 0) throw new ConfigError(sortIssues(ruleErrors));
  const line = (f: RuleFinding) =>
    `${displayPath(['Svc', ...f.path])}: ${scrub({ file, line: 0, column: 0, path: '', message: f.message }).message}`;
  return {
    config: result.value.Svc,
    warnings: [...unknownInDisabled, ...findings.filter((f) => f.severity === 'warning').map(line)],
    notBuilt: notBuiltFindings(result.value.Svc).map(line),
    ...found,
    envRefs,
  };
}

/**
 * The key path of an issue as one line: control characters in keys taken from the file are shown
 * escaped, so a quoted key holding a newline cannot start a line of its own.
 */
function issuePath(path: readonly PathSegment[]): string {
  return displayPath(path).replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}

/**
 * Hides a secret of the file wherever a message quotes it (messages quote file text only through
 * `quote`, so the quoted form is what to look for). The schema messages never quote a secret key's
 * value in the first place; this also covers rule messages that quote a name which happens to be a
 * secret, such as an API key pasted as an account name.
 */
function secretScrubber(svc: unknown, fetched: readonly string[]): (issue: ConfigIssue) => ConfigIssue {
  const quoted = new Set([...secretValues(svc, 1), ...fetched].map(quote));
  if (quoted.size === 0) return (issue) => issue;
  const QUOTED = /"(?:[^"\\]|\\.)*"/g;
  return (issue) => ({ ...issue, message: issue.message.replace(QUOTED, (q) => (quoted.has(q) ? '"[REDACTED]"' : q)) });
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
 * Finds the character offset of the node at `path` (of its key when `key`). A path that is not in
 * the file (a missing setting, or one inside an alias) points at the key of its nearest ancestor
 * that is. Each mapping's keys are indexed on first use, so a lookup costs the path's length, not
 * the mapping's size.
 */
function nodeOffsets(doc: Document): (path: PathSegment[], key: boolean) => number {
  const indexes = new WeakMap<YAMLMap, Map<string, Pair>>();
  const pairOf = (map: YAMLMap, seg: PathSegment): Pair | undefined => {
    let index = indexes.get(map);
    if (index === undefined) {
      index = new Map();
      for (const pair of map.items) {
        const text = keyText(pair.key);
        if (text !== undefined && !index.has(text)) index.set(text, pair);
      }
      indexes.set(map, index);
    }
    return index.get(String(seg));
  };
  return (path, key) => {
    let node: unknown = doc.contents;
    let offset = doc.contents?.range?.[0] ?? 0;
    let keyOffset = offset;
    for (let i = 0; i < path.length; i++) {
      const seg = path[i] ?? '';
      let next: Node | null | undefined;
      if (isMap(node)) {
        const pair = pairOf(node, seg);
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
  };
}

/**
 * Replaces every string value `${env:NAME}` by the variable; numbers and booleans are converted where
 * the schema wants them. The values taken from the environment go into `fromEnv`, by display path.
 */
function resolveEnvRefs(
  value: unknown,
  path: PathSegment[],
  env: NodeJS.ProcessEnv,
  missing: (path: PathSegment[], name: string) => void,
  fromEnv: Map<string, { path: PathSegment[]; name: string }>,
): unknown {
  if (typeof value === 'string') {
    const name = envRefName(value);
    if (name === undefined) return value;
    const resolved = env[name];
    if (resolved === undefined) {
      missing(path, name);
      return value;
    }
    fromEnv.set(displayPath(path), { path, name });
    return convertForSchema(resolved, schemaAt(ROOT_SCHEMA, path));
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => (value[i] = resolveEnvRefs(item, [...path, i], env, missing, fromEnv)));
  } else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) value[k] = resolveEnvRefs(v, [...path, k], env, missing, fromEnv);
  }
  return value;
}

/**
 * Walks the sections in use for secret references and literal secrets. A reference must be in a key
 * marked secret and well-formed (anything starting `${aws-` is taken as one, so a typo is reported
 * rather than used as the secret itself); one whose value `fetched` holds is replaced by it.
 */
function findSecretRefs(
  data: unknown,
  fromEnv: ReadonlySet<string>,
  fetched: ReadonlyMap<string, string> | undefined,
  issueAt: IssueAt,
  issues: ConfigIssue[],
): Pick<LoadedConfig, 'secretRefs' | 'secretLiterals'> {
  const secretRefs: LoadedConfig['secretRefs'] = [];
  const secretLiterals: LoadedConfig['secretLiterals'] = [];
  const place = (path: PathSegment[]) => {
    const { line, column } = issueAt(path, '');
    return { path, line, column };
  };
  const walk = (value: unknown, path: PathSegment[]): unknown => {
    if (Array.isArray(value)) value.forEach((item, i) => (value[i] = walk(item, [...path, i])));
    else if (isRecord(value)) for (const [k, v] of Object.entries(value)) value[k] = walk(v, [...path, k]);
    if (typeof value !== 'string') return value;
    const secret = isSecretPath(path);
    if (!looksLikeSecretRef(value)) {
      if (secret && value !== '' && !fromEnv.has(displayPath(path))) secretLiterals.push(place(path));
      return value;
    }
    if (!secret) {
      issues.push(
        issueAt(
          path,
          `a secret reference (\${aws-…}) may stand only in a key marked secret (the secrets of docs/configuration.md); this key takes its value as written`,
        ),
      );
      return value;
    }
    const parsed = parseSecretRef(value);
    if (!parsed.ok) {
      issues.push(issueAt(path, `the secret reference ${parsed.problem}`));
      return value;
    }
    secretRefs.push({ ...place(path), ref: parsed.ref });
    return fetched?.get(value) ?? value;
  };
  walk(data, []);
  return { secretRefs, secretLiterals };
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
      message = unknownKeyText(closest(name, known), known);
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
      message = `must be ${schema ? describeSchema(schema) : (err.message ?? 'valid')} (got ${preview(getPath(data, base), isSecretPath(base))})`;
    }
    const display = displayPath(path);
    if (!byPath.has(display)) byPath.set(display, issueAt(path, message, onKey));
  }
  return [...byPath.values()];
}

/** "unknown key; did you mean …?", or the keys known there when none is close. */
function unknownKeyText(suggestion: string | undefined, known: readonly string[]): string {
  if (suggestion) return `unknown key; did you mean "${suggestion}"?`;
  return known.length > 0 ? `unknown key (known keys here: ${known.join(', ')})` : 'unknown key';
}

/** An unknown key inside a disabled section: what it may have meant, and that the section is off. */
function unknownKeyMessage(key: UnknownKey, disabled: readonly PathSegment[][]): string {
  const section = disabled
    .filter((d) => d.length < key.path.length && d.every((seg, i) => key.path[i] === seg))
    .reduce<PathSegment[] | undefined>(
      (deepest, d) => (deepest && deepest.length >= d.length ? deepest : d),
      undefined,
    );
  const off = section ? ` (${displayPath(section)} is off: nothing in it is checked or used)` : '';
  return `${unknownKeyText(key.suggestion, key.known)}${off}`;
}
