/**
 * Between a listener's handlers and the durable queue: a small bounded buffer that writes what
 * the handlers hand it in batches, so one fdatasync of the queue's journal carries many events
 * instead of at most `maxConcurrent` (one per running handler). With the defaults that is the
 * difference between about 4,000 and tens of thousands of datagrams/s (bench/udp.mjs).
 *
 * A handler's `send` resolves when its events are in the buffer, and waits while the buffer is
 * full: backpressure reaches the listener, whose queue then fills and drops (counted). A batch the
 * queue refuses (full because a destination has been down for long, or a disk error) is not lost:
 * it goes back to the front of the buffer and is tried again a second later. Only what is still
 * buffered when Svc stops and cannot be written then is lost, and that is logged with its count.
 *
 * The trade-off (docs/udp-events.md): an event is durable a few milliseconds after its handler
 * finished, not before. UDP has no acknowledgement, so no sender relies on the earlier moment,
 * and the datagrams waiting in the listener's queue are in memory anyway.
 */
import type { QueuedEvent } from '../../../shared/queue/events.js';
import type { EventQueue } from '../../../shared/queue/port.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import type { Log } from '../../../shared/logging/log.js';

export interface SpoolOptions {
  name: string;
  queue: EventQueue;
  /** Most events held (buffered and being written); `send` waits while it is reached. */
  maxBuffered: number;
  /** Most events per queue message (a destination's delivery is a batch of messages). */
  maxPerMessage: number;
  log: Log;
  /** Called when a write to the queue fails (the events stay buffered). */
  onWriteError?: (err: unknown) => void;
  /** Wait before a refused batch is tried again; default 1 s. */
  retryDelayMs?: number;
  /** What happens upstream while the buffer is full, for the refusal's log line; default the listener's. */
  whenFull?: string;
}

export class EventSpool implements EventQueue, Component {
  readonly name: string;
  private buffer: QueuedEvent[] = [];
  private writing = 0;
  private flushing: Promise<void> | undefined;
  private spaceWaiters: (() => void)[] = [];
  private failingSince: number | undefined;
  private stopped = false;

  constructor(private readonly options: SpoolOptions) {
    this.name = `event spool (${options.name})`;
  }

  /** Events held: buffered plus being written. */
  get held(): number {
    return this.buffer.length + this.writing;
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Buffers `events` now when there is room (the spool is below `maxBuffered`, or empty), and says
   * whether it did: the handlers' synchronous way in, without a promise per batch. `send` is the
   * way that waits.
   */
  offer(events: readonly QueuedEvent[]): boolean {
    const held = this.held;
    if (this.stopped || (held > 0 && held + events.length > this.options.maxBuffered) || this.spaceWaiters.length > 0) return false;
    for (const event of events) this.buffer.push(event);
    this.flushing ??= this.flush();
    return true;
  }

  /** Resolves once `events` are buffered; waits while the spool is full. */
  async send(events: readonly QueuedEvent[]): Promise<void> {
    while (this.held >= this.options.maxBuffered && !this.stopped) {
      await new Promise<void>((resolve) => this.spaceWaiters.push(resolve));
    }
    if (this.stopped) throw new Error(`${this.name} is stopped`);
    this.buffer.push(...events);
    this.flushing ??= this.flush();
  }

  /** Writes what is buffered (one more attempt if the queue refuses it), then reports what could not be written. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of this.spaceWaiters.splice(0)) wake();
    await this.flushing;
    if (this.buffer.length > 0) await this.writeAll();
    if (this.buffer.length > 0) {
      this.options.log.error({ spool: this.options.name, events: this.buffer.length }, `${this.buffer.length} ${this.options.name} event(s) could not be written to the queue before Svc stopped; they are lost`);
      this.buffer = [];
    }
  }

  private async flush(): Promise<void> {
    while (this.buffer.length > 0) {
      const ok = await this.writeAll();
      if (!ok) {
        if (this.stopped) break;
        await new Promise((resolve) => setTimeout(resolve, this.options.retryDelayMs ?? 1000));
      }
    }
    this.flushing = undefined;
  }

  /** One round: everything buffered, as messages of `maxPerMessage` events written together (one group commit). */
  private async writeAll(): Promise<boolean> {
    const taken = this.buffer;
    this.buffer = [];
    this.writing = taken.length;
    const chunks: QueuedEvent[][] = [];
    for (let i = 0; i < taken.length; i += this.options.maxPerMessage) chunks.push(taken.slice(i, i + this.options.maxPerMessage));
    const results = await Promise.allSettled(chunks.map((chunk) => this.options.queue.send(chunk)));
    const refused = chunks.filter((_, i) => results[i]?.status === 'rejected').flat();
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    this.buffer = [...refused, ...this.buffer];
    this.writing = 0;
    if (failure) {
      const reason: unknown = failure.reason;
      this.options.onWriteError?.(reason);
      if (this.failingSince === undefined) {
        this.failingSince = Date.now();
        this.options.log.error({ spool: this.options.name, err: reason, events: refused.length }, `the event queue refused ${refused.length} ${this.options.name} event(s); they stay buffered and are retried (${this.options.whenFull ?? 'the listener drops new datagrams, counted, while the buffer is full'})`);
      }
    } else if (this.failingSince !== undefined) {
      this.options.log.info({ spool: this.options.name, failedForMs: Date.now() - this.failingSince }, `the event queue takes ${this.options.name} events again`);
      this.failingSince = undefined;
    }
    for (const wake of this.spaceWaiters.splice(0)) wake();
    return failure === undefined;
  }
}
