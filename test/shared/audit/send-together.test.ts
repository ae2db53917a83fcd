/**
 * The audit handler hands the queue the events of the requests that reach it in one turn of the
 * event loop as one send (shared/audit/handler.ts, sendTogether): one message and one journal
 * record for the turn instead of one each. Against the real durable queue (LocalEventQueue in a
 * temp directory, a consumer that records what it is given); the queue is wrapped only to count
 * its send calls, or, for the refusal, stands for a full queue.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localContext } from '../../../functions/local/gateway/event.js';
import { type AuditHandler, makeAuditHandlers, queuedJson } from '../../../shared/audit/handler.js';
import { parseConfigText } from '../../../shared/config/load.js';
import { decodeMessage } from '../../../shared/queue/codec.js';
import type { QueuedEvent } from '../../../shared/queue/events.js';
import { scanRecords } from '../../../shared/queue/local/append-log.js';
import type { LocalEventQueue } from '../../../shared/queue/local/index.js';
import { parseMessageRecord } from '../../../shared/queue/local/records.js';
import { PointClock } from '../../../shared/queue/point-clock.js';
import { type EventQueue, QueueFullError } from '../../../shared/queue/port.js';
import { apiEvent, auditQueued, captureLog, envelope, type LogCapture, recordingQueue } from '../../support/audit.js';

const settings = parseConfigText('Svc:\n  auditEvents:\n    enable: true\n', 'test.yaml', {}).config.auditEvents;

const request = (body: Record<string, unknown>): APIGatewayProxyEventV2 =>
  apiEvent({ headers: { 'content-type': 'application/json' } }, JSON.stringify(body));

describe('audit handler: the events of one turn of the event loop go to the queue together', () => {
  let log: LogCapture;
  let directory: string;
  let queue: LocalEventQueue;
  let delivered: QueuedEvent[];
  const sends: number[] = [];
  let handler: AuditHandler;

  beforeAll(async () => {
    log = await captureLog();
    ({ queue, delivered, directory } = await recordingQueue(log.logger, 1000));
    const counting: EventQueue = { send: (events) => (sends.push(events.length), queue.send(events)) };
    handler = makeAuditHandlers({
      settings,
      rateLimiter: null,
      idempotency: null,
      queue: counting,
      clock: new PointClock(),
      log: log.logger,
    }).handler;
  });
  afterAll(async () => {
    await queue.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  it('queues the requests of one turn with one send, each answered 202 and delivered once', async () => {
    sends.length = 0;
    const bodies = Array.from({ length: 12 }, () => envelope());
    const answers = await Promise.all(bodies.map((b) => handler(request(b), localContext('test', 'r'))));
    expect(answers.map((a) => a.statusCode)).toEqual(bodies.map(() => 202));
    expect(sends).toEqual([12]);
    const ids = bodies.map((b) => String(b['eventId']).toLowerCase());
    await expect.poll(() => ids.every((id) => delivered.some((e) => e.id === id))).toBe(true);
    expect(delivered.filter((e) => ids.includes(e.id))).toHaveLength(12);
  });

  it('sends once per request when requests come one after the other', async () => {
    sends.length = 0;
    for (let i = 0; i < 3; i++)
      expect((await handler(request(envelope()), localContext('test', 'r'))).statusCode).toBe(202);
    expect(sends).toEqual([1, 1, 1]);
  });

  it("queues the request's own JSON text as the event (its spacing and escapes), which reads back from disk as the event delivered", async () => {
    const body = envelope();
    const eventId = String(body['eventId']).toLowerCase();
    // Spacing and a \u escape JSON.stringify would not write: the text on disk must be the client's.
    const raw = `  ${JSON.stringify({
      ...body,
      payload: { ...(body['payload'] as Record<string, unknown>), note: 'Ö' },
    })
      .replace(/,"/g, ', "')
      .replace('Ö', '\\u00d6')}\n`;
    expect(
      (await handler(apiEvent({ headers: { 'content-type': 'application/json' } }, raw), localContext('test', 'r')))
        .statusCode,
    ).toBe(202);
    await expect.poll(() => delivered.some((e) => e.id === eventId)).toBe(true);
    const segments = readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter((f) =>
      /segment-\d+\.log$/.test(f),
    );
    const records = segments.flatMap((f) =>
      scanRecords(readFileSync(join(directory, f))).payloads.flatMap((p) => parseMessageRecord(p) ?? []),
    );
    const mine = records.filter((r) => r.body.includes(eventId));
    expect(mine).toHaveLength(1);
    expect(mine[0]?.body).toContain(`"event":${raw.trim()},"meta":`);
    const decoded = decodeMessage(mine[0]?.body ?? '');
    if (!decoded.ok) throw new Error(decoded.error);
    const onDisk = 'events' in decoded.message ? decoded.message.events.find((e) => e.id === eventId) : undefined;
    expect(onDisk).toEqual(delivered.find((e) => e.id === eventId));
    expect(onDisk?.kind === 'audit' ? onDisk.event : undefined).toEqual(JSON.parse(raw));
  });

  it('splices the body only where it reads back the same: a body with a number JSON turns into Infinity is queued stringified (null on disk)', async () => {
    const queued = auditQueued();
    // The same members, in the same order, as JSON.stringify writes them.
    expect(queuedJson(queued, JSON.stringify(queued.event))).toBe(JSON.stringify(queued));
    const onDisk = async (raw: string, eventId: string) => {
      expect(
        (await handler(apiEvent({ headers: { 'content-type': 'application/json' } }, raw), localContext('test', 'r')))
          .statusCode,
      ).toBe(202);
      await expect.poll(() => delivered.some((e) => e.id === eventId)).toBe(true);
      const segments = readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter((f) =>
        /segment-\d+\.log$/.test(f),
      );
      const records = segments.flatMap((f) =>
        scanRecords(readFileSync(join(directory, f))).payloads.flatMap((p) => parseMessageRecord(p) ?? []),
      );
      return records.find((r) => r.body.includes(eventId))?.body ?? '';
    };
    // As a member, and in an array.
    for (const [big, n, stored] of [
      ['1e400', 'BIG', 'null'],
      ['-2.5E+308', ['x', 'BIG'], '["x",null]'],
      ['9'.repeat(309), 'BIG', 'null'],
    ] as const) {
      const body = envelope();
      const eventId = String(body['eventId']).toLowerCase();
      const raw = JSON.stringify({ ...body, payload: { ...(body['payload'] as Record<string, unknown>), n } }).replace(
        '"BIG"',
        big,
      );
      const text = await onDisk(raw, eventId);
      expect(text).not.toContain(big);
      expect(text).toContain(`"n":${stored}`);
    }
    // A small exponent is safe, and digits inside a string (an id's hex) are not numbers: spliced.
    const body = envelope();
    const eventId = String(body['eventId']).toLowerCase();
    const raw = JSON.stringify({
      ...body,
      payload: { ...(body['payload'] as Record<string, unknown>), n: 'SMALL', s: '4e123' },
    }).replace('"SMALL"', '1e30');
    expect(await onDisk(raw, eventId)).toContain(`"event":${raw},"meta":`);
  });

  it('answers every request of a refused send 503, with retry-after', async () => {
    const full: EventQueue = { send: () => Promise.reject(new QueueFullError(10)) };
    const refused = makeAuditHandlers({
      settings,
      rateLimiter: null,
      idempotency: null,
      queue: full,
      clock: new PointClock(),
      log: log.logger,
    }).handler;
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => refused(request(envelope()), localContext('test', 'r'))),
    );
    expect(answers.map((a) => [a.statusCode, a.headers?.['retry-after']])).toEqual(answers.map(() => [503, '30']));
  });
});
