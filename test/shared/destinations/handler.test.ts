/** The writer handler: SQS-shaped batches in, partial batch failures out, idempotent by event id. */
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateEnvelope } from '../../../shared/audit/envelope.js';
import { makeWriterHandler } from '../../../shared/destinations/handler.js';
import type { Destination } from '../../../shared/destinations/port.js';
import { S3ClaimCheckStore } from '../../../shared/queue/claim-check.js';
import { encodeClaimCheck, encodePacked } from '../../../shared/queue/codec.js';
import type { QueuedEvent } from '../../../shared/queue/events.js';
import { FanOutEventQueue } from '../../../shared/queue/fanout.js';
import { type EventQueue, eventOf, QueueFullError } from '../../../shared/queue/port.js';
import { captureLog, envelope } from '../../support/audit.js';
import { type FauxqsHandle, startFauxqs } from '../../support/fauxqs.js';
import { sqsRecord } from '../../support/sqs-record.js';
import { EVENT_COUNT, pointsQueued } from '../platform/queued.js';

function queued(): QueuedEvent {
  const checked = validateEnvelope(envelope());
  if (!checked.ok) throw new Error('fixture envelope is invalid');
  return {
    kind: 'audit',
    id: checked.envelope.eventId,
    receivedAt: new Date().toISOString(),
    event: checked.envelope,
    meta: { clientIp: '127.0.0.1', clientVersion: null },
  };
}

const record = (messageId: string, body: string): SQSRecord => sqsRecord(messageId, body);

/** A destination that records calls and fails the ids it is told to. */
function destination(
  failIds: Set<string> = new Set(),
  kinds: readonly QueuedEvent['kind'][] = ['audit'],
): Destination & { calls: QueuedEvent[][] } {
  const calls: QueuedEvent[][] = [];
  return {
    name: 'recording',
    calls,
    takes: (e) => kinds.includes(e.kind),
    write: (events) => {
      calls.push([...events]);
      return Promise.resolve(new Set(events.filter((e) => failIds.has(e.id)).map((e) => e.id)));
    },
  };
}

describe('writer handler', () => {
  let faux: FauxqsHandle;
  beforeAll(async () => {
    faux = await startFauxqs();
    await faux.createBucket('claims');
  });
  afterAll(() => faux.stop());

  it('writes all events of a batch in one call and fails only the messages whose events failed', async () => {
    const [a, b, c, d] = [queued(), queued(), queued(), queued()] as [
      QueuedEvent,
      QueuedEvent,
      QueuedEvent,
      QueuedEvent,
    ];
    const dest = destination(new Set([c.id]));
    const { logger } = await captureLog();
    const handler = makeWriterHandler({ destination: dest, claimCheck: null, log: logger });
    const event: SQSEvent = {
      Records: [record('m1', encodePacked([a, b])), record('m2', encodePacked([c])), record('m3', encodePacked([d]))],
    };
    expect(await handler(event)).toEqual({ batchItemFailures: [{ itemIdentifier: 'm2' }] });
    expect(dest.calls).toHaveLength(1);
    expect(dest.calls[0]?.map((e) => e.id).sort()).toEqual([a.id, b.id, c.id, d.id].sort());
  });

  it('answers each of two batches in flight at once with its own failures, also on later batches', async () => {
    const [a, b, c, d] = [queued(), queued(), queued(), queued()] as [
      QueuedEvent,
      QueuedEvent,
      QueuedEvent,
      QueuedEvent,
    ];
    const calls: QueuedEvent[][] = [];
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // Both batches are in write() together before either is answered.
    const dest: Destination = {
      name: 'gated',
      takes: () => true,
      write: async (events) => {
        calls.push([...events]);
        if (calls.length === 2) open();
        await gate;
        return new Set(events.filter((e) => e.id === a.id || e.id === d.id).map((e) => e.id));
      },
    };
    const { logger } = await captureLog();
    const handler = makeWriterHandler({ destination: dest, claimCheck: null, log: logger });
    const first: SQSEvent = { Records: [record('m1', encodePacked([a])), record('m2', encodePacked([b]))] };
    const second: SQSEvent = { Records: [record('m3', encodePacked([c])), record('m4', encodePacked([d]))] };
    expect(await Promise.all([handler(first), handler(second)])).toEqual([
      { batchItemFailures: [{ itemIdentifier: 'm1' }] },
      { batchItemFailures: [{ itemIdentifier: 'm4' }] },
    ]);
    // A batch after them is answered on its own.
    const third: SQSEvent = { Records: [record('m5', encodePacked([queued()]))] };
    expect(await handler(third)).toEqual({ batchItemFailures: [] });
  });

  it('does not write an event again on redelivery, but retries the one that failed', async () => {
    const [a, b] = [queued(), queued()] as [QueuedEvent, QueuedEvent];
    const failing = new Set([b.id]);
    const dest = destination(failing);
    const { logger } = await captureLog();
    const handler = makeWriterHandler({ destination: dest, claimCheck: null, log: logger });
    const event: SQSEvent = { Records: [record('m1', encodePacked([a, b]))] };
    expect(await handler(event)).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    failing.clear();
    expect(await handler(event)).toEqual({ batchItemFailures: [] });
    expect(dest.calls.map((call) => call.map((e) => e.id))).toEqual([[a.id, b.id], [b.id]]);
  });

  it('fails an undecodable message alone and logs why', async () => {
    const a = queued();
    const dest = destination();
    const log = await captureLog();
    const handler = makeWriterHandler({ destination: dest, claimCheck: null, log: log.logger });
    const event: SQSEvent = { Records: [record('bad', '{"v":2,"events":[]}'), record('good', encodePacked([a]))] };
    expect(await handler(event)).toEqual({ batchItemFailures: [{ itemIdentifier: 'bad' }] });
    expect(dest.calls).toEqual([[a]]);
    expect(log.lines().some((l) => l['msg'] === 'queue message cannot be decoded' && l['messageId'] === 'bad')).toBe(
      true,
    );
  });

  it('on a local queue (every event to every destination) leaves a kind the destination does not take to the others', async () => {
    const [a, b] = [queued(), queued()] as [QueuedEvent, QueuedEvent];
    const [p, q] = [pointsQueued('EVENT_COUNTS', [EVENT_COUNT]), pointsQueued('EVENT_COUNTS', [EVENT_COUNT])];
    const dest = destination();
    const log = await captureLog();
    const handler = makeWriterHandler({ destination: dest, claimCheck: null, log: log.logger });
    expect(
      await handler({
        Records: [record('m1', encodePacked([a])), record('m2', encodePacked([p])), record('m3', encodePacked([b, q]))],
      }),
    ).toEqual({ batchItemFailures: [] });
    expect(log.lines().filter((l) => l['level'] === 'error')).toEqual([]);
  });

  it('on a queue of its own (a writer Lambda) fails the messages holding a kind the destination does not take, writes the rest and logs why', async () => {
    const [a, b] = [queued(), queued()] as [QueuedEvent, QueuedEvent];
    const [p, q] = [pointsQueued('EVENT_COUNTS', [EVENT_COUNT]), pointsQueued('EVENT_COUNTS', [EVENT_COUNT])];
    const dest = destination();
    const log = await captureLog();
    const handler = makeWriterHandler({ destination: dest, claimCheck: null, log: log.logger, onlyTakenKinds: true });
    const event: SQSEvent = {
      Records: [record('m1', encodePacked([a])), record('m2', encodePacked([p])), record('m3', encodePacked([b, q]))],
    };
    expect(await handler(event)).toEqual({ batchItemFailures: [{ itemIdentifier: 'm2' }, { itemIdentifier: 'm3' }] });
    expect(dest.calls.map((call) => call.map((e) => e.id).sort())).toEqual([[a.id, b.id].sort()]);
    const refused = log.lines().filter((l) => l['level'] === 'error');
    expect(refused.map((l) => [l['eventId'], l['kind'], l['destination'], l['messageId']])).toEqual([
      [p.id, 'points', 'recording', 'm2'],
      [q.id, 'points', 'recording', 'm3'],
    ]);
    // The redelivery of m3 does not write b again (idempotent by id) and fails again for q.
    expect(await handler({ Records: [record('m3', encodePacked([b, q]))] })).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm3' }],
    });
    expect(dest.calls).toHaveLength(1);
  });

  it('fails a claim check whose body cannot be fetched alone and logs why; the messages around it are written', async () => {
    const [a, b] = [queued(), queued()] as [QueuedEvent, QueuedEvent];
    const store = new S3ClaimCheckStore({ client: faux.s3, bucket: 'claims', prefix: 'claim-checks/' });
    const dest = destination();
    const log = await captureLog();
    const handler = makeWriterHandler({ destination: dest, claimCheck: store, log: log.logger });
    const gone = encodeClaimCheck({ bucket: 'claims', key: 'claim-checks/never-stored' }, 1);
    expect(
      await handler({
        Records: [record('m1', encodePacked([a])), record('gone', gone), record('m3', encodePacked([b]))],
      }),
    ).toEqual({ batchItemFailures: [{ itemIdentifier: 'gone' }] });
    expect(dest.calls.map((call) => call.map((e) => e.id))).toEqual([[a.id, b.id]]);
    expect(
      log
        .lines()
        .filter((l) => l['msg'] === 'queue message cannot be decoded')
        .map((l) => l['messageId']),
    ).toEqual(['gone']);
  });

  it('fails every message of the batch when the destination throws instead of answering, and logs it', async () => {
    const [a, b] = [queued(), queued()] as [QueuedEvent, QueuedEvent];
    const dest: Destination = {
      name: 'throwing',
      takes: () => true,
      write: () => Promise.reject(new Error('disk on fire')),
    };
    const log = await captureLog();
    const handler = makeWriterHandler({ destination: dest, claimCheck: null, log: log.logger });
    expect(await handler({ Records: [record('m1', encodePacked([a])), record('m2', encodePacked([b]))] })).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm1' }, { itemIdentifier: 'm2' }],
    });
    expect(
      log
        .lines()
        .filter((l) => l['level'] === 'error')
        .map((l) => [l['destination'], l['msg']]),
    ).toEqual([['throwing', 'writer throwing failed to write a batch']]);
  });

  it('fetches a claim-checked message from S3', async () => {
    const events = [queued(), queued()];
    const store = new S3ClaimCheckStore({ client: faux.s3, bucket: 'claims', prefix: 'claim-checks/' });
    const ref = await store.put(encodePacked(events));
    const dest = destination();
    const { logger } = await captureLog();
    const handler = makeWriterHandler({ destination: dest, claimCheck: store, log: logger });
    expect(await handler({ Records: [record('m1', encodeClaimCheck(ref, 2))] })).toEqual({ batchItemFailures: [] });
    expect(dest.calls[0]?.map((e) => e.id)).toEqual(events.map((e) => e.id));
  });
});

describe('FanOutEventQueue', () => {
  it('sends to every queue and fails when one of them fails', async () => {
    const got: string[][] = [[], []];
    const ok = (i: number): EventQueue => ({
      send: (events) => (got[i]?.push(...events.map((e) => eventOf(e).id)), Promise.resolve()),
    });
    const e = queued();
    await new FanOutEventQueue([ok(0), ok(1)]).send([e]);
    expect(got).toEqual([[e.id], [e.id]]);
    const full: EventQueue = { send: () => Promise.reject(new QueueFullError(1)) };
    await expect(new FanOutEventQueue([ok(0), full]).send([e])).rejects.toBeInstanceOf(QueueFullError);
  });
});
