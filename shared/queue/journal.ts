/**
 * The durable local queue's storage: an append-only journal of messages in segment files, and one
 * append-only acknowledgement log per consumer group. A message is durable once `append` resolves
 * (written and fdatasync'ed, several appends sharing one sync). On open, the journal is replayed:
 * every message not yet acknowledged by a group is pending for that group again.
 *
 * Files under `dir`:
 *   segment-<number, 12 digits>.log      one JSON line per message {s: seq, g?: groups, n: events, b: body}
 *   acks-<group>.log                     lines "a <seq>" (acknowledged), "f <seq>" (a failed attempt),
 *                                        "d <seq>" (dead-lettered; counts as acknowledged)
 * A torn last line (a crash in the middle of a write) is cut off at open.
 */
import { closeSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomically, writeFileSynced } from '../util/files.js';

export interface JournalRecord {
  seq: number;
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
const LOCK_FILE = 'lock';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err instanceof Error && 'code' in err && err.code === 'EPERM';
  }
}

/** One process per queue directory: a second Svc (or `svc dlq replay` while Svc runs) is refused. */
function takeLock(dir: string): void {
  const path = join(dir, LOCK_FILE);
  if (existsSync(path)) {
    const pid = Number(readFileSync(path, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
      throw new Error(`the queue directory ${dir} is in use by process ${pid}`);
    }
  }
  writeFileSynced(join(dir, LOCK_FILE), `${process.pid}\n`);
}
const SEGMENT_BYTES = 64 * 1024 * 1024;

interface Writer {
  handle: FileHandle;
  bytes: number;
}

/** Appends that wait together for one write + sync. */
class GroupCommit {
  private queue: { data: string; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private running: Promise<void> | undefined;

  constructor(private readonly flush: (data: string) => Promise<void>) {}

  add(data: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ data, resolve, reject });
      this.running ??= this.drain();
    });
  }

  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        await this.flush(batch.map((b) => b.data).join(''));
        for (const b of batch) b.resolve();
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.running = undefined;
  }
}

/** Reads a file of lines; a torn last line is cut off (and the file truncated to match). */
function readLines(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  const end = text.lastIndexOf('\n') + 1;
  if (end < text.length) {
    const fd = openSync(path, 'r+');
    try {
      ftruncateSync(fd, Buffer.byteLength(text.slice(0, end)));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
  return text.slice(0, end).split('\n').filter((l) => l !== '');
}

function parseRecord(line: string): JournalRecord | null {
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

export class Journal {
  private segments: { index: number; path: string; last: number }[] = [];
  private writer: Writer | undefined;
  private readonly commits: GroupCommit;
  private readonly ackCommits = new Map<string, GroupCommit>();
  private readonly ackHandles = new Map<string, FileHandle>();
  private nextSeq = 1;
  readonly groups = new Map<string, GroupState>();

  private constructor(
    readonly dir: string,
    groupNames: readonly string[],
  ) {
    for (const name of groupNames) this.groups.set(name, { pending: new Map(), events: 0 });
    this.commits = new GroupCommit((data) => this.writeSegment(data));
  }

  /** Opens (or creates) the journal and replays it. */
  static async open(dir: string, groupNames: readonly string[]): Promise<Journal> {
    mkdirSync(dir, { recursive: true });
    takeLock(dir);
    const journal = new Journal(dir, groupNames);
    journal.replay();
    journal.compactAckLogs();
    for (const name of groupNames) {
      journal.ackHandles.set(name, await open(join(dir, `acks-${name}.log`), 'a'));
      journal.ackCommits.set(name, new GroupCommit((data) => journal.writeAcks(name, data)));
    }
    journal.compact();
    return journal;
  }

  private replay(): void {
    const names = readdirSync(this.dir).filter((f) => SEGMENT.test(f)).sort();
    const records: JournalRecord[] = [];
    for (const name of names) {
      const path = join(this.dir, name);
      const lines = readLines(path);
      let last = 0;
      for (const line of lines) {
        const record = parseRecord(line);
        if (!record) continue;
        records.push(record);
        last = Math.max(last, record.seq);
      }
      this.segments.push({ index: Number(SEGMENT.exec(name)?.[1] ?? 0), path, last });
    }
    for (const record of records) this.nextSeq = Math.max(this.nextSeq, record.seq + 1);
    for (const [name, state] of this.groups) {
      const acked = new Set<number>();
      const failures = new Map<number, number>();
      const ackPath = join(this.dir, `acks-${name}.log`);
      if (existsSync(ackPath)) {
        for (const line of readLines(ackPath)) {
          const [kind, seqText] = line.split(' ');
          const seq = Number(seqText);
          if (kind === 'a' || kind === 'd') acked.add(seq);
          else if (kind === 'f') failures.set(seq, (failures.get(seq) ?? 0) + 1);
        }
      }
      for (const record of records) {
        if (acked.has(record.seq) || (record.groups && !record.groups.includes(name))) continue;
        addPending(state, record, failures.get(record.seq) ?? 0);
      }
    }
  }

  /** Rewrites each ack log with only the lines of messages still in a segment, so they do not grow forever. */
  private compactAckLogs(): void {
    const live = new Set<number>();
    for (const state of this.groups.values()) for (const seq of state.pending.keys()) live.add(seq);
    for (const name of this.groups.keys()) {
      const path = join(this.dir, `acks-${name}.log`);
      if (!existsSync(path)) continue;
      const kept = readLines(path).filter((line) => live.has(Number(line.split(' ')[1])));
      writeFileAtomically(path, kept.map((l) => `${l}\n`).join(''));
    }
  }

  /** Appends a message; resolves once it is on disk. */
  async append(body: string, events: number, groups?: string[]): Promise<JournalRecord> {
    const record: JournalRecord = { seq: this.nextSeq++, events, body, ...(groups ? { groups } : {}) };
    for (const [name, state] of this.groups) {
      if (!groups || groups.includes(name)) addPending(state, record, 0);
    }
    try {
      await this.commits.add(`${JSON.stringify({ s: record.seq, ...(groups ? { g: groups } : {}), n: events, b: body })}\n`);
    } catch (err) {
      for (const state of this.groups.values()) removePending(state, record.seq);
      throw err;
    }
    return record;
  }

  private async writeSegment(data: string): Promise<void> {
    if (!this.writer || this.writer.bytes >= SEGMENT_BYTES) await this.rotate();
    const writer = this.writer as Writer;
    await writer.handle.write(data);
    await writer.handle.datasync();
    writer.bytes += Buffer.byteLength(data);
    const current = this.segments[this.segments.length - 1];
    // May overstate the last seq (appends still queued): a segment is then only kept longer.
    if (current) current.last = this.nextSeq - 1;
  }

  private async rotate(): Promise<void> {
    await this.writer?.handle.close();
    // A new process starts a new segment, so replayed segments are never appended to.
    const index = (this.segments[this.segments.length - 1]?.index ?? 0) + 1;
    const path = join(this.dir, `segment-${String(index).padStart(12, '0')}.log`);
    const handle = await open(path, 'a');
    this.writer = { handle, bytes: 0 };
    this.segments.push({ index, path, last: 0 });
  }

  private async writeAcks(group: string, data: string): Promise<void> {
    const handle = this.ackHandles.get(group);
    if (!handle) throw new Error(`unknown consumer group ${group}`);
    await handle.write(data);
    await handle.datasync();
  }

  /** Records the outcome of one delivery to `group`. */
  async settle(group: string, acked: readonly number[], failed: readonly number[], dead: readonly number[]): Promise<void> {
    const state = this.groups.get(group);
    const commit = this.ackCommits.get(group);
    if (!state || !commit) throw new Error(`unknown consumer group ${group}`);
    const lines = [...acked.map((s) => `a ${s}\n`), ...failed.map((s) => `f ${s}\n`), ...dead.map((s) => `d ${s}\n`)].join('');
    if (lines !== '') await commit.add(lines);
    for (const seq of [...acked, ...dead]) removePending(state, seq);
    for (const seq of failed) {
      const entry = state.pending.get(seq);
      if (entry) entry.failures += 1;
    }
    this.compact();
  }

  /** Events not yet acknowledged by the slowest group. */
  get pendingEvents(): number {
    let max = 0;
    for (const state of this.groups.values()) max = Math.max(max, state.events);
    return max;
  }

  /** Deletes segments every group has fully acknowledged (never the one being written). */
  private compact(): void {
    let oldestPending = this.nextSeq;
    for (const state of this.groups.values()) {
      const first = state.pending.keys().next();
      if (!first.done) oldestPending = Math.min(oldestPending, first.value);
    }
    const active = this.writer ? this.segments[this.segments.length - 1] : undefined;
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
    await this.writer?.handle.close();
    for (const handle of this.ackHandles.values()) await handle.close();
    this.writer = undefined;
    rmSync(join(this.dir, LOCK_FILE), { force: true });
  }
}
