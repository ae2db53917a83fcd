/** The durable local queue: delivery in the SQS shape, partial failures, backoff, dead letters, restarts. */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { validateEnvelope } from '../../../../shared/audit/envelope.js';
import { makeWriterHandler } from '../../../../shared/destinations/handler.js';
import type { Destination } from '../../../../shared/destinations/port.js';
import { decodeMessage } from '../../../../shared/queue/codec.js';
import type { QueuedEvent } from '../../../../shared/queue/events.js';
import {
  type ConsumerGroup,
  DEAD_LETTER_DIR,
  DestinationUnavailableError,
  LocalEventQueue,
  replayDeadLetters,
  type SqsBatchHandler,
} from '../../../../shared/queue/local/index.js';
import { QueueFullError } from '../../../../shared/queue/port.js';
import { auditQueued, envelope } from '../../../support/audit.js';
import { recordingLog, silentLog } from '../../../support/log.js';
import { spawnQueueHolder, startQueueHolder } from '../../../support/queue-holder.js';

const silent = silentLog;

function event(): QueuedEvent {
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

function idsOf(e: SQSEvent): string[] {
  return e.Records.flatMap((r) => {
    const decoded = decodeMessage(r.body);
    return decoded.ok && 'events' in decoded.message ? decoded.message.events.map((x) => x.id) : [];
  });
}

/** A consumer that records event ids and fails the messages `fail` picks. */
function recorder(fail: (e: SQSEvent, call: number) => string[] = () => []): {
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

function queue(
  directory: string,
  groups: ConsumerGroup[],
  over: Partial<ConstructorParameters<typeof LocalEventQueue>[0]> = {},
): LocalEventQueue {
  return new LocalEventQueue({
    directory,
    capacity: 1000,
    maxReceiveCount: 3,
    groups,
    log: silent,
    retryBaseMs: 10,
    retryCapMs: 40,
    ...over,
  });
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
    expect(record).toMatchObject({
      eventSource: 'aws:sqs',
      attributes: { ApproximateReceiveCount: '1' },
      eventSourceARN: 'arn:aws:sqs:local:000000000000:a',
    });
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

  it('with maxBatchEvents, counts the events a batch holds over its messages: a full batch goes without waiting for its window; a larger message goes alone', async () => {
    const r = recorder();
    // A long window and a message count that never binds: only the event count closes a batch.
    const q = queue(dir(), [
      { name: 'files', handler: r.handler, batchSize: 1000, batchWindowMs: 60_000, maxBatchEvents: 5 },
    ]);
    await q.start();
    for (let i = 0; i < 4; i++) await q.send([event(), event()]);
    await q.send(Array.from({ length: 7 }, event));
    await expect.poll(() => r.seen.length, { timeout: 5000 }).toBe(8 + 7);
    const sizes = r.batches.map((b) => idsOf(b).length);
    // Two messages of two (a third would make six), twice; then the seven-event message on its own.
    expect(sizes).toEqual([4, 4, 7]);
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

  it('a batch mixing a redelivered message and a new one: each record has its own id, receipt handle, body and receive count', async () => {
    const r = recorder((e, call) => (call === 1 ? [e.Records[0]?.messageId ?? ''] : []));
    const q = queue(dir(), [{ name: 'g', handler: r.handler, batchSize: 10, batchWindowMs: 200 }]);
    await q.start();
    const [first, second] = [event(), event()];
    await q.send([first]);
    await expect.poll(() => r.batches.length).toBe(1);
    // Sent while the failed message waits for its retry (10 ms) or its window: both go in the next batch.
    await q.send([second]);
    await expect.poll(() => r.seen.length).toBe(2);
    const records = r.batches[1]?.Records ?? [];
    expect(
      records.map((x) => [x.messageId, x.receiptHandle, x.attributes.ApproximateReceiveCount, x.eventSourceARN]),
    ).toEqual([
      ['1', 'g:1', '2', 'arn:aws:sqs:local:000000000000:g'],
      ['2', 'g:2', '1', 'arn:aws:sqs:local:000000000000:g'],
    ]);
    expect(records.map((x) => idsOf({ Records: [x] }))).toEqual([[first.id], [second.id]]);
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
    const letter = JSON.parse(readFileSync(join(dlq, files[0] ?? ''), 'utf8')) as {
      attempts: number;
      group: string;
      reason: string;
    };
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
    const q = queue(
      dir(),
      [{ name: 'stuck', handler: () => new Promise(() => undefined), batchSize: 1, batchWindowMs: 0 }],
      { capacity: 3 },
    );
    await q.start();
    await q.send([event(), event()]);
    await q.send([event()]);
    await expect(q.send([event()])).rejects.toBeInstanceOf(QueueFullError);
  });

  it('keeps undelivered events on disk across a restart', async () => {
    const directory = dir();
    // A writer that is down: every delivery fails, so the events are still pending when it stops.
    const down = recorder((e) => e.Records.map((r) => r.messageId));
    const blocked = queue(directory, [{ name: 'g', handler: down.handler, batchSize: 10, batchWindowMs: 0 }], {
      drainTimeoutMs: 50,
      maxReceiveCount: 100,
    });
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

  describe('a destination that cannot be reached (DestinationUnavailableError)', () => {
    /** A handler that throws DestinationUnavailableError while `down()`, and records every delivery. */
    function flaky(down: () => boolean) {
      const deliveries: { at: number; seqs: string[]; receiveCounts: string[]; reached: boolean }[] = [];
      const written: string[] = [];
      const handler: SqsBatchHandler = (e) => {
        deliveries.push({
          at: Date.now(),
          seqs: e.Records.map((r) => r.messageId),
          receiveCounts: e.Records.map((r) => r.attributes.ApproximateReceiveCount),
          reached: !down(),
        });
        if (down()) return Promise.reject(new DestinationUnavailableError('connect ECONNREFUSED 127.0.0.1:9'));
        written.push(...idsOf(e));
        return Promise.resolve({ batchItemFailures: [] });
      };
      return { handler, deliveries, written };
    }

    it('pauses the whole group with capped exponential backoff, counts no receive, and resumes oldest first', async () => {
      let down = true;
      const f = flaky(() => down);
      const { log, lines } = recordingLog();
      // maxReceiveCount 2: were an unreachable try counted, the messages would be dead letters after two.
      const q = queue(dir(), [{ name: 'tsdb', handler: f.handler, batchSize: 2, batchWindowMs: 0 }], {
        log,
        maxReceiveCount: 2,
        unavailableBaseMs: 20,
        unavailableCapMs: 80,
      });
      await q.start();
      const events = Array.from({ length: 5 }, event);
      for (const e of events) await q.send([e]);
      await expect.poll(() => f.deliveries.length, { timeout: 5000 }).toBeGreaterThanOrEqual(6);
      const stats = q.stats()['tsdb'];
      expect(stats?.unavailableSince).toBeTypeOf('number');
      expect(stats?.unavailableReason).toBe('connect ECONNREFUSED 127.0.0.1:9');
      expect(stats?.pendingEvents).toBe(5);
      expect(stats?.oldestPendingAt).toBe(Date.parse(events[0]?.receivedAt ?? ''));
      down = false;
      await expect.poll(() => f.written.length, { timeout: 5000 }).toBe(5);

      expect(f.written).toEqual(events.map((e) => e.id));
      // Written is not yet acknowledged: the ack is settled (on disk) just after the write returns.
      await expect
        .poll(() => q.stats()['tsdb'], { timeout: 5000 })
        .toMatchObject({
          deadLettered: 0,
          pending: 0,
          unavailableSince: null,
          unavailableReason: null,
          oldestPendingAt: null,
        });
      // Every try while down, and the first after, began with the oldest message, each time a first receive.
      const whileDown = f.deliveries.filter((d) => !d.reached);
      expect(whileDown.length).toBeGreaterThanOrEqual(6);
      for (const d of [...whileDown, f.deliveries[whileDown.length]]) {
        expect(d?.seqs[0]).toBe('1');
        expect(new Set(d?.receiveCounts)).toEqual(new Set(['1']));
      }
      // The pauses between tries: 20, 40, 80, then capped at 80 ms (lower bounds: timers never fire early).
      const gaps = whileDown.slice(1).map((d, i) => d.at - (whileDown[i]?.at ?? 0));
      [20, 40, 80, 80, 80].forEach((least, i) => {
        if (gaps[i] !== undefined) expect(gaps[i]).toBeGreaterThanOrEqual(least - 2);
      });
      expect(Math.max(...gaps)).toBeLessThan(1000);
      // One WARN when it became unreachable, one INFO when it was back: not a line per try.
      expect(lines.filter((l) => l.level === 'warn' || l.level === 'error').map((l) => l.msg)).toEqual([
        expect.stringMatching(
          /^destination tsdb is unreachable \(connect ECONNREFUSED 127\.0\.0\.1:9\); its events wait in the local queue \(\d pending, capacity 1000\) and are tried again with backoff up to 80 ms$/,
        ),
      ]);
      expect(lines.filter((l) => l.level === 'info' && l.msg.includes('reachable again'))).toEqual([
        expect.objectContaining({
          msg: expect.stringMatching(/^destination tsdb is reachable again after [\d.]+ s; 5 event\(s\) were waiting/),
        }),
      ]);
      await q.stop();
    });

    it('keeps taking events while paused, up to its capacity, then refuses them (back-pressure)', async () => {
      const f = flaky(() => true);
      const q = queue(dir(), [{ name: 'tsdb', handler: f.handler, batchSize: 10, batchWindowMs: 0 }], {
        capacity: 4,
        unavailableBaseMs: 20,
        unavailableCapMs: 40,
      });
      await q.start();
      for (let i = 0; i < 4; i++) await q.send([event()]);
      await expect.poll(() => f.deliveries.length).toBeGreaterThanOrEqual(3);
      await expect(q.send([event()])).rejects.toBeInstanceOf(QueueFullError);
      expect(q.stats()['tsdb']).toMatchObject({ pendingEvents: 4, deadLettered: 0 });
      await q.stop();
    });

    it('acknowledges the messages of a batch the error does not name', async () => {
      let calls = 0;
      const seen: string[][] = [];
      const handler: SqsBatchHandler = (e) => {
        calls += 1;
        seen.push(e.Records.map((r) => r.messageId));
        const second = e.Records[1]?.messageId;
        return calls === 1 && second
          ? Promise.reject(new DestinationUnavailableError('throttled', [second]))
          : Promise.resolve({ batchItemFailures: [] });
      };
      const q = queue(dir(), [{ name: 'g', handler, batchSize: 10, batchWindowMs: 50 }], { unavailableBaseMs: 20 });
      await q.start();
      await q.send([event()]);
      await q.send([event()]);
      await expect.poll(() => q.stats()['g']?.delivered).toBe(2);
      expect(seen).toEqual([['1', '2'], ['2']]);
      await q.stop();
    });

    it('stops at once while paused, keeping what is pending on disk for the next start', async () => {
      const directory = dir();
      const f = flaky(() => true);
      const q = queue(directory, [{ name: 'tsdb', handler: f.handler, batchSize: 10, batchWindowMs: 0 }], {
        unavailableBaseMs: 60_000,
        drainTimeoutMs: 30_000,
      });
      await q.start();
      await q.send([event(), event()]);
      await expect.poll(() => f.deliveries.length).toBe(1);
      const stopped = Date.now();
      await q.stop();
      expect(Date.now() - stopped).toBeLessThan(5_000);
      const r = recorder();
      const reopened = queue(directory, [{ name: 'tsdb', handler: r.handler, batchSize: 10, batchWindowMs: 0 }]);
      await reopened.start();
      await expect.poll(() => r.seen.length).toBe(2);
      await reopened.stop();
    });
  });

  it('delivers up to maxInFlight batches of a group at a time, each settled on its own; one at a time by default and for stable batches', async () => {
    for (const [maxInFlight, stableBatches, expected] of [
      [2, false, 2],
      [undefined, false, 1],
      [2, true, 1],
    ] as const) {
      const held: { e: SQSEvent; release: () => void }[] = [];
      const handler: SqsBatchHandler = (e) =>
        new Promise((resolve) => {
          held.push({ e, release: () => resolve({ batchItemFailures: [] }) });
        });
      const q = queue(dir(), [
        { name: 'g', handler, batchSize: 2, batchWindowMs: 0, stableBatches, ...(maxInFlight ? { maxInFlight } : {}) },
      ]);
      await q.start();
      for (let i = 0; i < 6; i++) await q.send([event()]);
      await expect.poll(() => held.length).toBe(expected);
      await new Promise((resolve) => setTimeout(resolve, 100));
      // No more than that while they are being written.
      expect(held.length).toBe(expected);
      // The second batch settles before the first: only its messages are acknowledged.
      held.at(-1)?.release();
      await expect.poll(() => q.stats()['g']?.delivered).toBeGreaterThanOrEqual(1);
      await expect.poll(() => held.length).toBe(expected + 1);
      // No message is in two batches at once.
      const ids = held.flatMap((h) => h.e.Records.map((r) => r.messageId));
      expect(new Set(ids).size).toBe(ids.length);
      for (let i = 0; i < 10 && q.stats()['g']?.delivered !== 6; i++) {
        for (const h of held) h.release();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await expect.poll(() => q.stats()['g']).toMatchObject({ delivered: 6, pending: 0 });
      await q.stop();
    }
  });

  describe('in-memory hand-off: a consumer in this process gets the sent events without parsing them back', () => {
    /** The real writer handler over a destination that records the events it is given, and the handler's answers. */
    function writer(): { handler: SqsBatchHandler; written: QueuedEvent[]; failures: string[][]; errors: string[] } {
      const written: QueuedEvent[] = [];
      const failures: string[][] = [];
      const errors: string[] = [];
      const destination: Destination = {
        name: 'recording',
        takes: () => true,
        write: (events) => {
          written.push(...events);
          return Promise.resolve(new Set<string>());
        },
      };
      const say = (obj: unknown): void => {
        const err = typeof obj === 'object' && obj !== null && 'err' in obj ? obj.err : undefined;
        if (err instanceof Error) errors.push(err.message.replace(/^message \d+: /, ''));
      };
      const log = { ...silent, error: say };
      const inner = makeWriterHandler({ destination, claimCheck: null, log });
      const handler: SqsBatchHandler = async (e) => {
        const response = await inner(e);
        failures.push(response.batchItemFailures.map((f) => f.itemIdentifier));
        return response;
      };
      return { handler, written, failures, errors };
    }

    /** A group whose destination is down: it keeps everything pending on disk for the next start. */
    const down: SqsBatchHandler = () => Promise.reject(new DestinationUnavailableError('down'));

    it('hands the sent objects over, and after a restart parses equal events from disk', async () => {
      const directory = dir();
      const live = writer();
      const q = queue(
        directory,
        [
          { name: 'live', handler: live.handler, batchSize: 100, batchWindowMs: 0 },
          { name: 'later', handler: down, batchSize: 100, batchWindowMs: 0 },
        ],
        { unavailableBaseMs: 60_000 },
      );
      await q.start();
      const single = Array.from({ length: 4 }, () => auditQueued());
      const packed = Array.from({ length: 3 }, () => auditQueued());
      for (const e of single) await q.send([e]);
      await q.send(packed); // several events in one message
      const sent = [...single, ...packed];
      await expect.poll(() => live.written.length).toBe(sent.length);
      // The very objects sent: nothing was parsed.
      for (const [i, e] of sent.entries()) expect(live.written[i]).toBe(e);
      await q.stop();

      const later = writer();
      const reopened = queue(directory, [{ name: 'later', handler: later.handler, batchSize: 100, batchWindowMs: 0 }]);
      await reopened.start();
      await expect.poll(() => later.written.length).toBe(sent.length);
      // Read back from disk: new objects, equal to what the live consumer was handed.
      for (const [i, e] of sent.entries()) expect(later.written[i]).not.toBe(e);
      expect(later.written).toStrictEqual(JSON.parse(JSON.stringify(live.written)));
      expect(later.written).toEqual(sent);
      await reopened.stop();
    });

    /**
     * A started queue with two groups: `live` writes what it is handed (an invalid event fails its
     * message at once, maxReceiveCount 1), `later` is down, so the messages stay on disk for a
     * restart to read back.
     */
    async function liveAndLater() {
      const directory = dir();
      const live = writer();
      const q = queue(
        directory,
        [
          { name: 'live', handler: live.handler, batchSize: 100, batchWindowMs: 0 },
          { name: 'later', handler: down, batchSize: 100, batchWindowMs: 0 },
        ],
        { unavailableBaseMs: 60_000, maxReceiveCount: 1 },
      );
      await q.start();
      return { directory, live, q };
    }

    it('validates handed-off events as it validates parsed ones: an invalid event fails its message either way', async () => {
      const { directory, live, q } = await liveAndLater();
      const good = auditQueued();
      // Well-typed, but not what the queue's schema admits (receivedAt is not an RFC 3339 time).
      const bad: QueuedEvent = { ...auditQueued(), receivedAt: 'yesterday' };
      await q.send([good]);
      await q.send([bad]);
      await expect.poll(() => live.failures.flat().length).toBe(1);
      expect(live.written).toEqual([good]);
      expect(live.errors).toEqual([expect.stringContaining('events[0] (audit id') as unknown as string]);
      expect(live.errors[0]).toContain('/events/0/receivedAt: must be an RFC 3339 date-time with a zone');
      await q.stop();

      const later = writer();
      const reopened = queue(directory, [{ name: 'later', handler: later.handler, batchSize: 100, batchWindowMs: 0 }], {
        maxReceiveCount: 1,
      });
      await reopened.start();
      await expect.poll(() => later.failures.flat().length).toBe(1);
      expect(later.written).toEqual([good]);
      // The same verdict, word for word, from the parsed body.
      expect(later.errors).toEqual(live.errors);
      await reopened.stop();
    });

    it('checks a handed-off audit envelope again only when validateEnvelope did not pass that very object', async () => {
      const { directory, live, q } = await liveAndLater();
      // Never through validateEnvelope (a copy of a checked one, then broken): checked in full in memory.
      const unchecked = auditQueued();
      unchecked.event = { ...unchecked.event, timestamp: 'soon' };
      // Through validateEnvelope, then changed against port.ts's contract: the hand-off does not
      // check the envelope again, so it is written; parsed back after a restart, it is refused.
      const vouched = auditQueued();
      Object.assign(vouched.event, { timestamp: 'soon' });
      await q.send([unchecked]);
      await q.send([vouched]);
      await expect.poll(() => live.failures.flat().length + live.written.length).toBe(2);
      expect(live.written).toEqual([vouched]);
      expect(live.errors).toEqual([
        expect.stringContaining(
          '/events/0/event/timestamp: must be an RFC 3339 date-time with a zone',
        ) as unknown as string,
      ]);
      await q.stop();

      const later = writer();
      const reopened = queue(directory, [{ name: 'later', handler: later.handler, batchSize: 100, batchWindowMs: 0 }], {
        maxReceiveCount: 1,
      });
      await reopened.start();
      await expect.poll(() => later.failures.flat().length).toBe(2);
      expect(later.written).toEqual([]);
      await reopened.stop();
    });

    it('loses nothing when the process is killed after the write, while a consumer holds the batch', async () => {
      const directory = dir();
      const events = Array.from({ length: 25 }, () => auditQueued());
      // Its consumer takes the events handed off in memory and never settles them.
      const holder = await startQueueHolder({ directory, groups: [{ name: 'g' }], events });
      holder.child.kill('SIGKILL');
      await holder.exited;
      const after = writer();
      const reopened = queue(directory, [{ name: 'g', handler: after.handler, batchSize: 100, batchWindowMs: 0 }]);
      await reopened.start();
      await expect.poll(() => after.written.length).toBe(events.length);
      expect(after.written).toEqual(events);
      expect(after.failures.flat()).toEqual([]);
      await reopened.stop();
    });

    it('does not deliver again what was acknowledged just before the process was killed (the ack written, not yet synced)', async () => {
      const directory = dir();
      const events = Array.from({ length: 25 }, () => auditQueued());
      const { exited, output } = spawnQueueHolder({
        directory,
        groups: [{ name: 'g', batchSize: events.length, batchWindowMs: 60_000, crashAfterSettle: true }],
        events,
      });
      expect(await exited, output()).toBeNull();
      const after = writer();
      const reopened = queue(directory, [{ name: 'g', handler: after.handler, batchSize: 100, batchWindowMs: 0 }]);
      await reopened.start();
      expect(reopened.stats()['g']?.pending).toBe(0);
      // And nothing delivered ahead of a new event (oldest first).
      const next = auditQueued();
      await reopened.send([next]);
      await expect.poll(() => after.written.length).toBe(1);
      expect(after.written).toEqual([next]);
      await reopened.stop();
    });

    it('loses nothing when the process is killed after its consumer took the batch in memory and before the outcome is on disk', async () => {
      const directory = dir();
      const events = Array.from({ length: 25 }, () => auditQueued());
      // One full batch, delivered only once every send resolved (so every event is durable), then SIGKILL before settling.
      const { exited } = spawnQueueHolder({
        directory,
        groups: [{ name: 'g', batchSize: events.length, batchWindowMs: 60_000, crashBeforeSettle: true }],
        events,
      });
      expect(await exited).toBeNull();
      const after = writer();
      const reopened = queue(directory, [{ name: 'g', handler: after.handler, batchSize: 100, batchWindowMs: 0 }]);
      await reopened.start();
      await expect.poll(() => after.written.length).toBe(events.length);
      expect(after.written).toEqual(events);
      await reopened.stop();
    });
  });
});
