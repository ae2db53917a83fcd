/**
 * Helpers shared by the network writers (MQTT, monsaas):
 * - `withRetries`: platform-formats.md §6.0 step 2 — a request is retried on transient failure up to
 *   3 times after 1, 2 and 4 s, no wait longer than 10 s (a server's `Retry-After` may lengthen a wait
 *   up to that cap). What counts as transient is the caller's decision.
 * (Their log lines are throttled by `LogThrottle` of shared/logging/throttle.ts.)
 */

/** §6.0 step 2: waits before the 1st, 2nd and 3rd retry. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1_000, 2_000, 4_000];
/** §6.0 step 2: no wait before a retry is longer than this. */
export const RETRY_DELAY_CAP_MS = 10_000;

export interface RetryOptions<T> {
  /** Wait before each retry; its length is the number of retries. Default `DEFAULT_RETRY_DELAYS_MS`. */
  delaysMs?: readonly number[];
  /** Longest wait; default `RETRY_DELAY_CAP_MS`. */
  capMs?: number;
  /** Whether an outcome is worth another attempt. */
  isTransient: (outcome: T) => boolean;
  /** A wait the server asked for (e.g. `Retry-After`), used when longer than the planned delay. */
  requestedWaitMs?: (outcome: T) => number | undefined;
  /** Called before each wait (for a DEBUG line). */
  onRetry?: (outcome: T, retry: number, waitMs: number) => void;
  /** How to wait; default a timer. */
  sleep?: (ms: number) => Promise<void>;
}

export interface RetryResult<T> {
  /** The outcome of the last attempt. */
  outcome: T;
  /** Attempts made, the first one included. */
  attempts: number;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `attempt` until it gives a non-transient outcome or the retries are used up. `attempt` must not throw. */
export async function withRetries<T>(
  attempt: (n: number) => Promise<T>,
  options: RetryOptions<T>,
): Promise<RetryResult<T>> {
  const delays = options.delaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  const cap = options.capMs ?? RETRY_DELAY_CAP_MS;
  const wait = options.sleep ?? sleep;
  for (let n = 1; ; n++) {
    const outcome = await attempt(n);
    const delay = delays[n - 1];
    if (delay === undefined || !options.isTransient(outcome)) return { outcome, attempts: n };
    const waitMs = Math.max(0, Math.min(cap, Math.max(delay, options.requestedWaitMs?.(outcome) ?? 0)));
    options.onRetry?.(outcome, n, waitMs);
    await wait(waitMs);
  }
}

/** `Retry-After` as milliseconds; only the delta-seconds form (an HTTP date is ignored). */
export function retryAfterMs(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return undefined;
  return Math.round(Number(value) * 1_000);
}
