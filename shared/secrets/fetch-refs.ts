/**
 * Fetches secret references (`${aws-secret:…}`, `${aws-ssm:…}`: shared/config/secret-refs.ts) with
 * the Powertools parameters utility, all in parallel. One code path for the Lambda functions (at
 * cold start, the references their function is granted: shared/config/resolved-load.ts) and
 * `svc local` / `svc edge` (at start, every reference in use: fetch.ts). A reference that cannot be
 * fetched fails with a ConfigError naming the key, the reference and what AWS answered: never the
 * value. This module does not import the YAML loader, so the functions' bundles do not hold it.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import type { SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';
import { ConfigError, type ConfigIssue, quote } from '../config/errors.js';
import type { SecretRef, SecretRefAt } from '../config/secret-refs.js';
import { displayPath } from '../config/walk.js';
import { isRecord } from '../util/records.js';

/**
 * How long Powertools keeps a fetched value (seconds): a year, i.e. for the container's life. The
 * config is built once per cold start, so a rotated secret takes effect in new containers (or at
 * the next start of `svc edge`), never halfway through one.
 */
export const SECRET_CACHE_SECONDS = 365 * 24 * 3600;

/** Client settings both providers take (tests point `endpoint` at a local stand-in). */
export type SecretClientConfig = Pick<
  SecretsManagerClientConfig,
  'endpoint' | 'credentials' | 'region' | 'maxAttempts'
>;

export interface FetchOptions {
  clientConfig?: SecretClientConfig;
}

/** One provider per store and region: a name is read in the default region, an ARN in its own. */
class Providers {
  private readonly byKey = new Map<string, SecretsProvider | SSMProvider>();
  constructor(private readonly clientConfig: SecretClientConfig) {}

  get(ref: SecretRef): Promise<string | Uint8Array | undefined> {
    const clientConfig = { ...this.clientConfig, ...(ref.region ? { region: ref.region } : {}) };
    const key = `${ref.store} ${clientConfig.region === undefined ? '' : String(clientConfig.region)}`;
    if (ref.store === 'secret') {
      let provider = this.byKey.get(key);
      if (!(provider instanceof SecretsProvider))
        this.byKey.set(key, (provider = new SecretsProvider({ clientConfig })));
      return provider.get(ref.id, { maxAge: SECRET_CACHE_SECONDS });
    }
    let provider = this.byKey.get(key);
    if (!(provider instanceof SSMProvider)) this.byKey.set(key, (provider = new SSMProvider({ clientConfig })));
    // Decrypted: a SecureString is what a secret parameter should be (a String comes back as it is).
    return provider.get(ref.id, { maxAge: SECRET_CACHE_SECONDS, decrypt: true });
  }
}

/** What AWS (or the SDK) said, as one line: the error's name and message. Never holds a value. */
function reason(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  if (!(cause instanceof Error)) return String(cause);
  // The SDK says "UnknownError" for an error answer without a message (SSM's ParameterNotFound).
  const message = cause.message === 'UnknownError' ? '' : (cause.message.split('\n')[0] ?? '');
  if (!cause.name || cause.name === 'Error' || message.startsWith(cause.name)) return message || 'failed';
  return message ? `${cause.name}: ${message}` : cause.name;
}

/** The text a reference stands for, from what the store holds; a problem is described without the value. */
function valueOf(
  ref: SecretRef,
  stored: string | Uint8Array | undefined,
): { ok: true; value: string } | { ok: false; problem: string } {
  const what = ref.store === 'secret' ? 'the secret' : 'the parameter';
  if (stored === undefined) return { ok: false, problem: `${what} has no value` };
  if (typeof stored !== 'string') return { ok: false, problem: `${what} is binary; Svc reads secrets stored as text` };
  let value = stored;
  if (ref.jsonKey !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(stored);
    } catch {
      return { ok: false, problem: `${what}'s value is not JSON, so it has no key ${quote(ref.jsonKey)}` };
    }
    if (!isRecord(parsed))
      return { ok: false, problem: `${what}'s value is not a JSON object, so it has no key ${quote(ref.jsonKey)}` };
    const field = parsed[ref.jsonKey];
    if (field === undefined)
      return {
        ok: false,
        problem: `${what} has no key ${quote(ref.jsonKey)} (its keys: ${Object.keys(parsed).map(quote).join(', ') || 'none'})`,
      };
    if (typeof field !== 'string') return { ok: false, problem: `key ${quote(ref.jsonKey)} of ${what} is not a text` };
    value = field;
  }
  if (value === '')
    return { ok: false, problem: `${what}${ref.jsonKey === undefined ? '' : `'s key ${quote(ref.jsonKey)}`} is empty` };
  return { ok: true, value };
}

/**
 * Fetches every reference in parallel (each secret or parameter once, however many keys of it are
 * referenced): the values by the reference's text, or a ConfigError with one issue per reference
 * that failed, placed at its key in `file`.
 */
export async function fetchSecretRefs(
  file: string,
  refs: readonly SecretRefAt[],
  options: FetchOptions = {},
): Promise<Map<string, string>> {
  const providers = new Providers(options.clientConfig ?? {});
  const fetches = new Map<string, Promise<string | Uint8Array | undefined>>();
  const fetchOnce = (ref: SecretRef) => {
    const key = `${ref.store} ${ref.region ?? ''} ${ref.id}`;
    let pending = fetches.get(key);
    if (pending === undefined) fetches.set(key, (pending = providers.get(ref)));
    return pending;
  };
  const results = await Promise.allSettled(refs.map(({ ref }) => fetchOnce(ref)));
  const values = new Map<string, string>();
  const issues: ConfigIssue[] = [];
  refs.forEach((at, i) => {
    const result = results[i];
    const outcome =
      result?.status === 'fulfilled'
        ? valueOf(at.ref, result.value)
        : { ok: false as const, problem: reason(result?.reason) };
    if (outcome.ok) values.set(at.ref.text, outcome.value);
    else
      issues.push({
        file,
        line: at.line,
        column: at.column,
        path: displayPath(at.path),
        message: `cannot fetch ${at.ref.text}: ${outcome.problem}`,
      });
  });
  if (issues.length > 0) throw new ConfigError(issues);
  return values;
}
