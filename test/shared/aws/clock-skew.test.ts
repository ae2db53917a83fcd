/**
 * The lean AWS client's clock-skew correction (shared/aws/clock-skew.ts, json-client.ts) against a
 * real SQS stand-in whose clock is 20 minutes ahead: fauxqs behind a front that refuses a signature
 * more than 5 minutes from its clock, as SQS does (test/support/skewed-sqs.ts). The events are read
 * back from fauxqs with the SDK's own client.
 */
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsClock, isClockSkewRefusal } from '../../../shared/aws/clock-skew.js';
import { AwsServiceError } from '../../../shared/aws/json-client.js';
import { LeanSqsClient } from '../../../shared/aws/sqs.js';
import { isRetryableError } from '../../../shared/queue/sqs.js';
import { type FauxqsHandle, startFauxqs } from '../../support/fauxqs.js';
import { recordingLog } from '../../support/log.js';
import { type RecordingServer, startRecordingServer } from '../../support/recording-http.js';
import { type SkewedSqsFront, startSkewedSqsFront } from '../../support/skewed-sqs.js';

const AHEAD_MS = 20 * 60_000;
const KEYS = () => Promise.resolve({ accessKeyId: 'local', secretAccessKey: 'local' });

let fx: FauxqsHandle;
let front: SkewedSqsFront;
let plain: RecordingServer;
const clients: LeanSqsClient[] = [];

beforeAll(async () => {
  fx = await startFauxqs();
  front = await startSkewedSqsFront(fx.endpoint, AHEAD_MS);
  plain = await startRecordingServer();
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await Promise.all([front?.stop(), fx?.stop(), plain?.stop()]);
});

function client(clock: AwsClock, endpoint = front.endpoint): LeanSqsClient {
  const made = new LeanSqsClient({ region: 'us-east-1', credentials: KEYS, endpoint, maxAttempts: 1, clock });
  clients.push(made);
  return made;
}

async function received(queueUrl: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const out = await fx.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }));
    if (!out.Messages?.length) return bodies;
    bodies.push(...out.Messages.map((m) => m.Body ?? ''));
  }
}

/** A new queue, and a client on a clock of its own whose WARN lines are kept, sending to the skewed front. */
async function skewedSetup(queue: string) {
  const queueUrl = await fx.createQueue(queue);
  const clock = new AwsClock();
  const { log, lines } = recordingLog();
  clock.reportTo(log);
  return { queueUrl, clock, sqs: client(clock), lines };
}

describe('a skewed clock', () => {
  it('is corrected from the refusal: the call signs again at once (one attempt allowed), and later calls are signed right', async () => {
    const { queueUrl, clock, sqs, lines } = await skewedSetup('skew-once');
    const before = { refused: front.refused, passed: front.passed };

    const first = await sqs.sendMessageBatch({ QueueUrl: queueUrl, Entries: [{ Id: 'a', MessageBody: 'one' }] });
    expect(first.Successful).toEqual([{ Id: 'a' }]);
    expect(front.refused - before.refused).toBe(1);
    expect(Math.abs(clock.offsetMs - AHEAD_MS)).toBeLessThan(5_000);

    for (const body of ['two', 'three'])
      await sqs.sendMessageBatch({ QueueUrl: queueUrl, Entries: [{ Id: 'b', MessageBody: body }] });
    // Refused once in all; every message on the queue once.
    expect(front.refused - before.refused).toBe(1);
    expect(front.passed - before.passed).toBe(3);
    expect((await received(queueUrl)).sort()).toEqual(['one', 'three', 'two']);

    // One WARN, naming the offset (a Date header has whole seconds: 1199 or 1200).
    const warnings = lines.filter((l) => l.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toMatch(/clock is 1(199|200) s behind AWS's/);
  });

  it('concurrent calls refused at once share one correction and one WARN', async () => {
    const { queueUrl, sqs, lines } = await skewedSetup('skew-concurrent');
    const results = await Promise.all(
      ['a', 'b', 'c', 'd'].map((id) =>
        sqs.sendMessageBatch({ QueueUrl: queueUrl, Entries: [{ Id: id, MessageBody: id }] }),
      ),
    );
    expect(results.map((r) => r.Successful.length)).toEqual([1, 1, 1, 1]);
    expect((await received(queueUrl)).sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
  });

  it('a correction made before the log is known is reported when it is (the secret fetch at start)', async () => {
    const queueUrl = await fx.createQueue('skew-late-log');
    const clock = new AwsClock();
    await client(clock).sendMessageBatch({ QueueUrl: queueUrl, Entries: [{ Id: 'a', MessageBody: 'x' }] });
    const { log, lines } = recordingLog();
    clock.reportTo(log);
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
  });

  /** A send to the plain server answering every request with an InvalidSignatureException saying `message`. */
  async function refusedWith(message: string): Promise<unknown> {
    plain.reset();
    plain.setFallback({
      status: 400,
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-query-error': 'InvalidSignatureException;Sender',
      },
      body: JSON.stringify({ __type: 'com.amazon.coral.service#InvalidSignatureException', message }),
    });
    const clock = new AwsClock();
    const err = await client(clock, plain.url)
      .sendMessageBatch({ QueueUrl: `${plain.url}/000000000000/q`, Entries: [{ Id: 'a', MessageBody: 'x' }] })
      .catch((e: unknown) => e);
    expect(plain.requests).toHaveLength(1);
    expect(clock.offsetMs).toBe(0);
    return err;
  }

  it('a refusal that persists is retryable and marked clockSkew (it waits, it is not the request refused)', async () => {
    // An answer whose Date agrees with this host while saying "Signature expired": nothing to correct,
    // and yet a refusal for the signing time.
    const err = await refusedWith(
      'Signature expired: 20260101T000000Z is now earlier than 20260101T000500Z (20260101T001000Z - 5 min.)',
    );
    expect(err).toBeInstanceOf(AwsServiceError);
    expect(err).toMatchObject({ name: 'InvalidSignatureException', retryable: true, clockSkew: true });
    expect(isRetryableError(err)).toBe(true);
  });

  it('a wrong secret key (a signature refusal whose Date agrees) stays a refusal, as before', async () => {
    const err = await refusedWith('The request signature we calculated does not match the signature you provided.');
    expect(err).toMatchObject({ name: 'InvalidSignatureException', retryable: false, clockSkew: false });
    expect(isRetryableError(err)).toBe(false);
  });
});

describe('the SDK clients’ errors (the claim-check store’s S3)', () => {
  it('a refusal for the signing time the SDK did not cure is retryable; SignatureDoesNotMatch alone is not', () => {
    const sdkError = (name: string, message: string) => Object.assign(new Error(message), { name });
    expect(isRetryableError(sdkError('RequestTimeTooSkewed', 'The difference … is too large.'))).toBe(true);
    expect(isRetryableError(sdkError('SignatureDoesNotMatch', 'The request signature we calculated …'))).toBe(false);
    expect(isClockSkewRefusal('AccessDenied', 'Signature expired')).toBe(false);
  });
});
