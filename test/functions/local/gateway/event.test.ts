/**
 * The API Gateway HTTP API event (payload format 2.0) the local gateway builds from a request, over
 * real sockets, against what API Gateway sends for the same request
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html):
 * header names in lower case, repeated headers joined by commas, cookies split into `cookies` and
 * not among the headers, repeated query parameters joined by commas, the time in API Gateway's
 * format. The gateway's handler here records the events (it is the code under test's caller, not
 * the code under test).
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiGatewayTime, localContext } from '../../../../functions/local/gateway/event.js';
import { LocalGateway } from '../../../../functions/local/gateway/gateway.js';
import { parseConfigText } from '../../../../shared/config/load.js';
import { captureLog } from '../../../support/audit.js';
import { rawClient } from '../../../support/raw-http.js';

const events: APIGatewayProxyEventV2[] = [];
let gateway: LocalGateway;

beforeAll(async () => {
  const log = await captureLog();
  const { auditEvents } = parseConfigText('Svc:\n  auditEvents:\n    enable: true\n', 'test.yaml', {}).config;
  const record = (event: APIGatewayProxyEventV2) => {
    events.push(event);
    return Promise.resolve({ statusCode: 202, headers: { 'Content-Type': 'application/json' }, body: '{}' });
  };
  gateway = new LocalGateway({
    name: 'event recorder',
    host: '127.0.0.1',
    port: 0,
    log: log.logger,
    limits: auditEvents,
    handler: record,
    oversized: record,
  });
  await gateway.start();
});
afterAll(() => gateway.stop());

/** Sends one raw request from 127.0.0.3 and returns the event the handler was given. */
async function eventFor(request: string): Promise<APIGatewayProxyEventV2> {
  const before = events.length;
  const c = await rawClient(gateway.address.port, '127.0.0.3');
  try {
    c.write(request);
    const answer = await c.answer();
    expect(answer.status).toBe(202);
    expect(answer.headers['content-type']).toBe('application/json');
  } finally {
    c.socket.destroy();
  }
  expect(events.length).toBe(before + 1);
  const event = events[before];
  if (event === undefined) throw new Error('no event recorded');
  return event;
}

describe('local gateway: the API Gateway v2 event of a request', () => {
  it('builds the event API Gateway sends: every member, in the same order every time', async () => {
    const body = '{"eventId":"é"}';
    const event = await eventFor(
      `POST /api/v1/audit-event HTTP/1.1\r\nHost: api.example.com\r\nContent-Type: application/json\r\nUser-Agent: audit-qs/0.3.2\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    expect(event).toEqual({
      version: '2.0',
      routeKey: '$default',
      rawPath: '/api/v1/audit-event',
      rawQueryString: '',
      headers: {
        host: 'api.example.com',
        'content-type': 'application/json',
        'user-agent': 'audit-qs/0.3.2',
        'content-length': String(Buffer.byteLength(body)),
      },
      requestContext: {
        accountId: 'local',
        apiId: 'local',
        domainName: 'api.example.com',
        domainPrefix: 'api',
        http: {
          method: 'POST',
          path: '/api/v1/audit-event',
          protocol: 'HTTP/1.1',
          sourceIp: '127.0.0.3',
          userAgent: 'audit-qs/0.3.2',
        },
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) as string,
        routeKey: '$default',
        stage: '$default',
        time: apiGatewayTime(event.requestContext.timeEpoch),
        timeEpoch: expect.any(Number) as number,
      },
      body,
      isBase64Encoded: false,
    });
    expect(Object.keys(event)).toEqual([
      'version',
      'routeKey',
      'rawPath',
      'rawQueryString',
      'cookies',
      'headers',
      'queryStringParameters',
      'requestContext',
      'body',
      'isBase64Encoded',
    ]);
    const other = await eventFor('GET /api/v1/test-connection?a=1 HTTP/1.1\r\nHost: h\r\nCookie: c=1\r\n\r\n');
    expect(Object.keys(other)).toEqual(Object.keys(event));
  });

  it('joins repeated headers with commas (Node keeps only the first of some), lower-cases names, and takes cookies out into `cookies`', async () => {
    const event = await eventFor(
      [
        'GET /api/v1/test-connection HTTP/1.1',
        'Host: 127.0.0.1',
        'X-Audit-Client-Version: 0.3.2',
        'x-audit-client-version: 0.3.1',
        'Authorization: Bearer one',
        'Authorization: Bearer two',
        'Accept: text/plain',
        'ACCEPT: application/json',
        'Cookie: session=abc; theme=dark',
        'Cookie: lang=sv',
        'constructor: not a function',
        '__proto__: a header',
        '',
        '',
      ].join('\r\n'),
    );
    expect({ ...event.headers }).toEqual({
      host: '127.0.0.1',
      'x-audit-client-version': '0.3.2,0.3.1',
      authorization: 'Bearer one,Bearer two',
      accept: 'text/plain,application/json',
      constructor: 'not a function',
      ['__proto__']: 'a header',
    });
    expect(Object.hasOwn(event.headers, 'cookie')).toBe(false);
    expect(event.cookies).toEqual(['session=abc', 'theme=dark', 'lang=sv']);
    expect(event.body).toBeUndefined();
    expect(event.queryStringParameters).toBeUndefined();
  });

  it('gives the query string raw and parsed, repeated parameters joined by commas, and the path as the URL parser reads it', async () => {
    const event = await eventFor('GET /api/v1/test-connection?b=2&a=1&b=3&c=x%20y HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(event.rawPath).toBe('/api/v1/test-connection');
    expect(event.requestContext.http.path).toBe('/api/v1/test-connection');
    expect(event.rawQueryString).toBe('b=2&a=1&b=3&c=x%20y');
    expect({ ...event.queryStringParameters }).toEqual({ b: '2,3', a: '1', c: 'x y' });
    const dotted = await eventFor('GET /api/v1/x/../test-connection HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(dotted.rawPath).toBe('/api/v1/test-connection');
    const odd = await eventFor('GET /api/v1/%74est-connection?constructor=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(odd.rawPath).toBe('/api/v1/%74est-connection');
    expect({ ...odd.queryStringParameters }).toEqual({ constructor: '1' });
  });

  it('writes the time as API Gateway does, the same text for a whole second', () => {
    const at = Date.UTC(2026, 10, 4, 9, 3, 8, 120);
    expect(apiGatewayTime(at)).toBe('04/Nov/2026:09:03:08 +0000');
    expect(apiGatewayTime(at + 879)).toBe('04/Nov/2026:09:03:08 +0000');
    expect(apiGatewayTime(at + 880)).toBe('04/Nov/2026:09:03:09 +0000');
  });

  it('gives each invocation a context with the time left until its deadline', () => {
    const context = localContext('audit API', 'id-1');
    expect(context.awsRequestId).toBe('id-1');
    expect(context.functionName).toBe('audit API');
    expect(context.getRemainingTimeInMillis()).toBeGreaterThan(25_000);
    expect(context.getRemainingTimeInMillis()).toBeLessThanOrEqual(30_000);
    expect(() => context.succeed('x')).toThrow(/not supported/);
  });
});
