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
 */
import { parquetWriteBuffer, type ColumnSource, type SchemaElement } from 'hyparquet-writer';
import type { CellValue, ColumnType } from '../../audit/datamodel.js';

export interface TableColumn {
  name: string;
  type: ColumnType;
}

export interface EncodeOptions {
  /** Rows per row group (default: hyparquet-writer's, 1,000 then 100,000). */
  rowGroupSize?: number;
  /** Snappy-compress the pages (default true). */
  compressed?: boolean;
}

/** The parquet schema element of one column (all OPTIONAL). */
function schemaElement(column: TableColumn): SchemaElement {
  const { name } = column;
  switch (column.type) {
    case 'string':
      return { name, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type: 'OPTIONAL' };
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
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number') return `number ${String(value)}`;
  return typeof value;
}

function mismatch(column: TableColumn, rowIndex: number, value: unknown, expected: string): Error {
  return new Error(`parquet: column "${column.name}" (${column.type}) row ${rowIndex}: expected ${expected}, got ${describe(value)}`);
}

/** One column's values in the form the writer takes: strings, bigints (INT64) or numbers, and nulls. */
function columnValues(column: TableColumn, rows: readonly Record<string, CellValue>[]): (string | number | bigint | null)[] {
  const out = new Array<string | number | bigint | null>(rows.length);
  const { name, type } = column;
  for (let i = 0; i < rows.length; i++) {
    // Read through `unknown`: the static type promises CellValue, the check makes sure.
    const value: unknown = rows[i]?.[name];
    if (value === null) {
      out[i] = null;
      continue;
    }
    switch (type) {
      case 'string':
        if (typeof value !== 'string') throw mismatch(column, i, value, 'a string or null');
        out[i] = value;
        break;
      case 'float':
        if (typeof value !== 'number') throw mismatch(column, i, value, 'a number or null');
        out[i] = value;
        break;
      case 'int':
        if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw mismatch(column, i, value, 'a safe integer or null');
        out[i] = BigInt(value);
        break;
      case 'timestamp':
        if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw mismatch(column, i, value, 'epoch milliseconds (a safe integer) or null');
        out[i] = BigInt(value);
        break;
    }
  }
  return out;
}

/**
 * One parquet file holding `rows` under `columns` (in that order). A row's keys that are not
 * columns are ignored; a column missing from a row, or a cell whose JS type does not fit its
 * column, throws an Error naming the column and the row index.
 */
export function encodeParquet(columns: readonly TableColumn[], rows: readonly Record<string, CellValue>[], options: EncodeOptions = {}): Uint8Array {
  const seen = new Set<string>();
  for (const column of columns) {
    if (column.name === '') throw new Error('parquet: a column name is empty');
    if (seen.has(column.name)) throw new Error(`parquet: column "${column.name}" is declared twice`);
    seen.add(column.name);
  }
  if (options.rowGroupSize !== undefined && !(Number.isSafeInteger(options.rowGroupSize) && options.rowGroupSize > 0)) {
    throw new Error(`parquet: rowGroupSize must be a positive integer, got ${String(options.rowGroupSize)}`);
  }
  const schema: SchemaElement[] = [{ name: 'root', num_children: columns.length }, ...columns.map(schemaElement)];
  const columnData: ColumnSource[] = columns.map((column) => ({ name: column.name, data: columnValues(column, rows) }));
  const buffer = parquetWriteBuffer({
    columnData,
    schema,
    codec: options.compressed === false ? 'UNCOMPRESSED' : 'SNAPPY',
    ...(options.rowGroupSize === undefined ? {} : { rowGroupSize: options.rowGroupSize }),
  });
  return new Uint8Array(buffer);
}
