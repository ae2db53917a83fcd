/**
 * A history generator for the embedded store: fills a store file (the tables of shared/store/ddl.ts)
 * with `days` of a platform of `servers` servers ending at `now`, writing rows straight into the
 * tables with prepared INSERTs in transactions, so the read API, its pages and the benches have a
 * realistic store without running the platform for a month. Deterministic for a seed and a `now`.
 *
 * Default rates (per server unless said):
 * - health: one sample every 10 s for the last `rawHealthHours` (48), 5-minute rollups (`health_5m`)
 *   before; CPU and memory follow a working-day curve with noise;
 * - sessions: one sample every 30 s per virtual proxy (`/`, `/hdr`) for the raw hours, `sessions_5m`
 *   before; 40 users per server, each on about 60 % of the days for 20 min – 4 h runs
 *   (`session_presence`), with a `Start session` and a `Stop session` user event per run;
 * - log events: 60 an hour (engine 35 %, proxy 30 %, repository 25 %, scheduler 10 %; INFO 70 %,
 *   WARN 22 %, ERROR 8 %, errors with an exception), messages from a fixed vocabulary, one category
 *   on a third of them, and the `log_counts_hourly` rows that count them exactly;
 * - engine performance: 30 events an hour over 8 apps × 6 objects × 6 methods with skewed
 *   (Zipf-like) app weights and log-normal durations, and the matching `perf_hourly` rows;
 * - audit events: 20 an hour over the whole platform, of five types, 8 apps, their sheets and users.
 *
 * Log counts: per hour, server, source and level, a row with category '' counts every event, and one
 * row per category `name=value` counts the events of that category (/work/tools/i30/ddl-changes.md).
 *
 * Run `node dist/edge-agent/simulate/history.js --path data/store/svc.db --days 30 --servers 10`, or
 * call `generateHistory` (tests, benches).
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  HOUR_MS,
  PERF_HISTOGRAM_BOUNDS_MS,
  ROLLUP_BUCKET_MS,
  STORE_DDL,
  STORE_SCHEMA_VERSION,
  type StoreLogSource,
} from '../../shared/store/ddl.js';
import { deriveSeed, SeededRandom } from './random.js';

export interface HistoryOptions {
  /** The store file; created with its tables when missing (rows are added to an existing one). */
  path: string;
  /** The end of the history (ms); every time is relative to it. */
  now: number;
  days: number;
  servers: number;
  seed?: number;
  /** Hours of raw health and session samples before `now` (older ones are rollups); default 48. */
  rawHealthHours?: number;
  healthIntervalMs?: number;
  sessionIntervalMs?: number;
  usersPerServer?: number;
  logEventsPerHour?: number;
  perfEventsPerHour?: number;
  /** For the whole platform. */
  auditEventsPerHour?: number;
}

/** Rows written per table. */
export type HistoryCounts = Record<string, number>;

/** The virtual proxies whose sessions are sampled. */
export const HISTORY_VIRTUAL_PROXIES = ['/', '/hdr'] as const;

/** The configured name of generated server number `index` (0-based). */
export function historyServerName(index: number): string {
  return `node${index + 1}`;
}

const LEVEL_WEIGHTS: readonly [string, number][] = [
  ['INFO', 0.7],
  ['WARN', 0.22],
  ['ERROR', 0.08],
];
const SOURCE_WEIGHTS: readonly [StoreLogSource, number][] = [
  ['engine', 0.35],
  ['proxy', 0.3],
  ['repository', 0.25],
  ['scheduler', 0.1],
];

/** Log messages by level: words the free-text search can find (e.g. "reload", "certificate", "timeout"). */
const MESSAGES: Readonly<Record<string, readonly string[]>> = {
  INFO: [
    'Reload of app finished successfully',
    'Session established for user',
    'Document opened from disk',
    'Task scheduled for next execution',
    'License allocation refreshed',
    'Connection to repository database established',
  ],
  WARN: [
    'Certificate will expire soon',
    'Reload took longer than expected',
    'Memory usage above warning threshold',
    'Slow response from repository service',
    'Retrying request after timeout',
  ],
  ERROR: [
    'Reload failed: data connection timeout',
    'Engine out of memory while calculating object',
    'Authentication failed for virtual proxy',
    'Task execution failed after retries',
    'Unable to reach the sync service',
  ],
};
const EXCEPTIONS = [
  'System.TimeoutException: The operation has timed out',
  'System.OutOfMemoryException: Insufficient memory to continue',
  'System.Net.WebException: The remote server returned an error: (503) Server Unavailable',
  'Qlik.Sense.Common.Exceptions.ReloadFailedException: Reload failed',
];
const SUBSYSTEMS: Readonly<Record<StoreLogSource, readonly string[]>> = {
  engine: ['System.Engine.Engine', 'Engine.Reload', 'Engine.Session'],
  proxy: ['Proxy.Proxy.Core.RestServer', 'Proxy.Authentication'],
  repository: ['Repository.Core.Service', 'Repository.Core.Licensing'],
  scheduler: ['Scheduler.Service', 'Scheduler.Tasks'],
};
const CATEGORIES = [
  { name: 'qs_log_category', value: 'reload' },
  { name: 'qs_log_category', value: 'license' },
  { name: 'qs_log_category', value: 'security' },
  { name: 'qs_log_category', value: 'capacity' },
] as const;

const APPS = [
  'Sales Dashboard',
  'Finance Monthly',
  'Supply Chain',
  'HR Headcount',
  'Marketing Funnel',
  'Operations KPIs',
  'Customer 360',
  'Inventory',
] as const;
const OBJECT_TYPES = ['table', 'barchart', 'linechart', 'kpi', 'pivot-table', 'map'] as const;
const METHODS = [
  'GetLayout',
  'GetHyperCubeData',
  'SelectValues',
  'GetListObjectData',
  'GetHyperCubePivotData',
  'Evaluate',
] as const;
const AUDIT_TYPES = [
  'navigation.sheet.loaded',
  'object.view.duration',
  'selection.state.changed',
  'object.visibility.changed',
  'event.bookmark',
] as const;

const appId = (index: number) =>
  `a${index.toString(16).padStart(7, '0')}-0000-4000-8000-${String(index).padStart(12, '0')}`;
const userName = (index: number) => `user${String(index + 1).padStart(3, '0')}`;
const USER_DIRECTORY = 'CORP';
const placeholders = (count: number) => Array<string>(count).fill('?').join(', ');

function weighted<T>(random: SeededRandom, table: readonly (readonly [T, number])[]): T {
  let draw = random.fraction();
  for (const [value, weight] of table) {
    draw -= weight;
    if (draw < 0) return value;
  }
  return (table[table.length - 1] as readonly [T, number])[0];
}

/** A log-normal draw with the given median (ms). */
function logNormal(random: SeededRandom, median: number, sigma: number): number {
  const u1 = Math.max(random.fraction(), 1e-12);
  const u2 = random.fraction();
  const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  return median * Math.exp(sigma * normal);
}

/** The histogram bucket of a duration over PERF_HISTOGRAM_BOUNDS_MS (the last bucket is everything above). */
export function histogramBucket(ms: number): number {
  const index = PERF_HISTOGRAM_BOUNDS_MS.findIndex((bound) => ms <= bound);
  return index === -1 ? PERF_HISTOGRAM_BOUNDS_MS.length : index;
}

/** 0…1 over the day: low at night, high in working hours. */
function dayLoad(ms: number): number {
  const hour = (ms / HOUR_MS) % 24;
  return Math.max(0, Math.sin(((hour - 6) / 24) * 2 * Math.PI)) ** 1.5;
}

interface PresenceRun {
  user: string;
  start: number;
  end: number;
}

/** Writes rows in transactions of a bounded size. */
class Batcher {
  private pending = 0;
  private counter = 0;
  readonly counts: HistoryCounts = {};

  constructor(private readonly db: DatabaseSync) {
    db.exec('BEGIN');
  }

  /** Runs an INSERT; true when it added a row (INSERT OR IGNORE keeps a point time once). */
  insert(table: string, statement: StatementSync, ...values: (string | number | bigint | null)[]): boolean {
    const added = Number(statement.run(...values).changes) === 1;
    if (added) this.counts[table] = (this.counts[table] ?? 0) + 1;
    if (++this.pending >= 20_000) {
      this.db.exec('COMMIT; BEGIN');
      this.pending = 0;
    }
    return added;
  }

  /** The §0.3 point time of an event at `ms`: unique over the run, as the edge's process-wide counter makes it. */
  pointTime(ms: number): bigint {
    return BigInt(Math.floor(ms)) * 1_000_000n + BigInt(this.counter++ % 1_000_000);
  }

  finish(): void {
    this.db.exec('COMMIT');
  }
}

/** Fills the store at `options.path` and returns the rows written per table. */
export function generateHistory(options: HistoryOptions): HistoryCounts {
  const seed = options.seed ?? 1;
  const now = Math.floor(options.now);
  const start = now - options.days * 24 * HOUR_MS;
  const rawFrom = Math.max(start, now - (options.rawHealthHours ?? 48) * HOUR_MS);
  const healthInterval = options.healthIntervalMs ?? 10_000;
  const sessionInterval = options.sessionIntervalMs ?? 30_000;
  const usersPerServer = options.usersPerServer ?? 40;
  const logRate = options.logEventsPerHour ?? 60;
  const perfRate = options.perfEventsPerHour ?? 30;
  const auditRate = options.auditEventsPerHour ?? 20;

  mkdirSync(dirname(resolve(options.path)), { recursive: true });
  const db = new DatabaseSync(options.path);
  try {
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;');
    db.exec(STORE_DDL);
    db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(
      'schema_version',
      String(STORE_SCHEMA_VERSION),
    );
    const batch = new Batcher(db);
    const sql = (text: string) => db.prepare(text);
    const insertServer = sql(
      `INSERT INTO servers (name, host, description, tags, first_seen_ms, last_seen_ms) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET last_seen_ms = excluded.last_seen_ms RETURNING id`,
    );
    const serverIds: number[] = [];
    for (let index = 0; index < options.servers; index++) {
      const name = historyServerName(index);
      const tags = JSON.stringify({ env: 'prod', site: index % 2 === 0 ? 'north' : 'south' });
      const row = insertServer.get(name, `${name}.example.com`, `Qlik Sense node ${index + 1}`, tags, start, now);
      serverIds.push(Number(row?.['id']));
    }
    for (const [index, serverId] of serverIds.entries()) {
      const random = new SeededRandom(deriveSeed(seed, index));
      writeHealth(db, batch, random, serverId, { start, rawFrom, now, interval: healthInterval, index });
      const runs = writeSessions(db, batch, random, serverId, {
        start,
        rawFrom,
        now,
        interval: sessionInterval,
        users: usersPerServer,
      });
      writeUserEvents(db, batch, random, serverId, runs);
      writeLogEvents(db, batch, random, serverId, { start, now, rate: logRate });
      writePerfEvents(db, batch, random, serverId, { start, now, rate: perfRate, users: usersPerServer });
    }
    writeAuditEvents(db, batch, new SeededRandom(deriveSeed(seed, 10_000)), {
      start,
      now,
      rate: auditRate,
      users: usersPerServer,
    });
    batch.finish();
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    return batch.counts;
  } finally {
    db.close();
  }
}

interface Span {
  start: number;
  rawFrom: number;
  now: number;
  interval: number;
}

function writeHealth(
  db: DatabaseSync,
  batch: Batcher,
  random: SeededRandom,
  serverId: number,
  { start, rawFrom, now, interval, index }: Span & { index: number },
): void {
  const raw = db.prepare(
    `INSERT OR IGNORE INTO health (time_ns, server_id, version, started, uptime, mem_committed, mem_allocated, mem_free,
       apps_active, apps_loaded, apps_in_memory, apps_calls, apps_selections, cpu_total, session_active, session_total,
       users_active, users_total, cache_hits, cache_lookups, cache_added, cache_replaced, cache_bytes_added, saturated, docs)
     VALUES (${placeholders(25)})`,
  );
  const rollup = db.prepare(`INSERT OR IGNORE INTO health_5m VALUES (${placeholders(29)})`);
  const capacity = 16_000 + 8_000 * (index % 3);
  const sample = (ms: number) => {
    const load = dayLoad(ms + index * 600_000);
    const cpu = Math.min(100, 5 + 60 * load + random.fraction() * 10);
    const committed = capacity * (0.3 + 0.4 * load) + random.fraction() * 500;
    const sessions = Math.round(30 * load + random.fraction() * 3);
    return { cpu, committed, sessions, users: Math.round(sessions * 0.8), apps: Math.round(2 + 6 * load) };
  };
  const firstBucket = Math.ceil(start / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS;
  let cacheHits = 0;
  let cacheLookups = 0;
  for (let bucket = firstBucket; bucket + ROLLUP_BUCKET_MS <= rawFrom; bucket += ROLLUP_BUCKET_MS) {
    const s = sample(bucket);
    const spread = 1 + random.fraction() * 0.1;
    cacheLookups += 300;
    cacheHits += 200 + random.int(80);
    const triple = (mean: number) => [mean / spread, mean, mean * spread];
    batch.insert(
      'health_5m',
      rollup,
      serverId,
      bucket,
      ROLLUP_BUCKET_MS / interval,
      ...triple(s.cpu),
      ...triple(s.committed),
      ...triple(s.committed * 0.9),
      ...triple(capacity - s.committed),
      ...triple(s.sessions),
      ...triple(s.users),
      ...triple(s.apps),
      ...triple(s.apps + 2),
      cacheHits,
      cacheLookups,
    );
  }
  const started = new Date(start).toISOString();
  for (let ms = Math.ceil(rawFrom / interval) * interval + index * 7; ms < now; ms += interval) {
    const s = sample(ms);
    cacheLookups += 10;
    cacheHits += 6 + random.int(4);
    const uptimeHours = Math.floor((ms - start) / HOUR_MS);
    batch.insert(
      'health',
      raw,
      batch.pointTime(ms),
      serverId,
      '14.187.4',
      started,
      `${Math.floor(uptimeHours / 24)} days ${uptimeHours % 24} hours`,
      s.committed,
      s.committed * 0.9,
      capacity - s.committed,
      s.apps,
      s.apps + 2,
      s.apps + 3,
      random.int(50),
      random.int(20),
      s.cpu,
      s.sessions,
      s.sessions + random.int(5),
      s.users,
      s.users + random.int(3),
      cacheHits,
      cacheLookups,
      random.int(5),
      random.int(2),
      random.int(100_000),
      s.cpu > 95 ? 1 : 0,
      null,
    );
  }
}

function writeSessions(
  db: DatabaseSync,
  batch: Batcher,
  random: SeededRandom,
  serverId: number,
  { start, rawFrom, now, interval, users }: Span & { users: number },
): PresenceRun[] {
  const samples = db.prepare('INSERT OR IGNORE INTO session_samples VALUES (?, ?, ?, ?, ?, ?)');
  const rollup = db.prepare('INSERT OR IGNORE INTO sessions_5m VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const presence = db.prepare(
    'INSERT INTO session_presence (server_id, virtual_proxy, user_full, start_ms, end_ms) VALUES (?, ?, ?, ?, ?)',
  );
  const allRuns: PresenceRun[] = [];
  for (const virtualProxy of HISTORY_VIRTUAL_PROXIES) {
    const share = virtualProxy === '/' ? 0.6 : 0.25;
    const runs: PresenceRun[] = [];
    for (let day = Math.floor(start / (24 * HOUR_MS)) * 24 * HOUR_MS; day < now; day += 24 * HOUR_MS) {
      for (let user = 0; user < users; user++) {
        if (!random.chance(share)) continue;
        const runStart = day + Math.round((7 + random.fraction() * 10) * HOUR_MS);
        const runEnd = runStart + random.between(20, 240) * 60_000;
        if (runEnd <= start || runStart >= now) continue;
        const run = {
          user: `${USER_DIRECTORY}\\${userName(user)}`,
          start: Math.max(runStart, start),
          end: Math.min(runEnd, now),
        };
        runs.push(run);
      }
    }
    runs.sort((a, b) => a.start - b.start);
    for (const run of runs)
      batch.insert('session_presence', presence, serverId, virtualProxy, run.user, run.start, run.end);
    allRuns.push(...runs);
    const activeAt = (from: number, to: number) => runs.filter((run) => run.start < to && run.end > from);
    // Rollups: per 5-minute bucket, the users on during it (runs sorted by start: a window of candidates).
    let first = 0;
    const firstBucket = Math.ceil(start / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS;
    for (let bucket = firstBucket; bucket + ROLLUP_BUCKET_MS <= rawFrom; bucket += ROLLUP_BUCKET_MS) {
      while (first < runs.length && (runs[first] as PresenceRun).start < bucket - 5 * HOUR_MS) first++;
      let on = 0;
      for (let i = first; i < runs.length; i++) {
        const run = runs[i] as PresenceRun;
        if (run.start >= bucket + ROLLUP_BUCKET_MS) break;
        if (run.end > bucket) on++;
      }
      const mean = on * 1.1;
      batch.insert(
        'sessions_5m',
        rollup,
        serverId,
        virtualProxy,
        bucket,
        ROLLUP_BUCKET_MS / interval,
        on,
        mean,
        Math.ceil(mean),
        on,
      );
    }
    for (let ms = Math.ceil(rawFrom / interval) * interval; ms < now; ms += interval) {
      const on = activeAt(ms, ms + 1);
      const list = on.map((run) => run.user).join(',');
      batch.insert(
        'session_samples',
        samples,
        batch.pointTime(ms),
        serverId,
        virtualProxy,
        on.length + random.int(2),
        on.length,
        list,
      );
    }
  }
  return allRuns;
}

function writeUserEvents(
  db: DatabaseSync,
  batch: Batcher,
  random: SeededRandom,
  serverId: number,
  runs: readonly PresenceRun[],
): void {
  const insert = db.prepare(`INSERT OR IGNORE INTO user_events VALUES (${placeholders(14)})`);
  for (const run of runs) {
    const [directory, id] = run.user.split('\\') as [string, string];
    const browser = random.pick(['Chrome 131', 'Edge 131', 'Firefox 133', 'Safari 18']);
    const os = random.pick(['Windows 10', 'Windows 11', 'Mac OS 14.6']);
    const app = random.int(APPS.length);
    for (const [ms, command] of [
      [run.start, 'Start session'],
      [run.end, 'Stop session'],
    ] as const) {
      batch.insert(
        'user_events',
        insert,
        batch.pointTime(ms),
        serverId,
        'qseow-proxy-session',
        command,
        run.user,
        directory,
        id,
        'AppAccess',
        '/qps/',
        `${command === 'Start session' ? 'Session started' : 'Session ended'} for user ${run.user}`,
        appId(app),
        APPS[app] ?? '',
        browser,
        os,
      );
    }
  }
}

function writeLogEvents(
  db: DatabaseSync,
  batch: Batcher,
  random: SeededRandom,
  serverId: number,
  { start, now, rate }: { start: number; now: number; rate: number },
): void {
  const insert = db.prepare(`INSERT OR IGNORE INTO log_events VALUES (${placeholders(13)})`);
  const counts = db.prepare('INSERT INTO log_counts_hourly VALUES (?, ?, ?, ?, ?, ?)');
  for (let hour = Math.floor(start / HOUR_MS) * HOUR_MS; hour < now; hour += HOUR_MS) {
    const tally = new Map<string, number>();
    const events = Math.round(rate * (0.5 + random.fraction()));
    for (let n = 0; n < events; n++) {
      const ms = hour + random.int(HOUR_MS);
      if (ms < start || ms >= now) continue;
      const source = weighted(random, SOURCE_WEIGHTS);
      const level = weighted(random, LEVEL_WEIGHTS);
      const message = random.pick(MESSAGES[level] ?? []);
      const exception = level === 'ERROR' ? random.pick(EXCEPTIONS) : '';
      const category = random.chance(1 / 3) ? [random.pick(CATEGORIES)] : [];
      const app = random.chance(0.5) ? appId(random.int(APPS.length)) : '';
      const user = random.chance(0.5) ? `${USER_DIRECTORY}\\${userName(random.int(40))}` : '';
      const task = source === 'scheduler' ? `Reload ${random.pick(APPS)}` : '';
      const time = batch.pointTime(ms);
      const rest = {
        process_id: String(1000 + random.int(9000)),
        thread_id: String(random.int(64)),
        log_row: String(n),
      };
      const added = batch.insert(
        'log_events',
        insert,
        time,
        serverId,
        source,
        level,
        random.pick(SUBSYSTEMS[source]),
        message,
        exception,
        JSON.stringify(category),
        app,
        user,
        task,
        source === 'scheduler' ? 'CORP\\svc-qlik' : '',
        JSON.stringify(rest),
      );
      // The free-text index follows by the store's own trigger (ddl.ts), as for the writer's rows.
      if (!added) continue;
      for (const key of ['', ...category.map((item) => `${item.name}=${item.value}`)]) {
        const tallyKey = [source, level, key].join('\u0000');
        tally.set(tallyKey, (tally.get(tallyKey) ?? 0) + 1);
      }
    }
    for (const [key, count] of tally) {
      const [source, level, category] = key.split('\u0000') as [string, string, string];
      batch.insert('log_counts_hourly', counts, hour, serverId, source, level, category, count);
    }
  }
}

function writePerfEvents(
  db: DatabaseSync,
  batch: Batcher,
  random: SeededRandom,
  serverId: number,
  { start, now, rate, users }: { start: number; now: number; rate: number; users: number },
): void {
  const insert = db.prepare(`INSERT OR IGNORE INTO perf_events VALUES (${placeholders(17)})`);
  const hourly = db.prepare(`INSERT INTO perf_hourly VALUES (${placeholders(12)})`);
  // Zipf-like: app i is chosen with weight 1/(i+1); the first apps are also slower.
  const appWeights = APPS.map((_, i) => 1 / (i + 1));
  const weightSum = appWeights.reduce((a, b) => a + b, 0);
  const appTable = APPS.map((_, i) => [i, (appWeights[i] ?? 0) / weightSum] as const);
  for (let hour = Math.floor(start / HOUR_MS) * HOUR_MS; hour < now; hour += HOUR_MS) {
    interface Cell {
      values: (string | number)[];
      count: number;
      total: number;
      max: number;
      hist: number[];
    }
    const cells = new Map<string, Cell>();
    const events = Math.round(rate * (0.3 + 1.4 * dayLoad(hour)));
    for (let n = 0; n < events; n++) {
      const ms = hour + random.int(HOUR_MS);
      if (ms < start || ms >= now) continue;
      const app = weighted(random, appTable);
      const object = random.int(OBJECT_TYPES.length);
      const method = random.pick(METHODS);
      const user = `${USER_DIRECTORY}\\${userName(random.int(Math.min(users, 12)))}`;
      const processTime = logNormal(random, 40 * (APPS.length - app), 1.2);
      const objectId = `obj-${app}-${object}`;
      const added = batch.insert(
        'perf_events',
        insert,
        batch.pointTime(ms),
        serverId,
        appId(app),
        APPS[app] ?? '',
        objectId,
        OBJECT_TYPES[object] ?? '',
        method,
        user,
        'user',
        random.hex(16),
        processTime,
        processTime * 0.8,
        processTime * 0.05,
        processTime * 0.02,
        processTime * 0.1,
        random.int(10_000_000),
        random.int(50_000_000),
      );
      if (!added) continue;
      const key = [appId(app), objectId, method, user].join('\u0000');
      let cell = cells.get(key);
      if (!cell) {
        cell = {
          values: [hour, serverId, appId(app), APPS[app] ?? '', objectId, OBJECT_TYPES[object] ?? '', method, user],
          count: 0,
          total: 0,
          max: 0,
          hist: Array<number>(PERF_HISTOGRAM_BOUNDS_MS.length + 1).fill(0),
        };
        cells.set(key, cell);
      }
      cell.count++;
      cell.total += processTime;
      cell.max = Math.max(cell.max, processTime);
      const bucket = histogramBucket(processTime);
      cell.hist[bucket] = (cell.hist[bucket] ?? 0) + 1;
    }
    for (const cell of cells.values()) {
      batch.insert('perf_hourly', hourly, ...cell.values, cell.count, cell.total, cell.max, JSON.stringify(cell.hist));
    }
  }
}

function writeAuditEvents(
  db: DatabaseSync,
  batch: Batcher,
  random: SeededRandom,
  { start, now, rate, users }: { start: number; now: number; rate: number; users: number },
): void {
  const insert = db.prepare(`INSERT OR IGNORE INTO audit_events VALUES (${placeholders(9)})`);
  for (let hour = Math.floor(start / HOUR_MS) * HOUR_MS; hour < now; hour += HOUR_MS) {
    const events = Math.round(rate * (0.2 + 1.6 * dayLoad(hour)));
    for (let n = 0; n < events; n++) {
      const ms = hour + random.int(HOUR_MS);
      if (ms < start || ms >= now) continue;
      const type = random.pick(AUDIT_TYPES);
      const app = random.int(APPS.length);
      const sheet = `sheet-${app}-${random.int(5)}`;
      const object = type === 'navigation.sheet.loaded' ? '' : `obj-${app}-${random.int(OBJECT_TYPES.length)}`;
      const user = `${USER_DIRECTORY}\\${userName(random.int(users))}`;
      const duration = type === 'object.view.duration' ? Math.round(logNormal(random, 4000, 0.8)) : null;
      const id = random.uuid();
      const envelope = {
        schemaVersion: 1,
        eventId: id,
        timestamp: new Date(ms).toISOString(),
        type,
        payload: {
          context: { appId: appId(app), sheetId: sheet, user },
          ...(object ? { object: { id: object } } : {}),
        },
      };
      batch.insert(
        'audit_events',
        insert,
        id,
        ms,
        type,
        appId(app),
        sheet,
        object,
        user,
        duration,
        JSON.stringify(envelope),
      );
    }
  }
}

/** `node history.js --path <file> [--days 30] [--servers 10] [--seed 1] [--now <RFC 3339>]`: prints the counts. */
function main(): void {
  const { values } = parseArgs({
    options: {
      path: { type: 'string', default: './data/store/svc.db' },
      days: { type: 'string', default: '30' },
      servers: { type: 'string', default: '10' },
      seed: { type: 'string', default: '1' },
      now: { type: 'string' },
    },
  });
  const now = values.now === undefined ? Date.now() : Date.parse(values.now);
  if (!Number.isFinite(now)) throw new Error(`--now: not a time: ${values.now}`);
  const began = performance.now();
  const counts = generateHistory({
    path: values.path,
    now,
    days: Number(values.days),
    servers: Number(values.servers),
    seed: Number(values.seed),
  });
  process.stdout.write(
    `${JSON.stringify({ path: values.path, counts, seconds: Math.round((performance.now() - began) / 100) / 10 })}\n`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
