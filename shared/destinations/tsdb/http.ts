/**
 * What the version adapters (v1.ts, v2.ts, v3.ts) share: the server's URL, retention durations,
 * the tsdb's error text, failures without an answer, setup errors, the fetch calls of database
 * setup, and the node:http transport every version posts its lines with. No tsdb client library:
 * each version's few setup calls are plain HTTP requests, with one error shape for all.
 */
import { Agent, type IncomingHttpHeaders, type RequestOptions, request } from 'node:http';
import { isRecord } from '../../util/records.js';
import type { Failure, LineChunk, NetworkFailure, Outcome, TsdbConfig, TsdbVersion } from './client.js';

const MAX_SERVER_MESSAGE = 1_000;
const DURATION = /^([1-9][0-9]*)([hdw])$/;
const HOURS_PER_UNIT = { h: 1, d: 24, w: 168 } as const;

/** `http://host:port` of the configured tsdb (an IPv6 host in brackets). */
export function serverUrl(config: TsdbConfig): string {
  return `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
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
 * The error database setup throws for `request` (e.g. `POST /api/v2/buckets`): what the tsdb
 * answered, or why it did not. The cause is the network error unless another is given.
 */
export function setupError(
  version: TsdbVersion,
  request: string,
  failure: Pick<Extract<Failure, { kind: 'http' }>, 'kind' | 'status' | 'message'> | NetworkFailure,
  cause?: unknown,
): Error {
  const what =
    failure.kind === 'http'
      ? `answered HTTP ${failure.status}: ${failure.message}`
      : `failed: ${failure.code}: ${failure.message}`;
  const reason = cause ?? (failure.kind === 'network' ? failure.cause : undefined);
  return new Error(`tsdb v${version}: ${request} ${what}`, reason === undefined ? undefined : { cause: reason });
}

/** One request of database setup (databases, retention policies, orgs, buckets), for `setupCall`. */
export interface SetupCall {
  version: TsdbVersion;
  method: 'GET' | 'POST';
  url: string;
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
 * One setup call with fetch, for every version: the answer's body, a refusal the call tolerates, or
 * else the error setupError makes of what the tsdb answered (or why it did not; a timeout included).
 */
export async function setupCall(call: SetupCall): Promise<SetupAnswer> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(call.url, {
      method: call.method,
      headers: call.headers,
      ...(call.body === undefined ? {} : { body: call.body }),
      signal: AbortSignal.timeout(call.timeoutMs),
    });
    text = await res.text();
  } catch (err) {
    throw setupError(call.version, call.request, networkOutcome(err));
  }
  if (res.ok) return { tolerated: false, body: text, status: res.status };
  if (call.tolerate?.(res.status, text) === true) return { tolerated: true };
  throw setupError(call.version, call.request, {
    kind: 'http',
    status: res.status,
    message: serverMessage(text, res.headers.get('x-influxdb-error')),
  });
}

/** `setupCall` whose answer is JSON: the parsed body (undefined when empty) and its status; a body that is not JSON is an error. */
export async function setupJson(call: Omit<SetupCall, 'tolerate'>): Promise<{ json: unknown; status: number }> {
  const answer = await setupCall(call);
  // Without `tolerate` every refusal throws; this keeps the type honest.
  if (answer.tolerated) return { json: undefined, status: 0 };
  try {
    return { json: answer.body === '' ? undefined : JSON.parse(answer.body), status: answer.status };
  } catch {
    throw setupError(call.version, call.request, {
      kind: 'http',
      status: answer.status,
      message: `not JSON: ${truncate(answer.body, 200)}`,
    });
  }
}

/** What one write request over node:http came to: an answer with its body read, or an error. */
type Attempt =
  | { kind: 'answer'; status: number; ok: boolean; headers: IncomingHttpHeaders; body: string }
  | { kind: 'error'; err: unknown; reused: boolean };

/** The fetch-style answer header (`string | null`) from node:http's headers. */
function header(headers: IncomingHttpHeaders, name: string): string | null {
  const value = headers[name];
  return typeof value === 'string' ? value : Array.isArray(value) ? (value[0] ?? null) : null;
}

/**
 * The writes of every version: the chunk's body (one Buffer, a slice of the writer's line buffer)
 * POSTed with node:http over a keep-alive connection, one request per `send`. Cheaper per request
 * than fetch (no web streams, no copy of the body); the outcome is the same: the answer's status,
 * the tsdb's error text and `Retry-After`, or a failure without an answer — a timeout (the whole
 * request, answer body included, as `AbortSignal.timeout` was: `ETIMEDOUT`), connection refused or
 * reset, host not found.
 */
export class HttpTransport {
  private readonly agent = new Agent({ keepAlive: true });
  private readonly options: RequestOptions;

  constructor(
    /** Where the lines go (no credentials). */
    readonly url: string,
    headers: Record<string, string>,
    private readonly timeoutMs: number,
  ) {
    const target = new URL(url);
    this.options = {
      method: 'POST',
      agent: this.agent,
      // URL keeps an IPv6 host in brackets; node:http wants it without.
      hostname: target.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: target.port,
      path: `${target.pathname}${target.search}`,
      headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' },
    };
  }

  async send(chunk: LineChunk): Promise<Outcome> {
    let attempt = await this.post(chunk.body);
    // A kept-alive connection the server closed meanwhile fails at once, before any answer: the
    // request is sent again on a fresh one (as a new connection would have been in the first place;
    // should the server have stored it, the points come again with the same times and overwrite themselves).
    if (attempt.kind === 'error' && attempt.reused && !isTimeout(attempt.err) && isResetBeforeAnswer(attempt.err))
      attempt = await this.post(chunk.body);
    if (attempt.kind === 'error') return networkOutcome(attempt.err);
    if (attempt.ok) return { kind: 'ok' };
    return {
      kind: 'http',
      status: attempt.status,
      message: serverMessage(attempt.body, header(attempt.headers, 'x-influxdb-error')),
      retryAfterMs: retryAfterMs(header(attempt.headers, 'retry-after')),
    };
  }

  private post(body: Uint8Array): Promise<Attempt> {
    return new Promise((resolve) => {
      let settled = false;
      const settle = (attempt: Attempt): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(attempt);
      };
      const req = request(
        { ...this.options, headers: { ...this.options.headers, 'content-length': body.byteLength } },
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
      const timer = setTimeout(() => req.destroy(timeoutError(this.timeoutMs)), this.timeoutMs);
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

/** The write half of every version's client is the transport. */
export abstract class HttpClient {
  protected constructor(protected readonly transport: HttpTransport) {}

  get writeUrl(): string {
    return this.transport.url;
  }

  send(chunk: LineChunk): Promise<Outcome> {
    return this.transport.send(chunk);
  }
}
