/**
 * MonSaasWriter (platform-formats.md §8) against a recording HTTP server standing in for the
 * monitoring SaaS: URLs, headers, bodies, accounts, retries, failures and the error tracker, and the
 * API keys kept out of every log line.
 */
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SvcConfig } from '../../../../shared/config/schema.js';
import {
  eventUrl,
  type MetricPayload,
  type MonSaasEvent,
  MonSaasPostError,
  MonSaasWriter,
  type MonSaasWriterOptions,
} from '../../../../shared/destinations/monsaas/client.js';
import { ErrorTracker, type TrackedError } from '../../../../shared/errors/tracker.js';
import { createLogger, type LoggerHandle } from '../../../../shared/logging/logger.js';
import { silentLog } from '../../../support/log.js';
import { freePort } from '../../../support/ports.js';
import { type RecordingServer, startRecordingServer } from '../../../support/recording-http.js';

const OPS_KEY = 'NRII-ops-secret-key-0123456789abcdef';
const DEV_KEY = 'NRII-dev-secret-key-fedcba9876543210';
const CREDENTIALS: SvcConfig['thirdPartyToolsCredentials']['monsaas'] = [
  { accountName: 'ops', insertApiKey: OPS_KEY, accountId: '1234567' },
  { accountName: 'dev', insertApiKey: DEV_KEY, accountId: '7654321' },
];
const MODULE = 'HEALTH_METRICS_MONSAAS';
const EVENT_MODULE = 'USER_EVENTS_MONSAAS';
/** Short waits instead of 1, 2, 4 s. */
const FAST_RETRIES = [10, 20, 40];

const PAYLOAD: MetricPayload = [
  {
    common: {
      timestamp: 1710233101876,
      'interval.ms': 30000,
      attributes: {
        host: 'node1.lab.local',
        server_name: 'Node1',
        server_description: 'Central node',
        svcVersion: '1.0.0',
      },
    },
    metrics: [
      { name: 'qs_memCommitted', type: 'gauge', value: 4418279833.6 },
      { name: 'qs_engineSaturated', type: 'gauge', value: 0 },
    ],
  },
];

const EVENT: MonSaasEvent = {
  eventType: 'qs_userEvent',
  timestamp: 1710233101876,
  qs_host: 'PLAT-N1',
  qs_event_action: 'Start session',
  qs_userFull: 'LAB\\goran',
  qs_userDirectory: 'LAB',
  qs_userId: 'goran',
  qs_origin: 'AppAccess',
  env: 'dev',
  scrambled: false,
};

function settings(serverUrl: string, parts: { metricUrl?: string; eventUrl?: string } = {}): SvcConfig['monsaas'] {
  const off = { enable: false };
  return {
    enable: true,
    event: {
      url: parts.eventUrl ?? `${serverUrl}/events-api`,
      header: [{ name: 'X-Source', value: 'svc-events' }],
      attribute: { static: [], dynamic: { svcVersion: { enable: true } } },
    },
    metric: {
      destinationAccount: ['ops'],
      url: parts.metricUrl ?? `${serverUrl}/metric/v1`,
      header: [
        { name: 'X-Team', value: 'platform' },
        { name: 'X-Env', value: 'lab' },
      ],
      dynamic: {
        engine: { memory: off, cpu: off, calls: off, selections: off, sessions: off, users: off, saturated: off },
        apps: { docCount: off, activeDocs: off, loadedDocs: off, inMemoryDocs: off },
        cache: { cache: off },
        proxy: { sessions: off },
      },
      attribute: { static: [], dynamic: { svcVersion: { enable: true } } },
    },
  };
}

interface LogLine {
  level: string;
  msg: string;
  [key: string]: unknown;
}

describe('MonSaasWriter (recording server standing in for the monitoring SaaS)', () => {
  let server: RecordingServer;
  let handle: LoggerHandle;
  let chunks: string[] = [];
  let tracked: TrackedError[] = [];
  let tracker: ErrorTracker;

  const logLines = (): LogLine[] => {
    handle.flush();
    return chunks
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as LogLine);
  };
  const errorLines = (): LogLine[] => logLines().filter((l) => l.level === 'error');

  const writer = (options: Partial<MonSaasWriterOptions> = {}): MonSaasWriter =>
    new MonSaasWriter({
      settings: settings(server.url),
      credentials: CREDENTIALS,
      log: handle.logger,
      errors: tracker,
      retryDelaysMs: FAST_RETRIES,
      ...options,
    });

  beforeAll(async () => {
    server = await startRecordingServer();
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString('utf8'));
        done();
      },
    });
    // Lowest level, so the DEBUG lines about retries are checked for secrets too. No `secrets`
    // option: the logger's own scrubbing must not be what keeps the keys out.
    handle = await createLogger({ level: 'silly', pretty: false, destination });
  });

  afterAll(async () => {
    await server.stop();
    await handle.close();
  });

  beforeEach(() => {
    server.reset();
    chunks = [];
    tracked = [];
    tracker = new ErrorTracker({ enabled: true, log: silentLog, sink: (e) => tracked.push(e) });
  });

  afterEach(() => {
    // Whatever the test did: no API key in any log line or tracked error.
    const text = chunks.join('');
    expect(text).not.toContain(OPS_KEY);
    expect(text).not.toContain(DEV_KEY);
    for (const t of tracked) {
      const err = t.error;
      const dump = JSON.stringify(err) + String(err) + (err instanceof Error ? (err.stack ?? '') : '');
      expect(dump).not.toContain(OPS_KEY);
      expect(dump).not.toContain(DEV_KEY);
    }
  });

  it('posts metrics to monsaas.metric.url verbatim, once per account, with the §8 headers and the §8.1 body', async () => {
    const result = await writer().postMetrics(['ops', 'dev'], PAYLOAD, MODULE);

    expect(result.ok).toBe(true);
    expect(result.accounts.map((a) => [a.account, a.outcome, a.status, a.attempts])).toEqual([
      ['ops', 'sent', 202, 1],
      ['dev', 'sent', 202, 1],
    ]);
    expect(server.requests).toHaveLength(2);
    for (const r of server.requests) {
      expect(r.method).toBe('POST');
      expect(r.url).toBe('/metric/v1');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['x-team']).toBe('platform');
      expect(r.headers['x-env']).toBe('lab');
      // The event headers are not used for metrics.
      expect(r.headers['x-source']).toBeUndefined();
      expect(r.body).toEqual(PAYLOAD);
      expect(r.rawBody).toBe(JSON.stringify(PAYLOAD));
    }
    expect(server.requests.map((r) => r.headers['api-key']).sort()).toEqual([DEV_KEY, OPS_KEY].sort());
    expect(tracked).toEqual([]);
  });

  it('keeps the metric URL exactly as configured (trailing slash, query)', async () => {
    const w = writer({ settings: settings(server.url, { metricUrl: `${server.url}/metric/v1/?region=eu` }) });
    expect((await w.postMetrics(['ops'], PAYLOAD, MODULE)).ok).toBe(true);
    expect(server.requests.map((r) => r.url)).toEqual(['/metric/v1/?region=eu']);
  });

  it('posts an event to the event URL + v1/accounts/<accountId>/events, with and without a trailing slash', async () => {
    const withoutSlash = writer({ settings: settings(server.url, { eventUrl: `${server.url}/events-api` }) });
    const withSlash = writer({ settings: settings(server.url, { eventUrl: `${server.url}/events-api/` }) });

    expect((await withoutSlash.postEvent(['ops'], EVENT, EVENT_MODULE)).ok).toBe(true);
    expect((await withSlash.postEvent(['dev'], EVENT, EVENT_MODULE)).ok).toBe(true);

    expect(server.requests.map((r) => r.url)).toEqual([
      '/events-api/v1/accounts/1234567/events',
      '/events-api/v1/accounts/7654321/events',
    ]);
    const [first, second] = server.requests;
    expect(first?.headers['api-key']).toBe(OPS_KEY);
    expect(second?.headers['api-key']).toBe(DEV_KEY);
    for (const r of server.requests) {
      expect(r.method).toBe('POST');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['x-source']).toBe('svc-events');
      expect(r.headers['x-team']).toBeUndefined();
      expect(r.body).toEqual(EVENT);
    }
    expect(eventUrl('https://insights.example.com', '42')).toBe('https://insights.example.com/v1/accounts/42/events');
    expect(eventUrl('https://insights.example.com/', '42')).toBe('https://insights.example.com/v1/accounts/42/events');
  });

  it('lets a configured header replace a built-in one of the same name', async () => {
    const s = settings(server.url);
    s.metric.header = [{ name: 'content-type', value: 'application/json; charset=utf-8' }];
    expect((await writer({ settings: s }).postMetrics(['ops'], PAYLOAD, MODULE)).ok).toBe(true);
    expect(server.requests[0]?.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('sends once to an account named twice', async () => {
    const result = await writer().postEvent(['ops', 'ops'], EVENT, EVENT_MODULE);
    expect(result.accounts).toHaveLength(1);
    expect(server.requests).toHaveLength(1);
  });

  it('logs an account without credentials at ERROR and sends nothing for it', async () => {
    const result = await writer().postMetrics(['ghost', 'ops'], PAYLOAD, MODULE);

    expect(result.ok).toBe(false);
    expect(result.accounts.map((a) => [a.account, a.outcome, a.attempts])).toEqual([
      ['ghost', 'no-credentials', 0],
      ['ops', 'sent', 1],
    ]);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers['api-key']).toBe(OPS_KEY);
    expect(errorLines()).toEqual([expect.objectContaining({ level: 'error', account: 'ghost', module: MODULE })]);
    expect(errorLines()[0]?.msg).toMatch(/no credentials/);
  });

  it('accepts 200 as success too', async () => {
    server.reply(200);
    const result = await writer().postMetrics(['ops'], PAYLOAD, MODULE);
    expect(result.accounts[0]).toMatchObject({ outcome: 'sent', status: 200, attempts: 1 });
    expect(tracked).toEqual([]);
  });

  it('treats any other 2xx (201, 204) as a failure, not retried', async () => {
    server.reply(201, 204);
    const w = writer();
    const first = await w.postMetrics(['ops'], PAYLOAD, MODULE);
    const second = await w.postEvent(['ops'], EVENT, EVENT_MODULE);
    expect(first.accounts[0]).toMatchObject({ outcome: 'failed', status: 201, attempts: 1 });
    expect(second.accounts[0]).toMatchObject({ outcome: 'failed', status: 204, attempts: 1 });
    expect(server.requests).toHaveLength(2);
    expect(tracked.map((t) => [t.type, t.module])).toEqual([
      ['MONSAAS_POST', MODULE],
      ['MONSAAS_POST', EVENT_MODULE],
    ]);
  });

  it('retries 503, 503 and succeeds on the third attempt (no error tracked)', async () => {
    server.reply(503, 503, 202);
    const result = await writer().postMetrics(['ops'], PAYLOAD, MODULE);

    expect(result.ok).toBe(true);
    expect(result.accounts[0]).toMatchObject({ outcome: 'sent', status: 202, attempts: 3 });
    expect(server.requests).toHaveLength(3);
    for (const r of server.requests) expect(r.body).toEqual(PAYLOAD);
    expect(tracked).toEqual([]);
    expect(errorLines()).toEqual([]);
  });

  it('waits the injected delays between retries', async () => {
    server.reply(503, 503, 202);
    await writer({ retryDelaysMs: [150, 300, 600] }).postMetrics(['ops'], PAYLOAD, MODULE);
    const [a, b, c] = server.requests.map((r) => r.at);
    expect(a !== undefined && b !== undefined && c !== undefined).toBe(true);
    expect((b ?? 0) - (a ?? 0)).toBeGreaterThanOrEqual(140);
    expect((c ?? 0) - (b ?? 0)).toBeGreaterThanOrEqual(290);
  });

  it('retries 429, honouring Retry-After', async () => {
    server.reply({ status: 429, headers: { 'retry-after': '0.3' } }, 202);
    const result = await writer().postEvent(['ops'], EVENT, EVENT_MODULE);
    expect(result.ok).toBe(true);
    const [a, b] = server.requests.map((r) => r.at);
    expect((b ?? 0) - (a ?? 0)).toBeGreaterThanOrEqual(280);
  });

  it('gives up after 3 retries of a 5xx and tracks MONSAAS_POST (http_5xx) with the module', async () => {
    server.setFallback(500);
    const result = await writer().postMetrics(['ops'], PAYLOAD, MODULE, 'Node1');

    expect(result.ok).toBe(false);
    expect(result.accounts[0]).toMatchObject({ outcome: 'failed', status: 500, attempts: 4 });
    expect(server.requests).toHaveLength(4);
    expect(tracked).toHaveLength(1);
    expect(tracked[0]).toMatchObject({
      type: 'MONSAAS_POST',
      module: MODULE,
      serverName: 'Node1',
      category: 'http_5xx',
    });
  });

  it('does not retry a 400: one request, MONSAAS_POST tracked per failed account with the module, ERROR logged', async () => {
    server.setFallback({ status: 400, body: '{"error":"invalid payload"}' });
    const result = await writer().postEvent(['ops', 'dev'], EVENT, EVENT_MODULE);

    expect(result.ok).toBe(false);
    expect(server.requests).toHaveLength(2);
    expect(result.accounts.map((a) => [a.account, a.outcome, a.status, a.attempts])).toEqual([
      ['ops', 'failed', 400, 1],
      ['dev', 'failed', 400, 1],
    ]);
    expect(tracked.map((t) => [t.type, t.module, t.category, t.serverName])).toEqual([
      ['MONSAAS_POST', EVENT_MODULE, 'http_4xx', '_no_server_context'],
      ['MONSAAS_POST', EVENT_MODULE, 'http_4xx', '_no_server_context'],
    ]);
    const err = tracked[0]?.error;
    expect(err).toBeInstanceOf(MonSaasPostError);
    expect(err).toMatchObject({
      status: 400,
      kind: 'event',
      requestUrl: `${server.url}/events-api/v1/accounts/1234567/events`,
      host: '127.0.0.1',
    });
    expect(tracker.summary().details.MONSAAS_POST?.total).toBe(2);

    const errors = errorLines();
    expect(errors).toHaveLength(2);
    expect(errors).toContainEqual(
      expect.objectContaining({
        module: EVENT_MODULE,
        account: 'ops',
        status: 400,
        reason: '{"error":"invalid payload"}',
      }),
    );
    expect(errors).toContainEqual(expect.objectContaining({ module: EVENT_MODULE, account: 'dev', status: 400 }));
  });

  it('times out after timeoutMs, retries, and tracks MONSAAS_POST with category timeout', async () => {
    server.setFallback({ status: 202, delayMs: 2_000 });
    const started = Date.now();
    const result = await writer({ timeoutMs: 200, retryDelaysMs: [10] }).postMetrics(['ops'], PAYLOAD, MODULE);
    const elapsed = Date.now() - started;

    expect(result.ok).toBe(false);
    expect(result.accounts[0]).toMatchObject({ outcome: 'failed', attempts: 2 });
    expect(server.requests).toHaveLength(2);
    expect(elapsed).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(1_500);
    expect(tracked).toHaveLength(1);
    expect(tracked[0]).toMatchObject({ type: 'MONSAAS_POST', module: MODULE, category: 'timeout' });
    expect(tracked[0]?.error).toMatchObject({ code: 'ETIMEDOUT', requestTimeoutMs: 200 });
    expect(errorLines()).toEqual([expect.objectContaining({ module: MODULE, account: 'ops', code: 'ETIMEDOUT' })]);
  });

  it('retries a refused connection and tracks it as connection_refused', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const result = await writer({ settings: settings(closed), retryDelaysMs: [1, 1, 1] }).postMetrics(
      ['ops'],
      PAYLOAD,
      MODULE,
    );
    expect(result.accounts[0]).toMatchObject({ outcome: 'failed', attempts: 4 });
    expect(tracked).toHaveLength(1);
    expect(tracked[0]).toMatchObject({ type: 'MONSAAS_POST', module: MODULE, category: 'connection_refused' });
  });

  it('logs at most one ERROR line per account and module while failures repeat; every failure is tracked', async () => {
    server.setFallback(400);
    const w = writer();
    for (let i = 0; i < 5; i++) await w.postMetrics(['ops'], PAYLOAD, MODULE);
    expect(tracked).toHaveLength(5);
    expect(errorLines()).toHaveLength(1);
  });

  it('keeps an API key the server echoes out of the logs and the tracked error', async () => {
    server.setFallback({ status: 403, body: `{"error":"key ${OPS_KEY} is not an insert key"}` });
    const result = await writer().postMetrics(['ops'], PAYLOAD, MODULE);
    expect(result.ok).toBe(false);
    expect(tracked[0]).toMatchObject({ category: 'auth_error' });
    expect(errorLines()[0]?.reason).toBe('{"error":"key [REDACTED] is not an insert key"}');
    // afterEach checks every line and the tracked error for both keys.
  });

  it('refuses a configured header that is not a valid HTTP header', () => {
    const s = settings(server.url);
    s.event.header = [{ name: 'Bad Header', value: 'x' }];
    expect(() => writer({ settings: s })).toThrow(/Svc\.monsaas\.event\.header: "Bad Header"/);
  });
});
