/**
 * In-process RateLimiter for local mode (one process, so a Map is the whole truth). `consume` runs
 * synchronously up to its returned promise, so concurrent calls can never lose an increment.
 *
 * Memory stays bounded: whenever a call lands in a newer window than the last sweep, every entry of
 * an older window is deleted. The map therefore only holds keys seen in the current window (plus,
 * at most, keys of one earlier window until the first call of the new one), no matter how many
 * distinct IPs have called over the process lifetime.
 */
import { assertValidLimit, decide, type RateLimitDecision, type RateLimiter, windowOf } from './port.js';

export interface MemoryRateLimiterOptions {
  /** maxPerMinute. */
  limit: number;
  /** Clock used when `consume` gets no `nowMs`; Date.now by default. */
  now?: () => number;
}

interface Counter {
  windowStart: number;
  count: number;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly counters = new Map<string, Counter>();
  private readonly limit: number;
  private readonly now: () => number;
  /** Start of the newest window swept so far. */
  private sweptWindowStart = Number.NEGATIVE_INFINITY;

  constructor(options: MemoryRateLimiterOptions) {
    assertValidLimit(options.limit);
    this.limit = options.limit;
    this.now = options.now ?? Date.now;
  }

  /** Number of keys currently tracked (for tests and diagnostics). */
  get size(): number {
    return this.counters.size;
  }

  consume(key: string, nowMs: number = this.now()): Promise<RateLimitDecision> {
    const { start } = windowOf(nowMs);
    if (start > this.sweptWindowStart) this.sweep(start);

    const counter = this.counters.get(key);
    let count: number;
    if (counter !== undefined && counter.windowStart === start) {
      count = ++counter.count;
    } else {
      // First request of this key in this window (or its entry belongs to another window).
      count = 1;
      this.counters.set(key, { windowStart: start, count });
    }
    return Promise.resolve(decide(count, this.limit, nowMs));
  }

  private sweep(currentWindowStart: number): void {
    for (const [key, counter] of this.counters) {
      if (counter.windowStart < currentWindowStart) this.counters.delete(key);
    }
    this.sweptWindowStart = currentWindowStart;
  }
}
