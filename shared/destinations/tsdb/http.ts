/**
 * What the version adapters (v1.ts, v2.ts, v3.ts) share: the server's URL, retention durations,
 * the tsdb's error text, failures without an answer, refusals (unreachable, credentials) and what
 * to check for them, setup errors, and the one node:http(s) transport every version sends its
 * writes and its database setup through. No tsdb client library: each version's few setup calls are
 * plain HTTP requests, with one error shape for all.
 */
import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { proxyAgentOptions } from '../../runtime/proxy.js';
import { isRecord } from '../../util/records.js';
import type { LineChunk, NetworkFailure, Outcome, TsdbClientOptions, TsdbConfig, TsdbVersion } from './client.js';
import type { TsdbTls } from './tls.js';

const MAX_SERVER_MESSAGE = 1_000;
const DURATION = /^([1-9][0-9]*)([hdw])$/;
const HOURS_PER_UNIT = { h: 1, d: 24, w: 168 } as const;

/** `http(s)://host:port` of the configured tsdb (an IPv6 host in brackets): https when `tls.enable`. */
export function serverUrl(config: TsdbConfig): string {
  const host = bareHost(config.host);
  return `${config.tls.enable ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

/** The host as node:http wants it: an IPv6 address without brackets. */
function bareHost(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1');
}

/** `<integer><h|d|w>` in hours (§6.0: `10d` = 240 h). */
export function retentionHours(duration: string): number {
  const m = DURATION.exec(duration);
  if (m === null) throw new Error(`retention duration "${duration}" is not <integer><h|d|w>`);
  const unit = m[2] === 'w' ? 'w' : m[2] === 'd' ? 'd' : 'h';
  return Number(m[1]) * HOURS_PER_UNIT[unit];
}

/** At most `max` code points (a surrogate pair is never split). */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join('');
}

/** The tsdb's error text: `error` (v1, v3) or `message` (v2) of a JSON body, else the body or `X-Influxdb-Error`. */
export function serverMessage(body: string, header: string | null): string {
  let message = body.trim();
  try {
    const json: unknown = JSON.parse(body);
    if (isRecord(json)) {
      const text =
        typeof json.error === 'string' ? json.error : typeof json.message === 'string' ? json.message : undefined;
      if (text !== undefined) message = json.data === undefined ? text : `${text}: ${JSON.stringify(json.data)}`;
    }
  } catch {
    // not JSON: the body as is
  }
  if (message === '' && header !== null) message = header;
  return truncate(message, MAX_SERVER_MESSAGE);
}

/** `Retry-After` in seconds (HTTP dates are not used by InfluxDB). */
export function retryAfterMs(value: string | string[] | null | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text === null || !/^\d+(\.\d+)?$/.test(text.trim())) return undefined;
  return Math.round(Number(text) * 1000);
}

function stringProp(value: unknown, key: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v: unknown = Reflect.get(value, key);
  return typeof v === 'string' ? v : undefined;
}

/**
 * A failure without an HTTP answer: its error code (`ECONNREFUSED`, `ETIMEDOUT`, …) and message.
 * `timedOut` is for a client library's own timeout error (fetch's is recognised here by its name).
 */
export function networkOutcome(err: unknown, timedOut = false): NetworkFailure {
  const cause: unknown = err instanceof Error ? err.cause : undefined;
  const timeout = timedOut || (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'));
  const code = timeout ? 'ETIMEDOUT' : (stringProp(err, 'code') ?? stringProp(cause, 'code') ?? 'ECONNECTION');
  const message = [err instanceof Error ? err.message : String(err), stringProp(cause, 'message')]
    .filter((m) => m !== undefined && m !== '')
    .join(': ');
  return { kind: 'network', code, message, cause: err };
}

/**
 * Why the tsdb cannot take any write now, whatever the points: `unreachable` (no answer: down, not
 * found, a timeout, a TLS handshake that failed, or plain http sent to an https server) or
 * `credentials` (401/403: the user, password or token refused). Undefined for an answer about the
 * request itself. Either way the events wait and are tried again; nothing they hold is at fault.
 */
export type Refusal = 'unreachable' | 'credentials';

/** Go's answer (InfluxDB's HTTP server) to plain http on its https port. */
const PLAIN_HTTP_TO_HTTPS = /HTTP request to an HTTPS server/i;

/** A failure as refusals are told from it (a write's Outcome or a setup call's). */
export type FailureInfo =
  | { kind: 'http'; status: number; message: string }
  | { kind: 'network'; code: string; message: string };

/** The refusal a failure is, if any (see `Refusal`). */
export function refusalOf(failure: FailureInfo): Refusal | undefined {
  if (failure.kind === 'network') return 'unreachable';
  if (failure.status === 401 || failure.status === 403) return 'credentials';
  if (failure.status === 400 && PLAIN_HTTP_TO_HTTPS.test(failure.message)) return 'unreachable';
  return undefined;
}

/**
 * What to check for a refusal, for the log: which keys hold the credentials of the configured
 * version, or the TLS settings when the handshake failed. Empty when nothing in Svc's config helps.
 */
export function refusalHint(config: TsdbConfig, failure: FailureInfo): string {
  if (refusalOf(failure) === 'credentials') {
    if (config.version === 2)
      return `check Svc.tsdbConfig.v2Config.token: an API token of organisation "${config.v2Config.org}" allowed to write bucket "${config.v2Config.bucket}" (and to read and create buckets, for the bucket's setup)`;
    if (config.version === 3)
      return config.v3Config.token === ''
        ? 'the server wants a token: set Svc.tsdbConfig.v3Config.token'
        : `check Svc.tsdbConfig.v3Config.token: a token allowed to write database "${config.v3Config.database}" (and to create it)`;
    return config.v1Config.auth.enable
      ? `check Svc.tsdbConfig.v1Config.auth.username and .password: the user must exist on the server with that password, with WRITE on database "${config.v1Config.dbName}" (and admin rights, to create it)`
      : 'the server wants a user: set Svc.tsdbConfig.v1Config.auth (enable, username, password)';
  }
  // The one answer that is a refusal without being about credentials: plain http to an https port.
  if (failure.kind === 'http')
    return refusalOf(failure) === undefined ? '' : 'the server speaks https: set Svc.tsdbConfig.tls.enable to true';
  if (/CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ALTNAME/i.test(failure.code))
    return config.tls.caFile === ''
      ? "the server's certificate is not trusted: set Svc.tsdbConfig.tls.caFile to the PEM file of the CA that signed it (or tls.rejectUnauthorized to false, which skips the check)"
      : `the server's certificate is not trusted by the CA in Svc.tsdbConfig.tls.caFile, or names another host than "${config.host}"`;
  if (/SSL|TLS|EPROTO/i.test(failure.code) || /wrong version number|packet length too long/i.test(failure.message))
    return config.tls.enable
      ? 'the TLS handshake failed: does the server speak https on this port? (Svc.tsdbConfig.tls.enable)'
      : 'the TLS handshake failed';
  return '';
}

/**
 * The error database setup throws for `request` (e.g. `POST /api/v2/buckets`): what the tsdb
 * answered, or why it did not, with the status or the network error's code (for the error tracker)
 * and the refusal it is, when it is one. The cause is the network error unless another is given.
 */
export class TsdbSetupError extends Error {
  override readonly name = 'TsdbSetupError';
  /** HTTP status, when the tsdb answered. */
  readonly status: number | undefined;
  /** Network error code (`ECONNREFUSED`, a TLS code, …), when it did not. */
  readonly code: string | undefined;
  readonly refusal: Refusal | undefined;

  constructor(
    version: TsdbVersion,
    request: string,
    readonly failure: Extract<FailureInfo, { kind: 'http' }> | NetworkFailure,
    cause?: unknown,
  ) {
    const what =
      failure.kind === 'http'
        ? `answered HTTP ${failure.status}: ${failure.message}`
        : `failed: ${failure.code}: ${failure.message}`;
    const reason = cause ?? (failure.kind === 'network' ? failure.cause : undefined);
    super(`tsdb v${version}: ${request} ${what}`, reason === undefined ? undefined : { cause: reason });
    this.status = failure.kind === 'http' ? failure.status : undefined;
    this.code = failure.kind === 'network' ? failure.code : undefined;
    this.refusal = refusalOf(failure);
  }
}

/** One request of database setup (databases, retention policies, orgs, buckets), for `setupCall`. */
export interface SetupCall {
  version: TsdbVersion;
  method: 'GET' | 'POST';
  /** Path and query on the server. */
  path: string;
  /** The request as messages name it: `POST /api/v2/buckets`. */
  request: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** A refusal that is not a failure (what was to be made exists already). */
  tolerate?: (status: number, body: string) => boolean;
}

/** What a setup call came to: the answer's body, or a refusal `tolerate` accepted. */
export type SetupAnswer = { tolerated: false; body: string; status: number } | { tolerated: true };

/**
 * One setup call through the writer's transport (the writes' agent: the same TLS, the same
 * connections), for every version: the answer's body, a refusal the call tolerates, or else the
 * TsdbSetupError of what the tsdb answered (or why it did not; a timeout included).
 */
export async function setupCall(transport: HttpTransport, call: SetupCall): Promise<SetupAnswer> {
  const attempt = await transport.exchange({
    method: call.method,
    path: call.path,
    headers: call.headers,
    body: call.body === undefined ? undefined : Buffer.from(call.body),
    timeoutMs: call.timeoutMs,
  });
  if (attempt.kind === 'error') throw new TsdbSetupError(call.version, call.request, networkOutcome(attempt.err));
  if (attempt.ok) return { tolerated: false, body: attempt.body, status: attempt.status };
  if (call.tolerate?.(attempt.status, attempt.body) === true) return { tolerated: true };
  throw new TsdbSetupError(call.version, call.request, {
    kind: 'http',
    status: attempt.status,
    message: serverMessage(attempt.body, header(attempt.headers, 'x-influxdb-error')),
  });
}

/** `setupCall` whose answer is JSON: the parsed body (undefined when empty) and its status; a body that is not JSON is an error. */
export async function setupJson(
  transport: HttpTransport,
  call: Omit<SetupCall, 'tolerate'>,
): Promise<{ json: unknown; status: number }> {
  const answer = await setupCall(transport, call);
  // Without `tolerate` every refusal throws; this keeps the type honest.
  if (answer.tolerated) return { json: undefined, status: 0 };
  try {
    return { json: answer.body === '' ? undefined : JSON.parse(answer.body), status: answer.status };
  } catch {
    throw new TsdbSetupError(call.version, call.request, {
      kind: 'http',
      status: answer.status,
      message: `not JSON: ${truncate(answer.body, 200)}`,
    });
  }
}

/** One request of the transport. */
export interface Exchange {
  method: 'GET' | 'POST';
  /** Path and query on the server. */
  path: string;
  headers: Record<string, string>;
  body: Uint8Array | undefined;
  /** For the whole request, the answer's body included. */
  timeoutMs: number;
}

/** What one request over node:http(s) came to: an answer with its body read, or an error. */
type Attempt =
  | { kind: 'answer'; status: number; ok: boolean; headers: IncomingHttpHeaders; body: string }
  | { kind: 'error'; err: unknown; reused: boolean };

/** The fetch-style answer header (`string | null`) from node:http's headers. */
function header(headers: IncomingHttpHeaders, name: string): string | null {
  const value = headers[name];
  return typeof value === 'string' ? value : Array.isArray(value) ? (value[0] ?? null) : null;
}

/**
 * The agent of every connection a tsdb writer opens (writes and database setup): kept alive; with
 * TLS, https with the trusted roots and the certificate check of `tsdbConfig.tls`; through the
 * proxy start-up installed (`Svc.proxy`, HTTP(S)_PROXY, unless NO_PROXY names the tsdb). The one
 * place an option for all of them belongs.
 */
export function tsdbAgent(tls: TsdbTls | null): HttpAgent {
  if (tls === null) return new HttpAgent({ keepAlive: true, ...proxyAgentOptions() });
  return new HttpsAgent({
    keepAlive: true,
    ...proxyAgentOptions(),
    rejectUnauthorized: tls.rejectUnauthorized,
    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
  });
}

/**
 * Every request of a tsdb writer, writes and database setup alike, with node:http or node:https
 * (`tsdbConfig.tls`) over the kept-alive connections of one agent (`tsdbAgent`). Cheaper per
 * request than fetch (no web streams, no copy of a write's body), and one transport means one TLS
 * configuration for everything. A request fails with a timeout (the whole request, answer body
 * included: `ETIMEDOUT`), connection refused or reset, host not found or a TLS error; no header of
 * a request is ever part of what it returns.
 */
export class HttpTransport {
  /** `http(s)://host:port` (no credentials). */
  readonly origin: string;
  private readonly target: RequestOptions;
  private readonly request: (options: RequestOptions, answer: (res: IncomingMessage) => void) => ClientRequest;

  constructor(config: TsdbConfig, tls: TsdbTls | null) {
    this.origin = serverUrl(config);
    this.target = { agent: tsdbAgent(tls), hostname: bareHost(config.host), port: config.port };
    this.request = tls === null ? httpRequest : httpsRequest;
  }

  async exchange(exchange: Exchange): Promise<Attempt> {
    const attempt = await this.once(exchange);
    // A kept-alive connection the server closed meanwhile fails at once, before any answer: the
    // request is sent again on a fresh one (as a new connection would have been in the first place;
    // should the server have stored a write, its points come again with the same times and overwrite themselves).
    if (attempt.kind === 'error' && attempt.reused && !isTimeout(attempt.err) && isResetBeforeAnswer(attempt.err))
      return this.once(exchange);
    return attempt;
  }

  private once({ method, path, headers, body, timeoutMs }: Exchange): Promise<Attempt> {
    return new Promise((resolve) => {
      let settled = false;
      const settle = (attempt: Attempt): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(attempt);
      };
      const req = this.request(
        {
          ...this.target,
          method,
          path,
          headers: body === undefined ? headers : { ...headers, 'content-length': body.byteLength },
        },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (part: Buffer) => parts.push(part));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            settle({
              kind: 'answer',
              status,
              ok: status >= 200 && status < 300,
              headers: res.headers,
              body: parts.length === 0 ? '' : Buffer.concat(parts).toString('utf8'),
            });
          });
          // Cut off mid-answer (ECONNRESET, "aborted"): no answer to go by.
          res.on('error', (err) => settle({ kind: 'error', err, reused: false }));
        },
      );
      const timer = setTimeout(() => req.destroy(timeoutError(timeoutMs)), timeoutMs);
      req.on('error', (err) => settle({ kind: 'error', err, reused: req.reusedSocket }));
      req.end(body);
    });
  }
}

/** Named as fetch's timeout error is, so `networkOutcome` reads it as `ETIMEDOUT`. */
function timeoutError(ms: number): Error {
  return Object.assign(new Error(`no answer within ${ms} ms`), { name: 'TimeoutError', code: 'ETIMEDOUT' });
}

function isTimeout(err: unknown): boolean {
  return err instanceof Error && err.name === 'TimeoutError';
}

function isResetBeforeAnswer(err: unknown): boolean {
  const code = stringProp(err, 'code');
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/**
 * The write half of every version's client: the chunk's body (one Buffer, a slice of the writer's
 * line buffer) POSTed to the version's write endpoint, one request per `send`; the outcome is the
 * answer's status, the tsdb's error text and `Retry-After`, or a failure without an answer.
 */
export abstract class HttpClient {
  /** Where the lines go (scheme, host, path and query; no credentials). */
  readonly writeUrl: string;
  protected readonly transport: HttpTransport;
  private readonly write: Omit<Exchange, 'body'>;

  protected constructor(
    options: TsdbClientOptions,
    write: { path: string; headers: Record<string, string>; timeoutMs: number },
  ) {
    this.transport = new HttpTransport(options.config, options.tls);
    this.writeUrl = `${this.transport.origin}${write.path}`;
    this.write = {
      method: 'POST',
      path: write.path,
      headers: { ...write.headers, 'content-type': 'text/plain; charset=utf-8' },
      timeoutMs: write.timeoutMs,
    };
  }

  async send(chunk: LineChunk): Promise<Outcome> {
    const attempt = await this.transport.exchange({ ...this.write, body: chunk.body });
    if (attempt.kind === 'error') return networkOutcome(attempt.err);
    if (attempt.ok) return { kind: 'ok' };
    return {
      kind: 'http',
      status: attempt.status,
      message: serverMessage(attempt.body, header(attempt.headers, 'x-influxdb-error')),
      retryAfterMs: retryAfterMs(header(attempt.headers, 'retry-after')),
    };
  }
}
