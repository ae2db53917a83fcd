/**
 * The SQS adapter against fauxqs (the local SQS + S3 emulator, started once for this file), sending
 * through Svc's own SQS client (shared/aws/sqs.ts). Every test sends to a queue of its own and reads
 * the messages back with ReceiveMessage (the AWS SDK's client: the far side).
 */
import { randomUUID } from 'node:crypto';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateEnvelope } from '../../../shared/audit/envelope.js';
import { AwsServiceError } from '../../../shared/aws/json-client.js';
import type {
  SendMessageBatchEntry,
  SendMessageBatchInput,
  SendMessageBatchResult,
  SqsApi,
} from '../../../shared/aws/sqs.js';
import { S3ClaimCheckStore } from '../../../shared/queue/claim-check.js';
import { decodeMessage, encodePacked, isClaimCheck, type QueueMessage } from '../../../shared/queue/codec.js';
import type { AuditQueuedEvent, QueuedEvent } from '../../../shared/queue/events.js';
import { SqsEventQueue, type SqsEventQueueOptions, SqsSendError } from '../../../shared/queue/sqs.js';
import { envelope } from '../../support/audit.js';
import { type FauxqsHandle, startFauxqs } from '../../support/fauxqs.js';

const BUCKET = 'svc-claim-checks';
const MiB = 1_048_576;

let fx: FauxqsHandle;
beforeAll(async () => {
  fx = await startFauxqs();
  await fx.createBucket(BUCKET);
});
afterAll(async () => {
  await fx?.stop();
});

/** A queued audit event around a valid envelope; `event` members go into payload.event. */
function queued(event: Record<string, unknown> = { sheetTitle: 'Übersicht — 日本語' }): AuditQueuedEvent {
  const checked = validateEnvelope(
    envelope({ payload: { context: { appId: randomUUID(), user: 'UserDirectory=LAB; UserId=goran' }, event } }),
  );
  if (!checked.ok) throw new Error(`invalid test envelope: ${JSON.stringify(checked.errors)}`);
  return {
    kind: 'audit',
    id: randomUUID(),
    receivedAt: '2026-11-22T10:15:23.001Z',
    meta: { clientIp: '10.1.2.3', clientVersion: '0.3.2' },
    event: checked.envelope,
  };
}

/** A realistic ~2 KB audit event: a selection change with its field details. */
function selectionEvent(): AuditQueuedEvent {
  const details = Array.from({ length: 12 }, (_, i) => ({
    field: `Region ${i}`,
    qSelected: ['Nordics', 'DACH', 'Benelux'],
    qSelectedCount: 3,
    qStateCounts: { qSelected: 3, qOption: 9 },
  }));
  return queued({ selectionTxnId: randomUUID(), details });
}

const newQueue = (attributes?: Record<string, string>) => fx.createQueue(`q-${randomUUID()}`, attributes);
const claimStore = () =>
  new S3ClaimCheckStore({
    client: fx.s3,
    bucket: BUCKET,
    prefix: 'claim-checks/',
    now: () => new Date('2026-11-22T10:00:00Z'),
  });

function sqsQueue(options: Partial<SqsEventQueueOptions> & { queueUrl: string }): SqsEventQueue {
  return new SqsEventQueue({ client: fx.sqsApi, claimCheck: null, baseDelayMs: 10, ...options });
}

/** Every message on the queue (each received once: the visibility timeout outlasts the test). */
async function receiveAll(queueUrl: string): Promise<Message[]> {
  const out: Message[] = [];
  for (;;) {
    const r = await fx.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ['All'],
        VisibilityTimeout: 300,
      }),
    );
    if (!r.Messages || r.Messages.length === 0) return out;
    out.push(...r.Messages);
  }
}

function decode(body: string | undefined): QueueMessage {
  const result = decodeMessage(body ?? '');
  if (!result.ok) throw new Error(result.error);
  return result.message;
}

/** The events of the messages, claim checks resolved from S3. */
async function eventsOf(messages: readonly Message[]): Promise<QueuedEvent[]> {
  const out: QueuedEvent[] = [];
  for (const m of messages) {
    const message = decode(m.Body);
    const inner = isClaimCheck(message) ? decode(await claimStore().get(message.claimCheck)) : message;
    if (isClaimCheck(inner)) throw new Error('a claim check holding a claim check');
    out.push(...inner.events);
  }
  return out;
}

const byId = (a: QueuedEvent, b: QueuedEvent) => a.id.localeCompare(b.id);

/** Asserts that `received` holds each of `sent` exactly once. */
function expectExactlyOnce(received: QueuedEvent[], sent: readonly QueuedEvent[]): void {
  expect(received).toHaveLength(sent.length);
  expect(new Set(received.map((e) => e.id)).size).toBe(sent.length);
  expect([...received].sort(byId)).toEqual([...sent].sort(byId));
}

/** SQS's size of an entry: body plus attribute names, types and values. */
function entryBytes(e: SendMessageBatchEntry): number {
  let n = Buffer.byteLength(e.MessageBody);
  for (const [name, v] of Object.entries(e.MessageAttributes ?? {}))
    n += Buffer.byteLength(name) + Buffer.byteLength(v.DataType) + Buffer.byteLength(v.StringValue);
  return n;
}

type Forward = (input: SendMessageBatchInput) => Promise<SendMessageBatchResult>;
type Hook = (input: SendMessageBatchInput, call: number, forward: Forward) => Promise<SendMessageBatchResult>;

/**
 * The real client behind a wrapper that records the entries of every SendMessageBatch and may pass
 * the call through `hook`. fauxqs has no fault injection, so this is where a failure of the adapter's
 * own retry logic (throttling, a partly failed batch) is simulated; everything else is the
 * emulator's own answer. (The client's HTTP-level retries are tested against a small server that
 * answers like SQS: test/shared/aws/json-client.test.ts.)
 */
function intercept(client: SqsApi, hook?: Hook): { client: SqsApi; calls: SendMessageBatchEntry[][] } {
  const calls: SendMessageBatchEntry[][] = [];
  const forward: Forward = (input) => client.sendMessageBatch(input);
  const sendMessageBatch = (input: SendMessageBatchInput): Promise<SendMessageBatchResult> => {
    calls.push(input.Entries);
    return hook ? hook(input, calls.length, forward) : forward(input);
  };
  return { client: { sendMessageBatch }, calls };
}

/** SQS's answer to a throttled request, as the lean client reports it. */
const throttled = () =>
  new AwsServiceError({
    name: 'ThrottlingException',
    code: 'AWS.SimpleQueueService.RequestThrottled',
    message: 'Rate exceeded',
    status: 400,
    retryable: true,
    fault: 'client',
    operation: 'SQS.SendMessageBatch',
  });

describe('SqsEventQueue on fauxqs', () => {
  it('packs 25 events into 13 messages sent in 2 SendMessageBatch requests, and they all arrive', async () => {
    const queueUrl = await newQueue();
    const events = Array.from({ length: 25 }, () => queued());
    expect(new Set(events.map((e) => Buffer.byteLength(JSON.stringify(e)))).size).toBe(1); // all the same size
    // Room for 2 events per message (attributes `kind`+`events` take < 60 bytes), so 13 messages: 10 + 3 per request.
    const maxMessageBytes = Buffer.byteLength(encodePacked(events.slice(0, 2))) + 60;
    const { client, calls } = intercept(fx.sqsApi);
    const queue = sqsQueue({ client, queueUrl, maxMessageBytes });

    await queue.send(events);

    expect(queue.counters).toEqual({
      requests: 2,
      messages: 13,
      events: 25,
      retries: 0,
      claimChecks: 0,
      unsentEvents: 0,
    });
    expect(calls.map((c) => c.length)).toEqual([10, 3]);
    for (const c of calls) expect(new Set(c.map((e) => e.Id)).size).toBe(c.length);
    const messages = await receiveAll(queueUrl);
    expect(messages).toHaveLength(13);
    for (const m of messages) {
      expect(Buffer.byteLength(m.Body ?? '')).toBeLessThanOrEqual(maxMessageBytes);
      expect(m.MessageAttributes?.['kind']).toMatchObject({ DataType: 'String', StringValue: 'audit' });
      const message = decode(m.Body);
      expect('events' in message && message.events.length).toBe(Number(m.MessageAttributes?.['events']?.StringValue));
    }
    expectExactlyOnce(await eventsOf(messages), events);
  });

  it('measures events per request for 1,000 realistic ~2 KB events', async () => {
    const queueUrl = await newQueue();
    const events = Array.from({ length: 1000 }, selectionEvent);
    const avg = events.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)), 0) / events.length;
    expect(avg).toBeGreaterThan(1800);
    expect(avg).toBeLessThan(2300);
    const { client, calls } = intercept(fx.sqsApi);
    const queue = sqsQueue({ client, queueUrl });

    const started = performance.now();
    await queue.send(events);
    const ms = performance.now() - started;

    const { requests, messages } = queue.counters;
    console.info(
      `1000 events of ~${Math.round(avg)} B: ${messages} messages in ${requests} requests = ${(1000 / requests).toFixed(0)} events/request, ${ms.toFixed(0)} ms`,
    );
    // ~2 MB in messages of up to 1 MiB; two such messages never share a request (1 MiB per batch).
    expect(messages).toBe(2);
    expect(requests).toBe(2);
    for (const c of calls) expect(c.reduce((n, e) => n + entryBytes(e), 0)).toBeLessThanOrEqual(MiB);
    expect(entryBytes(calls[0]?.[0] ?? { Id: 'none', MessageBody: '' })).toBeGreaterThan(MiB - 2 * avg); // the first message is full
    expectExactlyOnce(await eventsOf(await receiveAll(queueUrl)), events);
  });

  it('counts the message attributes toward the message size', async () => {
    // Three events whose packed body is 10 bytes short of the queue's limit: with the attributes
    // (`kind`, `events`: 29 bytes) that message would be refused, so the adapter must split.
    const limit = 2048;
    const [a, b, probe] = [queued({ t: 'a' }), queued({ t: 'b' }), queued({ t: '' })];
    const pad = limit - 10 - Buffer.byteLength(encodePacked([a, b, probe]));
    expect(pad).toBeGreaterThan(0);
    const events = [a, b, queued({ t: 'c'.repeat(pad) })];
    expect(Buffer.byteLength(encodePacked(events))).toBe(limit - 10);
    const queueUrl = await newQueue({ MaximumMessageSize: String(limit) });
    const queue = sqsQueue({ queueUrl, maxMessageBytes: limit });

    await queue.send(events);

    expect(queue.counters).toMatchObject({ messages: 2, events: 3 });
    expectExactlyOnce(await eventsOf(await receiveAll(queueUrl)), events);
  });

  it('keeps each SendMessageBatch within 1 MiB in sum', async () => {
    const queueUrl = await newQueue();
    // ~100 KB events, messages of at most 400,000 bytes: 3 events (~300 KB) per message, 4 messages;
    // 3 messages fit in one request, the 4th would exceed 1 MiB.
    const events = Array.from({ length: 12 }, () => queued({ note: 'n'.repeat(100_000) }));
    const { client, calls } = intercept(fx.sqsApi);
    const queue = sqsQueue({ client, queueUrl, maxMessageBytes: 400_000 });

    await queue.send(events);

    expect(calls.map((c) => c.length)).toEqual([3, 1]);
    for (const c of calls) expect(c.reduce((n, e) => n + entryBytes(e), 0)).toBeLessThanOrEqual(MiB);
    expect(queue.counters).toMatchObject({ requests: 2, messages: 4, events: 12 });
    expectExactlyOnce(await eventsOf(await receiveAll(queueUrl)), events);
  });

  it('claim-checks an event of ~1.5 MiB to S3 and queues the reference', async () => {
    const queueUrl = await newQueue();
    const big = queued({ blob: 'b'.repeat(1.5 * MiB) });
    const events = [queued(), big, queued()];
    const queue = sqsQueue({ queueUrl, claimCheck: claimStore() });

    await queue.send(events);

    expect(queue.counters).toMatchObject({ requests: 1, messages: 3, events: 3, claimChecks: 1 });
    const messages = await receiveAll(queueUrl);
    expect(messages).toHaveLength(3);
    const refs = messages.filter((m) => isClaimCheck(decode(m.Body)));
    expect(refs).toHaveLength(1);
    const ref = refs[0];
    const message = decode(ref?.Body);
    if (!isClaimCheck(message)) throw new Error('expected a claim check');
    expect(message.claimCheck).toMatchObject({ bucket: BUCKET, events: 1 });
    expect(message.claimCheck.key).toMatch(/^claim-checks\/2026\/11\/22\/[0-9a-f-]{36}\.json$/);
    expect(ref?.MessageAttributes?.['events']?.StringValue).toBe('1');
    // The S3 object (read directly, not through the store) holds the packed body of the big event.
    const object = await fx.s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: message.claimCheck.key }));
    const stored = (await object.Body?.transformToString('utf-8')) ?? '';
    expect(stored).toBe(encodePacked([big]));
    expect(Buffer.byteLength(stored)).toBeGreaterThan(1.5 * MiB);
    expectExactlyOnce(await eventsOf(messages), events);
  });

  it('refuses an event too large for SQS when no claim-check store is configured, sending nothing', async () => {
    const queueUrl = await newQueue();
    const queue = sqsQueue({ queueUrl, claimCheck: null });
    await expect(queue.send([queued(), queued({ blob: 'b'.repeat(1.5 * MiB) })])).rejects.toThrow(
      /^1 event\(s\) do not fit in an SQS message \(largest \d+ bytes, at most \d+\) and no claim-check store is configured/,
    );
    expect(queue.counters.requests).toBe(0);
    expect(await receiveAll(queueUrl)).toHaveLength(0);
  });

  it('retries only the entries a SendMessageBatch response names as Failed', async () => {
    const queueUrl = await newQueue();
    const events = Array.from({ length: 25 }, () => queued());
    const maxMessageBytes = Buffer.byteLength(encodePacked(events.slice(0, 2))) + 60;
    const failIds = new Set(['m1', 'm4', 'm7']);
    // First call: send all but three entries for real, then report those three as failed (server side).
    const { client, calls } = intercept(fx.sqsApi, async (input, call, forward) => {
      if (call !== 1) return forward(input);
      const entries = input.Entries;
      const out = await forward({ ...input, Entries: entries.filter((e) => !failIds.has(e.Id)) });
      const synthesized = entries
        .filter((e) => failIds.has(e.Id))
        .map((e) => ({ Id: e.Id, SenderFault: false, Code: 'InternalError', Message: 'simulated' }));
      return { ...out, Failed: [...(out.Failed ?? []), ...synthesized] };
    });
    const queue = sqsQueue({ client, queueUrl, maxMessageBytes });

    await queue.send(events);

    expect(calls.map((c) => c.length)).toEqual([10, 3, 3]);
    const retried = calls[2] ?? [];
    expect(retried.map((e) => e.Id)).toEqual(['m1', 'm4', 'm7']);
    expect(retried.map((e) => e.MessageBody)).toEqual(
      (calls[0] ?? []).filter((e) => failIds.has(e.Id)).map((e) => e.MessageBody),
    );
    expect(queue.counters).toEqual({
      requests: 3,
      messages: 13,
      events: 25,
      retries: 3,
      claimChecks: 0,
      unsentEvents: 0,
    });
    const messages = await receiveAll(queueUrl);
    expect(messages).toHaveLength(13);
    expectExactlyOnce(await eventsOf(messages), events);
  });

  it('backs off and retries after a ThrottlingException', async () => {
    const queueUrl = await newQueue();
    const events = Array.from({ length: 5 }, () => queued());
    const { client, calls } = intercept(fx.sqsApi, (input, call, forward) =>
      call === 1 ? Promise.reject(throttled()) : forward(input),
    );
    const queue = sqsQueue({ client, queueUrl, baseDelayMs: 200 });

    const started = performance.now();
    await queue.send(events);
    const elapsed = performance.now() - started;

    // The first delay is half fixed, half random: 100-200 ms.
    expect(elapsed).toBeGreaterThanOrEqual(95);
    expect(calls).toHaveLength(2);
    expect(calls[1]).toEqual(calls[0]);
    expect(queue.counters).toMatchObject({ requests: 2, messages: 1, events: 5, retries: 1 });
    expectExactlyOnce(await eventsOf(await receiveAll(queueUrl)), events);
  });

  it('gives up after maxAttempts of throttling, naming how many events were not sent', async () => {
    const queueUrl = await newQueue();
    const { client, calls } = intercept(fx.sqsApi, () => Promise.reject(throttled()));
    const queue = sqsQueue({ client, queueUrl, maxAttempts: 3, baseDelayMs: 5 });

    const sent = queue.send(Array.from({ length: 4 }, () => queued()));
    await expect(sent).rejects.toBeInstanceOf(SqsSendError);
    await expect(sent).rejects.toThrow(
      '4 of 4 events were not sent to SQS: ThrottlingException: Rate exceeded (still failing after 3 attempts)',
    );
    expect(calls).toHaveLength(3);
    expect(queue.counters).toMatchObject({ requests: 3, messages: 0, retries: 2, unsentEvents: 4 });
  });

  it('does not retry a sender fault (a message larger than the queue allows) and rejects', async () => {
    // A real fault from the emulator: the queue takes messages of at most 1024 bytes.
    const queueUrl = await newQueue({ MaximumMessageSize: '1024' });
    const queue = sqsQueue({ queueUrl });

    const sent = queue.send(Array.from({ length: 5 }, () => queued()));
    await expect(sent).rejects.toThrow(
      /^5 of 5 events were not sent to SQS: InvalidParameterValue: .*shorter than 1024 bytes/,
    );
    expect(queue.counters).toMatchObject({ requests: 1, messages: 0, retries: 0, unsentEvents: 5 });
    expect(await receiveAll(queueUrl)).toHaveLength(0);
  });

  it('does not retry a request SQS refuses as a whole (no such queue)', async () => {
    const queueUrl = `${await newQueue()}-missing`;
    const queue = sqsQueue({ queueUrl });
    await expect(queue.send([queued()])).rejects.toThrow(/^1 of 1 events were not sent to SQS: QueueDoesNotExist/);
    expect(queue.counters.requests).toBe(1);
  });

  it('sendEach sends what it can and names, per event, what was not sent and whether a later try may succeed', async () => {
    const queueUrl = await newQueue();
    const events = Array.from({ length: 6 }, () => queued());
    const big = queued({ blob: 'b'.repeat(1.5 * MiB) });
    const maxMessageBytes = Buffer.byteLength(encodePacked(events.slice(0, 2))) + 60;
    // m0 is throttled every time (retryable), m1 refused as a sender fault (not retryable), m2 goes through.
    const { client } = intercept(fx.sqsApi, async (input, _call, forward) => {
      const entries = input.Entries;
      const through = entries.filter((e) => e.Id === 'm2');
      const out: SendMessageBatchResult =
        through.length > 0 ? await forward({ ...input, Entries: through }) : { Successful: [], Failed: [] };
      const failed = [
        ...entries
          .filter((e) => e.Id === 'm0')
          .map((e) => ({ Id: e.Id, SenderFault: false, Code: 'ThrottlingException', Message: 'Rate exceeded' })),
        ...entries
          .filter((e) => e.Id === 'm1')
          .map((e) => ({ Id: e.Id, SenderFault: true, Code: 'InvalidMessageContents', Message: 'bad' })),
      ];
      return { ...out, Failed: [...(out.Failed ?? []), ...failed] };
    });
    const queue = sqsQueue({ client, queueUrl, maxMessageBytes, maxAttempts: 2, baseDelayMs: 5 });

    const unsent = await queue.sendEach([...events, big]);

    expect(unsent).toEqual([
      {
        ids: [big.id],
        reason: expect.stringMatching(
          /^1 event\(s\) do not fit in an SQS message .* no claim-check store is configured/,
        ),
        retryable: false,
      },
      { ids: events.slice(2, 4).map((e) => e.id), reason: 'InvalidMessageContents: bad', retryable: false },
      {
        ids: events.slice(0, 2).map((e) => e.id),
        reason: 'ThrottlingException: Rate exceeded (still failing after 2 attempts)',
        retryable: true,
      },
    ]);
    expectExactlyOnce(await eventsOf(await receiveAll(queueUrl)), events.slice(4, 6));
    expect(queue.counters).toMatchObject({ messages: 1, events: 2, unsentEvents: 5 });
  });
});
