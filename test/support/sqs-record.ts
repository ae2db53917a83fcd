/** An SQS record of the Lambda event shape, as an SQS event source delivers it, for handler tests. */
import type { SQSRecord } from 'aws-lambda';
import { encodePacked } from '../../shared/queue/codec.js';
import type { QueuedEvent } from '../../shared/queue/events.js';

/** A first delivery of `body` (a queue message) from the queue `queue`. */
export function sqsRecord(messageId: string, body: string, queue = 'test'): SQSRecord {
  return {
    messageId,
    receiptHandle: messageId,
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '0',
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: '0',
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queue}`,
    awsRegion: 'us-east-1',
  };
}

/** A first delivery of `events`, packed as the senders pack them. */
export function packedRecord(messageId: string, events: QueuedEvent[], queue = 'svc-tsdb'): SQSRecord {
  return sqsRecord(messageId, encodePacked(events), queue);
}
