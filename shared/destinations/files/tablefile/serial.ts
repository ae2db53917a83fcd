/**
 * Date serial numbers of the table-file format (spec §4.2): days since 1899-12-30 00:00 UTC, the
 * fraction being the time of day. Pure arithmetic, so it works for every integer millisecond and
 * gives the same bits everywhere.
 */

const MS_PER_DAY = 86_400_000;
/** 25569 × 86400000: milliseconds from 1899-12-30 to 1970-01-01. */
export const SERIAL_EPOCH_OFFSET_MS = 2_209_161_600_000;

/** Writer rule: one IEEE division of two exact integers (`epochMs` must be an integer). */
export function epochMsToSerial(epochMs: number): number {
  return (epochMs + SERIAL_EPOCH_OFFSET_MS) / MS_PER_DAY;
}

/** Reader rule: exact to the millisecond for the years 1900–2200. */
export function serialToEpochMs(serial: number): number {
  return Math.round(serial * MS_PER_DAY) - SERIAL_EPOCH_OFFSET_MS;
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/** `YYYY` for a proleptic Gregorian year: at least 4 digits, a `-` before years below 0. */
function year4(y: number): string {
  const digits = String(Math.abs(y)).padStart(4, '0');
  return y < 0 ? `-${digits}` : digits;
}

/**
 * `YYYY-MM-DD hh:mm:ss.fff` in UTC for an integer epoch millisecond. Civil date from day number
 * after H. Hinnant's `civil_from_days`, so there is no Date range limit and no allocation besides
 * the result.
 */
export function formatTimestampUtc(epochMs: number): string {
  const days = Math.floor(epochMs / MS_PER_DAY);
  let rest = epochMs - days * MS_PER_DAY;
  const hh = Math.floor(rest / 3_600_000);
  rest -= hh * 3_600_000;
  const mi = Math.floor(rest / 60_000);
  rest -= mi * 60_000;
  const ss = Math.floor(rest / 1000);
  const fff = rest - ss * 1000;

  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);

  return `${year4(y)}-${pad2(m)}-${pad2(d)} ${pad2(hh)}:${pad2(mi)}:${pad2(ss)}.${pad3(fff)}`;
}
