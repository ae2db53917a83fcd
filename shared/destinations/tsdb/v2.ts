/**
 * tsdb version 2 (InfluxDB 2.x), through http.ts as versions 1 and 3: no client library.
 *
 * Writes: `POST /api/v2/write?org=&bucket=&precision=ns`, `Authorization: Token`, with node:http(s)
 * (http.ts `HttpTransport`): the line protocol as is (no gzip), one request per chunk, no retries of
 * its own.
 *
 * Bucket setup is three calls of the v2 API (https://docs.influxdata.com/influxdb/v2/api/):
 * `GET /api/v2/orgs?org=`, `GET /api/v2/buckets?name=&orgID=`, and `POST /api/v2/buckets` when the
 * bucket is missing; a 422 "already exists" (created meanwhile by someone else) leaves it as it is.
 */
import type { Log } from '../../logging/log.js';
import { isRecord } from '../../util/records.js';
import type { TsdbClient, TsdbClientOptions } from './client.js';
import { HttpClient, retentionHours, setupCall, setupJson } from './http.js';

type V2Config = TsdbClientOptions['config']['v2Config'];

export class V2Client extends HttpClient implements TsdbClient {
  private readonly v2: V2Config;
  private readonly log: Log;
  private readonly requestTimeoutMs: number;

  constructor(options: TsdbClientOptions) {
    const v2 = options.config.v2Config;
    super(options, {
      // The path InfluxDB's own client library builds (names percent-encoded, spaces as %20).
      path: `/api/v2/write?org=${encodeURIComponent(v2.org)}&bucket=${encodeURIComponent(v2.bucket)}&precision=ns`,
      headers: { authorization: `Token ${v2.token}` },
      timeoutMs: options.requestTimeoutMs,
    });
    this.v2 = v2;
    this.log = options.log;
    this.requestTimeoutMs = options.requestTimeoutMs;
  }

  async ensureDatabase(): Promise<void> {
    const v2 = this.v2;
    const everySeconds = retentionHours(v2.retentionDuration) * 3600;
    const orgs = await this.get(`/api/v2/orgs?${new URLSearchParams({ org: v2.org }).toString()}`);
    const orgID = listOf(orgs, 'orgs').find((o) => o.name === v2.org)?.id;
    if (typeof orgID !== 'string') throw new Error(`tsdb v2: organisation "${v2.org}" not found`);
    const buckets = await this.get(`/api/v2/buckets?${new URLSearchParams({ name: v2.bucket, orgID }).toString()}`);
    if (listOf(buckets, 'buckets').some((b) => b.name === v2.bucket)) {
      this.log.info({ org: v2.org, bucket: v2.bucket }, 'tsdb bucket exists; left as it is');
      return;
    }
    const body = {
      orgID,
      name: v2.bucket,
      description: v2.description,
      retentionRules: [{ type: 'expire', everySeconds }],
    };
    const created = await setupCall(this.transport, {
      version: 2,
      method: 'POST',
      path: '/api/v2/buckets',
      request: 'POST /api/v2/buckets',
      headers: { authorization: `Token ${this.v2.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      timeoutMs: this.requestTimeoutMs,
      // Created meanwhile by someone else: left as it is.
      tolerate: (status, text) => status === 422 && /already exists/i.test(text),
    });
    if (created.tolerated) return;
    this.log.info({ org: v2.org, bucket: v2.bucket, everySeconds }, 'tsdb bucket created');
  }

  /** A GET of the v2 API: its answer as JSON, or an error saying what InfluxDB answered (or why it did not). */
  private async get(path: string): Promise<unknown> {
    const answer = await setupJson(this.transport, {
      version: 2,
      method: 'GET',
      path,
      request: `GET ${path}`,
      headers: { authorization: `Token ${this.v2.token}` },
      timeoutMs: this.requestTimeoutMs,
    });
    return answer.json;
  }
}

/** `body[key]` as a list of objects (v2 API list responses). */
function listOf(body: unknown, key: string): Record<string, unknown>[] {
  const list = isRecord(body) ? body[key] : undefined;
  return Array.isArray(list) ? list.filter(isRecord) : [];
}
