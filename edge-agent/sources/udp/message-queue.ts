/**
 * The listener's message queue (platform-formats.md §3): datagrams wait here for one of
 * `maxConcurrent` handlers. The check "is there room?" and the enqueue are one synchronous step, so
 * the waiting count never exceeds `maxSize`, even in a burst, and at most `maxSize + maxConcurrent`
 * datagrams are in Svc at once. Every enqueued datagram ends in exactly one of `processed` or
 * `failed`; a handler that throws is `failed` and the queue goes on.
 *
 * A handler with a `batch` form is run on batches: the datagrams a free handler slot takes during
 * one event-loop turn (node:dgram delivers one `message` per datagram, a read burst of many per
 * turn) are handed over together on `setImmediate`, at most `maxConcurrent` at a time, and a batch
 * that finishes synchronously frees its slots at once for the next one. Each datagram of a batch
 * still counts as one running handler (`queue_running`) and one handler duration, so the §3 figures
 * mean what they did; only the per-datagram promise and closures are gone.
 */
import { Fifo } from '../../../shared/util/fifo.js';

/** How a handler ended for one datagram. */
export type HandlerOutcome = 'processed' | 'failed';

/** A datagram of a batch whose handling threw: counted `failed`, and the error reported as a handler error. */
export class HandlerFailure {
  constructor(readonly error: unknown) {}
}

/** Per item of a batch, in order. */
export type BatchOutcomes = readonly (HandlerOutcome | HandlerFailure)[];

/** Handles a batch; synchronously when it can (no promise per batch then). */
export type BatchHandler<T> = (items: readonly T[]) => BatchOutcomes | Promise<BatchOutcomes>;

/** A handler of one item; with `batch`, the queue runs batches through that instead. */
export type MessageHandler<T> = ((item: T) => Promise<HandlerOutcome>) & { readonly batch?: BatchHandler<T> };

/** A handler from its batch form: the one-item form runs a batch of one (so both share one implementation). */
export function batchHandler<T>(batch: BatchHandler<T>): MessageHandler<T> {
  const one = async (item: T): Promise<HandlerOutcome> => {
    const outcome = (await batch([item]))[0];
    if (outcome instanceof HandlerFailure) throw outcome.error;
    return outcome ?? 'failed';
  };
  return Object.assign(one, { batch });
}

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
  private readonly waiting = new Fifo<T>();
  /** Index of the first waiting item in `waiting` (a ring would save little; we compact lazily). */
  private head = 0;
  private runningCount = 0;
  private readonly idleWaiters: (() => void)[] = [];
  /** Batch mode: the items taken into the next batch (already counted running), run on setImmediate. */
  private collecting: T[] | null = null;
  private collectingSince = 0;
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
      if (this.options.handler.batch === undefined) this.run(item);
      else this.collect(item);
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
    return this.waiting.shift();
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

  /** Batch mode: a free slot takes the item into the batch that runs at the end of this event-loop turn. */
  private collect(item: T): void {
    this.runningCount += 1;
    if (this.collecting === null) {
      this.collecting = [];
      this.collectingSince = this.now();
      setImmediate(() => this.runBatches());
    }
    this.collecting.push(item);
  }

  /**
   * Batch mode: runs the collected batch, then batches of what waits while slots are free; a batch
   * that finishes synchronously frees its slots at once, one that returns a promise keeps them until
   * it settles (and then runs this again).
   */
  private runBatches(): void {
    const batchHandler = this.options.handler.batch;
    if (batchHandler === undefined) return;
    for (;;) {
      let batch = this.collecting;
      let started = this.collectingSince;
      this.collecting = null;
      if (batch === null) {
        const free = Math.min(this.options.maxConcurrent - this.runningCount, this.size);
        if (free <= 0) break;
        batch = new Array<T>(free);
        for (let i = 0; i < free; i++) batch[i] = this.take() as T;
        this.runningCount += free;
        started = this.now();
      }
      let result: BatchOutcomes | Promise<BatchOutcomes>;
      try {
        result = batchHandler(batch);
      } catch (err) {
        result = batch.map(() => new HandlerFailure(err));
      }
      if (result instanceof Promise) {
        const items = batch;
        result.then(
          (outcomes) => this.finishBatch(items, started, outcomes),
          (err: unknown) =>
            this.finishBatch(
              items,
              started,
              items.map(() => new HandlerFailure(err ?? new Error('handler rejected'))),
            ),
        );
        continue;
      }
      this.settleBatch(batch, started, result);
    }
    if (this.runningCount === 0 && this.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private finishBatch(items: readonly T[], started: number, outcomes: BatchOutcomes): void {
    this.settleBatch(items, started, outcomes);
    this.runBatches();
  }

  /** Counts a finished batch: one duration and one outcome per item, handler errors reported. */
  private settleBatch(items: readonly T[], started: number, outcomes: BatchOutcomes): void {
    const duration = this.now() - started;
    for (let i = 0; i < items.length; i++) {
      this.durations.add(duration);
      const outcome = outcomes[i] ?? new HandlerFailure(new Error('the batch handler gave no outcome for this item'));
      if (outcome === 'processed') {
        this.processed += 1;
        continue;
      }
      this.failed += 1;
      if (outcome instanceof HandlerFailure) {
        try {
          this.options.onHandlerError(outcome.error, items[i] as T);
        } catch {
          // The error callback must never stop the queue.
        }
      }
    }
    this.runningCount -= items.length;
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
