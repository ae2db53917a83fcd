/**
 * `svc edge` forwarding to the cloud (Svc.cloud), end to end: a real `svc edge` child process fed by
 * real UDP datagrams forwards its tsdb destination's events to a fauxqs queue. On the far side the
 * test's receive loop plays the Lambda event source mapping (none exists locally) and hands each
 * batch to the real writer handler (makeWriterHandler, as functions/writers/lambda.ts builds it:
 * claim checks from the bucket, only the destination's kinds), in front of a destination that
 * counts its writes per event id (test/support/sqs-consumer.ts).
 *
 * The outage is real: the emulator is stopped (svc edge's requests are refused) and started again on
 * the same port. fauxqs keeps its state in memory only, so before it is stopped everything that
 * reached it is drained, and after the restart its queue and bucket are created again (same URL).
 *
 * The cases run in order on one emulator and one working directory: load, a 30 s outage, then
 * `kill -9` during a second outage.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatagramGenerator, DEFAULT_START_MS } from '../../../edge-agent/simulate/messages.js';
import { parseConfigText } from '../../../shared/config/load.js';
import { makeWriterHandler } from '../../../shared/destinations/handler.js';
import { cloudWriterDestination } from '../../../shared/destinations/registry.js';
import { ErrorTracker } from '../../../shared/errors/tracker.js';
import { S3ClaimCheckStore } from '../../../shared/queue/claim-check.js';
import { scanRecords } from '../../../shared/queue/local/append-log.js';
import { parseMessageRecord } from '../../../shared/queue/local/records.js';
import { PointClock } from '../../../shared/queue/point-clock.js';
import { captureLog } from '../../support/audit.js';
import { type FauxqsHandle, startFauxqs } from '../../support/fauxqs.js';
import { silentLog } from '../../support/log.js';
import { freePort, freeUdpPort, LOOPBACK, sleep } from '../../support/ports.js';
import { scrape } from '../../support/prometheus.js';
import { CountingDestination, consumeQueue, type QueueConsumer } from '../../support/sqs-consumer.js';
import { logLines, type SvcProcess, startSvc } from '../../support/svc-process.js';
import { eventually, sendDatagrams } from '../../support/udp.js';

const QUEUE = 'svc-tsdb';
const BUCKET = 'svc-claim-checks';

let fauxPort: number;
let fx: FauxqsHandle;
let queueUrl: string;
let cwd: string;
let ports: { metrics: number; health: number; udp: number };
let destination: CountingDestination;
let consumer: QueueConsumer;
let edge: SvcProcess | undefined;
const generator = createDatagramGenerator({
  seed: 13,
  kinds: ['engine', 'proxy', 'repository', 'scheduler'],
  malformed: 0,
  startMs: DEFAULT_START_MS,
  stepMs: 1,
});

async function startEmulator(): Promise<void> {
  fx = await startFauxqs({ port: fauxPort });
  await fx.createBucket(BUCKET);
  const url = await fx.createQueue(QUEUE);
  if (queueUrl !== undefined) expect(url).toBe(queueUrl); // the restarted emulator's queue is where svc edge sends
  queueUrl = url;
}

function writeConfig(): void {
  writeFileSync(
    join(cwd, 'svc.yaml'),
    [
      'Svc:',
      '  localQueue: { directory: queue, udpEventCapacity: 100000 }',
      `  metricsEndpoint: { enable: true, host: ${LOOPBACK}, port: ${ports.metrics} }`,
      `  containerHealthCheck: { enable: true, port: ${ports.health} }`,
      '  uptimeMonitor: { enable: false }',
      '  systemInfo: { enable: false }',
      // Forwarded, so never contacted by svc edge: the writer Lambda would write it.
      '  tsdbConfig: { enable: true, host: tsdb.example.com, version: 1, v1Config: { dbName: svc } }',
      '  logEvents:',
      `    udpServerConfig: { serverHost: ${LOOPBACK}, portLogEvents: ${ports.udp}, messageQueue: { maxConcurrent: 50, maxSize: 20000 } }`,
      '    source: { engine: { enable: true }, proxy: { enable: true }, repository: { enable: true }, scheduler: { enable: true } }',
      '    sendToTsdb: { enable: true }',
      '  cloud:',
      '    enable: true',
      '    region: us-east-1',
      `    endpoint: http://${LOOPBACK}:${fauxPort}`,
      `    queues: { tsdb: "${queueUrl}" }`,
      `    claimCheck: { bucket: ${BUCKET} }`,
      '',
    ].join('\n'),
  );
}

async function startEdge(): Promise<SvcProcess> {
  // The emulator takes any credentials; the SDK's default chain finds these in the environment.
  const svc = startSvc(cwd, 'edge', {
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_PROFILE: '',
    AWS_CONFIG_FILE: join(cwd, 'none'),
    AWS_SHARED_CREDENTIALS_FILE: join(cwd, 'none'),
  });
  await eventually(
    () => svc.output().includes(`log_events listener receiving on udp://${LOOPBACK}:${ports.udp}`),
    20_000,
    `svc edge to start (output: ${svc.output().slice(-2000)})`,
  );
  return svc;
}

const metrics = async () => (await scrape(`http://${LOOPBACK}:${ports.metrics}/metrics`)).metrics;
/** Log events svc edge queued (processed, none failed: the datagrams are well-formed). */
const processed = async () => (await metrics()).value('svc_udp_datagrams_processed_total', { listener: 'log_events' });
const pendingTsdb = async () =>
  (await metrics()).value('svc_queue_pending_events', { queue: 'platform', destination: 'tsdb' });
const logEventsWritten = () => destination.events.filter((e) => e.kind === 'log-event').length;

/** Sends `count` datagrams at about `perSecond`, in slices of a tenth of a second. */
async function sendPaced(count: number, perSecond: number): Promise<void> {
  const slice = Math.max(1, Math.round(perSecond / 10));
  for (let sent = 0; sent < count; sent += slice) {
    const started = Date.now();
    const payloads = Array.from({ length: Math.min(slice, count - sent) }, () => generator.next().data);
    await sendDatagrams(ports.udp, payloads, { inFlight: 256 });
    await sleep(Math.max(0, 100 - (Date.now() - started)));
  }
}

/** Everything svc edge queued is on SQS and written (so stopping the emulator loses nothing of it). */
async function drained(): Promise<void> {
  await expect.poll(pendingTsdb, { timeout: 30_000 }).toBe(0);
  const queued = await processed();
  await expect.poll(logEventsWritten, { timeout: 30_000 }).toBe(queued);
}

/**
 * Events the local queue's files hold for `group` and its ack log does not settle: what a restart
 * recovers (journal.ts format: framed records {s: seq, n: events} in segment files, "a"/"d" lines).
 */
function pendingOnDisk(directory: string, group: string): number {
  const settled = new Set<number>();
  const acks = join(directory, `acks-${group}.log`);
  if (existsSync(acks)) {
    for (const line of scanRecords(readFileSync(acks)).payloads) {
      const m = /^[ad] (\d+)$/.exec(line);
      if (m) settled.add(Number(m[1]));
    }
  }
  let events = 0;
  for (const file of readdirSync(directory).filter((f) => f.startsWith('segment-'))) {
    for (const payload of scanRecords(readFileSync(join(directory, file))).payloads) {
      const record = parseMessageRecord(payload);
      if (record === null) throw new Error(`not a journal record: ${payload.slice(0, 80)}`);
      if (!settled.has(record.seq)) events += record.events;
    }
  }
  return events;
}

function expectEachOnce(): void {
  expect(destination.duplicates()).toEqual([]);
}

async function health(): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`http://${LOOPBACK}:${ports.health}/health`);
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  fauxPort = await freePort();
  ports = { metrics: await freePort(), health: await freePort(), udp: await freeUdpPort() };
  cwd = mkdtempSync(join(tmpdir(), 'svc-forward-'));
  await startEmulator();
  writeConfig();
  // Every kind the tsdb destination takes in this config (log events, the edge's points).
  destination = new CountingDestination(new Set(['log-event', 'user-event', 'points', 'health', 'user-sessions']));
  const handler = makeWriterHandler({
    destination,
    onlyTakenKinds: true,
    claimCheck: new S3ClaimCheckStore({ client: fx.s3, bucket: BUCKET }),
    log: silentLog,
  });
  consumer = consumeQueue(
    () => fx.sqs,
    () => queueUrl,
    handler,
  );
  edge = await startEdge();
}, 60_000);

afterAll(async () => {
  edge?.child.kill('SIGKILL');
  await consumer?.stop();
  await fx?.stop();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

describe('svc edge forwarding to SQS (fauxqs)', () => {
  it('forwards a few thousand datagrams/s, packed: every event once, far fewer SQS requests than events', async () => {
    const sent = 9_000;
    await sendPaced(sent, 3_000);
    const m = await metrics();
    const dropped = m
      .series('svc_udp_datagrams_dropped_total', { listener: 'log_events' })
      .reduce((n, s) => n + s.value, 0);
    expect(m.value('svc_udp_datagrams_received_total', { listener: 'log_events' }) + dropped).toBeLessThanOrEqual(sent);
    await drained();
    expect(logEventsWritten()).toBe(await processed());
    expect(logEventsWritten()).toBeGreaterThan(sent * 0.9); // loopback UDP: nearly nothing lost before the listener
    expectEachOnce();

    const after = await metrics();
    const events = after.value('svc_forward_events_total', { destination: 'tsdb' });
    const messages = after.value('svc_forward_sqs_messages_total', { destination: 'tsdb' });
    const requests = after.value('svc_forward_sqs_requests_total', { destination: 'tsdb' });
    expect(events).toBeGreaterThanOrEqual(logEventsWritten());
    expect(events / messages).toBeGreaterThan(10);
    expect(requests).toBeLessThan(events / 10);
    expect(after.value('svc_forward_unreachable', { destination: 'tsdb' })).toBe(0);
    expect(consumer.received.messages).toBe(messages);
    // The writer Lambda built from the same config (cloudWriterDestination) takes every event forwarded.
    const { config } = parseConfigText(readFileSync(join(cwd, 'svc.yaml'), 'utf8'), 'svc.yaml', {});
    const { logger } = await captureLog('info');
    const lambdaDestination = cloudWriterDestination(
      { config, logger, errors: new ErrorTracker({ enabled: false, log: logger }), clock: new PointClock() },
      'tsdb',
    );
    expect(destination.events.filter((e) => !lambdaDestination?.takes(e))).toEqual([]);
    expect(await health()).toEqual({
      status: 200,
      body: {
        statusCode: 200,
        status: 'ok',
        forwarding: { tsdb: { state: 'ok', unreachableSince: null, pendingEvents: 0, oldestPendingAgeSeconds: 0 } },
      },
    });
  }, 60_000);

  it('keeps 5,000 datagrams through a 30 s outage of SQS, reports it, and delivers each once when SQS is back', async () => {
    await drained();
    const before = { written: logEventsWritten(), processed: await processed() };
    await fx.stop();
    const outageStarted = Date.now();

    await sendPaced(2_500, 2_500);
    await expect
      .poll(async () => (await metrics()).value('svc_forward_unreachable', { destination: 'tsdb' }), {
        timeout: 15_000,
      })
      .toBe(1);
    const pendingEarly = await pendingTsdb();
    await sendPaced(2_500, 2_500);
    await expect.poll(async () => (await processed()) - before.processed, { timeout: 15_000 }).toBeGreaterThan(4_500);
    const queued = (await processed()) - before.processed;
    await expect.poll(pendingTsdb, { timeout: 15_000 }).toBe(queued);
    expect(queued).toBeGreaterThan(pendingEarly); // the local queue grew while SQS was away
    const m = await metrics();
    expect(m.value('svc_queue_oldest_pending_age_seconds', { queue: 'platform', destination: 'tsdb' })).toBeGreaterThan(
      0,
    );
    expect(m.value('svc_queue_dead_lettered_messages_total', { queue: 'platform', destination: 'tsdb' })).toBe(0);
    // An unreachable cloud alone is not unhealthy (the local queue is doing its job): 200, with the state.
    const h = await health();
    expect(h).toMatchObject({
      status: 200,
      body: {
        status: 'ok',
        forwarding: {
          tsdb: { state: 'unreachable', pendingEvents: queued, unreachableSince: expect.stringMatching(/^\d{4}-/) },
        },
      },
    });
    expect(logEventsWritten()).toBe(before.written);

    await sleep(Math.max(0, outageStarted + 30_000 - Date.now()));
    await startEmulator();
    await expect.poll(logEventsWritten, { timeout: 60_000, interval: 200 }).toBe(before.written + queued);
    expectEachOnce();
    await expect
      .poll(async () => (await metrics()).value('svc_forward_unreachable', { destination: 'tsdb' }), { timeout: 5_000 })
      .toBe(0);
    await expect.poll(pendingTsdb).toBe(0);

    const lines = logLines(edge?.output() ?? '');
    expect(
      lines.filter((l) => l.level === 'warn' && l.msg.startsWith('destination tsdb is not taking events')),
    ).toHaveLength(1);
    expect(lines.filter((l) => l.level === 'info' && l.msg.startsWith('destination tsdb takes events again'))).toEqual([
      expect.objectContaining({
        msg: expect.stringMatching(
          /^destination tsdb takes events again after \d+(\.\d)? s; \d+ event\(s\) were waiting/,
        ),
      }),
    ]);
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
  }, 120_000);

  it('after kill -9 of svc edge during an outage and a restart, still delivers every event it had queued, once', async () => {
    await drained();
    const before = { written: logEventsWritten(), processed: await processed() };
    await fx.stop();
    await sendPaced(2_000, 2_000);
    // Acknowledged = durable: the listener processed them and they are all on disk in the local queue.
    await expect.poll(async () => (await processed()) - before.processed, { timeout: 15_000 }).toBeGreaterThan(1_800);
    const queued = (await processed()) - before.processed;
    await expect.poll(pendingTsdb, { timeout: 15_000 }).toBe(queued);
    // The pending count includes appends whose group commit is still being written; what kill -9
    // leaves is what is in the files: wait until every queued event is there.
    await expect.poll(() => pendingOnDisk(join(cwd, 'queue', 'platform'), 'tsdb'), { timeout: 15_000 }).toBe(queued);

    const killed = edge;
    killed?.child.kill('SIGKILL');
    expect(await killed?.exited).toBeNull();
    edge = await startEdge();
    expect(edge.output()).toMatch(new RegExp(`event queue recovered ${queued} undelivered event\\(s\\) from disk`));
    await startEmulator();
    await expect.poll(logEventsWritten, { timeout: 60_000, interval: 200 }).toBe(before.written + queued);
    expectEachOnce();
    await expect.poll(pendingTsdb).toBe(0);
  }, 120_000);
});

describe('svc local with Svc.cloud', () => {
  it('does not forward: it logs one WARN saying so', async () => {
    const local = mkdtempSync(join(tmpdir(), 'svc-local-cloud-'));
    try {
      writeFileSync(
        join(local, 'svc.yaml'),
        [
          'Svc:',
          '  localQueue: { directory: queue }',
          '  uptimeMonitor: { enable: false }',
          '  systemInfo: { enable: false }',
          '  cloud: { enable: true, region: eu-west-1, queues: { tsdb: "https://sqs.eu-west-1.amazonaws.com/123456789012/svc-tsdb" } }',
          '',
        ].join('\n'),
      );
      const svc = startSvc(local, 'local');
      await eventually(
        () => svc.output().includes('svc local 15') || svc.child.exitCode !== null,
        20_000,
        'svc local to start',
      );
      svc.child.kill('SIGTERM');
      expect(await svc.exited).toBe(0);
      const lines = logLines(svc.output());
      expect(lines.filter((l) => l.msg.includes('does not forward')).map((l) => `${l.level} ${l.msg}`)).toEqual([
        'warn Svc.cloud.enable is true, but svc local does not forward to the cloud: it writes every destination itself (forwarding is for svc edge)',
      ]);
      expect(lines.some((l) => l.msg.includes('forwarded to the cloud'))).toBe(false);
    } finally {
      rmSync(local, { recursive: true, force: true });
    }
  }, 30_000);
});
