/**
 * audit-event-api.md, rule by rule, against both front doors: the Lambda handler called with API
 * Gateway events, and the local gateway over real HTTP.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_TYPES } from '../../../shared/audit/envelope.js';
import {
  type EventQueue,
  QueueFullError,
  QueueStorageError,
  QueueUnavailableError,
} from '../../../shared/queue/port.js';
import {
  type ApiResponse,
  type AuditApi,
  CLIENT_VERSION,
  envelope,
  expectError,
  startAuditApi,
  typedEvents,
} from '../../support/audit.js';

const TOKEN = 'test-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
const ORIGIN = 'https://analytics.example.com';

function errorsOf(res: ApiResponse): { instancePath?: string; message: string }[] {
  return (res.json?.['details'] as { errors?: { instancePath?: string; message: string }[] } | undefined)?.errors ?? [];
}

describe.each(['lambda', 'http'] as const)('audit API via %s', (door) => {
  let api: AuditApi;
  beforeAll(async () => {
    api = await startAuditApi(door, {
      yaml: [
        `    apiToken: ${TOKEN}`,
        '    rateLimit:',
        '      maxPerMinute: 1000',
        '    cors:',
        `      allowedOrigins: [${ORIGIN}]`,
      ],
    });
  });
  afterAll(() => api.close());
  const post = (body: unknown, headers: Record<string, string> = {}, sourceIp?: string) =>
    api.call({ body, headers: { ...auth, ...headers }, ...(sourceIp ? { sourceIp } : {}) });

  describe('POST /api/v1/audit-event', () => {
    it('accepts a valid envelope with 202 and queues it by its event id', async () => {
      const env = envelope({ eventId: randomUUID().toUpperCase() });
      const res = await post(env, { 'x-audit-client-version': CLIENT_VERSION });
      expect(res.status).toBe(202);
      expect(res.json).toEqual({ status: 'accepted', receivedAt: expect.any(String) as string, outcome: 'processed' });
      await expect.poll(() => api.delivered.find((e) => e.id === String(env['eventId']).toLowerCase())).toBeDefined();
      const queued = api.delivered.find((e) => e.id === String(env['eventId']).toLowerCase());
      expect(queued).toMatchObject({
        kind: 'audit',
        event: { type: 'navigation.sheet.loaded' },
        meta: { clientVersion: CLIENT_VERSION },
      });
    });

    it('checks authentication before the body: wrong token with a broken body is 401', async () => {
      expectError(
        await api.call({ body: '{broken', headers: { authorization: 'Bearer wrong-token-xxxxxxxx' } }),
        401,
        'Unauthorized',
      );
      expectError(await api.call({ body: envelope() }), 401, 'Unauthorized');
      expectError(await api.call({ body: envelope(), headers: { authorization: TOKEN } }), 401, 'Unauthorized');
      expectError(
        await api.call({ body: envelope(), headers: { authorization: `Basic ${TOKEN}` } }),
        401,
        'Unauthorized',
      );
    });

    it('answers 400 Schema validation failed for malformed JSON and non-object bodies', async () => {
      expect(expectError(await post('{"eventId": '), 400, 'Schema validation failed')[0]).toMatch(
        /^the body is not valid JSON/,
      );
      for (const body of ['[]', '"text"', '42', 'null']) {
        expect(errorsOf(await post(body))).toEqual([{ instancePath: '', message: 'the body must be a JSON object' }]);
      }
    });

    it('reports every envelope schema error with its instancePath', async () => {
      const body = envelope({
        schemaVersion: '1',
        timestamp: '2026-11-22 10:15:22',
        source: { kind: 'browser', name: 'audit-qs', version: '' },
      });
      delete body['eventId'];
      delete body['payload'];
      const res = await post(body);
      expectError(res, 400, 'Schema validation failed');
      const errors = errorsOf(res);
      expect(errors).toEqual(
        expect.arrayContaining([
          { instancePath: '', message: "must have required property 'eventId'" },
          { instancePath: '', message: "must have required property 'payload'" },
          { instancePath: '/schemaVersion', message: 'must be integer' },
          {
            instancePath: '/timestamp',
            message: 'must be an RFC 3339 date-time with a zone, such as 2026-11-22T10:15:22.123Z',
          },
          { instancePath: '/source/kind', message: 'must be "qlik-sense-extension"' },
          { instancePath: '/source/version', message: 'must be a non-empty string' },
        ]),
      );
    });

    it('requires a timestamp with a zone and a real date', async () => {
      for (const timestamp of ['2026-11-22T10:15:22', '2026-02-30T10:15:22Z', '2026-11-22T25:00:00Z', 'yesterday']) {
        expect(errorsOf(await post(envelope({ timestamp }))), timestamp).toEqual([
          expect.objectContaining({ instancePath: '/timestamp' }),
        ]);
      }
      for (const timestamp of ['2026-11-22T10:15:22Z', '2026-11-22T10:15:22.5+05:30', '2026-11-22t10:15:22-08:00']) {
        expect((await post(envelope({ timestamp }))).status, timestamp).toBe(202);
      }
    });

    it('requires source.name to be audit-qs', async () => {
      expect(errorsOf(await post(envelope({ source: { kind: 'qlik-sense-extension', name: 'other' } })))).toEqual([
        { instancePath: '/source/name', message: 'must be "audit-qs"' },
      ]);
    });

    it('answers 422 with every content violation at once', async () => {
      const res = await post(
        envelope({
          eventId: 'not-a-uuid',
          correlationId: 'x'.repeat(65),
          type: 'unknown.thing',
          payload: { context: { appId: 'app-1' } },
        }),
      );
      const messages = expectError(res, 422, 'One or more constraint violations');
      expect(messages).toEqual([
        'eventId must be a UUID',
        'correlationId must be at most 64 characters',
        'payload.context.appId must be a UUID',
        expect.stringMatching(/^type "unknown.thing" is not recognised/),
      ]);
    });

    it('accepts every known type and any event.<name>', async () => {
      const typed = typedEvents();
      const types = [...KNOWN_TYPES, 'event.custom-thing'];
      for (const type of types) {
        const res = await post(envelope({ type, payload: { event: typed[type]?.full ?? {} } }));
        expect(res.status, `${type}: ${res.text}`).toBe(202);
      }
    });

    // The per-type payload rules, payload.context and source, edge by edge: payload.test.ts.

    it('evaluates the version header first (first of several values, trimmed), then source.version', async () => {
      const incompatible = await post(envelope(), { 'x-audit-client-version': ' 0.4.0 , 0.3.1' });
      expect(expectError(incompatible, 422, 'One or more constraint violations')).toEqual([
        expect.stringMatching(
          /audit client version 0\.4\.0 is not compatible with service 15\.0\.0 \(compatible: >=0\.3\.0 <0\.4\.0\)/,
        ),
      ]);
      expect(
        (
          await post(envelope({ source: { kind: 'qlik-sense-extension', name: 'audit-qs', version: '9.9.9' } }), {
            'x-audit-client-version': '0.3.9, 0.1.0',
          })
        ).status,
      ).toBe(202);
      const viaEnvelope = await post(
        envelope({ source: { kind: 'qlik-sense-extension', name: 'audit-qs', version: '0.2.9' } }),
      );
      expect(errorsOf(viaEnvelope)).toEqual([
        { instancePath: '/source/version', message: expect.stringMatching(/0\.2\.9 is not compatible/) as string },
      ]);
      expect(errorsOf(await post(envelope(), { 'x-audit-client-version': 'latest' }))).toEqual([
        { instancePath: '', message: 'audit client version "latest" is not a semantic version' },
      ]);
    });

    it('reports content violations and an incompatible version together', async () => {
      const messages = expectError(
        await post(envelope({ eventId: 'x' }), { 'x-audit-client-version': '1.0.0' }),
        422,
        'One or more constraint violations',
      );
      expect(messages).toHaveLength(2);
    });

    it('accepts events without a version, logs each at debug and warns once per IP per minute with missingVersionCount', async () => {
      const ip = door === 'http' ? '127.0.0.9' : '198.51.100.9';
      const bare = () => envelope({ source: { kind: 'qlik-sense-extension', name: 'audit-qs' } });
      for (let i = 0; i < 3; i++) expect((await post(bare(), {}, ip)).status).toBe(202);
      const mine = api.log.lines().filter((l) => l['clientIp'] === ip);
      expect(
        mine.filter((l) => l['level'] === 'debug' && l['msg'] === 'audit event without client version accepted'),
      ).toHaveLength(3);
      const warnings = mine.filter((l) => l['level'] === 'warn');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ missingVersionCount: 1 });
    });

    it('answers 415 for a body that is not JSON by content type', async () => {
      expectError(
        await post(JSON.stringify(envelope()), { 'content-type': 'text/plain' }),
        415,
        'Unsupported media type',
      );
      expect((await post(envelope(), { 'content-type': 'application/json; charset=utf-8' })).status).toBe(202);
    });

    it('answers 404 for other paths and 405 for other methods', async () => {
      expectError(await api.call({ method: 'GET', path: '/api/v2/audit-event', headers: auth }), 404, 'Not found');
      const res = await api.call({ method: 'DELETE', headers: auth });
      expectError(res, 405, 'Method not allowed');
      expect(res.headers['allow']).toBe('POST, OPTIONS');
    });
  });

  describe('GET /api/v1/test-connection', () => {
    it('answers 200 without version fields when no version is sent', async () => {
      const res = await api.call({ method: 'GET', path: '/api/v1/test-connection', headers: auth });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        status: 'ok',
        message: 'The audit API is reachable',
        timestamp: expect.any(String) as string,
      });
    });

    it('reports compatibility when a version is sent, and stays 200 when incompatible', async () => {
      const ok = await api.call({
        method: 'GET',
        path: '/api/v1/test-connection',
        headers: { ...auth, 'x-audit-client-version': CLIENT_VERSION },
      });
      expect(ok.status).toBe(200);
      expect(ok.json).toMatchObject({
        status: 'ok',
        svcVersion: '15.0.0',
        auditClientVersion: CLIENT_VERSION,
        compatible: true,
      });
      const old = await api.call({
        method: 'GET',
        path: '/api/v1/test-connection',
        headers: { ...auth, 'x-audit-client-version': '0.2.0' },
      });
      expect(old.status).toBe(200);
      expect(old.json).toMatchObject({ svcVersion: '15.0.0', auditClientVersion: '0.2.0', compatible: false });
    });

    it('requires the token', async () => {
      expectError(await api.call({ method: 'GET', path: '/api/v1/test-connection' }), 401, 'Unauthorized');
    });
  });

  describe('CORS', () => {
    it('answers a preflight from a listed origin with 204 and the allow headers, without a token and without counting', async () => {
      const headers = {
        origin: ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      };
      const res = await api.call({ method: 'OPTIONS', headers });
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(res.headers).toMatchObject({
        'access-control-allow-origin': ORIGIN,
        'access-control-allow-methods': 'GET, POST, OPTIONS',
        'access-control-allow-headers': 'Authorization, Content-Type, X-Audit-Client-Version',
        'access-control-max-age': '3600',
      });
      expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
    });

    it('gives an unlisted origin no Access-Control-Allow-Origin', async () => {
      const res = await api.call({
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example.net', 'access-control-request-method': 'POST' },
      });
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('lets browsers read the rate-limit headers of real responses', async () => {
      const res = await post(envelope(), { origin: ORIGIN });
      expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(res.headers['access-control-expose-headers']).toBe(
        'retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset',
      );
    });
  });
});

describe.each(['lambda', 'http'] as const)('rate limit via %s', (door) => {
  let api: AuditApi;
  beforeAll(async () => {
    api = await startAuditApi(door, {
      yaml: ['    rateLimit:', '      maxPerMinute: 3', `    trustedProxies: ['127.0.0.1']`],
    });
  });
  afterAll(() => api.close());
  const ip = (n: number) => (door === 'http' ? `127.0.1.${n}` : `203.0.113.${n}`);

  it('counts per client IP: request 4 of one IP is 429 with retry-after, another IP is not limited', async () => {
    const responses: ApiResponse[] = [];
    for (let i = 0; i < 4; i++) responses.push(await api.call({ body: '{broken', sourceIp: ip(1) }));
    expect(responses.slice(0, 3).map((r) => r.status)).toEqual([400, 400, 400]);
    expect(responses.slice(0, 3).map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0']);
    const limited = responses[3] as ApiResponse;
    expect(limited.status).toBe(429);
    expect(limited.headers['x-ratelimit-limit']).toBe('3');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    const reset = Number(limited.headers['x-ratelimit-reset']);
    const retryAfter = Number(limited.headers['retry-after']);
    const nowSeconds = Date.now() / 1000;
    expect(reset).toBeGreaterThan(nowSeconds);
    expect(reset).toBeLessThanOrEqual(Math.ceil(nowSeconds) + 60);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect((await api.call({ body: envelope(), sourceIp: ip(2) })).status).toBe(202);
  });

  it('limits test-connection too, and answers 429 before looking at anything else', async () => {
    for (let i = 0; i < 3; i++)
      expect((await api.call({ method: 'GET', path: '/api/v1/test-connection', sourceIp: ip(3) })).status).toBe(200);
    expect((await api.call({ method: 'GET', path: '/api/v1/test-connection', sourceIp: ip(3) })).status).toBe(429);
    expect(
      (await api.call({ body: '{broken', sourceIp: ip(3), headers: { 'content-type': 'text/plain' } })).status,
    ).toBe(429);
  });

  it('believes X-Forwarded-For only from a trusted proxy', async () => {
    // The peer 127.0.0.1 is trusted: the client is the forwarded address, counted on its own.
    for (let i = 0; i < 3; i++)
      expect(
        (await api.call({ body: envelope(), sourceIp: '127.0.0.1', headers: { 'x-forwarded-for': '192.0.2.77' } }))
          .status,
      ).toBe(202);
    expect(
      (await api.call({ body: envelope(), sourceIp: '127.0.0.1', headers: { 'x-forwarded-for': '192.0.2.77' } }))
        .status,
    ).toBe(429);
    expect(
      (await api.call({ body: envelope(), sourceIp: '127.0.0.1', headers: { 'x-forwarded-for': '192.0.2.78' } }))
        .status,
    ).toBe(202);
    // An untrusted peer cannot escape its own counter by forging the header.
    for (let i = 0; i < 3; i++)
      await api.call({ body: envelope(), sourceIp: ip(4), headers: { 'x-forwarded-for': `192.0.2.${100 + i}` } });
    expect(
      (await api.call({ body: envelope(), sourceIp: ip(4), headers: { 'x-forwarded-for': '192.0.2.200' } })).status,
    ).toBe(429);
  });
});

describe.each(['lambda', 'http'] as const)('limits and failures via %s', (door) => {
  it('answers 413 with a JSON body for a body over maxBodyBytes', async () => {
    const api = await startAuditApi(door, { yaml: ['    maxBodyBytes: 2048'] });
    try {
      const big = envelope({ payload: { event: { note: 'x'.repeat(4096) } } });
      expect(expectError(await api.call({ body: big }), 413, 'Payload too large')).toEqual([
        'the body exceeds 2048 bytes',
      ]);
      expect((await api.call({ body: envelope() })).status).toBe(202);
    } finally {
      await api.close();
    }
  });

  it('answers 503 with retry-after when the queue is full', async () => {
    const full: EventQueue = { send: () => Promise.reject(new QueueFullError(10)) };
    const api = await startAuditApi(door, { queue: full });
    try {
      const res = await api.call({ body: envelope() });
      expectError(res, 503, 'The audit event queue is full; retry in about 30 seconds', 'error');
      expect(res.headers['retry-after']).toBe('30');
    } finally {
      await api.close();
    }
  });

  it('answers 503 when the queue cannot be reached', async () => {
    const down: EventQueue = { send: () => Promise.reject(new QueueUnavailableError('SQS keeps failing')) };
    const api = await startAuditApi(door, { queue: down });
    try {
      const res = await api.call({ body: envelope() });
      expectError(res, 503, 'The audit event queue is unavailable; retry in about 30 seconds', 'error');
      expect(res.text).not.toContain('SQS keeps failing');
    } finally {
      await api.close();
    }
  });

  it('answers 503 with retry-after when the queue cannot store the event (a full disk)', async () => {
    const full: EventQueue = {
      send: () =>
        Promise.reject(
          new QueueStorageError('cannot write to /var/lib/svc/queue/segment-1.log (ENOSPC: no space left on device)'),
        ),
    };
    const api = await startAuditApi(door, { queue: full });
    try {
      const res = await api.call({ body: envelope() });
      expectError(res, 503, 'The audit event queue cannot store the event now; retry in about 30 seconds', 'error');
      expect(res.headers['retry-after']).toBe('30');
      expect(res.text).not.toContain('ENOSPC');
    } finally {
      await api.close();
    }
  });

  it('answers 500 with only an error id, which the log line carries with the details', async () => {
    const broken: EventQueue = { send: () => Promise.reject(new Error('disk on fire at /var/lib/svc/queue')) };
    const api = await startAuditApi(door, { queue: broken });
    try {
      const res = await api.call({ body: envelope() });
      expectError(res, 500, 'Internal server error; retry in 30 to 60 seconds', 'error');
      const errorId = (res.json?.['details'] as { errorId: string }).errorId;
      expect(errorId).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.text).not.toContain('disk on fire');
      const line = api.log.lines().find((l) => l['errorId'] === errorId);
      expect(JSON.stringify(line)).toContain('disk on fire');
    } finally {
      await api.close();
    }
  });

  it('is open without a token', async () => {
    const api = await startAuditApi(door);
    try {
      expect((await api.call({ body: envelope() })).status).toBe(202);
      expect((await api.call({ method: 'GET', path: '/api/v1/test-connection' })).status).toBe(200);
    } finally {
      await api.close();
    }
  });
});

describe.each(['lambda', 'http'] as const)('idempotency by eventId via %s', (door) => {
  let api: AuditApi;
  beforeAll(async () => {
    api = await startAuditApi(door, { yaml: ['    rateLimit:', '      enable: false'] });
  });
  afterAll(() => api.close());

  /** Deliveries of `id`, once a later sentinel event has arrived (the queue delivers in order). */
  async function deliveredTimes(id: string): Promise<number> {
    const sentinel = envelope();
    expect((await api.call({ body: sentinel })).status).toBe(202);
    await expect.poll(() => api.delivered.some((e) => e.id === String(sentinel['eventId']))).toBe(true);
    return api.delivered.filter((e) => e.id === id).length;
  }

  it('answers a repeated eventId 202 with the first receivedAt, and queues it once (in any letter case)', async () => {
    const id = randomUUID();
    const first = await api.call({ body: envelope({ eventId: id }) });
    const again = await api.call({ body: envelope({ eventId: id }) });
    const upper = await api.call({ body: envelope({ eventId: id.toUpperCase() }) });
    for (const res of [first, again, upper])
      expect(res.json).toEqual({ status: 'accepted', receivedAt: first.json?.['receivedAt'], outcome: 'processed' });
    expect(await deliveredTimes(id)).toBe(1);
    expect(
      api.log
        .lines()
        .filter((l) => l['eventId'] === id && String(l['msg']).includes('repeated within the idempotency window')),
    ).toHaveLength(2);
    // The count, for the operator: the first repeat since start is logged at info with the total.
    expect(
      api.log.lines().find((l) => String(l['msg']).includes('repeated eventId(s) answered from the idempotency store')),
    ).toMatchObject({ duplicates: 1 });
  });

  it('queues one of many concurrent requests with the same eventId; all are answered 202', async () => {
    const id = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => api.call({ body: envelope({ eventId: id }) })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array<number>(10).fill(202));
    expect(new Set(responses.map((r) => r.json?.['receivedAt'])).size).toBe(1);
    expect(await deliveredTimes(id)).toBe(1);
  });

  it('keeps no record of an event it answered 503, so the retry is queued', async () => {
    let sends = 0;
    const flaky: EventQueue = {
      send: () => (++sends === 1 ? Promise.reject(new QueueStorageError('disk full')) : Promise.resolve()),
    };
    const other = await startAuditApi(door, { queue: flaky });
    try {
      const id = randomUUID();
      expect((await other.call({ body: envelope({ eventId: id }) })).status).toBe(503);
      expect((await other.call({ body: envelope({ eventId: id }) })).status).toBe(202);
      expect((await other.call({ body: envelope({ eventId: id }) })).status).toBe(202);
      expect(sends).toBe(2);
    } finally {
      await other.close();
    }
  });

  it('queues every repeat when idempotency is switched off', async () => {
    let sends = 0;
    const counting: EventQueue = { send: () => Promise.resolve(void (sends += 1)) };
    const off = await startAuditApi(door, { queue: counting, yaml: ['    idempotency:', '      enable: false'] });
    try {
      const id = randomUUID();
      for (let i = 0; i < 2; i++) expect((await off.call({ body: envelope({ eventId: id }) })).status).toBe(202);
      expect(sends).toBe(2);
    } finally {
      await off.close();
    }
  });
});
