/**
 * Messages encoded by the sender (the edge's event batcher): the codec's event lists and bodies are
 * the text `encodePacked` builds, and the durable queue writes such a message as it is.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateEnvelope } from '../../../shared/audit/envelope.js';
import {
  decodeMessage,
  encodeEventList,
  encodePacked,
  packedBodyOf,
  packedBodyParts,
} from '../../../shared/queue/codec.js';
import type { AuditQueuedEvent } from '../../../shared/queue/events.js';
import { LocalEventQueue } from '../../../shared/queue/local/index.js';
import { type EncodedMessage, QueueFullError, SQS_MAX_MESSAGE_BYTES } from '../../../shared/queue/port.js';
import { envelope } from '../../support/audit.js';
import { silentLog } from '../../support/log.js';

function queued(title: string): AuditQueuedEvent {
  const checked = validateEnvelope(
    envelope({ payload: { context: { appId: randomUUID() }, event: { sheetTitle: title } } }),
  );
  if (!checked.ok) throw new Error('invalid test envelope');
  return {
    kind: 'audit',
    id: randomUUID(),
    receivedAt: '2026-11-22T10:15:23.001Z',
    meta: { clientIp: '10.1.2.3', clientVersion: null },
    event: checked.envelope,
  };
}

describe('encodeEventList / packedBodyOf', () => {
  it('join event lists into the body encodePacked makes of all their events, U+FFFE/U+FFFF escaped', () => {
    const a = [queued('Übersicht — 日本語 😀'), queued('odd \uFFFF and \uFFFE end')];
    const b = [queued('third')];
    const body = packedBodyOf([encodeEventList(a), encodeEventList(b)]);
    expect(body).toBe(encodePacked([...a, ...b]));
    expect(body).not.toMatch(/[\uFFFE\uFFFF]/);
    expect(decodeMessage(body)).toMatchObject({ ok: true, message: { events: [...a, ...b] } });
  });
});

describe('packedBodyParts', () => {
  it('gives the UTF-8 bytes of packedBodyOf of the same lists, in order', () => {
    const lists = [
      encodeEventList([queued('Übersicht — 日本語 😀'), queued('two')]),
      encodeEventList([queued('third')]),
    ];
    for (const taken of [lists, lists.slice(0, 1)]) {
      expect(Buffer.concat(packedBodyParts(taken.map((l) => Buffer.from(l)))).toString('utf8')).toBe(
        packedBodyOf(taken),
      );
    }
  });
});

/** A consumer group that records each body it is given and acknowledges it, or refuses it (`fail`: it stays on disk). */
function recordingGroup(bodies: string[], fail: boolean) {
  return {
    name: 'g',
    batchSize: 10,
    batchWindowMs: 0,
    handler: (e: { Records: { body: string; messageId: string }[] }) => {
      for (const r of e.Records) bodies.push(r.body);
      return Promise.resolve({
        batchItemFailures: fail ? e.Records.map((r) => ({ itemIdentifier: r.messageId })) : [],
      });
    },
  };
}

/**
 * Sends `message` to a queue whose consumer refuses every delivery (so it stays on disk), stops it,
 * and starts a second queue on the same directory: the body the first delivery got, and the bodies
 * the second queue delivers once it has delivered one.
 */
async function sendThenRestart(
  prefix: string,
  message: EncodedMessage,
): Promise<{ first: string | undefined; afterRestart: string[] }> {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  const bodies: string[] = [];
  const first = new LocalEventQueue({
    directory,
    capacity: 10,
    maxReceiveCount: 100,
    log: silentLog,
    groups: [recordingGroup(bodies, true)],
    drainTimeoutMs: 0,
  });
  await first.start();
  let firstBody: string | undefined;
  try {
    await first.sendEncoded(message);
    await expect.poll(() => bodies.length).toBeGreaterThan(0);
    firstBody = bodies[0];
  } finally {
    await first.stop();
  }
  bodies.length = 0;
  const second = new LocalEventQueue({
    directory,
    capacity: 10,
    maxReceiveCount: 100,
    log: silentLog,
    groups: [recordingGroup(bodies, false)],
  });
  await second.start();
  try {
    await expect.poll(() => bodies.length).toBeGreaterThan(0);
    return { first: firstBody, afterRestart: [...bodies] };
  } finally {
    await second.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

describe('LocalEventQueue.sendEncoded', () => {
  it('writes a message given as UTF-8 parts as that body: the consumer gets it now, and again from disk after a restart', async () => {
    const lists = [encodeEventList([queued('ä one'), queued('two')]), encodeEventList([queued('three 😀')])];
    const body = packedBodyOf(lists);
    const parts = packedBodyParts(lists.map((l) => Buffer.from(l)));
    // A body getter that throws: the queue must write the parts, never ask for the string.
    const message = {
      events: 3,
      parts,
      get body(): string {
        throw new Error('body asked for');
      },
    };
    const { first, afterRestart } = await sendThenRestart('svc-encoded-parts-', message);
    expect(first).toBe(body);
    expect(afterRestart).toEqual([body]);
    expect(decodeMessage(body)).toMatchObject({ ok: true });
  });

  it('writes parts that hold a raw newline (JSON with whitespace) in the record form for such bodies: that body comes back unchanged from disk', async () => {
    const body = `{"v":1,\n"events":[${encodeEventList([queued('x')])}]}`;
    const { afterRestart } = await sendThenRestart('svc-encoded-newline-', {
      body,
      events: 1,
      parts: [Buffer.from(body.slice(0, 10)), Buffer.from(body.slice(10))],
    });
    expect(afterRestart).toEqual([body]);
  });

  it('writes the message as it is: the consumer gets that body, counted as its events; beyond capacity it refuses', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'svc-encoded-'));
    const bodies: string[] = [];
    const queue = new LocalEventQueue({
      directory,
      capacity: 3,
      maxReceiveCount: 3,
      log: silentLog,
      groups: [
        {
          name: 'g',
          batchSize: 10,
          batchWindowMs: 0,
          handler: (e) => {
            for (const r of e.Records) bodies.push(r.body);
            return Promise.resolve({ batchItemFailures: [] });
          },
        },
      ],
    });
    await queue.start();
    try {
      expect(queue.maxMessageBytes).toBe(SQS_MAX_MESSAGE_BYTES);
      const events = [queued('one'), queued('two')];
      const body = packedBodyOf([encodeEventList(events)]);
      await queue.sendEncoded({ body, events: 2 });
      await expect.poll(() => bodies).toEqual([body]);
      // The queue counts the message's events, not its messages: 2 pending + 2 > capacity 3.
      // A consumer that waits a minute for a fuller batch keeps the first message pending.
      const waiting = {
        name: 'w',
        batchSize: 10,
        batchWindowMs: 60_000,
        handler: () => Promise.resolve({ batchItemFailures: [] }),
      };
      const stuck = new LocalEventQueue({
        directory: join(directory, 'other'),
        capacity: 3,
        maxReceiveCount: 3,
        log: silentLog,
        groups: [waiting],
        drainTimeoutMs: 0,
      });
      await stuck.start();
      await stuck.sendEncoded({ body, events: 2 });
      await expect(stuck.sendEncoded({ body, events: 2 })).rejects.toBeInstanceOf(QueueFullError);
      expect(stuck.pending).toBe(2);
      await stuck.stop();
    } finally {
      await queue.stop();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
