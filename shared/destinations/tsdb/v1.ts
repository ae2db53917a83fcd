/**
 * tsdb version 1 (InfluxDB 1.x).
 *
 * Writes: `POST /write?db=<dbName>&precision=ns` with node:http (http.ts `HttpTransport`), HTTP Basic when `v1Config.auth.enable`.
 * node-influx (`influx`) cannot post given lines: `writePoints` serialises its own point objects
 * (numbers become floats unless a schema is declared per measurement, its escaping is its own), and
 * its request pool is private and takes a host out of service for a backoff period after a network
 * error, answering "No host available" meanwhile — a second retry mechanism under §6.0's.
 *
 * Database creation uses `influx` (`getDatabaseNames`, `createDatabase`, `createRetentionPolicy`),
 * loaded by `ensureDatabase()` only.
 */
import type { Log } from '../../logging/log.js';
import type { TsdbClient, TsdbClientOptions, TsdbConfig } from './client.js';
import { HttpClient, HttpTransport, retentionHours, serverUrl } from './http.js';

/** `POST /write?db=&precision=ns`, with HTTP Basic when `v1Config.auth.enable`. */
function writeTransport({ config, requestTimeoutMs }: TsdbClientOptions): HttpTransport {
  const { auth, dbName } = config.v1Config;
  const headers: Record<string, string> = auth.enable
    ? { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` }
    : {};
  const query = new URLSearchParams({ db: dbName, precision: 'ns' });
  return new HttpTransport(`${serverUrl(config)}/write?${query.toString()}`, headers, requestTimeoutMs);
}

export class V1Client extends HttpClient implements TsdbClient {
  private readonly config: TsdbConfig;
  private readonly v1: TsdbConfig['v1Config'];
  private readonly log: Log;
  private readonly requestTimeoutMs: number;

  constructor(options: TsdbClientOptions) {
    super(writeTransport(options));
    this.config = options.config;
    this.v1 = options.config.v1Config;
    this.log = options.log;
    this.requestTimeoutMs = options.requestTimeoutMs;
  }

  async ensureDatabase(): Promise<void> {
    const v1 = this.v1;
    const hours = retentionHours(v1.retentionPolicy.duration);
    const { InfluxDB } = await import('influx');
    // A new client per call: node-influx keeps a failed host out of service for a while.
    const influx = new InfluxDB({
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
    await influx.createRetentionPolicy(v1.retentionPolicy.name, {
      database: v1.dbName,
      duration: `${hours}h`,
      replication: 1,
      isDefault: true,
    });
    this.log.info(
      { database: v1.dbName, retentionPolicy: v1.retentionPolicy.name, duration: `${hours}h` },
      'tsdb database created with its default retention policy',
    );
  }
}
