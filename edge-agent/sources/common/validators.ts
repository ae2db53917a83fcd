/**
 * Validators of platform-formats.md §0.2, one of the spec's shared rules: the UDP parsers check every
 * field with them, and the health poller reads the platform's start time with `tsToInstantMs`. The
 * file stays whole: the timestamp reader and its cache serve `ts` and `tsToInstantMs` alike. Pure,
 * never throw. Every validator judges the text exactly as given (no trimming); the callers give them
 * the field with its control characters removed (§0.1).
 */

/**
 * A uuid of any version/variant (`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`),
 * returned lower-case; `''` when the text is not one. Read by position, not by a regex and an
 * unconditional toLowerCase: a log datagram has up to four of them, nearly always lower-case already,
 * and the text itself is then the answer (bench/udp-steps.mjs, the handler step).
 */
export function uuid(text: string): string {
  if (text.length !== 36) return '';
  let upper = false;
  for (let i = 0; i < 36; i++) {
    const c = text.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d) return '';
    } else if (c >= 0x41 && c <= 0x46) upper = true;
    else if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return '';
  }
  return upper ? text.toLowerCase() : text;
}

/*
 * The three platform timestamp forms (§0.2), read by position rather than by regex (the parsers
 * read two per log datagram); exactly the spec's regexes, `\d` being an ASCII digit:
 *   compact   ^\d{8}T\d{6}\.\d{3}(Z|[+-]\d{2}:?\d{2})$
 *   extended  ^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}(Z|[+-]\d{2}:?\d{2})$
 *   local     ^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}$
 */

/** The number of the `length` ASCII digits at `at`, or -1 when one of them is not a digit (or missing). */
function digits(text: string, at: number, length: number): number {
  let value = 0;
  for (let i = at; i < at + length; i++) {
    const d = text.charCodeAt(i) - 0x30;
    if (!(d >= 0 && d <= 9)) return -1;
    value = value * 10 + d;
  }
  return value;
}

/** Positions of the parts in each form: year, month, day, hour, minute, second, millisecond, zone (end). */
const COMPACT_AT = {
  y: 0,
  mo: 4,
  d: 6,
  h: 9,
  mi: 11,
  s: 13,
  ms: 16,
  end: 19,
  seps: [
    [8, 0x54],
    [15, 0x2e],
  ],
} as const;
const EXTENDED_AT = {
  y: 0,
  mo: 5,
  d: 8,
  h: 11,
  mi: 14,
  s: 17,
  ms: 20,
  end: 23,
  seps: [
    [4, 0x2d],
    [7, 0x2d],
    [10, 0x54],
    [13, 0x3a],
    [16, 0x3a],
    [19, 0x2e],
  ],
} as const;
const LOCAL_AT = {
  y: 0,
  mo: 5,
  d: 8,
  h: 11,
  mi: 14,
  s: 17,
  ms: 20,
  end: 23,
  seps: [
    [4, 0x2d],
    [7, 0x2d],
    [10, 0x20],
    [13, 0x3a],
    [16, 0x3a],
    [19, 0x2c],
  ],
} as const;

/** The zone at `at` to the end: `Z` → 0, `±hh[:]mm` → minutes east of UTC (range unchecked), else null. */
function zoneAt(text: string, at: number): number | null {
  const left = text.length - at;
  const sign = text.charCodeAt(at);
  if (left === 1) return sign === 0x5a ? 0 : null;
  if ((sign !== 0x2b && sign !== 0x2d) || (left !== 5 && left !== 6)) return null;
  if (left === 6 && text.charCodeAt(at + 3) !== 0x3a) return null;
  const oh = digits(text, at + 1, 2);
  const om = digits(text, at + left - 2, 2);
  if (oh < 0 || om < 0) return null;
  if (oh > 23 || om > 59) return Number.NaN;
  return (sign === 0x2d ? -1 : 1) * (oh * 60 + om);
}

/** Longest valid timestamp: `2021-11-09T15:37:26.028+02:00`. */
const TS_MAX_LENGTH = 29;

export type TimestampForm = 'compact' | 'extended' | 'local';

interface Timestamp {
  form: TimestampForm;
  /** Milliseconds since the epoch of the wall-clock fields read as UTC (offset not applied). */
  wallMs: number;
  /** Offset east of UTC in minutes; `null` for the local form. */
  offsetMinutes: number | null;
}

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(y: number, m: number): number {
  return m === 2 && isLeapYear(y) ? 29 : (DAYS_IN_MONTH[m - 1] ?? 0);
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const mp = (m + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/**
 * The last two texts read and their results: a log event's `ts_iso` and `ts_local` are read by the
 * validator, then `ts_iso` again (and `ts_local` when it was not valid) for the event time (§0.3).
 * With one slot the second read of `ts_iso` missed: `ts_local` had taken the slot.
 */
let lastText = '';
let lastResult: Timestamp | null = null;
let olderText = '';
let olderResult: Timestamp | null = null;

function readTimestamp(text: string): Timestamp | null {
  if (text === lastText) return lastResult;
  if (text === olderText) return olderResult;
  const result = readTimestampOnce(text);
  olderText = lastText;
  olderResult = lastResult;
  lastText = text;
  lastResult = result;
  return result;
}

function readTimestampOnce(text: string): Timestamp | null {
  if (text.length > TS_MAX_LENGTH) return null;
  // The three forms differ at fixed places: T at 8 (compact), T or a space at 10.
  const form: TimestampForm =
    text.charCodeAt(8) === 0x54 ? 'compact' : text.charCodeAt(10) === 0x54 ? 'extended' : 'local';
  const at = form === 'compact' ? COMPACT_AT : form === 'extended' ? EXTENDED_AT : LOCAL_AT;
  // An indexed loop, not a for-of destructuring the pairs: the cheaper of the two on a path every log
  // datagram takes twice (bench/udp-steps.mjs, its handler step, includes it).
  const seps = at.seps;
  for (let j = 0; j < seps.length; j++) {
    const sep = seps[j];
    if (sep === undefined || text.charCodeAt(sep[0]) !== sep[1]) return null;
  }
  if (form === 'local' && text.length !== at.end) return null;
  const year = digits(text, at.y, 4);
  const month = digits(text, at.mo, 2);
  const day = digits(text, at.d, 2);
  const hour = digits(text, at.h, 2);
  const minute = digits(text, at.mi, 2);
  const second = digits(text, at.s, 2);
  const milli = digits(text, at.ms, 3);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0 || milli < 0) return null;
  const offsetMinutes = form === 'local' ? null : zoneAt(text, at.end);
  if (form !== 'local' && offsetMinutes === null) return null;
  // A real calendar date and time: the platform (.NET DateTime) starts at year 1 and has no leap seconds.
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  // An offset beyond ±23:59 is no offset.
  if (offsetMinutes !== null && Number.isNaN(offsetMinutes)) return null;
  const wallMs =
    daysFromCivil(year, month, day) * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000 + milli;
  return { form, wallMs, offsetMinutes };
}

/** The timestamp form of a valid platform timestamp, or `null`. */
export function timestampForm(text: string): TimestampForm | null {
  return readTimestamp(text)?.form ?? null;
}

/** `ts` of §0.2: the text unchanged when it is a valid platform timestamp, else `''`. */
export function ts(text: string): string {
  return readTimestamp(text) === null ? '' : text;
}

/**
 * The instant (ms since the epoch) of a valid compact or extended ISO timestamp. The local form has
 * no offset and is never turned into an instant (§0.3): `null`, as for anything invalid.
 */
export function tsToInstantMs(text: string): number | null {
  const t = readTimestamp(text);
  if (t === null || t.offsetMinutes === null) return null;
  return t.wallMs - t.offsetMinutes * 60_000;
}

const INT = /^-?\d+$/;
const FLOAT = /^-?\d+(?:\.\d+)?$/;
/** 2^53 in decimal: the bound of `int`, inclusive. */
const INT_LIMIT_DIGITS = '9007199254740992';

/** `int` of §0.2: `^-?\d+$` within −2^53 … 2^53 (inclusive), else `null`. Leading zeros are allowed. */
export function int(text: string): number | null {
  if (!INT.test(text)) return null;
  const negative = text.charCodeAt(0) === 0x2d;
  let i = negative ? 1 : 0;
  while (i < text.length - 1 && text.charCodeAt(i) === 0x30) i++;
  const digits = text.slice(i);
  if (digits.length > INT_LIMIT_DIGITS.length) return null;
  if (digits.length === INT_LIMIT_DIGITS.length && digits > INT_LIMIT_DIGITS) return null;
  const value = Number(digits);
  return negative && value !== 0 ? -value : value;
}

/** `int` with a lower bound (`int ≥ 1`, `int ≥ 0` of §2.2): `null` below it. */
export function intAtLeast(text: string, min: number): number | null {
  const value = int(text);
  return value !== null && value >= min ? value : null;
}

/**
 * `float` of §0.2: a decimal number `^-?\d+(\.\d+)?$`, else `null`. A text too large for a double
 * (which would become ±Infinity) is `null` too; `-0` becomes `0`.
 */
export function float(text: string): number | null {
  if (!FLOAT.test(text)) return null;
  const value = Number(text);
  if (!Number.isFinite(value)) return null;
  return value === 0 ? 0 : value;
}
