/**
 * A real `svc edge` on a host whose clock is 20 minutes behind its cloud: it forwards to an SQS
 * stand-in whose clock is 20 minutes ahead (fauxqs behind test/support/skewed-sqs.ts, which refuses a
 * signature more than 5 minutes from its clock as SQS does). The lean AWS client corrects its clock
 * from the first refusal: every event reaches the queue once, nothing is dead-lettered, one WARN says
 * so and the metrics endpoint shows the offset. The far side plays the writer Lambda
 * (test/support/sqs-consumer.ts) in front of a destination that counts its writes per event id.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatagramGenerator } from '../../../edge-agent/simulate/messages.js';
import { makeWriterHandler } from '../../../shared/destinations/handler.js';
import { type FauxqsHandle, startFauxqs } from '../../support/fauxqs.js';
import { silentLog } from '../../support/log.js';
import { freePort, freeUdpPort, LOOPBACK } from '../../support/ports.js';
import { scrape } from '../../support/prometheus.js';
import { type SkewedSqsFront, startSkewedSqsFront } from '../../support/skewed-sqs.js';
import { CountingDestination, consumeQueue, type QueueConsumer } from '../../support/sqs-consumer.js';
import { logLines, startSvc } from '../../support/svc-process.js';
import { sendDatagrams } from '../../support/udp.js';

const AHEAD_MS = 20 * 60_000;

let fx: FauxqsHandle;
let front: SkewedSqsFront;
let consumer: QueueConsumer;
let destination: CountingDestination;
let dir: string;
let queueUrl: string;

beforeAll(async () => {
  fx = await startFauxqs();
  front = await startSkewedSqsFront(fx.endpoint, AHEAD_MS);
  queueUrl = await fx.createQueue('svc-tsdb');
  destination = new CountingDestination(new Set(['log-event', 'points']));
  consumer = consumeQueue(
    () => fx.sqs,
    () => queueUrl,
    makeWriterHandler({ destination, onlyTakenKinds: true, claimCheck: null, log: silentLog }),
  );
  dir = mkdtempSync(join(tmpdir(), 'svc-clock-skew-'));
}, 60_000);

afterAll(async () => {
  await consumer?.stop();
  await Promise.all([front?.stop(), fx?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('svc edge with a clock 20 minutes behind SQS', () => {
  it('corrects it: every event once on SQS, nothing dead-lettered, one WARN, the offset on the metrics endpoint', async () => {
    const [metricsPort, udpPort] = [await freePort(), await freeUdpPort()];
    writeFileSync(
      join(dir, 'svc.yaml'),
      [
        'Svc:',
        '  localQueue: { directory: queue }',
        `  metricsEndpoint: { enable: true, host: ${LOOPBACK}, port: ${metricsPort} }`,
        '  uptimeMonitor: { enable: false }',
        '  systemInfo: { enable: false }',
        '  tsdbConfig: { enable: true, host: tsdb.example.com, version: 1, v1Config: { dbName: svc } }',
        '  logEvents:',
        `    udpServerConfig: { serverHost: ${LOOPBACK}, portLogEvents: ${udpPort} }`,
        '    source: { engine: { enable: true }, proxy: { enable: true }, repository: { enable: true }, scheduler: { enable: true } }',
        '    sendToTsdb: { enable: true }',
        '  cloud:',
        '    enable: true',
        '    region: us-east-1',
        `    endpoint: ${front.endpoint}`,
        `    queues: { tsdb: "${queueUrl}" }`,
        '',
      ].join('\n'),
    );
    const edge = startSvc(dir, 'edge', {
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_PROFILE: '',
      AWS_CONFIG_FILE: join(dir, 'none'),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
    });
    const metrics = async () => (await scrape(`http://${LOOPBACK}:${metricsPort}/metrics`)).metrics;
    try {
      await expect
        .poll(edge.output, { timeout: 20_000 })
        .toContain(`log_events listener receiving on udp://${LOOPBACK}:${udpPort}`);
      const generator = createDatagramGenerator({ seed: 7, kinds: ['engine', 'proxy', 'repository', 'scheduler'] });
      // In rounds, so that several forwarding deliveries meet the corrected clock.
      for (let round = 0; round < 5; round++) {
        await sendDatagrams(
          udpPort,
          Array.from({ length: 100 }, () => generator.next().data),
        );
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      const processed = async () =>
        (await metrics()).value('svc_udp_datagrams_processed_total', { listener: 'log_events' });
      const written = () => destination.events.filter((e) => e.kind === 'log-event').length;
      await expect.poll(processed, { timeout: 15_000 }).toBeGreaterThan(400);
      await expect
        .poll(
          async () => (await metrics()).value('svc_queue_pending_events', { queue: 'platform', destination: 'tsdb' }),
          {
            timeout: 30_000,
          },
        )
        .toBe(0);
      await expect.poll(written, { timeout: 30_000 }).toBe(await processed());
      expect(destination.duplicates()).toEqual([]);

      const m = await metrics();
      expect(m.value('svc_queue_dead_lettered_messages_total', { queue: 'platform', destination: 'tsdb' })).toBe(0);
      const offset = m.value('svc_aws_clock_offset_seconds');
      expect(offset).toBeGreaterThan(1195);
      expect(offset).toBeLessThan(1205);
      // Refused until the first correction only.
      expect(front.refused).toBeGreaterThanOrEqual(1);
      expect(front.refused).toBeLessThanOrEqual(4); // the forwarder's concurrent requests signed before it
      expect(front.passed).toBeGreaterThan(0);
    } finally {
      edge.child.kill('SIGTERM');
    }
    expect(await edge.exited).toBe(0);
    const deadLetters = join(dir, 'queue', 'platform', 'dead-letters');
    expect(existsSync(deadLetters) ? readdirSync(deadLetters, { recursive: true }) : []).toEqual([]);
    const warnings = logLines(edge.output()).filter((l) => l.level === 'warn' && /clock is/.test(l.msg));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toMatch(/^this host's clock is 1(199|200) s behind AWS's/);
  }, 90_000);
});
