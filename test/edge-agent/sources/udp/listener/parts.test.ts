/** The listener's pure parts: the message queue, rate-limit window, source resolution, /proc/net/udp parsing. */
import { describe, expect, it } from 'vitest';
import {
  FixedWindowRateLimit,
  resolveAllowedSources,
  senderIPv4,
} from '../../../../../edge-agent/sources/udp/checks.js';
import { parseProcNetUdp } from '../../../../../edge-agent/sources/udp/kernel-drops.js';
import {
  type BatchOutcomes,
  batchHandler,
  DurationWindow,
  HandlerFailure,
  MessageQueue,
} from '../../../../../edge-agent/sources/udp/message-queue.js';
import { LogThrottle } from '../../../../../shared/logging/throttle.js';

describe('MessageQueue', () => {
  it('runs at most maxConcurrent handlers, keeps at most maxSize waiting, and ends each item in processed or failed', async () => {
    const releases: (() => void)[] = [];
    let running = 0;
    let maxRunning = 0;
    const errors: unknown[] = [];
    const q = new MessageQueue<number>({
      maxSize: 5,
      maxConcurrent: 3,
      handler: (n) =>
        new Promise((resolve, reject) => {
          running += 1;
          maxRunning = Math.max(maxRunning, running);
          releases.push(() => {
            running -= 1;
            if (n % 4 === 0) reject(new Error(`item ${n}`));
            else resolve(n % 4 === 1 ? 'failed' : 'processed');
          });
        }),
      onHandlerError: (err) => errors.push(err),
    });
    const accepted = Array.from({ length: 20 }, (_, i) => q.offer(i));
    expect(accepted.filter(Boolean)).toHaveLength(8);
    expect(accepted.slice(8).every((a) => !a)).toBe(true);
    expect(q.size).toBe(5);
    expect(q.running).toBe(3);
    while (releases.length > 0) {
      releases.shift()?.();
      await new Promise((r) => setTimeout(r, 0));
    }
    await q.idle();
    expect(maxRunning).toBe(3);
    // items 0..7: 0 and 4 reject, 1 and 5 resolve 'failed', the rest 'processed'.
    expect({ queued: q.queued, processed: q.processed, failed: q.failed }).toEqual({
      queued: 8,
      processed: 4,
      failed: 4,
    });
    expect(errors.map(String)).toEqual(['Error: item 0', 'Error: item 4']);
    expect(q.durations.size).toBe(8);
  });

  it('counts a handler that throws synchronously as failed', async () => {
    const q = new MessageQueue<number>({
      maxSize: 1,
      maxConcurrent: 1,
      handler: () => {
        throw new Error('sync');
      },
      onHandlerError: () => undefined,
    });
    expect(q.offer(1)).toBe(true);
    await q.idle();
    expect(q.failed).toBe(1);
  });
});

describe('MessageQueue with a batch handler', () => {
  const immediate = () => new Promise((resolve) => setImmediate(resolve));

  it('hands what one turn offered over in batches of at most maxConcurrent, keeps the §3 bounds and counts every item', async () => {
    const batches: number[][] = [];
    const errors: unknown[] = [];
    const q = new MessageQueue<number>({
      maxSize: 5,
      maxConcurrent: 3,
      handler: batchHandler((items) => {
        batches.push([...items]);
        // Synchronous: 'failed' for multiples of 4, a thrown-like failure for 7, else processed.
        return items.map((n) =>
          n === 7 ? new HandlerFailure(new Error('item 7')) : n % 4 === 0 ? 'failed' : 'processed',
        );
      }),
      onHandlerError: (err) => errors.push(err),
    });
    const accepted = Array.from({ length: 20 }, (_, i) => q.offer(i));
    // 3 taken by free slots (running), 5 waiting, the rest refused: the same bounds as one-item handlers.
    expect(accepted.filter(Boolean)).toHaveLength(8);
    expect({ running: q.running, size: q.size }).toEqual({ running: 3, size: 5 });
    expect(batches).toEqual([]);
    await immediate();
    expect(batches).toEqual([
      [0, 1, 2],
      [3, 4, 5],
      [6, 7],
    ]);
    expect({ running: q.running, size: q.size, queued: q.queued, processed: q.processed, failed: q.failed }).toEqual({
      running: 0,
      size: 0,
      queued: 8,
      processed: 5,
      failed: 3,
    });
    expect(errors.map(String)).toEqual(['Error: item 7']);
    expect(q.durations.size).toBe(8);
    await q.idle();
  });

  it('keeps the slots of a batch that waits (a full batcher) until it settles, and counts a rejected batch as failed item by item', async () => {
    let release: (outcomes: BatchOutcomes) => void = () => undefined;
    let fail: (err: Error) => void = () => undefined;
    const calls: number[][] = [];
    const errors: unknown[] = [];
    const q = new MessageQueue<number>({
      maxSize: 2,
      maxConcurrent: 2,
      handler: batchHandler((items) => {
        calls.push([...items]);
        return new Promise<BatchOutcomes>((resolve, reject) => {
          release = resolve;
          fail = reject;
        });
      }),
      onHandlerError: (err, item) => errors.push([String(err), item]),
    });
    expect([1, 2, 3, 4, 5].map((n) => q.offer(n))).toEqual([true, true, true, true, false]);
    await immediate();
    expect(calls).toEqual([[1, 2]]);
    expect({ running: q.running, size: q.size }).toEqual({ running: 2, size: 2 });
    // While the batch waits, a new datagram finds the queue full.
    expect(q.offer(6)).toBe(false);
    release(['processed', 'failed']);
    await immediate();
    expect(calls).toEqual([
      [1, 2],
      [3, 4],
    ]);
    fail(new Error('batcher stopped'));
    await q.idle();
    expect({ queued: q.queued, processed: q.processed, failed: q.failed, running: q.running }).toEqual({
      queued: 4,
      processed: 1,
      failed: 3,
      running: 0,
    });
    expect(errors).toEqual([
      ['Error: batcher stopped', 3],
      ['Error: batcher stopped', 4],
    ]);
  });

  it('counts every item of a batch handler that throws synchronously as failed, and goes on', async () => {
    let calls = 0;
    const q = new MessageQueue<number>({
      maxSize: 10,
      maxConcurrent: 2,
      handler: batchHandler((items) => {
        calls += 1;
        if (calls === 1) throw new Error('bug');
        return items.map(() => 'processed' as const);
      }),
      onHandlerError: () => undefined,
    });
    for (let i = 0; i < 4; i++) q.offer(i);
    await q.idle();
    expect({ processed: q.processed, failed: q.failed }).toEqual({ processed: 2, failed: 2 });
  });

  it('runs the one-item form of a batch handler as a batch of one', async () => {
    const handler = batchHandler<number>((items) =>
      items.map((n) => (n > 0 ? 'processed' : new HandlerFailure(new Error(`bad ${n}`)))),
    );
    await expect(handler(1)).resolves.toBe('processed');
    await expect(handler(0)).rejects.toThrow('bad 0');
  });
});

describe('DurationWindow', () => {
  it('keeps the last 1,000 durations; p95 = sorted[ceil(n × 0.95) − 1]', () => {
    const w = new DurationWindow();
    for (let i = 1; i <= 1500; i++) w.add(i);
    expect(w.size).toBe(1000);
    expect(w.stats()).toEqual({ avg: 1000.5, p95: 1450, max: 1500 });
    const small = new DurationWindow();
    for (const v of [5, 1, 3]) small.add(v);
    expect(small.stats()).toEqual({ avg: 3, p95: 5, max: 5 });
    expect(new DurationWindow().stats()).toEqual({ avg: 0, p95: 0, max: 0 });
  });
});

describe('FixedWindowRateLimit', () => {
  it('opens a 60 s window at the first datagram after the last one expired', () => {
    const r = new FixedWindowRateLimit(3);
    expect([r.take(1000), r.take(2000), r.take(3000), r.take(4000)]).toEqual([true, true, true, false]);
    expect(r.take(60_999)).toBe(false);
    expect(r.take(61_000)).toBe(true);
    expect(r.currentPerMinute(61_000 + 30_000)).toBeCloseTo(2, 5);
    expect(r.currentPerMinute(61_000 + 60_000)).toBe(0);
  });
});

describe('resolveAllowedSources', () => {
  it('takes IPv4 literals as they are and resolves names with the system resolver', async () => {
    const r = await resolveAllowedSources(true, ['10.1.2.3', 'localhost']);
    expect(r.allowed).toEqual(new Set(['10.1.2.3', '127.0.0.1']));
    expect(r.unresolved).toEqual([]);
  });
  it('is off when disabled', async () => {
    expect((await resolveAllowedSources(false, ['10.1.2.3'])).allowed).toBeNull();
  });
  it('maps IPv4-mapped IPv6 senders to IPv4', () => {
    expect(senderIPv4('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(senderIPv4('10.0.0.1')).toBe('10.0.0.1');
  });
});

describe('LogThrottle', () => {
  it('says "log" once per key per interval', () => {
    let now = 0;
    const t = new LogThrottle(60_000, () => now);
    const at = (ms: number, key: string) => {
      now = ms;
      return t.take(key).log;
    };
    expect([at(0, 'a'), at(59_999, 'a'), at(1, 'b'), at(60_000, 'a')]).toEqual([true, false, true, true]);
  });
});

describe('parseProcNetUdp', () => {
  it('reads address, port, inode, receive queue bytes and drops of each socket', () => {
    const text = [
      '   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops            ',
      '11001: 0100007F:B16C 00000000:0000 07 00000000:0001F400 00:00000000 00000000     0        0 216370 2 000000005580c36f 17       ',
      '  412: 00000000:270D 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 99 2 0000000000000000 0',
    ].join('\n');
    expect(parseProcNetUdp(text)).toEqual([
      { localAddress: '127.0.0.1', localPort: 0xb16c, inode: 216370, rxQueueBytes: 128_000, drops: 17 },
      { localAddress: '0.0.0.0', localPort: 9997, inode: 99, rxQueueBytes: 0, drops: 0 },
    ]);
    expect(parseProcNetUdp('no header\n')).toEqual([]);
  });
});
