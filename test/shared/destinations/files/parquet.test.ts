/**
 * The parquet encoder, checked by reading every file back with two independent readers:
 * hyparquet (JS) and DuckDB (C++), including the column types each reader sees.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { type FileMetaData, parquetMetadata, parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_COLUMNS, type CellValue, type ColumnType } from '../../../../shared/audit/datamodel.js';
import { validateEnvelope } from '../../../../shared/audit/envelope.js';
import { auditFileColumns, auditRow } from '../../../../shared/destinations/files/mappers.js';
import {
  encodeParquet,
  parquetChunks,
  ROW_GROUP_BYTES,
  type TableColumn,
} from '../../../../shared/destinations/files/parquet.js';
import type { AuditQueuedEvent } from '../../../../shared/queue/events.js';
import { envelope } from '../../../support/audit.js';

type Row = Record<string, CellValue>;

const DUCKDB_TYPE: Record<ColumnType, string> = {
  string: 'VARCHAR',
  int: 'BIGINT',
  float: 'DOUBLE',
  timestamp: 'TIMESTAMP WITH TIME ZONE',
};

let dir = '';
let duck: DuckDBConnection;
let instance: DuckDBInstance;
let fileCount = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parquet-encode-'));
  instance = await DuckDBInstance.create(':memory:');
  duck = await instance.connect();
});

afterAll(() => {
  duck.closeSync();
  instance.closeSync();
  rmSync(dir, { recursive: true, force: true });
});

function arrayBuffer(bytes: Uint8Array): ArrayBuffer {
  const out = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(out).set(bytes);
  return out;
}

/** A cell as both readers should give it back, in one comparable form: int → bigint, timestamp → epoch ms. */
function expected(type: ColumnType, value: CellValue | undefined): unknown {
  if (value === null || value === undefined) return null;
  if (type === 'int') return BigInt(value);
  return value;
}

/** A value a reader gave back, in the same comparable form. */
function normal(type: ColumnType, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (type === 'timestamp') {
    if (!(value instanceof Date)) throw new Error(`timestamp read back as ${typeof value}, not a Date`);
    return value.getTime();
  }
  return value;
}

interface ReadBack {
  metadata: FileMetaData;
  hyparquet: Record<string, unknown>[];
  duckdb: Record<string, unknown>[];
  duckTypes: Record<string, string>;
}

/** Reads `bytes` with both readers; rows come back in the comparable form of `expected()`. */
async function readBack(columns: readonly TableColumn[], bytes: Uint8Array): Promise<ReadBack> {
  const buffer = arrayBuffer(bytes);
  const metadata = parquetMetadata(buffer);
  const hyRows = await parquetReadObjects({ file: buffer });
  const file = join(dir, `t${++fileCount}.parquet`);
  writeFileSync(file, bytes);
  const described = await duck.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}')`);
  const duckTypes: Record<string, string> = {};
  for (const row of described.getRowObjectsJS()) {
    const [name, type] = [row['column_name'], row['column_type']];
    if (typeof name !== 'string' || typeof type !== 'string')
      throw new Error('DESCRIBE gave no column_name / column_type');
    duckTypes[name] = type;
  }
  const selected = await duck.runAndReadAll(`SELECT * FROM read_parquet('${file}')`);
  const toNormal = (row: Record<string, unknown>) =>
    Object.fromEntries(columns.map((c) => [c.name, normal(c.type, row[c.name])]));
  return { metadata, hyparquet: hyRows.map(toNormal), duckdb: selected.getRowObjectsJS().map(toNormal), duckTypes };
}

/** Encodes, reads back with both readers, and checks values, types and schema; returns what was read. */
async function roundTrip(
  columns: readonly TableColumn[],
  rows: readonly Row[],
  options?: Parameters<typeof encodeParquet>[2],
): Promise<ReadBack> {
  const bytes = encodeParquet(columns, rows, options);
  expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('PAR1');
  expect(new TextDecoder().decode(bytes.subarray(bytes.length - 4))).toBe('PAR1');
  const back = await readBack(columns, bytes);
  const want = rows.map((row) => Object.fromEntries(columns.map((c) => [c.name, expected(c.type, row[c.name])])));
  expect(back.hyparquet).toEqual(want);
  expect(back.duckdb).toEqual(want);
  expect(back.duckTypes).toEqual(Object.fromEntries(columns.map((c) => [c.name, DUCKDB_TYPE[c.type]])));
  expect(Number(back.metadata.num_rows)).toBe(rows.length);
  expect(back.metadata.schema.slice(1).map((e) => [e.name, e.repetition_type])).toEqual(
    columns.map((c) => [c.name, 'OPTIONAL']),
  );
  return back;
}

const ALL_TYPES: TableColumn[] = [
  { name: 's', type: 'string' },
  { name: 'i', type: 'int' },
  { name: 'f', type: 'float' },
  { name: 't', type: 'timestamp' },
];

describe('encodeParquet', () => {
  it('declares the schema: STRING, INT64, DOUBLE, TIMESTAMP(MILLIS, UTC), all OPTIONAL, Snappy', async () => {
    const { metadata } = await roundTrip(ALL_TYPES, [{ s: 'a', i: 1, f: 1.5, t: 0 }]);
    const [root, s, i, f, t] = metadata.schema;
    expect(root?.num_children).toBe(4);
    expect(s).toMatchObject({
      name: 's',
      type: 'BYTE_ARRAY',
      converted_type: 'UTF8',
      logical_type: { type: 'STRING' },
    });
    expect(i).toMatchObject({ name: 'i', type: 'INT64' });
    expect(i?.converted_type).toBeUndefined();
    expect(i?.logical_type).toBeUndefined();
    expect(f).toMatchObject({ name: 'f', type: 'DOUBLE' });
    expect(t).toMatchObject({
      name: 't',
      type: 'INT64',
      converted_type: 'TIMESTAMP_MILLIS',
      logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' },
    });
    for (const chunk of metadata.row_groups[0]?.columns ?? []) expect(chunk.meta_data?.codec).toBe('SNAPPY');
    expect(metadata.row_groups[0]?.columns).toHaveLength(4);
  });

  it('writes all four types with values and nulls, nulls as nulls (not 0 or "")', async () => {
    const rows: Row[] = [
      { s: 'alpha', i: 42, f: 3.25, t: Date.parse('2026-11-22T10:15:22.123Z') },
      { s: null, i: null, f: null, t: null },
      { s: '', i: 0, f: 0, t: 0 },
      { s: null, i: -7, f: null, t: Date.parse('1969-12-31T23:59:59.999Z') },
      { s: 'omega', i: null, f: -2.5, t: null },
    ];
    const back = await roundTrip(ALL_TYPES, rows);
    // The second row is all null in both readers; the third keeps its empty string and zeros.
    expect(back.duckdb[1]).toEqual({ s: null, i: null, f: null, t: null });
    expect(back.duckdb[2]).toEqual({ s: '', i: 0n, f: 0, t: 0 });
    const counts = await duck.runAndReadAll(
      `SELECT count(s), count(i), count(f), count(t) FROM read_parquet('${join(dir, `t${fileCount}.parquet`)}')`,
    );
    expect(counts.getRows()[0]).toEqual([3n, 3n, 3n, 3n]);
  });

  it('keeps unicode strings intact (multi-byte, astral, combining, control, long)', async () => {
    const texts = [
      'Ålesund – São Paulo',
      '日本語テキスト',
      '😀👩‍👩‍👧‍👦 emoji',
      'e\u0301 combining',
      'tab\tnew\nline "quoted" \\ back',
      '\u0000nul inside',
      'x'.repeat(40_000),
      'Ünïcödé'.repeat(500),
    ];
    await roundTrip(
      [{ name: 's', type: 'string' }],
      texts.map((s) => ({ s })),
    );
  });

  it('writes int extremes ±(2^53-1) exactly', async () => {
    const values = [Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 0, -1, 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 32 + 1];
    const back = await roundTrip(
      [{ name: 'i', type: 'int' }],
      values.map((i) => ({ i })),
    );
    expect(back.duckdb[0]).toEqual({ i: 9007199254740991n });
    expect(back.duckdb[1]).toEqual({ i: -9007199254740991n });
  });

  it('writes floats exactly: 0.1, -0, large, tiny, integral, ±Infinity, NaN', async () => {
    const values = [
      0.1,
      -0,
      0,
      1e308,
      -1.7976931348623157e308,
      Number.MIN_VALUE,
      2 ** 53 + 2,
      123456789.123456789,
      1 / 3,
      7,
      Infinity,
      -Infinity,
      Number.NaN,
    ];
    const back = await roundTrip(
      [{ name: 'f', type: 'float' }],
      values.map((f) => ({ f })),
    );
    for (const [index, value] of values.entries()) {
      expect(Object.is(back.hyparquet[index]?.['f'], value), `hyparquet row ${index}`).toBe(true);
      expect(Object.is(back.duckdb[index]?.['f'], value), `duckdb row ${index}`).toBe(true);
    }
  });

  it('round-trips timestamps to the same instant (UTC), before and after the epoch', async () => {
    const values = [
      '2026-11-22T10:15:22.123Z',
      '2026-11-22T11:15:22.123+01:00',
      '1970-01-01T00:00:00.000Z',
      '1900-01-01T00:00:00.001Z',
      '2099-12-31T23:59:59.999Z',
    ].map((s) => Date.parse(s));
    await roundTrip(
      [{ name: 't', type: 'timestamp' }],
      values.map((t) => ({ t })),
    );
    // DuckDB sees the same instant: compare on its own epoch_ms and in UTC text.
    const file = join(dir, `t${fileCount}.parquet`);
    const reader = await duck.runAndReadAll(
      `SELECT epoch_ms(t) AS ms, strftime(timezone('UTC', t), '%Y-%m-%dT%H:%M:%S.%g') AS utc FROM read_parquet('${file}')`,
    );
    const rows = reader.getRowObjectsJS();
    expect(rows.map((r) => r['ms'])).toEqual(values.map((v) => BigInt(v)));
    expect(rows[0]?.['utc']).toBe('2026-11-22T10:15:22.123');
    expect(rows[1]?.['utc']).toBe('2026-11-22T10:15:22.123');
  });

  it('writes a file with zero rows that keeps its columns and types', async () => {
    const { metadata } = await roundTrip(ALL_TYPES, []);
    expect(metadata.num_rows).toBe(0n);
    expect(metadata.schema.slice(1).map((e) => e.type)).toEqual(['BYTE_ARRAY', 'INT64', 'DOUBLE', 'INT64']);
  });

  it('keeps the declared type of an all-null column', async () => {
    const rows: Row[] = Array.from({ length: 5 }, (_, n) => ({ s: null, i: null, f: null, t: null, k: `row ${n}` }));
    const columns = [...ALL_TYPES, { name: 'k', type: 'string' } satisfies TableColumn];
    const { metadata } = await roundTrip(columns, rows);
    expect(metadata.schema[4]).toMatchObject({
      name: 't',
      type: 'INT64',
      logical_type: { type: 'TIMESTAMP', unit: 'MILLIS' },
    });
    expect(metadata.row_groups[0]?.columns[0]?.meta_data?.statistics?.null_count).toBe(5n);
  });

  it('writes 10,000 rows in several row groups, and honours rowGroupSize and compressed: false', async () => {
    const base = Date.parse('2026-01-01T00:00:00.000Z');
    const rows: Row[] = Array.from({ length: 10_000 }, (_, n) => ({
      s: n % 7 === 0 ? null : `user-${n % 250}-${'é'.repeat(n % 5)}`,
      i: n % 11 === 0 ? null : n * 1_000_003 - 5_000_000_000,
      f: n % 13 === 0 ? null : n / 7,
      t: n % 17 === 0 ? null : base + n * 61_001,
    }));
    const byDefault = await roundTrip(ALL_TYPES, rows);
    expect(byDefault.metadata.row_groups.map((g) => Number(g.num_rows))).toEqual([1000, 9000]);
    const file = join(dir, `t${fileCount}.parquet`);
    const sums = await duck.runAndReadAll(
      `SELECT count(*), count(s), sum(i), max(epoch_ms(t)) FROM read_parquet('${file}')`,
    );
    const present = rows.filter((r) => r['i'] !== null).reduce((sum, r) => sum + BigInt(r['i'] ?? 0), 0n);
    expect(sums.getRows()[0]).toEqual([
      10_000n,
      BigInt(rows.filter((r) => r['s'] !== null).length),
      present,
      BigInt(base + 9_999 * 61_001),
    ]);

    const plain = await roundTrip(ALL_TYPES, rows, { rowGroupSize: 4000, compressed: false });
    expect(plain.metadata.row_groups.map((g) => Number(g.num_rows))).toEqual([4000, 4000, 2000]);
    for (const group of plain.metadata.row_groups)
      for (const chunk of group.columns) expect(chunk.meta_data?.codec).toBe('UNCOMPRESSED');
    for (const group of byDefault.metadata.row_groups)
      for (const chunk of group.columns) expect(chunk.meta_data?.codec).toBe('SNAPPY');
  });

  it('closes a row group at rowGroupBytes of cell data (string lengths, 8 per number), however few its rows', async () => {
    // Each row: a 100-character string and a number = 108 bytes; 1,000 bytes hold 9 rows.
    const rows: Row[] = Array.from({ length: 40 }, (_, n) => ({
      s: `${n}`.padStart(100, 'x'),
      i: n,
      f: null,
      t: null,
    }));
    const bounded = await roundTrip(ALL_TYPES, rows, { rowGroupBytes: 1000 });
    expect(bounded.metadata.row_groups.map((g) => Number(g.num_rows))).toEqual([9, 9, 9, 9, 4]);
    // A row larger than the bound gets a row group of its own rather than none.
    const alone = await roundTrip(ALL_TYPES, rows.slice(0, 3), { rowGroupBytes: 50 });
    expect(alone.metadata.row_groups.map((g) => Number(g.num_rows))).toEqual([1, 1, 1]);
    // The default bound (1 MiB): 2 KB audit-sized strings close the first row group before its 1,000 rows.
    const big: Row[] = Array.from({ length: 1200 }, (_, n) => ({
      s: `${n}`.padStart(2048, 'y'),
      i: null,
      f: null,
      t: null,
    }));
    const byDefault = await roundTrip(ALL_TYPES, big);
    const perGroup = Math.floor(ROW_GROUP_BYTES / 2048);
    expect(byDefault.metadata.row_groups.map((g) => Number(g.num_rows))).toEqual([
      perGroup,
      perGroup,
      1200 - 2 * perGroup,
    ]);
    expect(() => encodeParquet(ALL_TYPES, [], { rowGroupBytes: 0 })).toThrow(/rowGroupBytes/);
  });

  it('hands the file out in chunks, one per row group and then the footer, which joined are the file', () => {
    const rows: Row[] = Array.from({ length: 30 }, (_, n) => ({
      s: `${n}`.padStart(100, 'x'),
      i: n,
      f: n / 3,
      t: 1_700_000_000_000 + n,
    }));
    // Each copied as it comes: a chunk is a view of the encoder's reused buffer.
    const chunks: Uint8Array[] = [];
    for (const chunk of parquetChunks(ALL_TYPES, rows, { rowGroupSize: 10 })) chunks.push(chunk.slice());
    expect(chunks).toHaveLength(4);
    expect(new TextDecoder().decode(chunks[0]?.subarray(0, 4))).toBe('PAR1');
    expect(Buffer.concat(chunks)).toEqual(Buffer.from(encodeParquet(ALL_TYPES, rows, { rowGroupSize: 10 })));
    // A bad cell fails when its row group is reached: the chunks before it were already handed out.
    const bad: Row[] = [...rows.slice(0, 10), { s: 5, i: 0, f: 0, t: 0 }];
    const seen: number[] = [];
    expect(() => {
      for (const chunk of parquetChunks(ALL_TYPES, bad, { rowGroupSize: 10 })) seen.push(chunk.length);
    }).toThrow(/column "s" \(string\) row 10: expected a string or null, got number 5/);
    expect(seen).toHaveLength(1);
  });

  it('writes real audit rows (auditRow / auditFileColumns) with static tags', async () => {
    const queued = (over: Record<string, unknown>, clientVersion: string | null = '0.3.2'): AuditQueuedEvent => {
      const checked = validateEnvelope(envelope(over));
      if (!checked.ok) throw new Error(`fixture envelope is invalid: ${JSON.stringify(checked.errors)}`);
      return {
        kind: 'audit',
        id: checked.envelope.eventId.toLowerCase(),
        receivedAt: '2026-11-22T10:15:23.456Z',
        event: checked.envelope,
        meta: { clientIp: '127.0.0.1', clientVersion },
      };
    };
    const events = [
      queued({}),
      queued({
        type: 'object.view.duration',
        timestamp: '2026-11-22T11:15:22.5+01:00',
        correlationId: undefined,
        payload: {
          context: { appId: 'E7AF59A0-C243-480D-9571-08727551A66F', user: 'UserDirectory=LAB; UserId=göran' },
          event: { objectId: 'obj-7', duration: 1234.567, leftAt: '2026-11-22T10:16:00Z' },
        },
      }),
      queued(
        {
          type: 'app.model.validated',
          payload: {
            context: { sheetId: 'ß-sheet' },
            event: { selectionTxnId: 'A0B1C2D3-0000-4000-8000-000000000001', dataStateId: Number.MAX_SAFE_INTEGER },
          },
        },
        null,
      ),
      queued({
        type: 'screenshot.url.received',
        source: undefined,
        payload: {
          event: {
            screenshotUrl: 'https://example.com/shot.png?x=1',
            selectionTxnId: 'a0b1c2d3-0000-4000-8000-000000000002',
          },
        },
      }),
      queued({
        type: 'event.unsupported.visualization',
        payload: {
          event: {
            vizType: 'sankey 📈',
            selectionTxnId: 'a0b1c2d3-0000-4000-8000-000000000003',
            big: 'x'.repeat(40_000),
          },
        },
      }),
    ];
    const tags = [
      { name: 'env', value: 'prod' },
      { name: 'site', value: 'Malmö' },
    ];
    const columns = auditFileColumns(tags);
    const rows = events.map((q) => auditRow(q, tags));
    expect(columns.map((c) => c.name)).toEqual([...AUDIT_COLUMNS.map((c) => c.name), 'env', 'site']);
    const back = await roundTrip(columns, rows);
    // Spot checks against the data model, through DuckDB.
    expect(back.duckdb[1]).toMatchObject({
      event_type: 'object.view.duration',
      duration: 1234.567,
      object_id: 'obj-7',
      user_id: 'UserDirectory=LAB; UserId=göran',
      correlation_id: null,
      app_id: 'e7af59a0-c243-480d-9571-08727551a66f',
      timestamp: Date.parse('2026-11-22T10:15:22.500Z'),
    });
    expect(back.duckdb[2]).toMatchObject({
      data_state_id: BigInt(Number.MAX_SAFE_INTEGER),
      selection_txn_id: 'a0b1c2d3-0000-4000-8000-000000000001',
      client_version: null,
      duration: null,
    });
    expect(back.duckdb[3]).toMatchObject({
      source_name: null,
      screenshot_url: 'https://example.com/shot.png?x=1',
      env: 'prod',
      site: 'Malmö',
    });
    expect(String(back.duckdb[4]?.['payload'])).toHaveLength(32_768);
    expect(back.duckTypes).toMatchObject({
      timestamp: 'TIMESTAMP WITH TIME ZONE',
      received_at: 'TIMESTAMP WITH TIME ZONE',
      schema_version: 'BIGINT',
      data_state_id: 'BIGINT',
      duration: 'DOUBLE',
      payload: 'VARCHAR',
      env: 'VARCHAR',
    });
  });

  it('ignores row keys that are not columns, and writes columns in the declared order', async () => {
    const back = await roundTrip(
      [
        { name: 'b', type: 'int' },
        { name: 'a', type: 'string' },
      ],
      [{ a: 'x', b: 1, extra: 'ignored' }],
    );
    expect(Object.keys(back.duckTypes)).toEqual(['b', 'a']);
  });

  describe('rejects a cell that does not fit its column, naming the column and the row', () => {
    const cases: { what: string; column: TableColumn; value: CellValue | undefined; message: RegExp }[] = [
      {
        what: 'a number in a string column',
        column: { name: 'user_id', type: 'string' },
        value: 7,
        message: /column "user_id" \(string\) row 2: expected a string or null, got number 7/,
      },
      {
        what: 'a string in an int column',
        column: { name: 'schema_version', type: 'int' },
        value: '1',
        message: /column "schema_version" \(int\) row 2: .*got string "1"/,
      },
      {
        what: 'a fraction in an int column',
        column: { name: 'data_state_id', type: 'int' },
        value: 1.5,
        message: /column "data_state_id" \(int\) row 2: expected a safe integer/,
      },
      {
        what: 'an unsafe integer in an int column',
        column: { name: 'n', type: 'int' },
        value: 2 ** 53,
        message: /column "n" \(int\) row 2/,
      },
      {
        what: 'a string in a float column',
        column: { name: 'duration', type: 'float' },
        value: '1.5',
        message: /column "duration" \(float\) row 2: expected a number/,
      },
      {
        what: 'a date string in a timestamp column',
        column: { name: 'received_at', type: 'timestamp' },
        value: '2026-11-22T10:15:22Z',
        message: /column "received_at" \(timestamp\) row 2: expected epoch milliseconds/,
      },
      {
        what: 'a fractional timestamp',
        column: { name: 'timestamp', type: 'timestamp' },
        value: 1.5,
        message: /column "timestamp" \(timestamp\) row 2/,
      },
      {
        what: 'NaN as a timestamp',
        column: { name: 'timestamp', type: 'timestamp' },
        value: Number.NaN,
        message: /column "timestamp" \(timestamp\) row 2/,
      },
      {
        what: 'a missing cell',
        column: { name: 'app_id', type: 'string' },
        value: undefined,
        message: /column "app_id" \(string\) row 2: .*no value/,
      },
    ];
    for (const { what, column, value, message } of cases) {
      it(what, () => {
        const good: CellValue = column.type === 'string' ? 'ok' : 1;
        const rows: Row[] = [
          { [column.name]: good },
          { [column.name]: null },
          value === undefined ? {} : { [column.name]: value },
        ];
        expect(() => encodeParquet([column], rows)).toThrow(message);
      });
    }
  });

  it('rejects duplicate or empty column names and a bad rowGroupSize', () => {
    expect(() =>
      encodeParquet(
        [
          { name: 'a', type: 'int' },
          { name: 'a', type: 'string' },
        ],
        [],
      ),
    ).toThrow(/column "a" is declared twice/);
    expect(() => encodeParquet([{ name: '', type: 'int' }], [])).toThrow(/empty/);
    expect(() => encodeParquet(ALL_TYPES, [], { rowGroupSize: 0 })).toThrow(/rowGroupSize/);
  });
});
