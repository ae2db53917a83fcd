/**
 * The pollers' way into the platform pipeline: successful polls become `health` / `user-sessions`
 * events on the real durable queue, decoded by its consumer with the queue codec, with the point
 * times reserved from the process's clock; gating by platformOutputs; a refused enqueue is retried
 * and tracked as the UDP batcher's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { POLL_BATCHER_EVENTS, QueuePollSink } from '../../../../edge-agent/sources/platform/queue-sink.js';
import { healthPoints, sessionPoints as tsdbSessionPoints } from '../../../../shared/destinations/tsdb/mappers.js';
import { ErrorTracker, type TrackedError } from '../../../../shared/errors/tracker.js';
import type { HealthSample, SessionSample } from '../../../../shared/platform/polled.js';
import { decodeMessage, isClaimCheck } from '../../../../shared/queue/codec.js';
import type { QueuedEvent } from '../../../../shared/queue/events.js';
import { LocalEventQueue } from '../../../../shared/queue/local/index.js';
import { nthPointTime, PointClock } from '../../../../shared/queue/point-clock.js';
import { recordingLog } from '../../../support/log.js';
import { RecordingQueue } from '../../../support/udp.js';

const TAGS = { host: 'node1', server_name: 'node1', server_description: '', site: 'lab' };
const health: HealthSample = {
  serverName: 'node1',
  tags: TAGS,
  body: {
    version: '12.1306.0',
    started: '20240312T081512.000+0100',
    mem: { committed: 4213.6, allocated: 4577.3, free: 27890.4 },
    apps: {
      active_docs: ['a'],
      in_memory_docs: ['a', 'SessionApp_1'],
      loaded_docs: ['a'],
      calls: 15234,
      selections: 812,
    },
    cpu: { total: 7.5 },
    session: { active: 3, total: 12 },
    users: { active: 2, total: 9 },
    cache: { hits: 1290, lookups: 1720, added: 430, replaced: 12, bytes_added: 52428800 },
    saturated: false,
  },
  uptime: '2 days, 3h 05m 09s',
  docNames: {
    active: { names: ['Sales'], sessionApps: [] },
    loaded: { names: ['Sales'], sessionApps: [] },
    inMemory: { names: ['Sales'], sessionApps: ['SessionApp_1'] },
  },
};
const sessions: SessionSample = {
  serverName: 'node1',
  tags: { ...TAGS, user_session_virtual_proxy: '/', user_session_host: 'node1:4243' },
  virtualProxy: '/',
  sessions: [
    { UserDirectory: 'LAB', UserId: 'goran', SessionId: 's1', Attributes: [] },
    { UserDirectory: 'LAB', UserId: 'anna', SessionId: 's2' },
    { UserDirectory: 'LAB', UserId: 'goran', SessionId: 's3' },
  ],
  userIdList: 'LAB\\goran,LAB\\anna',
};

const ALL = { tsdb: true, mqtt: false, monsaas: false, store: false };
const NONE = { tsdb: false, mqtt: false, monsaas: false, store: false };
let dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

/** The real durable queue with one consumer that decodes each message body with the queue codec. */
async function durableQueue() {
  const directory = mkdtempSync(join(tmpdir(), 'svc-poll-queue-'));
  dirs.push(directory);
  const delivered: QueuedEvent[] = [];
  const queue = new LocalEventQueue({
    directory,
    capacity: 100,
    maxReceiveCount: 1,
    log: recordingLog().log,
    groups: [
      {
        name: 'recorder',
        batchSize: 10,
        batchWindowMs: 0,
        handler: (e) => {
          for (const record of e.Records) {
            const decoded = decodeMessage(record.body);
            if (!decoded.ok) throw new Error(decoded.error);
            if (!isClaimCheck(decoded.message)) delivered.push(...decoded.message.events);
          }
          return Promise.resolve({ batchItemFailures: [] });
        },
      },
    ],
  });
  await queue.start();
  return { queue, delivered };
}

function tracker() {
  const tracked: TrackedError[] = [];
  const { log, lines } = recordingLog();
  return { errors: new ErrorTracker({ enabled: true, log, sink: (e) => tracked.push(e) }), tracked, log, lines };
}

describe('QueuePollSink', () => {
  it('enqueues one event per successful poll that decodes with the queue codec, carrying the first of its reserved point times', async () => {
    const { queue, delivered } = await durableQueue();
    const { errors, log } = tracker();
    const clock = new PointClock(41);
    const sink = new QueuePollSink({ queue, outputs: { health: ALL, sessions: ALL }, clock, errors, log });
    for (const c of sink.components) await c.start();
    const at = Date.UTC(2024, 2, 12, 10, 0, 0, 123);
    sink.health(health, at);
    sink.sessions(sessions, at + 1);
    sink.healthFailed();
    sink.sessionsFailed();
    await expect.poll(() => delivered.length, { timeout: 5_000 }).toBe(2);
    for (const c of sink.components) await c.stop();
    await queue.stop();

    const [h, s] = [delivered.find((e) => e.kind === 'health'), delivered.find((e) => e.kind === 'user-sessions')];
    expect(h).toMatchObject({
      kind: 'health',
      receivedAt: '2024-03-12T10:00:00.123Z',
      timeNs: `${at}000041`,
      sample: health,
    });
    expect(s).toMatchObject({
      kind: 'user-sessions',
      receivedAt: '2024-03-12T10:00:00.124Z',
      timeNs: `${at + 1}000049`,
      sample: sessions,
    });
    expect(h?.id).not.toBe(s?.id);
    // The tsdb mapper builds 8 points from the health sample (41…48) and 1 + 3 from the sessions
    // (49…52): exactly the counter values reserved, so the clock goes on at 53.
    if (h?.kind !== 'health' || s?.kind !== 'user-sessions') throw new Error('both events were delivered');
    expect(
      healthPoints(h, { activeDocs: false, loadedDocs: false, inMemoryDocs: false }).map((p) => p.timeNs % 1_000_000n),
    ).toEqual([41n, 42n, 43n, 44n, 45n, 46n, 47n, 48n]);
    expect(tsdbSessionPoints(s).map((p) => p.timeNs % 1_000_000n)).toEqual([49n, 50n, 51n, 52n]);
    expect(clock.next(at)).toBe(BigInt(`${at}000053`));
    expect(nthPointTime(BigInt(h?.kind === 'health' ? h.timeNs : '0'), 7)).toBe(BigInt(`${at}000048`));
  });

  it('enqueues only the kinds some destination takes (§0.6)', async () => {
    const queue = new RecordingQueue();
    const { errors, log } = tracker();
    const sink = new QueuePollSink({
      queue,
      outputs: { health: NONE, sessions: { tsdb: false, mqtt: true, monsaas: false, store: false } },
      clock: new PointClock(),
      errors,
      log,
    });
    expect(sink.components.map((c) => c.name)).toEqual(['event batcher (user-sessions)']);
    for (const c of sink.components) await c.start();
    sink.health(health, Date.now());
    sink.sessions(sessions, Date.now());
    await expect.poll(() => queue.events.length).toBe(1);
    for (const c of sink.components) await c.stop();
    expect(queue.events[0]?.kind).toBe('user-sessions');
  });

  it("keeps a poll the queue refuses and writes it once the queue takes it again; the refusal is tracked like the UDP batcher's", async () => {
    const queue = new RecordingQueue();
    queue.refuse = true;
    const { errors, tracked, log, lines } = tracker();
    const sink = new QueuePollSink({
      queue,
      outputs: { health: ALL, sessions: ALL },
      clock: new PointClock(),
      errors,
      log,
      retryDelayMs: 20,
    });
    for (const c of sink.components) await c.start();
    sink.health(health, Date.now());
    sink.sessions(sessions, Date.now());
    await expect.poll(() => tracked.length).toBeGreaterThanOrEqual(2);
    expect(tracked.find((t) => t.type === 'HEALTH_API')).toMatchObject({
      module: 'HEALTH_METRICS',
      category: 'unknown',
    });
    expect(tracked.find((t) => t.type === 'PROXY_API')).toMatchObject({ module: 'PROXY_SESSIONS' });
    expect(lines.filter((l) => l.level === 'error').map((l) => l.msg)).toContain(
      'the event queue refused 1 health event(s); they stay buffered and are retried (new polls are dropped, counted, while the buffer is full)',
    );
    queue.refuse = false;
    await expect.poll(() => queue.events.length).toBe(2);
    for (const c of sink.components) await c.stop();
  });

  it('drops a poll (counted, WARN at most once a minute) when its batcher is full because the queue has refused writes for long', async () => {
    const queue = new RecordingQueue();
    queue.refuse = true;
    const { errors, log, lines } = tracker();
    const sink = new QueuePollSink({
      queue,
      outputs: { health: ALL, sessions: NONE },
      clock: new PointClock(),
      errors,
      log,
      retryDelayMs: 60_000,
    });
    for (const c of sink.components) await c.start();
    for (let i = 0; i < POLL_BATCHER_EVENTS + 5; i++) sink.health(health, Date.now());
    expect(sink.dropped).toBe(5);
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
      'event batcher (health) is full (1000 polls wait for the event queue): a health poll of node1 is dropped (1 so far)',
    ]);
    queue.refuse = false;
    for (const c of sink.components) await c.stop();
    expect(queue.events).toHaveLength(POLL_BATCHER_EVENTS);
  });
});
