/**
 * Encoder for the platform's table file (QVD), per /work/shared/spec/tablefile-format.md:
 * XML header + CR LF + NUL, then the symbol tables of all fields back to back, then the bit-packed
 * index table (one little-endian record per row). Column types come from the schema (spec §4.4):
 *
 * | column      | symbol                                                    | NumberFormat / tags                  |
 * |-------------|-----------------------------------------------------------|--------------------------------------|
 * | `string`    | `04` UTF-8 (U+0000 removed, capped at 1 MiB)              | UNKNOWN; `$text` (+ `$ascii`)        |
 * | `int`       | `01` int32, or `06` double + exact digits outside int32   | INTEGER `.`/`,`; `$numeric $integer` |
 * | `float`     | `02` double                                               | UNKNOWN; `$numeric`                  |
 * | `timestamp` | `06` date serial + `YYYY-MM-DD hh:mm:ss.fff` (UTC)        | TIMESTAMP; `$numeric $timestamp`     |
 *
 * `null`/missing cells, NaN and ±Infinity are NULL: no symbol, stored 0 with `Bias` −2. Symbols are
 * in first-appearance order. The output is a pure function of the input when `createdAt` is given.
 */
import { createHash } from 'node:crypto';
import type { CellValue, ColumnType } from '../../../audit/datamodel.js';
import type { FieldHeader, NumberFormat } from './header.js';
import { headerText, renderHeader, wellFormed } from './header.js';
import { epochMsToSerial, formatTimestampUtc, serialToEpochMs } from './serial.js';

export type { CellValue, ColumnType } from '../../../audit/datamodel.js';

export interface TableColumn {
  name: string;
  type: ColumnType;
}

export interface Table {
  name: string;
  columns: readonly TableColumn[];
  rows: readonly Record<string, CellValue>[];
  /** `CreateUtcTime` (whole seconds, UTC). Default: now. */
  createdAt?: Date;
  /**
   * `CreatorDoc` (the id of the producing document). Default: a UUID v4 derived from a SHA-256 of
   * the table (name, columns, `createdAt`, symbols, row count), so equal input gives equal bytes.
   */
  creatorDoc?: string;
}

/** The writer caps each string symbol at this many UTF-8 bytes, at a code-point boundary (spec §5). */
export const MAX_STRING_BYTES = 1_048_576;
/** The writer refuses a field with more distinct values (spec §3.3). */
export const MAX_SYMBOLS = 2 ** 31 - 2;
/** The ECMAScript time range; timestamps outside it are refused. */
const MAX_EPOCH_MS = 8.64e15;

const SYM_INT = 0x01;
const SYM_DOUBLE = 0x02;
const SYM_STRING = 0x04;
const SYM_DUAL_DOUBLE = 0x06;

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

const FORMATS: Record<ColumnType, NumberFormat> = {
  string: { type: 'UNKNOWN', nDec: 0, useThou: 0, fmt: '', dec: '', thou: '' },
  int: { type: 'INTEGER', nDec: 0, useThou: 0, fmt: '', dec: '.', thou: ',' },
  float: { type: 'UNKNOWN', nDec: 0, useThou: 0, fmt: '', dec: '', thou: '' },
  timestamp: { type: 'TIMESTAMP', nDec: 0, useThou: 0, fmt: 'YYYY-MM-DD hh:mm:ss.fff', dec: '', thou: '' },
};

/** A growable byte buffer for the symbol area. */
class ByteSink {
  buf = new Uint8Array(1 << 16);
  view = new DataView(this.buf.buffer);
  pos = 0;
  private readonly encoder = new TextEncoder();

  ensure(extra: number): void {
    const need = this.pos + extra;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  int32(type: number, value: number): void {
    this.ensure(5);
    this.buf[this.pos] = type;
    this.view.setInt32(this.pos + 1, value, true);
    this.pos += 5;
  }

  float64(type: number, value: number): void {
    this.ensure(9);
    this.buf[this.pos] = type;
    this.view.setFloat64(this.pos + 1, value, true);
    this.pos += 9;
  }

  /** UTF-8 text and its NUL; returns the number of text bytes. */
  textZ(text: string): number {
    this.ensure(text.length * 3 + 1);
    const { written } = this.encoder.encodeInto(text, this.buf.subarray(this.pos));
    this.pos += written;
    this.buf[this.pos++] = 0;
    return written;
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

interface EncodedColumn {
  /** Symbol index per row, −1 for NULL. */
  index: Int32Array;
  noOfSymbols: number;
  hasNull: boolean;
  /** Every string symbol is ASCII (string columns only). */
  ascii: boolean;
  offset: number;
  length: number;
}

/**
 * The symbol text for a string cell, as it reads back: U+0000 removed, lone surrogates as U+FFFD,
 * at most {@link MAX_STRING_BYTES} UTF-8 bytes cut at a code-point boundary.
 */
export function normalizeString(value: string): string {
  let text = wellFormed(value.includes('\0') ? value.replaceAll('\0', '') : value);
  if (text.length * 3 > MAX_STRING_BYTES) {
    const bytes = new TextEncoder().encode(text);
    if (bytes.length > MAX_STRING_BYTES) {
      let cut = MAX_STRING_BYTES;
      while (cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut--;
      text = new TextDecoder().decode(bytes.subarray(0, cut));
    }
  }
  return text;
}

const OBJECT_PROTOTYPE: object = Object.prototype;

function mismatch(column: TableColumn, row: number, value: unknown, expected: string): TypeError {
  const got = value === null ? 'null' : typeof value;
  return new TypeError(
    `tablefile: column "${column.name}" (${column.type}), row ${row}: expected ${expected}, got ${got}`,
  );
}

function encodeColumn(column: TableColumn, rows: readonly Record<string, CellValue>[], sink: ByteSink): EncodedColumn {
  const n = rows.length;
  const index = new Int32Array(n);
  const offset = sink.pos;
  // A row without the key is NULL; names such as `constructor` must not find Object.prototype.
  const ownOnly = column.name in OBJECT_PROTOTYPE;
  const name = column.name;
  /** The row's value of this column; a name like `constructor` reads only the row's own property. */
  const cell = (r: number): unknown => {
    const row = rows[r];
    return row === undefined || (ownOnly && !Object.hasOwn(row, name)) ? undefined : row[name];
  };
  let hasNull = false;
  let ascii = true;
  let count = 0;

  if (column.type === 'string') {
    // Raw and normalised text both map to the symbol index (normalising is idempotent).
    const seen = new Map<string, number>();
    for (let r = 0; r < n; r++) {
      const value = cell(r);
      if (value === null || value === undefined) {
        index[r] = -1;
        hasNull = true;
        continue;
      }
      if (typeof value !== 'string') throw mismatch(column, r, value, 'a string');
      let i = seen.get(value);
      if (i === undefined) {
        const text = normalizeString(value);
        i = text === value ? undefined : seen.get(text);
        if (i === undefined) {
          i = count++;
          sink.ensure(1);
          sink.buf[sink.pos++] = SYM_STRING;
          if (sink.textZ(text) !== text.length) ascii = false;
          seen.set(text, i);
        }
        seen.set(value, i);
      }
      index[r] = i;
    }
  } else {
    // Numbers compare by value: Map keys are SameValueZero, so −0 and 0 are one key.
    const seen = new Map<number, number>();
    for (let r = 0; r < n; r++) {
      const value = cell(r);
      if (value === null || value === undefined) {
        index[r] = -1;
        hasNull = true;
        continue;
      }
      if (typeof value !== 'number')
        throw mismatch(column, r, value, column.type === 'timestamp' ? 'epoch milliseconds (a number)' : 'a number');
      if (!Number.isFinite(value)) {
        index[r] = -1;
        hasNull = true;
        continue;
      }
      let key: number;
      if (column.type === 'timestamp') {
        if (Math.abs(value) > MAX_EPOCH_MS)
          throw new RangeError(`tablefile: column "${column.name}", row ${r}: ${value} ms is outside the time range`);
        key = epochMsToSerial(Math.trunc(value));
      } else {
        if (column.type === 'int' && !Number.isInteger(value)) throw mismatch(column, r, value, 'an integer');
        key = value === 0 ? 0 : value;
      }
      let i = seen.get(key);
      if (i === undefined) {
        i = count++;
        seen.set(key, i);
        if (column.type === 'timestamp') {
          sink.float64(SYM_DUAL_DOUBLE, key);
          // The text is a function of the number: format the instant a reader recovers from it.
          sink.textZ(formatTimestampUtc(serialToEpochMs(key)));
        } else if (column.type === 'float') {
          sink.float64(SYM_DOUBLE, key);
        } else if (key >= INT32_MIN && key <= INT32_MAX) {
          sink.int32(SYM_INT, key);
        } else {
          sink.float64(SYM_DUAL_DOUBLE, key);
          sink.textZ(BigInt(key).toString());
        }
      }
      index[r] = i;
    }
  }
  if (count > MAX_SYMBOLS)
    throw new RangeError(`tablefile: column "${column.name}" has ${count} distinct values (at most ${MAX_SYMBOLS})`);
  return { index, noOfSymbols: count, hasNull, ascii, offset, length: sink.pos - offset };
}

/** Bits needed for the largest stored value (spec §3.3). */
export function bitWidthFor(noOfSymbols: number, hasNull: boolean): number {
  const m = noOfSymbols === 0 ? 0 : hasNull ? noOfSymbols + 1 : noOfSymbols - 1;
  return m === 0 ? 0 : 32 - Math.clz32(m);
}

function tagsFor(type: ColumnType, encoded: EncodedColumn): string[] {
  if (encoded.noOfSymbols === 0) return [];
  switch (type) {
    case 'string':
      return encoded.ascii ? ['$text', '$ascii'] : ['$text'];
    case 'int':
      return ['$numeric', '$integer'];
    case 'float':
      return ['$numeric'];
    case 'timestamp':
      return ['$numeric', '$timestamp'];
  }
}

/** `YYYY-MM-DD hh:mm:ss`, UTC, whole seconds. */
function createUtcTime(date: Date): string {
  const ms = date.getTime();
  if (!Number.isFinite(ms)) throw new RangeError('tablefile: createdAt is an invalid Date');
  return formatTimestampUtc(Math.floor(ms / 1000) * 1000).slice(0, -4);
}

function derivedCreatorDoc(parts: readonly string[], symbols: Uint8Array): string {
  const hash = createHash('sha256').update(JSON.stringify(parts)).update(symbols).digest();
  const b = hash.subarray(0, 16);
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** Encodes one table as a complete table file. Throws on invalid schema or cell types. */
export function encodeQvd(table: Table): Uint8Array {
  if (table.columns.length === 0) throw new RangeError('tablefile: a table needs at least one column');
  const names = new Set<string>();
  const fieldNames = table.columns.map((c) => {
    const name = headerText(c.name);
    if (name === '') throw new RangeError(`tablefile: empty field name ${JSON.stringify(c.name)}`);
    if (names.has(name)) throw new RangeError(`tablefile: duplicate field name ${JSON.stringify(name)}`);
    names.add(name);
    return name;
  });
  const createdAt = createUtcTime(table.createdAt ?? new Date());
  const tableName = headerText(table.name);

  const sink = new ByteSink();
  const encoded = table.columns.map((c) => encodeColumn(c, table.rows, sink));
  const symbols = sink.bytes();

  let bit = 0;
  const fields: FieldHeader[] = table.columns.map((c, k) => {
    const e = encoded[k];
    if (e === undefined) throw new Error('unreachable');
    const bitWidth = bitWidthFor(e.noOfSymbols, e.hasNull);
    const bitOffset = bitWidth > 0 ? bit : 0;
    bit += bitWidth;
    return {
      name: fieldNames[k] ?? '',
      bitOffset,
      bitWidth,
      bias: e.hasNull ? -2 : 0,
      numberFormat: FORMATS[c.type],
      noOfSymbols: e.noOfSymbols,
      offset: e.offset,
      length: e.length,
      tags: tagsFor(c.type, e),
    };
  });
  const noOfRecords = table.rows.length;
  const recordByteSize = Math.max(1, Math.ceil(bit / 8));
  const indexLength = noOfRecords * recordByteSize;

  const creatorDoc =
    table.creatorDoc === undefined
      ? derivedCreatorDoc(
          [tableName, createdAt, String(noOfRecords), ...table.columns.flatMap((c) => [c.name, c.type])],
          symbols,
        )
      : headerText(table.creatorDoc);
  const header = new TextEncoder().encode(
    renderHeader({
      creatorDoc,
      createUtcTime: createdAt,
      tableName,
      fields,
      recordByteSize,
      noOfRecords,
      offset: symbols.length,
      length: indexLength,
    }),
  );

  const base = header.length + 1; // B: the first byte after the NUL terminator
  const out = new Uint8Array(base + symbols.length + indexLength); // zero-filled: NUL and unused bits
  out.set(header, 0);
  out.set(symbols, base);
  packIndex(out, base + symbols.length, recordByteSize, fields, encoded);
  return out;
}

/** Writes each row's stored values into its little-endian record (spec §3.4); `out` is zeroed. */
function packIndex(
  out: Uint8Array,
  start: number,
  recordByteSize: number,
  fields: readonly FieldHeader[],
  encoded: readonly EncodedColumn[],
): void {
  for (let k = 0; k < fields.length; k++) {
    const f = fields[k];
    const e = encoded[k];
    if (f === undefined || e === undefined || f.bitWidth === 0) continue;
    const add = e.hasNull ? 2 : 0; // stored = index − Bias; NULL stores 0
    const shift = f.bitOffset & 7;
    const index = e.index;
    let p0 = start + (f.bitOffset >>> 3);
    for (let r = 0; r < index.length; r++, p0 += recordByteSize) {
      const i = index[r] ?? -1;
      // stored < 2^31 (MAX_SYMBOLS + 1), so 32-bit operators are exact; stored 0 writes nothing.
      const stored = i < 0 ? 0 : i + add;
      if (stored === 0) continue;
      let p = p0;
      out[p] = (out[p] ?? 0) | ((stored << shift) & 0xff);
      let rest = stored >>> (8 - shift);
      while (rest !== 0) {
        p++;
        out[p] = (out[p] ?? 0) | (rest & 0xff);
        rest >>>= 8;
      }
    }
  }
}
