/**
 * Line protocol, written byte-for-byte the same to tsdb versions 1, 2 and 3 (platform-formats.md §6.0),
 * and the nanosecond point time of §0.3.
 *
 * Rules applied by `toLine`:
 * - measurement: control characters (U+0000–U+001F, U+007F) removed; `,` and space escaped by `\`
 *   (the line-protocol reference of all three versions; `=` needs no escape in a measurement and
 *   version 3 would keep a `\=` literally);
 * - tag keys, tag values and field keys: control characters removed; `,`, `=` and space escaped by
 *   `\`; no other character altered (`LAB\goran` stays `LAB\goran`);
 * - a tag whose value is empty (also after removing control characters), `undefined` or `null` is
 *   omitted; every point keeps at least one tag;
 * - a field whose name is also a tag key of the point (omitted empty tags included) is written as
 *   `<name>_field`;
 * - fields that are `null`/`undefined` are skipped (and `json` fields whose value has no JSON text); a
 *   point needs at least one field;
 * - integers: signed 64-bit with the `i` suffix; floats always without it, also whole numbers
 *   (`total=7` is a float in line protocol), never in exponent notation; strings in `"` with `"`
 *   and `\` escaped by `\`; booleans `true`/`false`;
 * - the timestamp is always written, in nanoseconds.
 *
 * A point that no tsdb could store as given is refused with a `LineProtocolError` instead of
 * producing a line that would break the request for its neighbours: no tags or no fields, an
 * empty name, the name `time`, a measurement starting with `#` (a comment line), a backslash
 * that line protocol would read as an escape (at the end of a name or value, or before `,`, `=`
 * or space: influxd 1.6 rejects such a tag as "invalid tag format" and unescapes `\=` in a
 * measurement, so the text would not survive), a non-finite float, an
 * integer outside the signed 64-bit range, a timestamp outside the signed 64-bit range.
 */

export type FieldValue =
  | { type: 'int'; value: number | bigint }
  | { type: 'float'; value: number }
  | { type: 'string'; value: string }
  | { type: 'bool'; value: boolean }
  /**
   * A string field holding the JSON text of `value`, cut after `maxLength` UTF-16 units; skipped
   * like a null field when `value` has none (`undefined`, a function). The text is made when the line
   * is written, not with the point: the audit point's 2 KB `payload` text then dies young, where
   * held by a batch's points until the tsdb answered it survived young-generation collections and
   * was copied and promoted (a large part of the queue → tsdb bench's GC time).
   */
  | { type: 'json'; value: unknown; maxLength: number };

/** The text of a `json` field, or undefined when its value has none. */
export function jsonFieldText(field: { value: unknown; maxLength: number }): string | undefined {
  // JSON.stringify's type says string, but it returns undefined for undefined and functions.
  const text: string | undefined = JSON.stringify(field.value);
  return text === undefined || text.length <= field.maxLength ? text : text.slice(0, field.maxLength);
}

export interface Point {
  measurement: string;
  /** Insertion order is the order in the line. Empty, `undefined` and `null` values are omitted. */
  tags: Record<string, string | null | undefined>;
  /** `null`/`undefined` fields are skipped. */
  fields: Record<string, FieldValue | null | undefined>;
  /** Nanoseconds since the epoch (see `pointTime` / `PointClock`). */
  timeNs: bigint;
}

/** Shorthands for field values. */
export const int = (value: number | bigint): FieldValue => ({ type: 'int', value });
export const float = (value: number): FieldValue => ({ type: 'float', value });
export const str = (value: string): FieldValue => ({ type: 'string', value });
export const bool = (value: boolean): FieldValue => ({ type: 'bool', value });
export const json = (value: unknown, maxLength: number): FieldValue => ({ type: 'json', value, maxLength });

export class LineProtocolError extends Error {
  override readonly name = 'LineProtocolError';
  constructor(
    message: string,
    readonly measurement: string,
  ) {
    super(message);
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
// Tested before replacing: most texts hold none of these, and `test` allocates nothing.
const HAS_CONTROL = /[\u0000-\u001f\u007f]/;
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/g;
const NAME_SPECIALS = /[,= ]/g;
const HAS_NAME_SPECIAL = /[,= ]/;
const MEASUREMENT_SPECIALS = /[, ]/g;
const HAS_MEASUREMENT_SPECIAL = /[, ]/;

function stripControl(text: string): string {
  return HAS_CONTROL.test(text) ? text.replace(CONTROL_CHARS, '') : text;
}

/**
 * Escapes `specials` with `\`. A backslash that line protocol would read as an escape itself (last
 * character, or followed by a character that gets escaped) cannot be written faithfully: refused.
 */
function escapeText(text: string, specials: RegExp, hasSpecial: RegExp, what: string, measurement: string): string {
  for (let i = text.indexOf('\\'); i !== -1; i = text.indexOf('\\', i + 1)) {
    const next = text[i + 1];
    if (next === undefined || next === ',' || next === '=' || next === ' ') {
      throw new LineProtocolError(
        `${what} ${JSON.stringify(text)} has a backslash before ${next === undefined ? 'its end' : JSON.stringify(next)}, which line protocol reads as an escape`,
        measurement,
      );
    }
  }
  return hasSpecial.test(text) ? text.replace(specials, '\\$&') : text;
}

/**
 * Escaped tag and field keys by their raw text: a point's keys are the same few names point after
 * point, so each is checked and escaped once. Bounded: keys from outside (platform tags) cannot
 * grow it without limit; past the bound a key is escaped each time, as before.
 */
const NAME_CACHE_LIMIT = 4096;
const escapedNames = new Map<string, string>();

function name(raw: string, what: string, measurement: string): string {
  const cached = escapedNames.get(raw);
  if (cached !== undefined) return cached;
  const clean = stripControl(raw);
  if (clean === '') throw new LineProtocolError(`empty ${what}`, measurement);
  if (clean === 'time') throw new LineProtocolError(`${what} "time" is reserved`, measurement);
  const escaped = escapeText(clean, NAME_SPECIALS, HAS_NAME_SPECIAL, what, measurement);
  if (escapedNames.size < NAME_CACHE_LIMIT) escapedNames.set(raw, escaped);
  return escaped;
}

/** Either a control character or a surrogate: one scan of the text instead of two. */
const HAS_CONTROL_OR_SURROGATE = /[\u0000-\u001f\u007f\ud800-\udfff]/;

/**
 * A string field's text in `"`, with `"` and `\` escaped (nothing else: control characters stay, and
 * a lone surrogate becomes U+FFFD when the line is encoded as UTF-8). Without control characters and
 * surrogates, JSON.stringify of the text is exactly that (it escapes only `"`, `\`, control
 * characters and lone surrogates) and it is native. The tsdb writer does not use this: it escapes
 * the text's UTF-8 bytes in its request buffer (`LineBuffer.putString`), with the same bytes.
 */
export function quoted(text: string): string {
  if (!HAS_CONTROL_OR_SURROGATE.test(text)) return JSON.stringify(text);
  return `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/** A finite number in plain decimal notation (no exponent): the shortest digits that round-trip. */
export function formatFloat(value: number): string {
  const text = String(value);
  const m = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (m === null) return text;
  const [, sign = '', intPart = '', fracPart = '', expText = '0'] = m;
  const exp = Number(expText);
  const digits = intPart + fracPart;
  const point = intPart.length + exp; // position of the decimal point within `digits`
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

function fieldValue(key: string, field: FieldValue, measurement: string): string {
  switch (field.type) {
    case 'int': {
      const v = field.value;
      // Every safe integer is inside the 64-bit range: no BigInt needed for the common case.
      if (typeof v === 'number' && Number.isSafeInteger(v)) return `${v}i`;
      if (typeof v === 'number' && !Number.isInteger(v))
        throw new LineProtocolError(`integer field ${key} is not an integer: ${v}`, measurement);
      const big = BigInt(v);
      if (big < INT64_MIN || big > INT64_MAX)
        throw new LineProtocolError(`integer field ${key} is outside the signed 64-bit range: ${big}`, measurement);
      return `${big}i`;
    }
    case 'float':
      if (!Number.isFinite(field.value))
        throw new LineProtocolError(`float field ${key} is not finite: ${field.value}`, measurement);
      return formatFloat(field.value);
    case 'string':
      return quoted(field.value);
    case 'json':
      return quoted(jsonFieldText(field) ?? '');
    case 'bool':
      return field.value ? 'true' : 'false';
  }
}

/**
 * Takes the pieces of one line, in order: `toLine` joins them, the tsdb writer writes them into its
 * request buffer. `putString` takes a string field's raw text, to be written in `"` with `"` and `\`
 * escaped (what `quoted` returns): the writer escapes it in the buffer, with no escaped copy of the
 * text (the audit point's 2 KB `payload` field was a tenth of the queue → tsdb bench's time).
 */
export interface LineSink {
  put(piece: string): void;
  putString(text: string): void;
}

/**
 * The keys of the line being written (its tag keys, then its field keys), reused: `writeLine` runs
 * to its end (or throws) before the next line starts. A list searched in order up to `LINEAR_KEYS`
 * keys, a Set past that (a point with very many keys): a Set per line, even cleared and reused,
 * allocated a new table at each `clear()` and more as it grew, for every line (≈ 0.4 KB per audit
 * point, much of it copied by the scavenges: bench/pipeline.mjs --profile=survivors).
 */
const LINEAR_KEYS = 32;

class KeyList {
  private readonly keys: string[] = [];
  private count = 0;
  private wide: Set<string> | null = null;

  get size(): number {
    return this.count;
  }

  reset(): void {
    this.count = 0;
    this.wide = null;
  }

  add(key: string): void {
    if (this.wide !== null) {
      this.wide.add(key);
    } else if (this.count === LINEAR_KEYS) {
      this.wide = new Set(this.keys);
      this.wide.add(key);
    } else this.keys[this.count] = key;
    this.count += 1;
  }

  has(key: string): boolean {
    if (this.wide !== null) return this.wide.has(key);
    for (let i = 0; i < this.count; i++) if (this.keys[i] === key) return true;
    return false;
  }
}

const TAG_KEYS = new KeyList();
const FIELD_KEYS = new KeyList();

/**
 * One line of line protocol (no trailing newline) as pieces given to `sink`, in order. Throws
 * `LineProtocolError` for a point no tsdb could store, possibly after some pieces: the caller
 * drops what it was given of that line.
 */
export function writeLine(point: Point, sink: LineSink): void {
  const rawMeasurement = point.measurement;
  const measurement = stripControl(rawMeasurement);
  if (measurement === '') throw new LineProtocolError('empty measurement', rawMeasurement);
  if (measurement.startsWith('#'))
    throw new LineProtocolError('a measurement starting with "#" would be read as a comment', rawMeasurement);
  sink.put(escapeText(measurement, MEASUREMENT_SPECIALS, HAS_MEASUREMENT_SPECIAL, 'measurement', rawMeasurement));

  const tagKeys = TAG_KEYS;
  tagKeys.reset();
  let tagCount = 0;
  for (const rawKey in point.tags) {
    if (!Object.hasOwn(point.tags, rawKey)) continue;
    const rawValue = point.tags[rawKey];
    const key = name(rawKey, 'tag key', rawMeasurement);
    tagKeys.add(stripControl(rawKey));
    const value = rawValue === undefined || rawValue === null ? '' : stripControl(rawValue);
    if (value === '') continue;
    sink.put(`,${key}=${escapeText(value, NAME_SPECIALS, HAS_NAME_SPECIAL, `tag ${rawKey}`, rawMeasurement)}`);
    tagCount++;
  }
  if (tagCount === 0) throw new LineProtocolError('a point needs at least one non-empty tag', rawMeasurement);

  const fieldKeys = FIELD_KEYS;
  fieldKeys.reset();
  for (const rawKey in point.fields) {
    if (!Object.hasOwn(point.fields, rawKey)) continue;
    const field = point.fields[rawKey];
    if (field === undefined || field === null) continue;
    const text = field.type === 'json' ? jsonFieldText(field) : undefined;
    if (field.type === 'json' && text === undefined) continue;
    const cleanKey = stripControl(rawKey);
    const finalKey = tagKeys.has(cleanKey) ? `${cleanKey}_field` : cleanKey;
    if (fieldKeys.has(finalKey))
      throw new LineProtocolError(
        `field ${finalKey} given twice (after the _field suffix of tag names)`,
        rawMeasurement,
      );
    sink.put(`${fieldKeys.size === 0 ? ' ' : ','}${name(finalKey, 'field key', rawMeasurement)}=`);
    fieldKeys.add(finalKey);
    if (field.type === 'string') sink.putString(field.value);
    else if (text !== undefined) sink.putString(text);
    else sink.put(fieldValue(finalKey, field, rawMeasurement));
  }
  if (fieldKeys.size === 0) throw new LineProtocolError('a point needs at least one field', rawMeasurement);

  if (typeof point.timeNs !== 'bigint' || point.timeNs < INT64_MIN || point.timeNs > INT64_MAX) {
    throw new LineProtocolError(
      `timestamp outside the signed 64-bit nanosecond range: ${String(point.timeNs)}`,
      rawMeasurement,
    );
  }
  sink.put(` ${point.timeNs}`);
}

/** One line of line protocol (no trailing newline). Throws `LineProtocolError` for a point no tsdb could store. */
export function toLine(point: Point): string {
  let line = '';
  writeLine(point, {
    put: (piece) => {
      line += piece;
    },
    putString: (text) => {
      line += quoted(text);
    },
  });
  return line;
}
