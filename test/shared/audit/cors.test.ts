/**
 * The audit API's own CORS step and composition (shared/audit/cors.ts, makeAuditHandlers), which
 * replaced @middy/core + @middy/http-cors: the headers must be what http-cors gave with the options
 * Svc passed it, for every list of allowed origins and every incoming Origin. http-cors (still a
 * dependency) is the oracle here, run for real; nothing is mocked. The queues below stand in for a
 * failing and a stuck queue (no local stand-in makes a real one hang on demand).
 */
import middy from '@middy/core';
import httpCors from '@middy/http-cors';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { localContext } from '../../../functions/local/gateway/event.js';
import {
  CORS_ALLOW_HEADERS,
  CORS_ALLOW_METHODS,
  CORS_EXPOSE_HEADERS,
  CORS_MAX_AGE_SECONDS,
  corsHeadersFor,
} from '../../../shared/audit/cors.js';
import { type AuditResponse, makeAuditHandlers, TIMEOUT_EARLY_MS } from '../../../shared/audit/handler.js';
import { parseConfigText } from '../../../shared/config/load.js';
import { PointClock } from '../../../shared/queue/point-clock.js';
import type { EventQueue } from '../../../shared/queue/port.js';
import { apiEvent, captureLog, envelope } from '../../support/audit.js';

const PROTO_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];

/** What http-cors 6 answered with the options makeAuditHandlers gave it (until this change). */
async function middyHeaders(
  allowedOrigins: string[],
  origin: string | undefined,
  method: string,
): Promise<Record<string, string>> {
  const allowed = new Set(allowedOrigins);
  const handler = middy<APIGatewayProxyEventV2, { statusCode: number; headers: Record<string, string>; body: string }>()
    .use(
      httpCors({
        origins: allowedOrigins,
        getOrigin: (incoming: string) => (allowed.has(incoming) ? incoming : ''),
        methods: CORS_ALLOW_METHODS,
        headers: CORS_ALLOW_HEADERS,
        exposeHeaders: CORS_EXPOSE_HEADERS,
        maxAge: CORS_MAX_AGE_SECONDS,
      }),
    )
    .handler(() => Promise.resolve({ statusCode: 202, headers: { 'content-type': 'application/json' }, body: '' }));
  const event = {
    version: '2.0',
    headers: origin === undefined ? {} : { origin },
    requestContext: { http: { method } },
  } as unknown as APIGatewayProxyEventV2;
  const response = await handler(event, {} as Context);
  const { 'content-type': _, ...cors } = response.headers;
  return cors;
}

// Origins as the config's pattern lets them through (^https?://[^/\s]+$), from an alphabet that
// http-cors can turn into a regular expression (it throws at start on e.g. "http://(*").
const originArb = fc.oneof(
  fc.constantFrom(
    'https://a.example.com',
    'https://b.example.com',
    '*',
    'https://*.example.com',
    '',
    'null',
    ...PROTO_KEYS,
  ),
  fc.stringMatching(/^https?:\/\/[a-b*.]{1,6}$/),
);

describe('corsHeadersFor', () => {
  it('gives exactly the headers @middy/http-cors gave, for any allowed list and any Origin', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(originArb, { maxLength: 4 }),
        fc.option(originArb, { nil: undefined }),
        fc.constantFrom('POST', 'OPTIONS', 'GET'),
        async (allowed, origin, method) => {
          const mine = { ...corsHeadersFor(allowed)(origin) };
          expect(mine).toEqual(await middyHeaders(allowed, origin, method));
          // The order middy wrote them in, too (it shows in the answer's header order).
          expect(Object.keys(mine)).toEqual(Object.keys(await middyHeaders(allowed, origin, method)));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('echoes a listed origin, never an unlisted one or one named like an Object.prototype member', () => {
    const cors = corsHeadersFor(['https://a.example.com']);
    expect(cors('https://a.example.com')).toEqual({
      'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS,
      'Access-Control-Allow-Methods': CORS_ALLOW_METHODS,
      'Access-Control-Allow-Origin': 'https://a.example.com',
      Vary: 'Origin',
      'Access-Control-Expose-Headers': CORS_EXPOSE_HEADERS,
      'Access-Control-Max-Age': '3600',
    });
    for (const origin of ['https://b.example.com', 'https://A.example.com', undefined, ...PROTO_KEYS])
      expect(cors(origin)['Access-Control-Allow-Origin']).toBeUndefined();
    expect(corsHeadersFor(['https://a.example.com', 'https://b.example.com'])('https://b.example.com')['Vary']).toBe(
      'Origin',
    );
  });
});

describe('makeAuditHandlers composition', () => {
  const TOKEN = 'cors-test-token-0123456789';
  const settings = parseConfigText(
    [
      'Svc:',
      '  auditEvents:',
      '    enable: true',
      `    apiToken: ${TOKEN}`,
      '    cors:',
      '      allowedOrigins: [https://a.example.com]',
      '',
    ].join('\n'),
    'test.yaml',
    {},
  ).config.auditEvents;
  const request = (): APIGatewayProxyEventV2 =>
    apiEvent(
      {
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          origin: 'https://a.example.com',
        },
      },
      JSON.stringify(envelope()),
    );

  it('answers a failure with 500, the error id and the CORS headers, the details only in the log', async () => {
    const log = await captureLog();
    const queue: EventQueue = { send: () => Promise.reject(new Error('disk on fire')) };
    const { handler } = makeAuditHandlers({
      settings,
      rateLimiter: null,
      idempotency: null,
      queue,
      clock: new PointClock(),
      log: log.logger,
    });
    const res = await handler(request(), localContext('test', 'r1'));
    expect(res.statusCode).toBe(500);
    expect(res.headers?.['Access-Control-Allow-Origin']).toBe('https://a.example.com');
    expect(res.body).not.toContain('disk on fire');
    const { errorId } = (JSON.parse(res.body ?? '{}') as { details: { errorId: string } }).details;
    expect(JSON.stringify(log.lines().find((l) => l['errorId'] === errorId))).toContain('disk on fire');
  });

  it(`answers 500 ${TIMEOUT_EARLY_MS} ms before the invocation runs out of time, while the queue still hangs`, async () => {
    const log = await captureLog();
    const queue: EventQueue = { send: () => new Promise(() => undefined) };
    const { handler } = makeAuditHandlers({
      settings,
      rateLimiter: null,
      idempotency: null,
      queue,
      clock: new PointClock(),
      log: log.logger,
    });
    // Fake timers (and Date), so "5 ms before" is exact on a busy machine.
    vi.useFakeTimers();
    try {
      const deadline = Date.now() + 200;
      const context = {
        ...localContext('test', 'r2'),
        getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
      };
      let answer: AuditResponse | undefined;
      void handler(request(), context).then((res) => (answer = res));
      await vi.advanceTimersByTimeAsync(200 - TIMEOUT_EARLY_MS - 1);
      expect(answer).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      expect(answer?.statusCode).toBe(500);
      expect(answer?.headers?.['Access-Control-Allow-Origin']).toBe('https://a.example.com');
      expect(
        log.lines().some((l) => l['msg'] === 'audit API request failed' && JSON.stringify(l).includes('TimeoutError')),
      ).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
