/**
 * The tsdb writer (platform-formats.md §6.0): one per process, for the configured version 1, 2 or 3.
 * It turns points into line protocol, sends them in chunks of `maxBatchSize` and applies §6.0's
 * batching and retry rules itself; the client libraries' own buffering and retries are off.
 *
 * On the wire:
 * - version 1 writes: `POST /write?db=<dbName>&precision=ns` with `fetch`, HTTP Basic when
 *   `v1Config.auth.enable`. node-influx (`influx`) cannot post given lines: `writePoints` serialises
 *   its own point objects (numbers become floats unless a schema is declared per measurement, its
 *   escaping is its own), and its request pool is private and takes a host out of service for a
 *   backoff period after a network error, answering "No host available" meanwhile — a second retry
 *   mechanism under §6.0's. Database creation uses `influx` (`getDatabaseNames`, `createDatabase`,
 *   `createRetentionPolicy`).
 * - version 2 writes: `@influxdata/influxdb-client`'s `WriteApi` (`POST /api/v2/write?org=&bucket=
 *   &precision=ns`, `Authorization: Token`), one WriteApi per request with `maxRetries: 0`, no flush
 *   timer, a batch size above the request's line count (so only our explicit flush sends) and gzip
 *   off (the body is the line protocol as is). Bucket setup uses the same client's transport for
 *   `GET /api/v2/orgs`, `GET /api/v2/buckets`, `POST /api/v2/buckets` (`@influxdata/influxdb-client-apis`
 *   is not installed).
 * - version 3 writes: `POST /api/v3/write_lp?db=<database>&precision=nanosecond`, `Authorization:
 *   Bearer`, with `fetch`. `@influxdata/influxdb3-client` 2.1 cannot make that request: its `write()`
 *   posts to `/api/v2/write?bucket=&precision=ns`, and reaches `/api/v3/write_lp` only with
 *   `noSync: true`, which adds `no_sync=true` (the server answers before the data is durable —
 *   unacceptable when the caller acknowledges queue messages on success). Database setup is
 *   `POST /api/v3/configure/database`, which that client has no call for either.
 */
import { HttpError, InfluxDB as InfluxV2, RequestTimedOutError } from '@influxdata/influxdb-client';
import { InfluxDB as InfluxV1 } from 'influx';
import type { SvcConfig } from '../../config/schema.js';
import { toLine, type Point } from './line-protocol.js';
import { isRecord } from '../../util/records.js';
import type { Log } from '../../logging/log.js';

export type TsdbConfig = SvcConfig['tsdbConfig'];
export type TsdbVersion = TsdbConfig['version'];
export type TsdbErrorType = 'TSDB_V1_WRITE' | 'TSDB_V2_WRITE' | 'TSDB_V3_WRITE';
/** Receives every tracked write failure; `module` is the producer passed to `write()`. */
export type TsdbErrorSink = (type: TsdbErrorType, module: string, err: unknown) => void;

export interface TsdbWriterOptions {
  config: TsdbConfig;
  log: Log;
  onError: TsdbErrorSink;
  /** Waits before the retries of a request (§6.0 rule 2); default 1, 2 and 4 s. Injectable for tests. */
  retryDelaysMs?: readonly number[];
  /** Longest wait before a retry, also when the server asks for more (`Retry-After`); default 10 s. */
  retryDelayCapMs?: number;
  /** Timeout of version 1 and 2 requests and of database setup; default 10 s. Version 3 writes use `v3Config.writeTimeout`. */
  requestTimeoutMs?: number;
  /** How retries wait; default a timer. */
  sleep?: (ms: number) => Promise<void>;
}

export interface WriteOptions {
  /**
   * Failures are logged at DEBUG and not passed to `onError` (for the error tracker's own points,
   * §6.10: no recursion).
   */
  untracked?: boolean;
}

export interface WriteReport {
  /** Points the tsdb accepted. */
  written: number;
  /** Points refused for good: not writable as line protocol, or refused by the tsdb at chunk size 1. Not to be redelivered. */
  dropped: number;
  /** Points the tsdb refused as older than its retention period (`dropped_beyond_retention`). Not to be redelivered. */
  droppedBeyondRetention: number;
  /**
   * Points not written because their chunk failed whole: the tsdb was unreachable (connection refused
   * or reset, host not found, timeout, also after the retries) or refused the credentials (401/403).
   * Once that happens the rest of the call is not sent either and lands here too. The caller keeps
   * these for redelivery.
   */
  failedWhole: Point[];
  /** HTTP requests made, retries included. */
  requests: number;
}

/** The error passed to `onError`. `status`/`code` follow the error tracker's conventions (§10.9). */
export class TsdbWriteError extends Error {
  override readonly name = 'TsdbWriteError';
  readonly version: TsdbVersion;
  /** The write URL (scheme, host, path and query; no credentials). */
  readonly url: string;
  /** HTTP status, when the tsdb answered. */
  readonly status: number | undefined;
  /** Network error code (`ECONNREFUSED`, `ETIMEDOUT`, …), when it did not. */
  readonly code: string | undefined;
  /** The failing line (truncated), for a dropped point. */
  readonly line: string | undefined;

  constructor(message: string, details: { version: TsdbVersion; url: string; status?: number; code?: string; line?: string; cause?: unknown }) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.version = details.version;
    this.url = details.url;
    this.status = details.status;
    this.code = details.code;
    this.line = details.line;
  }
}

/** §6.0 rule 3: the chunk sizes below `maxBatchSize`. */
export const LADDER = [500, 250, 100, 10, 1] as const;
const DEFAULT_RETRY_DELAYS_MS = [1_000, 2_000, 4_000] as const;
const DEFAULT_RETRY_CAP_MS = 10_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
const MAX_LOGGED_LINE = 1_000;
const MAX_SERVER_MESSAGE = 1_000;
const RETENTION_DROP = /partial write: points beyond retention policy dropped=(\d+)/;
const DURATION = /^([1-9][0-9]*)([hdw])$/;
const HOURS_PER_UNIT = { h: 1, d: 24, w: 168 } as const;

/** The next chunk size of the ladder for a failing chunk of `size` points. */
export function nextChunkSize(size: number): number {
  return LADDER.find((s) => s < size) ?? 1;
}

/** `<integer><h|d|w>` in hours (§6.0: `10d` = 240 h). */
export function retentionHours(duration: string): number {
  const m = DURATION.exec(duration);
  if (m === null) throw new Error(`retention duration "${duration}" is not <integer><h|d|w>`);
  const unit = m[2] === 'w' ? 'w' : m[2] === 'd' ? 'd' : 'h';
  return Number(m[1]) * HOURS_PER_UNIT[unit];
}

type Outcome =
  | { kind: 'ok' }
  | { kind: 'http'; status: number; message: string; retryAfterMs: number | undefined }
  | { kind: 'network'; code: string; message: string; cause: unknown };

interface LineTransport {
  /** Where the lines go, for logs and errors. */
  readonly url: string;
  send(lines: readonly string[]): Promise<Outcome>;
}

interface Item {
  point: Point;
  line: string;
}

interface Run {
  module: string;
  untracked: boolean;
  report: WriteReport;
  /** Set once a chunk failed whole: everything not yet sent goes to failedWhole. */
  aborted: boolean;
}

export class TsdbWriter {
  readonly version: TsdbVersion;
  private readonly config: TsdbConfig;
  private readonly log: Log;
  private readonly onError: TsdbErrorSink;
  private readonly errorType: TsdbErrorType;
  private readonly retryDelaysMs: readonly number[];
  private readonly retryDelayCapMs: number;
  private readonly requestTimeoutMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly baseUrl: string;
  private readonly transport: LineTransport;
  private readonly v2Client: InfluxV2 | undefined;

  constructor(options: TsdbWriterOptions) {
    const c = options.config;
    this.config = c;
    this.version = c.version;
    this.log = options.log;
    this.onError = options.onError;
    this.errorType = `TSDB_V${c.version}_WRITE`;
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    this.retryDelayCapMs = options.retryDelayCapMs ?? DEFAULT_RETRY_CAP_MS;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.baseUrl = `http://${c.host.includes(':') ? `[${c.host}]` : c.host}:${c.port}`;

    if (c.version === 1) {
      const headers: Record<string, string> = {};
      if (c.v1Config.auth.enable) {
        headers.authorization = `Basic ${Buffer.from(`${c.v1Config.auth.username}:${c.v1Config.auth.password}`).toString('base64')}`;
      }
      const query = new URLSearchParams({ db: c.v1Config.dbName, precision: 'ns' });
      this.transport = new FetchTransport(`${this.baseUrl}/write?${query.toString()}`, headers, this.requestTimeoutMs);
    } else if (c.version === 2) {
      this.v2Client = new InfluxV2({ url: this.baseUrl, token: c.v2Config.token, timeout: this.requestTimeoutMs });
      this.transport = new V2Transport(this.v2Client, this.baseUrl, c.v2Config.org, c.v2Config.bucket);
    } else {
      const headers: Record<string, string> = {};
      if (c.v3Config.token !== '') headers.authorization = `Bearer ${c.v3Config.token}`;
      const query = new URLSearchParams({ db: c.v3Config.database, precision: 'nanosecond' });
      this.transport = new FetchTransport(`${this.baseUrl}/api/v3/write_lp?${query.toString()}`, headers, c.v3Config.writeTimeout);
    }
  }

  /** The write endpoint (no credentials). */
  get writeUrl(): string {
    return this.transport.url;
  }

  /**
   * Creates the database (v1: with the default retention policy), bucket (v2) or database (v3)
   * when missing; an existing one is left as it is. Throws when the tsdb cannot be reached or refuses.
   */
  async ensureDatabase(): Promise<void> {
    const c = this.config;
    if (c.version === 1) await this.ensureV1(c.v1Config);
    else if (c.version === 2) await this.ensureV2(c.v2Config);
    else await this.ensureV3(c.v3Config);
  }

  private async ensureV1(v1: TsdbConfig['v1Config']): Promise<void> {
    const hours = retentionHours(v1.retentionPolicy.duration);
    // A new client per call: node-influx keeps a failed host out of service for a while.
    const influx = new InfluxV1({
      host: this.config.host,
      port: this.config.port,
      protocol: 'http',
      ...(v1.auth.enable ? { username: v1.auth.username, password: v1.auth.password } : {}),
      pool: { maxRetries: 0, requestTimeout: this.requestTimeoutMs },
    });
    const names = await influx.getDatabaseNames();
    if (names.includes(v1.dbName)) {
      this.log.info({ database: v1.dbName }, 'tsdb database exists; left as it is');
      return;
    }
    await influx.createDatabase(v1.dbName);
    await influx.createRetentionPolicy(v1.retentionPolicy.name, { database: v1.dbName, duration: `${hours}h`, replication: 1, isDefault: true });
    this.log.info({ database: v1.dbName, retentionPolicy: v1.retentionPolicy.name, duration: `${hours}h` }, 'tsdb database created with its default retention policy');
  }

  private async ensureV2(v2: TsdbConfig['v2Config']): Promise<void> {
    const everySeconds = retentionHours(v2.retentionDuration) * 3600;
    const client = this.v2Client ?? new InfluxV2({ url: this.baseUrl, token: v2.token, timeout: this.requestTimeoutMs });
    const api = async (method: 'GET' | 'POST', path: string, body: object | ''): Promise<unknown> => {
      try {
        const result: unknown = await client.transport.request(path, body, { method });
        return result;
      } catch (err) {
        throw setupError(2, `${method} ${path}`, err);
      }
    };
    const orgs: unknown = await api('GET', `/api/v2/orgs?${new URLSearchParams({ org: v2.org }).toString()}`, '');
    const org = listOf(orgs, 'orgs').find((o) => o.name === v2.org);
    const orgID = org?.id;
    if (typeof orgID !== 'string') throw new Error(`tsdb v2: organisation "${v2.org}" not found`);
    const buckets: unknown = await api('GET', `/api/v2/buckets?${new URLSearchParams({ name: v2.bucket, orgID }).toString()}`, '');
    if (listOf(buckets, 'buckets').some((b) => b.name === v2.bucket)) {
      this.log.info({ org: v2.org, bucket: v2.bucket }, 'tsdb bucket exists; left as it is');
      return;
    }
    try {
      await client.transport.request(
        '/api/v2/buckets',
        { orgID, name: v2.bucket, description: v2.description, retentionRules: [{ type: 'expire', everySeconds }] },
        { method: 'POST' },
      );
    } catch (err) {
      // Created meanwhile by someone else: left as it is.
      if (err instanceof HttpError && err.statusCode === 422 && /already exists/i.test(err.body ?? err.message)) return;
      throw setupError(2, 'POST /api/v2/buckets', err);
    }
    this.log.info({ org: v2.org, bucket: v2.bucket, everySeconds }, 'tsdb bucket created');
  }

  private async ensureV3(v3: TsdbConfig['v3Config']): Promise<void> {
    const hours = retentionHours(v3.retentionDuration);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (v3.token !== '') headers.authorization = `Bearer ${v3.token}`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.baseUrl}/api/v3/configure/database`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ db: v3.database, retention_period: `${hours}h` }),
        signal: AbortSignal.timeout(this.requestTimeoutMs),
      });
      text = await res.text();
    } catch (err) {
      throw setupError(3, 'POST /api/v3/configure/database', err);
    }
    // 409 Conflict; a 400/422 saying "already exists" is taken the same way.
    if (res.status === 409 || ((res.status === 400 || res.status === 422) && /already exists/i.test(text))) {
      this.log.info({ database: v3.database }, 'tsdb database exists; left as it is');
      return;
    }
    if (!res.ok) throw new Error(`tsdb v3: POST /api/v3/configure/database answered HTTP ${res.status}: ${serverMessage(text, null)}`);
    this.log.info({ database: v3.database, retention: `${hours}h` }, 'tsdb database created');
  }

  /**
   * Writes `points` by §6.0's rules and reports what became of them. Never throws for tsdb failures:
   * points refused for good count as dropped (ERROR log and `onError`), points of chunks that failed
   * whole are returned in `failedWhole` for redelivery.
   */
  async write(points: readonly Point[], module: string, options: WriteOptions = {}): Promise<WriteReport> {
    const run: Run = {
      module,
      untracked: options.untracked === true,
      report: { written: 0, dropped: 0, droppedBeyondRetention: 0, failedWhole: [], requests: 0 },
      aborted: false,
    };
    const items: Item[] = [];
    for (const point of points) {
      try {
        items.push({ point, line: toLine(point) });
      } catch (err) {
        this.dropInvalid(run, point, err);
      }
    }
    for (const chunk of chunksOf(items, this.config.maxBatchSize)) await this.sendChunk(run, chunk);
    return run.report;
  }

  private async sendChunk(run: Run, items: readonly Item[]): Promise<void> {
    const report = run.report;
    if (run.aborted) {
      for (const item of items) report.failedWhole.push(item.point);
      return;
    }
    const outcome = await this.sendWithRetries(run, items);
    if (outcome.kind === 'ok') {
      report.written += items.length;
      return;
    }
    const retention = outcome.kind === 'http' ? RETENTION_DROP.exec(outcome.message) : null;
    if (retention !== null) {
      const dropped = Math.min(items.length, Number(retention[1]));
      report.written += items.length - dropped;
      report.droppedBeyondRetention += dropped;
      this.logAt(run, 'warn', { module: run.module, dropped, chunk: items.length, message: outcome.message }, 'tsdb dropped points older than its retention period (dropped_beyond_retention)');
      return;
    }
    if (outcome.kind === 'network' || outcome.status === 401 || outcome.status === 403) {
      run.aborted = true;
      for (const item of items) report.failedWhole.push(item.point);
      this.failWhole(run, items.length, outcome);
      return;
    }
    const first = items[0];
    if (items.length === 1 && first !== undefined) {
      this.dropRefused(run, first, outcome);
      return;
    }
    const size = nextChunkSize(items.length);
    this.log.debug({ module: run.module, status: outcome.status, chunk: items.length, nextSize: size, message: outcome.message }, 'tsdb refused a chunk; re-sending it in smaller chunks');
    for (const sub of chunksOf(items, size)) await this.sendChunk(run, sub);
  }

  private async sendWithRetries(run: Run, items: readonly Item[]): Promise<Outcome> {
    const lines = items.map((i) => i.line);
    for (let attempt = 0; ; attempt++) {
      run.report.requests++;
      const outcome = await this.transport.send(lines);
      const delay = this.retryDelaysMs[attempt];
      if (outcome.kind === 'ok' || !isTransient(outcome) || delay === undefined) return outcome;
      const wait = Math.min(this.retryDelayCapMs, Math.max(delay, outcome.kind === 'http' ? (outcome.retryAfterMs ?? 0) : 0));
      this.log.debug(
        { module: run.module, attempt: attempt + 1, waitMs: wait, chunk: items.length, ...(outcome.kind === 'http' ? { status: outcome.status } : { code: outcome.code }), message: outcome.message },
        'tsdb write failed transiently; retrying',
      );
      await this.sleep(wait);
    }
  }

  private failWhole(run: Run, chunkSize: number, outcome: Exclude<Outcome, { kind: 'ok' }>): void {
    const reason = outcome.kind === 'network' ? `${outcome.code}: ${outcome.message}` : `HTTP ${outcome.status}: ${outcome.message}`;
    const err = new TsdbWriteError(`tsdb v${this.version} write failed whole (${reason})`, {
      version: this.version,
      url: this.transport.url,
      ...(outcome.kind === 'network' ? { code: outcome.code, cause: outcome.cause } : { status: outcome.status }),
    });
    this.logAt(run, 'warn', { module: run.module, chunk: chunkSize, url: this.transport.url, reason }, 'tsdb write failed whole; the points are returned for redelivery');
    if (!run.untracked) this.onError(this.errorType, run.module, err);
  }

  private dropRefused(run: Run, item: Item, outcome: Extract<Outcome, { kind: 'http' }>): void {
    run.report.dropped++;
    const line = truncate(item.line, MAX_LOGGED_LINE);
    const err = new TsdbWriteError(`tsdb v${this.version} refused a point: HTTP ${outcome.status}: ${outcome.message}`, { version: this.version, url: this.transport.url, status: outcome.status, line });
    this.logAt(run, 'error', { module: run.module, status: outcome.status, message: outcome.message, line }, 'tsdb refused a point; dropped');
    if (!run.untracked) this.onError(this.errorType, run.module, err);
  }

  private dropInvalid(run: Run, point: Point, cause: unknown): void {
    run.report.dropped++;
    const message = cause instanceof Error ? cause.message : String(cause);
    const err = new TsdbWriteError(`point not writable as line protocol: ${message}`, { version: this.version, url: this.transport.url, cause });
    this.logAt(run, 'error', { module: run.module, measurement: point.measurement, reason: message }, 'point not writable as line protocol; dropped');
    if (!run.untracked) this.onError(this.errorType, run.module, err);
  }

  private logAt(run: Run, level: 'warn' | 'error', obj: object, msg: string): void {
    if (run.untracked) this.log.debug(obj, msg);
    else this.log[level](obj, msg);
  }
}

/** §6.0 rule 2: timeout, connection refused/reset, host not found (any failure without an answer), 429 and 5xx. */
function isTransient(outcome: Exclude<Outcome, { kind: 'ok' }>): boolean {
  return outcome.kind === 'network' || outcome.status === 429 || outcome.status >= 500;
}

function chunksOf<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** At most `max` code points (a surrogate pair is never split). */
function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join('');
}

/** `body[key]` as a list of objects (v2 API list responses). */
function listOf(body: unknown, key: string): Record<string, unknown>[] {
  const list = isRecord(body) ? body[key] : undefined;
  return Array.isArray(list) ? list.filter(isRecord) : [];
}

/** The tsdb's error text: `error` (v1, v3) or `message` (v2) of a JSON body, else the body or `X-Influxdb-Error`. */
function serverMessage(body: string, header: string | null): string {
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
function retryAfterMs(value: string | string[] | null | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text === null || !/^\d+(\.\d+)?$/.test(text.trim())) return undefined;
  return Math.round(Number(text) * 1000);
}

function stringProp(value: unknown, key: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v: unknown = Reflect.get(value, key);
  return typeof v === 'string' ? v : undefined;
}

/** A failure without an HTTP answer: its error code (`ECONNREFUSED`, `ETIMEDOUT`, …) and message. */
function networkOutcome(err: unknown): Extract<Outcome, { kind: 'network' }> {
  const cause: unknown = err instanceof Error ? err.cause : undefined;
  const timedOut = err instanceof RequestTimedOutError || (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'));
  const code = timedOut ? 'ETIMEDOUT' : (stringProp(err, 'code') ?? stringProp(cause, 'code') ?? 'ECONNECTION');
  const message = [err instanceof Error ? err.message : String(err), stringProp(cause, 'message')].filter((m) => m !== undefined && m !== '').join(': ');
  return { kind: 'network', code, message, cause: err };
}

function setupError(version: TsdbVersion, request: string, err: unknown): Error {
  if (err instanceof HttpError) {
    return new Error(`tsdb v${version}: ${request} answered HTTP ${err.statusCode}: ${serverMessage(err.body ?? '', null) || err.message}`, { cause: err });
  }
  const outcome = networkOutcome(err);
  return new Error(`tsdb v${version}: ${request} failed: ${outcome.code}: ${outcome.message}`, { cause: err });
}

/** Versions 1 and 3: the lines posted with fetch. */
class FetchTransport implements LineTransport {
  constructor(
    readonly url: string,
    private readonly headers: Record<string, string>,
    private readonly timeoutMs: number,
  ) {}

  async send(lines: readonly string[]): Promise<Outcome> {
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: { ...this.headers, 'content-type': 'text/plain; charset=utf-8' },
        body: lines.join('\n'),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const body = await res.text();
      if (res.ok) return { kind: 'ok' };
      return { kind: 'http', status: res.status, message: serverMessage(body, res.headers.get('x-influxdb-error')), retryAfterMs: retryAfterMs(res.headers.get('retry-after')) };
    } catch (err) {
      return networkOutcome(err);
    }
  }
}

/** Version 2: the official client's WriteApi, one per request, its batching, timer, retries and gzip off. */
class V2Transport implements LineTransport {
  readonly url: string;

  constructor(
    private readonly client: InfluxV2,
    baseUrl: string,
    private readonly org: string,
    private readonly bucket: string,
  ) {
    // The path the client builds.
    this.url = `${baseUrl}/api/v2/write?org=${encodeURIComponent(org)}&bucket=${encodeURIComponent(bucket)}&precision=ns`;
  }

  async send(lines: readonly string[]): Promise<Outcome> {
    const api = this.client.getWriteApi(this.org, this.bucket, 'ns', {
      batchSize: lines.length + 1,
      maxBatchBytes: Number.POSITIVE_INFINITY,
      flushInterval: 0,
      maxRetries: 0,
      maxBufferLines: lines.length + 1,
      gzipThreshold: Number.POSITIVE_INFINITY,
      // The failure becomes the result of flush(): no retry buffer, no console logging by the client.
      writeFailed: (error: Error) => Promise.reject(error),
    });
    try {
      api.writeRecords([...lines]);
      await api.flush();
      return { kind: 'ok' };
    } catch (err) {
      if (err instanceof HttpError) {
        return { kind: 'http', status: err.statusCode, message: serverMessage(err.body ?? '', null) || err.message, retryAfterMs: retryAfterMs(err.headers?.['retry-after']) };
      }
      return networkOutcome(err);
    } finally {
      api.dispose();
    }
  }
}
