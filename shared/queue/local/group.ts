/**
 * What a consumer group is to the queue: its name, its handler (a delivery in the SQS event shape,
 * a partial batch response out) and how it takes its batches; what it reports (GroupStats).
 */
import type { SQSBatchResponse } from 'aws-lambda';
import type { Throttle } from '../throttle.js';
import type { LocalDelivery } from './delivery.js';

/**
 * A consumer group's answer: SQS's partial batch response, plus (optionally) why each failed message
 * failed, which its dead letter records once it is out of attempts.
 */
export interface LocalBatchResponse extends SQSBatchResponse {
  failureReasons?: Readonly<Record<string, string>>;
}

/**
 * A consumer group's handler: one delivery in (the SQS event shape, and the events handed off in
 * memory with its records), its partial batch response out.
 */
export type SqsBatchHandler = (event: LocalDelivery) => Promise<LocalBatchResponse>;

/**
 * Thrown by a consumer group's handler when its destination cannot be reached now (the network, a
 * 5xx, throttling): not the messages' fault, so no receive is counted and nothing moves towards the
 * dead-letter folder. The whole group pauses with capped exponential backoff and then delivers
 * again, oldest first; the queue keeps taking events meanwhile, up to its capacity.
 */
export class DestinationUnavailableError extends Error {
  override readonly name = 'DestinationUnavailableError';
  /**
   * @param messageIds the messages of the batch not delivered (default: all of them); the others
   *   are acknowledged.
   */
  constructor(
    message: string,
    readonly messageIds?: readonly string[],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** One consumer of the queue (one per destination), and how it takes its batches. */
export interface ConsumerGroup {
  /** Also the name of the dead-letter folder and the ack log. */
  name: string;
  handler: SqsBatchHandler;
  /** Most messages per delivery (SQS event source `batchSize`). */
  batchSize: number;
  /** Longest wait for a fuller batch once a message is available (SQS `maximumBatchingWindow`). */
  batchWindowMs: number;
  throttle?: Throttle | null;
  /**
   * Deliver a batch again exactly as it was after a crash or stop left it unsettled: for
   * destinations that name what they write after the batch (files), so a redelivery replaces the
   * file instead of adding a second one. Costs one synced log line per delivery.
   */
  stableBatches?: boolean;
  /**
   * Deliveries of the group at a time (default 1; like the maximum concurrency of a Lambda's SQS
   * event source). With 2, the next batch is taken and built (decoded, turned into points and line
   * protocol) while the destination still writes the previous one, so neither waits for the other.
   * Each batch is still settled on its own. A group with `stableBatches` takes one at a time.
   */
  maxInFlight?: number;
  /**
   * Most events per delivery, over the messages it takes (a message packs several events: the audit
   * API's group commit). For destinations whose maxBatchSize counts rows (files): a batch stops
   * before the message that would take it past this (a message is never split, so one larger
   * message goes alone), and a batch this full is delivered without waiting for its window.
   */
  maxBatchEvents?: number;
}

/** One consumer group's state (`LocalEventQueue.stats`). */
export interface GroupStats {
  /** Messages not yet acknowledged by the group. */
  pending: number;
  /** Events in those messages. */
  pendingEvents: number;
  /** Messages delivered, and moved to the dead-letter folder, since the queue started. */
  delivered: number;
  deadLettered: number;
  /** Epoch ms since when its destination cannot be reached (DestinationUnavailableError), or null. */
  unavailableSince: number | null;
  /** Why, as the handler said, while unavailable. */
  unavailableReason: string | null;
  /** Epoch ms the oldest event it has pending was received (its `receivedAt`), or null when none is pending. */
  oldestPendingAt: number | null;
}
