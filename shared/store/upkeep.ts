/**
 * The store's upkeep, run by the store component once at start and then hourly (and by tests with
 * their own `nowMs`), in one transaction per step:
 * 1. rollups: health and session samples older than `rawHealthHours` become 5-minute minimum, mean
 *    and maximum rows (`health_5m`, `sessions_5m`; a bucket that already has a row is merged into
 *    it), then the raw rows go;
 * 2. retention: everything older than `retentionDays` goes, from every table (presence by its end);
 * 3. the size cap: while the database and its WAL are larger than `maxSizeMB`, the oldest hours of
 *    data across the tables go, and the freed pages are given back to the file system
 *    (`incremental_vacuum`, then `wal_checkpoint(TRUNCATE)`).
 */
import { statSync } from 'node:fs';
import type { DatabaseSync } from 'node:sqlite';
import { HOUR_MS, ROLLUP_BUCKET_MS } from './ddl.js';

/** `Svc.store`'s upkeep settings. */
export interface UpkeepSettings {
  retentionDays: number;
  rawHealthHours: number;
  maxSizeMB: number;
}

/** What one upkeep run removed, for its INFO line. */
export interface UpkeepReport {
  /** Raw health and session samples rolled into 5-minute rows (and deleted). */
  rolledUp: number;
  /** Rows deleted for being older than retentionDays. */
  expired: number;
  /** Rows deleted to bring the database under maxSizeMB, and the oldest time kept after it (ms), or null. */
  capped: number;
  keptFromMs: number | null;
  /** Bytes of the database and its WAL after the run. */
  bytes: number;
}

const DAY_MS = 86_400_000;
const MB = 1024 * 1024;
const NS_PER_MS = 1_000_000n;

/** Each table's time column in milliseconds, as an SQL expression, for retention and the size cap. */
const TIMED_TABLES: readonly { table: string; ms: string }[] = [
  { table: 'health', ms: 'time_ns / 1000000' },
  { table: 'health_5m', ms: 'bucket_ms' },
  { table: 'session_samples', ms: 'time_ns / 1000000' },
  { table: 'sessions_5m', ms: 'bucket_ms' },
  { table: 'session_presence', ms: 'end_ms' },
  { table: 'user_events', ms: 'time_ns / 1000000' },
  { table: 'log_events', ms: 'time_ns / 1000000' },
  { table: 'log_counts_hourly', ms: 'hour_ms' },
  { table: 'perf_events', ms: 'time_ns / 1000000' },
  { table: 'perf_hourly', ms: 'hour_ms' },
  { table: 'audit_events', ms: 'time_ms' },
  { table: 'svc_counters', ms: 'time_ms' },
];

/** Rows of every timed table strictly before `cutoffMs`, deleted. Tables keyed by time_ns use their rowid range. */
function deleteBefore(db: DatabaseSync, cutoffMs: number): number {
  let deleted = 0;
  const cutoffNs = BigInt(Math.floor(cutoffMs)) * NS_PER_MS;
  for (const { table, ms } of TIMED_TABLES) {
    const result = ms.startsWith('time_ns')
      ? db.prepare(`DELETE FROM ${table} WHERE time_ns < ?`).run(cutoffNs)
      : db.prepare(`DELETE FROM ${table} WHERE ${ms} < ?`).run(Math.floor(cutoffMs));
    deleted += Number(result.changes);
  }
  return deleted;
}

function inTransaction<T>(db: DatabaseSync, body: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  const result = body();
  db.exec('COMMIT');
  return result;
}

const HEALTH_ROLLUP = `
WITH raw AS (
  SELECT *, (time_ns / 1000000 / ${ROLLUP_BUCKET_MS}) * ${ROLLUP_BUCKET_MS} AS bucket FROM health WHERE time_ns < :cutoff
), grouped AS (
  SELECT server_id, bucket, count(*) AS samples, max(time_ns) AS last_ns,
    min(cpu_total) AS a1, avg(cpu_total) AS a2, max(cpu_total) AS a3,
    min(mem_committed) AS b1, avg(mem_committed) AS b2, max(mem_committed) AS b3,
    min(mem_allocated) AS c1, avg(mem_allocated) AS c2, max(mem_allocated) AS c3,
    min(mem_free) AS d1, avg(mem_free) AS d2, max(mem_free) AS d3,
    min(session_active) AS e1, avg(session_active) AS e2, max(session_active) AS e3,
    min(users_active) AS f1, avg(users_active) AS f2, max(users_active) AS f3,
    min(apps_active) AS g1, avg(apps_active) AS g2, max(apps_active) AS g3,
    min(apps_loaded) AS h1, avg(apps_loaded) AS h2, max(apps_loaded) AS h3
  FROM raw GROUP BY server_id, bucket
)
INSERT INTO health_5m
SELECT g.server_id, g.bucket, g.samples, a1, a2, a3, b1, b2, b3, c1, c2, c3, d1, d2, d3, e1, e2, e3, f1, f2, f3,
  g1, g2, g3, h1, h2, h3, h.cache_hits, h.cache_lookups
FROM grouped g JOIN health h ON h.time_ns = g.last_ns
WHERE true
ON CONFLICT (server_id, bucket_ms) DO UPDATE SET
  cpu_min = min(cpu_min, excluded.cpu_min), cpu_max = max(cpu_max, excluded.cpu_max),
  cpu_mean = (cpu_mean * samples + excluded.cpu_mean * excluded.samples) / (samples + excluded.samples),
  mem_committed_min = min(mem_committed_min, excluded.mem_committed_min), mem_committed_max = max(mem_committed_max, excluded.mem_committed_max),
  mem_committed_mean = (mem_committed_mean * samples + excluded.mem_committed_mean * excluded.samples) / (samples + excluded.samples),
  mem_allocated_min = min(mem_allocated_min, excluded.mem_allocated_min), mem_allocated_max = max(mem_allocated_max, excluded.mem_allocated_max),
  mem_allocated_mean = (mem_allocated_mean * samples + excluded.mem_allocated_mean * excluded.samples) / (samples + excluded.samples),
  mem_free_min = min(mem_free_min, excluded.mem_free_min), mem_free_max = max(mem_free_max, excluded.mem_free_max),
  mem_free_mean = (mem_free_mean * samples + excluded.mem_free_mean * excluded.samples) / (samples + excluded.samples),
  session_active_min = min(session_active_min, excluded.session_active_min), session_active_max = max(session_active_max, excluded.session_active_max),
  session_active_mean = (session_active_mean * samples + excluded.session_active_mean * excluded.samples) / (samples + excluded.samples),
  users_active_min = min(users_active_min, excluded.users_active_min), users_active_max = max(users_active_max, excluded.users_active_max),
  users_active_mean = (users_active_mean * samples + excluded.users_active_mean * excluded.samples) / (samples + excluded.samples),
  apps_active_min = min(apps_active_min, excluded.apps_active_min), apps_active_max = max(apps_active_max, excluded.apps_active_max),
  apps_active_mean = (apps_active_mean * samples + excluded.apps_active_mean * excluded.samples) / (samples + excluded.samples),
  apps_loaded_min = min(apps_loaded_min, excluded.apps_loaded_min), apps_loaded_max = max(apps_loaded_max, excluded.apps_loaded_max),
  apps_loaded_mean = (apps_loaded_mean * samples + excluded.apps_loaded_mean * excluded.samples) / (samples + excluded.samples),
  cache_hits_last = excluded.cache_hits_last, cache_lookups_last = excluded.cache_lookups_last,
  samples = samples + excluded.samples`;

const SESSIONS_ROLLUP = `
INSERT INTO sessions_5m
SELECT server_id, virtual_proxy, (time_ns / 1000000 / ${ROLLUP_BUCKET_MS}) * ${ROLLUP_BUCKET_MS} AS bucket, count(*),
  min(sessions), avg(sessions), max(sessions), max(users)
FROM session_samples WHERE time_ns < :cutoff GROUP BY server_id, virtual_proxy, bucket
ON CONFLICT (server_id, virtual_proxy, bucket_ms) DO UPDATE SET
  sessions_min = min(sessions_min, excluded.sessions_min), sessions_max = max(sessions_max, excluded.sessions_max),
  sessions_mean = (sessions_mean * samples + excluded.sessions_mean * excluded.samples) / (samples + excluded.samples),
  users_max = max(users_max, excluded.users_max),
  samples = samples + excluded.samples`;

/** Raw samples before the bucket that holds `nowMs − rawHealthHours`, rolled up and deleted; how many. */
function rollUp(db: DatabaseSync, nowMs: number, rawHealthHours: number): number {
  const cutoffMs = Math.floor((nowMs - rawHealthHours * HOUR_MS) / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS;
  const cutoff = BigInt(cutoffMs) * NS_PER_MS;
  return inTransaction(db, () => {
    db.prepare(HEALTH_ROLLUP).run({ cutoff });
    db.prepare(SESSIONS_ROLLUP).run({ cutoff });
    const health = db.prepare('DELETE FROM health WHERE time_ns < ?').run(cutoff);
    const sessions = db.prepare('DELETE FROM session_samples WHERE time_ns < ?').run(cutoff);
    return Number(health.changes) + Number(sessions.changes);
  });
}

/** Bytes of the database file and its WAL. */
export function storeBytes(file: string): number {
  const size = (path: string) => {
    try {
      return statSync(path).size;
    } catch {
      return 0;
    }
  };
  return size(file) + size(`${file}-wal`);
}

/** Bytes the database's pages in use take (its file less the free pages). */
function usedBytes(db: DatabaseSync): number {
  const pragma = (name: string) => Number(Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0] ?? 0);
  return (pragma('page_count') - pragma('freelist_count')) * pragma('page_size');
}

/** The oldest (`min`) or newest (`max`) time (ms) of any row in the timed tables, or null when they are empty. */
function edgeMs(db: DatabaseSync, aggregate: 'min' | 'max'): number | null {
  let found: number | null = null;
  for (const { table, ms } of TIMED_TABLES) {
    const value = db.prepare(`SELECT ${aggregate}(${ms}) AS edge FROM ${table}`).get()?.edge;
    if (typeof value !== 'number' && typeof value !== 'bigint') continue;
    const n = Number(value);
    if (found === null || (aggregate === 'min' ? n < found : n > found)) found = n;
  }
  return found;
}
const oldestMs = (db: DatabaseSync) => edgeMs(db, 'min');
const newestMs = (db: DatabaseSync) => edgeMs(db, 'max');

/** Gives freed pages back to the file system and empties the WAL. */
function shrink(db: DatabaseSync): void {
  db.exec('PRAGMA incremental_vacuum');
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
}

/**
 * Deletes the oldest data until the pages in use fit in `maxBytes`: each round deletes the oldest
 * hours in proportion to the excess (at least one hour), then merges the free-text index (FTS5 keeps
 * deleted entries until its segments merge, so the pages it frees show only then) and measures again.
 */
function capSize(db: DatabaseSync, file: string, maxBytes: number): { deleted: number; keptFromMs: number | null } {
  let deleted = 0;
  let keptFromMs: number | null = null;
  if (storeBytes(file) <= maxBytes) return { deleted, keptFromMs };
  for (let used = usedBytes(db); used > maxBytes; used = usedBytes(db)) {
    const oldest = oldestMs(db);
    const newest = newestMs(db);
    if (oldest === null || newest === null) break;
    const spanHours = Math.max(1, Math.ceil((newest - oldest) / HOUR_MS));
    const hours = Math.max(1, Math.ceil((spanHours * (used - maxBytes)) / used));
    keptFromMs = (Math.floor(oldest / HOUR_MS) + hours) * HOUR_MS;
    const cutoff = keptFromMs;
    deleted += inTransaction(db, () => deleteBefore(db, cutoff));
    db.exec("INSERT INTO log_events_fts (log_events_fts) VALUES ('optimize')");
  }
  shrink(db);
  return { deleted, keptFromMs };
}

/** One upkeep run over `db` (the file `file`) as at `nowMs`. */
export function runUpkeep(db: DatabaseSync, file: string, settings: UpkeepSettings, nowMs: number): UpkeepReport {
  const rolledUp = rollUp(db, nowMs, settings.rawHealthHours);
  const expired = inTransaction(db, () => deleteBefore(db, nowMs - settings.retentionDays * DAY_MS));
  if (rolledUp > 0 || expired > 0) db.exec('PRAGMA incremental_vacuum');
  const { deleted: capped, keptFromMs } =
    settings.maxSizeMB > 0 ? capSize(db, file, settings.maxSizeMB * MB) : { deleted: 0, keptFromMs: null };
  return { rolledUp, expired, capped, keptFromMs, bytes: storeBytes(file) };
}
