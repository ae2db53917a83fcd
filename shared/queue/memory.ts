/**
 * Bounded in-process EventQueue with a consumer loop: `send` refuses what does not fit (back-pressure
 * → 503), the loop hands batches to the consumer at most at the throttle's rate, and a failed batch
 * is retried with backoff. Stopping drains what is queued.
 */
import type { Component } from '../runtime/lifecycle.js';
import type { QueuedEvent } from './events.js';
import { QueueFullError, type EventQueue } from './port.js';
import type { Throttle } from './throttle.js';

export type BatchConsumer = (events: QueuedEvent[]) => Promise<void>;

export interface QueueLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface MemoryQueueOptions {
  capacity: number;
  consumer: BatchConsumer;
  log: QueueLog;
  batchSize?: number;
  throttle?: Throttle | null;
  /** Delays between attempts of a failing batch; its length + 1 is the number of attempts. */
  retryDelaysMs?: readonly number[];
  /** Longest `stop()` waits for the queue to drain. */
  drainTimeoutMs?: number;
}

const sleep = (ms: number, signal: { wake?: () => void }) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });

export class MemoryEventQueue implements EventQueue, Component {
  readonly name = 'event queue (memory)';
  private readonly items: QueuedEvent[] = [];
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly waker: { wake?: () => void } = {};
  private readonly batchSize: number;
  private readonly retryDelaysMs: readonly number[];

  constructor(private readonly options: MemoryQueueOptions) {
    this.batchSize = options.batchSize ?? 100;
    this.retryDelaysMs = options.retryDelaysMs ?? [1000, 2000, 4000, 8000, 16_000];
  }

  get size(): number {
    return this.items.length;
  }

  send(events: readonly QueuedEvent[]): Promise<void> {
    if (this.items.length + events.length > this.options.capacity) return Promise.reject(new QueueFullError(this.options.capacity));
    this.items.push(...events);
    this.waker.wake?.();
    return Promise.resolve();
  }

  start(): Promise<void> {
    this.running = true;
    this.loop = this.pump();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.waker.wake?.();
    await this.loop;
  }

  private async pump(): Promise<void> {
    const drainUntil = () => Date.now() + (this.options.drainTimeoutMs ?? 10_000);
    let deadline = Number.POSITIVE_INFINITY;
    for (;;) {
      if (!this.running && deadline === Number.POSITIVE_INFINITY) deadline = drainUntil();
      if (this.items.length === 0) {
        if (!this.running) return;
        await sleep(60_000, this.waker);
        continue;
      }
      if (Date.now() > deadline) {
        this.options.log.error({ left: this.items.length }, 'event queue stopped before it drained; queued events are lost');
        return;
      }
      const throttle = this.options.throttle;
      const n = throttle ? throttle.take(Math.min(this.batchSize, this.items.length)) : Math.min(this.batchSize, this.items.length);
      if (n === 0) {
        await sleep(throttle?.waitMs() ?? 10, this.waker);
        continue;
      }
      const batch = this.items.splice(0, n);
      await this.deliver(batch);
    }
  }

  private async deliver(batch: QueuedEvent[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.options.consumer(batch);
        return;
      } catch (err) {
        const delay = this.retryDelaysMs[attempt];
        if (delay === undefined) {
          this.options.log.error({ err, events: batch.map((e) => e.id) }, `giving up on ${batch.length} queued event(s) after ${attempt + 1} attempts`);
          return;
        }
        this.options.log.warn({ err, attempt: attempt + 1, retryInMs: delay }, 'queued events could not be written; retrying');
        await sleep(delay, {});
      }
    }
  }
}
