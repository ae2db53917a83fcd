/** A delivery's SQS shape, and the events handed off with it in memory. */
import { describe, expect, it } from 'vitest';
import { makeWriterHandler } from '../../../../shared/destinations/handler.js';
import type { Destination } from '../../../../shared/destinations/port.js';
import type { QueuedEvent } from '../../../../shared/queue/events.js';
import { DestinationUnavailableError, type SqsBatchHandler } from '../../../../shared/queue/local/index.js';
import { auditQueued } from '../../../support/audit.js';
import { dir, event, idsOf, queue, recorder } from '../../../support/local-queue.js';
import { silentLog } from '../../../support/log.js';
import { spawnQueueHolder, startQueueHolder } from '../../../support/queue-holder.js';

const silent = silentLog;

describe('LocalEventQueue', () => {
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

    /**
     * A started queue with two groups: `live` writes what it is handed (an invalid event fails its
     * message at once with maxReceiveCount 1), `later` is down, so the messages stay on disk for a
     * restart to read back.
     */
    async function liveAndLater(maxReceiveCount = 1) {
      const directory = dir();
      const live = writer();
      const q = queue(
        directory,
        [
          { name: 'live', handler: live.handler, batchSize: 100, batchWindowMs: 0 },
          { name: 'later', handler: down, batchSize: 100, batchWindowMs: 0 },
        ],
        { unavailableBaseMs: 60_000, maxReceiveCount },
      );
      await q.start();
      return { directory, live, q };
    }

    /** The queue of `liveAndLater` started again with its `later` group alone, now writing. */
    async function restartLater(directory: string, maxReceiveCount = 1) {
      const later = writer();
      const reopened = queue(directory, [{ name: 'later', handler: later.handler, batchSize: 100, batchWindowMs: 0 }], {
        maxReceiveCount,
      });
      await reopened.start();
      return { later, reopened };
    }

    it('hands the sent objects over, and after a restart parses equal events from disk', async () => {
      // The queue helper's three attempts (no message fails here).
      const { directory, live, q } = await liveAndLater(3);
      const single = Array.from({ length: 4 }, () => auditQueued());
      const packed = Array.from({ length: 3 }, () => auditQueued());
      for (const e of single) await q.send([e]);
      await q.send(packed); // several events in one message
      const sent = [...single, ...packed];
      await expect.poll(() => live.written.length).toBe(sent.length);
      // The very objects sent: nothing was parsed.
      for (const [i, e] of sent.entries()) expect(live.written[i]).toBe(e);
      await q.stop();

      const { later, reopened } = await restartLater(directory, 3);
      await expect.poll(() => later.written.length).toBe(sent.length);
      // Read back from disk: new objects, equal to what the live consumer was handed.
      for (const [i, e] of sent.entries()) expect(later.written[i]).not.toBe(e);
      expect(later.written).toStrictEqual(JSON.parse(JSON.stringify(live.written)));
      expect(later.written).toEqual(sent);
      await reopened.stop();
    });

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

      const { later, reopened } = await restartLater(directory);
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

      const { later, reopened } = await restartLater(directory);
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
