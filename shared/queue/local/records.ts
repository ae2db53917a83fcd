/**
 * The journal's records as this process holds them (JournalRecord, and each group's pending ones),
 * and the names and line formats of its files (index.ts has the layout).
 */
import { join } from 'node:path';
import type { QueuedEvent } from '../events.js';

/** One message of the journal. */
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

/** What one consumer group has still to settle. */
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

/** `record` is pending for the group, after `failures` failed attempts. */
export function addPending(state: GroupState, record: JournalRecord, failures: number): void {
  if (!state.pending.has(record.seq)) state.events += record.events;
  state.pending.set(record.seq, { record, failures });
}

/** The record `seq` is no longer pending for the group. */
export function removePending(state: GroupState, seq: number): void {
  const entry = state.pending.get(seq);
  if (!entry) return;
  state.pending.delete(seq);
  state.events -= entry.record.events;
}

/** A segment file's name, holding its number. */
export const SEGMENT = /^segment-(\d{12})\.log$/;

/** The path of segment number `index` in `dir`. */
export function segmentPath(dir: string, index: number): string {
  return join(dir, `segment-${String(index).padStart(12, '0')}.log`);
}

/** The path of the acknowledgement log of `group` in `dir`. */
export function ackLogPath(dir: string, group: string): string {
  return join(dir, `acks-${group}.log`);
}

/** An ack log's line: acknowledged, dead-lettered or failed, or a lease of a batch. */
export const ACK_LINE = /^([adf]) (\d+)$|^l( \d+)+$/;

const RAW_HEAD = /^m (\d{1,15}) (\d{1,15}) /;

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

/** A line of a segment written before records were framed (Svc ≤ 15.0.0). */
export const legacySegmentLine = (line: string): boolean => line.startsWith('{') && parseMessageRecord(line) !== null;
/** A line of an ack log written before records were framed (Svc ≤ 15.0.0). */
export const legacyAckLine = (line: string): boolean => /^[adf] \d+$/.test(line);
