/**
 * The durable local queue itself (LocalEventQueue): sources `send` events, resolved once they are on
 * disk; each consumer group (consumer.ts) delivers them to its destination. The design of the
 * whole is in index.ts.
 */
import type { Component } from '../../runtime/lifecycle.js';
import { packEventBytes } from '../codec.js';
import {
  type EncodedEventQueue,
  type EncodedMessage,
  type EventQueue,
  QueueFullError,
  type SendableEvent,
  SQS_MAX_MESSAGE_BYTES,
} from '../port.js';
import { type DeliveryOptions, GroupConsumer } from './consumer.js';
import type { ConsumerGroup, GroupStats } from './group.js';
import { Journal } from './journal.js';
import type { JournalDamage, JournalRecord } from './records.js';
import { type StorageFault, StorageFaults } from './storage-faults.js';

/** How a LocalEventQueue is made: where, how large, and its consumer groups. */
export interface LocalQueueOptions extends DeliveryOptions {
  /** Events held (not yet acknowledged by every group) before `send` refuses with QueueFullError. */
  capacity: number;
  groups: readonly ConsumerGroup[];
  /** Bodies larger than this are split (the same limit as SQS, so behaviour matches the cloud). */
  maxMessageBytes?: number;
  /** Longest `stop()` keeps delivering what is pending before leaving it on disk for the next start. */
  drainTimeoutMs?: number;
  /**
   * Sees the body of every message found on disk at start, delivered or not, before delivered ones
   * are deleted: what the audit API's idempotency store learns from (idempotency/local.ts).
   */
  onReplay?: (bodies: Iterable<string>) => void;
}

/** The durable local EventQueue: a journal on disk and one consumer per group. */
export class LocalEventQueue implements EventQueue, EncodedEventQueue, Component {
  readonly name = 'event queue (local, durable)';
  private journal: Journal | undefined;
  /** One consumer per group, by group name. */
  private readonly consumers = new Map<string, GroupConsumer>();
  private accepting = false;
  private readonly faults = new StorageFaults();

  constructor(private readonly options: LocalQueueOptions) {
    for (const group of options.groups) this.consumers.set(group.name, new GroupConsumer(group, options, this.faults));
  }

  /** Events waiting for the slowest group. */
  get pending(): number {
    return this.journal?.pendingEvents ?? 0;
  }

  /** What the last start found damaged in the journal (journal.ts). */
  get damage(): JournalDamage {
    return this.journal?.damage ?? { records: 0, bytes: 0, ackLines: 0 };
  }

  /** The oldest write failure of its files still unresolved (see StorageFault), or null when the queue can write. */
  get storageFault(): StorageFault | null {
    return this.faults.oldest;
  }

  /** The journal's synced message writes since the queue started: writes, records and bytes (journal.ts `segmentWrites`). */
  get segmentWrites(): { writes: number; records: number; bytes: number } {
    return { ...(this.journal?.segmentWrites ?? { writes: 0, records: 0, bytes: 0 }) };
  }

  /** The most events held before `send` refuses (QueueFullError). */
  get capacity(): number {
    return this.options.capacity;
  }

  /**
   * Per consumer group: messages and events waiting for it, and messages it delivered and
   * dead-lettered since the queue started.
   */
  stats(): Record<string, GroupStats> {
    const out: Record<string, GroupStats> = {};
    for (const [name, consumer] of this.consumers) out[name] = consumer.stats();
    return out;
  }

  async start(): Promise<void> {
    const onReplay = this.options.onReplay;
    const journal = await Journal.open(
      this.options.directory,
      [...this.consumers.keys()],
      this.options.log,
      onReplay ? (records) => onReplay(bodiesOf(records)) : undefined,
    );
    this.journal = journal;
    const recovered = journal.pendingEvents;
    if (recovered > 0)
      this.options.log.info(
        { events: recovered, directory: this.options.directory },
        `event queue recovered ${recovered} undelivered event(s) from disk`,
      );
    this.accepting = true;
    for (const consumer of this.consumers.values()) consumer.start(journal);
  }

  /** The largest message body written as one message (larger events go alone, in a body of their own). */
  get maxMessageBytes(): number {
    return this.options.maxMessageBytes ?? SQS_MAX_MESSAGE_BYTES;
  }

  async send(events: readonly SendableEvent[]): Promise<void> {
    const journal = this.journalFor(events.length);
    const bodies = packEventBytes(events, this.maxMessageBytes);
    await this.faults.writing(
      'messages',
      Promise.all(bodies.map((p) => journal.appendBytes(p.bytes, p.events.length, p.events))),
    );
    this.wakeConsumers();
  }

  /**
   * One message already encoded (port.ts EncodedEventQueue): written as it is, so the sender keeps
   * its size within `maxMessageBytes`. Resolves once it is on disk.
   */
  async sendEncoded(message: EncodedMessage): Promise<void> {
    const journal = this.journalFor(message.events);
    await this.faults.writing(
      'messages',
      message.parts === undefined
        ? journal.append(message.body, message.events)
        : journal.appendParts(message.parts, message.events),
    );
    this.wakeConsumers();
  }

  /** The journal when the queue takes `events` more now; throws (QueueFullError when full) otherwise. */
  private journalFor(events: number): Journal {
    const journal = this.journal;
    if (!journal || !this.accepting) throw new Error('the event queue is not running');
    if (journal.pendingEvents + events > this.options.capacity) throw new QueueFullError(this.options.capacity);
    return journal;
  }

  private wakeConsumers(): void {
    for (const consumer of this.consumers.values()) consumer.appended();
  }

  /** Stops taking events, delivers what is pending (up to the drain timeout), then closes. */
  async stop(): Promise<void> {
    this.accepting = false;
    const deadline = Date.now() + (this.options.drainTimeoutMs ?? 10_000);
    await Promise.all([...this.consumers.values()].map((consumer) => consumer.drain(deadline)));
    const left = this.journal?.pendingEvents ?? 0;
    if (left > 0)
      this.options.log.warn(
        { events: left },
        `event queue stopped with ${left} event(s) undelivered; they are kept on disk and delivered at the next start`,
      );
    await this.journal?.close();
    this.journal = undefined;
  }
}

/** The bodies of `records`, read one at a time as the caller iterates. */
function* bodiesOf(records: Iterable<JournalRecord>): Iterable<string> {
  for (const record of records) yield record.body;
}
