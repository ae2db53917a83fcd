/**
 * The tsdb writer (platform-formats.md §6.0): one per process, for the configured version 1, 2 or 3.
 * It turns points into line protocol, sends them in chunks of `maxBatchSize` and applies §6.0's
 * batching and retry rules itself; the client libraries' own buffering and retries are off.
 *
 * What differs per version — the write request and database setup — is the version's adapter
 * (client.ts: `TsdbClient`; v1.ts, v2.ts, v3.ts), made by `createTsdbClient`. Everything here is
 * the same for all three: line protocol, the chunk ladder, retries, reports, error tracking, logging.
 */
import type { Log } from '../../logging/log.js';
import type { Failure, Outcome, TsdbClient, TsdbClientOptions, TsdbConfig, TsdbVersion } from './client.js';
import { type FailureInfo, refusalHint, refusalOf, TsdbSetupError, truncate } from './http.js';
import { LineBuffer, type LineSpan } from './line-buffer.js';
import type { Point } from './line-protocol.js';
import { tsdbTls } from './tls.js';
import { V1Client } from './v1.js';
import { V2Client } from './v2.js';
import { V3Client } from './v3.js';

export type { TsdbConfig, TsdbVersion } from './client.js';
/** The adapter of the configured version. */
export function createTsdbClient(options: TsdbClientOptions): TsdbClient {
  const version = options.config.version;
  if (version === 1) return new V1Client(options);
  if (version === 2) return new V2Client(options);
  return new V3Client(options);
}

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
  /** Why they failed whole (what the log said), when some did. */
  refusal: string | undefined;
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

  constructor(
    message: string,
    details: { version: TsdbVersion; url: string; status?: number; code?: string; line?: string; cause?: unknown },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.version = details.version;
    this.url = details.url;
    this.status = details.status;
    this.code = details.code;
    this.line = details.line;
  }
}

/**
 * Line protocol built per turn of the event loop: after this much, the writer lets the loop run
 * before it builds on. A batch of 1,000 audit lines (≈ 2.4 MB) took 16–30 ms of one synchronous
 * stretch, and in it no synced queue write completed and no request was answered: the audit API's
 * sends (and its clients) waited for it, the intake stalled, and send p99 rose from ≈ 9 to 50–90 ms
 * in bench/pipeline.mjs's queue → tsdb stage. 256 KiB is ≈ 100 audit lines, ≈ 2 ms.
 */
const BUILD_SLICE_BYTES = 256 * 1024;
/** Resumes after the I/O callbacks that are due (setImmediate runs after the loop's poll phase). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** §6.0 rule 3: the chunk sizes below `maxBatchSize`. */
export const LADDER = [500, 250, 100, 10, 1] as const;
const DEFAULT_RETRY_DELAYS_MS = [1_000, 2_000, 4_000] as const;
const DEFAULT_RETRY_CAP_MS = 10_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
const MAX_LOGGED_LINE = 1_000;
/** Largest line buffer kept between writes: a batch of 1,000 ~2 KB audit lines fits. */
const MAX_KEPT_LINE_BUFFER = 4 * 1024 * 1024;
const RETENTION_DROP = /partial write: points beyond retention policy dropped=(\d+)/;

/** The next chunk size of the ladder for a failing chunk of `size` points. */
export function nextChunkSize(size: number): number {
  return LADDER.find((s) => s < size) ?? 1;
}

/** A point and where its line is in the write's line protocol (`LineBuffer`). */
interface Item extends LineSpan {
  point: Point;
}

interface Run {
  module: string;
  untracked: boolean;
  lines: LineBuffer;
  report: WriteReport;
  /** Set once a chunk failed whole: everything not yet sent goes to failedWhole. */
  aborted: boolean;
}

export class TsdbWriter {
  readonly version: TsdbVersion;
  private readonly maxBatchSize: number;
  private readonly log: Log;
  private readonly onError: TsdbErrorSink;
  private readonly errorType: TsdbErrorType;
  private readonly retryDelaysMs: readonly number[];
  private readonly retryDelayCapMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly client: TsdbClient;
  /** Line buffers not in use by a write in flight (writes in flight at once each have their own). */
  private readonly idleLines: LineBuffer[] = [];
  private readonly config: TsdbConfig;
  /** The refusal last logged (its kind and status or code) until the tsdb accepts a request again. */
  private refusedAs: string | undefined;

  constructor(options: TsdbWriterOptions) {
    this.version = options.config.version;
    this.maxBatchSize = options.config.maxBatchSize;
    this.log = options.log;
    this.onError = options.onError;
    this.errorType = `TSDB_V${this.version}_WRITE`;
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    this.retryDelayCapMs = options.retryDelayCapMs ?? DEFAULT_RETRY_CAP_MS;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.config = options.config;
    this.client = createTsdbClient({
      config: options.config,
      tls: tsdbTls(options.config),
      log: options.log,
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    });
  }

  /** The write endpoint (no credentials). */
  get writeUrl(): string {
    return this.client.writeUrl;
  }

  /**
   * Creates the database (v1: with the default retention policy), bucket (v2) or database (v3)
   * when missing; an existing one is left as it is. Throws when the tsdb cannot be reached or refuses,
   * and then tracks the failure for `module` (`onError`), when one is given. A refusal (unreachable,
   * credentials refused: the TsdbSetupError's `refusal`) is logged as a failed write's is: once
   * until the tsdb accepts a request again.
   */
  async ensureDatabase(module?: string): Promise<void> {
    try {
      await this.client.ensureDatabase();
    } catch (err) {
      if (err instanceof TsdbSetupError && err.refusal !== undefined)
        this.refused(err.failure, err.message, { module: module ?? '', untracked: module === undefined });
      if (module !== undefined) this.onError(this.errorType, module, err);
      throw err;
    }
    this.accepted();
  }

  /**
   * Writes `points` by §6.0's rules and reports what became of them. Never throws for tsdb failures:
   * points refused for good count as dropped (ERROR log and `onError`), points of chunks that failed
   * whole are returned in `failedWhole` for redelivery.
   */
  async write(points: readonly Point[], module: string, options: WriteOptions = {}): Promise<WriteReport> {
    // A line buffer of an earlier write: a batch's lines (≈ 2.4 MB for 1,000 audit events) grow a
    // new one by doublings, and each of those external allocations pushes V8 toward a full GC.
    const lines = this.idleLines.pop() ?? new LineBuffer();
    lines.reset();
    try {
      return await this.writeLines(points, module, options, lines);
    } finally {
      // Kept for the next write unless a huge batch grew it (not held while idle).
      if (lines.capacity <= MAX_KEPT_LINE_BUFFER) this.idleLines.push(lines);
    }
  }

  private async writeLines(
    points: readonly Point[],
    module: string,
    options: WriteOptions,
    lines: LineBuffer,
  ): Promise<WriteReport> {
    const run: Run = {
      module,
      untracked: options.untracked === true,
      lines,
      report: { written: 0, dropped: 0, droppedBeyondRetention: 0, failedWhole: [], refusal: undefined, requests: 0 },
      aborted: false,
    };
    const items: Item[] = [];
    let sliceEnd = BUILD_SLICE_BYTES;
    for (const point of points) {
      if (run.lines.size >= sliceEnd) {
        await nextTurn();
        sliceEnd = run.lines.size + BUILD_SLICE_BYTES;
      }
      try {
        const { start, end } = run.lines.add(point);
        items.push({ point, start, end });
      } catch (err) {
        this.dropInvalid(run, point, err);
      }
    }
    for (const chunk of chunksOf(items, this.maxBatchSize)) await this.sendChunk(run, chunk);
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
      this.accepted();
      return;
    }
    const retention = outcome.kind === 'http' ? RETENTION_DROP.exec(outcome.message) : null;
    if (retention !== null) {
      const dropped = Math.min(items.length, Number(retention[1]));
      report.written += items.length - dropped;
      report.droppedBeyondRetention += dropped;
      this.logAt(
        run,
        'warn',
        { module: run.module, dropped, chunk: items.length, message: outcome.message },
        'tsdb dropped points older than its retention period (dropped_beyond_retention)',
      );
      return;
    }
    if (outcome.kind === 'network' || refusalOf(outcome) !== undefined) {
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
    this.log.debug(
      { module: run.module, status: outcome.status, chunk: items.length, nextSize: size, message: outcome.message },
      'tsdb refused a chunk; re-sending it in smaller chunks',
    );
    for (const sub of chunksOf(items, size)) await this.sendChunk(run, sub);
  }

  private async sendWithRetries(run: Run, items: readonly Item[]): Promise<Outcome> {
    const chunk = run.lines.chunk(items);
    for (let attempt = 0; ; attempt++) {
      run.report.requests++;
      const outcome = await this.client.send(chunk);
      const delay = this.retryDelaysMs[attempt];
      if (outcome.kind === 'ok' || !isTransient(outcome) || delay === undefined) return outcome;
      const wait = Math.min(
        this.retryDelayCapMs,
        Math.max(delay, outcome.kind === 'http' ? (outcome.retryAfterMs ?? 0) : 0),
      );
      this.log.debug(
        {
          module: run.module,
          attempt: attempt + 1,
          waitMs: wait,
          chunk: items.length,
          ...(outcome.kind === 'http' ? { status: outcome.status } : { code: outcome.code }),
          message: outcome.message,
        },
        'tsdb write failed transiently; retrying',
      );
      await this.sleep(wait);
    }
  }

  private failWhole(run: Run, chunkSize: number, outcome: Failure): void {
    const reason =
      outcome.kind === 'network' ? `${outcome.code}: ${outcome.message}` : `HTTP ${outcome.status}: ${outcome.message}`;
    const err = new TsdbWriteError(`tsdb v${this.version} write failed whole (${reason})`, {
      version: this.version,
      url: this.client.writeUrl,
      ...(outcome.kind === 'network' ? { code: outcome.code, cause: outcome.cause } : { status: outcome.status }),
    });
    const { pathname, search } = new URL(this.client.writeUrl);
    run.report.refusal = this.refused(
      outcome,
      `a write (POST ${pathname}${search}) failed whole: ${reason}`,
      run,
      chunkSize,
    );
    if (!run.untracked) this.onError(this.errorType, run.module, err);
  }

  /**
   * A refusal (refusalOf) met by a write or by database setup: one line when it starts or changes
   * (its kind, status or code), naming the tsdb, what failed and what to check — an ERROR when the
   * credentials were refused or the config can fix it (TLS), a WARN for a server that is away —
   * and DEBUG while it lasts, so that retries make no storm. Only status, code and message are
   * logged: never a request, its headers or an error object that could hold them. Returns the
   * line's text (the reason the events wait).
   */
  private refused(failure: FailureInfo, what: string, run: Pick<Run, 'module' | 'untracked'>, chunk?: number): string {
    const refusal = refusalOf(failure);
    const hint = refusalHint(this.config, failure);
    const server = `tsdb v${this.version} at ${new URL(this.client.writeUrl).origin}`;
    const text =
      refusal === 'credentials'
        ? `${server} refused Svc's credentials: ${what}; ${hint}; its events wait and are tried again`
        : `${server} cannot be written: ${what}${hint === '' ? '' : `; ${hint}`}; its events wait and are tried again`;
    const key = `${refusal ?? ''}:${failure.kind === 'http' ? failure.status : failure.code}`;
    const fields = {
      module: run.module,
      url: this.client.writeUrl,
      ...(failure.kind === 'http' ? { status: failure.status } : { code: failure.code }),
      ...(chunk === undefined ? {} : { chunk }),
    };
    if (key === this.refusedAs || run.untracked) {
      this.log.debug(fields, text);
      return text;
    }
    this.refusedAs = key;
    this.log[refusal === 'credentials' || hint !== '' ? 'error' : 'warn'](fields, text);
    return text;
  }

  /** The tsdb accepted a request: a refusal logged before is over (one INFO line says so). */
  private accepted(): void {
    if (this.refusedAs === undefined) return;
    this.refusedAs = undefined;
    this.log.info(
      { url: this.client.writeUrl },
      `tsdb v${this.version} at ${new URL(this.client.writeUrl).origin} accepts Svc's requests again`,
    );
  }

  private dropRefused(run: Run, item: Item, outcome: Extract<Outcome, { kind: 'http' }>): void {
    run.report.dropped++;
    const line = truncate(run.lines.text(item), MAX_LOGGED_LINE);
    const err = new TsdbWriteError(
      `tsdb v${this.version} refused a point: HTTP ${outcome.status}: ${outcome.message}`,
      { version: this.version, url: this.client.writeUrl, status: outcome.status, line },
    );
    this.logAt(
      run,
      'error',
      { module: run.module, status: outcome.status, message: outcome.message, line },
      'tsdb refused a point; dropped',
    );
    if (!run.untracked) this.onError(this.errorType, run.module, err);
  }

  private dropInvalid(run: Run, point: Point, cause: unknown): void {
    run.report.dropped++;
    const message = cause instanceof Error ? cause.message : String(cause);
    const err = new TsdbWriteError(`point not writable as line protocol: ${message}`, {
      version: this.version,
      url: this.client.writeUrl,
      cause,
    });
    this.logAt(
      run,
      'error',
      { module: run.module, measurement: point.measurement, reason: message },
      'point not writable as line protocol; dropped',
    );
    if (!run.untracked) this.onError(this.errorType, run.module, err);
  }

  private logAt(run: Run, level: 'warn' | 'error', obj: object, msg: string): void {
    if (run.untracked) this.log.debug(obj, msg);
    else this.log[level](obj, msg);
  }
}

/** §6.0 rule 2: timeout, connection refused/reset, host not found (any failure without an answer), 429 and 5xx. */
function isTransient(outcome: Failure): boolean {
  return outcome.kind === 'network' || outcome.status === 429 || outcome.status >= 500;
}

function chunksOf<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
