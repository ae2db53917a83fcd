/**
 * The queue-triggered writer handler: one per destination. It takes a batch in the SQS event shape
 * (from SQS on Lambda, or from the durable local queue), decodes every message (fetching claim
 * checks), writes all their events to the destination in one go, and reports the messages whose
 * events were not written as partial batch failures (SQS's batch response), so only those come back.
 * On a queue of the destination's own (`onlyTakenKinds`), a message holding an event of a kind the
 * destination does not take fails too. Idempotent by event id: events written before (a
 * redelivery) are not written again.
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Log } from '../logging/log.js';
import type { ClaimCheckStore } from '../queue/claim-check.js';
import { type ClaimCheckMessage, decodeMessage, decodeRecord } from '../queue/codec.js';
import type { QueuedEvent } from '../queue/events.js';
import { DestinationUnavailableError } from '../queue/local/group.js';
import type { HandedOff } from '../queue/local/index.js';
import { RecentIds } from '../util/recent-ids.js';
import type { Destination } from './port.js';

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

/**
 * A writer handler: a batch in the SQS event shape in, its partial batch response out. From the
 * local queue the batch also holds the events handed off in memory with its records (HandedOff);
 * from SQS on Lambda it is a plain SQSEvent, and every body is parsed.
 */
export type WriterHandler = (event: SQSEvent & Partial<HandedOff>, context?: Context) => Promise<SQSBatchResponse>;

/** A message whose body cannot be decoded fails (it goes to the dead-letter queue after its retries). */
export class UndecodableMessageError extends Error {
  override readonly name = 'UndecodableMessageError';
}

/** The events of a claim check's stored body (fetched, parsed and validated). */
async function fetchClaimed(
  store: ClaimCheckStore,
  ref: ClaimCheckMessage['claimCheck'],
  messageId: string,
): Promise<QueuedEvent[]> {
  const inner = decodeMessage(await store.get(ref));
  if (!inner.ok || !('events' in inner.message))
    throw new UndecodableMessageError(
      `claim check of message ${messageId}: ${inner.ok ? 'holds another claim check' : inner.error}`,
    );
  return inner.message.events;
}

export function makeWriterHandler(deps: WriterHandlerDeps): WriterHandler {
  const { destination, claimCheck, log } = deps;
  const written = new RecentIds(deps.rememberIds ?? 100_000);

  /**
   * The events of a message: `handedOff`, the ones a local queue handed off in memory with it, else
   * the body parsed; validated either way. Synchronous (no promise per message) unless it is a claim
   * check, whose body is fetched: then a promise of them.
   */
  const decode = (
    record: SQSRecord,
    handedOff: readonly QueuedEvent[] | undefined,
  ): QueuedEvent[] | Promise<QueuedEvent[]> => {
    const first = decodeRecord(record, handedOff);
    if (!first.ok) throw new UndecodableMessageError(`message ${record.messageId}: ${first.error}`);
    if ('events' in first.message) return first.message.events;
    if (!claimCheck)
      throw new UndecodableMessageError(
        `message ${record.messageId} is a claim check, but no claim-check store is configured`,
      );
    return fetchClaimed(claimCheck, first.message.claimCheck, record.messageId);
  };

  /** A record's events, or why it has none (a failure to decode or fetch, logged). */
  type Arrival = { events: QueuedEvent[]; error?: undefined } | { events?: undefined; error: unknown };
  const undecodable = (record: SQSRecord, err: unknown): Arrival => {
    log.error({ destination: destination.name, messageId: record.messageId, err }, 'queue message cannot be decoded');
    return { error: err };
  };

  // One pass over the batch, no promise per record (claim checks aside): decode every message,
  // write all their events at once, then name the messages with an event not written. Powertools'
  // batch processor ran a promise-returning handler per record, each awaiting the write: more CPU
  // per event, and a thousand suspended handlers per batch held through the destination's write
  // (the tsdb's answer), copied by young-generation collections and promoted (bench/pipeline.mjs's
  // "queue → no-op" and "queue → tsdb" stages run this handler). The answer is the same: the
  // partial batch response of the messages that failed, none thrown.
  return async (event) => {
    const records = event.Records;
    const handedOff = event.handedOff;
    const arrived: Arrival[] = [];
    const fetching: Promise<void>[] = [];
    for (const record of records) {
      const index = arrived.length;
      try {
        const decoded = decode(record, handedOff?.[index]);
        if (Array.isArray(decoded)) {
          arrived.push({ events: decoded });
          continue;
        }
        arrived.push({ error: 'its claim check is being fetched' });
        fetching.push(
          decoded.then(
            (events) => {
              arrived[index] = { events };
            },
            (err: unknown) => {
              arrived[index] = undecodable(record, err);
            },
          ),
        );
      } catch (err) {
        arrived.push(undecodable(record, err));
      }
    }
    if (fetching.length > 0) await Promise.all(fetching);

    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    const refusedOf: (readonly QueuedEvent[])[] = [];
    const fresh: QueuedEvent[] = [];
    for (let index = 0; index < arrived.length; index++) {
      const events = arrived[index]?.events;
      if (events === undefined) continue;
      const refused = deps.onlyTakenKinds ? events.filter((e) => !destination.takes(e)) : NONE;
      refusedOf[index] = refused;
      for (const e of refused) {
        log.error(
          { destination: destination.name, messageId: records[index]?.messageId, eventId: e.id, kind: e.kind },
          `event ${e.id} of kind ${e.kind} reached ${destination.name}, which does not take that kind (check the sender's routing and Svc's config); its message fails and goes to the dead-letter queue after its retries`,
        );
      }
      // The message's other events are written all the same: its redelivery skips them (idempotent by id).
      for (const e of events) if ((refused.length === 0 || destination.takes(e)) && !written.has(e.id)) fresh.push(e);
    }

    let failed: ReadonlySet<string> | null;
    try {
      failed = fresh.length === 0 ? new Set() : await destination.write(fresh);
      for (const e of fresh) if (!failed.has(e.id)) written.add(e.id);
    } catch (err) {
      // The destination cannot be reached now: the local queue pauses the group and counts no attempt.
      if (err instanceof DestinationUnavailableError) throw err;
      // The write failed as a whole: every message fails (and comes again).
      log.error({ destination: destination.name, err }, `writer ${destination.name} failed to write a batch`);
      failed = null;
    }

    for (let index = 0; index < arrived.length; index++) {
      const record = records[index];
      if (record === undefined) continue;
      const events = arrived[index]?.events;
      const ok =
        events !== undefined &&
        (refusedOf[index]?.length ?? 0) === 0 &&
        failed !== null &&
        (failed.size === 0 || !events.some((e) => failed.has(e.id)));
      if (!ok) batchItemFailures.push({ itemIdentifier: record.messageId });
    }
    return { batchItemFailures };
  };
}
