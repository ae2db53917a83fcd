/**
 * The monitoring SaaS writer (platform-formats.md §8): posts metric payloads (§8.1) and events (§8.3)
 * as JSON, once to every named account. The per-feature payloads are built by the features; this is
 * the transport.
 *
 * - Accounts: `thirdPartyToolsCredentials.monsaas[] {accountName, insertApiKey, accountId}`; a name
 *   without credentials → ERROR log, no request. A name listed twice is sent to once.
 * - Headers: `Content-Type: application/json`, `Api-Key: <insertApiKey>`, then the configured
 *   `{name, value}` headers (`monsaas.metric.header` / `monsaas.event.header`), which replace a
 *   header of the same name.
 * - URLs: metrics → `monsaas.metric.url` verbatim; events → `monsaas.event.url` + `/` when missing +
 *   `v1/accounts/<accountId>/events`.
 * - 200 or 202 = success. Timeout (10 s), connection failures, 429 and 5xx are retried as §6.0 step 2
 *   (up to 3 times after 1, 2 and 4 s, a `Retry-After` honoured up to 10 s). Anything else, or a
 *   transient failure left after the retries → error tracker `MONSAAS_POST` with the caller's module
 *   (one per failed account) and an ERROR line (at most one per account, kind and module a minute).
 *   Redirects are not followed (the API key would go along); a 3xx is a failure.
 * - The API key never appears in a log line or in the tracked error.
 *
 * The writer does not look at `monsaas.enable` or feature flags (§0.6): uptime data is sent without
 * `monsaas.enable`, so the gating is the callers'.
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { SvcConfig } from '../../config/schema.js';
import type { ErrorTracker } from '../../errors/tracker.js';
import type { Log } from '../../logging/log.js';
import { LogThrottle } from '../../logging/throttle.js';
import { withoutQuery } from '../../util/url.js';
import { retryAfterMs, withRetries } from '../retry.js';

export type MonSaasSettings = SvcConfig['monsaas'];
export type MonSaasCredentials = SvcConfig['thirdPartyToolsCredentials']['monsaas'];
export type MonSaasCredential = MonSaasCredentials[number];

export type AttributeValue = string | number | boolean;

/** §8.1: one block of metrics sharing timestamp, interval and attributes. */
export interface MetricBlock {
  common: {
    /** Milliseconds since the epoch (§0.3). */
    timestamp: number;
    /** The producer's interval. */
    'interval.ms': number;
    attributes: Record<string, AttributeValue>;
  };
  metrics: { name: string; type: 'gauge'; value: number }[];
}

/** §8.1: the body of a metric POST. */
export type MetricPayload = MetricBlock[];

/** §8.3: the body of an event POST (one event). */
export type MonSaasEvent = Record<string, AttributeValue>;

export type MonSaasKind = 'metric' | 'event';

export interface MonSaasWriterOptions {
  settings: MonSaasSettings;
  credentials: MonSaasCredentials;
  log: Log;
  errors: Pick<ErrorTracker, 'track'>;
  /** Default the global fetch. */
  fetch?: typeof fetch;
  /** Waits before the retries (§6.0 step 2); default 1, 2 and 4 s. */
  retryDelaysMs?: readonly number[];
  /** Per-request timeout; default 10 s. */
  timeoutMs?: number;
  /** At most one ERROR line per (kind, module, account) in this interval; default 60 s. */
  errorLogIntervalMs?: number;
}

export type AccountOutcome = 'sent' | 'failed' | 'no-credentials' | 'no-url';

export interface AccountResult {
  account: string;
  outcome: AccountOutcome;
  /** The URL posted to (no query string is ever used). */
  url?: string;
  /** HTTP status of the last attempt, when the server answered. */
  status?: number;
  /** Requests made, retries included (0 when none was made). */
  attempts: number;
  /** The tracked error, for `failed`. */
  error?: MonSaasPostError;
}

export interface MonSaasResult {
  /** True when every named account was sent to. */
  ok: boolean;
  accounts: AccountResult[];
}

/** The error given to the error tracker (§10.9 metadata: `status`, `code`, request URL and timeout). */
export class MonSaasPostError extends Error {
  override readonly name = 'MonSaasPostError';
  readonly kind: MonSaasKind;
  readonly account: string;
  /** scheme + host + path. */
  readonly requestUrl: string;
  /** Destination host. */
  readonly host: string;
  /** HTTP status when the server answered. */
  readonly status: number | undefined;
  /** Network error code when it did not (`ETIMEDOUT`, `ECONNREFUSED`, …). */
  readonly code: string | undefined;
  readonly requestTimeoutMs: number;
  readonly attempts: number;

  constructor(
    message: string,
    details: {
      kind: MonSaasKind;
      account: string;
      url: string;
      status?: number;
      code?: string;
      timeoutMs: number;
      attempts: number;
    },
  ) {
    super(message);
    this.kind = details.kind;
    this.account = details.account;
    this.requestUrl = withoutQuery(details.url);
    this.host = hostOf(details.url);
    this.status = details.status;
    this.code = details.code;
    this.requestTimeoutMs = details.timeoutMs;
    this.attempts = details.attempts;
  }
}

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_SERVER_MESSAGE = 500;

type Outcome =
  | { kind: 'ok'; status: number }
  | { kind: 'http'; status: number; message: string; retryAfterMs: number | undefined }
  | { kind: 'network'; code: string; message: string };

/** §8: the event API URL of an account. */
export function eventUrl(baseUrl: string, accountId: string): string {
  return `${baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`}v1/accounts/${encodeURIComponent(accountId)}/events`;
}

export class MonSaasWriter {
  private readonly settings: MonSaasSettings;
  private readonly accounts: Map<string, MonSaasCredential>;
  private readonly log: Log;
  private readonly errors: Pick<ErrorTracker, 'track'>;
  private readonly fetch: typeof fetch;
  private readonly retryDelaysMs: readonly number[] | undefined;
  private readonly timeoutMs: number;
  private readonly throttle: LogThrottle;
  /** Every API key, removed from server messages before they are logged. */
  private readonly apiKeys: string[];

  constructor(options: MonSaasWriterOptions) {
    this.settings = options.settings;
    this.accounts = new Map(options.credentials.map((c) => [c.accountName, c]));
    this.log = options.log;
    this.errors = options.errors;
    // Read at the first send, not here: touching the global `fetch` loads Node's HTTP client (undici), ≈ 8 ms of a Lambda's cold start.
    this.fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.retryDelaysMs = options.retryDelaysMs;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.throttle = new LogThrottle(options.errorLogIntervalMs ?? 60_000);
    this.apiKeys = options.credentials.map((c) => c.insertApiKey).filter((k) => k !== '');
    // Invalid configured headers or API keys would make every request throw: refuse them now.
    this.headersFor('metric', undefined);
    this.headersFor('event', undefined);
    for (const c of options.credentials) {
      try {
        validateHeaderValue('Api-Key', c.insertApiKey.trim());
      } catch {
        throw new Error(
          `Svc.thirdPartyToolsCredentials.monsaas: the insertApiKey of account ${JSON.stringify(c.accountName)} is not a valid HTTP header value`,
        );
      }
    }
  }

  /** §8.2: posts `payload` to `monsaas.metric.url` for every account in `accountNames`. Never rejects. */
  postMetrics(
    accountNames: readonly string[],
    payload: MetricPayload,
    module: string,
    serverName?: string,
  ): Promise<MonSaasResult> {
    const url = this.settings.metric.url;
    return this.post('metric', accountNames, JSON.stringify(payload), module, serverName, () => url);
  }

  /** §8.3: posts one event to every account's event URL. Never rejects. */
  postEvent(
    accountNames: readonly string[],
    event: MonSaasEvent,
    module: string,
    serverName?: string,
  ): Promise<MonSaasResult> {
    const base = this.settings.event.url;
    return this.post('event', accountNames, JSON.stringify(event), module, serverName, (c) =>
      eventUrl(base, c.accountId),
    );
  }

  private async post(
    kind: MonSaasKind,
    accountNames: readonly string[],
    body: string,
    module: string,
    serverName: string | undefined,
    urlOf: (c: MonSaasCredential) => string,
  ): Promise<MonSaasResult> {
    const names = [...new Set(accountNames)];
    const accounts = await Promise.all(
      names.map((name) => this.postToAccount(kind, name, body, module, serverName, urlOf)),
    );
    return { ok: accounts.every((a) => a.outcome === 'sent'), accounts };
  }

  private async postToAccount(
    kind: MonSaasKind,
    account: string,
    body: string,
    module: string,
    serverName: string | undefined,
    urlOf: (c: MonSaasCredential) => string,
  ): Promise<AccountResult> {
    const credential = this.accounts.get(account);
    if (credential === undefined) {
      this.logError(
        `no-credentials\u0000${account}`,
        { module, account, kind },
        'monsaas account has no credentials (Svc.thirdPartyToolsCredentials.monsaas); not sent',
      );
      return { account, outcome: 'no-credentials', attempts: 0 };
    }
    const baseUrl = kind === 'metric' ? this.settings.metric.url : this.settings.event.url;
    if (baseUrl === '') {
      this.logError(`no-url\u0000${kind}`, { module, account, kind }, `Svc.monsaas.${kind}.url is empty; not sent`);
      return { account, outcome: 'no-url', attempts: 0 };
    }
    const url = urlOf(credential);
    const headers = this.headersFor(kind, credential);

    const { outcome, attempts } = await withRetries((n) => this.attempt(url, headers, body, n), {
      ...(this.retryDelaysMs === undefined ? {} : { delaysMs: this.retryDelaysMs }),
      isTransient: (o) => o.kind === 'network' || (o.kind === 'http' && (o.status === 429 || o.status >= 500)),
      requestedWaitMs: (o) => (o.kind === 'http' ? o.retryAfterMs : undefined),
      onRetry: (o, retry, waitMs) => {
        this.log.debug(
          { module, account, kind, url, retry, waitMs, ...(o.kind === 'ok' ? {} : describe(o)) },
          'monsaas POST failed transiently; retrying',
        );
      },
    });

    if (outcome.kind === 'ok') {
      this.log.debug({ module, account, kind, url, status: outcome.status, attempts }, 'monsaas POST accepted');
      return { account, outcome: 'sent', url, status: outcome.status, attempts };
    }

    const reason =
      outcome.kind === 'http'
        ? `HTTP ${outcome.status}${outcome.message === '' ? '' : `: ${outcome.message}`}`
        : `${outcome.code}: ${outcome.message}`;
    const error = new MonSaasPostError(
      `monsaas ${kind} POST to account ${account} failed after ${attempts} attempt(s): ${reason}`,
      {
        kind,
        account,
        url,
        ...(outcome.kind === 'http' ? { status: outcome.status } : { code: outcome.code }),
        timeoutMs: this.timeoutMs,
        attempts,
      },
    );
    this.errors.track('MONSAAS_POST', error, {
      ...(serverName === undefined ? {} : { serverName }),
      module,
      destinationHost: error.host,
    });
    this.logError(
      `failed\u0000${kind}\u0000${module}\u0000${account}`,
      { module, account, kind, url, attempts, ...describe(outcome) },
      'monsaas POST failed',
    );
    return {
      account,
      outcome: 'failed',
      url,
      ...(outcome.kind === 'http' ? { status: outcome.status } : {}),
      attempts,
      error,
    };
  }

  /**
   * The request headers of an account. Without a credential (constructor check) it only validates
   * the configured headers: an invalid name or value throws, naming the config key.
   */
  private headersFor(kind: MonSaasKind, credential: MonSaasCredential | undefined): Record<string, string> {
    // A plain record checked with node:http's rules, not a fetch Headers: constructing one loads Node's
    // HTTP client (undici), ≈ 15 ms of a Lambda's cold start. Names are lower-cased so a configured
    // header replaces ours whatever its case, as Headers.set does; values are trimmed as Headers does.
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (credential !== undefined) headers['api-key'] = credential.insertApiKey.trim();
    for (const { name, value } of this.settings[kind].header) {
      try {
        validateHeaderName(name);
        validateHeaderValue(name, value.trim());
      } catch {
        throw new Error(
          `Svc.monsaas.${kind}.header: ${JSON.stringify(name)} is not a valid HTTP header name, or its value is not a valid header value`,
        );
      }
      headers[name.toLowerCase()] = value.trim();
    }
    return headers;
  }

  private async attempt(url: string, headers: Record<string, string>, body: string, n: number): Promise<Outcome> {
    try {
      const res = await this.fetch(url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (res.status === 200 || res.status === 202) {
        await res.body?.cancel().catch(() => undefined);
        return { kind: 'ok', status: res.status };
      }
      const text = await res.text().catch(() => '');
      return {
        kind: 'http',
        status: res.status,
        message: this.scrub(text),
        retryAfterMs: retryAfterMs(res.headers.get('retry-after')),
      };
    } catch (err) {
      return this.networkOutcome(err, n);
    }
  }

  /** A failure without an HTTP answer: its code (`ETIMEDOUT` for the timeout) and message. */
  private networkOutcome(err: unknown, n: number): Extract<Outcome, { kind: 'network' }> {
    const name = err instanceof Error ? err.name : '';
    if (name === 'TimeoutError' || name === 'AbortError') {
      return {
        kind: 'network',
        code: 'ETIMEDOUT',
        message: `no answer within ${this.timeoutMs} ms (timeout, attempt ${n})`,
      };
    }
    const cause: unknown = err instanceof Error ? err.cause : undefined;
    const code = stringProp(err, 'code') ?? stringProp(cause, 'code') ?? 'ECONNECTION';
    const message = [err instanceof Error ? err.message : String(err), stringProp(cause, 'message')]
      .filter((m) => m !== undefined && m !== '')
      .join(': ');
    return { kind: 'network', code, message: this.scrub(message) };
  }

  /** A server text fit for a log line: trimmed, truncated, no API key. */
  private scrub(text: string): string {
    let out = text.trim();
    for (const key of this.apiKeys) out = out.split(key).join('[REDACTED]');
    return out.length > MAX_SERVER_MESSAGE ? `${Array.from(out).slice(0, MAX_SERVER_MESSAGE).join('')}…` : out;
  }

  private logError(key: string, obj: Record<string, unknown>, msg: string): void {
    const { log, suppressed } = this.throttle.take(key);
    if (log) this.log.error(suppressed > 0 ? { ...obj, suppressed } : obj, msg);
    else this.log.debug(obj, msg);
  }
}

function describe(outcome: Exclude<Outcome, { kind: 'ok' }>): Record<string, unknown> {
  return outcome.kind === 'http'
    ? { status: outcome.status, reason: outcome.message }
    : { code: outcome.code, reason: outcome.message };
}

function stringProp(value: unknown, key: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v: unknown = Reflect.get(value, key);
  return typeof v === 'string' ? v : undefined;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
