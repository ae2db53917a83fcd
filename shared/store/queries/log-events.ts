/**
 * `log-events` and `log-events/counts`: the log events newest first, filtered, paged by point time;
 * and their counts per level or category over time, from the raw events for short ranges (buckets
 * under an hour) and from `log_counts_hourly` for long ones (whole hours).
 *
 * Free text (`q`): every word must match the start of a word of the message or the exception, found
 * through the FTS5 table. Each word is passed as an FTS5 string (quoted, `"` doubled), so no input is
 * FTS5 syntax; a word without a letter or digit is ignored (it has no token to find).
 */
import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import type { CountsAnswer, LogEventsAnswer } from '../api-types.js';
import { HOUR_MS } from '../ddl.js';
import {
  bucketStarts,
  countSeries,
  countStep,
  inTerms,
  jsonObject,
  newestFirst,
  nextCursor,
  nsBounds,
  num,
  type Page,
  pageBounds,
  placeholders,
  type Range,
  rfc3339,
  rows,
  serverNames,
  some,
  str,
} from './common.js';

/** A category filter: `name=value`, or `name` for any value. */
export interface CategoryFilter {
  name: string;
  value?: string | undefined;
}

/** The filters of log events; an absent or empty list does not filter. */
export interface LogFilters {
  /** Upper case, as stored. */
  levels?: readonly string[] | undefined;
  sources?: readonly string[] | undefined;
  servers?: readonly string[] | undefined;
  categories?: readonly CategoryFilter[] | undefined;
  /** App ids (the hourly counts have no app: counts filtered by app are read from the events). */
  apps?: readonly string[] | undefined;
  /** The words of `q` (see ftsQuery). */
  words?: readonly string[] | undefined;
}

/** The words of a free-text query that can match (a letter or a digit in them); empty when none can. */
export function searchWords(q: string): string[] {
  return q.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word));
}

/** An FTS5 query matching rows that hold every word (each as a quoted prefix: no input is FTS5 syntax). */
export function ftsQuery(words: readonly string[]): string {
  return words.map((word) => `"${word.replaceAll('"', '""')}"*`).join(' AND ');
}

/** The terms of the filters on columns both log_events and log_counts_hourly have (levels, sources, servers). */
function columnTerms(db: DatabaseSync, filters: LogFilters, terms: string[], values: SQLInputValue[]): void {
  const where = inTerms(db, {
    servers: filters.servers,
    text: [
      ['level', filters.levels],
      ['source', filters.sources],
    ],
  });
  terms.push(...where.terms);
  values.push(...where.values);
}

/**
 * The WHERE terms and values of the filters over `log_events` (levels, sources, servers, categories,
 * words), after the time bounds. `serverIds` of names the store does not know is empty: nothing matches.
 */
function logWhere(db: DatabaseSync, filters: LogFilters): { sql: string; values: SQLInputValue[] } {
  const terms: string[] = [];
  const values: SQLInputValue[] = [];
  columnTerms(db, filters, terms, values);
  if (some(filters.apps)) {
    terms.push(`app_id IN (${placeholders(filters.apps.length)})`);
    values.push(...filters.apps);
  }
  if (some(filters.categories)) {
    const each = filters.categories.map((category) => {
      values.push(category.name);
      if (category.value === undefined) return `c.value ->> 'name' = ?`;
      values.push(category.value);
      return `(c.value ->> 'name' = ? AND c.value ->> 'value' = ?)`;
    });
    terms.push(`EXISTS (SELECT 1 FROM json_each(log_events.category) AS c WHERE ${each.join(' OR ')})`);
  }
  if (some(filters.words)) {
    terms.push('time_ns IN (SELECT rowid FROM log_events_fts WHERE log_events_fts MATCH ?)');
    values.push(ftsQuery(filters.words));
  }
  return { sql: terms.map((term) => ` AND ${term}`).join(''), values };
}

/** Log events in the range, newest first, `limit` a page. */
export function logEvents(db: DatabaseSync, params: { range: Range; filters: LogFilters } & Page): LogEventsAnswer {
  const { range, filters, limit, cursor } = params;
  const [fromNs, toNs] = pageBounds(range, cursor);
  const where = logWhere(db, filters);
  const found = newestFirst(
    db,
    'log_events',
    'server_id, source, level, subsystem, message, exception, category, app_id, user_full, task_name, windows_user, rest',
    [fromNs, toNs],
    where,
    limit,
  );
  const names = serverNames(db);
  const events = found.slice(0, limit).map((row) => {
    const timeMs = num(row, 'time_ms');
    const category = parseCategory(str(row, 'category'));
    const columns = {
      server: names.get(num(row, 'server_id')) ?? '',
      source: str(row, 'source'),
      level: str(row, 'level'),
      subsystem: str(row, 'subsystem'),
      message: str(row, 'message'),
      exception: str(row, 'exception'),
      appId: str(row, 'app_id'),
      userFull: str(row, 'user_full'),
      taskName: str(row, 'task_name'),
      windowsUser: str(row, 'windows_user'),
    };
    return {
      id: str(row, 'id'),
      time: rfc3339(timeMs),
      timeMs,
      ...columns,
      category,
      event: {
        ...jsonObject(row, 'rest'),
        level: columns.level,
        source: columns.source,
        subsystem: columns.subsystem,
        message: columns.message,
        exception_message: columns.exception,
        app_id: columns.appId,
        user_full: columns.userFull,
        task_name: columns.taskName,
        windows_user: columns.windowsUser,
        category,
      },
    };
  });
  const last = events[events.length - 1];
  return { range, events, nextCursor: nextCursor(found.length, limit, last && [last.id]) };
}

function parseCategory(text: string): { name: string; value: string }[] {
  try {
    const parsed: unknown = JSON.parse(text || '[]');
    if (!Array.isArray(parsed)) return [];
    return parsed.flatMap((item: unknown) =>
      typeof item === 'object' && item !== null && 'name' in item && 'value' in item
        ? [{ name: String(item.name), value: String(item.value) }]
        : [],
    );
  } catch {
    return [];
  }
}

/** What log events are counted by. */
export const LOG_COUNT_BY = ['level', 'category'] as const;
export type LogCountBy = (typeof LOG_COUNT_BY)[number];

/** Counts per level or category over the range (the filters of logEvents except words). */
export function logCounts(
  db: DatabaseSync,
  params: { range: Range; by: LogCountBy; filters: LogFilters },
): CountsAnswer {
  const { range, by, filters } = params;
  const stepMs = countStep(range);
  const starts = bucketStarts(range, stepMs);
  const counted =
    stepMs >= HOUR_MS && !some(filters.apps)
      ? hourlyCounts(db, range, by, filters, stepMs)
      : rawCounts(db, range, by, filters, stepMs);
  return { range, by, stepMs, t: starts, series: countSeries(counted, starts, stepMs) };
}

function rawCounts(db: DatabaseSync, range: Range, by: LogCountBy, filters: LogFilters, step: number) {
  const [fromNs, toNs] = nsBounds(range);
  const where = logWhere(db, { ...filters, words: undefined });
  const bucket = `((time_ns / 1000000) / ${step}) * ${step}`;
  const sql =
    by === 'level'
      ? `SELECT ${bucket} AS t, level AS key, count(*) AS n FROM log_events
         WHERE time_ns BETWEEN ? AND ?${where.sql} GROUP BY 1, 2`
      : `SELECT ${bucket} AS t, (c.value ->> 'name') || '=' || (c.value ->> 'value') AS key, count(*) AS n
         FROM log_events, json_each(log_events.category) AS c
         WHERE time_ns BETWEEN ? AND ?${where.sql} GROUP BY 1, 2`;
  return rows(db, sql, fromNs, toNs, ...where.values);
}

/**
 * Counts from the hourly rollup: whole hours overlapping the range. The '' category row of an hour
 * counts every event of it, the others one category each (ddl-changes: log_counts_hourly).
 */
function hourlyCounts(db: DatabaseSync, range: Range, by: LogCountBy, filters: LogFilters, step: number) {
  const terms: string[] = [];
  const values: SQLInputValue[] = [Math.floor(range.from / HOUR_MS) * HOUR_MS, range.to];
  columnTerms(db, filters, terms, values);
  if (some(filters.categories)) {
    const each = filters.categories.map((category) => {
      if (category.value !== undefined) {
        values.push(`${category.name}=${category.value}`);
        return 'category = ?';
      }
      values.push(`${category.name}=`, `${category.name}=`);
      return 'substr(category, 1, length(?)) = ?';
    });
    terms.push(`(${each.join(' OR ')})`);
  }
  // With a category filter the '' rows (every event) cannot be used: the category rows are the events of it.
  const categoryTerm = by === 'category' || some(filters.categories) ? "category <> ''" : "category = ''";
  const key = by === 'level' ? 'level' : 'category';
  return rows(
    db,
    `SELECT (hour_ms / ${step}) * ${step} AS t, ${key} AS key, sum(count) AS n FROM log_counts_hourly
     WHERE hour_ms >= ? AND hour_ms <= ? AND ${categoryTerm}${terms.map((term) => ` AND ${term}`).join('')}
     GROUP BY 1, 2`,
    ...values,
  );
}
