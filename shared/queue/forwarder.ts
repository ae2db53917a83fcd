/**
 * The edge agent's forwarder: the consumer group of a cloud destination on the durable local queue
 * (local/) that, instead of writing, sends the events of each delivered batch to that
 * destination's SQS queue (sqs.ts SqsEventQueue: packing, claim checks, batches of 10, retries). A
 * small adapter between the two queues, beside them here, so it is tested without the edge agent.
 *
 * - Only the events the destination takes go to its queue (the local queue gives every event to every
 *   group; the writer Lambda fails an event of a kind its destination does not take).
 * - A local message is acknowledged only when every one of its events is on SQS. Its redelivery
 *   sends all its events again, so SQS may hold an event twice: the writer handler dedupes by id.
 * - SQS (or S3, for a claim check) unreachable — the network, a 5xx, throttling, still failing after
 *   the adapter's own retries — is DestinationUnavailableError: the group pauses without counting a
 *   receive, and the local queue keeps the events. A refusal that would repeat (a body SQS rejects, an event
 *   over 1 MiB without a claim-check bucket) fails the message with its reason: after
 *   maxReceiveCount it is in the dead-letter folder, saying why.
 */
import type { SQSRecord } from 'aws-lambda';
import type { Log } from '../logging/log.js';
import { decodeMessage } from './codec.js';
import type { QueuedEvent } from './events.js';
import { DestinationUnavailableError, type LocalBatchResponse, type SqsBatchHandler } from './local/index.js';
import type { SqsEventQueue, SqsQueueCounters } from './sqs.js';

export interface ForwarderOptions {
  /** The destination's name: its consumer group on the local queue. */
  name: string;
  /** Its SQS queue, with the claim-check store of `Svc.cloud.claimCheck`. */
  queue: SqsEventQueue;
  /** Whether the destination takes an event (its Destination's `takes`). */
  takes: (event: QueuedEvent) => boolean;
  log: Log;
}

export class Forwarder {
  readonly name: string;
  readonly handler: SqsBatchHandler;
  private forwarded = 0;
  private unsent = 0;

  constructor(private readonly options: ForwarderOptions) {
    this.name = options.name;
    this.handler = async (event) => this.forward(event.Records);
  }

  /** Events sent to SQS since start (the status page's writes; a redelivered event counts again). */
  get writtenEvents(): number {
    return this.forwarded;
  }

  /** Events not sent on an attempt since start (each comes again, or is dead-lettered). */
  get failedWrites(): number {
    return this.unsent;
  }

  /** What its SQS adapter did: requests, messages, events, retries, claim checks. */
  get sqs(): SqsQueueCounters {
    return this.options.queue.counters;
  }

  private async forward(records: readonly SQSRecord[]): Promise<LocalBatchResponse> {
    const { log, name } = this.options;
    const failureReasons: Record<string, string> = {};
    const events: QueuedEvent[] = [];
    /** The local messages each event id is in. */
    const messagesOf = new Map<string, string[]>();
    for (const record of records) {
      const decoded = decodeMessage(record.body);
      if (!decoded.ok || !('events' in decoded.message)) {
        // The local queue writes only packed messages; anything else is damage, not an outage.
        failureReasons[record.messageId] =
          `local message ${record.messageId} cannot be forwarded: ${decoded.ok ? 'it is a claim check' : decoded.error}`;
        log.error({ destination: name, messageId: record.messageId }, failureReasons[record.messageId] ?? '');
        continue;
      }
      for (const e of decoded.message.events) {
        if (!this.options.takes(e)) continue;
        events.push(e);
        messagesOf.set(e.id, [...(messagesOf.get(e.id) ?? []), record.messageId]);
      }
    }

    const unsent = await this.options.queue.sendEach(events);
    const unsentCount = unsent.reduce((n, u) => n + u.ids.length, 0);
    this.unsent += unsentCount;
    this.forwarded += events.length - unsentCount;

    const messages = (ids: readonly string[]) => new Set(ids.flatMap((id) => messagesOf.get(id) ?? []));
    const unreachable = unsent.filter((u) => u.retryable);
    if (unreachable.length > 0) {
      // Every message not fully on SQS waits for the group's pause, a refused one too: it is counted
      // once SQS can be reached and refuses it again.
      const waiting = messages(unsent.flatMap((u) => u.ids));
      throw new DestinationUnavailableError(`SQS queue of ${name}: ${unreachable[0]?.reason ?? 'unreachable'}`, [
        ...waiting,
      ]);
    }
    for (const u of unsent) {
      for (const messageId of messages(u.ids)) {
        failureReasons[messageId] = `SQS refused ${u.ids.length} event(s) for ${name}: ${u.reason}`;
        log.error(
          { destination: name, messageId, reason: u.reason },
          `local message ${messageId} was not forwarded to the SQS queue of ${name}: ${u.reason}`,
        );
      }
    }
    return {
      batchItemFailures: Object.keys(failureReasons).map((itemIdentifier) => ({ itemIdentifier })),
      failureReasons,
    };
  }
}
