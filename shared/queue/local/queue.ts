/**
 * The durable local EventQueue: local mode's stand-in for SQS, and the edge agent's spool. Sources
 * `send` events (resolved once they are on disk, so a 202 survives `kill -9`); each consumer group
 * (one per destination) receives batches in the SQS event shape, like a Lambda behind SQS with a
 * batch size and batching window, and answers with `batchItemFailures`. Failed messages come back
 * with backoff; after `maxReceiveCount` attempts they go to the group's dead-letter folder.
 */
import { existsSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Log } from '../../logging/log.js';
import type { Component } from '../../runtime/lifecycle.js';
import { syncDirectory, writeFileSynced } from '../../util/files.js';
import { type DeliverableRecord, decodeMessage, HANDED_OFF_EVENTS, packEventBytes } from '../codec.js';
import type { QueuedEvent } from '../events.js';
import {
  type EncodedEventQueue,
  type EncodedMessage,
  type EventQueue,
  QueueFullError,
  QueueStorageError,
  SQS_MAX_MESSAGE_BYTES,
} from '../port.js';
import type { Throttle } from '../throttle.js';
import { Journal, type JournalDamage, type JournalRecord } from './journal.js';

/**
 * A consumer group's answer: SQS's partial batch response, plus (optionally) why each failed message
 * failed, which its dead letter records once it is out of attempts.
 */
export interface LocalBatchResponse extends SQSBatchResponse {
  failureReasons?: Readonly<Record<string, string>>;
}

export type SqsBatchHandler = (event: SQSEvent) => Promise<LocalBatchResponse>;

/**
 * Thrown by a consumer group's handler when its destination cannot be reached now (the network, a
 * 5xx, throttling): not the messages' fault, so no receive is counted and nothing moves towards the
 * dead-letter folder. The whole group pauses with capped exponential backoff and then delivers
 * again, oldest first; the queue keeps taking events meanwhile, up to its capacity.
 */
export class DestinationUnavailableError extends Error {
  override readonly name = 'DestinationUnavailableError';
  /**
   * @param messageIds the messages of the batch not delivered (default: all of them); the others
   *   are acknowledged.
   */
  constructor(
    message: string,
    readonly messageIds?: readonly string[],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface ConsumerGroup {
  /** Also the name of the dead-letter folder and the ack log. */
  name: string;
  handler: SqsBatchHandler;
  /** Most messages per delivery (SQS event source `batchSize`). */
  batchSize: number;
  /** Longest wait for a fuller batch once a message is available (SQS `maximumBatchingWindow`). */
  batchWindowMs: number;
  throttle?: Throttle | null;
  /**
   * Deliver a batch again exactly as it was after a crash or stop left it unsettled: for
   * destinations that name what they write after the batch (files), so a redelivery replaces the
   * file instead of adding a second one. Costs one synced log line per delivery.
   */
  stableBatches?: boolean;
  /**
   * Deliveries of the group at a time (default 1; like the maximum concurrency of a Lambda's SQS
   * event source). With 2, the next batch is taken and built (decoded, turned into points and line
   * protocol) while the destination still writes the previous one, so neither waits for the other.
   * Each batch is still settled on its own. A group with `stableBatches` takes one at a time.
   */
  maxInFlight?: number;
  /**
   * Most events per delivery, over the messages it takes (a message packs several events: the audit
   * API's group commit). For destinations whose maxBatchSize counts rows (files): a batch stops
   * before the message that would take it past this (a message is never split, so one larger
   * message goes alone), and a batch this full is delivered without waiting for its window.
   */
  maxBatchEvents?: number;
}

export interface LocalQueueOptions {
  directory: string;
  /** Events held (not yet acknowledged by every group) before `send` refuses with QueueFullError. */
  capacity: number;
  maxReceiveCount: number;
  groups: readonly ConsumerGroup[];
  log: Log;
  /** Bodies larger than this are split (the same limit as SQS, so behaviour matches the cloud). */
  maxMessageBytes?: number;
  /** Delay before attempt n+1 of a failed message: base × 2^(n-1), capped. */
  retryBaseMs?: number;
  retryCapMs?: number;
  /** Pause of a group after its destination was found unavailable (DestinationUnavailableError); it doubles per failed try, capped (defaults 1 s and 30 s). */
  unavailableBaseMs?: number;
  unavailableCapMs?: number;
  /** Longest `stop()` keeps delivering what is pending before leaving it on disk for the next start. */
  drainTimeoutMs?: number;
  /**
   * Sees the body of every message found on disk at start, delivered or not, before delivered ones
   * are deleted: what the audit API's idempotency store learns from (idempotency/local.ts).
   */
  onReplay?: (bodies: Iterable<string>) => void;
  /**
   * Test hook, called after a group's handler returned and before its outcome is recorded: the
   * crash tests kill the process here (functions/local/test-hooks.ts). Never set in production.
   */
  beforeSettle?: (group: string) => Promise<void> | void;
}

export interface DeadLetter {
  group: string;
  seq: number;
  attempts: number;
  deadAt: string;
  reason: string;
  events: number;
  body: string;
}

/** One consumer group's state (`LocalEventQueue.stats`). */
export interface GroupStats {
  /** Messages not yet acknowledged by the group. */
  pending: number;
  /** Events in those messages. */
  pendingEvents: number;
  /** Messages delivered, and moved to the dead-letter folder, since the queue started. */
  delivered: number;
  deadLettered: number;
  /** Epoch ms since when its destination cannot be reached (DestinationUnavailableError), or null. */
  unavailableSince: number | null;
  /** Why, as the handler said, while unavailable. */
  unavailableReason: string | null;
  /** Epoch ms the oldest event it has pending was received (its `receivedAt`), or null when none is pending. */
  oldestPendingAt: number | null;
}

/**
 * The queue's files cannot be written (a full disk, an I/O error): set by the write that failed and
 * kept until a later write of the same log succeeds (a source's retry, a delivery's redelivery), so a
 * health check can say so while it lasts.
 */
export interface StorageFault {
  /** Which of its logs failed: the messages (a send) or the delivery outcomes (ack logs). */
  log: 'messages' | 'outcomes';
  /** The OS error code, e.g. `ENOSPC` (no path: it is shown on the container health endpoint). */
  code: string;
  /** Epoch ms of the first failure of this fault. */
  since: number;
}

export const DEAD_LETTER_DIR = 'dead-letters';
/** Pause before a delivery is tried again after the journal could not write (a full disk). */
const STORAGE_RETRY_MS = 5000;

interface GroupRuntime {
  group: ConsumerGroup;
  inFlight: Set<number>;
  visibleAt: Map<number, number>;
  wake: (() => void) | undefined;
  /** True while the consumer waits out its batching window (a new message need not wake it unless the batch may be full). */
  inWindow: boolean;
  loop: Promise<void> | undefined;
  delivered: number;
  deadLettered: number;
  /** Batches left unsettled by the last run, delivered first and as they were. */
  replay: JournalRecord[][];
  /** Set while the destination is unavailable: the group waits until `pausedUntil`, then tries again. */
  outage: { since: number; reason: string; pauseMs: number; pausedUntil: number } | undefined;
  /** The receive time of the oldest pending message's events, decoded once per message. */
  oldest: { seq: number; at: number | null } | undefined;
}

export class LocalEventQueue implements EventQueue, EncodedEventQueue, Component {
  readonly name = 'event queue (local, durable)';
  private journal: Journal | undefined;
  private readonly runtimes = new Map<string, GroupRuntime>();
  private accepting = false;
  private draining = false;
  private drainDeadline = Number.POSITIVE_INFINITY;
  private readonly faults = new Map<StorageFault['log'], StorageFault>();

  constructor(private readonly options: LocalQueueOptions) {
    for (const group of options.groups) {
      this.runtimes.set(group.name, {
        group,
        inFlight: new Set(),
        visibleAt: new Map(),
        wake: undefined,
        inWindow: false,
        loop: undefined,
        delivered: 0,
        deadLettered: 0,
        replay: [],
        outage: undefined,
        oldest: undefined,
      });
    }
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
    let oldest: StorageFault | null = null;
    for (const fault of this.faults.values()) if (!oldest || fault.since < oldest.since) oldest = fault;
    return oldest;
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
    for (const [name, rt] of this.runtimes) {
      const state = this.journal?.groups.get(name);
      out[name] = {
        pending: state?.pending.size ?? 0,
        pendingEvents: state?.events ?? 0,
        delivered: rt.delivered,
        deadLettered: rt.deadLettered,
        unavailableSince: rt.outage?.since ?? null,
        unavailableReason: rt.outage?.reason ?? null,
        oldestPendingAt: this.oldestPendingAt(rt),
      };
    }
    return out;
  }

  /** When the oldest event pending for a group was received: its message decoded once, while it is the oldest. */
  private oldestPendingAt(rt: GroupRuntime): number | null {
    const first = this.journal?.groups.get(rt.group.name)?.pending.values().next();
    if (!first || first.done) return null;
    const { record } = first.value;
    if (rt.oldest?.seq !== record.seq) {
      const decoded = record.decoded
        ? { ok: true as const, message: { events: record.decoded } }
        : decodeMessage(record.body);
      const times =
        decoded.ok && 'events' in decoded.message
          ? decoded.message.events.map((e) => Date.parse(e.receivedAt)).filter(Number.isFinite)
          : [];
      rt.oldest = { seq: record.seq, at: times.length > 0 ? Math.min(...times) : null };
    }
    return rt.oldest.at;
  }

  async start(): Promise<void> {
    const onReplay = this.options.onReplay;
    this.journal = await Journal.open(
      this.options.directory,
      [...this.runtimes.keys()],
      this.options.log,
      onReplay ? (records) => onReplay(bodiesOf(records)) : undefined,
    );
    for (const [name, rt] of this.runtimes)
      rt.replay = rt.group.stableBatches ? [...(this.journal.groups.get(name)?.unsettledBatches ?? [])] : [];
    const recovered = this.journal.pendingEvents;
    if (recovered > 0)
      this.options.log.info(
        { events: recovered, directory: this.options.directory },
        `event queue recovered ${recovered} undelivered event(s) from disk`,
      );
    this.accepting = true;
    for (const rt of this.runtimes.values()) rt.loop = this.consume(rt);
  }

  /** The largest message body written as one message (larger events go alone, in a body of their own). */
  get maxMessageBytes(): number {
    return this.options.maxMessageBytes ?? SQS_MAX_MESSAGE_BYTES;
  }

  async send(events: readonly QueuedEvent[]): Promise<void> {
    const journal = this.journalFor(events.length);
    const bodies = packEventBytes(events, this.maxMessageBytes);
    await this.writing(
      'messages',
      Promise.all(bodies.map((p) => journal.appendBytes(p.bytes, p.events.length, p.events))),
    );
    this.wakeConsumers(journal);
  }

  /**
   * One message already encoded (port.ts EncodedEventQueue): written as it is, so the sender keeps
   * its size within `maxMessageBytes`. Resolves once it is on disk.
   */
  async sendEncoded(message: EncodedMessage): Promise<void> {
    const journal = this.journalFor(message.events);
    await this.writing(
      'messages',
      message.parts === undefined
        ? journal.append(message.body, message.events)
        : journal.appendParts(message.parts, message.events),
    );
    this.wakeConsumers(journal);
  }

  /** The journal when the queue takes `events` more now; throws (QueueFullError when full) otherwise. */
  private journalFor(events: number): Journal {
    const journal = this.journal;
    if (!journal || !this.accepting) throw new Error('the event queue is not running');
    if (journal.pendingEvents + events > this.options.capacity) throw new QueueFullError(this.options.capacity);
    return journal;
  }

  private wakeConsumers(journal: Journal): void {
    for (const rt of this.runtimes.values()) {
      // Within its batching window a consumer wakes at the window's end anyway; earlier only when
      // its batch may be full (each wake rescans the pending messages).
      const state = journal.groups.get(rt.group.name);
      const maxEvents = rt.group.maxBatchEvents;
      if (
        !rt.inWindow ||
        (state?.pending.size ?? 0) >= rt.group.batchSize ||
        (maxEvents !== undefined && (state?.events ?? 0) >= maxEvents)
      )
        rt.wake?.();
    }
  }

  /** Stops taking events, delivers what is pending (up to the drain timeout), then closes. */
  async stop(): Promise<void> {
    this.accepting = false;
    this.draining = true;
    this.drainDeadline = Date.now() + (this.options.drainTimeoutMs ?? 10_000);
    for (const rt of this.runtimes.values()) rt.wake?.();
    await Promise.all([...this.runtimes.values()].map((rt) => rt.loop ?? Promise.resolve()));
    const left = this.journal?.pendingEvents ?? 0;
    if (left > 0)
      this.options.log.warn(
        { events: left },
        `event queue stopped with ${left} event(s) undelivered; they are kept on disk and delivered at the next start`,
      );
    await this.journal?.close();
    this.journal = undefined;
  }

  private sleep(rt: GroupRuntime, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      function done() {
        clearTimeout(timer);
        rt.wake = undefined;
        resolve();
      }
      rt.wake = done;
    });
  }

  /**
   * Visible messages of a group, in order (at most one batch), whether they make a full batch
   * (batchSize messages or maxBatchEvents events), and when the next invisible one becomes visible
   * (when none is visible).
   */
  private visible(rt: GroupRuntime, now: number): { records: JournalRecord[]; full: boolean; nextAt: number } {
    const state = this.journal?.groups.get(rt.group.name);
    const records: JournalRecord[] = [];
    const maxEvents = rt.group.maxBatchEvents ?? Number.POSITIVE_INFINITY;
    let events = 0;
    let nextAt = Number.POSITIVE_INFINITY;
    // Over the values, not the entries: an entry is a new [key, value] array per message per scan.
    for (const { record } of state?.pending.values() ?? []) {
      const seq = record.seq;
      if (rt.inFlight.has(seq)) continue;
      const at = rt.visibleAt.get(seq) ?? 0;
      if (at <= now) {
        if (records.length > 0 && events + record.events > maxEvents) return { records, full: true, nextAt };
        records.push(record);
        events += record.events;
        // One batch is all the caller takes.
        if (records.length >= rt.group.batchSize || events >= maxEvents) return { records, full: true, nextAt };
      } else nextAt = Math.min(nextAt, at);
    }
    return { records, full: false, nextAt };
  }

  private async consume(rt: GroupRuntime): Promise<void> {
    const running = new Set<Promise<void>>();
    try {
      await this.consumeLoop(rt, running);
    } finally {
      await Promise.all(running);
    }
  }

  private async consumeLoop(rt: GroupRuntime, running: Set<Promise<void>>): Promise<void> {
    const maxInFlight = rt.group.stableBatches ? 1 : Math.max(1, rt.group.maxInFlight ?? 1);
    let windowStart: number | undefined;
    for (;;) {
      // As many deliveries as the group allows: wait for one to finish (it wakes the loop).
      if (running.size >= maxInFlight) {
        await Promise.race(running);
        continue;
      }
      const now = Date.now();
      if (this.draining && now > this.drainDeadline) return;
      if (rt.outage && now < rt.outage.pausedUntil) {
        // Unreachable: what is pending stays on disk for the next start rather than being tried
        // until the drain timeout.
        if (this.draining) return;
        await this.sleep(rt, rt.outage.pausedUntil - now);
        continue;
      }
      const unsettled = rt.replay.shift();
      if (unsettled) {
        const state = this.journal?.groups.get(rt.group.name);
        const batch = unsettled.filter((r) => state?.pending.has(r.seq));
        if (batch.length > 0) await this.deliver(rt, batch);
        continue;
      }
      const { records, full, nextAt } = this.visible(rt, now);
      if (records.length === 0) {
        windowStart = undefined;
        // What a delivery still running fails becomes visible again: a drain waits for it (its end wakes the loop).
        if (this.draining && !Number.isFinite(nextAt) && running.size === 0) return;
        await this.sleep(rt, Number.isFinite(nextAt) ? Math.min(nextAt, this.drainDeadline) - now : 60_000);
        continue;
      }
      windowStart ??= now;
      const windowLeft = windowStart + rt.group.batchWindowMs - now;
      if (!full && windowLeft > 0 && !this.draining) {
        rt.inWindow = true;
        await this.sleep(rt, windowLeft);
        rt.inWindow = false;
        continue;
      }
      let batch = records.slice(0, rt.group.batchSize);
      const throttle = rt.group.throttle;
      if (throttle) {
        const granted = throttle.take(batch.length);
        if (granted === 0) {
          await this.sleep(rt, throttle.waitMs());
          continue;
        }
        batch = batch.slice(0, granted);
      }
      windowStart = undefined;
      if (maxInFlight === 1) {
        await this.deliver(rt, batch);
        continue;
      }
      const delivery: Promise<void> = this.deliver(rt, batch).finally(() => {
        running.delete(delivery);
        rt.wake?.();
      });
      running.add(delivery);
    }
  }

  private async deliver(rt: GroupRuntime, batch: JournalRecord[]): Promise<void> {
    const journal = this.journal;
    const state = journal?.groups.get(rt.group.name);
    if (!journal || !state) return;
    const seqs = batch.map((r) => r.seq);
    if (rt.group.stableBatches) {
      try {
        await this.writing('outcomes', journal.lease(rt.group.name, seqs));
      } catch (err) {
        // Without the lease a crash could regroup the batch; deliver it once the disk takes the line.
        this.holdBack(rt, seqs, err, 'cannot record the batch before delivering it');
        return;
      }
    }
    for (const seq of seqs) rt.inFlight.add(seq);
    const shape = new DeliveryShape(rt.group.name);
    const event: SQSEvent = {
      Records: batch.map((r) => shape.record(r, (state.pending.get(r.seq)?.failures ?? 0) + 1)),
    };
    let failedIds: Set<string>;
    let reason = '';
    // Messages the destination could not be reached for: neither acknowledged nor counted as a receive.
    let unreached = new Set<string>();
    let wasUnavailable = false;
    let reasons: Readonly<Record<string, string>> = {};
    try {
      const response = await rt.group.handler(event);
      const ids = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      // As with SQS: a failure naming an unknown message fails the whole batch.
      const known = [...ids].every((id) => batch.some((r) => String(r.seq) === id));
      failedIds = known ? ids : new Set(batch.map((r) => String(r.seq)));
      if (!known) reason = 'the handler named an unknown message id';
      else if (ids.size > 0) reason = 'the handler reported the message as failed';
      if (known) reasons = response.failureReasons ?? {};
    } catch (err) {
      failedIds = new Set();
      if (err instanceof DestinationUnavailableError) {
        const all = batch.map((r) => String(r.seq));
        unreached = new Set(err.messageIds ? all.filter((id) => err.messageIds?.includes(id)) : all);
        this.unavailable(rt, err.message);
        wasUnavailable = true;
      } else {
        failedIds = new Set(batch.map((r) => String(r.seq)));
        reason = err instanceof Error ? err.message : String(err);
        this.options.log.error(
          { group: rt.group.name, err },
          `writer ${rt.group.name} failed a whole batch of ${batch.length} message(s)`,
        );
      }
    }
    if (!wasUnavailable) this.reachable(rt);
    await this.options.beforeSettle?.(rt.group.name);
    const acked: number[] = [];
    const failed: number[] = [];
    const dead: number[] = [];
    const allAcked = unreached.size === 0 && failedIds.size === 0;
    for (const record of batch) {
      if (allAcked) {
        acked.push(record.seq);
        continue;
      }
      const id = String(record.seq);
      if (unreached.has(id)) continue;
      if (!failedIds.has(id)) {
        acked.push(record.seq);
        continue;
      }
      const attempts = (state.pending.get(record.seq)?.failures ?? 0) + 1;
      if (attempts >= this.options.maxReceiveCount && this.deadLetter(rt, record, attempts, reasons[id] ?? reason))
        dead.push(record.seq);
      else failed.push(record.seq);
    }
    try {
      await this.writing('outcomes', journal.settle(rt.group.name, acked, failed, dead));
    } catch (err) {
      // The outcome is not on disk, so it did not happen: every message of the batch is delivered
      // again later (destinations are idempotent by event id).
      for (const seq of seqs) rt.inFlight.delete(seq);
      this.holdBack(rt, seqs, err, 'cannot record the outcome of a delivery');
      return;
    }
    for (const record of batch) {
      rt.inFlight.delete(record.seq);
      const attempts = state.pending.get(record.seq)?.failures;
      // An unreached message waits for the group's pause, not for a backoff of its own.
      if (attempts === undefined || (unreached.size > 0 && unreached.has(String(record.seq))))
        rt.visibleAt.delete(record.seq);
      else rt.visibleAt.set(record.seq, Date.now() + this.retryDelay(attempts));
    }
    rt.delivered += acked.length;
    rt.deadLettered += dead.length;
  }

  /** Awaits a journal write, keeping `storageFault` up to date with its outcome. */
  private async writing<T>(log: StorageFault['log'], write: Promise<T>): Promise<T> {
    try {
      const result = await write;
      this.faults.delete(log);
      return result;
    } catch (err) {
      if (err instanceof QueueStorageError && !this.faults.has(log))
        this.faults.set(log, { log, code: errorCode(err), since: Date.now() });
      throw err;
    }
  }

  /**
   * The group's destination cannot be reached: pause the group (1 s, doubling per failed try, capped
   * at 30 s by default). One WARN when this starts, not one per try.
   */
  private unavailable(rt: GroupRuntime, reason: string): void {
    const now = Date.now();
    const base = this.options.unavailableBaseMs ?? 1000;
    const cap = this.options.unavailableCapMs ?? 30_000;
    const previous = rt.outage;
    // A second delivery in flight that fails within the pause it started is the same try, not another.
    if (previous && now < previous.pausedUntil) return;
    const pauseMs = previous ? Math.min(cap, previous.pauseMs * 2) : Math.min(cap, base);
    rt.outage = { since: previous?.since ?? now, reason, pauseMs, pausedUntil: now + pauseMs };
    if (previous) return;
    const pending = this.journal?.groups.get(rt.group.name)?.events ?? 0;
    this.options.log.warn(
      { group: rt.group.name, reason, pendingEvents: pending, capacity: this.options.capacity },
      `destination ${rt.group.name} is unreachable (${reason}); its events wait in the local queue (${pending} pending, capacity ${this.options.capacity}) and are tried again with backoff up to ${cap >= 1000 ? `${Math.round(cap / 1000)} s` : `${cap} ms`}`,
    );
  }

  /** A delivery reached the destination: end an outage, saying how long it lasted and what was waiting. */
  private reachable(rt: GroupRuntime): void {
    const outage = rt.outage;
    if (!outage) return;
    rt.outage = undefined;
    const pending = this.journal?.groups.get(rt.group.name)?.events ?? 0;
    const seconds = Math.round((Date.now() - outage.since) / 100) / 10;
    this.options.log.info(
      { group: rt.group.name, unreachableMs: Date.now() - outage.since, pendingEvents: pending },
      `destination ${rt.group.name} is reachable again after ${seconds} s; ${pending} event(s) were waiting and are delivered oldest first`,
    );
  }

  /** Delay before attempt n+1 of a message that failed n times: base × 2^(n-1), capped. */
  private retryDelay(failures: number): number {
    return Math.min(
      this.options.retryCapMs ?? 60_000,
      (this.options.retryBaseMs ?? 1000) * 2 ** (Math.max(1, failures) - 1),
    );
  }

  /** The journal cannot write (full disk): the messages wait, visible again after a pause. */
  private holdBack(rt: GroupRuntime, seqs: readonly number[], err: unknown, what: string): void {
    const at = Date.now() + STORAGE_RETRY_MS;
    for (const seq of seqs) rt.visibleAt.set(seq, at);
    this.options.log.error(
      { group: rt.group.name, err, messages: seqs.length },
      `event queue ${rt.group.name}: ${what}; the ${seqs.length} message(s) are delivered again in ${STORAGE_RETRY_MS / 1000} s`,
    );
  }

  /**
   * Moves a message to the dead-letter folder; false (and it stays pending) when the file cannot be
   * written. The letter and its name (the folder's fsync) are synced before its `d` line is written,
   * and that line needs no sync of its own: lost in a power loss, the message is pending again, delivered again, and dead-lettered again
   * under the same file name.
   */
  private deadLetter(rt: GroupRuntime, record: JournalRecord, attempts: number, reason: string): boolean {
    const letter: DeadLetter = {
      group: rt.group.name,
      seq: record.seq,
      attempts,
      deadAt: new Date().toISOString(),
      reason,
      events: record.events,
      body: record.body,
    };
    const path = join(
      this.options.directory,
      DEAD_LETTER_DIR,
      rt.group.name,
      `${String(record.seq).padStart(12, '0')}.json`,
    );
    try {
      writeFileSynced(path, `${JSON.stringify(letter, null, 2)}\n`);
      syncDirectory(dirname(path));
    } catch (err) {
      this.options.log.error(
        { group: rt.group.name, seq: record.seq, err, file: path },
        `cannot write the dead letter ${path}; the message stays in the queue`,
      );
      return false;
    }
    this.options.log.error(
      { group: rt.group.name, seq: record.seq, attempts, events: record.events, file: path },
      `message moved to the dead-letter folder of ${rt.group.name} after ${attempts} attempts (replay with \`svc dlq replay\`)`,
    );
    return true;
  }
}

/** The OS code behind a storage error (its cause's `code`), `EIO` when it names none. */
function errorCode(err: QueueStorageError): string {
  const cause: unknown = err.cause;
  return cause instanceof Error && 'code' in cause && typeof cause.code === 'string' ? cause.code : 'EIO';
}

function* bodiesOf(records: Iterable<JournalRecord>): Iterable<string> {
  for (const record of records) yield record.body;
}

/** No message attributes (the local queue sets none): one object for every record, never changed. */
const NO_MESSAGE_ATTRIBUTES: SQSRecord['messageAttributes'] = Object.freeze({});

/**
 * The SQS-shaped record of a delivered message. The body is read when asked for: a consumer given
 * the record's events in memory (HANDED_OFF_EVENTS) never needs the text, so it is not made from the bytes.
 * A class (the body and receipt handle read through its prototype), with what a batch's records
 * have in common made once per batch (`DeliveryShape`): as an object literal with its own getter,
 * each record was a closure, an accessor pair and six strings, held for the batch's whole delivery
 * (the tsdb's answer included), so young-generation collections copied and promoted them.
 */
class DeliveredRecord implements DeliverableRecord {
  readonly messageId: string;
  /** The events of the record's body, when the journal's in-memory tail still held them (codec.ts HANDED_OFF_EVENTS). */
  readonly [HANDED_OFF_EVENTS]: readonly QueuedEvent[] | undefined;
  readonly md5OfBody = '';
  readonly eventSource = 'aws:sqs';
  readonly awsRegion = 'local';
  readonly messageAttributes = NO_MESSAGE_ATTRIBUTES;
  readonly #record: JournalRecord;
  readonly #group: string;

  constructor(
    record: JournalRecord,
    group: string,
    readonly attributes: SQSRecord['attributes'],
    readonly eventSourceARN: string,
  ) {
    this.#record = record;
    this.#group = group;
    this.messageId = String(record.seq);
    this[HANDED_OFF_EVENTS] = record.decoded;
  }

  get body(): string {
    return this.#record.body;
  }

  get receiptHandle(): string {
    return `${this.#group}:${this.#record.seq}`;
  }
}

/** What the records of one delivery share: the group's ARN, the send time and the attributes per receive count. */
class DeliveryShape {
  private readonly now = String(Date.now());
  private readonly arn: string;
  private readonly attributes = new Map<number, SQSRecord['attributes']>();

  constructor(private readonly group: string) {
    this.arn = `arn:aws:sqs:local:000000000000:${group}`;
  }

  record(record: JournalRecord, receiveCount: number): SQSRecord {
    let attributes = this.attributes.get(receiveCount);
    if (attributes === undefined) {
      // Shared by the batch's records of this receive count: read only (as SQS's are).
      attributes = Object.freeze({
        ApproximateReceiveCount: String(receiveCount),
        SentTimestamp: this.now,
        SenderId: 'svc-local',
        ApproximateFirstReceiveTimestamp: this.now,
      });
      this.attributes.set(receiveCount, attributes);
    }
    return new DeliveredRecord(record, this.group, attributes, this.arn);
  }
}

/**
 * Puts dead letters back on the queue for their group (`svc dlq replay`). Needs the queue's
 * directory not to be in use by a running Svc. Returns how many messages were replayed.
 */
export async function replayDeadLetters(
  directory: string,
  log: Log,
  only?: string,
): Promise<{ group: string; messages: number; events: number }[]> {
  // Every group the journal knows (its ack logs), so compaction keeps what any of them still needs.
  const groups = existsSync(directory)
    ? readdirSync(directory).flatMap((f) => /^acks-(.+)\.log$/.exec(f)?.[1] ?? [])
    : [];
  if (only && !groups.includes(only)) return [];
  const journal = await Journal.open(directory, groups, log);
  const results: { group: string; messages: number; events: number }[] = [];
  try {
    for (const group of groups) {
      if (only && group !== only) continue;
      const dir = join(directory, DEAD_LETTER_DIR, group);
      let files: string[];
      try {
        files = readdirSync(dir)
          .filter((f) => f.endsWith('.json'))
          .sort();
      } catch {
        continue;
      }
      let messages = 0;
      let events = 0;
      for (const file of files) {
        const letter = parseDeadLetter(readFileSync(join(dir, file), 'utf8'));
        if (!letter) continue;
        await journal.append(letter.body, letter.events, [group]);
        unlinkSync(join(dir, file));
        messages += 1;
        events += letter.events;
      }
      results.push({ group, messages, events });
    }
  } finally {
    await journal.close();
  }
  return results;
}

function parseDeadLetter(text: string): { body: string; events: number } | null {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return null;
    const body = 'body' in value ? value.body : undefined;
    const events = 'events' in value ? value.events : undefined;
    return typeof body === 'string' && typeof events === 'number' ? { body, events } : null;
  } catch {
    return null;
  }
}
