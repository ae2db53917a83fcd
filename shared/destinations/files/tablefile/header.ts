/**
 * The XML header of a table file (spec §1.2–§1.4): the platform's declaration, element order and
 * indentation, CR LF after every line. The caller appends the NUL terminator.
 */

export type NumberFormatType = 'UNKNOWN' | 'INTEGER' | 'REAL' | 'TIMESTAMP' | 'DATE';

export interface NumberFormat {
  type: NumberFormatType;
  nDec: number;
  useThou: 0 | 1;
  fmt: string;
  dec: string;
  thou: string;
}

export interface FieldHeader {
  name: string;
  bitOffset: number;
  bitWidth: number;
  bias: number;
  numberFormat: NumberFormat;
  noOfSymbols: number;
  offset: number;
  length: number;
  tags: readonly string[];
}

export interface TableHeader {
  creatorDoc: string;
  /** `YYYY-MM-DD hh:mm:ss`, UTC. */
  createUtcTime: string;
  tableName: string;
  fields: readonly FieldHeader[];
  recordByteSize: number;
  noOfRecords: number;
  offset: number;
  length: number;
}

/** The build number written into `QvBuildNo` (a build seen in real platform files). */
export const QV_BUILD_NO = 50689;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const ANY_SURROGATE = /[\uD800-\uDFFF]/;

/** What UTF-8 encoding makes of a string: lone surrogates become U+FFFD (like `toWellFormed`). */
export function wellFormed(text: string): string {
  return ANY_SURROGATE.test(text) ? text.replace(LONE_SURROGATE, '\uFFFD') : text;
}

const HEADER_FORBIDDEN = /[\u0000-\u001F\u007F]/g;

/** Header text (names, comments): no U+0000–U+001F or U+007F (Svc choice, spec §5), well-formed. */
export function headerText(text: string): string {
  return wellFormed(text.replace(HEADER_FORBIDDEN, ''));
}

function escapeXml(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

const CRLF = '\r\n';

/** Renders the header text, through the final CR LF. Text values must already be `headerText`. */
export function renderHeader(h: TableHeader): string {
  const lines: string[] = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'];
  // 1 space plus 2 per nesting depth; the root has depth 0.
  const line = (depth: number, content: string): void => {
    lines.push(' '.repeat(1 + 2 * depth) + content);
  };
  const leaf = (depth: number, tag: string, value: string | number): void => {
    line(depth, `<${tag}>${typeof value === 'number' ? String(value) : escapeXml(value)}</${tag}>`);
  };

  line(0, '<QvdTableHeader>');
  leaf(1, 'QvBuildNo', QV_BUILD_NO);
  leaf(1, 'CreatorDoc', h.creatorDoc);
  leaf(1, 'CreateUtcTime', h.createUtcTime);
  leaf(1, 'SourceCreateUtcTime', '');
  leaf(1, 'SourceFileUtcTime', '');
  leaf(1, 'SourceFileSize', -1);
  leaf(1, 'StaleUtcTime', '');
  leaf(1, 'TableName', h.tableName);
  line(1, '<Fields>');
  for (const f of h.fields) {
    line(2, '<QvdFieldHeader>');
    leaf(3, 'FieldName', f.name);
    leaf(3, 'BitOffset', f.bitOffset);
    leaf(3, 'BitWidth', f.bitWidth);
    leaf(3, 'Bias', f.bias);
    line(3, '<NumberFormat>');
    leaf(4, 'Type', f.numberFormat.type);
    leaf(4, 'nDec', f.numberFormat.nDec);
    leaf(4, 'UseThou', f.numberFormat.useThou);
    leaf(4, 'Fmt', f.numberFormat.fmt);
    leaf(4, 'Dec', f.numberFormat.dec);
    leaf(4, 'Thou', f.numberFormat.thou);
    line(3, '</NumberFormat>');
    leaf(3, 'NoOfSymbols', f.noOfSymbols);
    leaf(3, 'Offset', f.offset);
    leaf(3, 'Length', f.length);
    leaf(3, 'Comment', '');
    if (f.tags.length === 0) {
      leaf(3, 'Tags', '');
    } else {
      line(3, '<Tags>');
      for (const tag of f.tags) leaf(4, 'String', tag);
      line(3, '</Tags>');
    }
    line(2, '</QvdFieldHeader>');
  }
  line(1, '</Fields>');
  leaf(1, 'Compression', '');
  leaf(1, 'RecordByteSize', h.recordByteSize);
  leaf(1, 'NoOfRecords', h.noOfRecords);
  leaf(1, 'Offset', h.offset);
  leaf(1, 'Length', h.length);
  line(1, '<Lineage>');
  line(2, '<LineageInfo>');
  leaf(3, 'Discriminator', 'INLINE;');
  leaf(3, 'Statement', '');
  line(2, '</LineageInfo>');
  line(1, '</Lineage>');
  leaf(1, 'Comment', '');
  leaf(1, 'EncryptionInfo', '');
  leaf(1, 'TableTags', '');
  leaf(1, 'ProfilingData', '');
  line(0, '</QvdTableHeader>');
  return lines.join(CRLF) + CRLF;
}
