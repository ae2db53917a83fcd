/**
 * Clock-skew correction of the lean AWS client (json-client.ts), as the AWS SDK does it
 * (@aws-sdk/core's AwsSdkSigV4Signer: getUpdatedSystemClockOffset, getSkewCorrectedDate; @smithy/core's
 * retry: CLOCK_SKEW_ERROR_CODES). AWS refuses a signature whose time is more than 5 minutes from its
 * own; on a host whose clock is that far off, every request would be refused. When a refusal names
 * the signing time and its `Date` header shows how far off this host is, the offset is kept and
 * every later request is signed at now + offset.
 *
 * One clock per process (awsClock): the host has one clock, so what SQS showed holds for Secrets
 * Manager too, and the metrics endpoint shows one offset (`svc_aws_clock_offset_seconds`).
 */
import type { Log } from '../logging/log.js';

/** Error names AWS answers a request signed at the wrong time with (the SDK's clock-skew codes, AccessDeniedException left out: it is mostly a real denial). */
export const CLOCK_SKEW_NAMES: ReadonlySet<string> = new Set([
  'AuthFailure',
  'InvalidSignatureException',
  'RequestExpired',
  'RequestInTheFuture',
  'RequestTimeTooSkewed',
  'SignatureDoesNotMatch',
]);

/** The names that only ever mean the signing time (the others also answer a wrong secret key). */
const TIME_ONLY_NAMES: ReadonlySet<string> = new Set(['RequestExpired', 'RequestInTheFuture', 'RequestTimeTooSkewed']);

/**
 * How far the answer's time may be from the signing time before the offset is corrected: AWS allows
 * 5 minutes; the SDK corrects from 4, so that a correction is in place before the refusals start.
 */
export const SKEW_THRESHOLD_MS = 4 * 60_000;

/** The SDK ignores an answer's time when the exchange took longer than this (the `Date` is too old to go by). */
const MAX_EXCHANGE_MS = 15 * 60_000;

/**
 * Whether an error answer refused the request for its signing time: a time-only name, an
 * InvalidSignatureException saying "Signature expired" (SQS, the SDK's own test), or a clock-skew
 * name whose answer's `Date` is at least SKEW_THRESHOLD_MS from the time the request was signed at
 * (`skewMs`: AwsClock.skewOf).
 */
export function isClockSkewRefusal(name: string, message: string, skewMs?: number): boolean {
  if (!CLOCK_SKEW_NAMES.has(name)) return false;
  return (
    TIME_ONLY_NAMES.has(name) ||
    /signature expired/i.test(message) ||
    (skewMs !== undefined && Math.abs(skewMs) >= SKEW_THRESHOLD_MS)
  );
}

/** What one exchange tells about the clock: its answer's `Date` and `Age` headers, and when it was sent and answered. */
export interface ClockSample {
  date: string | undefined;
  age: string | undefined;
  sentAt: number;
  receivedAt: number;
  /** The offset the request was signed with. */
  signedWithOffsetMs: number;
}

/** The offset of this host's clock from AWS's, kept for every later signature. */
export class AwsClock {
  private offset = 0;
  private warnedOffset = 0;
  private log: Pick<Log, 'warn'> | undefined;
  private pendingWarning = false;
  private signed = false;

  constructor(private readonly now: () => number = Date.now) {}

  /** Milliseconds to add to this host's time to get AWS's (0 until a refusal showed otherwise). */
  get offsetMs(): number {
    return this.offset;
  }

  /** Whether a request has been signed with this clock (the metrics endpoint shows the offset from then on). */
  get used(): boolean {
    return this.signed;
  }

  /** The time to sign a request at: now, corrected. */
  signingDate(): Date {
    this.signed = true;
    return new Date(this.now() + this.offset);
  }

  /**
   * Where the WARN of a correction goes (`svc edge` with cloud forwarding). A correction made before
   * (the secret fetch at start) is reported at once.
   */
  reportTo(log: Pick<Log, 'warn'>): void {
    this.log = log;
    if (this.pendingWarning) this.warn();
  }

  /**
   * How far the answer's time is from the time the request was signed at, when the answer can tell
   * (a `Date` header, no `Age` header of a cached answer, an exchange short enough): as the SDK's
   * getUpdatedSystemClockOffset reads it.
   */
  skewOf(sample: ClockSample): number | undefined {
    if (sample.date === undefined || sample.age !== undefined) return undefined;
    const serverTime = Date.parse(sample.date);
    if (Number.isNaN(serverTime) || sample.receivedAt - sample.sentAt > MAX_EXCHANGE_MS) return undefined;
    return serverTime - (sample.receivedAt + sample.signedWithOffsetMs);
  }

  /**
   * Takes the offset from a refusal for the signing time whose answer shows the skew, when it
   * differs from the current one by SKEW_THRESHOLD_MS or more (a `Date` has whole seconds: smaller
   * differences are its rounding, not the clock). True when the offset changed.
   */
  correct(sample: ClockSample): boolean {
    const skew = this.skewOf(sample);
    if (skew === undefined) return false;
    const offset = sample.signedWithOffsetMs + skew;
    if (Math.abs(offset - this.offset) < SKEW_THRESHOLD_MS) return false;
    this.offset = offset;
    if (Math.abs(this.offset - this.warnedOffset) >= SKEW_THRESHOLD_MS) this.warn();
    return true;
  }

  private warn(): void {
    if (this.log === undefined) {
      this.pendingWarning = true;
      return;
    }
    this.pendingWarning = false;
    this.warnedOffset = this.offset;
    const seconds = Math.round(this.offset / 1000);
    this.log.warn(
      { clockOffsetSeconds: seconds },
      `this host's clock is ${Math.abs(seconds)} s ${seconds > 0 ? 'behind' : 'ahead of'} AWS's (from the Date of a refused request): AWS requests are now signed ${seconds > 0 ? '+' : ''}${seconds} s from the local time; fix the host's time synchronisation (NTP)`,
    );
  }
}

/** The process's clock: every lean AWS client signs with it unless given its own (a test). */
export const awsClock = new AwsClock();
