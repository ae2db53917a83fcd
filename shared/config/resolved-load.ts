/**
 * The functions' config loader: reads the resolved config document the CDK app made at synth
 * (resolved.ts), checks it, and substitutes its references. The full YAML loader (load.ts: YAML,
 * ajv over the whole schema, the rules, the schedule parser) stays out of the function bundles: the
 * document was validated by it at synth, so a cold start checks only what synth could not know.
 *
 * What is checked, and why:
 * - the document's format and version (a document of another version is refused, never misread),
 *   then its layout (TypeBox, ResolvedConfigDocumentSchema);
 * - each substituted value against its own key's schema (type, pattern, length, enum, range): the
 *   variables and secrets are the only values synth did not see. A missing variable or a bad value
 *   fails the cold start with a ConfigError naming the key at its line in the YAML file;
 * - then the whole config against the config schema with TypeBox's Value.Check (about a
 *   millisecond, no compilation): a document synth made always passes, so this guards against a
 *   bundle whose code and document disagree (a hand-edited or stale svc.json), not against the operator.
 *   It does not check what only the full loader checks (text schedules, cross-field rules).
 */
import { isIP } from 'node:net';
import { FormatRegistry, KindGuard, type TSchema, TypeRegistry } from '@sinclair/typebox';
import { Errors } from '@sinclair/typebox/errors';
import { Check } from '@sinclair/typebox/value';
import type * as FetchRefs from '../secrets/fetch-refs.js';
import type { FetchOptions } from '../secrets/fetch-refs.js';
import { readRegularFile } from '../util/files.js';
import { getPath, isRecord, setPath } from '../util/records.js';
import { convertForSchema, envRefName } from './env-refs.js';
import { ConfigError, type ConfigIssue, preview, quote } from './errors.js';
import { SECRET_FETCH_FILE } from './function-bundle.js';
import {
  MAX_RESOLVED_CONFIG_BYTES,
  RESOLVED_CONFIG_FORMAT,
  RESOLVED_CONFIG_VERSION,
  ResolvedConfigDocumentSchema,
  type ResolvedReference,
} from './resolved.js';
import { ConfigFileSchema, type SvcConfig, SvcConfigSchema } from './schema.js';
import { looksLikeSecretRef, parseSecretRef, type SecretRefAt } from './secret-refs.js';
import { isSecretPath } from './secrets.js';
import { describeSchema, displayPath, type PathSegment, type SchemaNode, schemaAt } from './walk.js';

// TypeBox checks the formats and kinds it is told about; ajv's `ip` format (validate.ts) and the
// enums built with Type.Unsafe (builders.ts Enum) are the schema's only others.
if (!FormatRegistry.Has('ip')) FormatRegistry.Set('ip', (value) => isIP(value) !== 0);
if (!TypeRegistry.Has('Unsafe')) {
  TypeRegistry.Set('Unsafe', (schema: TSchema, value) => {
    const values: unknown = schema['enum'];
    return Array.isArray(values) ? values.includes(value) : true;
  });
}

const ROOT = ConfigFileSchema as SchemaNode;

export interface ResolvedLoadOptions {
  env?: NodeJS.ProcessEnv;
  /** Which secret references to fetch (the function's grants); the others stay as written. Default none. */
  wanted?: (path: readonly PathSegment[]) => boolean;
  /** For the secret stores' clients (tests point them at a local stand-in). */
  fetch?: FetchOptions;
}

export interface ResolvedConfig {
  config: SvcConfig;
  /** The YAML file the document was made from. */
  source: string;
}

/**
 * Reads the document at `file`, substitutes `${env:…}` from `options.env` and fetches the wanted
 * secret references, each checked against its key's schema. Throws ConfigError listing every problem.
 */
export async function loadResolvedConfig(file: string, options: ResolvedLoadOptions = {}): Promise<ResolvedConfig> {
  const env = options.env ?? process.env;
  const document = readDocument(file);
  const config = document.config;
  const issues: ConfigIssue[] = [];
  const issue = (ref: ResolvedReference, message: string): void => {
    issues.push({ file: document.source, line: ref.line, column: ref.column, path: displayPath(ref.path), message });
  };
  /** Puts `value` at the reference's key if its key's schema takes it. */
  const substitute = (ref: ResolvedReference, value: unknown): void => {
    const problem = keyProblem(ref.path, value);
    if (problem !== undefined) issue(ref, problem);
    else setPath({ Svc: config }, ref.path, value);
  };

  const secrets: SecretRefAt[] = [];
  for (const ref of document.references) {
    if (getPath({ Svc: config }, ref.path) !== ref.text) {
      issue(
        ref,
        `the document's config does not hold the reference ${quote(ref.text)} here (a damaged document: deploy again)`,
      );
      continue;
    }
    const name = envRefName(ref.text);
    if (name !== undefined) {
      const value = env[name];
      if (value === undefined) issue(ref, `environment variable ${name} is not set (referenced as \${env:${name}})`);
      // A reference must be in the config, where synth sees it and grants it; not in a variable.
      else if (looksLikeSecretRef(value))
        issue(
          ref,
          `environment variable ${name} holds a secret reference; write the reference in the config instead (the stack grants only those)`,
        );
      else substitute(ref, convertForSchema(value, schemaAt(ROOT, ref.path)));
      continue;
    }
    const parsed = parseSecretRef(ref.text);
    if (!parsed.ok) issue(ref, `the reference ${parsed.problem}`);
    else if (options.wanted?.(ref.path))
      secrets.push({ path: ref.path, ref: parsed.ref, line: ref.line, column: ref.column });
  }
  if (issues.length === 0 && secrets.length > 0) {
    const { fetchSecretRefs } = await loadSecretFetcher();
    const values = await fetchSecretRefs(document.source, secrets, options.fetch);
    for (const at of secrets)
      substitute({ path: at.path, text: at.ref.text, line: at.line, column: at.column }, values.get(at.ref.text));
  }
  if (issues.length > 0) throw new ConfigError(issues);

  if (!Check(SvcConfigSchema, config)) {
    const found = [...firstErrors(SvcConfigSchema, config, 5, ['Svc'])];
    throw new ConfigError(
      found.map((e) => ({
        file,
        line: 0,
        column: 0,
        path: e.path,
        message: `${e.message} (the bundled document does not match this function's config schema: deploy again)`,
      })),
    );
  }
  return { config, source: document.source };
}

/**
 * Set to `true` by esbuild's `define` in the Lambda bundles (function-bundle.ts LAMBDA_BUNDLE_FLAG);
 * undeclared elsewhere (dist/, vitest), hence the `typeof`. A build-time constant rather than a
 * look for the sibling file at run time: no file-system probe at cold start, and a bundle whose
 * sibling is missing fails naming it instead of quietly trying a path that only exists in dist/.
 */
declare const SVC_LAMBDA_BUNDLE: boolean | undefined;

/** The fetcher module's type (a type-only import: nothing of it is loaded until loadSecretFetcher). */
type SecretFetcher = typeof FetchRefs;

/**
 * The secret fetcher (fetch-refs.ts on the lean AWS client), loaded only when the config has
 * references, so a function without any never loads its code.
 * The specifier is not a literal, so esbuild leaves the import alone rather than inlining the module
 * (whose static SDK imports it would hoist into every cold start): in a bundle it is the sibling file
 * SECRET_FETCH_FILE, built from fetch-refs.ts with the same options and resolved against the
 * bundle's own URL; elsewhere the module itself.
 */
async function loadSecretFetcher(): Promise<Pick<SecretFetcher, 'fetchSecretRefs'>> {
  const bundled = typeof SVC_LAMBDA_BUNDLE !== 'undefined' && SVC_LAMBDA_BUNDLE;
  const specifier = bundled ? `./${SECRET_FETCH_FILE}` : '../secrets/fetch-refs.js';
  const loaded: unknown = await import(specifier);
  if (!isSecretFetcher(loaded))
    throw new Error(
      `${specifier} does not export fetchSecretRefs: the function's files come from different builds (deploy again)`,
    );
  return loaded;
}

/** The module's shape as far as it can be seen at run time: its one function is there. */
function isSecretFetcher(value: unknown): value is Pick<SecretFetcher, 'fetchSecretRefs'> {
  return isRecord(value) && typeof value['fetchSecretRefs'] === 'function';
}

/** The problem with `value` at `path` by the key's own schema, or undefined when it fits. */
function keyProblem(path: readonly PathSegment[], value: unknown): string | undefined {
  const node = schemaAt(ROOT, path);
  if (!KindGuard.IsSchema(node)) return "is not a key of this function's config schema (deploy again)";
  if (Check(node, value)) return undefined;
  return `must be ${describeSchema(node)} (got ${preview(value, isSecretPath(path))})`;
}

/** At most `n` of TypeBox's errors, each with its key path below `root`. */
function* firstErrors(
  schema: TSchema,
  value: unknown,
  n: number,
  root: PathSegment[],
): Generator<{ path: string; message: string }> {
  let count = 0;
  for (const error of Errors(schema, value)) {
    if (count++ >= n) return;
    const segments = error.path
      .split('/')
      .slice(1)
      .map((seg) => (/^\d+$/.test(seg) ? Number(seg) : seg.replace(/~1/g, '/').replace(/~0/g, '~')));
    // describeSchema words it as the loader's messages do ("one of silly, debug, …", not TypeBox's "Expected kind 'Unsafe'").
    yield {
      path: displayPath([...root, ...segments]),
      message: error.value === undefined ? 'is missing' : `must be ${describeSchema(error.schema)}`,
    };
  }
}

/** The document at `file`, its format, version and layout checked. */
function readDocument(file: string): {
  source: string;
  config: Record<string, unknown>;
  references: ResolvedReference[];
} {
  const fail = (message: string): never => {
    throw new ConfigError([{ file, line: 0, column: 0, path: '', message }]);
  };
  const read = readRegularFile(file, MAX_RESOLVED_CONFIG_BYTES);
  if (!read.ok) return fail(`cannot read the bundled config document: ${read.reason}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(read.bytes.toString('utf8'));
  } catch {
    return fail('the bundled config document is not JSON');
  }
  // Format and version first: a document of another version may have another layout, and the
  // message should say that rather than list the differences.
  if (!isRecord(parsed) || parsed['format'] !== RESOLVED_CONFIG_FORMAT) {
    return fail(
      `is not a resolved config document of Svc (format "${RESOLVED_CONFIG_FORMAT}", made by cdk synth from the YAML config)`,
    );
  }
  const version = parsed['version'];
  if (version !== RESOLVED_CONFIG_VERSION) {
    return fail(
      `the config document has format version ${typeof version === 'number' ? version : quote(String(version))}; this function reads version ${RESOLVED_CONFIG_VERSION}: the bundle's code and config come from different Svc versions (deploy again)`,
    );
  }
  if (!Check(ResolvedConfigDocumentSchema, parsed)) {
    const first = [...firstErrors(ResolvedConfigDocumentSchema, parsed, 1, [])][0];
    return fail(
      `the config document is damaged${first ? ` at ${first.path || 'its root'}: ${first.message}` : ''} (deploy again)`,
    );
  }
  return parsed;
}
