/**
 * tsdb version 2 (InfluxDB 2.x), with `@influxdata/influxdb-client`, loaded at the first request.
 *
 * Writes: the client's `WriteApi` (`POST /api/v2/write?org=&bucket=&precision=ns`, `Authorization:
 * Token`), one WriteApi per request with `maxRetries: 0`, no flush timer, a batch size above the
 * request's line count (so only our explicit flush sends) and gzip off (the body is the line
 * protocol as is).
 *
 * Bucket setup uses the same client's transport for `GET /api/v2/orgs`, `GET /api/v2/buckets`,
 * `POST /api/v2/buckets` (`@influxdata/influxdb-client-apis` is not installed).
 */
import type * as InfluxV2 from '@influxdata/influxdb-client';
import type { Log } from '../../logging/log.js';
import { isRecord } from '../../util/records.js';
import type { Failure, LineChunk, Outcome, TsdbClient, TsdbClientOptions } from './client.js';
import { networkOutcome, retentionHours, retryAfterMs, serverMessage, serverUrl, setupError } from './http.js';

interface Loaded {
  lib: typeof InfluxV2;
  client: InfluxV2.InfluxDB;
}

export class V2Client implements TsdbClient {
  readonly writeUrl: string;
  private readonly v2: TsdbClientOptions['config']['v2Config'];
  private readonly log: Log;
  private readonly baseUrl: string;
  private readonly requestTimeoutMs: number;
  private loading: Promise<Loaded> | undefined;

  constructor(options: TsdbClientOptions) {
    this.v2 = options.config.v2Config;
    this.log = options.log;
    this.baseUrl = serverUrl(options.config);
    this.requestTimeoutMs = options.requestTimeoutMs;
    // The path the client builds.
    this.writeUrl = `${this.baseUrl}/api/v2/write?org=${encodeURIComponent(this.v2.org)}&bucket=${encodeURIComponent(this.v2.bucket)}&precision=ns`;
  }

  /** The library and one client for writes and setup, made at the first request. */
  private load(): Promise<Loaded> {
    this.loading ??= import('@influxdata/influxdb-client').then((lib) => ({
      lib,
      client: new lib.InfluxDB({ url: this.baseUrl, token: this.v2.token, timeout: this.requestTimeoutMs }),
    }));
    return this.loading;
  }

  /** Batching, timer, retries and gzip of the WriteApi off: one request with exactly these lines. */
  async send(chunk: LineChunk): Promise<Outcome> {
    const lines = chunk.lines();
    const { lib, client } = await this.load();
    const api = client.getWriteApi(this.v2.org, this.v2.bucket, 'ns', {
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
      api.writeRecords(lines);
      await api.flush();
      return { kind: 'ok' };
    } catch (err) {
      return failure(lib, err);
    } finally {
      api.dispose();
    }
  }

  async ensureDatabase(): Promise<void> {
    const v2 = this.v2;
    const everySeconds = retentionHours(v2.retentionDuration) * 3600;
    const { lib, client } = await this.load();
    const api = async (method: 'GET' | 'POST', path: string, body: object | ''): Promise<unknown> => {
      try {
        const result: unknown = await client.transport.request(path, body, { method });
        return result;
      } catch (err) {
        throw setupError(2, `${method} ${path}`, failure(lib, err), err);
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
      if (err instanceof lib.HttpError && err.statusCode === 422 && /already exists/i.test(err.body ?? err.message)) return;
      throw setupError(2, 'POST /api/v2/buckets', failure(lib, err), err);
    }
    this.log.info({ org: v2.org, bucket: v2.bucket, everySeconds }, 'tsdb bucket created');
  }
}

/** The client's errors as a failure: its HttpError an answer, anything else (its own timeout included) none. */
function failure(lib: typeof InfluxV2, err: unknown): Failure {
  if (err instanceof lib.HttpError) {
    return { kind: 'http', status: err.statusCode, message: serverMessage(err.body ?? '', null) || err.message, retryAfterMs: retryAfterMs(err.headers?.['retry-after']) };
  }
  return networkOutcome(err, err instanceof lib.RequestTimedOutError);
}

/** `body[key]` as a list of objects (v2 API list responses). */
function listOf(body: unknown, key: string): Record<string, unknown>[] {
  const list = isRecord(body) ? body[key] : undefined;
  return Array.isArray(list) ? list.filter(isRecord) : [];
}
