/**
 * The pollers' HTTPS client against real HTTPS servers with mutual TLS on 127.0.0.1: what it sends,
 * the redirects it follows, and every kind of failure with the category the error tracker gives it
 * (§10.9), each made by a real failing server.
 */
import { createServer as createHttpServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CertificateSet, makeCertificates } from '../../../../edge-agent/simulate/platform/certs.js';
import {
  ConnectionError,
  type GetJsonRequest,
  getJson,
  HttpStatusError,
  InvalidResponseError,
  MAX_REQUESTS_IN_FLIGHT,
  RequestCancelledError,
  RequestSlots,
  RequestTimeoutError,
  requestSlots,
  TlsError,
  xrfkey,
} from '../../../../edge-agent/sources/platform/http.js';
import type { ClientTls } from '../../../../edge-agent/sources/platform/tls.js';
import { categorise } from '../../../../shared/errors/tracker.js';
import { clientTlsOf, type HttpsStub, startHttpsStub } from '../../../support/platform-https.js';
import { freePort, LOOPBACK } from '../../../support/ports.js';

let certs: CertificateSet;
let stub: HttpsStub;
let elsewhere: HttpsStub;
/** A server whose certificate no CA of ours signed. */
let stranger: HttpsStub;
let tls: ClientTls;

beforeAll(async () => {
  certs = makeCertificates([LOOPBACK]);
  const strangers = makeCertificates([LOOPBACK]);
  [stub, elsewhere, stranger] = await Promise.all([
    startHttpsStub(certs),
    startHttpsStub(certs),
    startHttpsStub(strangers, { requestCert: false }),
  ]);
  tls = clientTlsOf(certs);
});

afterAll(async () => {
  await Promise.all([stub?.stop(), elsewhere?.stop(), stranger?.stop()]);
});

const get = (path: string, more: Partial<GetJsonRequest> = {}) =>
  getJson({
    url: new URL(`https://${stub.hostPort}${path}`),
    headers: [
      ['Cache-Control', 'no-cache'],
      ['Content-Type', 'application/json'],
    ],
    tls,
    timeoutMs: 2_000,
    maxBodyBytes: 1_000,
    ...more,
  });

/** The rejection of `promise`, which must reject. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the request to fail');
}

describe('getJson over mutual TLS', () => {
  it('presents the client certificate, sends the fixed headers first and lets configured ones replace them (case-insensitively)', async () => {
    stub.route('/ok', { json: { hello: 'world' } });
    const before = Date.now();
    const response = await get('/ok', { extraHeaders: { 'cache-control': 'max-age=5', 'X-Site': 'lab' } });
    expect(response.body).toEqual({ hello: 'world' });
    expect(response.receivedAtMs).toBeGreaterThanOrEqual(before);
    const [request] = stub.to('/ok');
    expect(request?.clientCert).toBe('svc-client');
    const names = (request?.rawHeaders ?? []).filter((_, i) => i % 2 === 0);
    expect(names.filter((n) => n !== 'Host' && n !== 'Connection')).toEqual([
      'cache-control',
      'Content-Type',
      'X-Site',
    ]);
    expect(request?.headers['cache-control']).toBe('max-age=5');
  });

  it('follows up to maxRedirects redirects within one deadline, and refuses one more', async () => {
    for (let i = 1; i <= 6; i++)
      stub.route(`/hop${i}`, {
        status: i % 2 === 0 ? 301 : 307,
        headers: { location: i === 6 ? '/landed' : `/hop${i + 1}` },
      });
    stub.route('/landed', { json: { landed: true } });
    const followed = await get('/hop2', { maxRedirects: 5 });
    expect(followed.body).toEqual({ landed: true });
    expect(followed.url.pathname).toBe('/landed');
    const tooMany = await failure(get('/hop1', { maxRedirects: 5 }));
    expect(tooMany).toBeInstanceOf(InvalidResponseError);
    expect((tooMany as Error).message).toBe('invalid response: more than 5 redirects');
    expect(categorise('HEALTH_API', tooMany)).toBe('invalid_response');
    // An API that is not redirected (maxRedirects 0): a redirect is not its answer.
    expect(categorise('PROXY_API', await failure(get('/hop1')))).toBe('invalid_response');
  });

  it('drops the configured headers when a redirect leaves the origin, and never follows one away from https', async () => {
    stub.route('/away', { status: 302, headers: { location: `https://${elsewhere.hostPort}/there` } });
    elsewhere.route('/there', { json: [] });
    await get('/away', { maxRedirects: 5, extraHeaders: { Authorization: 'Bearer secret-token' } });
    expect(stub.to('/away')[0]?.headers['authorization']).toBe('Bearer secret-token');
    const there = elsewhere.to('/there')[0];
    expect(there?.headers['authorization']).toBeUndefined();
    expect(there?.headers['cache-control']).toBe('no-cache');

    stub.route('/downgrade', { status: 302, headers: { location: `http://${LOOPBACK}:1/plain` } });
    const err = await failure(get('/downgrade', { maxRedirects: 5 }));
    expect((err as Error).message).toBe('invalid response: HTTP 302, a redirect away from https');
  });

  it('gives every HTTP error status its category (§10.9 rule 3) and keeps the start of the body for the log', async () => {
    const cases: [number, string][] = [
      [401, 'auth_error'],
      [403, 'auth_error'],
      [404, 'not_found'],
      [429, 'rate_limited'],
      [500, 'http_5xx'],
      [503, 'http_5xx'],
      [418, 'http_4xx'],
    ];
    for (const [status, category] of cases) {
      stub.route(`/status${status}`, { status, body: `{"error":"status ${status}"}\n` });
      const err = await failure(get(`/status${status}`));
      expect(err, String(status)).toBeInstanceOf(HttpStatusError);
      expect(err).toMatchObject({
        statusCode: status,
        message: `HTTP ${status}`,
        bodyPreview: `{"error":"status ${status}"}`,
        url: `https://${stub.hostPort}/status${status}`,
      });
      expect(categorise('HEALTH_API', err), String(status)).toBe(category);
    }
  });

  it('reports an answer that is not JSON, too large, or another 2xx than 200 as invalid_response', async () => {
    stub.route('/html', { body: '<html>timeout certificate TLS</html>' });
    const big = JSON.stringify({ filler: 'x'.repeat(2_000) });
    stub.route('/huge', { body: big, headers: { 'content-length': String(Buffer.byteLength(big)) } });
    stub.route('/huge-chunked', { body: big });
    stub.route('/nocontent', { status: 204 });
    stub.route('/accepted', { status: 202, json: {} });
    const html = await failure(get('/html'));
    // The body's words ("timeout", "certificate") are not in the message, so they cannot change the category.
    expect((html as Error).message).toBe('invalid response: the body of 36 bytes is not JSON');
    const huge = await failure(get('/huge'));
    expect((huge as Error).message).toBe(
      `invalid response: the body is ${Buffer.byteLength(big)} bytes; at most 1000 are accepted`,
    );
    // Without a Content-Length the reading stops past the limit.
    const chunked = await failure(get('/huge-chunked'));
    expect((chunked as Error).message).toBe('invalid response: the body is larger than 1000 bytes');
    const noContent = await failure(get('/nocontent'));
    expect((noContent as Error).message).toBe('invalid response: HTTP 204; only 200 carries the answer');
    for (const err of [html, huge, chunked, noContent, await failure(get('/accepted'))]) {
      expect(err).toBeInstanceOf(InvalidResponseError);
      expect(categorise('HEALTH_API', err)).toBe('invalid_response');
    }
  });

  it('gives up at the deadline: timeout', async () => {
    stub.route('/slow', { json: {}, delayMs: 2_000 });
    const err = await failure(get('/slow', { timeoutMs: 200 }));
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect(err).toMatchObject({ code: 'ETIMEDOUT', timeoutMs: 200, url: `https://${stub.hostPort}/slow` });
    expect(categorise('HEALTH_API', err)).toBe('timeout');
  });

  it('is cancelled by its signal (Svc stopping), before or during the request', async () => {
    stub.route('/endless', { json: {}, delayMs: 10_000 });
    const controller = new AbortController();
    const pending = failure(get('/endless', { timeoutMs: 20_000, signal: controller.signal }));
    await expect.poll(() => stub.to('/endless').length).toBe(1);
    controller.abort();
    const err = await pending;
    expect(err).toBeInstanceOf(RequestCancelledError);
    expect((err as Error).message).toBe('cancelled: Svc is stopping');
    expect(await failure(get('/endless', { signal: controller.signal }))).toBeInstanceOf(RequestCancelledError);
    expect(stub.to('/endless')).toHaveLength(1);
  });

  it('reports a closed port as connection_refused', async () => {
    const port = await freePort();
    const err = await failure(
      getJson({
        url: new URL(`https://${LOOPBACK}:${port}/engine/healthcheck`),
        headers: [],
        tls,
        timeoutMs: 2_000,
        maxBodyBytes: 1_000,
      }),
    );
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({
      code: 'ECONNREFUSED',
      address: LOOPBACK,
      port,
      message: 'connection refused (ECONNREFUSED)',
    });
    expect(categorise('HEALTH_API', err)).toBe('connection_refused');
  });

  it('reports a server that closes the connection without answering as connection_reset', async () => {
    const server = createHttpServer();
    server.on('connection', (socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, LOOPBACK, resolve));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const err = await failure(
        getJson({
          url: new URL(`https://${LOOPBACK}:${port}/`),
          headers: [],
          tls,
          timeoutMs: 2_000,
          maxBodyBytes: 1_000,
        }),
      );
      expect(err).toMatchObject({ code: 'ECONNRESET' });
      expect(categorise('HEALTH_API', err)).toBe('connection_reset');
    } finally {
      server.close();
    }
  });

  it('refuses a server certificate no configured CA signed (certificate_error), unless rejectUnauthorized is false', async () => {
    stranger.route('/engine/healthcheck', { json: { ok: true } });
    const url = new URL(`https://${stranger.hostPort}/engine/healthcheck`);
    const err = await failure(getJson({ url, headers: [], tls, timeoutMs: 2_000, maxBodyBytes: 1_000 }));
    expect(err).toBeInstanceOf(TlsError);
    expect((err as Error).message).toMatch(/^TLS handshake failed: /);
    expect(categorise('HEALTH_API', err)).toBe('certificate_error');
    const lenient = await getJson({
      url,
      headers: [],
      tls: clientTlsOf(certs, { rejectUnauthorized: false }),
      timeoutMs: 2_000,
      maxBodyBytes: 1_000,
    });
    expect(lenient.body).toEqual({ ok: true });
  });

  it('resumes the TLS session of its previous request to the same server, per client context; the client certificate still counts', async () => {
    stub.route('/resume', { json: { ok: true } });
    // Contexts of their own: the other tests' requests left sessions in the shared one.
    const [mine, other] = [clientTlsOf(certs), clientTlsOf(certs)];
    for (const context of [mine, mine, mine, other]) await get('/resume', { tls: context });
    expect(stub.to('/resume').map((r) => [r.resumed, r.clientCert])).toEqual([
      [false, 'svc-client'],
      [true, 'svc-client'],
      [true, 'svc-client'],
      [false, 'svc-client'],
    ]);
  });

  it('checks the certificate of a server that comes back on the same port: a session is not resumed by another server', async () => {
    const mine = clientTlsOf(certs);
    const first = await startHttpsStub(certs);
    first.route('/engine/healthcheck', { json: { ok: true } });
    const url = new URL(`https://${first.hostPort}/engine/healthcheck`);
    expect((await getJson({ url, headers: [], tls: mine, timeoutMs: 2_000, maxBodyBytes: 1_000 })).body).toEqual({
      ok: true,
    });
    await first.stop();
    const impostor = await startHttpsStub(makeCertificates([LOOPBACK]), { port: first.port });
    try {
      impostor.route('/engine/healthcheck', { json: { ok: true } });
      const err = await failure(getJson({ url, headers: [], tls: mine, timeoutMs: 2_000, maxBodyBytes: 1_000 }));
      expect(err).toBeInstanceOf(TlsError);
      expect(impostor.requests).toEqual([]);
    } finally {
      await impostor.stop();
    }
  });

  it("sends at most MAX_REQUESTS_IN_FLIGHT requests of one client context at once; a waiting request's deadline starts when it is sent", async () => {
    // Its own client context, so no other test's requests share its slots.
    const own = clientTlsOf(certs);
    stub.route('/held', { json: { ok: true }, delayMs: 2_000 });
    const extra = 8;
    const all = Array.from({ length: MAX_REQUESTS_IN_FLIGHT + extra }, () =>
      get('/held', { tls: own, timeoutMs: 3_000 }),
    );
    await expect.poll(() => stub.to('/held').length, { timeout: 1_900, interval: 20 }).toBe(MAX_REQUESTS_IN_FLIGHT);
    expect(requestSlots(own).queued).toBe(extra);
    // The last ones are answered about 4 s after they were asked for, 1 s past a deadline counted
    // from then: they succeed because theirs counts from their own sending.
    const answers = await Promise.all(all);
    expect(answers.every((a) => a.body !== null)).toBe(true);
    expect(stub.to('/held')).toHaveLength(MAX_REQUESTS_IN_FLIGHT + extra);
    expect(requestSlots(own).queued).toBe(0);
  });

  it('gives slots in order and lets a waiting request be cancelled', async () => {
    const slots = new RequestSlots(1);
    expect(await slots.acquire()).toBe(true);
    const order: string[] = [];
    const cancel = new AbortController();
    const a = slots.acquire().then((ok) => order.push(`a ${ok}`));
    const b = slots.acquire(cancel.signal).then((ok) => order.push(`b ${ok}`));
    const c = slots.acquire().then((ok) => order.push(`c ${ok}`));
    cancel.abort();
    await b;
    expect(slots.queued).toBe(2);
    slots.release();
    await a;
    slots.release();
    await c;
    expect(order).toEqual(['b false', 'a true', 'c true']);
    const stopped = new AbortController();
    stopped.abort();
    expect(await slots.acquire(stopped.signal)).toBe(false);
  });

  it('makes a new Xrfkey of 16 characters [A-Za-z0-9] each time', () => {
    const keys = Array.from({ length: 200 }, () => xrfkey());
    for (const key of keys) expect(key).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(new Set(keys).size).toBe(200);
    // Every character class shows up (a generator stuck on one class would fail this).
    const all = keys.join('');
    for (const cls of [/[A-Z]/, /[a-z]/, /[0-9]/]) expect(all).toMatch(cls);
  });
});
