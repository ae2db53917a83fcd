/** Renders docs/data-model.md from the data model tables (a test fails when the file is stale). */

import { renderPlatformDataModelDocs } from '../destinations/datamodel-docs.js';
import { DEFAULT_GROUP_ROWS, ROW_GROUP_BYTES } from '../destinations/files/parquet.js';
import { AUDIT_COLUMNS, type ColumnType } from './datamodel.js';

const PARQUET: Record<ColumnType, string> = {
  string: 'BYTE_ARRAY (STRING)',
  int: 'INT64',
  float: 'DOUBLE',
  timestamp: 'INT64 TIMESTAMP(MILLIS, UTC)',
};
const TABLEFILE: Record<ColumnType, string> = {
  string: 'text',
  int: 'integer',
  float: 'real',
  timestamp: 'timestamp (dual: date serial number and text)',
};
const TSDB: Record<ColumnType, string> = { string: 'string', int: 'integer (`i`)', float: 'float', timestamp: '—' };

export function renderDataModelDocs(): string {
  const rows = AUDIT_COLUMNS.map((c) => {
    const tsdb =
      c.tsdb === 'tag'
        ? 'tag'
        : c.tsdb === 'field'
          ? `field, ${TSDB[c.type]}`
          : c.tsdb === 'time'
            ? 'point time'
            : 'not stored';
    return `| \`${c.name}\` | ${tsdb} | ${PARQUET[c.type]} | ${TABLEFILE[c.type]} | ${c.doc.replace(/\|/g, '\\|')} |`;
  });
  return `${[
    '# Data model',
    '',
    '<!-- Generated from shared/audit/datamodel.ts, shared/destinations/tsdb/datamodel.ts and the MQTT and monitoring-SaaS mappers by `npm run docs:config`; do not edit by hand. -->',
    '',
    'One table per kind of data yields the tsdb points, the parquet and table-file columns, and this page:',
    'audit events first, then the platform data the edge agent writes (health, sessions, user and log',
    "events, counts, queue metrics, Svc's own data; `../shared/spec/platform-formats.md` §6), then the",
    'MQTT topics and monitoring-SaaS metrics of health and session polls.',
    '',
    '## Audit events',
    '',
    'Measurement `auditEvents.destination.tsdb.measurementName` (default `audit_events`); parquet and',
    'table files hold the same columns, in this order, followed by one text column per static tag. The',
    'same layout is written to tsdb versions 1, 2 and 3.',
    '',
    '| Column | tsdb | parquet | table file | Value |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    'Rules:',
    '',
    '- Empty values are left out of tsdb points (no empty tags, no null fields); in files they are nulls.',
    '- `staticTags` of each destination become tags (tsdb) or extra text columns (files). A static tag may',
    '  not reuse a built-in column name; Svc refuses such a config at start.',
    '- No name is both a tag and a field of the measurement.',
    "- The point time is the event's own time in nanoseconds: `timestamp` in ms × 1,000,000 + the",
    '  process-wide point counter (modulo 1,000,000; platform-formats.md §0.3), so two events of the same',
    '  millisecond and tags keep separate points. It is decided once, when the audit API queues the event,',
    '  and travels with it, so an event delivered again overwrites its own point. An event whose',
    '  `timestamp` the tsdb cannot store (before 1970 or after 2262-04-11) is written at the time Svc',
    '  received it; its `timestamp` column in files keeps the original.',
    '- Files are named `<date>/audit_events_<yyyymmdd>_<digest>.<parquet|qvd>` by the event date (UTC),',
    "  where the digest is taken from the ids of the file's events: one delivered batch makes one file per",
    '  event date, and the same batch delivered again (a crash before its acknowledgement) replaces its file.',
    "- A file holds at most `maxBatchSize` rows. Local mode's queue packs the events of requests that",
    "  arrive together into one message, and counts a batch's events, not its messages, against",
    '  `maxBatchSize` (before, a batch of 1,000 messages could be 10,000 rows, all held in memory at once).',
    '  A message is never split between deliveries, so a single message of more events than',
    '  `maxBatchSize` (a small `maxBatchSize` under concurrent requests) is written as several files of',
    '  at most `maxBatchSize` rows, in order, each named after its own events.',
    `- A parquet file's row groups hold at most ${DEFAULT_GROUP_ROWS[0].toLocaleString('en')} rows (the first), then ${DEFAULT_GROUP_ROWS[1].toLocaleString('en')}, and at most ${ROW_GROUP_BYTES / 2 ** 20} MiB of`,
    '  cell data each (string lengths, 8 bytes per number; a larger row gets a row group of its own): the',
    '  writer holds one row group at a time, and a local file is written as it is encoded, beside its final',
    '  name, then synced and renamed, so it appears whole or not at all.',
    '- `duration` is also an InfluxQL keyword: quote it in queries (`SELECT "duration" FROM audit_events`).',
    '',
    ...renderPlatformDataModelDocs(),
  ]
    .join('\n')
    .replace(/\n+$/, '')}\n`;
}
