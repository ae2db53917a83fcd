/**
 * tsdb version 2 (InfluxDB 2.x); setup with `@influxdata/influxdb-client`, loaded at the first setup request.
 *
 * Writes: `POST /api/v2/write?org=&bucket=&precision=ns`, `Authorization: Token`, with node:http
 * (http.ts `HttpTransport`, as versions 1 and 3): the line protocol as is (no gzip), one request per
 * chunk, no retries of its own. The client's `WriteApi` did the same request, but built its own
 * copy of every line, a closure and promise chain per request and a WriteApi per chunk.
 *
 * Bucket setup uses the same client's transport for `GET /api/v2/orgs`, `GET /api/v2/buckets`,
 * `POST /api/v2/buckets` (`@influxdata/influxdb-client-apis` is not installed).
 */
import type * as InfluxV2 from '@influxdata/influxdb-client';
import type { Log } from '../../logging/log.js';
import { isRecord } from '../../util/records.js';
import type { Failure, TsdbClient, TsdbClientOptions } from './client.js';
import {
  HttpClient,
  HttpTransport,
  networkOutcome,
  retentionHours,
  retryAfterMs,
  serverMessage,
  serverUrl,
  setupError,
} from './http.js';

interface Loaded {
  lib: typeof InfluxV2;
  client: InfluxV2.InfluxDB;
}

export class V2Client extends HttpClient implements TsdbClient {
  private readonly v2: TsdbClientOptions['config']['v2Config'];
  private readonly log: Log;
  private readonly baseUrl: string;
  private readonly requestTimeoutMs: number;
  private loading: Promise<Loaded> | undefined;

  constructor(options: TsdbClientOptions) {
    const v2 = options.config.v2Config;
    const base = serverUrl(options.config);
    // The path the client library built.
    const url = `${base}/api/v2/write?org=${encodeURIComponent(v2.org)}&bucket=${encodeURIComponent(v2.bucket)}&precision=ns`;
    super(new HttpTransport(url, { authorization: `Token ${v2.token}` }, options.requestTimeoutMs));
    this.v2 = v2;
    this.log = options.log;
    this.baseUrl = serverUrl(options.config);
    this.requestTimeoutMs = options.requestTimeoutMs;
  }

  /** The library and one client for setup, made at the first setup request. */
  private load(): Promise<Loaded> {
    this.loading ??= import('@influxdata/influxdb-client').then((lib) => ({
      lib,
      client: new lib.InfluxDB({ url: this.baseUrl, token: this.v2.token, timeout: this.requestTimeoutMs }),
    }));
    return this.loading;
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
    const buckets: unknown = await api(
      'GET',
      `/api/v2/buckets?${new URLSearchParams({ name: v2.bucket, orgID }).toString()}`,
      '',
    );
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
      if (err instanceof lib.HttpError && err.statusCode === 422 && /already exists/i.test(err.body ?? err.message))
        return;
      throw setupError(2, 'POST /api/v2/buckets', failure(lib, err), err);
    }
    this.log.info({ org: v2.org, bucket: v2.bucket, everySeconds }, 'tsdb bucket created');
  }
}

/** The client's errors as a failure: its HttpError an answer, anything else (its own timeout included) none. */
function failure(lib: typeof InfluxV2, err: unknown): Failure {
  if (err instanceof lib.HttpError) {
    return {
      kind: 'http',
      status: err.statusCode,
      message: serverMessage(err.body ?? '', null) || err.message,
      retryAfterMs: retryAfterMs(err.headers?.['retry-after']),
    };
  }
  return networkOutcome(err, err instanceof lib.RequestTimedOutError);
}

/** `body[key]` as a list of objects (v2 API list responses). */
function listOf(body: unknown, key: string): Record<string, unknown>[] {
  const list = isRecord(body) ? body[key] : undefined;
  return Array.isArray(list) ? list.filter(isRecord) : [];
}
