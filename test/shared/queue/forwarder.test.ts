/**
 * The forwarder (shared/queue/forwarder.ts) between a real durable local queue and fauxqs (SQS and
 * S3): what it sends, claim checks, dead letters with their reason, and an SQS that cannot be
 * reached (a stopped emulator: a real refused connection). The far side is the real writer handler,
 * fed by a receive loop that plays the Lambda event source mapping (test/support/sqs-consumer.ts).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { environmentCredentials } from '../../../shared/aws/credentials.js';
import { LeanSqsClient, type SqsApi } from '../../../shared/aws/sqs.js';
import { makeWriterHandler } from '../../../shared/destinations/handler.js';
import { S3ClaimCheckStore } from '../../../shared/queue/claim-check.js';
import type { PointsQueuedEvent } from '../../../shared/queue/events.js';
import { Forwarder } from '../../../shared/queue/forwarder.js';
import { type ConsumerGroup, DEAD_LETTER_DIR, LocalEventQueue } from '../../../shared/queue/local/index.js';
import { SqsEventQueue } from '../../../shared/queue/sqs.js';
import { auditQueued } from '../../support/audit.js';
import { type FauxqsHandle, localSqsClient, startFauxqs } from '../../support/fauxqs.js';
import { recordingLog, silentLog } from '../../support/log.js';
import { freePort } from '../../support/ports.js';
import { CountingDestination, consumeQueue } from '../../support/sqs-consumer.js';

const BUCKET = 'svc-forward-claims';
const MiB = 1_048_576;

let fx: FauxqsHandle;
beforeAll(async () => {
  fx = await startFauxqs();
  await fx.createBucket(BUCKET);
});
afterAll(async () => {
  await fx?.stop();
});

function points(blob = ''): PointsQueuedEvent {
  return {
    kind: 'points',
    id: randomUUID(),
    receivedAt: new Date().toISOString(),
    module: 'TEST',
    points: [
      {
        measurement: 'forward_test',
        tags: { t: 'x' },
        fields: { v: { type: 'int', value: 1 }, ...(blob ? { blob: { type: 'string', value: blob } } : {}) },
        timeNs: '1700000000000000000',
      },
    ],
  };
}

const dir = () => mkdtempSync(join(tmpdir(), 'forwarder-'));

interface Rig {
  queue: LocalEventQueue;
  forwarder: Forwarder;
  destination: CountingDestination;
  stop: () => Promise<void>;
}

/** A local queue whose group `tsdb` forwards `points` events to `queueUrl`; the far side writes them to a CountingDestination. */
async function rig(options: {
  queueUrl: string;
  client?: () => SqsApi;
  farSide?: () => SQSClient;
  bucket?: string | null;
  directory?: string;
  extraGroups?: ConsumerGroup[];
  maxReceiveCount?: number;
  log?: typeof silentLog;
}): Promise<Rig> {
  const client = options.client ?? (() => fx.sqsApi);
  const claimCheck =
    options.bucket === null
      ? null
      : new S3ClaimCheckStore({ client: fx.s3, bucket: options.bucket ?? BUCKET, prefix: 'claim-checks/' });
  const destination = new CountingDestination(new Set(['points']));
  const sqsQueue = new SqsEventQueue({
    client: client(),
    queueUrl: options.queueUrl,
    claimCheck,
    baseDelayMs: 10,
    maxAttempts: 3,
    retryLogLevel: 'debug',
  });
  const forwarder = new Forwarder({
    name: 'tsdb',
    queue: sqsQueue,
    takes: (e) => e.kind === 'points',
    log: options.log ?? silentLog,
  });
  const queue = new LocalEventQueue({
    directory: options.directory ?? dir(),
    capacity: 100_000,
    maxReceiveCount: options.maxReceiveCount ?? 3,
    groups: [
      { name: 'tsdb', handler: forwarder.handler, batchSize: 50, batchWindowMs: 20 },
      ...(options.extraGroups ?? []),
    ],
    log: options.log ?? silentLog,
    retryBaseMs: 10,
    retryCapMs: 40,
    unavailableBaseMs: 50,
    unavailableCapMs: 200,
  });
  await queue.start();
  // The writer Lambda's handler: the same codec, claim checks from the same bucket, only its kinds.
  const handler = makeWriterHandler({
    destination,
    claimCheck: new S3ClaimCheckStore({ client: fx.s3, bucket: BUCKET }),
    log: silentLog,
    onlyTakenKinds: true,
  });
  // The far side (Lambda's event source) receives with the AWS SDK's client.
  const consumer = consumeQueue(options.farSide ?? (() => fx.sqs), () => options.queueUrl, handler);
  return {
    queue,
    forwarder,
    destination,
    stop: async () => {
      await queue.stop();
      await consumer.stop();
    },
  };
}

describe('Forwarder', () => {
  it('sends only the events its destination takes, packed many to a message, and each is written once', async () => {
    const queueUrl = await fx.createQueue(`fwd-${randomUUID()}`);
    // Another group on the same local queue takes everything, as MQTT on the edge would.
    const other: string[] = [];
    const mqtt: ConsumerGroup = {
      name: 'mqtt',
      batchSize: 10,
      batchWindowMs: 0,
      handler: (e) => (other.push(...e.Records.map((x) => x.messageId)), Promise.resolve({ batchItemFailures: [] })),
    };
    const r = await rig({ queueUrl, extraGroups: [mqtt] });
    const sent = Array.from({ length: 300 }, () => points());
    // 15 local messages of 20 events, each with an audit event the destination does not take.
    for (let i = 0; i < sent.length; i += 20) await r.queue.send([auditQueued(), ...sent.slice(i, i + 20)]);
    await expect.poll(() => r.destination.writes.size, { timeout: 10_000 }).toBe(300);
    expect(r.destination.duplicates()).toEqual([]);
    expect([...r.destination.writes.keys()].sort()).toEqual(sent.map((e) => e.id).sort());
    const c = r.forwarder.sqs;
    expect(c.events).toBe(300);
    expect(c.messages).toBeLessThan(c.events / 10);
    expect(c.requests).toBeLessThanOrEqual(c.messages);
    await expect
      .poll(() => r.queue.stats()['tsdb'])
      .toMatchObject({ pending: 0, deadLettered: 0, unavailableSince: null });
    // No audit event reached SQS (the writer handler, onlyTakenKinds, would have failed it), and every message reached the other group.
    expect(r.forwarder.failedWrites).toBe(0);
    await expect.poll(() => other.length).toBe(15);
    await r.stop();
  });

  it('puts an event over 1 MiB in the claim-check bucket; the writer handler fetches it', async () => {
    const queueUrl = await fx.createQueue(`fwd-${randomUUID()}`);
    const r = await rig({ queueUrl });
    const big = points('b'.repeat(1.5 * MiB));
    const small = points();
    await r.queue.send([big]);
    await r.queue.send([small]);
    await expect.poll(() => r.destination.writes.size, { timeout: 10_000 }).toBe(2);
    expect(r.forwarder.sqs.claimChecks).toBe(1);
    const stored = await fx.s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'claim-checks/' }));
    expect(stored.Contents?.some((o) => (o.Size ?? 0) > 1.5 * MiB)).toBe(true);
    const written = r.destination.events.find((e) => e.id === big.id);
    expect(written?.kind === 'points' ? written.points[0]?.fields['blob'] : undefined).toEqual({
      type: 'string',
      value: 'b'.repeat(1.5 * MiB),
    });
    expect(r.destination.duplicates()).toEqual([]);
    await r.stop();
  });

  it('without credentials, keeps the events as during an outage (nothing dead-lettered) and sends them once there are some', async () => {
    const queueUrl = await fx.createQueue(`fwd-${randomUUID()}`);
    // Credentials from an environment without a key, until one is set.
    const env: NodeJS.ProcessEnv = {};
    const client = new LeanSqsClient({
      region: 'us-east-1',
      endpoint: fx.endpoint,
      maxAttempts: 1,
      credentials: environmentCredentials(env),
    });
    const r = await rig({ queueUrl, client: () => client, maxReceiveCount: 1 });
    const sent = Array.from({ length: 20 }, () => points());
    await r.queue.send(sent);
    await expect
      .poll(() => r.queue.stats()['tsdb']?.unavailableReason ?? null, { timeout: 10_000 })
      .toMatch(/^SQS queue of tsdb: CredentialsError: SQS\.SendMessageBatch: no AWS credentials/);
    expect(r.queue.stats()['tsdb']).toMatchObject({ pendingEvents: 20, deadLettered: 0 });
    Object.assign(env, { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' });
    try {
      await expect.poll(() => r.destination.writes.size, { timeout: 10_000 }).toBe(20);
      expect(r.queue.stats()['tsdb']).toMatchObject({ deadLettered: 0 });
    } finally {
      await r.stop();
      client.destroy();
    }
  });

  it('without a claim-check bucket, dead-letters a message over 1 MiB saying why, and forwards the rest', async () => {
    const queueUrl = await fx.createQueue(`fwd-${randomUUID()}`);
    const directory = dir();
    const r = await rig({ queueUrl, bucket: null, directory, maxReceiveCount: 2 });
    const big = points('b'.repeat(1.5 * MiB));
    const small = points();
    await r.queue.send([big]);
    await r.queue.send([small]);
    await expect.poll(() => r.queue.stats()['tsdb']?.deadLettered, { timeout: 10_000 }).toBe(1);
    await expect.poll(() => r.destination.writes.size, { timeout: 10_000 }).toBe(1);
    expect(r.destination.writes.has(small.id)).toBe(true);
    const folder = join(directory, DEAD_LETTER_DIR, 'tsdb');
    const [file] = readdirSync(folder);
    const letter: unknown = JSON.parse(readFileSync(join(folder, file ?? ''), 'utf8'));
    expect(letter).toMatchObject({
      attempts: 2,
      events: 1,
      reason: expect.stringMatching(
        new RegExp(
          `^SQS refused 1 event\\(s\\) for tsdb: 1 event\\(s\\) do not fit in an SQS message \\(largest \\d+ bytes, at most \\d+\\) and no claim-check store is configured: ${big.id}$`,
        ),
      ),
    });
    await r.stop();
  });

  it('while SQS cannot be reached, keeps the events without counting a receive, and drains them oldest first when it is back', async () => {
    // An emulator of its own, on a port it is restarted on: stopped, its clients get ECONNREFUSED.
    const port = await freePort();
    let emulator = await startFauxqs({ port });
    const name = `fwd-${randomUUID()}`;
    const queueUrl = await emulator.createQueue(name);
    await emulator.stop();
    const client = localSqsClient(`http://127.0.0.1:${port}`);
    const { log, lines } = recordingLog();
    let farSide = new SQSClient({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    const stoppedFarSide = farSide;
    // maxReceiveCount 1: a single counted receive would dead-letter a message.
    const r = await rig({ queueUrl, client: () => client, farSide: () => farSide, maxReceiveCount: 1, log });
    const sent = Array.from({ length: 100 }, () => points());
    for (let i = 0; i < sent.length; i += 10) await r.queue.send(sent.slice(i, i + 10));
    await expect.poll(() => r.queue.stats()['tsdb']?.unavailableSince ?? null, { timeout: 10_000 }).not.toBeNull();
    expect(r.queue.stats()['tsdb']?.unavailableReason).toMatch(
      /^SQS queue of tsdb: .*ECONNREFUSED.*\(still failing after 3 attempts\)$/,
    );
    await new Promise((resolve) => setTimeout(resolve, 500)); // several paused tries
    expect(r.queue.stats()['tsdb']).toMatchObject({ pendingEvents: 100, deadLettered: 0 });

    emulator = await startFauxqs({ port });
    farSide = emulator.sqs;
    expect(await emulator.createQueue(name)).toBe(queueUrl);
    try {
      await expect.poll(() => r.destination.writes.size, { timeout: 10_000 }).toBe(100);
      // Oldest first: the events reach the destination in the order they were queued.
      expect(r.destination.events.map((e) => e.id)).toEqual(sent.map((e) => e.id));
      expect(r.destination.duplicates()).toEqual([]);
      await expect
        .poll(() => r.queue.stats()['tsdb'])
        .toMatchObject({ pending: 0, deadLettered: 0, unavailableSince: null });
      expect(lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
        expect.stringMatching(/^destination tsdb is not taking events \(SQS queue of tsdb: .*ECONNREFUSED/),
      ]);
      expect(lines.filter((l) => l.level === 'info' && l.msg.includes('takes events again'))).toHaveLength(1);
      expect(lines.filter((l) => l.level === 'error')).toEqual([]);
    } finally {
      await r.stop();
      client.destroy();
      stoppedFarSide.destroy();
      await emulator.stop();
    }
  });
});
