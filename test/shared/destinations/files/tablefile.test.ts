/**
 * Table-file (QVD) encoder tests against /work/shared/spec/tablefile-format.md: the spec's worked
 * example and a second hand-computed file byte for byte, the §7 reader-side checks on every file
 * written here (via test/support/qvd-reader.ts, an independent implementation of the spec), round
 * trips per column type, bit-width boundaries, edge cases, and the reader's own strictness.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CellValue, ColumnType } from '../../../../shared/audit/datamodel.js';
import type { Table } from '../../../../shared/destinations/files/tablefile/qvd.js';
import { encodeQvd } from '../../../../shared/destinations/files/tablefile/qvd.js';
import type { DecodedQvd, QvdSymbol, QvdValue } from '../../../support/qvd-reader.js';
import { decodeQvd } from '../../../support/qvd-reader.js';

// ---------------------------------------------------------------------------------------------
// Helpers (independent of the encoder: they restate the spec)

const CRLF = '\r\n';
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const hex = (s: string): Uint8Array => Uint8Array.from(s.trim().split(/\s+/).filter(Boolean), (h) => parseInt(h, 16));
const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
const toHex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(' ');
const f64 = (v: number): string => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, v, true);
  return toHex(b);
};

const C = 2_209_161_600_000; // 25569 days in ms (spec §4.2)
const serialOf = (ms: number): number => (ms + C) / 86_400_000;
const msOf = (serial: number): number => Math.round(serial * 86_400_000) - C;
/** Spec §4.2/§4.4 timestamp text via Date (the encoder does its own calendar arithmetic). */
const tsText = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').slice(0, 23);

/** §3.3 by the table: bits to write the largest stored value. */
const widthFor = (n: number, nulls: boolean): number => {
  const m = n === 0 ? 0 : nulls ? n + 1 : n - 1;
  let w = 0;
  while (2 ** w <= m) w++;
  return w;
};

const ROOT_ORDER = [
  'QvBuildNo',
  'CreatorDoc',
  'CreateUtcTime',
  'SourceCreateUtcTime',
  'SourceFileUtcTime',
  'SourceFileSize',
  'StaleUtcTime',
  'TableName',
  'Fields',
  'Compression',
  'RecordByteSize',
  'NoOfRecords',
  'Offset',
  'Length',
  'Lineage',
  'Comment',
  'EncryptionInfo',
  'TableTags',
  'ProfilingData',
];
const FIELD_ORDER = [
  'FieldName',
  'BitOffset',
  'BitWidth',
  'Bias',
  'NumberFormat',
  'NoOfSymbols',
  'Offset',
  'Length',
  'Comment',
  'Tags',
];

const COLUMN_FORMAT: Record<
  ColumnType,
  { type: string; fmt: string; dec: string; thou: string; symbolTypes: number[]; tags: string[] }
> = {
  string: { type: 'UNKNOWN', fmt: '', dec: '', thou: '', symbolTypes: [4], tags: ['$text'] },
  int: { type: 'INTEGER', fmt: '', dec: '.', thou: ',', symbolTypes: [1, 6], tags: ['$numeric', '$integer'] },
  float: { type: 'UNKNOWN', fmt: '', dec: '', thou: '', symbolTypes: [2], tags: ['$numeric'] },
  timestamp: {
    type: 'TIMESTAMP',
    fmt: 'YYYY-MM-DD hh:mm:ss.fff',
    dec: '',
    thou: '',
    symbolTypes: [6],
    tags: ['$numeric', '$timestamp'],
  },
};

/** §4.4 distinctness key of a symbol. */
const symbolKey = (s: QvdSymbol): string => (s.type === 4 ? `s:${s.text}` : `n:${s.number === 0 ? 0 : s.number}`);

/** Spec §7 checks 1–10 on a written file; returns the decoded file. */
function checkFile(file: Uint8Array, table: Table): DecodedQvd {
  // 1. declaration, terminator, XML.
  expect(new TextDecoder().decode(file.subarray(0, 5))).toBe('<?xml');
  const d = decodeQvd(file);
  const h = d.header;
  expect(h.terminator).toBe('CRLF');
  expect(h.text.endsWith('</QvdTableHeader>\r\n')).toBe(true);
  expect(file[h.dataStart - 1]).toBe(0);
  expect(file.indexOf(0)).toBe(h.dataStart - 1);
  const lines = h.text.split(CRLF);
  expect(lines[0]).toBe('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>');
  expect(lines.at(-1)).toBe('');
  let depth = 0;
  const badLines: string[] = [];
  for (const line of lines.slice(1, -1)) {
    const closesFirst = line.trimStart().startsWith('</');
    if (closesFirst) depth--;
    if (/[\r\n]/.test(line) || line.length - line.trimStart().length !== 1 + 2 * depth) badLines.push(line);
    if (!closesFirst && !line.includes('</') && !line.endsWith('/>')) depth++;
  }
  expect(badLines).toEqual([]);
  expect(depth).toBe(0);
  // 2. elements, order, fixed values.
  expect(h.childOrder).toEqual(ROOT_ORDER);
  expect(h.qvBuildNo).toBe(50689);
  expect(h.createUtcTime).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  expect([
    h.sourceCreateUtcTime,
    h.sourceFileUtcTime,
    h.staleUtcTime,
    h.comment,
    h.compression,
    h.encryptionInfo,
  ]).toEqual(['', '', '', '', '', '']);
  expect(h.sourceFileSize).toBe(-1);
  expect(h.lineage).toEqual([{ discriminator: 'INLINE;', statement: '' }]);
  expect(h.tableTags).toEqual([]);
  expect(h.fields.map((f) => f.name)).toEqual(table.columns.map((c) => c.name));
  // 3. sizes.
  expect(file.length).toBe(h.dataStart + h.offset + h.length);
  expect(h.length).toBe(h.noOfRecords * h.recordByteSize);
  expect(h.recordByteSize).toBeGreaterThanOrEqual(1);
  expect(h.noOfRecords).toBe(table.rows.length);
  // 4. contiguous symbol tables.
  let end = 0;
  for (const f of h.fields) {
    expect(f.offset).toBe(end);
    end += f.length;
  }
  expect(h.offset).toBe(end);
  // 8. widths and packing.
  let bit = 0;
  h.fields.forEach((f, k) => {
    const nulls = d.indexes.some((r) => (r[k] ?? 0) < 0);
    expect(f.bitWidth, f.name).toBe(widthFor(f.noOfSymbols, nulls));
    // 7. Bias −2 iff NULLs.
    expect(f.bias, f.name).toBe(nulls ? -2 : 0);
    if (f.bitWidth === 0) expect(f.bitOffset).toBe(0);
    else {
      expect(f.bitOffset).toBe(bit);
      bit += f.bitWidth;
    }
  });
  expect(h.recordByteSize).toBe(Math.max(1, Math.ceil(bit / 8)));
  // 9. no bits above Σwidth.
  const dirty: number[] = [];
  for (let r = 0; r < h.noOfRecords; r++) {
    let v = 0n;
    for (let k = h.recordByteSize - 1; k >= 0; k--) v = (v << 8n) | BigInt(d.indexTable[r * h.recordByteSize + k] ?? 0);
    if (v >> BigInt(bit) !== 0n) dirty.push(r);
  }
  expect(dirty, 'records with bits above Σwidth').toEqual([]);
  // 5/6/10. symbols: distinct, all used, types and formats per column type.
  table.columns.forEach((c, k) => {
    const f = h.fields[k];
    const symbols = d.symbols[k] ?? [];
    if (f === undefined) throw new Error('missing field');
    const keys = symbols.map(symbolKey);
    expect(new Set(keys).size, c.name).toBe(keys.length);
    const used = new Set(d.indexes.map((r) => r[k] ?? -1).filter((i) => i >= 0));
    expect(used.size, c.name).toBe(symbols.length);
    const expected = COLUMN_FORMAT[c.type];
    expect(f.numberFormat).toEqual({
      type: expected.type,
      nDec: 0,
      useThou: 0,
      fmt: expected.fmt,
      dec: expected.dec,
      thou: expected.thou,
    });
    expect(f.childOrder).toEqual(FIELD_ORDER);
    expect(f.comment).toBe('');
    const wrong = symbols.filter(
      (s) =>
        !expected.symbolTypes.includes(s.type) ||
        (c.type === 'int' &&
          s.type === 6 &&
          ((s.number >= -(2 ** 31) && s.number <= 2 ** 31 - 1) || s.text !== BigInt(s.number).toString())) ||
        (c.type === 'timestamp' && s.type === 6 && s.text !== tsText(msOf(s.number))),
    );
    expect(wrong, `${c.name}: symbols of the wrong type or text`).toEqual([]);
    let tags = symbols.length === 0 ? [] : expected.tags;
    if (
      c.type === 'string' &&
      symbols.length > 0 &&
      symbols.every((s) => s.type === 4 && /^[\u0000-\u007f]*$/.test(s.text))
    )
      tags = [...tags, '$ascii'];
    expect([...(f.tags ?? [])].sort()).toEqual([...tags].sort());
  });
  return d;
}

/** The spec's §4.4/§5 normalisation of an input cell, as the decoded file must show it. */
function expectedCell(type: ColumnType, value: unknown): QvdValue {
  if (value === null || value === undefined) return null;
  if (type === 'string') {
    if (typeof value !== 'string') throw new Error('string column with a non-string');
    const bytes = utf8(value.replaceAll('\0', ''));
    let cut = Math.min(bytes.length, 1_048_576);
    while (cut < bytes.length && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut--;
    return new TextDecoder().decode(bytes.subarray(0, cut));
  }
  const n = Number(value);
  if (!Number.isFinite(n)) return null;
  if (type === 'timestamp') return Math.trunc(n) === 0 ? 0 : Math.trunc(n);
  return n === 0 ? 0 : n;
}

/** Encodes, runs the §7 checks, and compares the decoded rows with the normalised input. */
function roundTrip(table: Table): DecodedQvd {
  const file = encodeQvd(table);
  const d = checkFile(file, table);
  const actual = d.rows.map((row) =>
    Object.fromEntries(
      table.columns.map((c) => {
        const v = row[c.name] ?? null;
        return [c.name, c.type === 'timestamp' && typeof v === 'number' ? msOf(v) : v];
      }),
    ),
  );
  const expected = table.rows.map((row) =>
    Object.fromEntries(
      table.columns.map((c) => [c.name, expectedCell(c.type, Object.hasOwn(row, c.name) ? row[c.name] : undefined)]),
    ),
  );
  expect(actual).toEqual(expected);
  // -0 must not survive anywhere (toEqual treats −0 and 0 as different, but be explicit).
  for (const row of actual) for (const v of Object.values(row)) expect(Object.is(v, -0)).toBe(false);
  return d;
}

const FIXED = { createdAt: new Date('2024-03-01T12:00:00Z'), creatorDoc: '5f0c1a2e-8d4b-4c1e-9a57-0b6f3e2d1c00' };
const table = (columns: Record<string, ColumnType>, rows: Record<string, CellValue>[], name = 't'): Table => ({
  name,
  columns: Object.entries(columns).map(([n, type]) => ({ name: n, type })),
  rows,
  ...FIXED,
});

// ---------------------------------------------------------------------------------------------
// Fixtures

/** Spec §6, verbatim. */
const WORKED_TABLE: Table = {
  name: 'events',
  columns: [
    { name: 'name', type: 'string' },
    { name: 'count', type: 'int' },
    { name: 'ts', type: 'timestamp' },
  ],
  rows: [
    { name: 'alpha', count: 10, ts: Date.parse('2024-01-15T10:30:00.000Z') },
    { name: 'béta', count: null, ts: Date.parse('2024-01-15T18:00:00.000Z') },
    { name: 'alpha', count: 42, ts: Date.parse('2024-02-29T06:00:00.000Z') },
  ],
  createdAt: new Date('2024-03-01T12:00:00Z'),
  creatorDoc: '5f0c1a2e-8d4b-4c1e-9a57-0b6f3e2d1c00',
};

const WORKED_HEADER_LINES = [
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
  ' <QvdTableHeader>',
  '   <QvBuildNo>50689</QvBuildNo>',
  '   <CreatorDoc>5f0c1a2e-8d4b-4c1e-9a57-0b6f3e2d1c00</CreatorDoc>',
  '   <CreateUtcTime>2024-03-01 12:00:00</CreateUtcTime>',
  '   <SourceCreateUtcTime></SourceCreateUtcTime>',
  '   <SourceFileUtcTime></SourceFileUtcTime>',
  '   <SourceFileSize>-1</SourceFileSize>',
  '   <StaleUtcTime></StaleUtcTime>',
  '   <TableName>events</TableName>',
  '   <Fields>',
  '     <QvdFieldHeader>',
  '       <FieldName>name</FieldName>',
  '       <BitOffset>0</BitOffset>',
  '       <BitWidth>1</BitWidth>',
  '       <Bias>0</Bias>',
  '       <NumberFormat>',
  '         <Type>UNKNOWN</Type>',
  '         <nDec>0</nDec>',
  '         <UseThou>0</UseThou>',
  '         <Fmt></Fmt>',
  '         <Dec></Dec>',
  '         <Thou></Thou>',
  '       </NumberFormat>',
  '       <NoOfSymbols>2</NoOfSymbols>',
  '       <Offset>0</Offset>',
  '       <Length>14</Length>',
  '       <Comment></Comment>',
  '       <Tags>',
  '         <String>$text</String>',
  '       </Tags>',
  '     </QvdFieldHeader>',
  '     <QvdFieldHeader>',
  '       <FieldName>count</FieldName>',
  '       <BitOffset>1</BitOffset>',
  '       <BitWidth>2</BitWidth>',
  '       <Bias>-2</Bias>',
  '       <NumberFormat>',
  '         <Type>INTEGER</Type>',
  '         <nDec>0</nDec>',
  '         <UseThou>0</UseThou>',
  '         <Fmt></Fmt>',
  '         <Dec>.</Dec>',
  '         <Thou>,</Thou>',
  '       </NumberFormat>',
  '       <NoOfSymbols>2</NoOfSymbols>',
  '       <Offset>14</Offset>',
  '       <Length>10</Length>',
  '       <Comment></Comment>',
  '       <Tags>',
  '         <String>$numeric</String>',
  '         <String>$integer</String>',
  '       </Tags>',
  '     </QvdFieldHeader>',
  '     <QvdFieldHeader>',
  '       <FieldName>ts</FieldName>',
  '       <BitOffset>3</BitOffset>',
  '       <BitWidth>2</BitWidth>',
  '       <Bias>0</Bias>',
  '       <NumberFormat>',
  '         <Type>TIMESTAMP</Type>',
  '         <nDec>0</nDec>',
  '         <UseThou>0</UseThou>',
  '         <Fmt>YYYY-MM-DD hh:mm:ss.fff</Fmt>',
  '         <Dec></Dec>',
  '         <Thou></Thou>',
  '       </NumberFormat>',
  '       <NoOfSymbols>3</NoOfSymbols>',
  '       <Offset>24</Offset>',
  '       <Length>99</Length>',
  '       <Comment></Comment>',
  '       <Tags>',
  '         <String>$numeric</String>',
  '         <String>$timestamp</String>',
  '       </Tags>',
  '     </QvdFieldHeader>',
  '   </Fields>',
  '   <Compression></Compression>',
  '   <RecordByteSize>1</RecordByteSize>',
  '   <NoOfRecords>3</NoOfRecords>',
  '   <Offset>123</Offset>',
  '   <Length>3</Length>',
  '   <Lineage>',
  '     <LineageInfo>',
  '       <Discriminator>INLINE;</Discriminator>',
  '       <Statement></Statement>',
  '     </LineageInfo>',
  '   </Lineage>',
  '   <Comment></Comment>',
  '   <EncryptionInfo></EncryptionInfo>',
  '   <TableTags></TableTags>',
  '   <ProfilingData></ProfilingData>',
  ' </QvdTableHeader>',
];

const WORKED_BODY = `
  04 61 6c 70 68 61 00
  04 62 c3 a9 74 61 00
  01 0a 00 00 00
  01 2a 00 00 00
  06 00 00 00 00 4e 1f e6 40
  32 30 32 34 2d 30 31 2d 31 35 20 31 30 3a 33 30 3a 30 30 2e 30 30 30 00
  06 00 00 00 00 58 1f e6 40
  32 30 32 34 2d 30 31 2d 31 35 20 31 38 3a 30 30 3a 30 30 2e 30 30 30 00
  06 00 00 00 00 e8 24 e6 40
  32 30 32 34 2d 30 32 2d 32 39 20 30 36 3a 30 30 3a 30 30 2e 30 30 30 00
  04 09 16`;

const WORKED_FILE = concat(utf8(WORKED_HEADER_LINES.join(CRLF) + CRLF), hex('00'), hex(WORKED_BODY));

/**
 * A second hand-computed file: a constant field (width 0), NULLs in float/int/timestamp fields,
 * an int outside int32 (`06` + digits), the int32 minimum, the serial epoch of 1970, a non-ASCII
 * string, the empty string, and a field that crosses a byte boundary (`s`, bits 7–9).
 *
 *   k  'x' ×6                       → 1 symbol, width 0, BitOffset 0
 *   f  1.5 – 1.5 −0.25 1.5 –        → 2 symbols + NULL: m=3, width 2, bits 0–1, Bias −2
 *   i  0 −1 3e9 5 – −2^31           → 5 symbols + NULL: m=6, width 3, bits 2–4, Bias −2
 *   t  0 – – (missing) NaN –        → 1 symbol + NULL: m=2, width 2, bits 5–6, Bias −2
 *   s  'é' '' a b c d               → 6 symbols: m=5, width 3, bits 7–9
 *   10 bits → RecordByteSize 2. record = f + i·4 + t·32 + s·128:
 *   r0 2+8+64+0=74=004a  r1 0+12+0+128=140=008c  r2 2+16+256=274=0112
 *   r3 3+20+384=407=0197 r4 2+0+512=514=0202     r5 0+24+640=664=0298
 *   Symbol bytes: k 3, f 2×9=18, i 5+5+(9+11)+5+5=40, t 9+24=33, s 4+2+4×3=18
 *   → Offsets 0, 3, 21, 61, 94; root Offset 112, Length 6×2=12.
 */
const MIX_TABLE: Table = {
  name: 'mix',
  columns: [
    { name: 'k', type: 'string' },
    { name: 'f', type: 'float' },
    { name: 'i', type: 'int' },
    { name: 't', type: 'timestamp' },
    { name: 's', type: 'string' },
  ],
  rows: [
    { k: 'x', f: 1.5, i: 0, t: 0, s: 'é' },
    { k: 'x', f: null, i: -1, t: null, s: '' },
    { k: 'x', f: 1.5, i: 3_000_000_000, t: null, s: 'a' },
    { k: 'x', f: -0.25, i: 5, s: 'b' },
    { k: 'x', f: 1.5, i: null, t: Number.NaN, s: 'c' },
    { k: 'x', f: null, i: -2_147_483_648, t: null, s: 'd' },
  ],
  createdAt: new Date('2025-06-30T23:59:59.999Z'),
  creatorDoc: '00000000-0000-4000-8000-000000000000',
};

const mixField = (
  name: string,
  bitOffset: number,
  bitWidth: number,
  bias: number,
  nf: [string, string, string, string],
  symbols: number,
  offset: number,
  length: number,
  tags: string[],
): string[] => [
  '     <QvdFieldHeader>',
  `       <FieldName>${name}</FieldName>`,
  `       <BitOffset>${bitOffset}</BitOffset>`,
  `       <BitWidth>${bitWidth}</BitWidth>`,
  `       <Bias>${bias}</Bias>`,
  '       <NumberFormat>',
  `         <Type>${nf[0]}</Type>`,
  '         <nDec>0</nDec>',
  '         <UseThou>0</UseThou>',
  `         <Fmt>${nf[1]}</Fmt>`,
  `         <Dec>${nf[2]}</Dec>`,
  `         <Thou>${nf[3]}</Thou>`,
  '       </NumberFormat>',
  `       <NoOfSymbols>${symbols}</NoOfSymbols>`,
  `       <Offset>${offset}</Offset>`,
  `       <Length>${length}</Length>`,
  '       <Comment></Comment>',
  ...(tags.length === 0
    ? ['       <Tags></Tags>']
    : ['       <Tags>', ...tags.map((t) => `         <String>${t}</String>`), '       </Tags>']),
  '     </QvdFieldHeader>',
];

const MIX_HEADER_LINES = [
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
  ' <QvdTableHeader>',
  '   <QvBuildNo>50689</QvBuildNo>',
  '   <CreatorDoc>00000000-0000-4000-8000-000000000000</CreatorDoc>',
  '   <CreateUtcTime>2025-06-30 23:59:59</CreateUtcTime>',
  '   <SourceCreateUtcTime></SourceCreateUtcTime>',
  '   <SourceFileUtcTime></SourceFileUtcTime>',
  '   <SourceFileSize>-1</SourceFileSize>',
  '   <StaleUtcTime></StaleUtcTime>',
  '   <TableName>mix</TableName>',
  '   <Fields>',
  ...mixField('k', 0, 0, 0, ['UNKNOWN', '', '', ''], 1, 0, 3, ['$text', '$ascii']),
  ...mixField('f', 0, 2, -2, ['UNKNOWN', '', '', ''], 2, 3, 18, ['$numeric']),
  ...mixField('i', 2, 3, -2, ['INTEGER', '', '.', ','], 5, 21, 40, ['$numeric', '$integer']),
  ...mixField('t', 5, 2, -2, ['TIMESTAMP', 'YYYY-MM-DD hh:mm:ss.fff', '', ''], 1, 61, 33, ['$numeric', '$timestamp']),
  ...mixField('s', 7, 3, 0, ['UNKNOWN', '', '', ''], 6, 94, 18, ['$text']),
  '   </Fields>',
  '   <Compression></Compression>',
  '   <RecordByteSize>2</RecordByteSize>',
  '   <NoOfRecords>6</NoOfRecords>',
  '   <Offset>112</Offset>',
  '   <Length>12</Length>',
  '   <Lineage>',
  '     <LineageInfo>',
  '       <Discriminator>INLINE;</Discriminator>',
  '       <Statement></Statement>',
  '     </LineageInfo>',
  '   </Lineage>',
  '   <Comment></Comment>',
  '   <EncryptionInfo></EncryptionInfo>',
  '   <TableTags></TableTags>',
  '   <ProfilingData></ProfilingData>',
  ' </QvdTableHeader>',
];

const MIX_BODY = `
  04 78 00
  02 00 00 00 00 00 00 f8 3f   02 00 00 00 00 00 00 d0 bf
  01 00 00 00 00   01 ff ff ff ff
  06 00 00 00 c0 0b 5a e6 41  33 30 30 30 30 30 30 30 30 30 00
  01 05 00 00 00   01 00 00 00 80
  06 00 00 00 00 40 f8 d8 40  31 39 37 30 2d 30 31 2d 30 31 20 30 30 3a 30 30 3a 30 30 2e 30 30 30 00
  04 c3 a9 00   04 00   04 61 00   04 62 00   04 63 00   04 64 00
  4a 00  8c 00  12 01  97 01  02 02  98 02`;

/** Replaces `from` with `to` (same byte length unless `shift` is allowed) in a file's header. */
function patchHeader(file: Uint8Array, from: string, to: string): Uint8Array {
  const nul = file.indexOf(0);
  const text = new TextDecoder().decode(file.subarray(0, nul));
  if (!text.includes(from)) throw new Error(`patch: ${from} not found`);
  return concat(utf8(text.replace(from, to)), file.subarray(nul));
}

// ---------------------------------------------------------------------------------------------

describe('tablefile encoder: spec §6 worked example', () => {
  it('writes exactly the bytes of the spec', () => {
    const file = encodeQvd(WORKED_TABLE);
    expect(WORKED_FILE.length).toBe(2808); // the spec's numbers, as a check on the fixture itself
    expect(WORKED_FILE.indexOf(0)).toBe(0xa79);
    expect(toHex(file.subarray(0xa76, 0xa7a))).toBe('3e 0d 0a 00');
    expect(new TextDecoder().decode(file.subarray(0, 2681))).toBe(WORKED_HEADER_LINES.join(CRLF) + CRLF);
    expect(toHex(file.subarray(2682))).toBe(toHex(hex(WORKED_BODY)));
    expect(file).toEqual(WORKED_FILE);
  });

  it('passes the §7 checks and reads back', () => {
    const d = roundTrip(WORKED_TABLE);
    expect(d.header.dataStart).toBe(2682);
    expect(d.rows).toEqual([
      { name: 'alpha', count: 10, ts: 45306.4375 },
      { name: 'béta', count: null, ts: 45306.75 },
      { name: 'alpha', count: 42, ts: 45351.25 },
    ]);
  });

  it('stores a timestamp with milliseconds as the spec serial (…10:30:00.123 → 4c fc 02 00 4e 1f e6 40)', () => {
    const file = encodeQvd(table({ ts: 'timestamp' }, [{ ts: Date.parse('2024-01-15T10:30:00.123Z') }]));
    const d = decodeQvd(file);
    const start = d.header.dataStart;
    expect(toHex(file.subarray(start, start + 9))).toBe('06 4c fc 02 00 4e 1f e6 40');
    expect(d.symbols[0]).toEqual([{ type: 6, number: 45306.437501423614, text: '2024-01-15 10:30:00.123' }]);
    expect(msOf(45306.437501423614)).toBe(Date.parse('2024-01-15T10:30:00.123Z'));
  });

  it('is deterministic: same input, same bytes; CreatorDoc is derived when not given', () => {
    expect(encodeQvd(WORKED_TABLE)).toEqual(encodeQvd(WORKED_TABLE));
    const { creatorDoc: _drop, ...withoutDoc } = WORKED_TABLE;
    const a = encodeQvd(withoutDoc);
    expect(encodeQvd({ ...withoutDoc, rows: [...withoutDoc.rows] })).toEqual(a);
    const doc = decodeQvd(a).header.creatorDoc ?? '';
    expect(doc).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const other = decodeQvd(encodeQvd({ ...withoutDoc, rows: withoutDoc.rows.slice(1) })).header.creatorDoc;
    expect(other).not.toBe(doc);
    // Only the CreatorDoc text differs from the fixed-id file (same length, so same layout).
    expect(a.length).toBe(WORKED_FILE.length);
    expect(toHex(a.subarray(a.indexOf(0)))).toBe(toHex(WORKED_FILE.subarray(WORKED_FILE.indexOf(0))));
  });

  it('uses the current time when createdAt is not given', () => {
    const { createdAt: _drop, ...rest } = WORKED_TABLE;
    const before = Math.floor(Date.now() / 1000) * 1000;
    const time = decodeQvd(encodeQvd(rest)).header.createUtcTime ?? '';
    const ms = Date.parse(`${time.replace(' ', 'T')}Z`);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now());
  });
});

describe('tablefile encoder: hand-computed header and body', () => {
  it('writes the expected header byte for byte, then NUL, symbols and index', () => {
    const file = encodeQvd(MIX_TABLE);
    const headerText = MIX_HEADER_LINES.join(CRLF) + CRLF;
    const headerBytes = utf8(headerText);
    expect(new TextDecoder().decode(file.subarray(0, headerBytes.length))).toBe(headerText);
    expect(file[headerBytes.length]).toBe(0);
    expect(toHex(file.subarray(headerBytes.length + 1))).toBe(toHex(hex(MIX_BODY)));
    expect(file.length).toBe(headerBytes.length + 1 + 112 + 12);
    expect(file).toEqual(concat(headerBytes, hex('00'), hex(MIX_BODY)));
  });

  it('decodes to the input', () => {
    const d = roundTrip(MIX_TABLE);
    expect(d.rows[2]).toEqual({ k: 'x', f: 1.5, i: 3_000_000_000, t: null, s: 'a' });
    expect(d.symbols[2]?.[2]).toEqual({ type: 6, number: 3e9, text: '3000000000' });
    expect(d.symbols[3]).toEqual([{ type: 6, number: 25569, text: '1970-01-01 00:00:00.000' }]);
  });

  it('truncates CreateUtcTime to the second, in UTC', () => {
    const d = decodeQvd(encodeQvd({ ...MIX_TABLE, createdAt: new Date('2030-12-31T23:59:59.999+02:00') }));
    expect(d.header.createUtcTime).toBe('2030-12-31 21:59:59');
  });
});

describe('tablefile encoder: round trips', () => {
  it('strings: unicode, empty string vs NULL, numeric-looking text, XML-special characters', () => {
    const values = [
      '',
      'plain',
      'é',
      '日本語',
      '🎉 emoji',
      'e\u0301 combining',
      '007',
      '1',
      '<a href="x">&amp;</a>',
      ' spaced ',
      'line\r\nbreak\ttab',
      '\u007f\u0080\u07ff\u0800\uffff',
      '\u{10ffff}',
    ];
    const rows: Record<string, CellValue>[] = [...values.map((s) => ({ s })), { s: null }, {}, { s: '' }, { s: '007' }];
    const d = roundTrip(table({ s: 'string' }, rows));
    expect(d.rows.at(0)?.['s']).toBe('');
    expect(d.rows.at(values.length)?.['s']).toBeNull();
    expect(d.rows.at(values.length + 1)?.['s']).toBeNull();
    expect(d.symbols[0]?.length).toBe(values.length);
    expect(d.symbols[0]?.[0]).toEqual({ type: 4, text: '' });
    expect(d.symbols[0]?.find((s) => s.type === 4 && s.text === '007')).toBeDefined();
  });

  it('strings: U+0000 is removed and lone surrogates become U+FFFD, deduplicated after that', () => {
    const d = roundTrip(
      table({ s: 'string' }, [{ s: 'a\0b' }, { s: 'ab' }, { s: 'x\uD800' }, { s: 'x\uDFFF' }, { s: '\0' }, { s: '' }]),
    );
    expect(d.symbols[0]).toEqual([
      { type: 4, text: 'ab' },
      { type: 4, text: 'x\uFFFD' },
      { type: 4, text: '' },
    ]);
    expect(d.indexes.map((r) => r[0])).toEqual([0, 0, 1, 1, 2, 2]);
  });

  it('strings: ASCII-only columns get $ascii, others only $text', () => {
    const ascii = decodeQvd(
      encodeQvd(
        table({ a: 'string', b: 'string' }, [
          { a: 'x', b: 'x' },
          { a: '\u007f', b: '\u0080' },
        ]),
      ),
    );
    expect(ascii.header.fields.map((f) => f.tags)).toEqual([['$text', '$ascii'], ['$text']]);
  });

  it('integers: negative, 0, −0, int32 edges and beyond, up to ±2^53 and past it', () => {
    const ints = [
      0,
      -0,
      1,
      -1,
      42,
      2 ** 31 - 1,
      -(2 ** 31),
      2 ** 31,
      -(2 ** 31) - 1,
      2 ** 32,
      2 ** 53,
      -(2 ** 53),
      Number.MAX_SAFE_INTEGER,
      1e20,
      -1e300,
    ];
    const d = roundTrip(
      table(
        { i: 'int' },
        ints.map((i) => ({ i })),
      ),
    );
    const byValue = new Map((d.symbols[0] ?? []).map((s) => [s.type === 4 ? s.text : s.number, s]));
    expect(byValue.get(2 ** 31 - 1)).toEqual({ type: 1, number: 2 ** 31 - 1 });
    expect(byValue.get(-(2 ** 31))).toEqual({ type: 1, number: -(2 ** 31) });
    expect(byValue.get(2 ** 31)).toEqual({ type: 6, number: 2 ** 31, text: '2147483648' });
    expect(byValue.get(-(2 ** 31) - 1)).toEqual({ type: 6, number: -(2 ** 31) - 1, text: '-2147483649' });
    expect(byValue.get(2 ** 53)).toEqual({ type: 6, number: 2 ** 53, text: '9007199254740992' });
    expect(byValue.get(1e20)).toEqual({ type: 6, number: 1e20, text: '100000000000000000000' });
    expect(d.symbols[0]?.length).toBe(ints.length - 1); // 0 and −0 are one symbol
    expect(d.rows[1]).toEqual({ i: 0 });
  });

  it('floats: written as 02 doubles, also when integral; −0 → 0; NaN and ±Infinity → NULL', () => {
    const floats = [
      0.1,
      -0.1,
      2,
      -0,
      0,
      1e-300,
      5e-324,
      -1.7976931348623157e308,
      Math.PI,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      0.1,
    ];
    const file = encodeQvd(
      table(
        { f: 'float' },
        floats.map((f) => ({ f })),
      ),
    );
    const d = roundTrip(
      table(
        { f: 'float' },
        floats.map((f) => ({ f })),
      ),
    );
    expect(d.symbols[0]?.every((s) => s.type === 2)).toBe(true);
    expect(d.symbols[0]?.length).toBe(8);
    expect(d.rows.slice(9, 12)).toEqual([{ f: null }, { f: null }, { f: null }]);
    // 0 and −0 are the single symbol 02 00…00 (no sign bit).
    const zero = `02 ${f64(0)}`;
    expect(toHex(file)).toContain(zero);
    expect(toHex(file)).not.toContain(`02 ${f64(-0)}`);
  });

  it('timestamps: ms precision, before 1970 and before 1899-12-30, fractional ms truncated', () => {
    const ts = [
      '2024-01-15T10:30:00.123Z',
      '1970-01-01T00:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '1899-12-30T00:00:00.000Z',
      '1899-12-29T18:00:00.000Z',
      '1900-01-01T00:00:00.001Z',
      '2199-12-31T23:59:59.999Z',
      '2024-02-29T23:59:59.999Z',
    ];
    const d = roundTrip(table({ t: 'timestamp' }, [...ts.map((t) => ({ t: Date.parse(t) })), { t: 2.9 }, { t: -2.9 }]));
    const symbols = d.symbols[0] ?? [];
    expect(symbols[3]).toEqual({ type: 6, number: 0, text: '1899-12-30 00:00:00.000' });
    expect(symbols[4]).toEqual({ type: 6, number: -0.25, text: '1899-12-29 18:00:00.000' });
    expect(symbols[1]).toEqual({ type: 6, number: 25569, text: '1970-01-01 00:00:00.000' });
    expect(d.rows.slice(-2).map((r) => msOf(Number(r['t'])))).toEqual([2, -2]);
    expect(symbols.map((s) => s.type === 6 && s.number)).toEqual([
      ...ts.map((t) => serialOf(Date.parse(t))),
      serialOf(2),
      serialOf(-2),
    ]);
  });

  it('timestamps: far years get a text that is the formatting of the stored number', () => {
    const far = [
      Date.parse('0001-01-01T00:00:00Z'),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      -8.64e15,
      8.64e15,
      Date.UTC(-1, 5, 6, 7, 8, 9, 10),
    ];
    const d = decodeQvd(
      encodeQvd(
        table(
          { t: 'timestamp' },
          far.map((t) => ({ t })),
        ),
      ),
    );
    const texts = (d.symbols[0] ?? []).map((s) => (s.type === 6 ? s.text : ''));
    expect(texts.slice(0, 2)).toEqual(['0001-01-01 00:00:00.000', '9999-12-31 23:59:59.999']);
    expect(texts[2]).toMatch(/^-271821-04-(19|20) \d\d:\d\d:\d\d\.\d{3}$/);
    expect(texts[3]).toMatch(/^275760-09-1[23] \d\d:\d\d:\d\d\.\d{3}$/);
    expect(texts[4]).toBe('-0001-06-06 07:08:09.010'); // Date.UTC(-1, …) is the year −1
  });

  it('NULLs in every type, and a missing key is NULL', () => {
    const cols = { s: 'string', i: 'int', f: 'float', t: 'timestamp' } as const;
    const d = roundTrip(
      table(cols, [
        { s: 'a', i: 1, f: 1.5, t: 0 },
        { s: null, i: null, f: null, t: null },
        {},
        { s: 'a', i: 1, f: 1.5, t: 0 },
      ]),
    );
    expect(d.header.fields.map((f) => [f.bias, f.bitWidth, f.noOfSymbols])).toEqual([
      [-2, 2, 1],
      [-2, 2, 1],
      [-2, 2, 1],
      [-2, 2, 1],
    ]);
    expect(d.rows[1]).toEqual({ s: null, i: null, f: null, t: null });
    expect(d.rows[2]).toEqual({ s: null, i: null, f: null, t: null });
  });

  it('property: random tables round-trip and pass every §7 check', () => {
    const cell: Record<ColumnType, fc.Arbitrary<CellValue | undefined>> = {
      string: fc.oneof(
        fc.constant(null),
        fc.constant(undefined),
        fc.constantFrom('', 'a', 'b', 'é'),
        fc.string({ unit: 'binary', maxLength: 8 }),
        fc.string({ unit: 'grapheme', maxLength: 8 }),
      ),
      int: fc.oneof(
        fc.constant(null),
        fc.constantFrom(
          0,
          -0,
          1,
          -1,
          2 ** 31 - 1,
          -(2 ** 31),
          2 ** 31,
          -(2 ** 31) - 1,
          2 ** 53,
          Number.NaN,
          Number.POSITIVE_INFINITY,
        ),
        fc.integer({ min: -5, max: 5 }),
        fc.maxSafeInteger(),
      ),
      float: fc.oneof(fc.constant(null), fc.constantFrom(0.5, -0.5, 2), fc.double()),
      timestamp: fc.oneof(
        fc.constant(null),
        fc.constant(Number.NaN),
        fc.constantFrom(0, Date.parse('2024-01-15T10:30:00.123Z')),
        fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(2200, 0, 1) }),
      ),
    };
    const arbTable = fc
      .array(fc.constantFrom<ColumnType>('string', 'int', 'float', 'timestamp'), { minLength: 1, maxLength: 6 })
      .chain((types) =>
        fc.record({
          types: fc.constant(types),
          rows: fc.array(fc.tuple(...types.map((t) => cell[t])), { maxLength: 40 }),
        }),
      );
    fc.assert(
      fc.property(arbTable, ({ types, rows }) => {
        const columns = types.map((type, k) => ({ name: `c${k}`, type }));
        const t: Table = {
          name: 'prop',
          columns,
          rows: rows.map((values) => {
            const row: Record<string, CellValue> = {};
            values.forEach((v, k) => {
              if (v !== undefined) row[`c${k}`] = v;
            });
            return row;
          }),
          ...FIXED,
        };
        roundTrip(t);
        expect(encodeQvd(t)).toEqual(encodeQvd(t));
      }),
      { numRuns: 150 },
    );
  });
});

describe('tablefile encoder: symbol tables and bit widths', () => {
  it('deduplicates: 10,000 rows of 3 values make 3 symbols in first-appearance order', () => {
    const rows = Array.from({ length: 10_000 }, (_, r) => ({
      s: ['c', 'a', 'b'][r % 3] ?? null,
      i: (r % 3) - 1,
      n: r % 7 === 0 ? null : 'x',
    }));
    const d = roundTrip(table({ s: 'string', i: 'int', n: 'string' }, rows));
    expect(d.symbols[0]).toEqual(['c', 'a', 'b'].map((text) => ({ type: 4, text })));
    expect(d.symbols[1]).toEqual([-1, 0, 1].map((number) => ({ type: 1, number })));
    expect(d.header.fields.map((f) => [f.noOfSymbols, f.bitWidth, f.bitOffset, f.bias])).toEqual([
      [3, 2, 0, 0],
      [3, 2, 2, 0],
      [1, 2, 4, -2],
    ]);
    expect(d.header.recordByteSize).toBe(1);
    expect(d.header.length).toBe(10_000);
  });

  // [distinct values, with NULL?, expected BitWidth] — the spec §3.3 table.
  const cases: [number, boolean, number][] = [
    [1, false, 0],
    [1, true, 2],
    [2, false, 1],
    [2, true, 2],
    [3, false, 2],
    [4, false, 2],
    [5, false, 3],
    [256, false, 8],
    [257, false, 9],
    [254, true, 8],
    [255, true, 9],
    [1024, false, 10],
    [1025, true, 11],
  ];
  it.each(cases)('%i distinct values (NULLs: %s) → BitWidth %i', (n, nulls, width) => {
    const values = Array.from({ length: n }, (_, i) => i * 3 - 7);
    const rows: Record<string, CellValue>[] = [
      ...values.map((v) => ({ v, s: `s${v}`, pad: 'p' })),
      ...(nulls ? [{ v: null, s: null, pad: 'p' }] : []),
    ];
    const d = roundTrip(table({ pad: 'string', v: 'int', s: 'string' }, rows));
    const [pad, v, s] = d.header.fields;
    expect(pad?.bitWidth).toBe(0);
    expect(v).toMatchObject({ bitWidth: width, bitOffset: 0, bias: nulls ? -2 : 0, noOfSymbols: n });
    expect(s).toMatchObject({
      bitWidth: width,
      bitOffset: width === 0 ? 0 : width,
      bias: nulls ? -2 : 0,
      noOfSymbols: n,
    });
    expect(d.header.recordByteSize).toBe(Math.max(1, Math.ceil((2 * width) / 8)));
  });

  it('packs wide records (> 6 bytes, 20 fields of 8–9 bits) exactly', () => {
    const cols = Object.fromEntries(
      Array.from({ length: 20 }, (_, k) => [`c${k}`, k % 2 === 0 ? 'int' : 'string'] as const),
    );
    const rows = Array.from({ length: 300 }, (_, r) =>
      Object.fromEntries(
        Array.from({ length: 20 }, (_, k) => [
          `c${k}`,
          k % 2 === 0 ? (r * (k + 1)) % (250 + k) : r % 5 === k % 5 ? null : `v${(r * 7) % (256 + k)}`,
        ]),
      ),
    );
    const d = roundTrip(table(cols, rows));
    expect(d.header.recordByteSize).toBeGreaterThan(6);
    const widths = d.header.fields.map((f) => f.bitWidth);
    expect(d.header.recordByteSize).toBe(Math.ceil(widths.reduce((a, b) => a + b, 0) / 8));
    // Independent check with BigInt arithmetic: V = Σ stored · 2^BitOffset.
    const R = d.header.recordByteSize;
    d.indexes.forEach((idx, r) => {
      let expected = 0n;
      d.header.fields.forEach((f, k) => {
        const stored = (idx[k] ?? 0) < 0 ? 0 : (idx[k] ?? 0) - f.bias;
        expected += BigInt(stored) << BigInt(f.bitOffset);
      });
      let v = 0n;
      for (let k = R - 1; k >= 0; k--) v = (v << 8n) | BigInt(d.indexTable[r * R + k] ?? 0);
      expect(v).toBe(expected);
    });
  });
});

describe('tablefile encoder: edge cases', () => {
  it('zero rows: widths 0, RecordByteSize 1, file ends right after the NUL', () => {
    const t = table({ s: 'string', i: 'int', f: 'float', t: 'timestamp' }, []);
    const file = encodeQvd(t);
    const d = checkFile(file, t);
    expect(file.length).toBe(file.indexOf(0) + 1);
    expect(
      d.header.fields.map((f) => [f.noOfSymbols, f.offset, f.length, f.bitWidth, f.bitOffset, f.bias, f.tags]),
    ).toEqual(Array.from({ length: 4 }, () => [0, 0, 0, 0, 0, 0, []]));
    expect([d.header.recordByteSize, d.header.noOfRecords, d.header.offset, d.header.length]).toEqual([1, 0, 0, 0]);
    expect(d.header.fields[3]?.numberFormat?.type).toBe('TIMESTAMP');
    expect(d.header.text).toContain(`       <Tags></Tags>${CRLF}`);
    expect(d.rows).toEqual([]);
  });

  it('one column, one row', () => {
    const d = roundTrip(table({ only: 'float' }, [{ only: 2.5 }]));
    expect(d.header.fields).toHaveLength(1);
    expect(d.header.fields[0]).toMatchObject({
      bitWidth: 0,
      bitOffset: 0,
      bias: 0,
      noOfSymbols: 1,
      offset: 0,
      length: 9,
    });
    expect([d.header.recordByteSize, d.header.length]).toEqual([1, 1]);
    expect(d.indexTable).toEqual(hex('00'));
  });

  it('an all-NULL column: no symbols, Bias −2, width 0, no tags, declared format', () => {
    const d = roundTrip(table({ n: 'int', s: 'string' }, [{ n: null, s: 'a' }, { n: Number.NaN, s: 'b' }, { s: 'a' }]));
    expect(d.header.fields[0]).toMatchObject({
      noOfSymbols: 0,
      length: 0,
      offset: 0,
      bias: -2,
      bitWidth: 0,
      bitOffset: 0,
      tags: [],
    });
    expect(d.header.fields[0]?.numberFormat?.type).toBe('INTEGER');
    expect(d.header.fields[1]).toMatchObject({ offset: 0, bitOffset: 0, bitWidth: 1 });
  });

  it('every field of width 0 with rows: RecordByteSize 1 and N zero bytes', () => {
    const d = roundTrip(
      table(
        { a: 'string', b: 'int', c: 'timestamp' },
        Array.from({ length: 5 }, () => ({ a: 'same', b: 7, c: null })),
      ),
    );
    expect(d.header.recordByteSize).toBe(1);
    expect(d.indexTable).toEqual(new Uint8Array(5));
  });

  it('caps strings at 1 MiB of UTF-8 at a code-point boundary; longer strings equal after the cap are one symbol', () => {
    const MiB = 1_048_576;
    const exact = 'a'.repeat(MiB);
    const split = `${'b'.repeat(MiB - 1)}é tail`; // é would straddle the limit
    const split4 = `${'c'.repeat(MiB - 2)}🎉`; // 4 bytes from MiB−2
    const t = table({ s: 'string' }, [
      { s: exact },
      { s: `${exact}more` },
      { s: split },
      { s: split4 },
      { s: 'é'.repeat(MiB) },
    ]);
    const d = roundTrip(t);
    const texts = (d.symbols[0] ?? []).map((s) => (s.type === 4 ? s.text : ''));
    expect(texts.map((s) => utf8(s).length)).toEqual([MiB, MiB - 1, MiB - 2, MiB]);
    expect(d.indexes.map((r) => r[0])).toEqual([0, 0, 1, 2, 3]);
  });

  it('header text: names are escaped and control characters removed', () => {
    const t: Table = {
      name: 'a<b>&c\u0001\t\n"\'',
      columns: [
        { name: 'x & <y>', type: 'string' },
        { name: 'tab\there', type: 'int' },
      ],
      rows: [{ 'x & <y>': 'v', 'tab\there': 1 }],
      ...FIXED,
    };
    const file = encodeQvd(t);
    const d = decodeQvd(file);
    expect(d.header.tableName).toBe('a<b>&c"\'');
    expect(d.header.text).toContain('<TableName>a&lt;b&gt;&amp;c"\'</TableName>');
    expect(d.header.text).toContain('<FieldName>x &amp; &lt;y&gt;</FieldName>');
    expect(d.header.fields.map((f) => f.name)).toEqual(['x & <y>', 'tabhere']);
    expect(d.rows).toEqual([{ 'x & <y>': 'v', tabhere: 1 }]);
  });

  it('columns named like Object.prototype members read only own properties', () => {
    const rows = [{ constructor: 'c', toString: 1 }, {}, JSON.parse('{"__proto__": "p"}') as Record<string, CellValue>];
    const columns: Table['columns'] = [
      { name: 'constructor', type: 'string' },
      { name: 'toString', type: 'int' },
      { name: '__proto__', type: 'string' },
    ];
    const d = roundTrip({ ...table({}, rows), columns });
    expect(d.rows[1]).toEqual({ constructor: null, toString: null, ['__proto__']: null });
    expect(Object.getOwnPropertyDescriptor(d.rows[2], '__proto__')?.value).toBe('p');
  });
});

describe('tablefile encoder: rejects invalid input', () => {
  const bad =
    (t: Partial<Table>): (() => Uint8Array) =>
    () =>
      encodeQvd({ ...table({ a: 'string' }, []), ...t });
  it('duplicate, empty or no field names', () => {
    expect(
      bad({
        columns: [
          { name: 'a', type: 'string' },
          { name: 'a', type: 'int' },
        ],
      }),
    ).toThrow(/duplicate field name "a"/);
    expect(
      bad({
        columns: [
          { name: 'a\u0001', type: 'string' },
          { name: 'a', type: 'int' },
        ],
      }),
    ).toThrow(/duplicate/);
    expect(bad({ columns: [{ name: '', type: 'string' }] })).toThrow(/empty field name/);
    expect(bad({ columns: [{ name: '\n', type: 'string' }] })).toThrow(/empty field name/);
    expect(bad({ columns: [] })).toThrow(/at least one column/);
  });

  it('cells of the wrong type, non-integers in int columns, out-of-range timestamps, invalid createdAt', () => {
    const rows = (v: unknown): Record<string, CellValue>[] => [{ a: v } as unknown as Record<string, CellValue>];
    expect(bad({ rows: rows(1) })).toThrow(/column "a" \(string\), row 0: expected a string, got number/);
    expect(bad({ columns: [{ name: 'a', type: 'int' }], rows: rows('1') })).toThrow(/expected a number, got string/);
    expect(bad({ columns: [{ name: 'a', type: 'int' }], rows: rows(1.5) })).toThrow(/expected an integer/);
    expect(bad({ columns: [{ name: 'a', type: 'float' }], rows: rows(true) })).toThrow(/got boolean/);
    expect(bad({ columns: [{ name: 'a', type: 'timestamp' }], rows: rows('2024-01-01T00:00:00Z') })).toThrow(
      /epoch milliseconds/,
    );
    expect(bad({ columns: [{ name: 'a', type: 'timestamp' }], rows: rows(8.64e15 + 1) })).toThrow(
      /outside the time range/,
    );
    expect(bad({ createdAt: new Date(Number.NaN) })).toThrow(/createdAt/);
  });
});

describe('test reader (second implementation of the spec)', () => {
  const header = (): string => new TextDecoder().decode(WORKED_FILE.subarray(0, WORKED_FILE.indexOf(0)));
  const withHeader = (text: string, body = WORKED_FILE.subarray(WORKED_FILE.indexOf(0))): Uint8Array =>
    concat(utf8(text), body);
  const bodyWith = (offset: number, byte: number): Uint8Array => {
    const body = WORKED_FILE.slice(WORKED_FILE.indexOf(0));
    body[1 + offset] = byte;
    return body;
  };
  const worked = [
    { name: 'alpha', count: 10, ts: 45306.4375 },
    { name: 'béta', count: null, ts: 45306.75 },
    { name: 'alpha', count: 42, ts: 45351.25 },
  ];

  it('reads the spec example', () => {
    expect(decodeQvd(WORKED_FILE).rows).toEqual(worked);
  });

  it('accepts an LF-only header, <Fmt/>, unknown and missing informational elements, a BOM', () => {
    const lf = header().replaceAll(CRLF, '\n');
    const d = decodeQvd(withHeader(lf));
    expect(d.header.terminator).toBe('LF');
    expect(d.rows).toEqual(worked);
    const variant = header()
      .replace('<Fmt></Fmt>', '<Fmt/>')
      .replace('<QvBuildNo>50689</QvBuildNo>', '<Unknown><Offset>9</Offset></Unknown>')
      .replace(/ {3}<ProfilingData><\/ProfilingData>\r\n/, '');
    expect(decodeQvd(concat(hex('ef bb bf'), withHeader(variant))).rows).toEqual(worked);
  });

  it('accepts out-of-order BitOffsets, over-wide fields, stored 1 under Bias −2, RecordByteSize 0 with widths 0', () => {
    const permuted = header()
      .replace(
        '<FieldName>name</FieldName>\r\n       <BitOffset>0</BitOffset>',
        '<FieldName>name</FieldName>\r\n       <BitOffset>7</BitOffset>',
      )
      .replace(
        '<FieldName>count</FieldName>\r\n       <BitOffset>1</BitOffset>',
        '<FieldName>count</FieldName>\r\n       <BitOffset>2</BitOffset>',
      )
      .replace(
        '<FieldName>ts</FieldName>\r\n       <BitOffset>3</BitOffset>',
        '<FieldName>ts</FieldName>\r\n       <BitOffset>0</BitOffset>',
      );
    const body = WORKED_FILE.slice(WORKED_FILE.indexOf(0));
    // ts bits 0–1, count bits 2–3, name bit 7 (ts0,count2,name0)=0x08 (ts1,count0,name1)=0x81 (ts2,count3,name0)=0x0e
    body.set([0x08, 0x81, 0x0e], body.length - 3);
    expect(decodeQvd(withHeader(permuted, body)).rows).toEqual(worked);

    const wide = header().replace(
      '<FieldName>ts</FieldName>\r\n       <BitOffset>3</BitOffset>\r\n       <BitWidth>2</BitWidth>',
      '<FieldName>ts</FieldName>\r\n       <BitOffset>3</BitOffset>\r\n       <BitWidth>5</BitWidth>',
    );
    expect(decodeQvd(withHeader(wide)).rows).toEqual(worked);

    expect(decodeQvd(withHeader(header(), bodyWith(123 + 1, 0x0b))).rows[1]).toEqual({
      name: 'béta',
      count: null,
      ts: 45306.75,
    });

    const constant = encodeQvd(table({ k: 'string' }, [{ k: 'x' }, { k: 'x' }, { k: 'x' }]));
    const zero = patchHeader(
      patchHeader(constant, '<RecordByteSize>1</RecordByteSize>', '<RecordByteSize>0</RecordByteSize>'),
      '<Length>3</Length>\r\n   <Lineage>',
      '<Length>0</Length>\r\n   <Lineage>',
    );
    expect(decodeQvd(zero.subarray(0, zero.length - 3)).rows).toEqual([{ k: 'x' }, { k: 'x' }, { k: 'x' }]);
  });

  it('rejects compression, encryption, unknown type bytes, bad sizes, trailing bytes, out-of-range indexes and overlaps', () => {
    expect(() =>
      decodeQvd(patchHeader(WORKED_FILE, '<Compression></Compression>', '<Compression>GZIP</Compression>')),
    ).toThrow(/compressed/);
    expect(() =>
      decodeQvd(patchHeader(WORKED_FILE, '<EncryptionInfo></EncryptionInfo>', '<EncryptionInfo>x</EncryptionInfo>')),
    ).toThrow(/encrypted/);
    expect(() => decodeQvd(withHeader(header(), bodyWith(0, 0x03)))).toThrow(/unknown symbol type byte 3/);
    expect(() => decodeQvd(concat(WORKED_FILE, hex('00')))).toThrow(/file is 2809 bytes/);
    expect(() => decodeQvd(WORKED_FILE.subarray(0, -1))).toThrow(/file is 2807 bytes/);
    expect(() => decodeQvd(withHeader(header(), bodyWith(123 + 2, 0x1e)))).toThrow(/index 3 ≥ NoOfSymbols 3/);
    expect(() =>
      decodeQvd(patchHeader(WORKED_FILE, '<NoOfSymbols>3</NoOfSymbols>', '<NoOfSymbols>4</NoOfSymbols>')),
    ).toThrow(/3 symbols, NoOfSymbols 4/);
    expect(() => decodeQvd(patchHeader(WORKED_FILE, '<Length>14</Length>', '<Length>13</Length>'))).toThrow(
      /NUL|runs past/,
    );
    expect(() => decodeQvd(patchHeader(WORKED_FILE, '<BitOffset>3</BitOffset>', '<BitOffset>2</BitOffset>'))).toThrow(
      /overlap/,
    );
    expect(() => decodeQvd(patchHeader(WORKED_FILE, '<BitOffset>3</BitOffset>', '<BitOffset>7</BitOffset>'))).toThrow(
      /outside the record/,
    );
    expect(() => decodeQvd(patchHeader(WORKED_FILE, '<Bias>0</Bias>', '<Bias>x</Bias>'))).toThrow(/not an integer/);
    expect(() => decodeQvd(patchHeader(WORKED_FILE, '</QvdTableHeader>', '</QvdTableHeaderX>'))).toThrow();
    expect(() => decodeQvd(WORKED_FILE.subarray(0, 100))).toThrow(/no NUL/);
  });
});
