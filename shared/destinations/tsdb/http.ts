/**
 * What the version adapters (v1.ts, v2.ts, v3.ts) share: the server's URL, retention durations,
 * the tsdb's error text, failures without an answer, setup errors, and the fetch transport that
 * versions 1 and 3 post their lines with.
 */
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
      const text = typeof json.error === 'string' ? json.error : typeof json.message === 'string' ? json.message : undefined;
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
  const message = [err instanceof Error ? err.message : String(err), stringProp(cause, 'message')].filter((m) => m !== undefined && m !== '').join(': ');
  return { kind: 'network', code, message, cause: err };
}

/**
 * The error database setup throws for `request` (e.g. `POST /api/v2/buckets`): what the tsdb
 * answered, or why it did not. The cause is the network error unless another is given.
 */
export function setupError(version: TsdbVersion, request: string, failure: Pick<Extract<Failure, { kind: 'http' }>, 'kind' | 'status' | 'message'> | NetworkFailure, cause?: unknown): Error {
  const what = failure.kind === 'http' ? `answered HTTP ${failure.status}: ${failure.message}` : `failed: ${failure.code}: ${failure.message}`;
  const reason = cause ?? (failure.kind === 'network' ? failure.cause : undefined);
  return new Error(`tsdb v${version}: ${request} ${what}`, reason === undefined ? undefined : { cause: reason });
}

/** An HTTP answer with its body read. */
export interface Answer {
  kind: 'answer';
  status: number;
  ok: boolean;
  headers: Headers;
  body: string;
}

/** POSTs `body` with fetch: the answer, or the failure when there was none (timeout included). */
export async function post(url: string, headers: Record<string, string>, body: string | Uint8Array, timeoutMs: number): Promise<Answer | NetworkFailure> {
  try {
    const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    return { kind: 'answer', status: res.status, ok: res.ok, headers: res.headers, body: text };
  } catch (err) {
    return networkOutcome(err);
  }
}

/** Versions 1 and 3: the chunk's body posted with fetch, one request per `send`. */
export class FetchTransport {
  constructor(
    /** Where the lines go (no credentials). */
    readonly url: string,
    private readonly headers: Record<string, string>,
    private readonly timeoutMs: number,
  ) {}

  async send(chunk: LineChunk): Promise<Outcome> {
    const answer = await post(this.url, { ...this.headers, 'content-type': 'text/plain; charset=utf-8' }, chunk.body, this.timeoutMs);
    if (answer.kind === 'network') return answer;
    if (answer.ok) return { kind: 'ok' };
    return {
      kind: 'http',
      status: answer.status,
      message: serverMessage(answer.body, answer.headers.get('x-influxdb-error')),
      retryAfterMs: retryAfterMs(answer.headers.get('retry-after')),
    };
  }
}

/** Versions 1 and 3 write with fetch: the write half of their client is the transport. */
export abstract class FetchClient {
  protected constructor(protected readonly transport: FetchTransport) {}

  get writeUrl(): string {
    return this.transport.url;
  }

  send(chunk: LineChunk): Promise<Outcome> {
    return this.transport.send(chunk);
  }
}
