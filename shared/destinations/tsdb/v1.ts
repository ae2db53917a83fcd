/**
 * tsdb version 1 (InfluxDB 1.x), through http.ts as versions 2 and 3: no client library.
 *
 * Writes: `POST /write?db=<dbName>&precision=ns` with node:http(s) (http.ts `HttpTransport`), HTTP Basic
 * when `v1Config.auth.enable`.
 *
 * Database setup is InfluxQL over the query endpoint (https://docs.influxdata.com/influxdb/v1/tools/api/#query-http-endpoint):
 * `SHOW DATABASES` (GET), then `CREATE DATABASE` and `CREATE RETENTION POLICY … DEFAULT` (POST,
 * as InfluxDB wants for statements that change something). A statement InfluxDB refuses comes back
 * as 200 with an `error` in its result: that is a failure too.
 */
import type { Log } from '../../logging/log.js';
import { isRecord } from '../../util/records.js';
import type { TsdbClient, TsdbClientOptions, TsdbConfig } from './client.js';
import { HttpClient, retentionHours, setupJson, TsdbSetupError, truncate } from './http.js';

type V1Config = TsdbConfig['v1Config'];

/** `Authorization: Basic` when `v1Config.auth.enable`; none without. */
function authorization({ auth }: V1Config): Record<string, string> {
  return auth.enable
    ? { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` }
    : {};
}

/** An InfluxQL identifier in double quotes (a database or policy name may hold any character). */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The first element of `value[key]` when that is an array (InfluxQL answers nest lists of results and series). */
function firstOf(value: unknown, key: string): unknown {
  const list: unknown = isRecord(value) ? value[key] : undefined;
  if (!Array.isArray(list)) return undefined;
  const items: readonly unknown[] = list;
  return items[0];
}

/** The `error` of the first statement result of a query answer, when InfluxDB refused the statement. */
function statementError(results: unknown): string | undefined {
  const first = firstOf(results, 'results');
  return isRecord(first) && typeof first.error === 'string' ? truncate(first.error, 1000) : undefined;
}

/** The database names of a `SHOW DATABASES` answer. */
function databaseNames(results: unknown): string[] {
  const series = firstOf(firstOf(results, 'results'), 'series');
  const values: unknown = isRecord(series) ? series.values : undefined;
  if (!Array.isArray(values)) return [];
  const rows: readonly unknown[] = values;
  return rows.flatMap((row) => (Array.isArray(row) && typeof row[0] === 'string' ? [row[0]] : []));
}

export class V1Client extends HttpClient implements TsdbClient {
  private readonly v1: V1Config;
  private readonly log: Log;
  private readonly requestTimeoutMs: number;

  constructor(options: TsdbClientOptions) {
    const { config, requestTimeoutMs } = options;
    const query = new URLSearchParams({ db: config.v1Config.dbName, precision: 'ns' });
    super(options, {
      path: `/write?${query.toString()}`,
      headers: authorization(config.v1Config),
      timeoutMs: requestTimeoutMs,
    });
    this.v1 = config.v1Config;
    this.log = options.log;
    this.requestTimeoutMs = requestTimeoutMs;
  }

  async ensureDatabase(): Promise<void> {
    const v1 = this.v1;
    const hours = retentionHours(v1.retentionPolicy.duration);
    const names = databaseNames(await this.query('GET', 'SHOW DATABASES'));
    if (names.includes(v1.dbName)) {
      this.log.info({ database: v1.dbName }, 'tsdb database exists; left as it is');
      return;
    }
    const database = quoteIdentifier(v1.dbName);
    await this.query('POST', `CREATE DATABASE ${database}`);
    await this.query(
      'POST',
      `CREATE RETENTION POLICY ${quoteIdentifier(v1.retentionPolicy.name)} ON ${database} DURATION ${hours}h REPLICATION 1 DEFAULT`,
    );
    this.log.info(
      { database: v1.dbName, retentionPolicy: v1.retentionPolicy.name, duration: `${hours}h` },
      'tsdb database created with its default retention policy',
    );
  }

  /** One InfluxQL statement; its parsed answer, or an error saying what InfluxDB answered (or why it did not). */
  private async query(method: 'GET' | 'POST', statement: string): Promise<unknown> {
    const request = `${method} /query (${statement.split(' ').slice(0, 2).join(' ')})`;
    const form = new URLSearchParams({ q: statement }).toString();
    const answer = await setupJson(this.transport, {
      version: 1,
      method,
      request,
      timeoutMs: this.requestTimeoutMs,
      ...(method === 'GET'
        ? { path: `/query?${form}`, headers: authorization(this.v1) }
        : {
            path: '/query',
            headers: { ...authorization(this.v1), 'content-type': 'application/x-www-form-urlencoded' },
            body: form,
          }),
    });
    const refused = statementError(answer.json);
    if (refused !== undefined)
      throw new TsdbSetupError(1, request, { kind: 'http', status: answer.status, message: refused });
    return answer.json;
  }
}
