/** The durable local queue as a whole: capacity, what a restart keeps, what a stop delivers. */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { QueueFullError } from '../../../../shared/queue/port.js';
import { dir, event, queue, recorder } from '../../../support/local-queue.js';

describe('LocalEventQueue', () => {
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
});
