/**
 * A delivery as its consumer group sees it: the SQS event shape (one SQSRecord per message), so
 * the same writer handler serves the local queue and SQS on Lambda.
 */
import type { SQSRecord } from 'aws-lambda';
import { type DeliverableRecord, HANDED_OFF_EVENTS } from '../codec.js';
import type { QueuedEvent } from '../events.js';
import type { JournalRecord } from './records.js';

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
export class DeliveryShape {
  private readonly now = String(Date.now());
  private readonly arn: string;
  private readonly attributes = new Map<number, SQSRecord['attributes']>();

  constructor(private readonly group: string) {
    this.arn = `arn:aws:sqs:local:000000000000:${group}`;
  }

  /** The SQS record of `record` on its `receiveCount`th delivery. */
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
