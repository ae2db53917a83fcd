/**
 * Global throughput limit of the queue (`auditEvents.queue.rateLimit`): a token bucket refilled at
 * maxPerMinute per minute that holds at most one second's worth, so a backlog drains at the
 * configured rate instead of in bursts.
 */
export class Throttle {
  private tokens: number;
  private last: number;
  private readonly perMs: number;
  private readonly capacity: number;

  constructor(
    maxPerMinute: number,
    private readonly now: () => number = Date.now,
  ) {
    this.perMs = maxPerMinute / 60_000;
    this.capacity = Math.max(1, Math.ceil(maxPerMinute / 60));
    this.tokens = this.capacity;
    this.last = now();
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.capacity, this.tokens + (t - this.last) * this.perMs);
    this.last = t;
  }

  /** How many of `wanted` may go now (at least 0); they are taken. */
  take(wanted: number): number {
    this.refill();
    const granted = Math.min(wanted, Math.floor(this.tokens));
    this.tokens -= granted;
    return granted;
  }

  /** Milliseconds until one more may go. */
  waitMs(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil((1 - this.tokens) / this.perMs);
  }
}
