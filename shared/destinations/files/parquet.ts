/**
 * Encodes a table (declared columns + rows of cells) as one Apache Parquet file in memory, with
 * hyparquet-writer and an explicit schema: a column's parquet type comes from its declared
 * ColumnType, never from the values, so an all-null column (or a file with no rows) keeps its type.
 *
 * Type mapping (every column is OPTIONAL; a null cell is written as a parquet null, never 0 or ''):
 *
 * | ColumnType  | Parquet physical type | Logical type (legacy converted type)                       | JS cell value                    |
 * |-------------|-----------------------|------------------------------------------------------------|----------------------------------|
 * | `string`    | BYTE_ARRAY            | STRING (UTF8)                                              | string, written as UTF-8         |
 * | `int`       | INT64                 | none: plain signed 64-bit                                  | safe integer (within ±2^53-1)    |
 * | `float`     | DOUBLE                | none                                                       | any number (incl. -0, ±∞, NaN)   |
 * | `timestamp` | INT64                 | TIMESTAMP(MILLIS, isAdjustedToUTC=true) (TIMESTAMP_MILLIS) | epoch milliseconds, safe integer |
 *
 * DuckDB reads them as VARCHAR, BIGINT, DOUBLE and TIMESTAMP WITH TIME ZONE; hyparquet as string,
 * bigint, number and Date.
 * Pages are Snappy-compressed (hyparquet-writer's built-in codec) unless `compressed: false`.
 *
 * Memory is bounded by the row group, not the file: a row group closes at `rowGroupSize` rows or
 * at `rowGroupBytes` of cell data, whichever comes first, and only that row group's converted
 * values and encoded bytes are held at a time (`parquetChunks` hands the file out row group by
 * row group into one reused buffer). Encoding a whole 1,000-event batch at once held its values
 * twice over (as cells, then as UTF-8 copies) plus a buffer doubled up to the file's size: ≈ 30 MB
 * of peak RSS per batch of 2 KB events, which let the heap grow under the audit load.
 */
import { ByteWriter, type ColumnSource, ParquetWriter, type SchemaElement } from 'hyparquet-writer';
import type { CellValue, ColumnType } from '../../audit/datamodel.js';
import { joinChunks } from '../../util/files.js';

export interface TableColumn {
  name: string;
  type: ColumnType;
}

/**
 * Cell data per row group, at most (a row group holds at least one row): 1 MiB. Counted as a
 * string's length in UTF-16 code units and 8 bytes per number, before encoding; the bound is on
 * what the writer holds, not on the file's layout, so a reader sees the same rows either way.
 */
export const ROW_GROUP_BYTES = 1 << 20;

/** Rows per row group by default (hyparquet-writer's own default): 1,000 in the first, then 100,000. */
export const DEFAULT_GROUP_ROWS = [1000, 100_000] as const;

export interface EncodeOptions {
  /** Rows per row group (default: hyparquet-writer's, 1,000 then 100,000). */
  rowGroupSize?: number;
  /** Cell data per row group, at most (default ROW_GROUP_BYTES). */
  rowGroupBytes?: number;
  /** Snappy-compress the pages (default true). */
  compressed?: boolean;
}

/** The parquet schema element of one column (all OPTIONAL). */
function schemaElement(column: TableColumn): SchemaElement {
  const { name } = column;
  switch (column.type) {
    case 'string':
      return {
        name,
        type: 'BYTE_ARRAY',
        converted_type: 'UTF8',
        logical_type: { type: 'STRING' },
        repetition_type: 'OPTIONAL',
      };
    case 'int':
      return { name, type: 'INT64', repetition_type: 'OPTIONAL' };
    case 'float':
      return { name, type: 'DOUBLE', repetition_type: 'OPTIONAL' };
    case 'timestamp':
      return {
        name,
        type: 'INT64',
        converted_type: 'TIMESTAMP_MILLIS',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' },
        repetition_type: 'OPTIONAL',
      };
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'no value (the row lacks the column)';
  if (typeof value === 'string')
    return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number') return `number ${String(value)}`;
  return typeof value;
}

function mismatch(column: TableColumn, rowIndex: number, value: unknown, expected: string): Error {
  return new Error(
    `parquet: column "${column.name}" (${column.type}) row ${rowIndex}: expected ${expected}, got ${describe(value)}`,
  );
}

/** One column's values in the form the writer takes: strings, bigints (INT64) or numbers, and nulls. */
function columnValues(
  column: TableColumn,
  rows: readonly Record<string, CellValue>[],
  start: number,
  end: number,
): (string | number | bigint | null)[] {
  const out = new Array<string | number | bigint | null>(end - start);
  const { name, type } = column;
  for (let i = start; i < end; i++) {
    // Read through `unknown`: the static type promises CellValue, the check makes sure.
    const value: unknown = rows[i]?.[name];
    const at = i - start;
    if (value === null) {
      out[at] = null;
      continue;
    }
    switch (type) {
      case 'string':
        if (typeof value !== 'string') throw mismatch(column, i, value, 'a string or null');
        out[at] = value;
        break;
      case 'float':
        if (typeof value !== 'number') throw mismatch(column, i, value, 'a number or null');
        out[at] = value;
        break;
      case 'int':
        if (typeof value !== 'number' || !Number.isSafeInteger(value))
          throw mismatch(column, i, value, 'a safe integer or null');
        out[at] = BigInt(value);
        break;
      case 'timestamp':
        if (typeof value !== 'number' || !Number.isSafeInteger(value))
          throw mismatch(column, i, value, 'epoch milliseconds (a safe integer) or null');
        out[at] = BigInt(value);
        break;
    }
  }
  return out;
}

/** The cell data of one row, as ROW_GROUP_BYTES counts it. */
function rowBytes(columns: readonly TableColumn[], row: Record<string, CellValue> | undefined): number {
  let bytes = 0;
  for (const { name } of columns) {
    const value: unknown = row?.[name];
    if (typeof value === 'string') bytes += value.length;
    else if (typeof value === 'number') bytes += 8;
  }
  return bytes;
}

/** The end (exclusive) of the row group that starts at `start`. */
function groupEnd(
  columns: readonly TableColumn[],
  rows: readonly Record<string, CellValue>[],
  start: number,
  maxRows: number,
  maxBytes: number,
): number {
  const limit = Math.min(rows.length, start + maxRows);
  let end = start + 1;
  let bytes = rowBytes(columns, rows[start]);
  while (end < limit) {
    bytes += rowBytes(columns, rows[end]);
    if (bytes > maxBytes) break;
    end++;
  }
  return end;
}

function positiveInteger(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isSafeInteger(value) && value > 0))
    throw new Error(`parquet: ${name} must be a positive integer, got ${String(value)}`);
}

/**
 * One parquet file holding `rows` under `columns` (in that order), in chunks: the first row group
 * (after the file's magic), each further row group, then the footer. Each chunk is a view of one
 * reused buffer, valid until the next is asked for: copy it or write it out before. A row's keys
 * that are not columns are ignored; a column missing from a row, or a cell whose JS type does not
 * fit its column, throws an Error naming the column and the row index (when its row group is
 * reached: chunks before it may have been handed out).
 */
export function* parquetChunks(
  columns: readonly TableColumn[],
  rows: readonly Record<string, CellValue>[],
  options: EncodeOptions = {},
): Generator<Uint8Array, void, undefined> {
  const seen = new Set<string>();
  for (const column of columns) {
    if (column.name === '') throw new Error('parquet: a column name is empty');
    if (seen.has(column.name)) throw new Error(`parquet: column "${column.name}" is declared twice`);
    seen.add(column.name);
  }
  positiveInteger('rowGroupSize', options.rowGroupSize);
  positiveInteger('rowGroupBytes', options.rowGroupBytes);
  const maxBytes = options.rowGroupBytes ?? ROW_GROUP_BYTES;
  const schema: SchemaElement[] = [{ name: 'root', num_children: columns.length }, ...columns.map(schemaElement)];
  const writer = new ByteWriter();
  const parquet = new ParquetWriter({
    writer,
    schema,
    codec: options.compressed === false ? 'UNCOMPRESSED' : 'SNAPPY',
  });
  /** What the writer holds since the last chunk; the buffer is reused (ParquetWriter keeps absolute offsets in `offset`). */
  const take = (): Uint8Array => {
    const bytes = writer.getBytes();
    writer.index = 0;
    return bytes;
  };
  let start = 0;
  for (let group = 0; start < rows.length; group++) {
    const maxRows = options.rowGroupSize ?? DEFAULT_GROUP_ROWS[Math.min(group, DEFAULT_GROUP_ROWS.length - 1)] ?? 1;
    const end = groupEnd(columns, rows, start, maxRows, maxBytes);
    const columnData: ColumnSource[] = columns.map((column) => ({
      name: column.name,
      data: columnValues(column, rows, start, end),
    }));
    // A ByteWriter has no flush, so write() returns no promise: the row group is encoded now.
    void parquet.write({ columnData, rowGroupSize: end - start });
    start = end;
    yield take();
  }
  void parquet.finish();
  yield take();
}

/** One parquet file holding `rows` under `columns`, as one array (parquetChunks, joined). */
export function encodeParquet(
  columns: readonly TableColumn[],
  rows: readonly Record<string, CellValue>[],
  options: EncodeOptions = {},
): Uint8Array {
  return joinChunks(parquetChunks(columns, rows, options));
}
