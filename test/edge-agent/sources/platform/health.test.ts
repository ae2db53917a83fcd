/**
 * The health poller (platform-formats.md §4) against real HTTPS servers with mutual TLS on
 * 127.0.0.1: the sample of a good answer with its derived values, every kind of failure with its
 * error category while the other servers go on, and polls skipped (and counted) when a server
 * answers slower than the interval.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CertificateSet, makeCertificates } from '../../../../edge-agent/simulate/platform/certs.js';
import {
  docNames,
  type HealthPollerDeps,
  healthPoller,
  type MonitoredServer,
  pollHealth,
  serverTags,
  uptimeText,
} from '../../../../edge-agent/sources/platform/health.js';
import type { ClientTls } from '../../../../edge-agent/sources/platform/tls.js';
import type { SvcConfig } from '../../../../shared/config/schema.js';
import { errorPoint } from '../../../../shared/errors/points.js';
import { ErrorTracker, type TrackedError } from '../../../../shared/errors/tracker.js';
import { AppNameList } from '../../../../shared/platform/app-names.js';
import { type LoggedLine, recordingLog } from '../../../support/log.js';
import { clientTlsOf, type HttpsStub, startHttpsStub } from '../../../support/platform-https.js';
import { RecordingPollSink } from '../../../support/poll-sink.js';
import { freePort, LOOPBACK } from '../../../support/ports.js';
import { svcConfig } from '../../../support/udp.js';

const APP_A = 'e7af59a0-c243-480d-9571-08727551a66f';
const APP_B = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const APP_C = '11111111-2222-4333-8444-555555555555';

/** §4's example body, `started` 2 days 3 h 5 min 9 s before `nowMs` (written with a +01:00 offset), plus a field Svc ignores. */
function healthBody(nowMs: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const started = new Date(nowMs - ((2 * 24 + 3) * 3600 + 5 * 60 + 9) * 1000 + 3_600_000);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const compact = `${started.getUTCFullYear()}${p(started.getUTCMonth() + 1)}${p(started.getUTCDate())}T${p(started.getUTCHours())}${p(started.getUTCMinutes())}${p(started.getUTCSeconds())}.${p(started.getUTCMilliseconds(), 3)}+0100`;
  return {
    version: '12.1306.0',
    started: compact,
    mem: { committed: 4213.6, allocated: 4577.3, free: 27890.4 },
    apps: {
      active_docs: [APP_A],
      in_memory_docs: [APP_B, 'SessionApp_8d1c2f', APP_A, APP_C],
      loaded_docs: [APP_A],
      calls: 15234,
      selections: 812,
    },
    cpu: { total: 7.5 },
    session: { active: 3, total: 12 },
    users: { active: 2, total: 9 },
    cache: { hits: 1290, lookups: 1720, added: 430, replaced: 12, bytes_added: 52428800 },
    saturated: false,
    extra: { ignored: true },
    ...overrides,
  };
}

let certs: CertificateSet;
let tls: ClientTls;
let good: HttpsStub;
let bad: HttpsStub;
let stranger: HttpsStub;
let settings: SvcConfig['serversToMonitor'];

const server = (host: string, name: string, extra: Partial<MonitoredServer> = {}): MonitoredServer => ({
  host,
  serverName: name,
  serverDescription: `${name} description`,
  userSessions: { enable: false, host: '', virtualProxies: [] },
  serverTags: { site: 'lab', role: 'central' },
  headers: {},
  ...extra,
});

beforeAll(async () => {
  certs = makeCertificates([LOOPBACK]);
  tls = clientTlsOf(certs);
  [good, bad, stranger] = await Promise.all([
    startHttpsStub(certs),
    startHttpsStub(certs),
    startHttpsStub(makeCertificates([LOOPBACK]), { requestCert: false }),
  ]);
  settings = svcConfig(['  serversToMonitor:', '    serverTagsDefinition: [site, role]']).serversToMonitor;
});

afterAll(async () => {
  await Promise.all([good?.stop(), bad?.stop(), stranger?.stop()]);
});

beforeEach(() => {
  good.route('/engine/healthcheck', () => ({ json: healthBody(Date.now()) }));
});

function deps(extra: Partial<HealthPollerDeps> & { servers?: MonitoredServer[]; intervalMs?: number } = {}) {
  const sink = new RecordingPollSink();
  const tracked: TrackedError[] = [];
  const { log, lines } = recordingLog();
  const errors = new ErrorTracker({ enabled: true, log, sink: (e) => tracked.push(e) });
  const { servers, intervalMs, ...rest } = extra;
  const d: HealthPollerDeps = {
    settings: { ...settings, servers: servers ?? [], pollingInterval: intervalMs ?? 60_000 },
    tls,
    appNames: null,
    sink,
    errors,
    log,
    timeoutMs: 1_000,
    ...rest,
  };
  return { deps: d, sink, tracked, lines, errors };
}

const errorsOf = (lines: LoggedLine[]) => lines.filter((l) => l.level === 'error');

describe('health poller: a good answer', () => {
  it('asks GET /engine/healthcheck with the client certificate and the §4 headers, servers[].headers last', async () => {
    const { deps: d } = deps();
    const before = good.to('/engine/healthcheck').length;
    await pollHealth(
      server(good.hostPort, 'node1', {
        headers: { 'Content-Type': 'application/json; charset=utf-8', 'X-Tenant': 'lab' },
      }),
      d,
    );
    const request = good.to('/engine/healthcheck')[before];
    expect(request?.clientCert).toBe('svc-client');
    expect(request?.query.size).toBe(0);
    const sent = (request?.rawHeaders ?? []).reduce<string[]>(
      (acc, v, i, all) =>
        i % 2 === 0 && v !== 'Host' && v !== 'Connection' ? [...acc, `${v}: ${all[i + 1] ?? ''}`] : acc,
      [],
    );
    expect(sent).toEqual(['Cache-Control: no-cache', 'Content-Type: application/json; charset=utf-8', 'X-Tenant: lab']);
  });

  it('hands the sink a sample with the server tags in order, the uptime at arrival and only the fields Svc uses', async () => {
    const { deps: d, sink } = deps();
    await pollHealth(server(good.hostPort, 'node1'), d);
    const [call] = sink.healthSamples;
    expect(call).toBeDefined();
    if (!call) return;
    const { sample, receivedAtMs } = call;
    expect(Object.entries(sample.tags)).toEqual([
      ['host', LOOPBACK],
      ['server_name', 'node1'],
      ['server_description', 'node1 description'],
      ['site', 'lab'],
      ['role', 'central'],
    ]);
    expect(sample.serverName).toBe('node1');
    // The stub wrote `started` from its own clock just before answering: the uptime is 2 days, 3h 05m 09s or a second more.
    expect(sample.uptime).toMatch(/^2 days, 3h 05m (09|10)s$/);
    expect(receivedAtMs).toBeLessThanOrEqual(Date.now());
    const expected = healthBody(0);
    delete expected['extra'];
    expect({ ...sample.body, started: '' }).toEqual({ ...expected, started: '' });
    expect(sample.docNames).toBeUndefined();
    expect(sink.failed).toEqual([]);
  });

  it('adds the doc names once an app list is loaded: names sorted, the id where the list does not know it, session apps apart', async () => {
    const list = new AppNameList();
    const { deps: d, sink } = deps({ appNames: list });
    await pollHealth(server(good.hostPort, 'node1'), d);
    expect(sink.healthSamples[0]?.sample.docNames).toBeUndefined();
    list.replace([
      { id: APP_A, name: 'Sales' },
      { id: APP_B.toUpperCase(), name: 'Budget' },
    ]);
    await pollHealth(server(good.hostPort, 'node1'), d);
    expect(sink.healthSamples[1]?.sample.docNames).toEqual({
      active: { names: ['Sales'], sessionApps: [] },
      loaded: { names: ['Sales'], sessionApps: [] },
      inMemory: { names: [APP_C, 'Budget', 'Sales'], sessionApps: ['SessionApp_8d1c2f'] },
    });
  });

  it('cleans the texts of the body (§0.1): control characters removed, at most 100 characters', async () => {
    good.route('/engine/healthcheck', () => ({
      json: healthBody(Date.now(), { version: `12.1\u0000306\n.0${'x'.repeat(200)}` }),
    }));
    const { deps: d, sink } = deps();
    await pollHealth(server(good.hostPort, 'node1'), d);
    expect(sink.healthSamples[0]?.sample.body.version).toBe(`12.1306.0${'x'.repeat(91)}`);
  });
});

describe('health poller: failures', () => {
  const kinds: { kind: string; category: string; message: RegExp; setUp: () => Promise<string> | string }[] = [
    {
      kind: 'HTTP 503',
      category: 'http_5xx',
      message: /failed \(https:\/\/127\.0\.0\.1:\d+\/engine\/healthcheck\): HTTP 503 \[http_5xx\]$/,
      setUp: () => (bad.route('/engine/healthcheck', { status: 503, body: 'engine starting' }), bad.hostPort),
    },
    {
      kind: 'HTTP 401',
      category: 'auth_error',
      message: /: HTTP 401 \[auth_error\]$/,
      setUp: () => (bad.route('/engine/healthcheck', { status: 401 }), bad.hostPort),
    },
    {
      kind: 'another 2xx',
      category: 'invalid_response',
      message: /: invalid response: HTTP 204; only 200 carries the answer \[invalid_response\]$/,
      setUp: () => (bad.route('/engine/healthcheck', { status: 204 }), bad.hostPort),
    },
    {
      kind: 'a body of the wrong shape',
      category: 'invalid_response',
      message:
        /: invalid response: the body is not a health report: \/mem\/free must be number; \/saturated must be boolean \[invalid_response\]$/,
      setUp: () => (
        bad.route('/engine/healthcheck', () => ({
          json: healthBody(Date.now(), { mem: { committed: 1, allocated: 2, free: 'lots' }, saturated: 'no' }),
        })),
        bad.hostPort
      ),
    },
    {
      kind: 'a body that is not JSON',
      category: 'invalid_response',
      message: /: invalid response: the body of \d+ bytes is not JSON \[invalid_response\]$/,
      setUp: () => (bad.route('/engine/healthcheck', { body: '<html>maintenance</html>' }), bad.hostPort),
    },
    {
      kind: 'a timeout',
      category: 'timeout',
      message: /: no complete answer within 1000 ms \(timeout\) \[timeout\]$/,
      setUp: () => (bad.route('/engine/healthcheck', { json: {}, delayMs: 3_000 }), bad.hostPort),
    },
    {
      kind: 'a refused connection',
      category: 'connection_refused',
      message: /: connection refused \(ECONNREFUSED\) \[connection_refused\]$/,
      setUp: async () => `${LOOPBACK}:${await freePort()}`,
    },
    {
      kind: 'an untrusted server certificate',
      category: 'certificate_error',
      message: /: TLS handshake failed: .* \[certificate_error\]$/,
      setUp: () => (stranger.route('/engine/healthcheck', { json: healthBody(Date.now()) }), stranger.hostPort),
    },
  ];

  for (const { kind, category, message, setUp } of kinds) {
    it(`${kind}: ERROR log naming the server, HEALTH_API tracked as ${category}, healthFailed; the other server still gets its sample`, async () => {
      const host = await setUp();
      const {
        deps: d,
        sink,
        tracked,
        lines,
        errors,
      } = deps({ servers: [server(good.hostPort, 'node1'), server(host, 'node2')] });
      const poller = healthPoller(d);
      await poller.start();
      await expect.poll(() => poller.counts().every((c) => c.completed >= 1), { timeout: 5_000 }).toBe(true);
      await poller.stop();

      expect(sink.healthSamples.map((h) => h.sample.serverName)).toEqual(['node1']);
      expect(sink.failed).toEqual([{ kind: 'health', serverName: 'node2', tags: serverTags(server(host, 'node2')) }]);
      expect(tracked).toHaveLength(1);
      expect(tracked[0]).toMatchObject({ type: 'HEALTH_API', serverName: 'node2', category });
      expect(tracked[0]?.error).toMatchObject({ host });
      // The svc_errors point (§6.10) of the tracked error: the poll's host as a tag, the request's URL and timeout.
      const point = errorPoint(tracked[0] ?? expect.fail('nothing tracked'), 'svc_errors', '1');
      expect(point.tags).toEqual({ error_type: 'HEALTH_API', server_name: 'node2', host });
      expect(point.fields).toMatchObject({
        request_url: { type: 'string', value: `https://${host}/engine/healthcheck` },
        request_timeout_ms: { type: 'int', value: 1_000 },
      });
      expect(errors.summary()).toEqual({ total: 1, details: { HEALTH_API: { total: 1, servers: { node2: 1 } } } });
      const logged = errorsOf(lines);
      expect(logged).toHaveLength(1);
      expect(logged[0]?.msg).toMatch(/^health poll of node2 failed/);
      expect(logged[0]?.msg).toMatch(message);
      expect(logged[0]?.obj).toMatchObject({ server: 'node2', host, category });
    });
  }
});

describe('health poller: schedule', () => {
  it('polls every server at start and then every interval; a server slower than the interval skips ticks with a WARN and a count, the others go on', async () => {
    // 2 s for the slow answer leaves room for 3 ticks of 200 ms even when a busy machine delays the
    // timers (at 900 ms it failed once under load 8); the test waits for the skips, then the answer.
    bad.route('/engine/healthcheck', () => ({ json: healthBody(Date.now()), delayMs: 2_000 }));
    const {
      deps: d,
      sink,
      lines,
    } = deps({
      servers: [server(good.hostPort, 'fast'), server(bad.hostPort, 'slow')],
      intervalMs: 200,
      timeoutMs: 5_000,
    });
    const poller = healthPoller(d);
    await poller.start();
    await expect
      .poll(() => poller.counts().find((c) => c.label === 'slow')?.skipped ?? 0, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(3);
    await expect
      .poll(() => poller.counts().find((c) => c.label === 'slow')?.completed ?? 0, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(1);
    await poller.stop();
    const [fast, slow] = poller.counts();
    expect(slow?.skipped).toBeGreaterThanOrEqual(3);
    // The fast server is polled on its own schedule, not held up by the slow one.
    expect(fast?.completed).toBeGreaterThan((slow?.completed ?? 0) + 2);
    const skips = lines.filter((l) => l.level === 'warn' && 'target' in l.obj && l.obj.target === 'slow');
    expect(skips.length).toBe(slow?.skipped);
    expect(skips[0]?.msg).toBe(
      'health poll of slow skipped: the previous one is still running after 200 ms (1 skipped so far)',
    );
    expect(skips[0]?.obj).toMatchObject({ skipped: 1, intervalMs: 200 });
    // A slow poll the stop cancels counts as completed without a sample (see 'stop' below).
    const cancelled = lines.filter((l) => l.msg === 'health poll of slow cancelled: Svc is stopping').length;
    expect(cancelled).toBeLessThanOrEqual(1);
    expect(sink.healthSamples.filter((h) => h.sample.serverName === 'slow').length).toBe(
      (slow?.completed ?? 0) - cancelled,
    );
    expect(sink.failed).toEqual([]);
  });
});

describe('health poller: stop', () => {
  it('cancels a poll in progress instead of waiting for a server that does not answer: no failure logged, tracked or reported', async () => {
    bad.route('/engine/healthcheck', { json: {}, delayMs: 20_000 });
    const { deps: d, sink, tracked, lines } = deps({ servers: [server(bad.hostPort, 'mute')], timeoutMs: 25_000 });
    const poller = healthPoller(d);
    const asked = bad.to('/engine/healthcheck').length;
    await poller.start();
    await expect.poll(() => bad.to('/engine/healthcheck').length).toBe(asked + 1);
    const outcome = await Promise.race([
      poller.stop().then(() => 'stopped' as const),
      new Promise((resolve) => setTimeout(resolve, 15_000, 'still waiting')),
    ]);
    expect(outcome).toBe('stopped');
    expect(poller.counts()).toEqual([{ label: 'mute', skipped: 0, completed: 1 }]);
    expect(tracked).toEqual([]);
    expect(sink.failed).toEqual([]);
    expect(lines.filter((l) => l.level !== 'debug')).toEqual([]);
    expect(lines.map((l) => l.msg)).toEqual(['health poll of mute cancelled: Svc is stopping']);
  });
});

describe('derived values (§4)', () => {
  it('writes the uptime as <d> days, <h>h <mm>m <ss>s; empty when started is invalid, local or in the future', () => {
    const now = Date.UTC(2024, 2, 14, 11, 20, 21);
    expect(uptimeText('20240312T081512.000+0100', now)).toBe('2 days, 4h 05m 09s');
    expect(uptimeText('2024-03-14T11:20:21.000Z', now)).toBe('0 days, 0h 00m 00s');
    expect(uptimeText('2024-03-14T11:20:22.000Z', now)).toBe('');
    expect(uptimeText('2024-03-14 10:00:00,000', now)).toBe('');
    expect(uptimeText('yesterday', now)).toBe('');
    expect(uptimeText('20230314T112021.000-0500', now)).toBe('365 days, 19h 00m 00s');
  });

  it('takes the host tag before the first ":"', () => {
    expect(serverTags(server('node1.lab.local:4747', 'n1'))['host']).toBe('node1.lab.local');
    expect(serverTags(server('node1', 'n1'))['host']).toBe('node1');
  });

  it('sorts doc names and keeps session apps apart', () => {
    const list = new AppNameList();
    list.replace([
      { id: APP_A, name: 'b' },
      { id: APP_B, name: 'a' },
    ]);
    expect(docNames(['SessionApp_2', APP_A, 'SessionApp_1', APP_B, APP_C], list)).toEqual({
      names: [APP_C, 'a', 'b'],
      sessionApps: ['SessionApp_1', 'SessionApp_2'],
    });
  });
});
