/**
 * The queue-triggered writer handler: one per destination. It takes a batch in the SQS event shape
 * (from SQS on Lambda, or from the durable local queue), decodes every message (fetching claim
 * checks), writes all their events to the destination in one go, and reports the messages whose
 * events were not written as partial batch failures (Powertools batch), so only those come back.
 * On a queue of the destination's own (`onlyTakenKinds`), a message holding an event of a kind the
 * destination does not take fails too. Idempotent by event id: events written before (a
 * redelivery) are not written again.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { ClaimCheckStore } from '../queue/claim-check.js';
import { decodeMessage, decodeRecord, type ClaimCheckMessage } from '../queue/codec.js';
import type { QueuedEvent } from '../queue/events.js';
import type { Destination } from './port.js';
import { RecentIds } from '../util/recent-ids.js';
import type { Log } from '../logging/log.js';


/** No refused events (the common case, without a new array per message). */
const NONE: readonly QueuedEvent[] = [];

export interface WriterHandlerDeps {
  destination: Destination;
  claimCheck: ClaimCheckStore | null;
  log: Log;
  /**
   * The queue carries only what this destination takes (a writer Lambda's SQS queue: the senders
   * route each event to the queues of the destinations that take it). An event of a kind the
   * destination does not take is then an error: logged at ERROR, and its message is a batch item
   * failure, so it comes again and, after maxReceiveCount, goes to the dead-letter queue instead of
   * being acknowledged unwritten. Off on the local queues, which give every event to every
   * destination (each takes its own kinds and leaves the rest to the others).
   */
  onlyTakenKinds?: boolean;
  /** How many written ids to remember for idempotency (default 100,000). */
  rememberIds?: number;
}

export type WriterHandler = (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse>;

/** A message whose body cannot be decoded fails (it goes to the dead-letter queue after its retries). */
export class UndecodableMessageError extends Error {
  override readonly name = 'UndecodableMessageError';
}

/** The events of a claim check's stored body (fetched, parsed and validated). */
async function fetchClaimed(store: ClaimCheckStore, ref: ClaimCheckMessage['claimCheck'], messageId: string): Promise<QueuedEvent[]> {
  const inner = decodeMessage(await store.get(ref));
  if (!inner.ok || !('events' in inner.message)) throw new UndecodableMessageError(`claim check of message ${messageId}: ${inner.ok ? 'holds another claim check' : inner.error}`);
  return inner.message.events;
}

export function makeWriterHandler(deps: WriterHandlerDeps): WriterHandler {
  const { destination, claimCheck, log } = deps;
  const written = new RecentIds(deps.rememberIds ?? 100_000);
  /** Batch processors not in use by a batch in flight. */
  const idle: BatchProcessor[] = [];

  /**
   * The events of a message: the ones a local queue handed off in memory, else the body parsed;
   * validated either way. Synchronous (no promise per message) unless it is a claim check, whose
   * body is fetched: then a promise of them.
   */
  const decode = (record: SQSRecord): QueuedEvent[] | Promise<QueuedEvent[]> => {
    const first = decodeRecord(record);
    if (!first.ok) throw new UndecodableMessageError(`message ${record.messageId}: ${first.error}`);
    if ('events' in first.message) return first.message.events;
    if (!claimCheck) throw new UndecodableMessageError(`message ${record.messageId} is a claim check, but no claim-check store is configured`);
    return fetchClaimed(claimCheck, first.message.claimCheck, record.messageId);
  };

  return async (event, context) => {
    const total = event.Records.length;
    const arrivals: QueuedEvent[][] = [];
    let arrived = 0;
    let release: () => void = () => undefined;
    const allArrived = new Promise<void>((resolve) => (release = resolve));
    const arrive = () => {
      arrived += 1;
      if (arrived === total) release();
    };
    const writeAll = async (): Promise<ReadonlySet<string>> => {
      const fresh = arrivals.flat().filter((e) => !written.has(e.id));
      if (fresh.length === 0) return new Set();
      const failed = await destination.write(fresh);
      for (const e of fresh) if (!failed.has(e.id)) written.add(e.id);
      return failed;
    };
    // One write of every event of the batch once all messages arrived: each record awaits this one promise.
    const outcome = allArrived.then(writeAll);
    // Not awaited until the records' handlers are: a failed write is each record's failure, not an unhandled rejection meanwhile.
    outcome.catch(() => undefined);

    // Powertools runs the record handlers in parallel: each decodes its message, then all wait for
    // one write of every event of the batch, then each fails if any of its events was not written.
    const recordHandler = async (record: SQSRecord): Promise<void> => {
      let events: QueuedEvent[];
      try {
        const decoded = decode(record);
        events = Array.isArray(decoded) ? decoded : await decoded;
      } catch (err) {
        arrive();
        log.error({ destination: destination.name, messageId: record.messageId, err }, 'queue message cannot be decoded');
        throw err;
      }
      const refused = deps.onlyTakenKinds ? events.filter((e) => !destination.takes(e)) : NONE;
      for (const e of refused) {
        log.error({ destination: destination.name, messageId: record.messageId, eventId: e.id, kind: e.kind }, `event ${e.id} of kind ${e.kind} reached ${destination.name}, which does not take that kind (check the sender's routing and Svc's config); its message fails and goes to the dead-letter queue after its retries`);
      }
      // The message's other events are written all the same: its redelivery skips them (idempotent by id).
      arrivals.push(refused.length === 0 ? events : events.filter((e) => destination.takes(e)));
      arrive();
      const failed = await outcome;
      const mine = failed.size === 0 ? 0 : events.filter((e) => failed.has(e.id)).length;
      if (refused.length > 0) throw new Error(`${refused.length} of ${events.length} event(s) of message ${record.messageId} are of a kind ${destination.name} does not take (${[...new Set(refused.map((e) => e.kind))].join(', ')})`);
      if (mine > 0) throw new Error(`${mine} of ${events.length} event(s) of message ${record.messageId} not written to ${destination.name}`);
    };

    // A processor holds one batch's state from register() to response(), and building one reads
    // the environment: each batch borrows an idle one (a new one only when all are busy: batches
    // in flight at once), never shares one with another batch in flight.
    const processor = idle.pop() ?? new BatchProcessor(EventType.SQS);
    try {
      return await processPartialResponse(event, recordHandler, processor, {
        ...(context ? { context } : {}),
        // A batch where every message failed is answered, not thrown: the local queue and SQS then
        // retry exactly the failed messages either way.
        throwOnFullBatchFailure: false,
      });
    } finally {
      idle.push(processor);
    }
  };
}
