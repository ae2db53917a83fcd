/** Renders docs/data-model.md from the data model tables (a test fails when the file is stale). */
import { AUDIT_COLUMNS, type ColumnType } from './audit.js';

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
    const tsdb = c.tsdb === 'tag' ? 'tag' : c.tsdb === 'field' ? `field, ${TSDB[c.type]}` : c.tsdb === 'time' ? 'point time' : 'not stored';
    return `| \`${c.name}\` | ${tsdb} | ${PARQUET[c.type]} | ${TABLEFILE[c.type]} | ${c.doc.replace(/\|/g, '\\|')} |`;
  });
  return `${[
    '# Data model',
    '',
    '<!-- Generated from shared/datamodel/audit.ts by `npm run docs:config`; do not edit by hand. -->',
    '',
    'One table per kind of data yields the tsdb points, the parquet and table-file columns, and this page.',
    'The platform data written by the edge agent (health, sessions, user and log events, counters) follows',
    '`../shared/spec/platform-formats.md` §6.',
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
    '- The point time is the event\'s own time in nanoseconds: `timestamp` in ms × 1,000,000 + the',
    '  process-wide point counter (modulo 1,000,000; platform-formats.md §0.3), so two events of the same',
    '  millisecond and tags keep separate points. The writer handler does not write an event id it has',
    '  written before; an event whose write succeeded but was reported failed (a lost response) can be',
    '  stored twice — `event_id` tells the copies apart.',
    '- Files are named `<date>/audit_events_<yyyymmdd>_<writer>_<sequence>.<parquet|qvd>` by the event date',
    '  (UTC); one delivered batch makes one file per event date.',
    '- `duration` is also an InfluxQL keyword: quote it in queries (`SELECT "duration" FROM audit_events`).',
  ].join('\n')}\n`;
}
