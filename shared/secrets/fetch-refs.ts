/**
 * Fetches secret references (`${aws-secret:…}`, `${aws-ssm:…}`: shared/config/secret-refs.ts) from
 * Secrets Manager and SSM Parameter Store, all in parallel, through the lean AWS client
 * (shared/aws/secret-stores.ts). One code path for the Lambda functions (at cold start, the
 * references their function is granted: shared/config/resolved-load.ts) and `svc local` / `svc edge`
 * (at start, every reference in use: fetch.ts). A reference that cannot be fetched fails with a
 * ConfigError naming the key, the reference and what AWS answered: never the value. This module
 * does not import the YAML loader, so the functions' bundles do not hold it.
 *
 * A value is fetched once per start (a Lambda container's life, or `svc edge` until it restarts):
 * the config is built once, so a rotated secret takes effect in new containers or at the next start,
 * never halfway through one.
 */
import type { ProxyEnv } from 'node:http';
import {
  type AwsCredentials,
  CREDENTIAL_ENV,
  type CredentialProvider,
  environmentCredentials,
  sdkCredentials,
} from '../aws/credentials.js';
import { AwsServiceError } from '../aws/json-client.js';
import { SecretStoreClient, type StoredValue } from '../aws/secret-stores.js';
import { ConfigError, type ConfigIssue, quote } from '../config/errors.js';
import type { SecretRef, SecretRefAt } from '../config/secret-refs.js';
import { displayPath } from '../config/walk.js';
import { isRecord } from '../util/records.js';

/**
 * Where and as whom the stores are asked. Every member may be left out: the region is then the
 * environment's (AWS_REGION, AWS_DEFAULT_REGION; an ARN's own region wins), the credentials the
 * environment's (a Lambda function's role) or else the AWS SDK's default chain, the endpoint the
 * region's (or AWS_ENDPOINT_URL_SECRETS_MANAGER / _SSM). Tests point `endpoint` at a local stand-in.
 */
export interface SecretClientConfig {
  region?: string;
  credentials?: CredentialProvider | AwsCredentials;
  endpoint?: string;
  /** Attempts per request, the first included (default 3). */
  maxAttempts?: number;
  /** The proxy of the stores' agents (`svc local` / `svc edge` at start, before the process's is installed); default the process's. */
  proxyEnv?: ProxyEnv;
}

export interface FetchOptions {
  clientConfig?: SecretClientConfig;
  /** For the region, credential and endpoint variables (default process.env). */
  env?: NodeJS.ProcessEnv;
}

/** The credentials to sign with: the given ones, else the environment's when set, else the SDK's default chain. */
function credentialsOf(config: SecretClientConfig, env: NodeJS.ProcessEnv): CredentialProvider {
  const given = config.credentials;
  if (typeof given === 'function') return given;
  if (given !== undefined) return () => Promise.resolve(given);
  // A Lambda function's role is in its environment: no need to load the SDK's providers for it.
  if (env[CREDENTIAL_ENV.accessKeyId] && env[CREDENTIAL_ENV.secretAccessKey]) return environmentCredentials(env);
  return sdkCredentials();
}

/** One client per region (a name is read in the default region, an ARN in its own). */
class Stores {
  private readonly byRegion = new Map<string, SecretStoreClient>();
  private readonly credentials: CredentialProvider;

  constructor(
    private readonly config: SecretClientConfig,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.credentials = credentialsOf(config, env);
  }

  get(ref: SecretRef): Promise<StoredValue> {
    const region = ref.region ?? this.config.region ?? this.env['AWS_REGION'] ?? this.env['AWS_DEFAULT_REGION'] ?? '';
    let client = this.byRegion.get(region);
    if (client === undefined) {
      client = new SecretStoreClient({
        region,
        credentials: this.credentials,
        ...(this.config.endpoint === undefined ? {} : { endpoint: this.config.endpoint }),
        ...(this.config.maxAttempts === undefined ? {} : { maxAttempts: this.config.maxAttempts }),
        ...(this.config.proxyEnv === undefined ? {} : { proxyEnv: this.config.proxyEnv }),
        env: this.env,
      });
      this.byRegion.set(region, client);
    }
    return ref.store === 'secret' ? client.secret(ref.id) : client.parameter(ref.id);
  }

  destroy(): void {
    for (const client of this.byRegion.values()) client.destroy();
  }
}

/** What AWS (or the way to it) said, as one line: the error's name and message. Never holds a value. */
function reason(err: unknown): string {
  if (err instanceof AwsServiceError) {
    // An answer without a message (SSM's ParameterNotFound) is named only.
    const message = /^HTTP \d+ with no error message$/.test(err.message) ? '' : (err.message.split('\n')[0] ?? '');
    return message ? `${err.name}: ${message}` : err.name;
  }
  if (!(err instanceof Error)) return String(err);
  const message = err.message.split('\n')[0] ?? '';
  if (!err.name || err.name === 'Error' || message.startsWith(err.name)) return message || 'failed';
  return message ? `${err.name}: ${message}` : err.name;
}

/** The text a reference stands for, from what the store holds; a problem is described without the value. */
function valueOf(ref: SecretRef, stored: StoredValue): { ok: true; value: string } | { ok: false; problem: string } {
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
  const stores = new Stores(options.clientConfig ?? {}, options.env ?? process.env);
  const fetches = new Map<string, Promise<StoredValue>>();
  const fetchOnce = (ref: SecretRef) => {
    const key = `${ref.store} ${ref.region ?? ''} ${ref.id}`;
    let pending = fetches.get(key);
    if (pending === undefined) fetches.set(key, (pending = stores.get(ref)));
    return pending;
  };
  const results = await Promise.allSettled(refs.map(({ ref }) => fetchOnce(ref)));
  stores.destroy();
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
