/**
 * A delivery as its consumer group sees it: the SQS event shape (one SQSRecord per message), so
 * the same writer handler serves the local queue and SQS on Lambda, plus the events handed off in
 * memory with its records (index.ts, "The in-memory hand-off").
 */
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import type { QueuedEvent } from '../events.js';
import type { GroupState, JournalRecord } from './records.js';

/**
 * The events each record of a delivery was encoded from, at the index of its record in `Records`:
 * undefined for a record whose events this process no longer holds (read back after a restart, or
 * let go of by the in-memory tail), whose body its consumer parses. An array beside `Records`, not
 * a member of each record or a map by message id: one index per record, no entry to hash, nothing
 * a spread of a record could carry away (bench/pipeline.mjs's "queue → no-op" stage times the
 * hand-off).
 */
export interface HandedOff {
  readonly handedOff: readonly (readonly QueuedEvent[] | undefined)[];
}

/** A delivery of the local queue: the SQS event shape, and the events handed off with its records. */
export type LocalDelivery = SQSEvent & HandedOff;

/** No message attributes (the local queue sets none): one object for every record, never changed. */
const NO_MESSAGE_ATTRIBUTES: SQSRecord['messageAttributes'] = Object.freeze({});

/**
 * The SQS-shaped record of a delivered message. The body is read when asked for: a consumer given
 * the record's events in memory (HandedOff) never needs the text, so it is not made from the bytes.
 * A class (the body and receipt handle read through its prototype), with what a batch's records
 * have in common made once per batch (`DeliveryShape`): as an object literal with its own getter,
 * each record was a closure, an accessor pair and six strings, held for the batch's whole delivery
 * (the tsdb's answer included), so young-generation collections copied and promoted them.
 */
class DeliveredRecord implements SQSRecord {
  readonly messageId: string;
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
  }

  get body(): string {
    return this.#record.body;
  }

  get receiptHandle(): string {
    return `${this.#group}:${this.#record.seq}`;
  }
}

/** What the records of one delivery share: the group's ARN, the send time and the attributes per receive count. */
export class DeliveryShape {
  /**
   * The delivery of `batch` to the group whose pending messages (and their failures so far) are
   * `pending`: its SQS records and the events handed off with them, made in one pass.
   */
  static delivery(group: string, batch: readonly JournalRecord[], pending: GroupState['pending']): LocalDelivery {
    const shape = new DeliveryShape(group);
    const records: SQSRecord[] = [];
    const handedOff: (readonly QueuedEvent[] | undefined)[] = [];
    for (const record of batch) {
      records.push(shape.record(record, (pending.get(record.seq)?.failures ?? 0) + 1));
      handedOff.push(record.decoded);
    }
    return { Records: records, handedOff };
  }

  private readonly now = String(Date.now());
  private readonly arn: string;
  private readonly attributes = new Map<number, SQSRecord['attributes']>();

  private constructor(private readonly group: string) {
    this.arn = `arn:aws:sqs:local:000000000000:${group}`;
  }

  /** The SQS record of `record` on its `receiveCount`th delivery. */
  private record(record: JournalRecord, receiveCount: number): SQSRecord {
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
