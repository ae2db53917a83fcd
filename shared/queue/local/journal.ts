/**
 * The durable local queue's storage: an append-only journal of messages in segment files, and one
 * append-only acknowledgement log per consumer group. A message is durable once `append` resolves
 * (written and synced, several appends sharing one write). On open, the journal is replayed:
 * every message not yet acknowledged by a group is pending for that group again.
 *
 * What is synced when. The segments are opened with O_DSYNC: an append resolves once its data is on
 * disk, and that is the promise behind the audit API's 202. The acknowledgement logs (leases and
 * delivery outcomes) are written WITHOUT a sync per delivery: `lease` and `settle` resolve once the
 * line is written (in the page cache, so a process crash, even kill -9, keeps it), and each ack log
 * written to is fdatasynced at most once per ACK_SYNC_MS, and at close. A power loss can therefore
 * lose up to ≈ 1 s of outcomes; those messages are delivered again, which the destinations tolerate
 * (idempotent by event id: nothing is lost and nothing is written twice; only a file destination's
 * batch handed out in that second may be regrouped, see `lease`). A synced outcome per
 * delivery was one of three synced writes per audit request (bench/README.md).
 * Nothing else waits for the ack logs to be synced, by choice (see `compact`, the dead-letter move in
 * queue.ts and `rewriteAckLogs`): no step takes a decision a lost outcome line could make wrong.
 *
 * Files under `dir` (every line a framed record, see append-log.ts):
 *   segment-<number, 12 digits>.log      one record per message: `m <seq> <events> <body>`, the body as
 *                                        it is (it is JSON itself: wrapping it in JSON again cost a
 *                                        second escaping pass per write and a parse per replay); a
 *                                        record for some groups only, or a body with a newline, as
 *                                        JSON {s: seq, g?: groups, n: events, b: body} (also the
 *                                        form of Svc ≤ 15.0.0's records, still read)
 *   acks-<group>.log                     "a <seq>" acknowledged, "f <seq>" a failed attempt,
 *                                        "d <seq>" dead-lettered (counts as acknowledged),
 *                                        "l <seq> <seq> …" a batch handed to the group (a lease)
 *   damaged/                             copies of damaged records found at open, for inspection
 * A directory is held by one process at a time (lock.ts).
 */
import { existsSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Log } from '../../logging/log.js';
import { Fifo } from '../../util/fifo.js';
import { makeDirectorySynced, syncDirectoryAsync, writeFileAtomically, writeFileSynced } from '../../util/files.js';
import type { QueuedEvent } from '../events.js';
import {
  AppendLog,
  type Chunk,
  type DamagedRegion,
  frame,
  frameBytes,
  frameText,
  GroupCommit,
  readRecords,
} from './append-log.js';
import { QueueLock } from './lock.js';

export interface JournalRecord {
  seq: number;
  /** The events `body` was encoded from, while the in-memory tail holds them (Journal.append); absent for records read from disk. */
  readonly decoded?: readonly QueuedEvent[] | undefined;
  /** Only these consumer groups take it (a replayed dead letter); undefined = every group. */
  groups?: string[];
  /** Number of events packed in `body`. */
  events: number;
  body: string;
}

export interface GroupState {
  /** Unacknowledged records in seq order, with their failed attempts so far. */
  pending: Map<number, { record: JournalRecord; failures: number }>;
  /** Events in `pending` (kept up to date, so the capacity check is O(1) per send). */
  events: number;
  /**
   * Batches handed to the group before the last stop or crash and never settled, in order: they
   * are delivered again first, exactly as they were, so a destination that names its output after
   * the batch (a file) replaces it instead of writing its events twice.
   */
  unsettledBatches: JournalRecord[][];
}

/** What the last open found wrong in the files. */
export interface JournalDamage {
  /** Damaged message records: their events are not delivered (a copy is kept under damaged/). */
  records: number;
  bytes: number;
  /** Damaged acknowledgement lines: their messages may be delivered again (destinations are idempotent). */
  ackLines: number;
}

function addPending(state: GroupState, record: JournalRecord, failures: number): void {
  if (!state.pending.has(record.seq)) state.events += record.events;
  state.pending.set(record.seq, { record, failures });
}

function removePending(state: GroupState, seq: number): void {
  const entry = state.pending.get(seq);
  if (!entry) return;
  state.pending.delete(seq);
  state.events -= entry.record.events;
}

const SEGMENT = /^segment-(\d{12})\.log$/;
const SEGMENT_BYTES = 64 * 1024 * 1024;
const DAMAGED_DIR = 'damaged';
const ACK_LINE = /^([adf]) (\d+)$|^l( \d+)+$/;

const RAW_HEAD = /^m (\d{1,15}) (\d{1,15}) /;

/**
 * The ack logs' sync interval: a written but unsynced lease or outcome is on disk at most this long
 * after it was written (bar a failing disk), the redelivery window after a power loss
 * (docs/operations.md "What a crash or a power loss costs").
 */
export const ACK_SYNC_MS = 1000;

const NEWLINE_BYTE = 0x0a;

/** Bodies below this many characters are kept as text when no events are held with them (see append). */
const SMALL_BODY = 4096;

/**
 * The in-memory tail: the events of the most recent appends are held with their records (body bytes
 * up to this many), so a consumer in this process takes them without parsing the body back
 * (codec.ts `HANDED_OFF_EVENTS`). Bounded: a consumer that lags further behind (a destination down, a long
 * batch window) parses what it reads, as after a restart. 8 MiB is about 4,000 2 KB audit events, or
 * 20,000 UDP log events: several batches ahead of a consumer that keeps up.
 */
const HELD_BODY_BYTES = 8 * 1024 * 1024;

/** At most this many slots from the oldest record the tail holds to the newest (HeldTail.add). */
const HELD_SLOTS = 65_536;

/**
 * A record this process appended in the raw form: its body is kept as the bytes written and decoded
 * whenever it is read. Held until every group acknowledged it, a body as text would be copied by every
 * young-generation GC meanwhile and then promoted; bytes live outside the JS heap. It also holds the
 * events the body was encoded from while it is in the in-memory tail (`decoded`).
 */
class AppendedRecord implements JournalRecord {
  constructor(
    readonly seq: number,
    readonly events: number,
    readonly bytes: Buffer,
    public decoded: readonly QueuedEvent[] | undefined,
  ) {}

  /** Its slot in the HeldTail while the tail holds it, else -1. */
  tailSlot = -1;

  /**
   * Decoded at each read, not kept: a delivery reads it once (to parse it), and text kept until
   * every group acknowledged the record would be copied by each scavenge meanwhile, then promoted.
   */
  get body(): string {
    return this.bytes.toString('utf8');
  }
}

/**
 * The records of the in-memory tail, oldest first, and their body bytes. A record leaves it when 8 MiB
 * of later appends push it out, or as soon as every group settled it (release): a record a consumer
 * keeping up settles within milliseconds then dies in the young generation, bytes and all, instead of
 * being held (and so promoted to the old generation, its buffer waiting for a full GC) until pushed out.
 */
class HeldTail {
  /** The records, oldest first; a released one's slot is emptied in place. */
  private readonly records = new Fifo<AppendedRecord>();
  private bytes = 0;

  constructor(private readonly limit: number) {}

  add(record: AppendedRecord): void {
    record.tailSlot = this.records.push(record);
    this.bytes += record.bytes.length;
    // Past the bytes or the slots (a record pending long, behind it only released ones): push out
    // the oldest, then step over the released slots at the front.
    while ((this.bytes > this.limit || this.records.length > HELD_SLOTS) && this.records.length > 0) {
      const oldest = this.records.shift();
      if (oldest === undefined) continue;
      oldest.decoded = undefined;
      oldest.tailSlot = -1;
      this.bytes -= oldest.bytes.length;
    }
    this.records.skipEmpty();
  }

  /** Slots from the oldest record held to the newest (released slots included). */
  get slots(): number {
    return this.records.length;
  }

  /** The record leaves the tail (settled everywhere, or an append that did not happen), its events let go of. */
  release(record: AppendedRecord): void {
    record.decoded = undefined;
    const slot = record.tailSlot;
    record.tailSlot = -1;
    if (slot < 0 || !this.records.empty(slot, record)) return;
    this.bytes -= record.bytes.length;
    this.records.skipEmpty();
  }
}

/** A message record's payload (either form) as a record; null when it is neither. */
export function parseMessageRecord(line: string): JournalRecord | null {
  if (line.startsWith('m ')) {
    const head = RAW_HEAD.exec(line.slice(0, 40));
    if (head === null) return null;
    return { seq: Number(head[1]), events: Number(head[2]), body: line.slice(head[0].length) };
  }
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== 'object' || value === null) return null;
    const { s, g, n, b } = value as Record<string, unknown>;
    if (typeof s !== 'number' || typeof n !== 'number' || typeof b !== 'string') return null;
    const groups = Array.isArray(g) && g.every((x) => typeof x === 'string') ? g : undefined;
    return { seq: s, events: n, body: b, ...(groups ? { groups } : {}) };
  } catch {
    return null;
  }
}

/** A line of a journal written before records were framed (Svc ≤ 15.0.0). */
const legacySegmentLine = (line: string): boolean => line.startsWith('{') && parseMessageRecord(line) !== null;
const legacyAckLine = (line: string): boolean => /^[adf] \d+$/.test(line);

export class Journal {
  /** Segment files, oldest first, with the lowest and highest seq they hold (as far as known). */
  private segments: { index: number; path: string; first: number; last: number }[] = [];
  private writer: AppendLog | undefined;
  private readonly commits: GroupCommit;
  private readonly ackCommits = new Map<string, GroupCommit>();
  private readonly ackLogs = new Map<string, AppendLog>();
  /** Ack logs written to since their last sync. */
  private readonly unsyncedAcks = new Set<AppendLog>();
  private ackSyncTimer: NodeJS.Timeout | undefined;
  private ackSyncing: Promise<void> | undefined;
  /** Ack writes so far, and how many of them the last finished sync covered (see acksSynced). */
  private ackWrites = 0;
  private ackWritesSynced = 0;
  private ackSyncWaiters: { upTo: number; resolve: () => void }[] = [];
  /** fdatasyncs of ack logs done so far (the periodic ones and close's). */
  ackSyncs = 0;
  /**
   * The message records' synced writes so far: how many, the records and bytes they carried (a
   * group commit's size is records / writes); the benches (bench:udp, bench:udp-steps) read it
   * through LocalEventQueue.segmentWrites.
   */
  readonly segmentWrites = { writes: 0, records: 0, bytes: 0 };
  private nextSeq = 1;
  private readonly tail = new HeldTail(HELD_BODY_BYTES);
  /** Slots of the in-memory tail's array in use (tests): bounded however long a record stays pending. */
  get tailSlots(): number {
    return this.tail.slots;
  }
  readonly groups = new Map<string, GroupState>();
  readonly damage: JournalDamage = { records: 0, bytes: 0, ackLines: 0 };

  private constructor(
    readonly dir: string,
    groupNames: readonly string[],
    private readonly lock: QueueLock,
    private readonly log: Log,
  ) {
    for (const name of groupNames) this.groups.set(name, { pending: new Map(), events: 0, unsettledBatches: [] });
    // wholeTurn: the messages of one send or spool round go in one synced write (append-log.ts).
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
      const journal = new Journal(dir, groupNames, lock, log);
      const records = journal.replay();
      onReplay?.(records.values());
      journal.compact();
      journal.rewriteAckLogs(records);
      for (const name of groupNames) {
        // Not O_DSYNC: written per delivery, synced per ACK_SYNC_MS (see the header).
        journal.ackLogs.set(name, await AppendLog.open(join(dir, `acks-${name}.log`)));
        journal.ackCommits.set(name, new GroupCommit((data) => journal.writeAcks(name, data)));
      }
      return journal;
    } catch (err) {
      await lock.release();
      throw err;
    }
  }

  /** Reads every segment and ack log; returns the records found, by seq. */
  private replay(): Map<number, JournalRecord> {
    const names = readdirSync(this.dir)
      .filter((f) => SEGMENT.test(f))
      .sort();
    const records = new Map<number, JournalRecord>();
    for (const name of names) {
      const path = join(this.dir, name);
      const scan = readRecords(path, legacySegmentLine);
      let last = 0;
      let first = Number.POSITIVE_INFINITY;
      for (const payload of scan.payloads) {
        const record = parseMessageRecord(payload);
        if (!record) continue;
        records.set(record.seq, record);
        last = Math.max(last, record.seq);
        first = Math.min(first, record.seq);
      }
      if (scan.damaged.length > 0) this.reportDamagedSegment(name, path, scan.damaged);
      this.segments.push({ index: Number(SEGMENT.exec(name)?.[1] ?? 0), path, first, last });
    }
    for (const seq of records.keys()) this.nextSeq = Math.max(this.nextSeq, seq + 1);
    for (const [name, state] of this.groups) {
      const acked = new Set<number>();
      const failures = new Map<number, number>();
      /** Open leases, by the seqs still unsettled in each. */
      const leases: Set<number>[] = [];
      const ackPath = join(this.dir, `acks-${name}.log`);
      if (existsSync(ackPath)) {
        const scan = readRecords(ackPath, legacyAckLine);
        for (const line of scan.payloads) {
          if (!ACK_LINE.test(line)) continue;
          const [kind, ...rest] = line.split(' ');
          const seqs = rest.map(Number);
          if (kind === 'l') {
            leases.push(new Set(seqs));
            continue;
          }
          const seq = seqs[0] ?? 0;
          if (kind === 'a' || kind === 'd') acked.add(seq);
          else failures.set(seq, (failures.get(seq) ?? 0) + 1);
          for (const lease of leases) lease.delete(seq);
        }
        if (scan.damaged.length > 0) {
          const lines = scan.damaged.length;
          this.damage.ackLines += lines;
          this.log.warn(
            { file: ackPath, damaged: scan.damaged },
            `acknowledgement log ${ackPath} has ${lines} damaged region(s) (first at byte ${scan.damaged[0]?.offset ?? 0}); their messages may be delivered again, which the destinations tolerate`,
          );
        }
      }
      for (const record of records.values()) {
        if (acked.has(record.seq) || (record.groups && !record.groups.includes(name))) continue;
        addPending(state, record, failures.get(record.seq) ?? 0);
      }
      for (const lease of leases) {
        const batch = [...lease].flatMap((seq) => state.pending.get(seq)?.record ?? []).sort((a, b) => a.seq - b.seq);
        if (batch.length > 0) state.unsettledBatches.push(batch);
      }
    }
    return records;
  }

  /** Damaged records are reported loudly, counted, and kept aside; the records after them are replayed. */
  private reportDamagedSegment(name: string, path: string, damaged: readonly DamagedRegion[]): void {
    const data = readFileSync(path);
    for (const region of damaged) {
      const copy = join(this.dir, DAMAGED_DIR, `${name}.${region.offset}.bin`);
      try {
        writeFileSynced(copy, data.subarray(region.offset, region.offset + region.bytes));
      } catch {
        // The report below matters more than the copy.
      }
      const lines = data
        .subarray(region.offset, region.offset + region.bytes)
        .reduce((n, byte) => (byte === 0x0a ? n + 1 : n), 0);
      this.damage.records += lines;
      this.damage.bytes += region.bytes;
      this.log.error(
        { file: path, offset: region.offset, bytes: region.bytes, records: lines, copy },
        `queue journal ${path}: ${lines} damaged record(s) at byte ${region.offset} (${region.bytes} bytes) cannot be read and are NOT delivered; a copy is in ${copy}; the records after them are recovered`,
      );
    }
  }

  /**
   * Rewrites each ack log with only what still matters, so the logs do not grow forever: the
   * acknowledgements of records still in a segment (after `compact`), the failed attempts of
   * pending messages, and open leases. Written synced (writeFileAtomically) from what the old file
   * held, which after a crash includes lines the last process wrote but never synced: so nothing is
   * synced before it.
   */
  private rewriteAckLogs(records: ReadonlyMap<number, JournalRecord>): void {
    const kept = this.segments[0] ? Math.min(...this.segments.map((s) => s.first)) : Number.POSITIVE_INFINITY;
    for (const [name, state] of this.groups) {
      const path = join(this.dir, `acks-${name}.log`);
      if (!existsSync(path)) continue;
      const lines: string[] = [];
      for (const record of records.values()) {
        const mine = !record.groups || record.groups.includes(name);
        if (mine && record.seq >= kept && !state.pending.has(record.seq)) lines.push(frame(`a ${record.seq}`));
      }
      for (const [seq, { failures }] of state.pending) for (let i = 0; i < failures; i++) lines.push(frame(`f ${seq}`));
      for (const batch of state.unsettledBatches) lines.push(frame(`l ${batch.map((r) => r.seq).join(' ')}`));
      writeFileAtomically(path, lines.join(''));
    }
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
    const path = join(this.dir, `segment-${String(index).padStart(12, '0')}.log`);
    this.writer = await AppendLog.open(path, { dsync: true });
    // O_DSYNC makes the appends' data durable, not the new file's name: without this, a power loss
    // could take the whole segment, every 202 in it included. Off the main thread: a new segment comes
    // every 64 MiB, in the middle of the audit API's traffic.
    await syncDirectoryAsync(this.dir);
    this.segments.push({ index, path, first: this.nextSeq, last: 0 });
  }

  /**
   * Writes ack lines without a sync: resolved once written, so a process crash keeps them; the file
   * is synced by the next periodic sync. A failed write is rolled back and rejects as before
   * (QueueStorageError: a full disk is a failed write, not a failed sync, on tmpfs and ext4 alike).
   */
  private async writeAcks(group: string, data: Chunk[]): Promise<void> {
    const log = this.ackLogs.get(group);
    if (!log) throw new Error(`unknown consumer group ${group}`);
    await log.append(data, { sync: false });
    this.ackWrites += 1;
    this.unsyncedAcks.add(log);
    // Unref'd: a pending sync never keeps the process alive (close syncs; a crash keeps the page cache).
    this.ackSyncTimer ??= setTimeout(() => void this.syncAcks(), ACK_SYNC_MS).unref();
  }

  /** fdatasyncs every ack log written to since its last sync; one sync at a time. */
  private syncAcks(): Promise<void> {
    this.ackSyncing ??= this.runAckSync().finally(() => {
      this.ackSyncing = undefined;
    });
    return this.ackSyncing;
  }

  private async runAckSync(): Promise<void> {
    if (this.ackSyncTimer !== undefined) clearTimeout(this.ackSyncTimer);
    this.ackSyncTimer = undefined;
    const upTo = this.ackWrites;
    const logs = [...this.unsyncedAcks];
    this.unsyncedAcks.clear();
    for (const log of logs) {
      try {
        await log.sync();
        this.ackSyncs += 1;
      } catch (err) {
        // Linux may drop the failed pages' error state after reporting it, so a retry can "succeed"
        // without the data: say it loudly. The lines stay written for this process; at worst a power
        // loss now redelivers their messages.
        const code = err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : String(err);
        this.log.error(
          { file: log.path, err },
          `cannot sync the acknowledgement log ${log.path} (${code}); after a power loss its recent messages may be delivered again, which the destinations tolerate`,
        );
      }
    }
    this.ackWritesSynced = upTo;
    const waiters = this.ackSyncWaiters;
    this.ackSyncWaiters = waiters.filter((w) => w.upTo > upTo);
    for (const w of waiters) if (w.upTo <= upTo) w.resolve();
  }

  /**
   * Resolves once every ack line written before the call went through a sync (the periodic one: this
   * does not start one; a failed sync is logged and counts as done), for tests and for callers that
   * must know.
   */
  acksSynced(): Promise<void> {
    const upTo = this.ackWrites;
    if (this.ackWritesSynced >= upTo) return Promise.resolve();
    return new Promise((resolve) => {
      this.ackSyncWaiters.push({ upTo, resolve });
    });
  }

  private commitFor(group: string): { state: GroupState; commit: GroupCommit } {
    const state = this.groups.get(group);
    const commit = this.ackCommits.get(group);
    if (!state || !commit) throw new Error(`unknown consumer group ${group}`);
    return { state, commit };
  }

  /**
   * Records that `seqs` are handed to `group` as one batch (see GroupState.unsettledBatches). Written,
   * not synced: after a power loss within the sync interval the batch may be regrouped, so a file
   * destination may write those events into a second file (docs/operations.md).
   */
  async lease(group: string, seqs: readonly number[]): Promise<void> {
    await this.commitFor(group).commit.add(frame(`l ${seqs.join(' ')}`));
  }

  /**
   * Records the outcome of one delivery to `group`; the state changes only once it is written (not
   * yet synced: see the header), and not at all when the write fails.
   */
  async settle(
    group: string,
    acked: readonly number[],
    failed: readonly number[],
    dead: readonly number[],
  ): Promise<void> {
    const { state, commit } = this.commitFor(group);
    const lines = [
      ...acked.map((s) => frame(`a ${s}`)),
      ...failed.map((s) => frame(`f ${s}`)),
      ...dead.map((s) => frame(`d ${s}`)),
    ].join('');
    if (lines !== '') await commit.add(lines);
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

  /**
   * Deletes segments every group has fully acknowledged (never the one being written). The ack lines
   * that allowed it need not be synced first: if a power loss takes them and the segment is gone,
   * its messages were all delivered (or dead-lettered, whose file is synced before its `d` line is
   * written) and nothing refers to them; if the unlink is lost too, they are delivered again.
   */
  private compact(): void {
    const active = this.writer ? this.segments[this.segments.length - 1] : undefined;
    // Only the segment being written: nothing to delete (most settles), so no walk of the groups.
    if (this.segments.length === 0 || this.segments[0] === active) return;
    let oldestPending = this.nextSeq;
    for (const state of this.groups.values()) {
      const first = state.pending.keys().next();
      if (!first.done) oldestPending = Math.min(oldestPending, first.value);
    }
    this.segments = this.segments.filter((segment) => {
      if (segment === active || segment.last >= oldestPending) return true;
      try {
        unlinkSync(segment.path);
      } catch {
        return true;
      }
      return false;
    });
  }

  async close(): Promise<void> {
    await this.commits.idle();
    for (const commit of this.ackCommits.values()) await commit.idle();
    // Whatever the last periodic sync did not take is synced now: a clean stop redelivers nothing.
    await this.ackSyncing;
    await this.syncAcks();
    await this.writer?.close();
    for (const log of this.ackLogs.values()) await log.close();
    this.writer = undefined;
    await this.lock.release();
  }
}
