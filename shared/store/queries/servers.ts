/**
 * `servers` and `servers/{serverName}/health`: the servers with their newest sample, and one
 * server's health series. A series is read from the raw samples where the store still has them
 * (from the server's oldest raw sample on) and from the 5-minute rollups before, so a range that
 * straddles the two (7 days, with 48 raw hours) is read from both; raw samples are returned as they
 * are when at most MAX_POINTS of them fall in the range, else everything is bucketed.
 */
import type { DatabaseSync } from 'node:sqlite';
import { type HealthAnswer, MAX_POINTS, type ServersAnswer } from '../api-types.js';
import { ROLLUP_BUCKET_MS } from '../ddl.js';
import { jsonObject, nsBounds, nsOf, num, type Range, type Row, rows, seriesStep, seriesValue, str } from './common.js';

const LATEST_SQL = `SELECT time_ns / 1000000 AS t, cpu_total, mem_committed, mem_allocated, mem_free, session_active,
  users_active, apps_active, apps_loaded, apps_in_memory, cache_hits, cache_lookups, saturated, version, uptime
  FROM health WHERE server_id = ? AND time_ns BETWEEN ? AND ? ORDER BY time_ns DESC LIMIT 1`;

/** Every server the store knows, by name, with its newest health sample in the range. */
export function servers(db: DatabaseSync, range: Range): ServersAnswer {
  const [fromNs, toNs] = nsBounds(range);
  const list = rows(
    db,
    'SELECT id, name, host, description, tags, first_seen_ms, last_seen_ms FROM servers ORDER BY name',
  ).map((server) => {
    const latest = rows(db, LATEST_SQL, num(server, 'id'), fromNs, toNs)[0];
    const tags = Object.fromEntries(
      Object.entries(jsonObject(server, 'tags')).map(([key, value]) => [key, String(value)]),
    );
    return {
      name: str(server, 'name'),
      host: str(server, 'host'),
      description: str(server, 'description'),
      tags,
      firstSeen: num(server, 'first_seen_ms'),
      lastSeen: num(server, 'last_seen_ms'),
      latest: latest
        ? {
            time: num(latest, 't'),
            cpu: num(latest, 'cpu_total'),
            memCommitted: num(latest, 'mem_committed'),
            memAllocated: num(latest, 'mem_allocated'),
            memFree: num(latest, 'mem_free'),
            sessions: num(latest, 'session_active'),
            users: num(latest, 'users_active'),
            appsActive: num(latest, 'apps_active'),
            appsLoaded: num(latest, 'apps_loaded'),
            appsInMemory: num(latest, 'apps_in_memory'),
            cacheHits: num(latest, 'cache_hits'),
            cacheLookups: num(latest, 'cache_lookups'),
            saturated: num(latest, 'saturated') === 1,
            version: str(latest, 'version'),
            uptime: str(latest, 'uptime'),
          }
        : null,
    };
  });
  return { range, servers: list };
}

/** Columns of a health point: weighted means, minima, maxima and counters (last value). */
const MEANS = [
  'cpu',
  'mem_committed',
  'mem_allocated',
  'mem_free',
  'sessions',
  'users',
  'apps_active',
  'apps_loaded',
] as const;
const MINS = ['cpu_min'] as const;
const MAXES = ['cpu_max', 'sessions_max', 'cache_hits', 'cache_lookups'] as const;

/** Raw samples as points, each its own (samples = 1). */
const RAW_POINTS_SQL = `SELECT time_ns / 1000000 AS t, 1 AS samples, cpu_total AS cpu, cpu_total AS cpu_min,
  cpu_total AS cpu_max, mem_committed, mem_allocated, mem_free, session_active AS sessions,
  session_active AS sessions_max, users_active AS users, apps_active, apps_loaded, cache_hits, cache_lookups
  FROM health WHERE server_id = ? AND time_ns BETWEEN ? AND ? ORDER BY time_ns`;

/** Raw samples bucketed by a step (ms, the first parameter). */
const RAW_BUCKETS_SQL = `SELECT ((time_ns / 1000000) / ?1) * ?1 AS t, count(*) AS samples, avg(cpu_total) AS cpu,
  min(cpu_total) AS cpu_min, max(cpu_total) AS cpu_max, avg(mem_committed) AS mem_committed,
  avg(mem_allocated) AS mem_allocated, avg(mem_free) AS mem_free, avg(session_active) AS sessions,
  max(session_active) AS sessions_max, avg(users_active) AS users, avg(apps_active) AS apps_active,
  avg(apps_loaded) AS apps_loaded, max(cache_hits) AS cache_hits, max(cache_lookups) AS cache_lookups
  FROM health WHERE server_id = ?2 AND time_ns BETWEEN ?3 AND ?4 GROUP BY 1 ORDER BY 1`;

/** The 5-minute rollups bucketed by a step (a multiple of 5 minutes); means weighted by samples. */
const ROLLUP_BUCKETS_SQL = `SELECT (bucket_ms / ?1) * ?1 AS t, sum(samples) AS samples,
  sum(cpu_mean * samples) / sum(samples) AS cpu, min(cpu_min) AS cpu_min, max(cpu_max) AS cpu_max,
  sum(mem_committed_mean * samples) / sum(samples) AS mem_committed,
  sum(mem_allocated_mean * samples) / sum(samples) AS mem_allocated,
  sum(mem_free_mean * samples) / sum(samples) AS mem_free,
  sum(session_active_mean * samples) / sum(samples) AS sessions, max(session_active_max) AS sessions_max,
  sum(users_active_mean * samples) / sum(samples) AS users,
  sum(apps_active_mean * samples) / sum(samples) AS apps_active,
  sum(apps_loaded_mean * samples) / sum(samples) AS apps_loaded,
  max(cache_hits_last) AS cache_hits, max(cache_lookups_last) AS cache_lookups
  FROM health_5m WHERE server_id = ?2 AND bucket_ms >= ?3 AND bucket_ms < ?4 GROUP BY 1 ORDER BY 1`;

/**
 * Where a server's raw samples begin (ms), or +∞ when it has none: the rollups serve what is before.
 * Shared with the sessions' series, whose raw samples and rollups split the same way.
 */
export function rawBoundary(db: DatabaseSync, sql: string, ...keys: (number | string)[]): number {
  const row = rows(db, sql, ...keys)[0];
  return row && row['t'] !== null ? num(row, 't') : Number.POSITIVE_INFINITY;
}

/**
 * The plan of a series over a range: the raw part's points as they are (stepMs null) when few
 * enough, else a step; and which part comes from the rollups.
 */
export interface SeriesPlan {
  stepMs: number | null;
  /** Rollup buckets in [rollupFrom, rollupTo) (empty when rollupFrom ≥ rollupTo). */
  rollupFrom: number;
  rollupTo: number;
  /** Raw samples in [rawFrom, range.to]. */
  rawFrom: number;
}

/** Chooses raw or rollups (or both) for a range, given where the raw samples begin and how many fall in the range. */
export function planSeries(range: Range, boundary: number, countRaw: () => number): SeriesPlan {
  if (range.from >= boundary) {
    const stepMs = countRaw() <= MAX_POINTS ? null : seriesStep(range, 60_000);
    return { stepMs, rollupFrom: 0, rollupTo: 0, rawFrom: range.from };
  }
  return {
    stepMs: seriesStep(range, ROLLUP_BUCKET_MS),
    rollupFrom: Math.floor(range.from / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS,
    rollupTo: Math.min(boundary, range.to + 1),
    rawFrom: Math.max(range.from, boundary),
  };
}

/**
 * Points of the same time merged: means weighted by their samples, minima and maxima kept (a bucket
 * may take rollups and raw samples when it straddles where the raw samples begin).
 */
export function mergePoints(
  parts: readonly Row[],
  columns: { means: readonly string[]; mins: readonly string[]; maxes: readonly string[] },
): Map<number, Map<string, number>> {
  const merged = new Map<number, Map<string, number>>();
  for (const row of parts) {
    const t = num(row, 't');
    const samples = num(row, 'samples');
    const point = merged.get(t);
    if (!point) {
      merged.set(
        t,
        new Map([
          ['samples', samples],
          ...[...columns.means, ...columns.mins, ...columns.maxes].map((c) => [c, num(row, c)] as const),
        ]),
      );
      continue;
    }
    const before = point.get('samples') ?? 0;
    const total = before + samples;
    for (const c of columns.means) point.set(c, ((point.get(c) ?? 0) * before + num(row, c) * samples) / (total || 1));
    for (const c of columns.mins) point.set(c, Math.min(point.get(c) ?? Number.POSITIVE_INFINITY, num(row, c)));
    for (const c of columns.maxes) point.set(c, Math.max(point.get(c) ?? Number.NEGATIVE_INFINITY, num(row, c)));
    point.set('samples', total);
  }
  return merged;
}

/** One server's health over the range; undefined when the store has no server of that name. */
export function health(db: DatabaseSync, params: { range: Range; server: string }): HealthAnswer | undefined {
  const { range, server } = params;
  const idRow = rows(db, 'SELECT id FROM servers WHERE name = ?', server)[0];
  if (!idRow) return undefined;
  const id = num(idRow, 'id');
  const [fromNs, toNs] = nsBounds(range);
  const boundary = rawBoundary(db, 'SELECT min(time_ns) / 1000000 AS t FROM health WHERE server_id = ?', id);
  const plan = planSeries(range, boundary, () =>
    num(
      rows(
        db,
        'SELECT count(*) AS n FROM health WHERE server_id = ? AND time_ns BETWEEN ? AND ?',
        id,
        fromNs,
        toNs,
      )[0] ?? {},
      'n',
    ),
  );
  let parts: Row[] = [];
  if (plan.stepMs !== null && plan.rollupFrom < plan.rollupTo) {
    parts = parts.concat(rows(db, ROLLUP_BUCKETS_SQL, plan.stepMs, id, plan.rollupFrom, plan.rollupTo));
  }
  if (plan.rawFrom <= range.to) {
    const rawFromNs = nsOf(plan.rawFrom);
    parts = parts.concat(
      plan.stepMs === null
        ? rows(db, RAW_POINTS_SQL, id, rawFromNs, toNs)
        : rows(db, RAW_BUCKETS_SQL, plan.stepMs, id, rawFromNs, toNs),
    );
  }
  const merged = mergePoints(parts, { means: MEANS, mins: MINS, maxes: MAXES });
  const times = [...merged.keys()].sort((a, b) => a - b);
  const series = (column: string) => times.map((t) => seriesValue(merged.get(t)?.get(column)));
  let previous: Map<string, number> | undefined;
  const cacheHitRatio = times.map((t) => {
    const point = merged.get(t);
    const before = previous;
    previous = point;
    if (!point || !before) return null;
    const lookups = (point.get('cache_lookups') ?? 0) - (before.get('cache_lookups') ?? 0);
    const hits = (point.get('cache_hits') ?? 0) - (before.get('cache_hits') ?? 0);
    return lookups > 0 && hits >= 0 ? seriesValue(Math.min(1, hits / lookups)) : null;
  });
  return {
    range,
    server,
    stepMs: plan.stepMs,
    t: times,
    cpu: series('cpu'),
    cpuMin: series('cpu_min'),
    cpuMax: series('cpu_max'),
    memCommitted: series('mem_committed'),
    memAllocated: series('mem_allocated'),
    memFree: series('mem_free'),
    sessions: series('sessions'),
    sessionsMax: series('sessions_max'),
    users: series('users'),
    appsActive: series('apps_active'),
    appsLoaded: series('apps_loaded'),
    cacheHitRatio,
  };
}
