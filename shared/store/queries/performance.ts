/**
 * `performance/top`: the apps, objects or methods that cost the most over a range, from the hourly
 * rollup `perf_hourly` (whole hours overlapping the range): count, total and maximum of
 * process_time, p95 from the merged histograms, and the users who cost the most in each, all from
 * one pass over the rollup grouped by key and user.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { PERF_BY, PERF_ORDER, PerformanceTopAnswer } from '../api-types.js';
import { HOUR_MS, PERF_HISTOGRAM_BOUNDS_MS } from '../ddl.js';
import { inTerms, num, type Range, type Row, rows, str } from './common.js';

/** Filters of performance/top; an absent or empty list does not filter. */
export interface PerfFilters {
  servers?: readonly string[] | undefined;
  /** App ids. */
  apps?: readonly string[] | undefined;
  users?: readonly string[] | undefined;
}

const GROUPS: Readonly<Record<(typeof PERF_BY)[number], { columns: string; key: (row: Row) => string }>> = {
  app: { columns: 'app_id', key: (row) => str(row, 'app_id') },
  object: { columns: 'app_id, object_id', key: (row) => `${str(row, 'app_id')}/${str(row, 'object_id')}` },
  method: { columns: 'method', key: (row) => str(row, 'method') },
};

/**
 * The histograms of a group's rows, summed: SQL hands them over joined (`group_concat`), parsed as one
 * JSON array, which is cheaper than extracting each bucket in SQL.
 */
function addHistograms(into: number[], joined: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(`[${joined}]`);
  } catch {
    return;
  }
  if (!Array.isArray(parsed)) return;
  for (const histogram of parsed) {
    if (!Array.isArray(histogram)) continue;
    for (let index = 0; index < into.length; index++) {
      const count: unknown = histogram[index];
      if (typeof count === 'number') into[index] = (into[index] ?? 0) + count;
    }
  }
}

/**
 * The 95th percentile from a histogram over PERF_HISTOGRAM_BOUNDS_MS: the upper bound of the bucket
 * that holds it (the maximum for the last, open bucket), never above the maximum.
 */
export function p95FromHistogram(histogram: readonly number[], max: number): number {
  const count = histogram.reduce((a, b) => a + b, 0);
  if (count === 0) return 0;
  const target = Math.ceil(0.95 * count);
  let seen = 0;
  for (const [index, n] of histogram.entries()) {
    seen += n;
    if (seen >= target) return Math.min(PERF_HISTOGRAM_BOUNDS_MS[index] ?? max, max);
  }
  return max;
}

interface Group {
  appId: string;
  appName: string;
  objectId: string;
  objectType: string;
  method: string;
  count: number;
  totalMs: number;
  maxMs: number;
  histogram: number[];
  users: Map<string, { count: number; totalMs: number }>;
}

/** The top `limit` keys of the range by total, p95 or count. */
export function performanceTop(
  db: DatabaseSync,
  params: {
    range: Range;
    by: (typeof PERF_BY)[number];
    order: (typeof PERF_ORDER)[number];
    filters: PerfFilters;
    limit: number;
  },
): PerformanceTopAnswer {
  const { range, by, order, filters, limit } = params;
  const group = GROUPS[by];
  const where = inTerms(db, {
    servers: filters.servers,
    text: [
      ['app_id', filters.apps],
      ['user_full', filters.users],
    ],
  });
  const found = rows(
    db,
    `SELECT ${group.columns}, user_full, max(app_name) AS app_name, max(object_type) AS object_type, sum(count) AS n,
       sum(total_ms) AS total, max(max_ms) AS max, group_concat(hist, ',') AS hists
     FROM perf_hourly WHERE hour_ms >= ? AND hour_ms <= ?${where.sql} GROUP BY ${group.columns}, user_full`,
    Math.floor(range.from / HOUR_MS) * HOUR_MS,
    range.to,
    ...where.values,
  );
  const groups = new Map<string, Group>();
  for (const row of found) {
    const key = group.key(row);
    let entry = groups.get(key);
    if (!entry) {
      entry = {
        appId: by === 'method' ? '' : str(row, 'app_id'),
        appName: by === 'method' ? '' : str(row, 'app_name'),
        objectId: by === 'object' ? str(row, 'object_id') : '',
        objectType: by === 'object' ? str(row, 'object_type') : '',
        method: by === 'method' ? str(row, 'method') : '',
        count: 0,
        totalMs: 0,
        maxMs: 0,
        histogram: Array<number>(PERF_HISTOGRAM_BOUNDS_MS.length + 1).fill(0),
        users: new Map(),
      };
      groups.set(key, entry);
    }
    const count = num(row, 'n');
    const total = num(row, 'total');
    entry.count += count;
    entry.totalMs += total;
    entry.maxMs = Math.max(entry.maxMs, num(row, 'max'));
    addHistograms(entry.histogram, str(row, 'hists'));
    const user = str(row, 'user_full');
    const cost = entry.users.get(user) ?? { count: 0, totalMs: 0 };
    entry.users.set(user, { count: cost.count + count, totalMs: cost.totalMs + total });
  }
  const ranked = [...groups].map(([key, entry]) => ({
    key,
    appId: entry.appId,
    appName: entry.appName,
    objectId: entry.objectId,
    objectType: entry.objectType,
    method: entry.method,
    count: entry.count,
    totalMs: entry.totalMs,
    p95Ms: p95FromHistogram(entry.histogram, entry.maxMs),
    maxMs: entry.maxMs,
    topUsers: [...entry.users]
      .map(([user, cost]) => ({ user, ...cost }))
      .sort((a, b) => b.totalMs - a.totalMs || a.user.localeCompare(b.user))
      .slice(0, 5),
  }));
  const measure = (row: (typeof ranked)[number]) =>
    order === 'total' ? row.totalMs : order === 'p95' ? row.p95Ms : row.count;
  ranked.sort((a, b) => measure(b) - measure(a) || b.totalMs - a.totalMs || a.key.localeCompare(b.key));
  return { range, by, order, rows: ranked.slice(0, limit) };
}
