/**
 * The app-name poller (platform-formats.md §5.2) against a real HTTPS server with mutual TLS: the
 * request, the list replaced only after a complete success, the bounded wait at start, and the list
 * as user events (§1.4) and the engine-performance filter (§2.4) see it.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCertificates } from '../../../../edge-agent/simulate/platform/certs.js';
import { sendOnly } from '../../../../edge-agent/sources/common/batcher.js';
import {
  APP_LIST_PATH,
  AppListPoller,
  type AppListPollerDeps,
  appListAddress,
} from '../../../../edge-agent/sources/platform/app-list.js';
import type { ClientTls } from '../../../../edge-agent/sources/platform/tls.js';
import { logEventHandler, userEventHandler } from '../../../../edge-agent/sources/udp/handlers.js';
import { ErrorTracker, type TrackedError } from '../../../../shared/errors/tracker.js';
import type { LogQueuedEvent, UserQueuedEvent } from '../../../../shared/queue/events.js';
import { PointClock } from '../../../../shared/queue/point-clock.js';
import { recordingLog } from '../../../support/log.js';
import { clientTlsOf, type HttpsStub, type StubReply, startHttpsStub } from '../../../support/platform-https.js';
import { LOOPBACK } from '../../../support/ports.js';
import { RecordingQueue, svcConfig } from '../../../support/udp.js';
import { LOG_QIX_PERF_USER, USER_CONNECTION_CLOSE, USER_CONNECTION_OPEN } from '../udp/parse/fixtures.js';

const SALES = 'e7af59a0-c243-480d-9571-08727551a66f';
const BUDGET = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const app = (id: string, name: string, description?: string | null) => ({
  id,
  name,
  ...(description !== undefined ? { description } : {}),
  appId: '',
  published: true,
  stream: null,
});

let tls: ClientTls;
let repository: HttpsStub;
let reply: StubReply | ((q: URLSearchParams) => StubReply);

beforeAll(async () => {
  const certs = makeCertificates([LOOPBACK]);
  tls = clientTlsOf(certs);
  repository = await startHttpsStub(certs);
  repository.route(APP_LIST_PATH, (req) => (typeof reply === 'function' ? reply(req.query) : reply));
});

afterAll(async () => {
  await repository?.stop();
});

function setUp(extra: Partial<AppListPollerDeps> = {}) {
  // The test repository listens on a free port, named as appNames.hostIP allows: host:port.
  const config = svcConfig([
    '  appNames:',
    '    enableAppNameExtract: true',
    `    hostIP: ${LOOPBACK}:${repository.port}`,
  ]);
  const tracked: TrackedError[] = [];
  const { log, lines } = recordingLog();
  const errors = new ErrorTracker({ enabled: true, log, sink: (e) => tracked.push(e) });
  const poller = new AppListPoller({
    settings: { ...config.appNames, extractInterval: 60_000 },
    tls,
    errors,
    log,
    timeoutMs: 500,
    ...extra,
  });
  return { poller, tracked, lines };
}

describe('app-name poller', () => {
  it('reads appNames.hostIP as host on port 4242, or host:port; an IPv6 address with a port in brackets', () => {
    expect(appListAddress('repo.lab.example')).toEqual({ host: 'repo.lab.example', port: 4242 });
    expect(appListAddress('10.1.2.3:14242')).toEqual({ host: '10.1.2.3', port: 14242 });
    expect(appListAddress('::1')).toEqual({ host: '::1', port: 4242 });
    expect(appListAddress('[::1]:14242')).toEqual({ host: '::1', port: 14242 });
  });

  it('asks GET /qrs/app with the same new Xrfkey in query and header, as the repository user, with the client certificate', async () => {
    reply = { json: [app(SALES, 'Sales dashboard', 'Monthly sales')] };
    const { poller } = setUp();
    const before = repository.requests.length;
    await poller.poll();
    await poller.poll();
    const [first, second] = repository.requests.slice(before);
    for (const r of [first, second]) {
      expect(r?.pathname).toBe('/qrs/app');
      expect(r?.clientCert).toBe('svc-client');
      const key = r?.query.get('xrfkey');
      expect(key).toMatch(/^[A-Za-z0-9]{16}$/);
      expect(r?.headers['x-qlik-xrfkey']).toBe(key);
      expect(r?.headers['x-qlik-user']).toBe('UserDirectory=Internal; UserId=sa_repository');
      expect(r?.headers['content-type']).toBe('application/json');
    }
    expect(first?.query.get('xrfkey')).not.toBe(second?.query.get('xrfkey'));
    expect(poller.apps).toEqual([{ id: SALES, name: 'Sales dashboard', description: 'Monthly sales' }]);
  });

  it('replaces the list only after a complete success; every failure keeps the old one and is tracked as APP_NAMES_EXTRACT', async () => {
    const { poller, tracked, lines } = setUp();
    reply = { json: [app(SALES.toUpperCase(), 'Sales', null), app(BUDGET, 'Budget\n2024')] };
    await poller.poll();
    expect(poller.list.loaded).toBe(true);
    expect(poller.list.nameOf(SALES)).toBe('Sales');
    expect(poller.list.nameOf(BUDGET)).toBe('Budget2024');
    expect(poller.apps).toEqual([
      { id: SALES, name: 'Sales', description: '' },
      { id: BUDGET, name: 'Budget2024', description: '' },
    ]);

    const failures: [StubReply, string][] = [
      [{ status: 503 }, 'http_5xx'],
      [{ status: 403 }, 'auth_error'],
      [{ json: [app(SALES, 'Renamed'), { id: 'not-a-uuid', name: 'Broken' }] }, 'invalid_response'],
      [{ json: [app(SALES, 'Renamed'), { id: BUDGET }] }, 'invalid_response'],
      [{ json: { apps: [] } }, 'invalid_response'],
      [{ body: '[{"id": "' }, 'invalid_response'],
      [{ json: [app(SALES, 'Renamed')], delayMs: 2_000 }, 'timeout'],
    ];
    for (const [answer, category] of failures) {
      reply = answer;
      await poller.poll();
      expect(poller.list.nameOf(SALES), category).toBe('Sales');
      expect(poller.list.size).toBe(2);
      expect(tracked.at(-1)).toMatchObject({ type: 'APP_NAMES_EXTRACT', serverName: LOOPBACK, category });
      expect(tracked.at(-1)?.error).toMatchObject({ host: LOOPBACK });
    }
    expect(tracked).toHaveLength(failures.length);
    // Not the first poll: ERROR, saying the old list stays.
    const errors = lines.filter((l) => l.level === 'error');
    expect(errors).toHaveLength(failures.length);
    expect(errors[2]?.msg).toMatch(
      /^app list poll of 127\.0\.0\.1:\d+ failed \(https:\/\/127\.0\.0\.1:\d+\/qrs\/app\): invalid response: the body is not a list of apps: \/1\/id must match pattern .* \[invalid_response\]; the list of the last successful poll is kept$/,
    );

    reply = { json: [app(BUDGET, 'Budget')] };
    await poller.poll();
    expect(poller.list.nameOf(SALES)).toBeUndefined();
    expect(poller.list.nameOf(BUDGET)).toBe('Budget');
  });

  it('at start: waits for the first list, so the components after it find the names', async () => {
    reply = { json: [app(SALES, 'Sales')], delayMs: 200 };
    const { poller, lines } = setUp();
    await poller.start();
    expect(poller.list.nameOf(SALES)).toBe('Sales');
    await poller.stop();
    expect(lines.filter((l) => l.level === 'info').map((l) => l.msg)).toEqual([
      `app list of ${LOOPBACK}:${repository.port} loaded: 1 app(s)`,
    ]);
  });

  it('at start: a repository that does not answer is only a WARN, and the wait is bounded', async () => {
    reply = { status: 503 };
    const refused = setUp();
    await refused.poller.start();
    await refused.poller.stop();
    expect(refused.poller.list.loaded).toBe(false);
    expect(refused.lines.filter((l) => l.level === 'error')).toEqual([]);
    expect(refused.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
      expect.stringMatching(
        /^app list poll of 127\.0\.0\.1:\d+ failed .*: HTTP 503 \[http_5xx\]; app names are unknown until a poll succeeds \(the next in 60000 ms\)$/,
      ),
    ]);
    expect(refused.tracked.map((t) => t.category)).toEqual(['http_5xx']);

    reply = { json: [app(SALES, 'Sales')], delayMs: 1_000 };
    const slow = setUp({ startWaitMs: 200, timeoutMs: 5_000 });
    await slow.poller.start();
    expect(slow.poller.list.loaded).toBe(false);
    expect(slow.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
      `the app list of ${LOOPBACK}:${repository.port} has not arrived within 200 ms; Svc starts without app names and adds them when it arrives`,
    ]);
    await expect.poll(() => slow.poller.list.nameOf(SALES), { timeout: 5_000 }).toBe('Sales');
    await slow.poller.stop();
  });
});

describe('the app list in the UDP events', () => {
  it('names the app of a user event (§1.4): the listed name, else <unknown app name>', async () => {
    reply = { json: [app(SALES, 'Sales dashboard')] };
    const { poller } = setUp();
    const config = svcConfig(['  userEvents:', '    enable: true']);
    const queue = new RecordingQueue();
    const { log } = recordingLog();
    const handle = userEventHandler({
      settings: config.userEvents,
      appNames: poller.list,
      counter: null,
      queue: sendOnly(queue),
      clock: new PointClock(),
      log,
    });
    const datagram = (text: string) => ({
      data: Buffer.from(text),
      address: LOOPBACK,
      port: 50000,
      receivedAtMs: Date.now(),
    });
    await handle(datagram(USER_CONNECTION_OPEN));
    await poller.poll();
    await handle(datagram(USER_CONNECTION_OPEN));
    await handle(datagram(USER_CONNECTION_CLOSE));
    const names = queue.events.map((e) => (e as UserQueuedEvent).event.appName);
    expect(names).toEqual(['<unknown app name>', 'Sales dashboard', '<unknown app name>']);
  });

  it("gives engine-performance events the app name the filter's app-name rules match (§2.4)", async () => {
    const config = svcConfig([
      '  logEvents:',
      '    source: { apiPerf: { enable: true } }',
      '    enginePerformanceMonitor:',
      '      enable: true',
      '      appNameLookup: { enable: true }',
      '      monitorFilter:',
      '        appSpecific:',
      '          enable: true',
      '          app:',
      "            - include: [{ appName: 'Sales dashboard' }]",
      '              objectType: { allObjectTypes: true }',
      '              appObject: { allAppObjects: true }',
      '              method: { allMethods: true }',
    ]);
    reply = { json: [app(SALES, 'Sales dashboard')] };
    const { poller } = setUp();
    const queue = new RecordingQueue();
    const { log } = recordingLog();
    const handle = logEventHandler({
      settings: config.logEvents,
      appNames: poller.list,
      counter: null,
      rejected: null,
      trackPerfRejections: false,
      queue: sendOnly(queue),
      clock: new PointClock(),
      log,
    });
    const datagram = { data: Buffer.from(LOG_QIX_PERF_USER), address: LOOPBACK, port: 50000, receivedAtMs: Date.now() };
    await handle(datagram);
    expect(queue.events).toHaveLength(0);
    await poller.poll();
    await handle(datagram);
    expect(queue.events.map((e) => (e as LogQueuedEvent).event)).toEqual([
      expect.objectContaining({ source: 'qseow-qix-perf', app_id: SALES, app_name: 'Sales dashboard' }),
    ]);
  });
});
