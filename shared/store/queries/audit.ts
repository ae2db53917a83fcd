/**
 * `audit-events` and `audit-events/counts`: the audit events newest first, paged by (time, id), and
 * their counts per type, app, sheet or user over time (from the events: audit volumes are small).
 */
import type { DatabaseSync } from 'node:sqlite';
import type { AUDIT_COUNT_BY, AuditEventsAnswer, CountsAnswer } from '../api-types.js';
import {
  BadCursorError,
  bucketStarts,
  countSeries,
  countStep,
  decodeCursor,
  inTerms,
  jsonObject,
  nextCursor,
  num,
  numOrNull,
  type Page,
  type Range,
  rfc3339,
  rows,
  str,
} from './common.js';

/** Filters of the audit events; an absent or empty list does not filter. */
export interface AuditFilters {
  types?: readonly string[] | undefined;
  /** App ids. */
  apps?: readonly string[] | undefined;
  sheets?: readonly string[] | undefined;
  users?: readonly string[] | undefined;
}

function auditWhere(db: DatabaseSync, filters: AuditFilters) {
  return inTerms(db, {
    text: [
      ['type', filters.types],
      ['app_id', filters.apps],
      ['sheet_id', filters.sheets],
      ['user_id', filters.users],
    ],
  });
}

/** Audit events in the range, newest first (then by id), `limit` a page. */
export function auditEvents(
  db: DatabaseSync,
  params: { range: Range; filters: AuditFilters } & Page,
): AuditEventsAnswer {
  const { range, filters, limit, cursor } = params;
  const where = auditWhere(db, filters);
  let after = '';
  const afterValues: (number | string)[] = [];
  if (cursor !== undefined) {
    const [time, id] = decodeCursor(cursor, 2, (part) => part.length > 0) ?? [];
    if (time === undefined || id === undefined || !/^\d{1,16}$/.test(time)) throw new BadCursorError();
    // Keyset on (time_ms, id): rows added since never shift the pages.
    after = ' AND (time_ms < ? OR (time_ms = ? AND id < ?))';
    afterValues.push(Number(time), Number(time), id);
  }
  const found = rows(
    db,
    `SELECT id, time_ms, type, app_id, sheet_id, object_id, user_id, duration_ms, envelope FROM audit_events
     WHERE time_ms BETWEEN ? AND ?${after}${where.sql} ORDER BY time_ms DESC, id DESC LIMIT ?`,
    range.from,
    range.to,
    ...afterValues,
    ...where.values,
    limit + 1,
  );
  const events = found.slice(0, limit).map((row) => ({
    id: str(row, 'id'),
    time: rfc3339(num(row, 'time_ms')),
    timeMs: num(row, 'time_ms'),
    type: str(row, 'type'),
    appId: str(row, 'app_id'),
    sheetId: str(row, 'sheet_id'),
    objectId: str(row, 'object_id'),
    user: str(row, 'user_id'),
    durationMs: numOrNull(row, 'duration_ms'),
    envelope: jsonObject(row, 'envelope'),
  }));
  const last = events[events.length - 1];
  return { range, events, nextCursor: nextCursor(found.length, limit, last && [String(last.timeMs), last.id]) };
}

const COUNT_COLUMNS: Readonly<Record<(typeof AUDIT_COUNT_BY)[number], string>> = {
  type: 'type',
  app: 'app_id',
  sheet: 'sheet_id',
  user: 'user_id',
};

/** Audit events counted per type, app, sheet or user over the range. */
export function auditCounts(
  db: DatabaseSync,
  params: { range: Range; by: (typeof AUDIT_COUNT_BY)[number]; filters: AuditFilters },
): CountsAnswer {
  const { range, by, filters } = params;
  const stepMs = countStep(range);
  const starts = bucketStarts(range, stepMs);
  const where = auditWhere(db, filters);
  const counted = rows(
    db,
    `SELECT (time_ms / ${stepMs}) * ${stepMs} AS t, ${COUNT_COLUMNS[by]} AS key, count(*) AS n FROM audit_events
     WHERE time_ms BETWEEN ? AND ?${where.sql} GROUP BY 1, 2`,
    range.from,
    range.to,
    ...where.values,
  );
  return { range, by, stepMs, t: starts, series: countSeries(counted, starts, stepMs) };
}
