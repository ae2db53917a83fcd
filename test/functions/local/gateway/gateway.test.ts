/**
 * Local mode's gateway against slow and oversized clients (docs/audit-api.md, "Local gateway
 * limits"), over real sockets: raw node:net clients that announce huge bodies, trickle headers or
 * bodies, hold many connections from one 127.0.0.x address, or pipeline requests (several sent in
 * one write, answered in order), in front of the real audit handler.
 * Timeouts are configured short (hundreds of milliseconds); no assertion measures speed: a trickler
 * is proven cut off by how little of its request it managed to send.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LocalGateway } from '../../../../functions/local/gateway/gateway.js';
import { connectionsCheckingInterval } from '../../../../functions/local/gateway/policing.js';
import { parseConfigText } from '../../../../shared/config/load.js';
import type { EventQueue, SendableEvent } from '../../../../shared/queue/port.js';
import {
  type ApiResponse,
  captureLog,
  envelope,
  expectError,
  type GatewayApi,
  startAuditApi,
  startGatewayApi,
} from '../../../support/audit.js';
import { type RawAnswer, type RawClient, rawClient, trickle } from '../../../support/raw-http.js';

const PATH = '/api/v1/audit-event';
const TOKEN = 'gateway-token-0123456789';
const ORIGIN = 'https://analytics.example.com';

let api: GatewayApi | undefined;
const clients: RawClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.socket.destroy();
  await api?.close();
  api = undefined;
});

async function gatewayWith(yaml: string[]): Promise<GatewayApi> {
  api = await startGatewayApi({ yaml });
  return api;
}

async function client(port: number, localAddress = '127.0.0.2'): Promise<RawClient> {
  const c = await rawClient(port, localAddress);
  clients.push(c);
  return c;
}

function head(lines: string[], method = 'POST', path = PATH): string {
  return `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`;
}

/** A complete POST of a valid envelope, with a Content-Length. */
function post(body = JSON.stringify(envelope())): string {
  return head(['content-type: application/json', `content-length: ${Buffer.byteLength(body)}`]) + body;
}

/** The JSON body without its time, to compare answers made at different moments. */
function timeless(res: ApiResponse): Record<string, unknown> {
  const { receivedAt: _receivedAt, ...rest } = res.json ?? {};
  return rest;
}

function warnings(gw: GatewayApi, rejection: string): Record<string, unknown>[] {
  return gw.log.lines().filter((l) => l['rejection'] === rejection);
}

describe('local gateway: bodies over maxBodyBytes', () => {
  it('answers 413 from a 50 MB Content-Length at once, without the body, as the handler answers a body over the limit, and closes the connection', async () => {
    const yaml = ['    maxBodyBytes: 2048', `    apiToken: ${TOKEN}`, '    cors:', `      allowedOrigins: [${ORIGIN}]`];
    const gw = await gatewayWith(yaml);
    const c = await client(gw.port);
    // The headers only: the client never sends a byte of the body it announces.
    c.write(
      head([
        `authorization: Bearer ${TOKEN}`,
        `origin: ${ORIGIN}`,
        'content-type: application/json',
        `content-length: ${50 * 1024 * 1024}`,
      ]),
    );
    const res = await c.answer();
    expect(expectError(res, 413, 'Payload too large')).toEqual(['the body exceeds 2048 bytes']);
    expect(res.headers['connection']).toBe('close');
    // The handler's checks ran (rate limit, token) and its CORS headers are there, so a browser can read the 413.
    expect(res.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    // The same body the handler gives a body over the limit that it was handed whole.
    const lambda = await startAuditApi('lambda', { yaml });
    try {
      const whole = await lambda.call({
        body: envelope({ payload: { note: 'x'.repeat(4096) } }),
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(whole.status).toBe(413);
      expect(timeless(res)).toEqual(timeless(whole));
    } finally {
      await lambda.close();
    }
    // The server closes the connection; the client does nothing more.
    await c.closed;
    expect(gw.gateway.counters.tooLarge).toBe(1);
    expect(gw.delivered).toEqual([]);
  });

  it('keeps the order of the checks for a body it does not read: no token is 401, over the rate limit is 429', async () => {
    const gw = await gatewayWith([
      `    apiToken: ${TOKEN}`,
      '    maxBodyBytes: 2048',
      '    rateLimit:',
      '      maxPerMinute: 2',
    ]);
    const huge = [`content-length: ${50 * 1024 * 1024}`, 'content-type: application/json'];
    const anonymous = await client(gw.port);
    anonymous.write(head(huge));
    const unauthorised = await anonymous.answer();
    expectError(unauthorised, 401, 'Unauthorized');
    expect(unauthorised.headers['connection']).toBe('close');
    await anonymous.closed;
    const second = await client(gw.port);
    second.write(head([...huge, `authorization: Bearer ${TOKEN}`]));
    expect((await second.answer()).status).toBe(413);
    // Both counted against the rate limit, as they are when the body is read.
    const third = await client(gw.port);
    third.write(head([...huge, `authorization: Bearer ${TOKEN}`]));
    expectError(await third.answer(), 429, 'Too many requests');
    expect(gw.gateway.counters.tooLarge).toBe(3);
  });

  it('answers 413 without a 100 Continue to a client that waits for one, and 100 Continue then 202 within the limit', async () => {
    const gw = await gatewayWith(['    maxBodyBytes: 2048']);
    const big = await client(gw.port);
    big.write(head(['content-type: application/json', 'content-length: 4096', 'expect: 100-continue']));
    const refused = await big.answer();
    expect(refused.status).toBe(413);
    expect(big.received()).not.toContain('100 Continue');
    await big.closed;

    const small = await client(gw.port);
    const body = JSON.stringify(envelope());
    small.write(
      head(['content-type: application/json', `content-length: ${Buffer.byteLength(body)}`, 'expect: 100-continue']),
    );
    const go = await small.answer();
    expect(go.status).toBe(100);
    small.write(body);
    expect((await small.answer(go.end)).status).toBe(202);
  });

  it('answers 413 to a chunked body as soon as it passes maxBodyBytes, before the body ends, and closes the connection', async () => {
    const gw = await gatewayWith(['    maxBodyBytes: 2048']);
    const c = await client(gw.port);
    c.write(head(['content-type: application/json', 'transfer-encoding: chunked']));
    const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    c.write(chunk('x'.repeat(1500)));
    c.write(chunk('y'.repeat(1000)));
    // No last chunk ("0\r\n\r\n") is ever sent: the answer cannot have waited for the end.
    const res = await c.answer();
    expect(expectError(res, 413, 'Payload too large')).toEqual(['the body exceeds 2048 bytes']);
    expect(res.headers['connection']).toBe('close');
    await c.closed;
    expect(gw.gateway.counters.tooLarge).toBe(1);
  });

  it('passes a chunked body within the limit to the handler', async () => {
    const gw = await gatewayWith(['    maxBodyBytes: 2048']);
    const c = await client(gw.port);
    const body = JSON.stringify(envelope());
    c.write(head(['content-type: application/json', 'transfer-encoding: chunked']));
    c.write(`${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`);
    expect((await c.answer()).status).toBe(202);
  });
});

describe('local gateway: slow clients', () => {
  it('answers 408 to a body that trickles past bodyTimeout, long before it would end, and closes the connection', async () => {
    const gw = await gatewayWith(['    bodyTimeout: 300']);
    const c = await client(gw.port);
    const body = JSON.stringify(envelope());
    c.write(head(['content-type: application/json', `content-length: ${Buffer.byteLength(body)}`]));
    // One byte every 20 ms would take several seconds for the whole body.
    const sending = trickle(c, body, 1, 20);
    const res = await c.answer();
    expect(expectError(res, 408, 'Request timeout')).toEqual(['the request body did not arrive within 300 ms']);
    expect(res.headers['connection']).toBe('close');
    await c.closed;
    expect(await sending).toBeLessThan(body.length);
    expect(gw.gateway.counters.timedOut).toBe(1);
    expect(gw.delivered).toEqual([]);
  });

  it('lets a body that arrives in pieces within bodyTimeout through', async () => {
    const gw = await gatewayWith(['    bodyTimeout: 10000']);
    const c = await client(gw.port);
    const body = JSON.stringify(envelope());
    c.write(head(['content-type: application/json', `content-length: ${Buffer.byteLength(body)}`]));
    await trickle(c, body, Math.ceil(body.length / 3), 30);
    expect((await c.answer()).status).toBe(202);
  });

  it('answers 408 to a client that trickles its headers past headersTimeout, and closes the connection', async () => {
    const gw = await gatewayWith(['    headersTimeout: 300']);
    const c = await client(gw.port);
    // A header line every 20 ms, endlessly (until the server closes).
    const lines = Array.from({ length: 10_000 }, (_, i) => `x-slow-${i}: ${i}\r\n`).join('');
    c.write(`POST ${PATH} HTTP/1.1\r\n`);
    const sending = trickle(c, lines, 12, 20);
    const res = await c.answer();
    expect(expectError(res, 408, 'Request timeout')).toEqual(['the request headers did not arrive within 300 ms']);
    expect(res.headers['connection']).toBe('close');
    await c.closed;
    expect(await sending).toBeLessThan(lines.length / 12);
    expect(gw.gateway.counters.timedOut).toBe(1);
  });

  it('closes a connection that sends nothing after headersTimeout, with a 408', async () => {
    const gw = await gatewayWith(['    headersTimeout: 200']);
    const c = await client(gw.port);
    expect(expectError(await c.answer(), 408, 'Request timeout')).toEqual([
      'the request headers did not arrive within 200 ms',
    ]);
    await c.closed;
  });

  it('documents its defaults: 10 s for headers, 10 s for a body, 32 connections per address, checked every second', () => {
    const { auditEvents } = parseConfigText('Svc:\n  auditEvents:\n    enable: true\n', 'defaults.yaml', {}).config;
    expect(auditEvents).toMatchObject({
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
      maxConnectionsPerClient: 32,
      maxBodyBytes: 1_048_576,
      trustedProxies: [],
    });
    expect(connectionsCheckingInterval(10_000)).toBe(1000);
    expect(connectionsCheckingInterval(200)).toBe(50);
  });
});

describe('local gateway: connections per client address', () => {
  /** A connection from `address` that has had one answer and stays open, idle (keep-alive). */
  async function idle(port: number, address: string): Promise<RawClient> {
    const c = await client(port, address);
    c.write(post());
    expect((await c.answer()).status).toBe(202);
    return c;
  }

  /** A connection from `address` in the middle of its request: the request line sent, the headers not. */
  async function busy(port: number, address: string): Promise<RawClient> {
    const c = await client(port, address);
    c.write(`POST ${PATH} HTTP/1.1\r\n`);
    return c;
  }

  /** A new connection from `address`: its answer's status, or 0 when it is closed without one. */
  async function attempt(port: number, address: string): Promise<number> {
    const c = await client(port, address);
    c.write(post());
    return c.answer().then(
      (res) => res.status,
      () => 0,
    );
  }

  it('closes a connection over maxConnectionsPerClient at once, without an answer; other addresses are not affected; a closed connection frees its place', async () => {
    const gw = await gatewayWith(['    maxConnectionsPerClient: 3']);
    // The server accepts connections in the order they were made, so these three are counted before the fourth.
    const mine = [await busy(gw.port, '127.0.0.2'), await busy(gw.port, '127.0.0.2'), await busy(gw.port, '127.0.0.2')];
    const over = await client(gw.port, '127.0.0.2');
    over.write(post());
    expect(await over.closed).toBe('');
    expect(gw.gateway.counters.connectionsRefused).toBe(1);
    // Another client is served while 127.0.0.2 is at its limit.
    expect(await attempt(gw.port, '127.0.0.3')).toBe(202);
    // The connections already open still work.
    const body = JSON.stringify(envelope());
    mine[0]?.write(
      `host: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    expect((await mine[0]?.answer())?.status).toBe(202);
    // One closes: a new one from the same address is let in.
    mine[1]?.socket.destroy();
    await mine[1]?.closed;
    await expect.poll(() => attempt(gw.port, '127.0.0.2')).toBe(202);
  });

  it('lets a new connection in at the limit by closing the address’s longest idle kept-alive connection', async () => {
    const gw = await gatewayWith(['    maxConnectionsPerClient: 2']);
    const first = await idle(gw.port, '127.0.0.2');
    const second = await idle(gw.port, '127.0.0.2');
    expect(await attempt(gw.port, '127.0.0.2')).toBe(202);
    // The first one went idle first, so it gave way; the second still serves.
    await first.closed;
    expect(second.isClosed()).toBe(false);
    second.write(post());
    expect((await second.answer(second.received().length)).status).toBe(202);
    expect(gw.gateway.counters.connectionsRefused).toBe(0);
  });

  it('does not limit the trustedProxies, through which many clients come', async () => {
    const gw = await gatewayWith(['    maxConnectionsPerClient: 2', "    trustedProxies: ['127.0.0.4']"]);
    const through = [];
    for (let i = 0; i < 5; i++) through.push(await busy(gw.port, '127.0.0.4'));
    expect(await attempt(gw.port, '127.0.0.4')).toBe(202);
    expect(through.every((c) => !c.isClosed())).toBe(true);
    expect(gw.gateway.counters.connectionsRefused).toBe(0);
    // Any other address is still limited.
    await busy(gw.port, '127.0.0.5');
    await busy(gw.port, '127.0.0.5');
    expect(await attempt(gw.port, '127.0.0.5')).toBe(0);
    expect(gw.gateway.counters.connectionsRefused).toBe(1);
  });

  it('logs refusals at most once per address and interval, with the running total, and counts every one', async () => {
    const gw = await gatewayWith(['    maxConnectionsPerClient: 1']);
    await busy(gw.port, '127.0.0.2');
    await busy(gw.port, '127.0.0.3');
    for (let i = 0; i < 3; i++) expect(await attempt(gw.port, '127.0.0.2')).toBe(0);
    expect(await attempt(gw.port, '127.0.0.3')).toBe(0);
    expect(gw.gateway.counters.connectionsRefused).toBe(4);
    const lines = warnings(gw, 'connectionsRefused');
    expect(lines.map((l) => l['clientAddress'])).toEqual(['127.0.0.2', '127.0.0.3']);
    expect(lines[0]).toMatchObject({ level: 'warn', limit: 1, total: 1, suppressedSinceLastLine: 0 });
    expect(String(lines[0]?.['msg'])).toContain('Svc.auditEvents.maxConnectionsPerClient');
    expect(lines[1]).toMatchObject({ total: 4 });
  });
});

describe('local gateway: HTTP/1.1 pipelining (requests sent before the answers to earlier ones)', () => {
  const TEST_CONNECTION = '/api/v1/test-connection';
  const get = (path: string) => head([], 'GET', path);

  /** Every complete answer on the connection, in the order received: waits for `count` of them. */
  async function answers(c: RawClient, count: number): Promise<RawAnswer[]> {
    const out: RawAnswer[] = [];
    let offset = 0;
    while (out.length < count) {
      const res = await c.answer(offset);
      out.push(res);
      offset = res.end;
    }
    return out;
  }

  it('answers three requests sent in one write in order (200, 404, 200) and keeps the connection', async () => {
    const gw = await gatewayWith([]);
    const c = await client(gw.port);
    c.write(get(TEST_CONNECTION) + get('/api/v1/no-such-thing') + get(TEST_CONNECTION));
    const [first, second, third] = await answers(c, 3);
    expect(first?.status).toBe(200);
    expect(first?.json).toMatchObject({ status: 'ok' });
    expect(second?.status).toBe(404);
    expect(third?.status).toBe(200);
    expect(third?.json).toMatchObject({ status: 'ok' });
    // Each 200 counted against the rate limit in the order sent.
    expect(Number(first?.headers['x-ratelimit-remaining'])).toBe(Number(third?.headers['x-ratelimit-remaining']) + 1);
    // Kept alive: a fourth request on the same connection is answered too.
    c.write(get(TEST_CONNECTION));
    expect((await c.answer(c.received().length)).status).toBe(200);
    expect(c.isClosed()).toBe(false);
    expect(gw.gateway.counters).toEqual({ connectionsRefused: 0, tooLarge: 0, timedOut: 0, badRequests: 0 });
  });

  it('answers a POST with a body and a GET sent behind it in one write: 202, then 200, and queues the event', async () => {
    const gw = await gatewayWith([]);
    const c = await client(gw.port);
    const body = envelope();
    c.write(post(JSON.stringify(body)) + get(TEST_CONNECTION));
    const [accepted, reachable] = await answers(c, 2);
    expect(accepted?.status).toBe(202);
    expect(accepted?.json).toMatchObject({ status: 'accepted', outcome: 'processed' });
    expect(reachable?.status).toBe(200);
    await expect.poll(() => gw.delivered.map((e) => e.id)).toEqual([String(body['eventId']).toLowerCase()]);
  });

  it('ends the pipeline at an answer that closes the connection: the requests behind it are not answered', async () => {
    const gw = await gatewayWith(['    maxBodyBytes: 2048']);
    const c = await client(gw.port);
    const big = JSON.stringify(envelope({ payload: { note: 'x'.repeat(4096) } }));
    c.write(get(TEST_CONNECTION) + post(big) + get(TEST_CONNECTION));
    const [reachable, tooLarge] = await answers(c, 2);
    expect(reachable?.status).toBe(200);
    expect(tooLarge?.status).toBe(413);
    expect(tooLarge?.headers['connection']).toBe('close');
    const all = await c.closed;
    expect(all.length).toBe(tooLarge?.end);
    expect(gw.delivered).toEqual([]);
  });

  it('answers the requests before a broken one first, in order, then the 400 or 431, and closes the connection', async () => {
    const gw = await gatewayWith([]);
    const notHttp = await client(gw.port);
    notHttp.write(get(TEST_CONNECTION) + get('/api/v1/no-such-thing') + 'HELLO THERE\r\n\r\n');
    const [reachable, unknown, bad] = await answers(notHttp, 3);
    expect(reachable?.status).toBe(200);
    expect(unknown?.status).toBe(404);
    expect(bad && expectError(bad, 400, 'Bad request')).toEqual(['the request is not valid HTTP/1.1']);
    expect((await notHttp.closed).length).toBe(bad?.end);

    const hugeHeaders = await client(gw.port);
    hugeHeaders.write(post() + head([`x-big: ${'a'.repeat(20_000)}`], 'GET', TEST_CONNECTION));
    const [accepted, tooLarge] = await answers(hugeHeaders, 2);
    expect(accepted?.status).toBe(202);
    expect(tooLarge && expectError(tooLarge, 431, 'Request header fields too large')).toHaveLength(1);
    await hugeHeaders.closed;
    // One answer each, counted once each, however many bytes followed the broken request.
    expect(gw.gateway.counters.badRequests).toBe(2);
  });

  it('holds the answer to a later request that is done first until the earlier one is answered', async () => {
    // A queue that holds every send until released: the POST waits there while the GET behind it needs no queue.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const sent: SendableEvent[] = [];
    const queue: EventQueue = {
      send: async (events) => {
        sent.push(...events);
        await held;
      },
    };
    api = await startGatewayApi({ yaml: [], queue });
    const c = await client(api.port);
    c.write(post() + get(TEST_CONNECTION));
    await expect.poll(() => sent.length).toBe(1);
    // A round trip on another connection: meanwhile the GET, parsed with the POST, has been handled.
    const other = await client(api.port, '127.0.0.3');
    other.write(get(TEST_CONNECTION));
    expect((await other.answer()).status).toBe(200);
    expect(c.received()).toBe('');
    release();
    const [accepted, reachable] = await answers(c, 2);
    expect(accepted?.status).toBe(202);
    expect(reachable?.status).toBe(200);
  });
});

describe('local gateway: its other answers are ingestion responses too', () => {
  it('answers a request that is not HTTP with 400 and closes the connection', async () => {
    const gw = await gatewayWith([]);
    const c = await client(gw.port);
    c.write('HELLO THERE\r\n\r\n');
    const res = await c.answer();
    expect(expectError(res, 400, 'Bad request')).toEqual(['the request is not valid HTTP/1.1']);
    await c.closed;
    expect(gw.gateway.counters.badRequests).toBe(1);
  });

  it('answers headers over Node’s header size limit with 431', async () => {
    const gw = await gatewayWith([]);
    const c = await client(gw.port);
    c.write(head([`x-big: ${'a'.repeat(20_000)}`], 'GET', '/api/v1/test-connection'));
    expectError(await c.answer(), 431, 'Request header fields too large');
    await c.closed;
  });

  it('answers an Expect other than 100-continue with 417', async () => {
    const gw = await gatewayWith([]);
    const c = await client(gw.port);
    c.write(head(['expect: something-else', 'content-length: 0']));
    expect(expectError(await c.answer(), 417, 'Expectation failed')).toEqual([
      'the only Expect this server meets is 100-continue',
    ]);
  });

  it('answers 500 with an error id and receivedAt when the handler itself throws', async () => {
    const log = await captureLog();
    const { auditEvents } = parseConfigText('Svc:\n  auditEvents:\n    enable: true\n', 'test.yaml', {}).config;
    const gateway = new LocalGateway({
      name: 'broken API',
      host: '127.0.0.1',
      port: 0,
      log: log.logger,
      limits: auditEvents,
      handler: () => Promise.reject(new Error('handler exploded at /srv/svc/x.js:1:1')),
      oversized: () => Promise.reject(new Error('not called here')),
    });
    await gateway.start();
    try {
      const c = await client(gateway.address.port);
      c.write(post());
      const res = await c.answer();
      expectError(res, 500, 'Internal server error; retry in 30 to 60 seconds', 'error');
      const errorId = (res.json?.['details'] as { errorId: string }).errorId;
      expect(errorId).toMatch(/^[0-9a-f-]{36}$/);
      expect(JSON.stringify(log.lines().find((l) => l['errorId'] === errorId))).toContain('handler exploded');
    } finally {
      await gateway.stop();
    }
  });
});
