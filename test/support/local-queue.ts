/**
 * The durable local queue in the tests of its parts: a queue in a fresh directory with short
 * retries, an audit event, and a consumer that records what it is given.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { decodeMessage } from '../../shared/queue/codec.js';
import type { QueuedEvent } from '../../shared/queue/events.js';
import { type ConsumerGroup, LocalEventQueue, type SqsBatchHandler } from '../../shared/queue/local/index.js';
import type { Journal } from '../../shared/queue/local/journal.js';
import { auditQueued } from './audit.js';
import { silentLog } from './log.js';

/** An audit event as the audit API queues it (its envelope through validateEnvelope), without a client version. */
export function event(): QueuedEvent {
  return { ...auditQueued(), meta: { clientIp: '127.0.0.1', clientVersion: null } };
}

/** The ids of the events in a delivery's bodies, in order. */
export function idsOf(e: SQSEvent): string[] {
  return e.Records.flatMap((r) => {
    const decoded = decodeMessage(r.body);
    return decoded.ok && 'events' in decoded.message ? decoded.message.events.map((x) => x.id) : [];
  });
}

/** A consumer that records event ids and fails the messages `fail` picks. */
export function recorder(fail: (e: SQSEvent, call: number) => string[] = () => []): {
  handler: SqsBatchHandler;
  seen: string[];
  batches: SQSEvent[];
} {
  const seen: string[] = [];
  const batches: SQSEvent[] = [];
  const handler = (e: SQSEvent): Promise<SQSBatchResponse> => {
    batches.push(e);
    const failing = new Set(fail(e, batches.length));
    for (const r of e.Records) if (!failing.has(r.messageId)) seen.push(...idsOf({ Records: [r] }));
    return Promise.resolve({ batchItemFailures: [...failing].map((itemIdentifier) => ({ itemIdentifier })) });
  };
  return { handler, seen, batches };
}

/** A queue in `directory` with room for 1,000 events, three attempts and retries after 10 to 40 ms; `over` replaces options. */
export function queue(
  directory: string,
  groups: ConsumerGroup[],
  over: Partial<ConstructorParameters<typeof LocalEventQueue>[0]> = {},
): LocalEventQueue {
  return new LocalEventQueue({
    directory,
    capacity: 1000,
    maxReceiveCount: 3,
    groups,
    log: silentLog,
    retryBaseMs: 10,
    retryCapMs: 40,
    ...over,
  });
}

/** A fresh queue directory. */
export const dir = (): string => mkdtempSync(join(tmpdir(), 'local-queue-'));

/** The path of the (first) segment file in `directory`. */
export function segmentOf(directory: string): string {
  const name = readdirSync(directory).find((f) => f.startsWith('segment-'));
  if (!name) throw new Error('no segment');
  return join(directory, name);
}

/** The ids of the events pending for `group` in the journal, in order. */
export function idsIn(journal: Journal, group = 'g'): string[] {
  return [...(journal.groups.get(group)?.pending.values() ?? [])].flatMap(({ record }) => {
    const decoded = decodeMessage(record.body);
    return decoded.ok && 'events' in decoded.message ? decoded.message.events.map((e) => e.id) : [];
  });
}
