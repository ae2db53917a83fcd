/**
 * §0.3 point times: `eventMs × 1,000,000 + a discriminator` nanoseconds, and the process-wide counter
 * that makes the discriminators. It decides a queued event's `timeNs` (events.ts) where the event
 * is accepted: the audit API, the UDP listeners, the pollers and Svc's own points take it from here,
 * and the destinations read the time back, so none of them depends on the tsdb's code.
 */
const NS_PER_MS = 1_000_000n;
/** The last millisecond a point time can have: 2^63 - 1 nanoseconds after the epoch (2262-04-11). */
export const MAX_POINT_MS = 9_223_372_036_854;
const DISCRIMINATOR_MODULUS = 1_000_000n;

/**
 * §0.3: `eventMs × 1,000,000 + (discriminator mod 1,000,000)` nanoseconds. A fractional `eventMs` is
 * floored to the millisecond.
 */
export function pointTime(eventMs: number, discriminator: bigint | number): bigint {
  if (!Number.isFinite(eventMs)) throw new RangeError(`event time is not finite: ${eventMs}`);
  if (typeof discriminator === 'number' && !Number.isInteger(discriminator))
    throw new RangeError(`discriminator is not an integer: ${discriminator}`);
  const c = ((BigInt(discriminator) % DISCRIMINATOR_MODULUS) + DISCRIMINATOR_MODULUS) % DISCRIMINATOR_MODULUS;
  return BigInt(Math.floor(eventMs)) * NS_PER_MS + c;
}

/** The zeros a decimal of n digits (index n, 1–6) needs in front to be six digits long. */
const LEADING_ZEROS = ['', '00000', '0000', '000', '00', '0', ''] as const;

/** `n` (0 ≤ n < 1,000,000, an integer) in exactly six digits. */
function sixDigits(n: number): string {
  const text = String(n);
  return (LEADING_ZEROS[text.length] ?? '') + text;
}

/**
 * §0.3's process-wide counter: one instance per process, handed to every source that builds points
 * (injected, not a module global, so tests get their own). Each `next()` takes the next counter
 * value, modulo 1,000,000.
 */
export class PointClock {
  private counter: number;

  constructor(start = 0) {
    if (!Number.isInteger(start) || start < 0)
      throw new RangeError(`counter start must be a non-negative integer: ${start}`);
    this.counter = start % 1_000_000;
  }

  /** The timestamp of the next point built for an event at `eventMs`. */
  next(eventMs: number): bigint {
    return this.reserve(eventMs, 1);
  }

  /**
   * `next(eventMs)` as the decimal text the queue carries (JSON has no 64-bit integers). For an event
   * after the epoch that is the millisecond followed by the counter in six digits, which the UDP
   * listeners build per datagram without BigInt arithmetic; anything else goes through `next`.
   */
  nextText(eventMs: number): string {
    const ms = Math.floor(eventMs);
    if (!(ms >= 1 && ms <= MAX_POINT_MS)) return this.next(eventMs).toString();
    const c = this.counter;
    this.counter = (c + 1) % 1_000_000;
    // The millisecond as its millions and the rest in six digits: small integers, which V8 turns into
    // text from its number-string cache, where a 13-digit millisecond needs a double's conversion
    // whenever it differs from the last one (events carry their own times). bench/point-clock.mjs
    // measures it against that and the BigInt path. Both parts are exact: ms < 2^53.
    const millions = Math.floor(ms / 1_000_000);
    const rest = ms - millions * 1_000_000;
    return millions === 0 ? `${rest}${sixDigits(c)}` : `${millions}${sixDigits(rest)}${sixDigits(c)}`;
  }

  /**
   * The timestamp of the first of `points` points of one event at `eventMs`, taking that many counter
   * values; the others are `nthPointTime(first, i)`. (A poll's points are built at the writers,
   * after the queue, from the one time the edge decided.)
   */
  reserve(eventMs: number, points: number): bigint {
    const time = pointTime(eventMs, this.counter);
    this.counter = (this.counter + points) % 1_000_000;
    return time;
  }
}

/** The time of point `i` of an event whose first point is at `first` (see PointClock.reserve). */
export function nthPointTime(first: bigint, i: number): bigint {
  const ms = first / NS_PER_MS;
  return pointTime(Number(ms), Number(first % NS_PER_MS) + i);
}
