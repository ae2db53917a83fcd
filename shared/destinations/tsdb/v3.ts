/**
 * tsdb version 3 (InfluxDB 3.x), with `fetch`.
 *
 * Writes: `POST /api/v3/write_lp?db=<database>&precision=nanosecond`, `Authorization: Bearer`, with
 * the timeout `v3Config.writeTimeout`. `@influxdata/influxdb3-client` 2.1 cannot make that request:
 * its `write()` posts to `/api/v2/write?bucket=&precision=ns`, and reaches `/api/v3/write_lp` only
 * with `noSync: true`, which adds `no_sync=true` (the server answers before the data is durable —
 * unacceptable when the caller acknowledges queue messages on success).
 *
 * Database setup is `POST /api/v3/configure/database`, which that client has no call for either.
 */
import type { Log } from '../../logging/log.js';
import type { Outcome, TsdbClient, TsdbClientOptions } from './client.js';
import { FetchTransport, post, retentionHours, serverMessage, serverUrl, setupError } from './http.js';

const CONFIGURE = 'POST /api/v3/configure/database';

export class V3Client implements TsdbClient {
  private readonly v3: TsdbClientOptions['config']['v3Config'];
  private readonly log: Log;
  private readonly baseUrl: string;
  private readonly requestTimeoutMs: number;
  private readonly transport: FetchTransport;

  constructor(options: TsdbClientOptions) {
    this.v3 = options.config.v3Config;
    this.log = options.log;
    this.baseUrl = serverUrl(options.config);
    this.requestTimeoutMs = options.requestTimeoutMs;
    const query = new URLSearchParams({ db: this.v3.database, precision: 'nanosecond' });
    this.transport = new FetchTransport(`${this.baseUrl}/api/v3/write_lp?${query.toString()}`, this.authorization(), this.v3.writeTimeout);
  }

  get writeUrl(): string {
    return this.transport.url;
  }

  send(lines: readonly string[]): Promise<Outcome> {
    return this.transport.send(lines);
  }

  async ensureDatabase(): Promise<void> {
    const v3 = this.v3;
    const hours = retentionHours(v3.retentionDuration);
    const body = JSON.stringify({ db: v3.database, retention_period: `${hours}h` });
    const answer = await post(`${this.baseUrl}/api/v3/configure/database`, { ...this.authorization(), 'content-type': 'application/json' }, body, this.requestTimeoutMs);
    if (answer.kind === 'network') throw setupError(3, CONFIGURE, answer);
    // 409 Conflict; a 400/422 saying "already exists" is taken the same way.
    if (answer.status === 409 || ((answer.status === 400 || answer.status === 422) && /already exists/i.test(answer.body))) {
      this.log.info({ database: v3.database }, 'tsdb database exists; left as it is');
      return;
    }
    if (!answer.ok) throw setupError(3, CONFIGURE, { kind: 'http', status: answer.status, message: serverMessage(answer.body, null) });
    this.log.info({ database: v3.database, retention: `${hours}h` }, 'tsdb database created');
  }

  /** No Authorization header without a token (an open server). */
  private authorization(): Record<string, string> {
    return this.v3.token === '' ? {} : { authorization: `Bearer ${this.v3.token}` };
  }
}
