/**
 * The far side of a forwarding test: what a Lambda event source mapping does with a writer Lambda.
 * No stand-in for the mapping exists locally, so this loop plays it: it receives messages from a
 * fauxqs queue (up to 10 at a time), hands them to the real writer handler in the SQS event shape,
 * and deletes the messages the handler did not report as failed. While the emulator is down it
 * waits and tries again, as the mapping would.
 */
import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { BaseDestination } from '../../shared/destinations/port.js';
import type { QueuedEvent } from '../../shared/queue/events.js';
import { silentLog } from './log.js';
import { sleep } from './ports.js';

export interface QueueConsumer {
  /** SQS messages handed to the handler, and the events they held (before the handler's dedupe). */
  readonly received: { messages: number; batches: number };
  /** Stops the loop after the receive in progress. */
  stop(): Promise<void>;
}

function toRecord(queueUrl: string, m: Message): SQSRecord {
  const now = String(Date.now());
  return {
    messageId: m.MessageId ?? '',
    receiptHandle: m.ReceiptHandle ?? '',
    body: m.Body ?? '',
    attributes: {
      ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
      SentTimestamp: m.Attributes?.SentTimestamp ?? now,
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: now,
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queueUrl.split('/').pop() ?? ''}`,
    awsRegion: 'us-east-1',
  };
}

/** Starts the receive loop: `client()` is asked each round (an outage test replaces the emulator and its client). */
export function consumeQueue(
  client: () => SQSClient,
  queueUrl: () => string,
  handler: (event: SQSEvent) => Promise<SQSBatchResponse>,
): QueueConsumer {
  let running = true;
  const received = { messages: 0, batches: 0 };
  const loop = (async () => {
    while (running) {
      const url = queueUrl();
      let messages: Message[];
      try {
        const out = await client().send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 0,
            VisibilityTimeout: 30,
            AttributeNames: ['All'],
          }),
        );
        messages = out.Messages ?? [];
      } catch {
        await sleep(100); // the emulator is down (the outage under test)
        continue;
      }
      if (messages.length === 0) {
        await sleep(50);
        continue;
      }
      received.messages += messages.length;
      received.batches += 1;
      const records = messages.map((m) => toRecord(url, m));
      const response = await handler({ Records: records });
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      const done = records.filter((r) => !failed.has(r.messageId));
      if (done.length > 0) {
        await client()
          .send(
            new DeleteMessageBatchCommand({
              QueueUrl: url,
              Entries: done.map((r, i) => ({ Id: `d${i}`, ReceiptHandle: r.receiptHandle })),
            }),
          )
          .catch(() => undefined); // not deleted: received again, and deduped by the handler
      }
    }
  })();
  return {
    received,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/**
 * A destination whose writes can be counted per event id (named `tsdb`, taking the kinds given): the
 * writer handler in front of it is the real one, so its dedupe by id is what a test of exactly-once
 * delivery checks. A real tsdb would hide duplicates (a point written twice is one point).
 */
export class CountingDestination extends BaseDestination {
  readonly name = 'tsdb';
  /** Writes per event id. */
  readonly writes = new Map<string, number>();
  readonly events: QueuedEvent[] = [];

  constructor(private readonly kinds: ReadonlySet<QueuedEvent['kind']>) {
    super(silentLog);
  }

  takes(event: QueuedEvent): boolean {
    return this.kinds.has(event.kind);
  }

  protected writeEvents(events: readonly QueuedEvent[]): Promise<ReadonlySet<string>> {
    for (const e of events) {
      this.writes.set(e.id, (this.writes.get(e.id) ?? 0) + 1);
      this.events.push(e);
    }
    return Promise.resolve(new Set());
  }

  /** Ids written more than once (must stay empty). */
  duplicates(): string[] {
    return [...this.writes].filter(([, n]) => n > 1).map(([id]) => id);
  }
}
