/**
 * At most one log line per key and interval, so a flood (a destination that is down, a sender of
 * garbage, a client without a version) does not become a flood of log lines; the next line written
 * can say how many were left out. The one mechanism behind every throttled WARN/ERROR of Svc.
 */

/** Past this many keys, those whose interval is over are forgotten (a flood of distinct senders stays bounded). */
const SWEEP_AT = 10_000;

export class LogThrottle {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly intervalMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Whether a line for `key` is written now: the first one always, then at most one per interval.
   * `suppressed` is the number of lines left out since the last one written.
   */
  take(key: string): { log: boolean; suppressed: number } {
    const t = this.now();
    const entry = this.last.get(key);
    if (entry === undefined || t - entry.at >= this.intervalMs) {
      if (entry === undefined && this.last.size >= SWEEP_AT) this.sweep(t);
      this.last.set(key, { at: t, suppressed: 0 });
      return { log: true, suppressed: entry?.suppressed ?? 0 };
    }
    entry.suppressed++;
    return { log: false, suppressed: entry.suppressed };
  }

  private sweep(t: number): void {
    for (const [key, entry] of this.last) if (t - entry.at >= this.intervalMs) this.last.delete(key);
    // All keys are within their interval: forget them all rather than grow without bound.
    if (this.last.size >= SWEEP_AT) this.last.clear();
  }
}
