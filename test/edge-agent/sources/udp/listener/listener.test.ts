/**
 * The UDP listener over real loopback sockets (platform-formats.md §3): check order, exact drop
 * counts per reason (kernel drops included), backpressure, socket-error recovery and bind failure.
 */
import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ReceivedDatagram,
  UdpListener,
  type UdpListenerOptions,
} from '../../../../../edge-agent/sources/udp/listener.js';
import type { HandlerOutcome } from '../../../../../edge-agent/sources/udp/message-queue.js';
import { ErrorTracker } from '../../../../../shared/errors/tracker.js';
import { captureLog, type LogCapture } from '../../../../support/audit.js';
import { LOOPBACK, trackChild } from '../../../../support/ports.js';
import { eventually, sendDatagrams, svcConfig } from '../../../../support/udp.js';

const running: UdpListener[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((l) => l.stop()));
});

function settings(lines: string[] = []) {
  return svcConfig([
    '  userEvents:',
    '    enable: true',
    '    udpServerConfig:',
    `      serverHost: ${LOOPBACK}`,
    ...lines.map((l) => `      ${l}`),
  ]).userEvents.udpServerConfig;
}

interface Harness {
  listener: UdpListener;
  log: LogCapture;
  handled: ReceivedDatagram[];
  errors: ErrorTracker;
}

async function startListener(
  lines: string[],
  handler?: (d: ReceivedDatagram) => Promise<HandlerOutcome>,
  extra: Partial<UdpListenerOptions> = {},
): Promise<Harness> {
  const log = await captureLog();
  const handled: ReceivedDatagram[] = [];
  const errors = new ErrorTracker({ enabled: true, log: log.logger });
  const listener = new UdpListener({
    queueType: 'user_events',
    port: 0,
    settings: settings(lines),
    handler:
      handler ??
      ((d) => {
        handled.push(d);
        return Promise.resolve('processed');
      }),
    log: log.logger,
    errors,
    errorType: 'UDP_USER_EVENT',
    module: 'UDP_USER_EVENTS',
    ...extra,
  });
  await listener.start();
  running.push(listener);
  return { listener, log, handled, errors };
}

const messages = (n: number, size = 20) => Array.from({ length: n }, (_, i) => `m${i}`.padEnd(size, '.'));

describe('UDP listener', () => {
  it('hands every datagram to the handler with its sender and receive time, and counts it', async () => {
    const { listener, handled } = await startListener([]);
    const before = Date.now();
    await sendDatagrams(listener.port, messages(200));
    await eventually(() => handled.length === 200, 5000, '200 datagrams');
    expect(new Set(handled.map((d) => d.data.toString())).size).toBe(200);
    expect(handled.every((d) => d.address === LOOPBACK && d.receivedAtMs >= before)).toBe(true);
    await eventually(() => listener.metrics().messages_processed === 200);
    const m = listener.metrics();
    expect(m).toMatchObject({
      queue_type: 'user_events',
      messages_received: 200,
      messages_queued: 200,
      messages_processed: 200,
      messages_failed: 0,
      messages_dropped_total: 0,
      queue_size: 0,
      queue_running: 0,
      backpressure_active: 0,
    });
    expect(m.messages_dropped_kernel).toBe(0);
  });

  it('drops senders not in allowedSources, and accepts the listed ones (resolved at start)', async () => {
    const { listener, handled, log } = await startListener(
      ['enableSourceValidation: true', 'allowedSources: [127.0.0.2, allowed.example, nowhere.invalid]'],
      undefined,
      {
        resolve4: (host) =>
          host === 'allowed.example' ? Promise.resolve(['127.0.0.3']) : Promise.reject(new Error('ENOTFOUND')),
      },
    );
    await sendDatagrams(listener.port, messages(5), { from: '127.0.0.1' });
    await sendDatagrams(listener.port, messages(3), { from: '127.0.0.2' });
    await sendDatagrams(listener.port, messages(4), { from: '127.0.0.3' });
    await eventually(() => handled.length === 7 && listener.metrics().messages_received === 12);
    const m = listener.metrics();
    expect(m.messages_dropped_source).toBe(5);
    expect(m.messages_dropped_total).toBe(5);
    expect(new Set(handled.map((d) => d.address))).toEqual(new Set(['127.0.0.2', '127.0.0.3']));
    const lines = log.lines();
    expect(lines.some((l) => l['level'] === 'error' && String(l['msg']).includes('nowhere.invalid'))).toBe(true);
    // One WARN per sender per minute, DEBUG for the rest.
    const rejects = lines.filter((l) => String(l['msg']).includes('not in allowedSources'));
    expect(rejects.filter((l) => l['level'] === 'warn')).toHaveLength(1);
    expect(rejects.filter((l) => l['level'] === 'debug')).toHaveLength(4);
  });

  it('turns validation off with a warning when no allowedSources entry resolves', async () => {
    const { listener, handled, log } = await startListener(
      ['enableSourceValidation: true', 'allowedSources: [nowhere.invalid]'],
      undefined,
      { resolve4: () => Promise.reject(new Error('ENOTFOUND')) },
    );
    await sendDatagrams(listener.port, messages(3));
    await eventually(() => handled.length === 3);
    expect(log.lines().some((l) => l['level'] === 'warn' && String(l['msg']).includes('validation is OFF'))).toBe(true);
  });

  it('checks the size before the rate limit, and the rate limit before the queue', async () => {
    const { listener, handled, log } = await startListener([
      'maxMessageSize: 100',
      'rateLimit:',
      '  enable: true',
      '  maxMessagesPerMinute: 10',
    ]);
    const payloads = [...messages(8, 101), ...messages(15, 50)];
    await sendDatagrams(listener.port, payloads, { inFlight: 1 });
    await eventually(() => listener.metrics().messages_received === 23);
    await eventually(() => handled.length === 10);
    const m = listener.metrics();
    expect(m).toMatchObject({
      messages_dropped_size: 8,
      messages_dropped_rate_limit: 5,
      messages_dropped_queue_full: 0,
      messages_dropped_total: 13,
      messages_queued: 10,
    });
    expect(m.rate_limit_current).toBeGreaterThan(0);
    const sizeWarn = log
      .lines()
      .filter((l) => l['level'] === 'warn' && String(l['msg']).includes('larger than maxMessageSize'));
    expect(sizeWarn).toHaveLength(1);
    expect(sizeWarn[0]?.['bytes']).toBe(101);
  });

  it('never lets more than maxSize datagrams wait in a burst, and counts every one it turns away', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const seen: number[] = [];
    const { listener, log } = await startListener(
      ['messageQueue:', '  maxSize: 50', '  maxConcurrent: 2', '  backpressureThreshold: 80'],
      async () => {
        seen.push(listener.queue.size);
        await gate;
        return 'processed';
      },
    );
    let maxWaiting = 0;
    const probe = setInterval(() => (maxWaiting = Math.max(maxWaiting, listener.queue.size)), 1);
    await sendDatagrams(listener.port, messages(500));
    await eventually(async () => {
      await listener.refreshKernelDrops();
      const m = listener.metrics();
      return m.messages_received + (m.messages_dropped_kernel ?? 0) === 500;
    });
    clearInterval(probe);
    const m = listener.metrics();
    expect(maxWaiting).toBeLessThanOrEqual(50);
    expect(m.queue_size).toBe(50);
    expect(m.queue_running).toBe(2);
    expect(m.messages_queued).toBe(52);
    expect(m.messages_dropped_queue_full).toBe(m.messages_received - 52);
    expect(m.messages_dropped_total).toBe(500 - 52);
    expect(m.queue_utilization_pct).toBe(100);
    expect(m.backpressure_active).toBe(1);
    expect(
      log.lines().filter((l) => l['level'] === 'warn' && String(l['msg']).includes('backpressure threshold')),
    ).toHaveLength(1);
    release();
    await eventually(() => listener.metrics().messages_processed === 52);
    await listener.refreshKernelDrops();
    expect(listener.metrics().backpressure_active).toBe(0);
    expect(log.lines().some((l) => l['level'] === 'info' && String(l['msg']).includes('backpressure cleared'))).toBe(
      true,
    );
  });

  it('counts the datagrams the kernel drops when the receive buffer overflows', async () => {
    const { listener, handled } = await startListener(['receiveBufferBytes: 65536']);
    const total = 3000;
    // Keep the event loop busy while a child process sends: the socket buffer overflows in the kernel.
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [
      '-e',
      `
      const s = require('node:dgram').createSocket('udp4');
      let n = 0; const buf = Buffer.alloc(1000, 97);
      const go = () => { while (n < ${total}) { n++; s.send(buf, ${listener.port}, '127.0.0.1', n === ${total} ? () => s.close() : undefined); if (n % 200 === 0) return setImmediate(go); } };
      go();`,
    ]);
    trackChild(child);
    const childDone = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    const until = Date.now() + 1500;
    while (Date.now() < until) {
      // busy: nothing is read from the socket
    }
    await childDone;
    await eventually(
      async () => {
        await listener.refreshKernelDrops();
        const m = listener.metrics();
        return m.messages_received + (m.messages_dropped_kernel ?? 0) === total;
      },
      5000,
      'received + kernel drops = sent',
    );
    const m = listener.metrics();
    expect(m.messages_dropped_kernel).toBeGreaterThan(0);
    expect(m.messages_dropped_total).toBe(m.messages_dropped_kernel);
    await eventually(() => handled.length === m.messages_received);
  });

  it('logs a socket error and keeps receiving; a closed socket is bound again', async () => {
    const { listener, handled, log, errors } = await startListener([], undefined, { rebindDelayMs: 50 });
    listener.currentSocket?.emit('error', new Error('simulated receive error'));
    await sendDatagrams(listener.port, messages(3));
    await eventually(() => handled.length === 3);
    expect(
      log.lines().some((l) => l['level'] === 'error' && String(l['msg']).includes('simulated receive error')),
    ).toBe(true);
    expect(errors.summary().total).toBe(1);

    const old = listener.currentSocket;
    old?.close();
    await eventually(
      () => listener.currentSocket !== undefined && listener.currentSocket !== old,
      3000,
      'the socket to be bound again',
    );
    await sendDatagrams(listener.port, messages(4));
    await eventually(() => handled.length === 7);
    expect(log.lines().some((l) => String(l['msg']).includes('bound again'))).toBe(true);
  });

  it('refuses to start when the port is taken, saying which', async () => {
    const blocker = dgram.createSocket('udp4');
    const port = await new Promise<number>((resolve) =>
      blocker.bind(0, LOOPBACK, () => resolve(blocker.address().port)),
    );
    try {
      const log = await captureLog();
      const listener = new UdpListener({
        queueType: 'log_events',
        port,
        settings: settings(),
        handler: () => Promise.resolve('processed'),
        log: log.logger,
        errors: new ErrorTracker({ enabled: false, log: log.logger }),
        errorType: 'UDP_LOG_EVENT',
        module: 'UDP_LOG_EVENTS',
      });
      await expect(listener.start()).rejects.toThrow(
        `the log_events listener cannot bind UDP ${LOOPBACK}:${port}: bind EADDRINUSE`,
      );
    } finally {
      blocker.close();
    }
  });

  it('warns when the OS grants a smaller receive buffer than asked', async () => {
    const { readFileSync } = await import('node:fs');
    const max = Number(readFileSync('/proc/sys/net/core/rmem_max', 'utf8'));
    const { log } = await startListener([`receiveBufferBytes: ${Math.min(max * 4, 1_073_741_824)}`]);
    expect(
      log
        .lines()
        .some((l) => l['level'] === 'warn' && String(l['msg']).includes('the OS granted a UDP receive buffer')),
    ).toBe(true);
  });

  it('counts a handler that throws as failed, reports it, and goes on', async () => {
    let n = 0;
    const { listener, errors } = await startListener([], () => {
      n += 1;
      if (n % 2 === 0) return Promise.reject(new Error('handler broke'));
      return Promise.resolve('processed');
    });
    await sendDatagrams(listener.port, messages(10));
    await eventually(() => listener.metrics().messages_processed + listener.metrics().messages_failed === 10);
    expect(listener.metrics()).toMatchObject({ messages_processed: 5, messages_failed: 5 });
    expect(errors.summary().total).toBe(5);
  });

  it('resets only what a successful metrics write carried', async () => {
    const { listener, handled } = await startListener([]);
    await sendDatagrams(listener.port, messages(5));
    await eventually(() => handled.length === 5 && listener.metrics().messages_processed === 5);
    const written = listener.metrics();
    await sendDatagrams(listener.port, messages(3));
    await eventually(() => listener.metrics().messages_processed === 8);
    listener.commitMetrics(written);
    expect(listener.metrics()).toMatchObject({
      messages_received: 3,
      messages_queued: 3,
      messages_processed: 3,
      processing_time_max_ms: 0,
    });
    // The totals (the metrics endpoint's counters) are never reset by a write.
    expect(listener.totals()).toMatchObject({ received: 8, queued: 8, processed: 8, failed: 0 });
  });
});
