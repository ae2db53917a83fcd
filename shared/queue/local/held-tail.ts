/**
 * The in-memory tail: the events of the most recent appends, held with their records so a
 * consumer in this process takes them without parsing the body back (the in-memory hand-off,
 * index.ts). Bounded in bytes and slots, and let go of as soon as every group settled a record.
 */
import { Fifo } from '../../util/fifo.js';
import type { QueuedEvent } from '../events.js';
import type { JournalRecord } from './records.js';

/**
 * The tail holds the events of appends up to this many body bytes. Bounded: a consumer that lags
 * further behind (a destination down, a long batch window) parses what it reads, as after a
 * restart. 8 MiB is about 4,000 2 KB audit events, or 20,000 UDP log events: several batches ahead
 * of a consumer that keeps up.
 */
export const HELD_BODY_BYTES = 8 * 1024 * 1024;

/** At most this many slots from the oldest record the tail holds to the newest (HeldTail.add). */
const HELD_SLOTS = 65_536;

/**
 * A record this process appended in the raw form: its body is kept as the bytes written and decoded
 * whenever it is read. Held until every group acknowledged it, a body as text would be copied by every
 * young-generation GC meanwhile and then promoted; bytes live outside the JS heap. It also holds the
 * events the body was encoded from while it is in the in-memory tail (`decoded`).
 */
export class AppendedRecord implements JournalRecord {
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
export class HeldTail {
  /** The records, oldest first; a released one's slot is emptied in place. */
  private readonly records = new Fifo<AppendedRecord>();
  private bytes = 0;

  constructor(private readonly limit: number) {}

  /** Holds the newest record, pushing out the oldest ones past the bound. */
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
