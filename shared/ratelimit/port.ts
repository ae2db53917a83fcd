/**
 * Port of the per-client-IP HTTP rate limit of the audit API (audit-event-api.md, "Limits"):
 * a FIXED 1-minute window aligned to epoch minutes (12:00:00.000–12:00:59.999, ...), one counter
 * per key (client IP) and window. Two adapters implement it: `memory.ts` for the single local
 * process and `dynamodb.ts` for Lambda, where many instances share one counter. Both use
 * `windowOf` and `decide` below, so they give identical answers for identical counts.
 */

export interface RateLimitDecision {
  allowed: boolean;
  /** maxPerMinute. */
  limit: number;
  /** max(0, limit - count) after this request. */
  remaining: number;
  /** Unix seconds at which the current window ends (`x-ratelimit-reset`). */
  resetAt: number;
  /** ceil((windowEnd - now) / 1000), at least 1 (`retry-after`); meaningful when !allowed. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Counts one request for `key` at `nowMs` (default: the limiter's clock) and decides. */
  consume(key: string, nowMs?: number): Promise<RateLimitDecision>;
}

export const WINDOW_MS = 60_000;

/** Attribute names of the DynamoDB adapter's table; the CDK stack uses the same ones (functions/contract.ts). */
export const RATE_LIMIT_TABLE_KEYS = { partitionKey: 'pk', ttlAttribute: 'expiresAt' } as const;

/** The fixed window containing `nowMs`: [start, end), aligned to epoch minutes. */
export function windowOf(nowMs: number): { start: number; end: number } {
  const start = Math.floor(nowMs / WINDOW_MS) * WINDOW_MS;
  return { start, end: start + WINDOW_MS };
}

/**
 * The decision for a request that brought the window's counter to `count` (this request
 * included): requests 1..limit are allowed, every later one in the same window is refused.
 */
export function decide(count: number, limit: number, nowMs: number): RateLimitDecision {
  const { end } = windowOf(nowMs);
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetAt: Math.ceil(end / 1000),
    retryAfterSeconds: Math.max(1, Math.ceil((end - nowMs) / 1000)),
  };
}

/** Throws unless `limit` is a usable maxPerMinute (a positive safe integer). */
export function assertValidLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new RangeError(`rate limit must be a positive integer, got ${String(limit)}`);
  }
}
