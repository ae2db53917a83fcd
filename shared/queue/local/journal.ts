/**
 * The journal: the durable local queue's storage (index.ts has its design). Messages are appended
 * to segment files, durable once `append` resolves (several appends sharing one synced write);
 * each consumer group's leases and outcomes go to its ack log (ack-logs.ts); what every group has
 * settled is deleted a whole segment at a time. Opening it recovers what the files hold
 * (recovery.ts), and refuses a directory another live process holds (lock.ts).
 */
import { unlinkSync } from 'node:fs';
import type { Log } from '../../logging/log.js';
import { makeDirectorySynced, syncDirectoryAsync } from '../../util/files.js';
import type { QueuedEvent } from '../events.js';
import { AckLogs } from './ack-logs.js';
import { AppendLog, type Chunk, frame, frameBytes, frameText, GroupCommit } from './append-log.js';
import { AppendedRecord, HELD_BODY_BYTES, HeldTail } from './held-tail.js';
import { QueueLock } from './lock.js';
import {
  addPending,
  type GroupState,
  type JournalDamage,
  type JournalRecord,
  removePending,
  segmentPath,
} from './records.js';
import { recover, rewriteAckLogs, type Segment } from './recovery.js';

const SEGMENT_BYTES = 64 * 1024 * 1024;

const NEWLINE_BYTE = 0x0a;

/** Bodies below this many characters are kept as text when no events are held with them (see append). */
const SMALL_BODY = 4096;

export class Journal {
  private writer: AppendLog | undefined;
  private readonly commits: GroupCommit;
  /**
   * The message records' synced writes so far: how many, the records and bytes they carried (a
   * group commit's size is records / writes); the benches (bench:udp, bench:udp-steps) read it
   * through LocalEventQueue.segmentWrites.
   */
  readonly segmentWrites = { writes: 0, records: 0, bytes: 0 };
  private readonly tail = new HeldTail(HELD_BODY_BYTES);

  private constructor(
    readonly dir: string,
    private readonly lock: QueueLock,
    /** Each group's pending records, by group name. */
    readonly groups: ReadonlyMap<string, GroupState>,
    /** What the open found damaged in the files. */
    readonly damage: JournalDamage,
    /** Segment files, oldest first. */
    private segments: Segment[],
    private nextSeq: number,
    private readonly acks: AckLogs,
  ) {
    // wholeTurn: the messages of one send, or of one round of the edge's batcher, go in one synced write (append-log.ts).
    this.commits = new GroupCommit((data, added) => this.writeSegment(data, added), true);
  }

  /**
   * Opens (or creates) the journal and replays it; refuses a directory another live process holds.
   * `onReplay` sees every record found, acknowledged or not, before acknowledged segments are deleted.
   */
  static async open(
    dir: string,
    groupNames: readonly string[],
    log: Log,
    onReplay?: (records: Iterable<JournalRecord>) => void,
  ): Promise<Journal> {
    makeDirectorySynced(dir);
    const lock = await QueueLock.acquire(dir);
    try {
      const groups = new Map<string, GroupState>();
      for (const name of groupNames) groups.set(name, { pending: new Map(), events: 0, unsettledBatches: [] });
      const damage: JournalDamage = { records: 0, bytes: 0, ackLines: 0 };
      const { records, segments, nextSeq } = recover(dir, groups, damage, log);
      onReplay?.(records.values());
      const kept = deleteSettled(segments, undefined, groups, nextSeq);
      rewriteAckLogs(dir, groups, records, kept);
      // After the rewrite, which replaces the files.
      const acks = await AckLogs.open(dir, groupNames, log);
      return new Journal(dir, lock, groups, damage, kept, nextSeq, acks);
    } catch (err) {
      await lock.release();
      throw err;
    }
  }

  /** Slots of the in-memory tail's array in use (tests): bounded however long a record stays pending. */
  get tailSlots(): number {
    return this.tail.slots;
  }

  /** fdatasyncs of ack logs done so far (the periodic ones and close's). */
  get ackSyncs(): number {
    return this.acks.syncs;
  }

  /**
   * Resolves once every ack line written before the call went through a sync (the periodic one: this
   * does not start one; a failed sync is logged and counts as done), for tests and for callers that
   * must know.
   */
  acksSynced(): Promise<void> {
    return this.acks.synced();
  }

  /**
   * Appends a message; resolves once it is on disk, rejects (QueueStorageError) with nothing kept.
   * `decoded`: the events `body` was encoded from, held in the in-memory tail for this process's
   * consumers (see HELD_BODY_BYTES); the caller must not change them afterwards.
   */
  async append(
    body: string,
    events: number,
    groups?: string[],
    decoded?: readonly QueuedEvent[],
  ): Promise<JournalRecord> {
    const seq = this.nextSeq++;
    let record: JournalRecord;
    let data: Chunk | Chunk[];
    let held: AppendedRecord | undefined;
    if (groups === undefined && !body.includes('\n')) {
      // The frame in one buffer of its own, the body encoded once into it (frameText); a record
      // that keeps the body's bytes keeps a view of that buffer, so nothing is copied again.
      const framed = frameText(`m ${seq} ${events} `, body);
      data = framed.data;
      if (decoded !== undefined) {
        record = held = new AppendedRecord(
          seq,
          events,
          framed.data.subarray(framed.bodyAt, framed.data.length - 1),
          decoded,
        );
      } else if (body.length >= SMALL_BODY) {
        record = new AppendedRecord(
          seq,
          events,
          framed.data.subarray(framed.bodyAt, framed.data.length - 1),
          undefined,
        );
      } else {
        // A small body is kept as text: its record is dropped soon, and text needs no decoding when delivered.
        record = { seq, events, body };
      }
    } else {
      record = { seq, events, body, ...(groups ? { groups } : {}) };
      data = frame(JSON.stringify({ s: seq, ...(groups ? { g: groups } : {}), n: events, b: body }));
    }
    return this.commit(record, data, groups, held);
  }

  /**
   * `append` of a body given as its UTF-8 bytes in parts (port.ts EncodedMessage `parts`), framed
   * into one buffer of their own; the record keeps a view of the body there, decoded when read.
   */
  async appendParts(parts: readonly Uint8Array[], events: number): Promise<JournalRecord> {
    // JSON text has no raw newline; a body that does takes the JSON record form.
    if (parts.some((part) => part.includes(NEWLINE_BYTE)))
      return this.append(Buffer.concat(parts).toString('utf8'), events);
    const seq = this.nextSeq++;
    const framed = frameText(`m ${seq} ${events} `, parts);
    const record = new AppendedRecord(
      seq,
      events,
      framed.data.subarray(framed.bodyAt, framed.data.length - 1),
      undefined,
    );
    return this.commit(record, framed.data, undefined, undefined);
  }

  /**
   * `append` of a body given as its UTF-8 bytes, kept as they are (so not a slice of Node's shared
   * pool), with the events it was encoded from (`decoded`, held in the in-memory tail).
   */
  async appendBytes(bytes: Buffer, events: number, decoded: readonly QueuedEvent[]): Promise<JournalRecord> {
    // JSON text has no raw newline; a body that does takes the JSON record form.
    if (bytes.includes(NEWLINE_BYTE)) return this.append(bytes.toString('utf8'), events, undefined, decoded);
    const seq = this.nextSeq++;
    const record = new AppendedRecord(seq, events, bytes, decoded);
    return this.commit(record, frameBytes(`m ${seq} ${events} `, bytes), undefined, record);
  }

  /** A record made pending for its groups, then written; undone when the write fails. */
  private async commit(
    record: JournalRecord,
    data: Chunk | Chunk[],
    groups: string[] | undefined,
    held: AppendedRecord | undefined,
  ): Promise<JournalRecord> {
    if (held !== undefined) this.tail.add(held);
    for (const [name, state] of this.groups) {
      if (!groups || groups.includes(name)) addPending(state, record, 0);
    }
    try {
      await this.commits.add(data);
    } catch (err) {
      for (const state of this.groups.values()) removePending(state, record.seq);
      if (held !== undefined) this.tail.release(held);
      throw err;
    }
    return record;
  }

  private async writeSegment(data: Chunk[], records: number): Promise<void> {
    if (!this.writer || this.writer.size >= SEGMENT_BYTES) await this.rotate();
    const writer = this.writer as AppendLog;
    const before = writer.size;
    await writer.append(data);
    this.segmentWrites.writes += 1;
    this.segmentWrites.records += records;
    this.segmentWrites.bytes += writer.size - before;
    const current = this.segments[this.segments.length - 1];
    // May overstate the last seq (appends still queued): a segment is then only kept longer.
    if (current) current.last = this.nextSeq - 1;
  }

  private async rotate(): Promise<void> {
    await this.writer?.close();
    // A new process starts a new segment, so replayed segments are never appended to.
    const index = (this.segments[this.segments.length - 1]?.index ?? 0) + 1;
    const path = segmentPath(this.dir, index);
    this.writer = await AppendLog.open(path, { dsync: true });
    // O_DSYNC makes the appends' data durable, not the new file's name: without this, a power loss
    // could take the whole segment, every 202 in it included. Off the main thread: a new segment comes
    // every 64 MiB, in the middle of the audit API's traffic.
    await syncDirectoryAsync(this.dir);
    this.segments.push({ index, path, first: this.nextSeq, last: 0 });
  }

  /** The state of `group`; throws for a group the journal was not opened with. */
  private stateOf(group: string): GroupState {
    const state = this.groups.get(group);
    if (!state || !this.acks.has(group)) throw new Error(`unknown consumer group ${group}`);
    return state;
  }

  /**
   * Records that `seqs` are handed to `group` as one batch (see GroupState.unsettledBatches). Written,
   * not synced: after a power loss within the sync interval the batch may be regrouped, so a file
   * destination may write those events into a second file (docs/operations.md).
   */
  async lease(group: string, seqs: readonly number[]): Promise<void> {
    this.stateOf(group);
    await this.acks.add(group, frame(`l ${seqs.join(' ')}`));
  }

  /**
   * Records the outcome of one delivery to `group`; the state changes only once it is written (not
   * yet synced: see ack-logs.ts), and not at all when the write fails.
   */
  async settle(
    group: string,
    acked: readonly number[],
    failed: readonly number[],
    dead: readonly number[],
  ): Promise<void> {
    const state = this.stateOf(group);
    const lines = [
      ...acked.map((s) => frame(`a ${s}`)),
      ...failed.map((s) => frame(`f ${s}`)),
      ...dead.map((s) => frame(`d ${s}`)),
    ].join('');
    if (lines !== '') await this.acks.add(group, lines);
    for (const seq of [...acked, ...dead]) {
      const record = state.pending.get(seq)?.record;
      removePending(state, seq);
      // Settled everywhere: the record leaves the tail now, not when 8 MiB of later appends push it
      // out. Held that long, every one outlived its young generation and was promoted (HeldTail).
      if (record instanceof AppendedRecord && !this.pendingInAnyGroup(seq)) this.tail.release(record);
    }
    for (const seq of failed) {
      const entry = state.pending.get(seq);
      if (entry) entry.failures += 1;
    }
    this.compact();
  }

  private pendingInAnyGroup(seq: number): boolean {
    for (const state of this.groups.values()) if (state.pending.has(seq)) return true;
    return false;
  }

  /** Events not yet acknowledged by the slowest group. */
  get pendingEvents(): number {
    let max = 0;
    for (const state of this.groups.values()) max = Math.max(max, state.events);
    return max;
  }

  /** Deletes the segments every group has fully acknowledged (see deleteSettled). */
  private compact(): void {
    const active = this.writer ? this.segments[this.segments.length - 1] : undefined;
    // Only the segment being written: nothing to delete (most settles), so no walk of the groups.
    if (this.segments.length === 0 || this.segments[0] === active) return;
    this.segments = deleteSettled(this.segments, active, this.groups, this.nextSeq);
  }

  async close(): Promise<void> {
    await this.commits.idle();
    await this.acks.flush();
    await this.writer?.close();
    await this.acks.close();
    this.writer = undefined;
    await this.lock.release();
  }
}

/**
 * Deletes the segments every group has fully acknowledged (never `active`, the one being written);
 * returns those kept. The ack lines that allowed it need not be synced first: if a power loss takes
 * them and the segment is gone, its messages were all delivered (or dead-lettered, whose file is
 * synced before its `d` line is written) and nothing refers to them; if the unlink is lost too,
 * they are delivered again.
 */
function deleteSettled(
  segments: readonly Segment[],
  active: Segment | undefined,
  groups: ReadonlyMap<string, GroupState>,
  nextSeq: number,
): Segment[] {
  let oldestPending = nextSeq;
  for (const state of groups.values()) {
    const first = state.pending.keys().next();
    if (!first.done) oldestPending = Math.min(oldestPending, first.value);
  }
  return segments.filter((segment) => {
    if (segment === active || segment.last >= oldestPending) return true;
    try {
      unlinkSync(segment.path);
    } catch {
      return true;
    }
    return false;
  });
}
