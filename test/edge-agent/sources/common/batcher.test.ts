/**
 * The event batcher between the handlers and the durable queue: batching, backpressure, retry of a
 * refused batch, and what happens at stop. The first test runs on the real durable queue; the
 * others use a controllable stand-in of the EventQueue port to make the queue slow or refuse.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventBatcher } from '../../../../edge-agent/sources/common/batcher.js';
import { decodeMessage, isClaimCheck } from '../../../../shared/queue/codec.js';
import type { PointsQueuedEvent, QueuedEvent } from '../../../../shared/queue/events.js';
import { LocalEventQueue } from '../../../../shared/queue/local/index.js';
import { type EncodedEventQueue, type EncodedMessage, QueueFullError } from '../../../../shared/queue/port.js';
import { captureLog } from '../../../support/audit.js';
import { eventually } from '../../../support/udp.js';

const event = (i: number): PointsQueuedEvent => ({
  kind: 'points',
  id: `e${i}`,
  receivedAt: '2026-11-22T10:00:00.000Z',
  module: 'TEST',
  points: [{ measurement: 'm', tags: { t: 'x' }, fields: { n: { type: 'int', value: i } }, timeNs: String(i) }],
});

/** A queue whose sends wait for `release()` and may refuse; it decodes each message with the queue codec. */
class GatedQueue implements EncodedEventQueue {
  readonly sends: QueuedEvent[][] = [];
  readonly bodies: string[] = [];
  /** performance.now() at each send's start. */
  readonly startedAt: number[] = [];
  refuse = false;
  maxMessageBytes = 1_048_576;
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => undefined;
  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }
  release(): void {
    this.open();
  }
  async sendEncoded(message: EncodedMessage): Promise<void> {
    this.startedAt.push(performance.now());
    await this.gate;
    if (this.refuse) throw new QueueFullError(1);
    const decoded = decodeMessage(message.body);
    if (!decoded.ok || isClaimCheck(decoded.message))
      throw new Error(`not a packed message: ${message.body.slice(0, 200)}`);
    expect(decoded.message.events).toHaveLength(message.events);
    this.sends.push(decoded.message.events);
    this.bodies.push(message.body);
  }
}

describe('EventBatcher', () => {
  it('writes what concurrent handlers hand it to the durable queue as packed messages, and all of it arrives once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-batcher-'));
    const delivered: string[] = [];
    const log = await captureLog();
    const queue = new LocalEventQueue({
      directory: dir,
      capacity: 100_000,
      maxReceiveCount: 3,
      log: log.logger,
      groups: [
        {
          name: 'g',
          batchSize: 1000,
          batchWindowMs: 0,
          handler: (e) => {
            for (const r of e.Records)
              for (const ev of (JSON.parse(r.body) as { events: QueuedEvent[] }).events) delivered.push(ev.id);
            return Promise.resolve({ batchItemFailures: [] });
          },
        },
      ],
    });
    await queue.start();
    const batcher = new EventBatcher({ name: 'test', queue, maxBuffered: 500, maxPerMessage: 20, log: log.logger });
    try {
      await Promise.all(Array.from({ length: 2000 }, (_, i) => batcher.send([event(i)])));
      await batcher.stop();
      await eventually(() => delivered.length === 2000);
      expect(new Set(delivered).size).toBe(2000);
    } finally {
      await queue.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('packs the events buffered while a write is in flight into the next round, at most maxPerMessage per message', async () => {
    const queue = new GatedQueue();
    const batcher = new EventBatcher({
      name: 'test',
      queue,
      maxBuffered: 100,
      maxPerMessage: 4,
      log: (await captureLog()).logger,
    });
    queue.hold();
    await batcher.send([event(0)]);
    for (let i = 1; i <= 10; i++) await batcher.send([event(i)]);
    expect(batcher.held).toBe(11);
    queue.release();
    await batcher.stop();
    expect(queue.sends.map((s) => s.map((e) => e.id))).toEqual([
      ['e0'],
      ['e1', 'e2', 'e3', 'e4'],
      ['e5', 'e6', 'e7', 'e8'],
      ['e9', 'e10'],
    ]);
  });

  it('keeps the bytes of every buffered event intact while it holds more than its byte slabs take (several slabs, one event larger than a slab)', async () => {
    const queue = new GatedQueue();
    const batcher = new EventBatcher({
      name: 'test',
      queue,
      maxBuffered: 10_000,
      maxPerMessage: 20,
      log: (await captureLog()).logger,
    });
    // Events of about 1 KB with non-ASCII text (UTF-8 longer than the text), 2,000 of them: several
    // 256 KB slabs; one event of 400,000 characters, larger than a slab, in the middle.
    const sized = (i: number, chars: number): PointsQueuedEvent => ({
      ...event(i),
      module: `ä😀${String(i).padStart(6, '0')}${'é'.repeat(chars)}`,
    });
    const sent = Array.from({ length: 2000 }, (_, i) => sized(i, i === 1000 ? 400_000 : 500));
    queue.hold();
    for (let i = 0; i < sent.length; i += 10) await batcher.send(sent.slice(i, i + 10));
    queue.release();
    await batcher.stop();
    expect(queue.sends.flat()).toEqual(sent);
  });

  it('splits a send of more than maxPerMessage events, and never splits one send between messages (a message may hold fewer)', async () => {
    const queue = new GatedQueue();
    const batcher = new EventBatcher({
      name: 'test',
      queue,
      maxBuffered: 100,
      maxPerMessage: 4,
      log: (await captureLog()).logger,
    });
    queue.hold();
    await batcher.send([event(0)]);
    await batcher.send(Array.from({ length: 10 }, (_, i) => event(i + 1)));
    await batcher.send([event(11), event(12), event(13)]);
    await batcher.send([event(14), event(15)]);
    expect(batcher.held).toBe(16);
    queue.release();
    await batcher.stop();
    expect(queue.sends.map((s) => s.map((e) => e.id))).toEqual([
      ['e0'],
      ['e1', 'e2', 'e3', 'e4'],
      ['e5', 'e6', 'e7', 'e8'],
      ['e9', 'e10'],
      ['e11', 'e12', 'e13'],
      ['e14', 'e15'],
    ]);
  });

  it("keeps every message within the queue's largest body: events too large together are encoded one by one", async () => {
    const queue = new GatedQueue();
    const one = Buffer.byteLength(JSON.stringify(event(10)));
    // Room for two events per body, not three.
    queue.maxMessageBytes = 20 + 3 * one;
    const batcher = new EventBatcher({
      name: 'test',
      queue,
      maxBuffered: 100,
      maxPerMessage: 10,
      log: (await captureLog()).logger,
    });
    queue.hold();
    await batcher.send([event(0)]);
    await batcher.send([event(10), event(11), event(12), event(13), event(14)]);
    queue.release();
    await batcher.stop();
    expect(queue.sends.map((s) => s.map((e) => e.id))).toEqual([['e0'], ['e10', 'e11'], ['e12', 'e13'], ['e14']]);
    expect(queue.bodies.every((b) => Buffer.byteLength(b) <= queue.maxMessageBytes)).toBe(true);
  });

  it('makes handlers wait while it is full (backpressure), and lets them go when a write completes', async () => {
    const queue = new GatedQueue();
    const batcher = new EventBatcher({
      name: 'test',
      queue,
      maxBuffered: 3,
      maxPerMessage: 10,
      log: (await captureLog()).logger,
    });
    queue.hold();
    await batcher.send([event(0), event(1), event(2)]);
    let fourth = false;
    const waiting = batcher.send([event(3)]).then(() => (fourth = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(fourth).toBe(false);
    queue.release();
    await waiting;
    expect(fourth).toBe(true);
    await batcher.stop();
    expect(queue.sends.flat().map((e) => e.id)).toEqual(['e0', 'e1', 'e2', 'e3']);
  });

  it('keeps a refused batch and writes it when the queue takes events again, in order', async () => {
    const queue = new GatedQueue();
    const log = await captureLog();
    const errors: unknown[] = [];
    const batcher = new EventBatcher({
      name: 'test',
      queue,
      maxBuffered: 100,
      maxPerMessage: 10,
      log: log.logger,
      retryDelayMs: 20,
      onWriteError: (err) => errors.push(err),
    });
    queue.refuse = true;
    await batcher.send([event(0), event(1)]);
    await eventually(() => errors.length >= 2);
    await batcher.send([event(2)]);
    queue.refuse = false;
    await eventually(() => batcher.held === 0);
    expect(queue.sends.flat().map((e) => e.id)).toEqual(['e0', 'e1', 'e2']);
    const lines = log.lines().map((l): [unknown, string] => [l['level'], String(l['msg'])]);
    expect(lines.filter(([level]) => level === 'error')).toHaveLength(1);
    expect(lines.some(([level, msg]) => level === 'info' && msg.includes('takes test events again'))).toBe(true);
    await batcher.stop();
  });

  it('says how many events are lost when the queue still refuses them at stop', async () => {
    const queue = new GatedQueue();
    const log = await captureLog();
    const batcher = new EventBatcher({
      name: 'test',
      queue,
      maxBuffered: 100,
      maxPerMessage: 10,
      log: log.logger,
      retryDelayMs: 10,
    });
    queue.refuse = true;
    await batcher.send([event(0), event(1), event(2)]);
    await batcher.stop();
    expect(
      log
        .lines()
        .some((l) => l['level'] === 'error' && String(l['msg']).startsWith('3 test event(s) could not be written')),
    ).toBe(true);
    await expect(batcher.send([event(4)])).rejects.toThrow('event batcher (test) is stopped');
  });
  it('takes a batch synchronously with offer while it has room, and refuses (nothing buffered) when full or stopped', async () => {
    const queue = new GatedQueue();
    queue.hold();
    const batcher = new EventBatcher({
      name: 'test',
      queue,
      maxBuffered: 5,
      maxPerMessage: 10,
      log: (await captureLog()).logger,
    });
    expect(batcher.offer([event(0), event(1), event(2)])).toBe(true);
    expect(batcher.held).toBe(3);
    // 3 + 3 > 5: refused whole, nothing of it buffered.
    expect(batcher.offer([event(3), event(4), event(5)])).toBe(false);
    expect(batcher.held).toBe(3);
    expect(batcher.offer([event(3), event(4)])).toBe(true);
    expect(batcher.held).toBe(5);
    const waiting = batcher.send([event(5)]);
    queue.release();
    await waiting;
    await eventually(() => batcher.held === 0);
    expect(queue.sends.flat().map((e) => e.id)).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5']);
    await batcher.stop();
    expect(batcher.offer([event(6)])).toBe(false);
  });

  describe('with gatherMs (the UDP listeners: compose.ts BATCHER_GATHER_MS)', () => {
    it('writes the first events at once, and what arrives after a round started in the next round, no sooner than gatherMs after it', async () => {
      const queue = new GatedQueue();
      const batcher = new EventBatcher({
        name: 'test',
        queue,
        maxBuffered: 100,
        maxPerMessage: 20,
        gatherMs: 300,
        log: (await captureLog()).logger,
      });
      await batcher.send([event(0)]);
      await eventually(() => queue.sends.length === 1);
      for (let i = 1; i <= 5; i++) await batcher.send([event(i)]);
      // Still gathering (a timer never fires early, so this holds on a busy machine too).
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(queue.sends.length).toBe(1);
      await eventually(() => queue.sends.length === 2);
      expect(queue.sends.map((m) => m.map((e) => e.id))).toEqual([['e0'], ['e1', 'e2', 'e3', 'e4', 'e5']]);
      // By performance.now, Node may run a timer up to two milliseconds before its time: it counts
      // whole milliseconds from the loop's cached time (seen: 298.98 ms of 300 in a full run).
      expect((queue.startedAt[1] ?? 0) - (queue.startedAt[0] ?? 0)).toBeGreaterThanOrEqual(298);
      await batcher.stop();
    });

    it('starts the next round at once when the buffer is half full, and at stop', async () => {
      const queue = new GatedQueue();
      // A minute: the test would time out if either waited for it.
      const batcher = new EventBatcher({
        name: 'test',
        queue,
        maxBuffered: 10,
        maxPerMessage: 20,
        gatherMs: 60_000,
        log: (await captureLog()).logger,
      });
      await batcher.send([event(0)]);
      await eventually(() => queue.sends.length === 1);
      for (let i = 1; i <= 4; i++) await batcher.send([event(i)]);
      expect(queue.sends.length).toBe(1);
      // The fifth makes half of maxBuffered.
      await batcher.send([event(5)]);
      await eventually(() => queue.sends.length === 2);
      await batcher.send([event(6)]);
      await batcher.stop();
      expect(queue.sends.map((m) => m.map((e) => e.id))).toEqual([['e0'], ['e1', 'e2', 'e3', 'e4', 'e5'], ['e6']]);
    });
  });
});
