/**
 * The event batcher, between an edge source and the durable queue: a small bounded buffer that
 * writes what it is handed in batches, so one fdatasync of the queue's journal carries many events
 * instead of at most `maxConcurrent` (one per running UDP handler). Each UDP listener has one
 * (udp/compose.ts), and so has each kind of platform poll (platform/queue-sink.ts), which gets the
 * same retry, tracking and logging of a refused write. With the defaults the batching is what lets
 * a listener keep up with tens of thousands of datagrams/s rather than a few thousand
 * (bench/udp.mjs measures the listener's zero-loss rate).
 *
 * A handler's `send` resolves when its events are in the buffer, and waits while the buffer is
 * full: backpressure reaches the listener, whose queue then fills and drops (counted). A batch the
 * queue refuses (full because a destination has been down for long, or a disk error) is not lost:
 * it goes back to the front of the buffer and is tried again a second later. Only what is still
 * buffered when Svc stops and cannot be written then is lost, and that is logged with its count.
 *
 * The trade-off (docs/udp-events.md): an event is durable a few milliseconds after its handler
 * finished, not before (at most `gatherMs` plus one synced write). UDP has no acknowledgement, so no
 * sender relies on the earlier moment, and the datagrams waiting in the listener's queue are in
 * memory anyway. `gatherMs` spaces the rounds: a round started as soon as the last one ended carries
 * only what arrived during one write, and each synced write costs the kernel about the same whatever
 * it carries.
 *
 * Events are encoded (JSON, the queue's packed form) when the batcher takes them, and it holds that
 * text as UTF-8 bytes, not the objects nor the string: an event object with its twenty-odd field
 * strings, or its JSON text, that lived through the write's sync was copied by every young-generation
 * GC meanwhile and then promoted, which cost more than the encoding itself (bench/udp-steps.mjs);
 * bytes live outside the JS heap. The queue frames the messages' bytes as they are (sendEncoded with
 * `parts`), so the text is neither joined into a body string nor encoded again.
 */

import type { Log } from '../../../shared/logging/log.js';
import { encodeEventList, groupLists, PACKED_FRAME_BYTES, packedBodyParts } from '../../../shared/queue/codec.js';
import type { EncodedEventQueue, EncodedMessage, EventQueue, SendableEvent } from '../../../shared/queue/port.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';

/**
 * A queue a source can hand events to without a promise when it has room: the UDP handlers' way in
 * (udp/handlers.ts), so a batch costs no promise while the batcher keeps up. `offer` is part of the
 * type rather than an optional method probed at each batch: the event batcher is one, and a plain
 * EventQueue becomes one only through `sendOnly`, which says so where it is built.
 */
export interface OfferingQueue {
  /** Takes `events` now and says true, or takes none of them and says false (the caller then uses `send`). */
  offer(events: readonly SendableEvent[]): boolean;
  /** Resolves once `events` are taken, waiting while there is no room; rejects when they cannot be. */
  send(events: readonly SendableEvent[]): Promise<void>;
}

/**
 * A plain EventQueue as an OfferingQueue whose `offer` never takes: every batch goes through the
 * queue's own `send`, looked up at each call. For the tests' recording queues and any queue without
 * a batcher in front.
 */
export function sendOnly(queue: EventQueue): OfferingQueue {
  return { offer: () => false, send: (events) => queue.send(events) };
}

/** What one batcher writes to, how much it holds, and what it logs and tracks when the queue refuses a write. */
export interface BatcherOptions {
  name: string;
  queue: EncodedEventQueue;
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
  /**
   * Least time from the start of one round (one group commit: a synced write of the queue's journal)
   * to the start of the next; what arrives meanwhile waits in the buffer for the next round. A round
   * starts early when the buffer is half full, and at stop. Default 0: a round starts as soon as the
   * last one ended, so at a steady rate each write carries only what arrived during the one before.
   */
  gatherMs?: number;
}

/** Events of one `send` or `offer` as the batcher holds them: their encoded event list as UTF-8, count and size. */
interface Entry {
  data: Buffer;
  events: number;
  bytes: number;
}

/** A message of a round: its body as UTF-8 parts, made a string only when someone asks for `body`. */
class PartsMessage implements EncodedMessage {
  constructor(
    readonly parts: readonly Uint8Array[],
    readonly events: number,
  ) {}

  get body(): string {
    return Buffer.concat(this.parts).toString('utf8');
  }
}

/** Bytes per slab: some forty handler batches of log events. */
const SLAB_BYTES = 256 * 1024;

/**
 * The entries' UTF-8 bytes, written one after the other into slabs shared by many entries, each
 * entry a view of its slab. A buffer of its own per entry (Buffer.from of a 6 KB list is above
 * Node's pool size) cost more than the string it replaced: an ArrayBuffer allocated, tracked and
 * swept per handler batch. A slab is let go of when the last view of it is (the entries written).
 */
class Utf8Slab {
  private slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
  private at = 0;

  encode(text: string): Buffer {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit (a surrogate pair: 4 bytes for 2 units).
    const most = text.length * 3;
    if (most > SLAB_BYTES) return Buffer.from(text, 'utf8');
    if (this.at + most > SLAB_BYTES) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.at = 0;
    }
    const start = this.at;
    this.at += this.slab.write(text, start, 'utf8');
    return this.slab.subarray(start, this.at);
  }
}

/** A message of one round and the entries in it (they go back to the buffer if it is refused). */
interface RoundMessage {
  message: EncodedMessage;
  entries: Entry[];
}

/** The event batcher of the opening comment: one per UDP listener and one per kind of platform poll. */
export class EventBatcher implements EventQueue, OfferingQueue, Component {
  readonly name: string;
  private buffer: Entry[] = [];
  private bufferedEvents = 0;
  private writing = 0;
  private flushing: Promise<void> | undefined;
  private spaceWaiters: (() => void)[] = [];
  private failingSince: number | undefined;
  private stopped = false;
  private readonly slab = new Utf8Slab();
  /** When the last round started (performance.now), and the wake-up of a round waiting out gatherMs. */
  private lastRoundAt = Number.NEGATIVE_INFINITY;
  private wakeGather: (() => void) | undefined;

  constructor(private readonly options: BatcherOptions) {
    this.name = `event batcher (${options.name})`;
  }

  /** Events held: buffered plus being written. */
  get held(): number {
    return this.bufferedEvents + this.writing;
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Buffers `events` now when there is room (the batcher is below `maxBuffered`, or empty), and says
   * whether it did: the handlers' synchronous way in, without a promise per batch. `send` is the
   * way that waits.
   */
  offer(events: readonly SendableEvent[]): boolean {
    const held = this.held;
    if (this.stopped || (held > 0 && held + events.length > this.options.maxBuffered) || this.spaceWaiters.length > 0)
      return false;
    this.take(events);
    this.flushing ??= this.flush();
    return true;
  }

  /** Resolves once `events` are buffered; waits while the batcher is full. */
  async send(events: readonly SendableEvent[]): Promise<void> {
    while (this.held >= this.options.maxBuffered && !this.stopped) {
      await new Promise<void>((resolve) => this.spaceWaiters.push(resolve));
    }
    if (this.stopped) throw new Error(`${this.name} is stopped`);
    this.take(events);
    this.flushing ??= this.flush();
  }

  /** Buffers `events` encoded, in entries of at most `maxPerMessage` events (a message never splits an entry). */
  private take(events: readonly SendableEvent[]): void {
    const per = this.options.maxPerMessage;
    if (events.length <= per) this.push(events);
    else for (let i = 0; i < events.length; i += per) this.push(events.slice(i, i + per));
  }

  /** One entry; events that would make a body over the queue's limit together are encoded one by one. */
  private push(events: readonly SendableEvent[]): void {
    if (events.length === 0) return;
    const data = this.slab.encode(encodeEventList(events));
    const bytes = data.length;
    if (events.length > 1 && bytes + PACKED_FRAME_BYTES > this.options.queue.maxMessageBytes) {
      for (const event of events) this.push([event]);
      return;
    }
    this.buffer.push({ data, events: events.length, bytes });
    this.bufferedEvents += events.length;
    if (this.wakeGather !== undefined && this.bufferedEvents * 2 >= this.options.maxBuffered) this.wakeGather();
  }

  /** Writes what is buffered (one more attempt if the queue refuses it), then reports what could not be written. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeGather?.();
    for (const wake of this.spaceWaiters.splice(0)) wake();
    await this.flushing;
    if (this.buffer.length > 0) await this.writeAll();
    if (this.buffer.length > 0) {
      const lost = this.bufferedEvents;
      this.options.log.error(
        { batcher: this.options.name, events: lost },
        `${lost} ${this.options.name} event(s) could not be written to the queue before Svc stopped; they are lost`,
      );
      this.buffer = [];
      this.bufferedEvents = 0;
    }
  }

  private async flush(): Promise<void> {
    const gather = this.options.gatherMs ?? 0;
    while (this.buffer.length > 0) {
      const wait = this.lastRoundAt + gather - performance.now();
      if (wait > 0 && !this.stopped && this.bufferedEvents * 2 < this.options.maxBuffered) await this.gathering(wait);
      this.lastRoundAt = performance.now();
      const ok = await this.writeAll();
      if (!ok) {
        if (this.stopped) break;
        await new Promise((resolve) => setTimeout(resolve, this.options.retryDelayMs ?? 1000));
      }
    }
    this.flushing = undefined;
  }

  /** Resolves after `ms`, or earlier through `wakeGather` (the buffer half full, or stop). */
  private gathering(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeGather = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeGather = done;
    });
  }

  /**
   * One round: everything buffered, as messages of at most `maxPerMessage` events and the queue's
   * largest body, written together (one group commit).
   */
  private async writeAll(): Promise<boolean> {
    const taken = this.buffer;
    this.buffer = [];
    this.writing = this.bufferedEvents;
    this.bufferedEvents = 0;
    const messages = this.messagesOf(taken);
    const results = await Promise.allSettled(messages.map((m) => this.options.queue.sendEncoded(m.message)));
    const refused: Entry[] = [];
    let refusedEvents = 0;
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i] as RoundMessage;
      if (results[i]?.status !== 'rejected') continue;
      refused.push(...m.entries);
      refusedEvents += m.message.events;
    }
    this.buffer = refused.length > 0 ? [...refused, ...this.buffer] : this.buffer;
    this.bufferedEvents += refusedEvents;
    this.writing = 0;
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) {
      const reason: unknown = failure.reason;
      this.options.onWriteError?.(reason);
      if (this.failingSince === undefined) {
        this.failingSince = Date.now();
        this.options.log.error(
          { batcher: this.options.name, err: reason, events: refusedEvents },
          `the event queue refused ${refusedEvents} ${this.options.name} event(s); they stay buffered and are retried (${this.options.whenFull ?? 'the listener drops new datagrams, counted, while the buffer is full'})`,
        );
      }
    } else if (this.failingSince !== undefined) {
      this.options.log.info(
        { batcher: this.options.name, failedForMs: Date.now() - this.failingSince },
        `the event queue takes ${this.options.name} events again`,
      );
      this.failingSince = undefined;
    }
    for (const wake of this.spaceWaiters.splice(0)) wake();
    return failure === undefined;
  }

  /** Entries in order, packed greedily into messages within `maxPerMessage` events and the queue's largest body. */
  private messagesOf(entries: readonly Entry[]): RoundMessage[] {
    return groupLists(entries, this.options.queue.maxMessageBytes, this.options.maxPerMessage).map((g) => ({
      message: new PartsMessage(packedBodyParts(g.items.map((e) => e.data)), g.events),
      entries: g.items,
    }));
  }
}
