/**
 * The per-event JSON writer's consumer group counts its batch in events: the audit API packs the
 * requests of one event-loop turn into one queue message (10–30 events under load), and the writer
 * writes and fsyncs each event's file on the main thread, so a batch of 100 messages held up to
 * thousands of events decoded at once and blocked the event loop for as many synced writes. The
 * group built by jsonDestination, on the real durable queue, with the real writer behind it.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { makeWriterHandler } from '../../../../shared/destinations/handler.js';
import { jsonDestination } from '../../../../shared/destinations/json/build.js';
import { ErrorTracker } from '../../../../shared/errors/tracker.js';
import { decodeMessage } from '../../../../shared/queue/codec.js';
import { LocalEventQueue } from '../../../../shared/queue/local/index.js';
import { PointClock } from '../../../../shared/queue/point-clock.js';
import { auditQueued, captureLog } from '../../../support/audit.js';
import { silentLog } from '../../../support/log.js';
import { svcConfig } from '../../../support/udp.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Events in a delivery: the sum over its messages. */
function eventsIn(e: SQSEvent): number {
  let n = 0;
  for (const r of e.Records) {
    const decoded = decodeMessage(r.body);
    if (decoded.ok && 'events' in decoded.message) n += decoded.message.events.length;
  }
  return n;
}

describe('JSON object-data destination: its batch', () => {
  it('takes at most 100 events per delivery when each queue message packs 30', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'json-batch-'));
    dirs.push(dir);
    const out = join(dir, 'out');
    const config = svcConfig([
      '  auditEvents:',
      '    enable: true',
      '    destination:',
      '      enable: true',
      '      type: json',
      '      json:',
      '        objectdata:',
      '          enable: true',
      `          exportDirectory: ${out}`,
    ]);
    const { logger } = await captureLog('info');
    const built = jsonDestination({
      config,
      logger,
      errors: new ErrorTracker({ enabled: true, log: silentLog }),
      clock: new PointClock(),
    });
    if (!built) throw new Error('the JSON destination is configured');
    const writer = makeWriterHandler({ destination: built.destination, claimCheck: null, log: silentLog });
    const sizes: number[] = [];
    const queue = new LocalEventQueue({
      directory: join(dir, 'queue'),
      capacity: 10_000,
      maxReceiveCount: 3,
      groups: [
        {
          name: built.destination.name,
          batchSize: built.batchSize,
          batchWindowMs: built.batchWindowMs,
          ...(built.maxBatchEvents !== undefined ? { maxBatchEvents: built.maxBatchEvents } : {}),
          handler: (e) => {
            sizes.push(eventsIn(e));
            return writer(e);
          },
        },
      ],
      log: silentLog,
    });
    const withObjectData = () =>
      auditQueued({
        type: 'object.visibility.changed',
        payload: { context: { appId: 'e7af59a0-c243-480d-9571-08727551a66f' }, event: { objectData: { qId: 'obj1' } } },
      });
    // Ten messages of 30 events each, on disk before the consumer starts (its first scan sees them
    // all): written by a queue of the same directory without consumer groups.
    const early = new LocalEventQueue({
      directory: join(dir, 'queue'),
      capacity: 10_000,
      maxReceiveCount: 3,
      groups: [],
      log: silentLog,
    });
    await early.start();
    for (let m = 0; m < 10; m++) await early.send(Array.from({ length: 30 }, withObjectData));
    await early.stop();
    await queue.start();
    await expect.poll(() => sizes.reduce((a, b) => a + b, 0), { timeout: 15_000 }).toBe(300);
    await queue.stop();
    expect(Math.max(...sizes)).toBeLessThanOrEqual(100);
    expect(Math.max(...sizes)).toBe(90); // three messages: a fourth would pass 100
    expect(readdirSync(out).filter((f) => f.endsWith('.json'))).toHaveLength(300);
  });
});
