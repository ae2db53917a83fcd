/**
 * Starts a real InfluxDB 1.x server (`influxd`, Debian's 1.6.7 build) for tests, on free loopback ports,
 * with its own temporary config, meta, data and WAL directories. The config file's text comes from
 * bench/influxd-config.mjs, which the pipeline benchmark uses too.
 *
 *   const influx = await startInfluxd();
 *   await query(influx, 'CREATE DATABASE db');
 *   await writeLines(influx, 'db', 'm,t=a v=1 1600000000000000000');
 *   await influx.restart();              // same port, data kept
 *   await influx.stop();                 // process gone, temp dir removed
 *
 * With `https` it serves its API over TLS with the certificate a test made (the helpers here trust
 * its CA); with `auth` it requires a user (`createAdmin` makes the first one and the helpers then
 * authenticate as it).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { influxdConfig } from '../../bench/influxd-config.mjs';
import {
  findExecutable,
  freePorts,
  isAddressInUse,
  LOOPBACK,
  type ManagedProcess,
  registerTempDir,
  spawnManaged,
  unregisterTempDir,
  waitUntilReady,
} from './ports.js';

const READY_TIMEOUT_MS = 20_000;
const KILL_AFTER_MS = 5_000;
const START_ATTEMPTS = 3;

export interface InfluxdOptions {
  /** Serve the API over https with this certificate and key (PEM files); `ca` (PEM text) signed the certificate. */
  https?: { certFile: string; keyFile: string; ca: string };
  /** `auth-enabled = true`: every request but /ping needs a user; the first is made with `createAdmin`. */
  auth?: boolean;
}

export interface InfluxdHandle {
  readonly host: typeof LOOPBACK;
  /** HTTP API port. */
  readonly port: number;
  /** RPC / backup-restore port (the top-level `bind-address`, 8088 by default; here a free port). */
  readonly rpcPort: number;
  /** `http://127.0.0.1:<port>`, or `https://…` with the `https` option (no trailing slash). */
  readonly url: string;
  /** The CA the server's certificate is signed by (PEM), with the `https` option. */
  readonly ca: string | undefined;
  /** The user the helpers of this module authenticate as (`createAdmin`), if any. */
  credentials: { username: string; password: string } | undefined;
  /** Temporary root directory: holds `influxdb.conf`, `meta/`, `data/` and `wal/`. Removed by stop(). */
  readonly dataDir: string;
  readonly configPath: string;
  /** PID of the current influxd process, undefined while stopped. */
  readonly pid: number | undefined;
  /** True while an influxd process is running (also when paused). */
  readonly running: boolean;
  /** Stops the process (SIGTERM, SIGKILL after 5 s) and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
  /** stopProcess() + startProcess(): same ports, same data. */
  restart(): Promise<void>;
  /** Stops the process (SIGTERM, SIGKILL after 5 s) but keeps config and data. Idempotent. */
  stopProcess(): Promise<void>;
  /** Starts influxd again on the same ports and data and waits for /ping. No-op if already running. */
  startProcess(): Promise<void>;
  /** SIGKILL (simulated crash) keeping the data; startProcess() brings it back (WAL replay). */
  kill(): Promise<void>;
  /** SIGSTOP: the process keeps its sockets but stops answering (simulated hang). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  /** Last lines of influxd's stdout+stderr (current or last process). */
  logs(lines?: number): string;
}

/**
 * One request to the server's API with node:http(s) (fetch cannot be given the test CA), as the
 * handle's user when it has one; the answer's status and body.
 */
export function influxRequest(
  handle: Pick<InfluxdHandle, 'url' | 'ca' | 'credentials'>,
  method: 'GET' | 'POST',
  pathAndQuery: string,
  body?: { contentType: string; text: string },
  timeoutMs = 30_000,
): Promise<{ status: number; text: string }> {
  const url = new URL(pathAndQuery, handle.url);
  const user = handle.credentials;
  const options: RequestOptions & { ca?: string } = {
    method,
    hostname: url.hostname,
    port: url.port,
    path: `${url.pathname}${url.search}`,
    headers: {
      ...(user
        ? { authorization: `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}` }
        : {}),
      ...(body ? { 'content-type': body.contentType, 'content-length': Buffer.byteLength(body.text) } : {}),
    },
    ...(handle.ca === undefined ? {} : { ca: handle.ca }),
    signal: AbortSignal.timeout(timeoutMs),
  };
  return new Promise((resolve, reject) => {
    const answer = (res: IncomingMessage): void => {
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    };
    const req = url.protocol === 'https:' ? httpsRequest(options, answer) : httpRequest(options, answer);
    req.on('error', reject);
    req.end(body?.text);
  });
}

async function ping(handle: Pick<InfluxdHandle, 'url' | 'ca' | 'credentials'>): Promise<boolean> {
  try {
    return (await influxRequest(handle, 'GET', '/ping', undefined, 1_000)).status === 204;
  } catch {
    return false;
  }
}

class Influxd implements InfluxdHandle {
  readonly host = LOOPBACK;
  readonly configPath: string;
  credentials: { username: string; password: string } | undefined;
  private proc: ManagedProcess | undefined;
  private lastProc: ManagedProcess | undefined;
  private removed = false;

  constructor(
    private readonly binary: string,
    readonly dataDir: string,
    readonly port: number,
    readonly rpcPort: number,
    private readonly options: InfluxdOptions,
  ) {
    this.configPath = path.join(dataDir, 'influxdb.conf');
  }

  get url(): string {
    return `${this.options.https ? 'https' : 'http'}://${LOOPBACK}:${this.port}`;
  }

  get ca(): string | undefined {
    return this.options.https?.ca;
  }

  get pid(): number | undefined {
    return this.proc?.isRunning() ? this.proc.pid : undefined;
  }

  get running(): boolean {
    return this.proc?.isRunning() ?? false;
  }

  async writeConfig(): Promise<void> {
    let text = influxdConfig({ dir: this.dataDir, host: LOOPBACK, httpPort: this.port, rpcPort: this.rpcPort });
    const https = this.options.https;
    if (https)
      text = text.replace(
        'https-enabled = false',
        `https-enabled = true\n  https-certificate = ${JSON.stringify(https.certFile)}\n  https-private-key = ${JSON.stringify(https.keyFile)}`,
      );
    if (this.options.auth) text = text.replace('auth-enabled = false', 'auth-enabled = true');
    await writeFile(this.configPath, text);
  }

  async startProcess(): Promise<void> {
    if (this.removed) throw new Error('influxd handle was stopped (temp dir removed); start a new one');
    if (this.running) return;
    const proc = spawnManaged(this.binary, ['-config', this.configPath], this.dataDir);
    this.proc = proc;
    this.lastProc = proc;
    try {
      await waitUntilReady(proc, `influxd (${this.url}, rpc ${this.rpcPort})`, () => ping(this), READY_TIMEOUT_MS);
    } catch (err) {
      await proc.kill();
      throw err;
    }
  }

  async stopProcess(): Promise<void> {
    await this.proc?.stop(KILL_AFTER_MS);
  }

  async kill(): Promise<void> {
    await this.proc?.kill();
  }

  pause(): void {
    if (!this.running) throw new Error('influxd is not running');
    const pid = this.proc?.child.pid;
    this.proc?.child.kill('SIGSTOP');
    // kill(2) returns before every thread has stopped: a thread running on the other core may still
    // answer a request sent right after. Wait until each thread is stopped ('T' in /proc/<pid>/task/*/stat).
    if (pid !== undefined) untilStopped(pid);
  }

  resume(): void {
    if (!this.running) throw new Error('influxd is not running');
    this.proc?.child.kill('SIGCONT');
  }

  async restart(): Promise<void> {
    await this.stopProcess();
    await this.startProcess();
  }

  async stop(): Promise<void> {
    await this.stopProcess();
    if (!this.removed) {
      this.removed = true;
      await rm(this.dataDir, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 });
      unregisterTempDir(this.dataDir);
    }
  }

  logs(lines = 30): string {
    return this.lastProc?.outputTail(lines) ?? '';
  }
}

/**
 * Starts influxd on two free loopback ports (HTTP + RPC) with a fresh temp dir and waits until
 * `GET /ping` answers 204. Retries with new ports if one was grabbed by someone else in between.
 */
export async function startInfluxd(options: InfluxdOptions = {}): Promise<InfluxdHandle> {
  const binary = findExecutable('influxd', ['/usr/bin', '/usr/sbin', '/usr/local/bin']);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'influxd-test-'));
  registerTempDir(dir);
  let lastError: unknown;
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    const [httpPort, rpcPort] = await freePorts(2);
    if (httpPort === undefined || rpcPort === undefined) throw new Error('freePorts returned too few ports');
    const influxd = new Influxd(binary, dir, httpPort, rpcPort, options);
    try {
      await influxd.writeConfig();
      await influxd.startProcess();
      return influxd;
    } catch (err) {
      lastError = err;
      if (!isAddressInUse(influxd.logs(200))) break;
    }
  }
  await rm(dir, { recursive: true, force: true });
  unregisterTempDir(dir);
  throw lastError;
}

export type InfluxEpoch = 'ns' | 'u' | 'ms' | 's' | 'm' | 'h';

export interface QueryOptions {
  /**
   * Timestamp format. Default: RFC3339 strings, which are exact to the nanosecond. Note that `epoch: 'ns'`
   * yields numbers above 2^53, which JSON.parse cannot represent exactly.
   */
  epoch?: InfluxEpoch;
}

function isReadOnly(q: string): boolean {
  return /^\s*(SELECT|SHOW)\b/i.test(q) && !/\bINTO\b/i.test(q);
}

/**
 * Runs InfluxQL via /query and returns the parsed JSON. SELECT/SHOW use GET; everything else uses POST
 * (influxd 1.6 only warns about e.g. `CREATE DATABASE` over GET, but it is deprecated).
 * Throws on a non-2xx status and on any statement-level `error` in the response.
 */
export async function query(
  handle: InfluxdHandle,
  q: string,
  db?: string,
  options: QueryOptions = {},
): Promise<unknown> {
  const params = new URLSearchParams({ q });
  if (db !== undefined) params.set('db', db);
  if (options.epoch !== undefined) params.set('epoch', options.epoch);
  const { status, text } = isReadOnly(q)
    ? await influxRequest(handle, 'GET', `/query?${params.toString()}`)
    : await influxRequest(handle, 'POST', '/query', {
        contentType: 'application/x-www-form-urlencoded',
        text: params.toString(),
      });
  if (status < 200 || status > 299) throw new Error(`influxd query failed: HTTP ${status}: ${text.trim()} (q=${q})`);
  const json: unknown = JSON.parse(text);
  const errors = statementErrors(json);
  if (errors.length > 0) throw new Error(`influxd query error: ${errors.join('; ')} (q=${q})`);
  return json;
}

function statementErrors(json: unknown): string[] {
  if (typeof json !== 'object' || json === null) return [];
  const out: string[] = [];
  const top = (json as { error?: unknown }).error;
  if (typeof top === 'string') out.push(top);
  const results = (json as { results?: unknown }).results;
  if (Array.isArray(results)) {
    for (const r of results as unknown[]) {
      const e = typeof r === 'object' && r !== null ? (r as { error?: unknown }).error : undefined;
      if (typeof e === 'string') out.push(e);
    }
  }
  return out;
}

/** POSTs line protocol to /write?db=<db>&precision=ns. Throws with status and body unless 204. */
export async function writeLines(handle: InfluxdHandle, db: string, lines: string): Promise<void> {
  const params = new URLSearchParams({ db, precision: 'ns' });
  const { status, text } = await influxRequest(handle, 'POST', `/write?${params.toString()}`, {
    contentType: 'text/plain; charset=utf-8',
    text: lines,
  });
  if (status !== 204) throw new Error(`influxd write failed: HTTP ${status}: ${text.trim()}`);
}

/**
 * Creates an admin user (the one request an `auth` server takes without a user while it has none)
 * and makes the helpers of this module authenticate as it.
 */
export async function createAdmin(handle: InfluxdHandle, username: string, password: string): Promise<void> {
  const quoted = password.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
  await query(handle, `CREATE USER "${username}" WITH PASSWORD '${quoted}' WITH ALL PRIVILEGES`);
  handle.credentials = { username, password };
}

interface Series {
  name?: string;
  tags?: Record<string, string>;
  columns: string[];
  values: unknown[][];
}

async function allSeries(handle: InfluxdHandle, q: string, db: string, options: QueryOptions = {}): Promise<Series[]> {
  const json = (await query(handle, q, db, options)) as { results?: { series?: Series[] }[] };
  return json.results?.[0]?.series ?? [];
}

/** Runs a SELECT and returns its rows as objects (column → value, nulls dropped), all series together. */
export async function queryRows(
  handle: InfluxdHandle,
  q: string,
  db: string,
  options: QueryOptions = {},
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const series of await allSeries(handle, q, db, options)) {
    for (const values of series.values) {
      const row = Object.fromEntries(
        series.columns.map((c, i): [string, unknown] => [c, values[i]]).filter(([, v]) => v !== null),
      );
      out.push({ ...(series.tags ?? {}), ...row });
    }
  }
  return out;
}

/** `SHOW FIELD KEYS` of a measurement as name → type (`integer`, `float`, `string`, `boolean`). */
export async function fieldTypes(
  handle: InfluxdHandle,
  measurement: string,
  db: string,
): Promise<Record<string, unknown>> {
  const [first] = await allSeries(handle, `SHOW FIELD KEYS FROM "${measurement}"`, db);
  return Object.fromEntries((first?.values ?? []).map((v): [string, unknown] => [String(v[0]), v[1]]));
}

/** `SHOW TAG KEYS` of a measurement. */
export async function tagKeys(handle: InfluxdHandle, measurement: string, db: string): Promise<string[]> {
  const [first] = await allSeries(handle, `SHOW TAG KEYS FROM "${measurement}"`, db);
  return (first?.values ?? []).map((v) => String(v[0]));
}

/** Blocks (at most 2 s) until every thread of `pid` is stopped by SIGSTOP: state `T` in its stat line. */
function untilStopped(pid: number): void {
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const stopped = (): boolean => {
    try {
      return readdirSync(`/proc/${pid}/task`).every((task) => {
        const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
        // The state follows the command name in parentheses, which may itself hold spaces.
        return /^[Tt]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
      });
    } catch {
      return true; // gone, or no /proc: nothing to wait for
    }
  };
  for (let waited = 0; waited < 2_000 && !stopped(); waited += 5) Atomics.wait(sleeper, 0, 0, 5);
}
