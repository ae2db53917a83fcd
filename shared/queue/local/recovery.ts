/**
 * What `Journal.open` does before the journal takes appends: it reads every segment and ack log
 * (checking each framed record; damage is reported, counted and kept aside, and the records after
 * it are recovered), makes every message not yet acknowledged by a group pending for it again, with
 * its failed attempts and the batches it was leased in, and rewrites each ack log with only what
 * still matters.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Log } from '../../logging/log.js';
import { writeFileAtomically, writeFileSynced } from '../../util/files.js';
import { type DamagedRegion, frame, readRecords } from './append-log.js';
import {
  ACK_LINE,
  ackLogPath,
  addPending,
  type GroupState,
  type JournalDamage,
  type JournalRecord,
  legacyAckLine,
  legacySegmentLine,
  parseMessageRecord,
  SEGMENT,
} from './records.js';

const DAMAGED_DIR = 'damaged';

/** A segment file, with the lowest and highest seq it holds (as far as known). */
export interface Segment {
  index: number;
  path: string;
  first: number;
  last: number;
}

/** What the files of a journal held: its records by seq, its segments oldest first, and the next seq to give. */
export interface Recovered {
  records: Map<number, JournalRecord>;
  segments: Segment[];
  nextSeq: number;
}

/**
 * Reads every segment and ack log of `dir`: the records found, and each group's pending records
 * (with their failures and unsettled batches) put in `groups`; damage is counted in `damage`.
 */
export function recover(
  dir: string,
  groups: ReadonlyMap<string, GroupState>,
  damage: JournalDamage,
  log: Log,
): Recovered {
  const names = readdirSync(dir)
    .filter((f) => SEGMENT.test(f))
    .sort();
  const records = new Map<number, JournalRecord>();
  const segments: Segment[] = [];
  for (const name of names) {
    const path = join(dir, name);
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
    if (scan.damaged.length > 0) reportDamagedSegment(dir, name, scan.damaged, damage, log);
    segments.push({ index: Number(SEGMENT.exec(name)?.[1] ?? 0), path, first, last });
  }
  let nextSeq = 1;
  for (const seq of records.keys()) nextSeq = Math.max(nextSeq, seq + 1);
  for (const [name, state] of groups) recoverGroup(ackLogPath(dir, name), name, state, records, damage, log);
  return { records, segments, nextSeq };
}

/** One group's ack log read back: what of `records` is pending for it, after how many failures, leased in which batches. */
function recoverGroup(
  ackPath: string,
  name: string,
  state: GroupState,
  records: ReadonlyMap<number, JournalRecord>,
  damage: JournalDamage,
  log: Log,
): void {
  const acked = new Set<number>();
  const failures = new Map<number, number>();
  /** Open leases, by the seqs still unsettled in each. */
  const leases: Set<number>[] = [];
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
      damage.ackLines += lines;
      log.warn(
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

/** Damaged records are reported loudly, counted, and kept aside; the records after them are replayed. */
function reportDamagedSegment(
  dir: string,
  name: string,
  damaged: readonly DamagedRegion[],
  damage: JournalDamage,
  log: Log,
): void {
  const path = join(dir, name);
  const data = readFileSync(path);
  for (const region of damaged) {
    const copy = join(dir, DAMAGED_DIR, `${name}.${region.offset}.bin`);
    try {
      writeFileSynced(copy, data.subarray(region.offset, region.offset + region.bytes));
    } catch {
      // The report below matters more than the copy.
    }
    const lines = data
      .subarray(region.offset, region.offset + region.bytes)
      .reduce((n, byte) => (byte === 0x0a ? n + 1 : n), 0);
    damage.records += lines;
    damage.bytes += region.bytes;
    log.error(
      { file: path, offset: region.offset, bytes: region.bytes, records: lines, copy },
      `queue journal ${path}: ${lines} damaged record(s) at byte ${region.offset} (${region.bytes} bytes) cannot be read and are NOT delivered; a copy is in ${copy}; the records after them are recovered`,
    );
  }
}

/**
 * Rewrites each ack log with only what still matters, so the logs do not grow forever: the
 * acknowledgements of records still in a segment (after compaction), the failed attempts of
 * pending messages, and open leases. Written synced (writeFileAtomically) from what the old file
 * held, which after a crash includes lines the last process wrote but never synced: so nothing is
 * synced before it.
 */
export function rewriteAckLogs(
  dir: string,
  groups: ReadonlyMap<string, GroupState>,
  records: ReadonlyMap<number, JournalRecord>,
  segments: readonly Segment[],
): void {
  const kept = segments[0] ? Math.min(...segments.map((s) => s.first)) : Number.POSITIVE_INFINITY;
  for (const [name, state] of groups) {
    const path = ackLogPath(dir, name);
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
