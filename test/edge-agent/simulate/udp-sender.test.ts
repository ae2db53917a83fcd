/** The paced UDP sender of `svc simulate udp`, over a real UDP socket on 127.0.0.1. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createDatagramGenerator,
  SIMULATE_KINDS,
  type SimDatagram,
  type SimulateKind,
} from '../../../edge-agent/simulate/messages.js';
import { MAX_DURATION_S, MAX_RATE, plannedCount, sendUdp } from '../../../edge-agent/simulate/udp-sender.js';
import { LOOPBACK, sleep } from '../../support/ports.js';
import { type Receiver, startReceiver } from './receiver.js';

let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

function stream(seed: number, count: number, malformed: number): SimDatagram[] {
  const generator = createDatagramGenerator({ seed, malformed });
  return Array.from({ length: count }, () => generator.next());
}

describe('sendUdp', () => {
  it("sends rate × duration datagrams, every one arrives, in the generator's order, and reports the achieved rate", async () => {
    receiver = await startReceiver();
    const r = receiver;
    const source = createDatagramGenerator({ seed: 11, malformed: 0.1 });
    const run = sendUdp({ host: LOOPBACK, port: r.port, rate: 2000, durationS: 1, source });
    // Paced, not one burst: a third of the way in, far from everything has been sent.
    await sleep(300);
    expect(r.datagrams.length).toBeLessThan(1900);
    const stats = await run;
    await expect.poll(() => r.datagrams.length, { timeout: 2000 }).toBe(2000);

    const expected = stream(11, 2000, 0.1);
    expect(r.datagrams.every((d, i) => d.equals(expected[i]?.data ?? Buffer.alloc(0)))).toBe(true);
    const perKind = Object.fromEntries(SIMULATE_KINDS.map((k) => [k, 0])) as Record<SimulateKind, number>;
    let malformed = 0;
    for (const d of expected) {
      if (d.malformed === null) perKind[d.kind]++;
      else malformed++;
    }
    expect(stats).toMatchObject({ sent: 2000, perKind, malformed, sendErrors: 0, aborted: false, address: LOOPBACK });
    expect(malformed).toBeGreaterThan(100);
    // The last datagrams are due at 1 s; sane upper bound only.
    expect(stats.elapsedMs).toBeGreaterThanOrEqual(1000);
    expect(stats.elapsedMs).toBeLessThan(4000);
    expect(stats.achievedRate).toBeCloseTo((stats.sent * 1000) / stats.elapsedMs, 6);
    expect(stats.achievedRate).toBeGreaterThan(500);
    expect(stats.achievedRate).toBeLessThanOrEqual(2000);
  });

  it('stops after count datagrams', async () => {
    receiver = await startReceiver();
    const r = receiver;
    const stats = await sendUdp({
      host: LOOPBACK,
      port: r.port,
      rate: 5000,
      durationS: 60,
      count: 300,
      source: createDatagramGenerator({ seed: 2 }),
    });
    expect(stats.sent).toBe(300);
    expect(stats.elapsedMs).toBeLessThan(3000);
    await expect.poll(() => r.datagrams.length).toBe(300);
  });

  it('an AbortSignal stops it early; the stats cover what was sent', async () => {
    receiver = await startReceiver();
    const r = receiver;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const stats = await sendUdp({
      host: LOOPBACK,
      port: r.port,
      rate: 1000,
      durationS: 30,
      source: createDatagramGenerator({ seed: 3 }),
      signal: controller.signal,
    });
    expect(stats.aborted).toBe(true);
    expect(stats.sent).toBeGreaterThan(50);
    expect(stats.sent).toBeLessThan(1500);
    await expect.poll(() => r.datagrams.length).toBe(stats.sent);

    const already = AbortSignal.abort();
    expect(
      await sendUdp({
        host: LOOPBACK,
        port: r.port,
        rate: 10,
        durationS: 1,
        source: createDatagramGenerator({ seed: 3 }),
        signal: already,
      }),
    ).toMatchObject({ sent: 0, aborted: true });
  });

  it('counts failed sends instead of throwing', async () => {
    receiver = await startReceiver();
    const tooBig = { next: () => ({ kind: 'engine' as const, data: Buffer.alloc(70_000, 0x61), malformed: null }) };
    const stats = await sendUdp({
      host: LOOPBACK,
      port: receiver.port,
      rate: 1000,
      durationS: 1,
      count: 20,
      source: tooBig,
    });
    expect(stats).toMatchObject({ sent: 0, sendErrors: 20, malformed: 0 });
    expect(stats.firstError).toMatch(/EMSGSIZE/);
    expect(stats.achievedRate).toBe(0);
  });

  it('rejects invalid options', async () => {
    const source = createDatagramGenerator({ seed: 1 });
    const base = { host: LOOPBACK, port: 9, rate: 10, durationS: 1, source };
    await expect(sendUdp({ ...base, rate: 0 })).rejects.toThrow(RangeError);
    await expect(sendUdp({ ...base, rate: MAX_RATE + 1 })).rejects.toThrow(/rate/);
    await expect(sendUdp({ ...base, durationS: MAX_DURATION_S + 1 })).rejects.toThrow(/durationS/);
    await expect(sendUdp({ ...base, count: 0 })).rejects.toThrow(/count/);
    await expect(sendUdp({ ...base, port: 70_000 })).rejects.toThrow(/port/);
  });

  it('plans floor(rate × duration) datagrams, capped by count', () => {
    expect(plannedCount(2000, 1)).toBe(2000);
    expect(plannedCount(0.7, 10)).toBe(7);
    expect(plannedCount(3, 0.5)).toBe(1);
    expect(plannedCount(1000, 10, 50)).toBe(50);
  });
});
