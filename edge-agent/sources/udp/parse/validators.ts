/**
 * Validators of platform-formats.md §0.2. Pure, never throw. Every validator judges the text exactly
 * as given (no trimming); the parsers give them the field with its control characters removed (§0.1).
 */

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** A uuid of any version/variant, returned lower-case; `''` when the text is not one. */
export function uuid(text: string): string {
  return text.length === 36 && UUID.test(text) ? text.toLowerCase() : '';
}

/** The three platform timestamp forms (§0.2). `\d` is ASCII-only without the `u` flag. */
const COMPACT_ISO = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\.(\d{3})(?:Z|([+-])(\d{2}):?(\d{2}))$/;
const EXTENDED_ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})(?:Z|([+-])(\d{2}):?(\d{2}))$/;
const LOCAL = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}),(\d{3})$/;

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
 * The last text read and its result: a log event's `ts_iso` is read by the validator and then again
 * for the event time (§0.3), one right after the other.
 */
let lastText = '';
let lastResult: Timestamp | null = null;

function readTimestamp(text: string): Timestamp | null {
  if (text === lastText) return lastResult;
  const result = readTimestampOnce(text);
  lastText = text;
  lastResult = result;
  return result;
}

function readTimestampOnce(text: string): Timestamp | null {
  if (text.length > TS_MAX_LENGTH) return null;
  // The three forms differ at fixed places (T at 8; T or space at 10), so one regex is tried, not three.
  let form: TimestampForm;
  let m: RegExpExecArray | null;
  if (text.charCodeAt(8) === 0x54) {
    form = 'compact';
    m = COMPACT_ISO.exec(text);
  } else if (text.charCodeAt(10) === 0x54) {
    form = 'extended';
    m = EXTENDED_ISO.exec(text);
  } else {
    form = 'local';
    m = LOCAL.exec(text);
  }
  if (m === null) return null;
  const [, ys, mos, ds, hs, mis, ss, mss, sign, ohs, oms] = m;
  const year = Number(ys);
  const month = Number(mos);
  const day = Number(ds);
  const hour = Number(hs);
  const minute = Number(mis);
  const second = Number(ss);
  const milli = Number(mss);
  // A real calendar date and time: the platform (.NET DateTime) starts at year 1 and has no leap seconds.
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes: number | null = null;
  if (form !== 'local') {
    if (sign === undefined) {
      offsetMinutes = 0; // `Z`
    } else {
      const oh = Number(ohs);
      const om = Number(oms);
      if (oh > 23 || om > 59) return null;
      offsetMinutes = (sign === '-' ? -1 : 1) * (oh * 60 + om);
    }
  }
  const wallMs = daysFromCivil(year, month, day) * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000 + milli;
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
