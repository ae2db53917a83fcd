/**
 * The store's upkeep, run by the store component once at start and then hourly (and by tests with
 * their own `nowMs`), in one transaction per step:
 * 1. rollups: health and session samples older than `rawHealthHours` become 5-minute minimum, mean
 *    and maximum rows (`health_5m`, `sessions_5m`; a bucket that already has a row is merged into
 *    it), then the raw rows go;
 * 2. retention: everything older than `retentionDays` goes, from every table (presence by its end;
 *    the alerts' tables as pruneAlerts says);
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

/**
 * The alerts' rows older than `olderThan` (ms), deleted; how many. History by its time; silences that
 * ended (or were expired) before it; deliveries sent before it of alerts no longer pending or firing
 * (an active alert keeps what its channels were told, however old, so a restart does not send it
 * again); resolutions not yet told (alert_resolved) of alerts resolved before it. Not part of the size cap: these tables stay small next to the events'. The caller holds
 * the transaction (runUpkeep here, SqliteAlertStore.prune).
 */
export function pruneAlerts(db: DatabaseSync, olderThan: number): number {
  const cutoff = BigInt(Math.floor(olderThan));
  const history = db.prepare('DELETE FROM alert_history WHERE time_ms < ?').run(cutoff);
  const silences = db.prepare('DELETE FROM alert_silences WHERE coalesce(expired_at_ms, ends_at_ms) < ?').run(cutoff);
  const deliveries = db
    .prepare(
      'DELETE FROM alert_deliveries WHERE sent_at_ms < ? AND fingerprint NOT IN (SELECT fingerprint FROM alert_state)',
    )
    .run(cutoff);
  const resolved = db.prepare('DELETE FROM alert_resolved WHERE resolved_at_ms < ?').run(cutoff);
  return Number(history.changes) + Number(silences.changes) + Number(deliveries.changes) + Number(resolved.changes);
}

function inTransaction<T>(db: DatabaseSync, body: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  const result = body();
  db.exec('COMMIT');
  return result;
}

/** The measures of `health_5m`: its column prefix and the `health` column it summarises. */
const HEALTH_MEASURES: readonly [prefix: string, column: string][] = [
  ['cpu', 'cpu_total'],
  ['mem_committed', 'mem_committed'],
  ['mem_allocated', 'mem_allocated'],
  ['mem_free', 'mem_free'],
  ['session_active', 'session_active'],
  ['users_active', 'users_active'],
  ['apps_active', 'apps_active'],
  ['apps_loaded', 'apps_loaded'],
];

/** Minimum, mean and maximum of `column` as the `prefix`_min/_mean/_max of a 5-minute row. */
const summary = (prefix: string, column: string) =>
  `min(${column}) AS ${prefix}_min, avg(${column}) AS ${prefix}_mean, max(${column}) AS ${prefix}_max`;

/** A 5-minute row's `prefix` measures merged with a new summary of the same bucket (`excluded`), weighted by samples. */
const merged = (prefix: string) =>
  `${prefix}_min = min(${prefix}_min, excluded.${prefix}_min), ${prefix}_max = max(${prefix}_max, excluded.${prefix}_max),
  ${prefix}_mean = (${prefix}_mean * samples + excluded.${prefix}_mean * excluded.samples) / (samples + excluded.samples)`;

const HEALTH_ROLLUP = `
WITH raw AS (
  SELECT *, (time_ns / 1000000 / ${ROLLUP_BUCKET_MS}) * ${ROLLUP_BUCKET_MS} AS bucket FROM health WHERE time_ns < :cutoff
), grouped AS (
  SELECT server_id, bucket, count(*) AS samples, max(time_ns) AS last_ns,
    ${HEALTH_MEASURES.map(([prefix, column]) => summary(prefix, column)).join(',\n    ')}
  FROM raw GROUP BY server_id, bucket
)
INSERT INTO health_5m
SELECT g.server_id, g.bucket, g.samples,
  ${HEALTH_MEASURES.map(([prefix]) => `${prefix}_min, ${prefix}_mean, ${prefix}_max`).join(', ')},
  h.cache_hits, h.cache_lookups
FROM grouped g JOIN health h ON h.time_ns = g.last_ns
WHERE true
ON CONFLICT (server_id, bucket_ms) DO UPDATE SET
  ${HEALTH_MEASURES.map(([prefix]) => merged(prefix)).join(',\n  ')},
  cache_hits_last = excluded.cache_hits_last, cache_lookups_last = excluded.cache_lookups_last,
  samples = samples + excluded.samples`;

const SESSIONS_ROLLUP = `
INSERT INTO sessions_5m
SELECT server_id, virtual_proxy, (time_ns / 1000000 / ${ROLLUP_BUCKET_MS}) * ${ROLLUP_BUCKET_MS} AS bucket, count(*),
  min(sessions), avg(sessions), max(sessions), max(users)
FROM session_samples WHERE time_ns < :cutoff GROUP BY server_id, virtual_proxy, bucket
ON CONFLICT (server_id, virtual_proxy, bucket_ms) DO UPDATE SET
  ${merged('sessions')},
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
  const retainedFrom = nowMs - settings.retentionDays * DAY_MS;
  const expired = inTransaction(db, () => deleteBefore(db, retainedFrom) + pruneAlerts(db, retainedFrom));
  if (rolledUp > 0 || expired > 0) db.exec('PRAGMA incremental_vacuum');
  const { deleted: capped, keptFromMs } =
    settings.maxSizeMB > 0 ? capSize(db, file, settings.maxSizeMB * MB) : { deleted: 0, keptFromMs: null };
  return { rolledUp, expired, capped, keptFromMs, bytes: storeBytes(file) };
}
