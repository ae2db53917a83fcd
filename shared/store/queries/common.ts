/**
 * What the read API's queries share: the range and its point-time bounds, a prepared-statement
 * cache per connection, the opaque paging cursor, the choice of a bucket width, the server names,
 * and typed reads of a row's columns. The queries are pure functions of a connection and their
 * parameters (api-types.ts answers); the statement cache is keyed by connection, so it lives and
 * dies with the reader's connection.
 */
import type { DatabaseSync, SQLInputValue, SQLOutputValue, StatementSync } from 'node:sqlite';
import { MAX_POINTS } from '../api-types.js';

/** A query's time range, ms since the epoch, both ends included. */
export interface Range {
  from: number;
  to: number;
}

/** Parameters every list query takes. */
export interface Page {
  limit: number;
  /** The `nextCursor` of the previous page, or undefined for the first page. */
  cursor?: string | undefined;
}

/** A row as node:sqlite gives it. */
export type Row = Record<string, SQLOutputValue>;

const statements = new WeakMap<DatabaseSync, Map<string, StatementSync>>();

/** A prepared statement of `sql` on `db`, prepared once per connection. */
export function statement(db: DatabaseSync, sql: string): StatementSync {
  let cache = statements.get(db);
  if (!cache) {
    cache = new Map();
    statements.set(db, cache);
  }
  let prepared = cache.get(sql);
  if (!prepared) {
    prepared = db.prepare(sql);
    cache.set(sql, prepared);
  }
  return prepared;
}

/** The SQL of every statement prepared on `db` so far: what a test runs EXPLAIN QUERY PLAN on. */
export function preparedSql(db: DatabaseSync): string[] {
  return [...(statements.get(db)?.keys() ?? [])];
}

/**
 * Runs `sql` (cached) and returns every row. Whole numbers are bound as integers (node:sqlite binds a
 * JS number as REAL, which would turn `t / step * step` into a division without rounding).
 */
export function rows(db: DatabaseSync, sql: string, ...values: SQLInputValue[]): Row[] {
  return statement(db, sql).all(
    ...values.map((value) => (typeof value === 'number' && Number.isSafeInteger(value) ? BigInt(value) : value)),
  );
}

/** The first point time (ns) of millisecond `ms`. */
export function nsOf(ms: number): bigint {
  return BigInt(Math.floor(ms)) * 1_000_000n;
}

/** The point-time bounds of a range, both included (the last nanosecond of `to`'s millisecond). */
export function nsBounds(range: Range): [bigint, bigint] {
  return [nsOf(range.from), nsOf(range.to) + 999_999n];
}

/** `?, ?, …` for an IN list. */
export function placeholders(count: number): string {
  return Array<string>(count).fill('?').join(', ');
}

/** A row's column as a number (0 when null). */
export function num(row: Row, column: string): number {
  const value = row[column];
  return typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : Number(value ?? 0);
}

/** A row's column as a number, or null when it is null. */
export function numOrNull(row: Row, column: string): number | null {
  const value = row[column];
  return value === null || value === undefined ? null : num(row, column);
}

/** A row's column as text ('' when null). */
export function str(row: Row, column: string): string {
  const value = row[column];
  return value === null || value === undefined ? '' : typeof value === 'string' ? value : String(value);
}

/** A row's column as text, or null when it is null. */
export function strOrNull(row: Row, column: string): string | null {
  const value = row[column];
  return value === null || value === undefined ? null : str(row, column);
}

/** A JSON column parsed as an object ({} when it is not one). */
export function jsonObject(row: Row, column: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(str(row, column) || '{}');
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? { ...parsed } : {};
  } catch {
    return {};
  }
}

/** The cursor of a page: opaque to clients (base64url of the last row's key). */
export function encodeCursor(parts: readonly string[]): string {
  return Buffer.from(parts.join('\n')).toString('base64url');
}

/** A cursor's key parts, or undefined when it is not one this API made (the caller answers 400). */
export function decodeCursor(cursor: string, parts: number, check: (part: string) => boolean): string[] | undefined {
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8').split('\n');
  return decoded.length === parts && decoded.every(check) ? decoded : undefined;
}

/** A decimal point time (ns) of a cursor. */
export const isDecimal = (text: string): boolean => /^\d{1,20}$/.test(text);

/** A cursor the query could not read: the API answers 400 naming `cursor`. */
export class BadCursorError extends Error {
  constructor() {
    super('cursor: not a cursor of this list (pass the nextCursor of the previous page, with the same filters)');
  }
}

/**
 * The point-time bounds of a page of a list keyed by time_ns, newest first: the range, and below the
 * last row of the previous page when there is a cursor (rows added since never shift the pages).
 */
export function pageBounds(range: Range, cursor: string | undefined): [bigint, bigint] {
  const [fromNs, toNs] = nsBounds(range);
  if (cursor === undefined) return [fromNs, toNs];
  const [last] = decodeCursor(cursor, 1, isDecimal) ?? [];
  if (last === undefined) throw new BadCursorError();
  const before = BigInt(last) - 1n;
  return [fromNs, before < toNs ? before : toNs];
}

/**
 * A page of an event table keyed by time_ns, newest first, within `bounds` (pageBounds) and the
 * filters: `limit` + 1 rows, the extra one saying there is a next page (nextCursor). `id` is the
 * point time as decimal text (it does not fit a JS number), `time_ms` its millisecond.
 */
export function newestFirst(
  db: DatabaseSync,
  table: string,
  columns: string,
  bounds: [bigint, bigint],
  where: { sql: string; values: SQLInputValue[] },
  limit: number,
): Row[] {
  return rows(
    db,
    `SELECT CAST(time_ns AS TEXT) AS id, time_ns / 1000000 AS time_ms, ${columns}
     FROM ${table} WHERE time_ns BETWEEN ? AND ?${where.sql} ORDER BY time_ns DESC LIMIT ?`,
    ...bounds,
    ...where.values,
    limit + 1,
  );
}

/** The cursor after a page read with LIMIT limit + 1: null when that extra row did not come. */
export function nextCursor(found: number, limit: number, lastKey: readonly string[] | undefined): string | null {
  return found > limit && lastKey ? encodeCursor(lastKey) : null;
}

/** The server names by id (a small table, read per query). */
export function serverNames(db: DatabaseSync): Map<number, string> {
  return new Map(rows(db, 'SELECT id, name FROM servers').map((row) => [num(row, 'id'), str(row, 'name')]));
}

/** The ids of the named servers (names not in the store have none). */
export function serverIds(db: DatabaseSync, names: readonly string[]): number[] {
  const wanted = new Set(names);
  return [...serverNames(db)].filter(([, name]) => wanted.has(name)).map(([id]) => id);
}

/** Whether a filter list filters (it has values). */
export const some = <T>(list: readonly T[] | undefined): list is readonly T[] => list !== undefined && list.length > 0;

/** `column IN (…)` terms of the lists given; names of servers the store does not know match nothing. */
export function inTerms(
  db: DatabaseSync,
  lists: { servers?: readonly string[] | undefined; text?: [string, readonly string[] | undefined][] },
): { sql: string; terms: string[]; values: SQLInputValue[] } {
  const terms: string[] = [];
  const values: SQLInputValue[] = [];
  if (some(lists.servers)) {
    const ids = serverIds(db, lists.servers);
    terms.push(ids.length ? `server_id IN (${placeholders(ids.length)})` : '0');
    values.push(...ids);
  }
  for (const [column, list] of lists.text ?? []) {
    if (!some(list)) continue;
    terms.push(`${column} IN (${placeholders(list.length)})`);
    values.push(...list);
  }
  return { sql: terms.map((term) => ` AND ${term}`).join(''), terms, values };
}

/** Bucket widths the counts use, smallest first (each divides the next or a day). */
const COUNT_STEPS_MS = [60_000, 300_000, 900_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000];
/** Buckets of a count chart at most. */
export const MAX_COUNT_BUCKETS = 200;

/** The bucket width of counts over a range: the smallest step giving at most MAX_COUNT_BUCKETS buckets. */
export function countStep(range: Range): number {
  const span = range.to - range.from;
  return (
    COUNT_STEPS_MS.find((step) => span / step <= MAX_COUNT_BUCKETS) ??
    Math.ceil(span / MAX_COUNT_BUCKETS / 86_400_000) * 86_400_000
  );
}

/** A series' bucket width: a multiple of `unit` giving at most MAX_POINTS points over the range. */
export function seriesStep(range: Range, unit: number): number {
  return Math.max(1, Math.ceil((range.to - range.from) / MAX_POINTS / unit)) * unit;
}

/** The bucket starts of a range for a step (the first holds `from`). */
export function bucketStarts(range: Range, step: number): number[] {
  const starts: number[] = [];
  for (let t = Math.floor(range.from / step) * step; t <= range.to; t += step) starts.push(t);
  return starts;
}

/**
 * A series value as answered: 3 decimals (a chart shows no more, and a month of series is several
 * times smaller than with the 17 digits of a mean); null stays null.
 */
export function seriesValue(value: number | undefined): number | null {
  return value === undefined || !Number.isFinite(value) ? null : Math.round(value * 1000) / 1000;
}

/** An RFC 3339 text of a time in ms. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Counts per key and bucket as series, largest total first, at most `maxSeries`:
 * the shape of `CountsAnswer.series`.
 */
export function countSeries(
  counted: readonly Row[],
  starts: readonly number[],
  step: number,
  maxSeries = 20,
): { key: string; total: number; counts: number[] }[] {
  const first = starts[0] ?? 0;
  const byKey = new Map<string, number[]>();
  for (const row of counted) {
    const key = str(row, 'key');
    let counts = byKey.get(key);
    if (!counts) {
      counts = Array<number>(starts.length).fill(0);
      byKey.set(key, counts);
    }
    const index = Math.floor((num(row, 't') - first) / step);
    if (index >= 0 && index < counts.length) counts[index] = (counts[index] ?? 0) + num(row, 'n');
  }
  return [...byKey]
    .map(([key, counts]) => ({ key, total: counts.reduce((a, b) => a + b, 0), counts }))
    .sort((a, b) => b.total - a.total || a.key.localeCompare(b.key))
    .slice(0, maxSeries);
}
