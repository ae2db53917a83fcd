/**
 * The listener's message queue (platform-formats.md §3): datagrams wait here for one of
 * `maxConcurrent` handlers. The check "is there room?" and the enqueue are one synchronous step, so
 * the waiting count never exceeds `maxSize`, even in a burst, and at most `maxSize + maxConcurrent`
 * datagrams are in Svc at once. Every enqueued datagram ends in exactly one of `processed` or
 * `failed`; a handler that throws is `failed` and the queue goes on.
 */

/** How a handler ended for one datagram. */
export type HandlerOutcome = 'processed' | 'failed';

export type MessageHandler<T> = (item: T) => Promise<HandlerOutcome>;

export interface MessageQueueOptions<T> {
  maxSize: number;
  maxConcurrent: number;
  handler: MessageHandler<T>;
  /** Called when a handler throws (the datagram is counted `failed`). */
  onHandlerError: (err: unknown, item: T) => void;
  /** Monotonic milliseconds; injectable for tests. */
  now?: () => number;
}

/** The last 1,000 handler durations (§3): avg, p95 = sorted[ceil(n × 0.95) − 1], max. */
export class DurationWindow {
  private readonly values: number[] = [];
  private next = 0;

  constructor(private readonly capacity = 1000) {}

  add(ms: number): void {
    if (this.values.length < this.capacity) this.values.push(ms);
    else this.values[this.next] = ms;
    this.next = (this.next + 1) % this.capacity;
  }

  get size(): number {
    return this.values.length;
  }

  stats(): { avg: number; p95: number; max: number } {
    const n = this.values.length;
    if (n === 0) return { avg: 0, p95: 0, max: 0 };
    const sorted = [...this.values].sort((a, b) => a - b);
    const sum = sorted.reduce((a, b) => a + b, 0);
    return { avg: sum / n, p95: sorted[Math.ceil(n * 0.95) - 1] ?? 0, max: sorted[n - 1] ?? 0 };
  }

  clear(): void {
    this.values.length = 0;
    this.next = 0;
  }
}

export class MessageQueue<T> {
  private readonly waiting: T[] = [];
  /** Index of the first waiting item in `waiting` (a ring would save little; we compact lazily). */
  private head = 0;
  private runningCount = 0;
  private readonly idleWaiters: (() => void)[] = [];
  private readonly now: () => number;
  readonly durations = new DurationWindow();
  /**
   * Counters since the queue was made, never reset (the metrics endpoint exposes them as counters):
   * enqueued, then exactly one of processed / failed each. §3's "since the last write" is the
   * listener's view of these (listener.ts).
   */
  queued = 0;
  processed = 0;
  failed = 0;

  constructor(private readonly options: MessageQueueOptions<T>) {
    this.now = options.now ?? (() => performance.now());
  }

  /** Datagrams waiting (running handlers excluded). */
  get size(): number {
    return this.waiting.length - this.head;
  }

  get running(): number {
    return this.runningCount;
  }

  get maxSize(): number {
    return this.options.maxSize;
  }

  /** waiting / maxSize × 100 */
  get utilisationPct(): number {
    return (this.size / this.options.maxSize) * 100;
  }

  /**
   * Check and enqueue in one step: false (and nothing enqueued) when `maxSize` datagrams are already
   * waiting. A free handler takes the item at once, so with idle handlers nothing waits at all.
   */
  offer(item: T): boolean {
    if (this.runningCount < this.options.maxConcurrent && this.size === 0) {
      this.queued += 1;
      this.run(item);
      return true;
    }
    if (this.size >= this.options.maxSize) return false;
    this.queued += 1;
    this.waiting.push(item);
    return true;
  }

  /** Resolves when nothing waits and no handler runs (used at stop). */
  idle(): Promise<void> {
    if (this.size === 0 && this.runningCount === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private take(): T | undefined {
    if (this.head >= this.waiting.length) return undefined;
    const item = this.waiting[this.head] as T;
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    return item;
  }

  private run(item: T): void {
    this.runningCount += 1;
    const started = this.now();
    let outcome: Promise<HandlerOutcome>;
    try {
      outcome = this.options.handler(item);
    } catch (err) {
      outcome = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    outcome.then(
      (result) => this.finish(item, started, result, undefined),
      (err: unknown) => this.finish(item, started, 'failed', err ?? new Error('handler rejected')),
    );
  }

  private finish(item: T, started: number, outcome: HandlerOutcome, err: unknown): void {
    this.durations.add(this.now() - started);
    if (outcome === 'processed') this.processed += 1;
    else this.failed += 1;
    if (err !== undefined) {
      try {
        this.options.onHandlerError(err, item);
      } catch {
        // The error callback must never stop the queue.
      }
    }
    this.runningCount -= 1;
    const next = this.take();
    if (next !== undefined) this.run(next);
    else if (this.runningCount === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
