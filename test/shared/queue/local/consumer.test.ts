/** A consumer group's delivery loop: batches, windows, partial failures, backoff, an unreachable destination, deliveries at a time. */
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { QueuedEvent } from '../../../../shared/queue/events.js';
import { DestinationUnavailableError, type SqsBatchHandler } from '../../../../shared/queue/local/index.js';
import { QueueFullError } from '../../../../shared/queue/port.js';
import { dir, event, idsOf, queue, recorder } from '../../../support/local-queue.js';
import { recordingLog } from '../../../support/log.js';

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
          /^destination tsdb is not taking events \(connect ECONNREFUSED 127\.0\.0\.1:9\); its events wait in the local queue \(\d pending, capacity 1000\) and are tried again with backoff up to 80 ms$/,
        ),
      ]);
      expect(lines.filter((l) => l.level === 'info' && l.msg.includes('takes events again'))).toEqual([
        expect.objectContaining({
          msg: expect.stringMatching(/^destination tsdb takes events again after [\d.]+ s; 5 event\(s\) were waiting/),
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
});
