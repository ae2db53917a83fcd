/**
 * The container health endpoint over real HTTP (platform-formats.md §10.3, docs/operations.md):
 * 200 and its body; 503 naming each problem of real parts — a UDP listener not bound yet, closed and
 * bound again; the event loop of this very process blocked by a busy loop for more than 1 s; a
 * durable queue on a real full filesystem (a tmpfs; root only, skipped with the reason otherwise),
 * and 200 again once each problem is gone; HEAD, 404, 405, 500 without a stack; a port taken.
 */
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HealthEndpoint } from '../../../../edge-agent/endpoints/health/endpoint.js';
import { Observed } from '../../../../edge-agent/endpoints/observed.js';
import { logEventHandler } from '../../../../edge-agent/sources/udp/handlers.js';
import { UdpListener } from '../../../../edge-agent/sources/udp/listener.js';
import { ErrorTracker } from '../../../../shared/errors/tracker.js';
import { NO_APP_NAMES } from '../../../../shared/platform/app-names.js';
import { Forwarder } from '../../../../shared/queue/forwarder.js';
import { LocalEventQueue } from '../../../../shared/queue/local/index.js';
import { PointClock } from '../../../../shared/queue/point-clock.js';
import { QueueStorageError } from '../../../../shared/queue/port.js';
import { SqsEventQueue } from '../../../../shared/queue/sqs.js';
import type { Component } from '../../../../shared/runtime/lifecycle.js';
import { auditQueued } from '../../../support/audit.js';
import { localSqsClient } from '../../../support/fauxqs.js';
import { recordingLog, silentLog } from '../../../support/log.js';
import { freePort, LOOPBACK } from '../../../support/ports.js';
import { mountTmpfs, type Tmpfs } from '../../../support/tmpfs.js';
import { svcConfig } from '../../../support/udp.js';

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

let observed: Observed;
let endpoint: HealthEndpoint;
let base: string;
let recorded: ReturnType<typeof recordingLog>;
let started: Component[];

async function start<T extends Component>(component: T): Promise<T> {
  await component.start();
  started.push(component);
  return component;
}

beforeEach(async () => {
  started = [];
  observed = new Observed();
  recorded = recordingLog();
  endpoint = await start(new HealthEndpoint({ host: LOOPBACK, port: 0, observed, log: recorded.log }));
  base = `http://${LOOPBACK}:${endpoint.port}`;
});

afterEach(async () => {
  for (const c of started.reverse()) await c.stop();
});

async function get(path = '/health', init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  return { status: res.status, headers: res.headers, text, body };
}

const reason = async (): Promise<string> => {
  const { body } = await get();
  return typeof body === 'object' && body !== null && 'reason' in body && typeof body.reason === 'string'
    ? body.reason
    : '';
};

/**
 * The reasons of the answer other than event-loop lag. This test's process is the one measured: a
 * machine busy with the rest of the suite can lag it by more than 1 s (vitest importing modules),
 * which the endpoint rightly reports; the tests of other reasons look past it.
 */
const problems = async (): Promise<string[]> =>
  (await reason()).split('; ').filter((r) => r !== '' && !r.startsWith('event loop lag'));

/** The answer once the endpoint is healthy (at once, unless this busy process lagged just before). */
async function healthy(path = '/health', init: RequestInit = {}): Promise<Answer> {
  await expect.poll(async () => (await get(path, init)).status, { timeout: 10_000, interval: 250 }).toBe(200);
  return get(path, init);
}

function logListener(rebindDelayMs: number): UdpListener {
  const config = svcConfig([
    '  logEvents:',
    '    source:',
    '      proxy:',
    '        enable: true',
    '    udpServerConfig:',
    `      serverHost: ${LOOPBACK}`,
  ]);
  const handler = logEventHandler({
    appNames: NO_APP_NAMES,
    counter: null,
    clock: new PointClock(),
    log: silentLog,
    settings: config.logEvents,
    rejected: null,
    trackPerfRejections: false,
    queue: null,
    wants: () => false,
  });
  return new UdpListener({
    queueType: 'log_events',
    port: 0,
    settings: config.logEvents.udpServerConfig,
    handler,
    log: silentLog,
    errors: new ErrorTracker({ enabled: false, log: silentLog }),
    errorType: 'UDP_LOG_EVENT',
    module: 'UDP_LOG_EVENTS',
    rebindDelayMs,
  });
}

/** Keeps the event loop of this process busy (no timer, no I/O runs) for `ms`. */
function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy on purpose
  }
}

describe('container health endpoint: answers', () => {
  it('GET /health answers 200 {"statusCode":200,"status":"ok"} as JSON, never cached', async () => {
    const answer = await healthy();
    expect(answer.text).toBe('{"statusCode":200,"status":"ok"}');
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    // A query string does not change the path.
    await healthy('/health?probe=1');
  });

  it('HEAD /health answers the status without a body', async () => {
    const answer = await healthy('/health', { method: 'HEAD' });
    expect(answer.text).toBe('');
    expect(answer.headers.get('content-length')).toBe(String(Buffer.byteLength('{"statusCode":200,"status":"ok"}')));
  });

  it('answers 404 to other paths and 405 (with allow) to other methods, as JSON', async () => {
    for (const path of ['/', '/health/', '/healthz', '/metrics', '/health/../x']) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      expect(answer.body, path).toEqual({ statusCode: 404, error: 'not found: the health check is GET /health' });
    }
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const answer = await get('/health', { method });
      expect(answer.status, method).toBe(405);
      expect(answer.headers.get('allow')).toBe('GET, HEAD');
      expect(answer.body).toEqual({ statusCode: 405, error: `method ${method} not allowed: use GET or HEAD` });
    }
  });

  it('answers 500 without a stack when reading a part throws, and logs the error', async () => {
    // No real part throws while read; this stand-in listener does, to see the 500 path.
    observed.listener({
      name: 'broken listener',
      queueType: 'log_events',
      get bound(): boolean {
        throw new Error('boom at /secret/path/file.ts:12:34');
      },
      totals: () => ({
        received: 0,
        queued: 0,
        processed: 0,
        failed: 0,
        dropped: { source: 0, size: 0, rate_limit: 0, queue_full: 0, kernel: 0 },
        kernelCounted: false,
      }),
    });
    const answer = await get();
    expect(answer.status).toBe(500);
    expect(answer.text).toBe('{"statusCode":500,"error":"internal error"}');
    expect(recorded.lines.some((l) => l.level === 'error' && l.msg.includes('answered 500'))).toBe(true);
  });

  it('a port in use stops the start with a message naming the key and the port', async () => {
    const second = new HealthEndpoint({ host: LOOPBACK, port: endpoint.port, observed, log: silentLog });
    await expect(second.start()).rejects.toThrow(
      `Svc.containerHealthCheck.port: the container health endpoint cannot listen on ${LOOPBACK}:${endpoint.port}: listen EADDRINUSE`,
    );
  });
});

describe('container health endpoint: 503 with the reasons', () => {
  it('a UDP listener that is not bound: before it starts, while its socket is closed, and 200 once bound again', async () => {
    const listener = logListener(700);
    observed.listener(listener);
    const unbound = `UDP listener log_events (${LOOPBACK}:0) is not bound`;
    expect(await get()).toMatchObject({ status: 503, body: { statusCode: 503, status: 'ko' } });
    expect(await problems()).toEqual([unbound]);
    await start(listener);
    await healthy();

    listener.currentSocket?.close();
    const answer = await get();
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ statusCode: 503, status: 'ko' });
    expect(await problems()).toEqual([unbound]);
    // The listener binds a new socket after its delay.
    await healthy();
    // Each change of state is logged once, not each probe (lag, when this busy process had some, is a change too).
    const changes = recorded.lines
      .filter((l) => l.msg.startsWith('container health:') && !l.msg.includes('event loop lag'))
      .map((l) => `${l.level} ${l.msg}`);
    expect(changes.filter((c, i) => c !== changes[i - 1])).toEqual([
      `warn container health: GET /health answers 503: ${unbound}`,
      'info container health: ok again (GET /health answers 200)',
      `warn container health: GET /health answers 503: ${unbound}`,
      'info container health: ok again (GET /health answers 200)',
    ]);
    expect(recorded.lines.filter((l) => l.msg.startsWith('container health:')).length).toBeLessThan(12);
  });

  it('the event loop blocked by a busy loop for 1.3 s, named with a listener not bound: both reasons; 200 again after the 5 s window', async () => {
    observed.listener(logListener(1000));
    blockEventLoop(1300);
    const answer = await reason();
    const [unbound, lag] = answer.split('; ');
    expect(unbound).toBe(`UDP listener log_events (${LOOPBACK}:0) is not bound`);
    expect(lag).toMatch(/^event loop lag (\d+) ms exceeds 1000 ms$/);
    expect(Number(/lag (\d+) ms/.exec(lag ?? '')?.[1])).toBeGreaterThanOrEqual(1200);
    observed.listeners.length = 0;
    expect(await reason()).toMatch(/^event loop lag \d+ ms exceeds 1000 ms$/);
    await expect.poll(async () => (await get()).status, { timeout: 10_000, interval: 500 }).toBe(200);
  });

  it('a block shorter than 1 s is healthy', async () => {
    await healthy();
    blockEventLoop(600);
    expect(await get()).toMatchObject({ status: 200 });
  });
});

describe('container health endpoint: a durable queue on a full disk', () => {
  let fs: Tmpfs;
  beforeAll(() => {
    fs = mountTmpfs('1m', 'the health test of a queue on a full disk');
  });
  afterAll(() => {
    fs.unmount();
    rmSync(fs.path, { recursive: true, force: true });
  });

  it('503 naming the queue and ENOSPC while it cannot write, 200 once a write succeeds after space is freed', async ({
    skip,
  }) => {
    if (fs.reason) skip(fs.reason);
    const queue = await start(
      new LocalEventQueue({
        directory: join(fs.path, 'queue'),
        capacity: 100_000,
        maxReceiveCount: 3,
        groups: [],
        log: silentLog,
      }),
    );
    observed.queue({ name: 'audit', queue, destinations: [] });
    await queue.send([auditQueued()]);
    expect(await problems()).toEqual([]);

    const filler = join(fs.path, 'filler');
    const { bavail, bsize } = statfsSync(fs.path);
    writeFileSync(filler, Buffer.alloc(Math.max(0, bavail * bsize - 16 * 1024)));
    let refused: unknown;
    for (let i = 0; i < 200 && refused === undefined; i++) {
      await queue.send(Array.from({ length: 20 }, () => auditQueued())).catch((err: unknown) => (refused = err));
    }
    expect(refused).toBeInstanceOf(QueueStorageError);
    const answer = await get();
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ statusCode: 503, status: 'ko' });
    const [full, ...more] = await problems();
    expect(full).toMatch(
      /^the audit queue cannot write its messages to disk \(ENOSPC\) since \d{4}-\d\d-\d\dT[\d:.]+Z$/,
    );
    expect(more).toEqual([]);
    // No path of the server in a body that any client on the network can read.
    expect(answer.text).not.toContain(fs.path);

    // Still full: still 503. Freed: the next write succeeds and the endpoint is healthy again.
    expect((await get()).status).toBe(503);
    expect(await problems()).toEqual([full]);
    rmSync(filler);
    await queue.send([auditQueued()]);
    expect(await problems()).toEqual([]);
    expect((await healthy()).body).toEqual({ statusCode: 200, status: 'ok' });
  });
});

describe('container health endpoint: forwarding to the cloud', () => {
  it('200 with the forwarding state while SQS cannot be reached and the queue has room; 503 once the queue is full', async () => {
    // A real forwarder to a port where nothing listens: every send is a refused connection.
    const port = await freePort();
    const client = localSqsClient(`http://${LOOPBACK}:${port}`);
    const forwarder = new Forwarder({
      name: 'tsdb',
      queue: new SqsEventQueue({
        client,
        queueUrl: `http://${LOOPBACK}:${port}/000000000000/q`,
        claimCheck: null,
        maxAttempts: 1,
      }),
      takes: () => true,
      log: silentLog,
    });
    const queue = await start(
      new LocalEventQueue({
        directory: mkdtempSync(join(tmpdir(), 'health-fwd-')),
        capacity: 3,
        maxReceiveCount: 3,
        groups: [{ name: 'tsdb', handler: forwarder.handler, batchSize: 10, batchWindowMs: 0 }],
        log: silentLog,
        unavailableBaseMs: 60_000,
      }),
    );
    observed.queue({ name: 'platform', queue, destinations: [forwarder] });
    try {
      await healthy();
      await queue.send([auditQueued(), auditQueued()]);
      await expect.poll(() => queue.stats()['tsdb']?.unavailableSince ?? null).not.toBeNull();
      const answer = await healthy();
      expect(answer.body).toEqual({
        statusCode: 200,
        status: 'ok',
        forwarding: {
          tsdb: {
            state: 'unreachable',
            unreachableSince: new Date(queue.stats()['tsdb']?.unavailableSince ?? 0).toISOString(),
            pendingEvents: 2,
            oldestPendingAgeSeconds: expect.any(Number) as unknown,
          },
        },
      });
      await queue.send([auditQueued()]);
      const full = await get();
      expect(full.status).toBe(503);
      expect(full.body).toMatchObject({
        reason: 'the platform queue is full (3 of 3 events): new events are refused',
        forwarding: { tsdb: { state: 'unreachable', pendingEvents: 3 } },
      });
    } finally {
      client.destroy();
    }
  });
});
