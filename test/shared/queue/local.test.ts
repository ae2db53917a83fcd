/** The durable local queue: delivery in the SQS shape, partial failures, backoff, dead letters, restarts. */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { validateEnvelope } from '../../../shared/audit/envelope.js';
import { decodeMessage } from '../../../shared/queue/codec.js';
import type { QueuedEvent } from '../../../shared/queue/events.js';
import { DEAD_LETTER_DIR, LocalEventQueue, replayDeadLetters, type ConsumerGroup, type SqsBatchHandler } from '../../../shared/queue/local.js';
import { QueueFullError } from '../../../shared/queue/port.js';
import { envelope } from '../../support/audit.js';
import { silentLog } from '../../support/log.js';

const silent = silentLog;

function event(): QueuedEvent {
  const checked = validateEnvelope(envelope());
  if (!checked.ok) throw new Error('fixture envelope is invalid');
  return { kind: 'audit', id: checked.envelope.eventId, receivedAt: new Date().toISOString(), event: checked.envelope, meta: { clientIp: '127.0.0.1', clientVersion: null } };
}

function idsOf(e: SQSEvent): string[] {
  return e.Records.flatMap((r) => {
    const decoded = decodeMessage(r.body);
    return decoded.ok && 'events' in decoded.message ? decoded.message.events.map((x) => x.id) : [];
  });
}

/** A consumer that records event ids and fails the messages `fail` picks. */
function recorder(fail: (e: SQSEvent, call: number) => string[] = () => []): { handler: SqsBatchHandler; seen: string[]; batches: SQSEvent[] } {
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

function queue(directory: string, groups: ConsumerGroup[], over: Partial<ConstructorParameters<typeof LocalEventQueue>[0]> = {}): LocalEventQueue {
  return new LocalEventQueue({ directory, capacity: 1000, maxReceiveCount: 3, groups, log: silent, retryBaseMs: 10, retryCapMs: 40, ...over });
}

const dir = () => mkdtempSync(join(tmpdir(), 'local-queue-'));

describe('LocalEventQueue', () => {
  it('delivers batches in the SQS event shape to every group, each with its own acknowledgements', async () => {
    const a = recorder();
    const b = recorder();
    const q = queue(dir(), [
      { name: 'a', handler: a.handler, batchSize: 4, batchWindowMs: 0 },
      { name: 'b', handler: b.handler, batchSize: 10, batchWindowMs: 0 },
    ]);
    await q.start();
    const events = Array.from({ length: 9 }, event);
    for (const e of events) await q.send([e]);
    await expect.poll(() => [a.seen.length, b.seen.length]).toEqual([9, 9]);
    expect(a.seen).toEqual(events.map((e) => e.id));
    expect(Math.max(...a.batches.map((x) => x.Records.length))).toBeLessThanOrEqual(4);
    const record = a.batches[0]?.Records[0];
    expect(record).toMatchObject({ eventSource: 'aws:sqs', attributes: { ApproximateReceiveCount: '1' }, eventSourceARN: 'arn:aws:sqs:local:000000000000:a' });
    await q.stop();
  });

  it('waits up to the batching window for a fuller batch', async () => {
    const r = recorder();
    const q = queue(dir(), [{ name: 'files', handler: r.handler, batchSize: 5, batchWindowMs: 300 }]);
    await q.start();
    await q.send([event()]);
    await new Promise((res) => setTimeout(res, 100));
    await q.send([event()]);
    await expect.poll(() => r.seen.length, { timeout: 3000 }).toBe(2);
    expect(r.batches).toHaveLength(1);
    await q.stop();
  });

  it('redelivers only the failed messages, with a growing receive count', async () => {
    const r = recorder((e, call) => (call === 1 ? [e.Records[1]?.messageId ?? ''] : []));
    const q = queue(dir(), [{ name: 'g', handler: r.handler, batchSize: 10, batchWindowMs: 50 }]);
    await q.start();
    const events = [event(), event(), event()];
    await q.send([events[0] as QueuedEvent]);
    await q.send([events[1] as QueuedEvent]);
    await q.send([events[2] as QueuedEvent]);
    await expect.poll(() => r.seen.length).toBe(3);
    expect(r.batches).toHaveLength(2);
    expect(r.batches[1]?.Records.map((x) => x.attributes.ApproximateReceiveCount)).toEqual(['2']);
    expect(idsOf(r.batches[1] as SQSEvent)).toEqual([events[1]?.id]);
    await q.stop();
  });

  it('moves a message to the dead-letter folder after maxReceiveCount attempts, and replays it', async () => {
    const directory = dir();
    let failing = true;
    const r = recorder((e) => (failing ? e.Records.map((x) => x.messageId) : []));
    const q = queue(directory, [{ name: 'tsdb', handler: r.handler, batchSize: 10, batchWindowMs: 0 }]);
    await q.start();
    const e = event();
    await q.send([e]);
    await expect.poll(() => q.stats()['tsdb']?.deadLettered).toBe(1);
    expect(r.batches).toHaveLength(3);
    await q.stop();
    const dlq = join(directory, DEAD_LETTER_DIR, 'tsdb');
    const files = readdirSync(dlq);
    expect(files).toHaveLength(1);
    const letter = JSON.parse(readFileSync(join(dlq, files[0] ?? ''), 'utf8')) as { attempts: number; group: string; reason: string };
    expect(letter).toMatchObject({ attempts: 3, group: 'tsdb', reason: 'the handler reported the message as failed' });

    expect(await replayDeadLetters(directory, silent)).toEqual([{ group: 'tsdb', messages: 1, events: 1 }]);
    expect(readdirSync(dlq)).toEqual([]);
    failing = false;
    const again = queue(directory, [{ name: 'tsdb', handler: r.handler, batchSize: 10, batchWindowMs: 0 }]);
    await again.start();
    await expect.poll(() => r.seen).toEqual([e.id]);
    await again.stop();
  });

  it('treats a thrown handler as a failure of the whole batch', async () => {
    let calls = 0;
    const q = queue(dir(), [
      {
        name: 'g',
        batchSize: 10,
        batchWindowMs: 0,
        handler: () => {
          calls += 1;
          return calls === 1 ? Promise.reject(new Error('boom')) : Promise.resolve({ batchItemFailures: [] });
        },
      },
    ]);
    await q.start();
    await q.send([event()]);
    await expect.poll(() => q.stats()['g']?.delivered).toBe(1);
    expect(calls).toBe(2);
    await q.stop();
  });

  it('refuses events beyond its capacity with QueueFullError', async () => {
    const q = queue(dir(), [{ name: 'stuck', handler: () => new Promise(() => undefined), batchSize: 1, batchWindowMs: 0 }], { capacity: 3 });
    await q.start();
    await q.send([event(), event()]);
    await q.send([event()]);
    await expect(q.send([event()])).rejects.toBeInstanceOf(QueueFullError);
  });

  it('keeps undelivered events on disk across a restart', async () => {
    const directory = dir();
    // A writer that is down: every delivery fails, so the events are still pending when it stops.
    const down = recorder((e) => e.Records.map((r) => r.messageId));
    const blocked = queue(directory, [{ name: 'g', handler: down.handler, batchSize: 10, batchWindowMs: 0 }], { drainTimeoutMs: 50, maxReceiveCount: 100 });
    await blocked.start();
    const events = [event(), event()];
    await blocked.send(events);
    await blocked.stop();
    const r = recorder();
    const reopened = queue(directory, [{ name: 'g', handler: r.handler, batchSize: 10, batchWindowMs: 0 }]);
    await reopened.start();
    expect(reopened.pending).toBe(2);
    await expect.poll(() => r.seen).toEqual(events.map((e) => e.id));
    await reopened.stop();
    expect(readdirSync(directory).filter((f) => f.startsWith('segment-')).length).toBeLessThanOrEqual(1);
  });

  it('delivers what is pending when stopped, ignoring the batching window', async () => {
    const r = recorder();
    const q = queue(dir(), [{ name: 'g', handler: r.handler, batchSize: 100, batchWindowMs: 60_000 }]);
    await q.start();
    await q.send([event(), event()]);
    await q.stop();
    expect(r.seen).toHaveLength(2);
  });
});
