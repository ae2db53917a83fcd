/**
 * The audit handler hands the queue the events of the requests that reach it in one turn of the
 * event loop as one send (shared/audit/handler.ts, sendTogether): one message and one journal
 * record for the turn instead of one each. Against the real durable queue (LocalEventQueue in a
 * temp directory, a consumer that records what it is given); the queue is wrapped only to count
 * its send calls, or, for the refusal, stands for a full queue.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAuditHandlers, type AuditHandler } from '../../../shared/audit/handler.js';
import { parseConfigText } from '../../../shared/config/load.js';
import { makeWriterHandler } from '../../../shared/destinations/handler.js';
import { PointClock } from '../../../shared/destinations/tsdb/line-protocol.js';
import type { QueuedEvent } from '../../../shared/queue/events.js';
import { LocalEventQueue } from '../../../shared/queue/local.js';
import { QueueFullError, type EventQueue } from '../../../shared/queue/port.js';
import { localContext } from '../../../functions/local/gateway.js';
import { captureLog, envelope, type LogCapture } from '../../support/audit.js';

const settings = parseConfigText('Svc:\n  auditEvents:\n    enable: true\n', 'test.yaml', {}).config.auditEvents;

function request(body: Record<string, unknown>): APIGatewayProxyEventV2 {
  const path = '/api/v1/audit-event';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: 'r',
      routeKey: '$default',
      stage: '$default',
      time: '24/Nov/2026:19:00:00 +0000',
      timeEpoch: Date.now(),
    },
    body: JSON.stringify(body),
    isBase64Encoded: false,
  };
}

describe('audit handler: the events of one turn of the event loop go to the queue together', () => {
  let log: LogCapture;
  let directory: string;
  let queue: LocalEventQueue;
  const delivered: QueuedEvent[] = [];
  const sends: number[] = [];
  let handler: AuditHandler;

  beforeAll(async () => {
    log = await captureLog();
    directory = mkdtempSync(join(tmpdir(), 'svc-send-together-'));
    queue = new LocalEventQueue({
      directory,
      capacity: 1000,
      maxReceiveCount: 3,
      log: log.logger,
      groups: [
        {
          name: 'recorder',
          batchSize: 100,
          batchWindowMs: 0,
          handler: makeWriterHandler({
            destination: { name: 'recorder', takes: () => true, write: (events) => (delivered.push(...events), Promise.resolve(new Set<string>())) },
            claimCheck: null,
            log: log.logger,
          }),
        },
      ],
    });
    await queue.start();
    const counting: EventQueue = { send: (events) => (sends.push(events.length), queue.send(events)) };
    handler = makeAuditHandlers({ settings, rateLimiter: null, idempotency: null, queue: counting, clock: new PointClock(), log: log.logger }).handler;
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
    for (let i = 0; i < 3; i++) expect((await handler(request(envelope()), localContext('test', 'r'))).statusCode).toBe(202);
    expect(sends).toEqual([1, 1, 1]);
  });

  it('answers every request of a refused send 503, with retry-after', async () => {
    const full: EventQueue = { send: () => Promise.reject(new QueueFullError(10)) };
    const refused = makeAuditHandlers({ settings, rateLimiter: null, idempotency: null, queue: full, clock: new PointClock(), log: log.logger }).handler;
    const answers = await Promise.all(Array.from({ length: 5 }, () => refused(request(envelope()), localContext('test', 'r'))));
    expect(answers.map((a) => [a.statusCode, a.headers?.['retry-after']])).toEqual(answers.map(() => [503, '30']));
  });
});
