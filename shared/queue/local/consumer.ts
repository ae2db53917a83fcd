/**
 * A consumer group and its delivery loop: like a Lambda behind SQS, it takes batches of the
 * messages pending for it (batch size, batching window, deliveries at a time), hands them to its
 * handler in the SQS event shape, and settles each message by the answer: acknowledged, failed (it
 * comes back after a backoff) or, out of attempts, dead-lettered. A destination that cannot be
 * reached pauses the whole group instead.
 */
import type { Log } from '../../logging/log.js';
import { decodeMessage } from '../codec.js';
import { writeDeadLetter } from './dead-letters.js';
import { DeliveryShape, type LocalDelivery } from './delivery.js';
import { type ConsumerGroup, DestinationUnavailableError, type GroupStats } from './group.js';
import type { Journal } from './journal.js';
import type { GroupState, JournalRecord } from './records.js';
import type { StorageFaults } from './storage-faults.js';

/** The queue's options a consumer group delivers by (LocalQueueOptions has them all). */
export interface DeliveryOptions {
  /** The queue's directory: the dead-letter folder is under it. */
  directory: string;
  /** Events held before `send` refuses: said in the log when a destination is not taking events. */
  capacity: number;
  maxReceiveCount: number;
  log: Log;
  /** Delay before attempt n+1 of a failed message: base × 2^(n-1), capped. */
  retryBaseMs?: number;
  retryCapMs?: number;
  /** Pause of a group after its destination was found unavailable (DestinationUnavailableError); it doubles per failed try, capped (defaults 1 s and 30 s). */
  unavailableBaseMs?: number;
  unavailableCapMs?: number;
  /**
   * Test hook, called after a group's handler returned and before its outcome is recorded: the
   * crash tests kill the process here (functions/local/test-hooks.ts). Never set in production.
   */
  beforeSettle?: (group: string) => Promise<void> | void;
}

/** Pause before a delivery is tried again after the journal could not write (a full disk). */
const STORAGE_RETRY_MS = 5000;

/** How a delivery's handler answered, per message of the batch. */
interface Answer {
  /** Failed messages (counted as a receive). */
  failedIds: Set<string>;
  /** Why they failed, when the handler did not say per message. */
  reason: string;
  /** Why each failed, as the handler said. */
  reasons: Readonly<Record<string, string>>;
  /** Messages the destination could not be reached for: neither acknowledged nor counted as a receive. */
  unreached: Set<string>;
  /** The destination was unreachable (DestinationUnavailableError). */
  unavailable: boolean;
}

/** A consumer group's delivery loop and its state while the queue runs. */
export class GroupConsumer {
  private journal: Journal | undefined;
  private readonly inFlight = new Set<number>();
  private readonly visibleAt = new Map<number, number>();
  private wake: (() => void) | undefined;
  /** True while the consumer waits out its batching window (a new message need not wake it unless the batch may be full). */
  private inWindow = false;
  private loop: Promise<void> | undefined;
  private delivered = 0;
  private deadLettered = 0;
  /** Batches left unsettled by the last run, delivered first and as they were. */
  private replay: JournalRecord[][] = [];
  /** Set while the destination is unavailable: the group waits until `pausedUntil`, then tries again. */
  private outage: { since: number; reason: string; pauseMs: number; pausedUntil: number } | undefined;
  /** The receive time of the oldest pending message's events, decoded once per message. */
  private oldest: { seq: number; at: number | null } | undefined;
  private draining = false;
  private drainDeadline = Number.POSITIVE_INFINITY;

  constructor(
    readonly group: ConsumerGroup,
    private readonly options: DeliveryOptions,
    private readonly faults: StorageFaults,
  ) {}

  /** Starts delivering what `journal` holds for the group, the batches the last run left unsettled first. */
  start(journal: Journal): void {
    this.journal = journal;
    this.replay = this.group.stableBatches ? [...(journal.groups.get(this.group.name)?.unsettledBatches ?? [])] : [];
    this.loop = this.consume();
  }

  /** Delivers what is pending, ignoring the batching window, until `deadline`; resolves when the loop has ended. */
  async drain(deadline: number): Promise<void> {
    this.draining = true;
    this.drainDeadline = deadline;
    this.wake?.();
    await this.loop;
  }

  /** The group's messages and events pending, delivered, dead-lettered, and its destination's outage. */
  stats(): GroupStats {
    const state = this.journal?.groups.get(this.group.name);
    return {
      pending: state?.pending.size ?? 0,
      pendingEvents: state?.events ?? 0,
      delivered: this.delivered,
      deadLettered: this.deadLettered,
      unavailableSince: this.outage?.since ?? null,
      unavailableReason: this.outage?.reason ?? null,
      oldestPendingAt: this.oldestPendingAt(),
    };
  }

  /** Messages were appended: wakes the loop unless it waits out its batching window with a batch not yet full. */
  appended(): void {
    // Within its batching window a consumer wakes at the window's end anyway; earlier only when
    // its batch may be full (each wake rescans the pending messages).
    const state = this.journal?.groups.get(this.group.name);
    const maxEvents = this.group.maxBatchEvents;
    if (
      !this.inWindow ||
      (state?.pending.size ?? 0) >= this.group.batchSize ||
      (maxEvents !== undefined && (state?.events ?? 0) >= maxEvents)
    )
      this.wake?.();
  }

  /** When the oldest event pending for the group was received: its message decoded once, while it is the oldest. */
  private oldestPendingAt(): number | null {
    const first = this.journal?.groups.get(this.group.name)?.pending.values().next();
    if (!first || first.done) return null;
    const { record } = first.value;
    if (this.oldest?.seq !== record.seq) {
      const decoded = record.decoded
        ? { ok: true as const, message: { events: record.decoded } }
        : decodeMessage(record.body);
      const times =
        decoded.ok && 'events' in decoded.message
          ? decoded.message.events.map((e) => Date.parse(e.receivedAt)).filter(Number.isFinite)
          : [];
      this.oldest = { seq: record.seq, at: times.length > 0 ? Math.min(...times) : null };
    }
    return this.oldest.at;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.wake = done;
    });
  }

  /**
   * Visible messages of the group, in order (at most one batch), whether they make a full batch
   * (batchSize messages or maxBatchEvents events), and when the next invisible one becomes visible
   * (when none is visible).
   */
  private visible(now: number): { records: JournalRecord[]; full: boolean; nextAt: number } {
    const state = this.journal?.groups.get(this.group.name);
    const records: JournalRecord[] = [];
    const maxEvents = this.group.maxBatchEvents ?? Number.POSITIVE_INFINITY;
    let events = 0;
    let nextAt = Number.POSITIVE_INFINITY;
    // Over the values, not the entries: an entry is a new [key, value] array per message per scan.
    for (const { record } of state?.pending.values() ?? []) {
      const seq = record.seq;
      if (this.inFlight.has(seq)) continue;
      const at = this.visibleAt.get(seq) ?? 0;
      if (at <= now) {
        if (records.length > 0 && events + record.events > maxEvents) return { records, full: true, nextAt };
        records.push(record);
        events += record.events;
        // One batch is all the caller takes.
        if (records.length >= this.group.batchSize || events >= maxEvents) return { records, full: true, nextAt };
      } else nextAt = Math.min(nextAt, at);
    }
    return { records, full: false, nextAt };
  }

  private async consume(): Promise<void> {
    const running = new Set<Promise<void>>();
    try {
      await this.consumeLoop(running);
    } finally {
      await Promise.all(running);
    }
  }

  private async consumeLoop(running: Set<Promise<void>>): Promise<void> {
    const maxInFlight = this.group.stableBatches ? 1 : Math.max(1, this.group.maxInFlight ?? 1);
    let windowStart: number | undefined;
    for (;;) {
      // As many deliveries as the group allows: wait for one to finish (it wakes the loop).
      if (running.size >= maxInFlight) {
        await Promise.race(running);
        continue;
      }
      const now = Date.now();
      if (this.draining && now > this.drainDeadline) return;
      if (this.outage && now < this.outage.pausedUntil) {
        // Unreachable: what is pending stays on disk for the next start rather than being tried
        // until the drain timeout.
        if (this.draining) return;
        await this.sleep(this.outage.pausedUntil - now);
        continue;
      }
      const unsettled = this.replay.shift();
      if (unsettled) {
        const state = this.journal?.groups.get(this.group.name);
        const batch = unsettled.filter((r) => state?.pending.has(r.seq));
        if (batch.length > 0) await this.deliver(batch);
        continue;
      }
      const { records, full, nextAt } = this.visible(now);
      if (records.length === 0) {
        windowStart = undefined;
        // What a delivery still running fails becomes visible again: a drain waits for it (its end wakes the loop).
        if (this.draining && !Number.isFinite(nextAt) && running.size === 0) return;
        await this.sleep(Number.isFinite(nextAt) ? Math.min(nextAt, this.drainDeadline) - now : 60_000);
        continue;
      }
      windowStart ??= now;
      const windowLeft = windowStart + this.group.batchWindowMs - now;
      if (!full && windowLeft > 0 && !this.draining) {
        this.inWindow = true;
        await this.sleep(windowLeft);
        this.inWindow = false;
        continue;
      }
      let batch = records.slice(0, this.group.batchSize);
      const throttle = this.group.throttle;
      if (throttle) {
        const granted = throttle.take(batch.length);
        if (granted === 0) {
          await this.sleep(throttle.waitMs());
          continue;
        }
        batch = batch.slice(0, granted);
      }
      windowStart = undefined;
      if (maxInFlight === 1) {
        await this.deliver(batch);
        continue;
      }
      const delivery: Promise<void> = this.deliver(batch).finally(() => {
        running.delete(delivery);
        this.wake?.();
      });
      running.add(delivery);
    }
  }

  /** One delivery of `batch`: leased (stable batches), handed to the handler, and settled by its answer. */
  private async deliver(batch: JournalRecord[]): Promise<void> {
    const journal = this.journal;
    const name = this.group.name;
    const state = journal?.groups.get(name);
    if (!journal || !state) return;
    const seqs = batch.map((r) => r.seq);
    if (this.group.stableBatches) {
      try {
        await this.faults.writing('outcomes', journal.lease(name, seqs));
      } catch (err) {
        // Without the lease a crash could regroup the batch; deliver it once the disk takes the line.
        this.holdBack(seqs, err, 'cannot record the batch before delivering it');
        return;
      }
    }
    for (const seq of seqs) this.inFlight.add(seq);
    const answer = await this.answer(batch, DeliveryShape.delivery(name, batch, state.pending));
    if (!answer.unavailable) this.reachable();
    await this.options.beforeSettle?.(name);
    const { acked, failed, dead } = this.outcomes(batch, answer, state);
    try {
      await this.faults.writing('outcomes', journal.settle(name, acked, failed, dead));
    } catch (err) {
      // The outcome is not on disk, so it did not happen: every message of the batch is delivered
      // again later (destinations are idempotent by event id).
      for (const seq of seqs) this.inFlight.delete(seq);
      this.holdBack(seqs, err, 'cannot record the outcome of a delivery');
      return;
    }
    for (const record of batch) {
      this.inFlight.delete(record.seq);
      const attempts = state.pending.get(record.seq)?.failures;
      // An unreached message waits for the group's pause, not for a backoff of its own.
      if (attempts === undefined || (answer.unreached.size > 0 && answer.unreached.has(String(record.seq))))
        this.visibleAt.delete(record.seq);
      else this.visibleAt.set(record.seq, Date.now() + this.retryDelay(attempts));
    }
    this.delivered += acked.length;
    this.deadLettered += dead.length;
  }

  /** The handler's answer to `event`, per message; a throw fails the batch, or pauses the group when the destination is unavailable. */
  private async answer(batch: readonly JournalRecord[], event: LocalDelivery): Promise<Answer> {
    const answer: Answer = { failedIds: new Set(), reason: '', reasons: {}, unreached: new Set(), unavailable: false };
    try {
      const response = await this.group.handler(event);
      const ids = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      // As with SQS: a failure naming an unknown message fails the whole batch.
      const known = [...ids].every((id) => batch.some((r) => String(r.seq) === id));
      answer.failedIds = known ? ids : new Set(batch.map((r) => String(r.seq)));
      if (!known) answer.reason = 'the handler named an unknown message id';
      else if (ids.size > 0) answer.reason = 'the handler reported the message as failed';
      if (known) answer.reasons = response.failureReasons ?? {};
    } catch (err) {
      if (err instanceof DestinationUnavailableError) {
        const all = batch.map((r) => String(r.seq));
        answer.unreached = new Set(err.messageIds ? all.filter((id) => err.messageIds?.includes(id)) : all);
        this.unavailable(err.message);
        answer.unavailable = true;
      } else {
        answer.failedIds = new Set(batch.map((r) => String(r.seq)));
        answer.reason = err instanceof Error ? err.message : String(err);
        this.options.log.error(
          { group: this.group.name, err },
          `writer ${this.group.name} failed a whole batch of ${batch.length} message(s)`,
        );
      }
    }
    return answer;
  }

  /** What the answer makes of each message: acknowledged, failed once more, or (out of attempts) dead-lettered. */
  private outcomes(
    batch: readonly JournalRecord[],
    answer: Answer,
    state: GroupState,
  ): { acked: number[]; failed: number[]; dead: number[] } {
    const acked: number[] = [];
    const failed: number[] = [];
    const dead: number[] = [];
    const allAcked = answer.unreached.size === 0 && answer.failedIds.size === 0;
    for (const record of batch) {
      if (allAcked) {
        acked.push(record.seq);
        continue;
      }
      const id = String(record.seq);
      if (answer.unreached.has(id)) continue;
      if (!answer.failedIds.has(id)) {
        acked.push(record.seq);
        continue;
      }
      const attempts = (state.pending.get(record.seq)?.failures ?? 0) + 1;
      const reason = answer.reasons[id] ?? answer.reason;
      if (
        attempts >= this.options.maxReceiveCount &&
        writeDeadLetter(this.options.directory, this.group.name, record, attempts, reason, this.options.log)
      )
        dead.push(record.seq);
      else failed.push(record.seq);
    }
    return { acked, failed, dead };
  }

  /**
   * The group's destination cannot be reached: pause the group (1 s, doubling per failed try, capped
   * at 30 s by default). One WARN when this starts, not one per try.
   */
  private unavailable(reason: string): void {
    const now = Date.now();
    const base = this.options.unavailableBaseMs ?? 1000;
    const cap = this.options.unavailableCapMs ?? 30_000;
    const previous = this.outage;
    // A second delivery in flight that fails within the pause it started is the same try, not another.
    if (previous && now < previous.pausedUntil) return;
    const pauseMs = previous ? Math.min(cap, previous.pauseMs * 2) : Math.min(cap, base);
    this.outage = { since: previous?.since ?? now, reason, pauseMs, pausedUntil: now + pauseMs };
    if (previous) return;
    const name = this.group.name;
    const pending = this.journal?.groups.get(name)?.events ?? 0;
    const capacity = this.options.capacity;
    this.options.log.warn(
      { group: name, reason, pendingEvents: pending, capacity },
      `destination ${name} is not taking events (${reason}); its events wait in the local queue (${pending} pending, capacity ${capacity}) and are tried again with backoff up to ${cap >= 1000 ? `${Math.round(cap / 1000)} s` : `${cap} ms`}`,
    );
  }

  /** A delivery reached the destination: end an outage, saying how long it lasted and what was waiting. */
  private reachable(): void {
    const outage = this.outage;
    if (!outage) return;
    this.outage = undefined;
    const name = this.group.name;
    const pending = this.journal?.groups.get(name)?.events ?? 0;
    const seconds = Math.round((Date.now() - outage.since) / 100) / 10;
    this.options.log.info(
      { group: name, unreachableMs: Date.now() - outage.since, pendingEvents: pending },
      `destination ${name} takes events again after ${seconds} s; ${pending} event(s) were waiting and are delivered oldest first`,
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
  private holdBack(seqs: readonly number[], err: unknown, what: string): void {
    const at = Date.now() + STORAGE_RETRY_MS;
    for (const seq of seqs) this.visibleAt.set(seq, at);
    this.options.log.error(
      { group: this.group.name, err, messages: seqs.length },
      `event queue ${this.group.name}: ${what}; the ${seqs.length} message(s) are delivered again in ${STORAGE_RETRY_MS / 1000} s`,
    );
  }
}
