/**
 * A strict table-file (QVD) reader for tests, written from /work/shared/spec/tablefile-format.md
 * alone (it shares no code with the encoder): a tiny XML parser for the header, the symbol tables
 * byte by byte, and the index records bit by bit (§3.1). It accepts the platform variations of
 * spec §7.14 and throws on anything corrupt.
 */

export interface XmlElement {
  name: string;
  children: XmlElement[];
  /** Concatenated text content (entities decoded, CR LF → LF). */
  text: string;
}

export interface QvdNumberFormat {
  type: string;
  nDec: number;
  useThou: number;
  fmt: string;
  dec: string;
  thou: string;
}

export interface QvdField {
  name: string;
  bitOffset: number;
  bitWidth: number;
  bias: number;
  numberFormat: QvdNumberFormat | undefined;
  noOfSymbols: number;
  offset: number;
  length: number;
  comment: string | undefined;
  tags: string[] | undefined;
  /** Names of the direct children, in file order. */
  childOrder: string[];
}

export interface QvdHeader {
  qvBuildNo: number | undefined;
  creatorDoc: string | undefined;
  createUtcTime: string | undefined;
  sourceCreateUtcTime: string | undefined;
  sourceFileUtcTime: string | undefined;
  sourceFileSize: number | undefined;
  staleUtcTime: string | undefined;
  tableName: string;
  fields: QvdField[];
  compression: string;
  recordByteSize: number;
  noOfRecords: number;
  offset: number;
  length: number;
  lineage: { discriminator: string; statement: string }[] | undefined;
  comment: string | undefined;
  encryptionInfo: string;
  tableTags: string[] | undefined;
  /** Names of the root's direct children, in file order. */
  childOrder: string[];
  /** The header text before the NUL, exactly as in the file. */
  text: string;
  /** B: the first byte after the NUL; every offset counts from here. */
  dataStart: number;
  /** What precedes the NUL after `</QvdTableHeader>`. */
  terminator: 'CRLF' | 'LF' | 'none' | 'other';
}

export type QvdSymbol =
  | { type: 1 | 2; number: number }
  | { type: 4; text: string }
  | { type: 5 | 6; number: number; text: string };

export type QvdValue = string | number | null;

export interface DecodedQvd {
  header: QvdHeader;
  /** Per field (header order), its symbol table. */
  symbols: QvdSymbol[][];
  /** Per row, per field (header order): the symbol index, negative for NULL. */
  indexes: number[][];
  /** Per row, by field name: string for `04`, the number for `01 02 05 06`, null for NULL. */
  rows: Record<string, QvdValue>[];
  /** The index table bytes. */
  indexTable: Uint8Array;
}

// ---------------------------------------------------------------------------------------------
// XML

function decodeEntities(raw: string): string {
  return raw.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_m, e: string) => {
    if (e === 'amp') return '&';
    if (e === 'lt') return '<';
    if (e === 'gt') return '>';
    if (e === 'quot') return '"';
    if (e === 'apos') return "'";
    return String.fromCodePoint(e.startsWith('#x') ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
  });
}

/** Parses the elements of a small XML document (no attributes needed, none kept); returns the root. */
export function parseXml(source: string): XmlElement {
  const xml = source.replace(/\r\n?/g, '\n');
  let pos = 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  while (pos < xml.length) {
    const lt = xml.indexOf('<', pos);
    const textEnd = lt === -1 ? xml.length : lt;
    if (textEnd > pos) {
      const raw = xml.slice(pos, textEnd);
      if (raw.includes('&') && !/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/.test(raw))
        throw new Error(`XML: bad entity in ${JSON.stringify(raw)}`);
      const top = stack[stack.length - 1];
      if (top !== undefined) top.text += decodeEntities(raw);
      else if (raw.trim() !== '') throw new Error('XML: text outside the root element');
    }
    if (lt === -1) break;
    if (xml.startsWith('<?', lt)) {
      const end = xml.indexOf('?>', lt);
      if (end === -1) throw new Error('XML: unterminated declaration');
      pos = end + 2;
      continue;
    }
    if (xml.startsWith('<!--', lt)) {
      const end = xml.indexOf('-->', lt);
      if (end === -1) throw new Error('XML: unterminated comment');
      pos = end + 3;
      continue;
    }
    const gt = xml.indexOf('>', lt);
    if (gt === -1) throw new Error('XML: unterminated tag');
    const tag = xml.slice(lt + 1, gt);
    pos = gt + 1;
    if (tag.startsWith('/')) {
      const name = tag.slice(1).trim();
      const open = stack.pop();
      if (open?.name !== name) throw new Error(`XML: </${name}> does not close <${open?.name ?? ''}>`);
      if (stack.length === 0) root = open;
      continue;
    }
    const selfClosing = tag.endsWith('/');
    const match = /^([A-Za-z_][\w.-]*)(\s[^]*)?$/.exec(selfClosing ? tag.slice(0, -1) : tag);
    if (match?.[1] === undefined) throw new Error(`XML: bad tag <${tag}>`);
    const element: XmlElement = { name: match[1], children: [], text: '' };
    const parent = stack[stack.length - 1];
    if (parent !== undefined) parent.children.push(element);
    else if (root !== undefined) throw new Error('XML: more than one root element');
    if (selfClosing) {
      if (parent === undefined) root = element;
    } else {
      stack.push(element);
    }
  }
  if (stack.length > 0) throw new Error(`XML: <${stack[stack.length - 1]?.name ?? ''}> is not closed`);
  if (root === undefined) throw new Error('XML: no root element');
  return root;
}

// ---------------------------------------------------------------------------------------------
// Header

function child(parent: XmlElement, name: string): XmlElement | undefined {
  const found = parent.children.filter((c) => c.name === name);
  if (found.length > 1) throw new Error(`header: <${parent.name}> has ${found.length} <${name}> children`);
  return found[0];
}

function optText(parent: XmlElement, name: string): string | undefined {
  return child(parent, name)?.text;
}

function reqText(parent: XmlElement, name: string): string {
  const value = optText(parent, name);
  if (value === undefined) throw new Error(`header: <${parent.name}> has no <${name}>`);
  return value;
}

function toInt(text: string, what: string): number {
  const t = text.trim();
  if (!/^-?\d+$/.test(t)) throw new Error(`header: ${what} is not an integer: ${JSON.stringify(text)}`);
  const n = Number(t);
  if (!Number.isSafeInteger(n)) throw new Error(`header: ${what} is too large: ${t}`);
  return n;
}

const optInt = (parent: XmlElement, name: string): number | undefined => {
  const t = optText(parent, name);
  return t === undefined ? undefined : toInt(t, name);
};
const reqInt = (parent: XmlElement, name: string): number => toInt(reqText(parent, name), `<${parent.name}>/<${name}>`);

function parseField(el: XmlElement): QvdField {
  const nf = child(el, 'NumberFormat');
  const tags = child(el, 'Tags');
  return {
    name: reqText(el, 'FieldName'),
    bitOffset: reqInt(el, 'BitOffset'),
    bitWidth: reqInt(el, 'BitWidth'),
    bias: reqInt(el, 'Bias'),
    numberFormat:
      nf === undefined
        ? undefined
        : {
            type: reqText(nf, 'Type').trim(),
            nDec: reqInt(nf, 'nDec'),
            useThou: reqInt(nf, 'UseThou'),
            fmt: reqText(nf, 'Fmt'),
            dec: reqText(nf, 'Dec'),
            thou: reqText(nf, 'Thou'),
          },
    noOfSymbols: reqInt(el, 'NoOfSymbols'),
    offset: reqInt(el, 'Offset'),
    length: reqInt(el, 'Length'),
    comment: optText(el, 'Comment'),
    tags: tags === undefined ? undefined : tags.children.filter((c) => c.name === 'String').map((c) => c.text),
    childOrder: el.children.map((c) => c.name),
  };
}

// ---------------------------------------------------------------------------------------------
// File

const SYMBOL_TEXT = new TextDecoder('utf-8', { fatal: true });

function readSymbols(data: DataView, bytes: Uint8Array, start: number, field: QvdField): QvdSymbol[] {
  const end = start + field.length;
  const out: QvdSymbol[] = [];
  let p = start;
  const need = (n: number): void => {
    if (p + n > end) throw new Error(`field ${field.name}: symbol at ${p - start} runs past Length ${field.length}`);
  };
  const text = (): string => {
    const nul = bytes.indexOf(0, p);
    if (nul === -1 || nul >= end) throw new Error(`field ${field.name}: text without NUL inside Length`);
    const s = SYMBOL_TEXT.decode(bytes.subarray(p, nul));
    p = nul + 1;
    return s;
  };
  while (p < end) {
    const type = bytes[p++];
    switch (type) {
      case 1:
        need(4);
        out.push({ type: 1, number: data.getInt32(p, true) });
        p += 4;
        break;
      case 2:
        need(8);
        out.push({ type: 2, number: data.getFloat64(p, true) });
        p += 8;
        break;
      case 4:
        out.push({ type: 4, text: text() });
        break;
      case 5: {
        need(4);
        const number = data.getInt32(p, true);
        p += 4;
        out.push({ type: 5, number, text: text() });
        break;
      }
      case 6: {
        need(8);
        const number = data.getFloat64(p, true);
        p += 8;
        out.push({ type: 6, number, text: text() });
        break;
      }
      default:
        throw new Error(`field ${field.name}: unknown symbol type byte ${String(type)} at ${p - 1 - start}`);
    }
  }
  if (out.length !== field.noOfSymbols)
    throw new Error(`field ${field.name}: ${out.length} symbols, NoOfSymbols ${field.noOfSymbols}`);
  return out;
}

/** Bit by bit, as spec §3.1 describes: no 32-bit operators on the value. */
function readBits(bytes: Uint8Array, recordStart: number, bitOffset: number, bitWidth: number): number {
  let value = 0;
  let weight = 1;
  for (let i = 0; i < bitWidth; i++) {
    const bit = bitOffset + i;
    const byte = bytes[recordStart + Math.floor(bit / 8)] ?? 0;
    if (Math.floor(byte / 2 ** (bit % 8)) % 2 === 1) value += weight;
    weight *= 2;
  }
  return value;
}

export function symbolValue(symbol: QvdSymbol): string | number {
  return symbol.type === 4 ? symbol.text : symbol.number;
}

export function decodeQvd(buf: Uint8Array): DecodedQvd {
  const nul = buf.indexOf(0);
  if (nul === -1) throw new Error('no NUL terminator after the header');
  let headerBytes = buf.subarray(0, nul);
  if (headerBytes[0] === 0xef && headerBytes[1] === 0xbb && headerBytes[2] === 0xbf)
    headerBytes = headerBytes.subarray(3);
  const text = new TextDecoder('utf-8', { fatal: true }).decode(headerBytes);
  if (!text.trimEnd().endsWith('</QvdTableHeader>')) throw new Error('header text does not end with </QvdTableHeader>');
  const tail = text.slice(text.lastIndexOf('</QvdTableHeader>') + '</QvdTableHeader>'.length);
  const terminator = tail === '\r\n' ? 'CRLF' : tail === '\n' ? 'LF' : tail === '' ? 'none' : 'other';
  const root = parseXml(text);
  if (root.name !== 'QvdTableHeader') throw new Error(`root element is <${root.name}>`);

  const fieldsEl = child(root, 'Fields');
  if (fieldsEl === undefined) throw new Error('header: no <Fields>');
  const lineageEl = child(root, 'Lineage');
  const tableTagsEl = child(root, 'TableTags');
  const header: QvdHeader = {
    qvBuildNo: optInt(root, 'QvBuildNo'),
    creatorDoc: optText(root, 'CreatorDoc'),
    createUtcTime: optText(root, 'CreateUtcTime'),
    sourceCreateUtcTime: optText(root, 'SourceCreateUtcTime'),
    sourceFileUtcTime: optText(root, 'SourceFileUtcTime'),
    sourceFileSize: optInt(root, 'SourceFileSize'),
    staleUtcTime: optText(root, 'StaleUtcTime'),
    tableName: reqText(root, 'TableName'),
    fields: fieldsEl.children.filter((c) => c.name === 'QvdFieldHeader').map(parseField),
    compression: optText(root, 'Compression') ?? '',
    recordByteSize: reqInt(root, 'RecordByteSize'),
    noOfRecords: reqInt(root, 'NoOfRecords'),
    offset: reqInt(root, 'Offset'),
    length: reqInt(root, 'Length'),
    lineage: lineageEl?.children
      .filter((c) => c.name === 'LineageInfo')
      .map((info) => ({ discriminator: reqText(info, 'Discriminator'), statement: reqText(info, 'Statement') })),
    comment: optText(root, 'Comment'),
    encryptionInfo: optText(root, 'EncryptionInfo') ?? '',
    tableTags: tableTagsEl?.children.filter((c) => c.name === 'String').map((c) => c.text),
    childOrder: root.children.map((c) => c.name),
    text,
    dataStart: nul + 1,
    terminator,
  };
  if (header.compression.trim() !== '')
    throw new Error(`compressed files are not supported (Compression ${header.compression})`);
  if (header.encryptionInfo.trim() !== '') throw new Error('encrypted files are not supported');

  const B = header.dataStart;
  const { recordByteSize: R, noOfRecords: N } = header;
  if (header.offset < 0 || header.length < 0 || R < 0 || N < 0)
    throw new Error('negative root Offset/Length/RecordByteSize/NoOfRecords');
  if (header.length !== N * R) throw new Error(`root Length ${header.length} ≠ NoOfRecords ${N} × RecordByteSize ${R}`);
  if (B + header.offset + header.length !== buf.length)
    throw new Error(`file is ${buf.length} bytes, header says ${B + header.offset + header.length}`);

  const names = new Set<string>();
  for (const f of header.fields) {
    if (names.has(f.name)) throw new Error(`duplicate field ${f.name}`);
    names.add(f.name);
    if (f.offset < 0 || f.length < 0 || f.offset + f.length > header.offset)
      throw new Error(`field ${f.name}: symbols [${f.offset}, +${f.length}) outside the symbol area`);
    if (f.noOfSymbols < 0) throw new Error(`field ${f.name}: negative NoOfSymbols`);
    if (f.bitWidth < 0 || f.bitWidth > 32) throw new Error(`field ${f.name}: BitWidth ${f.bitWidth}`);
    if (f.bitWidth > 0 && (f.bitOffset < 0 || f.bitOffset + f.bitWidth > 8 * R))
      throw new Error(`field ${f.name}: bits outside the record`);
  }
  if (R === 0 && N > 0 && header.fields.some((f) => f.bitWidth > 0))
    throw new Error('RecordByteSize 0 with fields of width > 0');
  const ranges = header.fields.filter((f) => f.bitWidth > 0).sort((a, b) => a.bitOffset - b.bitOffset);
  for (let i = 1; i < ranges.length; i++) {
    const prev = ranges[i - 1];
    const cur = ranges[i];
    if (prev !== undefined && cur !== undefined && prev.bitOffset + prev.bitWidth > cur.bitOffset)
      throw new Error(`fields ${prev.name} and ${cur.name} overlap`);
  }

  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const symbols = header.fields.map((f) => readSymbols(view, buf, B + f.offset, f));
  const indexStart = B + header.offset;
  const indexes: number[][] = [];
  const rows: Record<string, QvdValue>[] = [];
  for (let r = 0; r < N; r++) {
    const recordStart = indexStart + r * R;
    const rowIndexes: number[] = [];
    const row: Record<string, QvdValue> = {};
    header.fields.forEach((f, k) => {
      const stored = f.bitWidth === 0 ? 0 : readBits(buf, recordStart, f.bitOffset, f.bitWidth);
      const index = stored + f.bias;
      rowIndexes.push(index);
      let value: QvdValue = null;
      if (index >= 0) {
        const symbol = symbols[k]?.[index];
        if (symbol === undefined)
          throw new Error(`row ${r}, field ${f.name}: index ${index} ≥ NoOfSymbols ${f.noOfSymbols}`);
        value = symbolValue(symbol);
      }
      // defineProperty: a field named __proto__ is data, not the prototype.
      Object.defineProperty(row, f.name, { value, enumerable: true, writable: true, configurable: true });
    });
    indexes.push(rowIndexes);
    rows.push(row);
  }
  return { header, symbols, indexes, rows, indexTable: buf.subarray(indexStart, indexStart + header.length) };
}
