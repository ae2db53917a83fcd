/**
 * tsdb version 3 (InfluxDB 3.x): writes and setup through http.ts's transport (node:http, or
 * node:https with `tsdbConfig.tls`).
 *
 * Writes: `POST /api/v3/write_lp?db=<database>&precision=nanosecond`, `Authorization: Bearer`, with
 * the timeout `v3Config.writeTimeout`, without `no_sync=true` (with it the server answers before
 * the data is durable: unacceptable when the caller acknowledges queue messages on success).
 * InfluxData's own client (`@influxdata/influxdb3-client` 2.1) posts to `/api/v2/write` unless
 * `noSync` is set, and has no call for database setup, `POST /api/v3/configure/database`.
 */
import type { Log } from '../../logging/log.js';
import type { TsdbClient, TsdbClientOptions } from './client.js';
import { HttpClient, retentionHours, setupCall } from './http.js';

const CONFIGURE = 'POST /api/v3/configure/database';

/** `Authorization: Bearer` when a token is set; none without (an open server). */
function authorization(v3: TsdbClientOptions['config']['v3Config']): Record<string, string> {
  return v3.token === '' ? {} : { authorization: `Bearer ${v3.token}` };
}

export class V3Client extends HttpClient implements TsdbClient {
  private readonly v3: TsdbClientOptions['config']['v3Config'];
  private readonly log: Log;
  private readonly requestTimeoutMs: number;

  constructor(options: TsdbClientOptions) {
    const v3 = options.config.v3Config;
    const query = new URLSearchParams({ db: v3.database, precision: 'nanosecond' });
    super(options, {
      path: `/api/v3/write_lp?${query.toString()}`,
      headers: authorization(v3),
      timeoutMs: v3.writeTimeout,
    });
    this.v3 = v3;
    this.log = options.log;
    this.requestTimeoutMs = options.requestTimeoutMs;
  }

  async ensureDatabase(): Promise<void> {
    const v3 = this.v3;
    const hours = retentionHours(v3.retentionDuration);
    const body = JSON.stringify({ db: v3.database, retention_period: `${hours}h` });
    const answer = await setupCall(this.transport, {
      version: 3,
      method: 'POST',
      path: '/api/v3/configure/database',
      request: CONFIGURE,
      headers: { ...authorization(this.v3), 'content-type': 'application/json' },
      body,
      timeoutMs: this.requestTimeoutMs,
      // 409 Conflict; a 400/422 saying "already exists" is taken the same way.
      tolerate: (status, text) =>
        status === 409 || ((status === 400 || status === 422) && /already exists/i.test(text)),
    });
    if (answer.tolerated) {
      this.log.info({ database: v3.database }, 'tsdb database exists; left as it is');
      return;
    }
    this.log.info({ database: v3.database, retention: `${hours}h` }, 'tsdb database created');
  }
}
