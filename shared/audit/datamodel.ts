/**
 * The audit event data model: ONE table that yields the tsdb point (tags and fields), the parquet
 * and table-file columns, and docs/data-model.md. A column added here appears everywhere.
 */

import type { AuditQueuedEvent } from '../queue/events.js';
import { MAX_POINT_MS } from '../queue/point-clock.js';
import { getPath } from '../util/records.js';
import { UUID_PATTERN } from './envelope.js';

export type ColumnType = 'string' | 'int' | 'float' | 'timestamp';
/** How a column goes to the tsdb: as a tag, a field, the point time, or not at all. */
export type TsdbRole = 'tag' | 'field' | 'time' | 'none';

export type CellValue = string | number | null;

export interface AuditColumn {
  name: string;
  type: ColumnType;
  tsdb: TsdbRole;
  doc: string;
  /** The value for one event; null when the event has none. */
  get: (q: AuditQueuedEvent) => CellValue;
  /**
   * For a column holding JSON text: the value whose JSON it is (`get` gives the text, cut at
   * `MAX_PAYLOAD_JSON`). The tsdb point carries the value and writes its text into the request
   * (`json` field), so the text is not held by the point.
   */
  json?: (q: AuditQueuedEvent) => unknown;
}

/** A column holding the JSON text of `value`, at most MAX_PAYLOAD_JSON characters. */
function jsonColumn(column: Omit<AuditColumn, 'get' | 'json'>, value: (q: AuditQueuedEvent) => unknown): AuditColumn {
  return { ...column, json: value, get: (q) => JSON.stringify(value(q)).slice(0, MAX_PAYLOAD_JSON) };
}

/** The payload is free-form per type: read members structurally. */
const member = (value: unknown, ...path: string[]): unknown => getPath(value, path);
const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const int = (value: unknown): number | null =>
  typeof value === 'number' && Number.isSafeInteger(value) ? value : null;
const lower = (value: string | null): string | null => value?.toLowerCase() ?? null;
const UUID = new RegExp(UUID_PATTERN);
/** UUIDs are compared case-insensitively; other ids (object.view.duration sends any) are opaque and kept. */
const uuidLower = (value: string | null): string | null =>
  value !== null && UUID.test(value) ? value.toLowerCase() : value;

/** The largest payload kept as JSON text in one cell. */
export const MAX_PAYLOAD_JSON = 32_768;

export const AUDIT_COLUMNS: readonly AuditColumn[] = [
  {
    name: 'timestamp',
    type: 'timestamp',
    tsdb: 'time',
    doc: "The event's own time (envelope `timestamp`), UTC",
    get: (q) => Date.parse(q.event.timestamp),
  },
  {
    name: 'received_at',
    type: 'timestamp',
    tsdb: 'none',
    doc: 'When Svc accepted the event, UTC',
    get: (q) => Date.parse(q.receivedAt),
  },
  { name: 'event_id', type: 'string', tsdb: 'field', doc: 'envelope `eventId`, lower-case', get: (q) => q.id },
  { name: 'event_type', type: 'string', tsdb: 'tag', doc: 'envelope `type`', get: (q) => q.event.type },
  {
    name: 'schema_version',
    type: 'int',
    tsdb: 'field',
    doc: 'envelope `schemaVersion`',
    get: (q) => q.event.schemaVersion,
  },
  {
    name: 'correlation_id',
    type: 'string',
    tsdb: 'field',
    doc: 'envelope `correlationId`',
    get: (q) => str(q.event.correlationId),
  },
  {
    name: 'app_id',
    type: 'string',
    tsdb: 'tag',
    doc: '`payload.context.appId`, lower-case',
    get: (q) => lower(str(member(q.event.payload, 'context', 'appId'))),
  },
  {
    name: 'sheet_id',
    type: 'string',
    tsdb: 'tag',
    doc: '`payload.context.sheetId`',
    get: (q) => str(member(q.event.payload, 'context', 'sheetId')),
  },
  {
    name: 'object_id',
    type: 'string',
    tsdb: 'tag',
    doc: '`payload.event.objectId`, else `payload.context.objectId`',
    get: (q) =>
      str(member(q.event.payload, 'event', 'objectId')) ?? str(member(q.event.payload, 'context', 'objectId')),
  },
  {
    name: 'user_id',
    type: 'string',
    tsdb: 'tag',
    doc: '`payload.context.user`, as the audit client sends it',
    get: (q) => str(member(q.event.payload, 'context', 'user')),
  },
  {
    name: 'source_name',
    type: 'string',
    tsdb: 'tag',
    doc: 'envelope `source.name`',
    get: (q) => str(q.event.source?.name),
  },
  {
    name: 'client_version',
    type: 'string',
    tsdb: 'tag',
    doc: 'audit client version (header, else `source.version`)',
    get: (q) => q.meta.clientVersion,
  },
  {
    name: 'selection_txn_id',
    type: 'string',
    tsdb: 'field',
    doc: '`payload.event.selectionTxnId`; a UUID lower-case, any other id as sent',
    get: (q) => uuidLower(str(member(q.event.payload, 'event', 'selectionTxnId'))),
  },
  {
    name: 'data_state_id',
    type: 'int',
    tsdb: 'field',
    doc: '`payload.event.dataStateId` when it is an integer (a text or fractional one, which event.unsupported.visualization may send, stays in `payload` only)',
    get: (q) => int(member(q.event.payload, 'event', 'dataStateId')),
  },
  {
    name: 'duration',
    type: 'float',
    tsdb: 'field',
    doc: '`payload.event.duration` (object.view.duration)',
    get: (q) => num(member(q.event.payload, 'event', 'duration')),
  },
  {
    name: 'viz_type',
    type: 'string',
    tsdb: 'field',
    doc: '`payload.event.vizType`',
    get: (q) => str(member(q.event.payload, 'event', 'vizType')),
  },
  {
    name: 'screenshot_url',
    type: 'string',
    tsdb: 'field',
    doc: '`payload.event.screenshotUrl`',
    get: (q) => str(member(q.event.payload, 'event', 'screenshotUrl')),
  },
  jsonColumn(
    {
      name: 'payload',
      type: 'string',
      tsdb: 'field',
      doc: `The whole \`payload\` as JSON text (at most ${MAX_PAYLOAD_JSON} characters; longer payloads are cut)`,
    },
    (q) => q.event.payload,
  ),
];

const TIME_COLUMN = AUDIT_COLUMNS.find((c) => c.tsdb === 'time');

/**
 * The millisecond of an audit event's tsdb point: the value of the column whose role is `time`, or
 * when the tsdb cannot store that time (before 1970 or after 2262: RFC 3339 allows year 0000) the
 * time Svc received the event.
 */
export function auditTimeMs(q: AuditQueuedEvent): number {
  const value = TIME_COLUMN?.get(q);
  return typeof value === 'number' && value >= 0 && value <= MAX_POINT_MS ? value : Date.parse(q.receivedAt);
}

/** Static tags become extra columns / tags after the built-in ones; their names must not clash. */
export const AUDIT_COLUMN_NAMES: ReadonlySet<string> = new Set(AUDIT_COLUMNS.map((c) => c.name));
