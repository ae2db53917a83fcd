/**
 * The session poller (platform-formats.md §5.1) against a real HTTPS server with mutual TLS that
 * checks the Xrfkey rule as the proxy service does: per virtual proxy, user exclusion (§0.5), the
 * sample, and failures tracked as PROXY_API with their context.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCertificates } from '../../../../edge-agent/simulate/platform/certs.js';
import type { MonitoredServer } from '../../../../edge-agent/sources/platform/health.js';
import {
  type SessionPollerDeps,
  sessionPath,
  sessionPoller,
} from '../../../../edge-agent/sources/platform/sessions.js';
import type { ClientTls } from '../../../../edge-agent/sources/platform/tls.js';
import { errorPoint } from '../../../../shared/errors/points.js';
import { ErrorTracker, type TrackedError } from '../../../../shared/errors/tracker.js';
import { recordingLog } from '../../../support/log.js';
import {
  clientTlsOf,
  type HttpsStub,
  type StubReply,
  type StubRequest,
  startHttpsStub,
} from '../../../support/platform-https.js';
import { RecordingPollSink } from '../../../support/poll-sink.js';
import { LOOPBACK } from '../../../support/ports.js';
import { svcConfig } from '../../../support/udp.js';

const session = (dir: string, id: string, sid: string) => ({
  UserDirectory: dir,
  UserId: id,
  Attributes: [{ Group: 'Sales' }],
  SessionId: sid,
  Ticket: 'not kept',
});

/** As the proxy service: the Xrfkey of the query and of the header must be the same 16 characters, else 403. */
function xrfChecked(reply: StubReply): (req: StubRequest) => StubReply {
  return (req) => {
    const key = req.query.get('Xrfkey');
    return key !== null && /^[A-Za-z0-9]{16}$/.test(key) && req.headers['x-qlik-xrfkey'] === key
      ? reply
      : { status: 403, body: 'XSRF prevention check failed' };
  };
}

let tls: ClientTls;
let proxy: HttpsStub;

beforeAll(async () => {
  const certs = makeCertificates([LOOPBACK]);
  tls = clientTlsOf(certs);
  proxy = await startHttpsStub(certs);
});

afterAll(async () => {
  await proxy?.stop();
});

function setUp(virtualProxies: string[], excludeUser: string[] = []) {
  const config = svcConfig([
    '  userSessions:',
    '    enableSessionExtract: true',
    ...(excludeUser.length > 0 ? ['    excludeUser:', ...excludeUser] : []),
  ]);
  const server: MonitoredServer = {
    host: 'node1.lab.local:4747',
    serverName: 'node1',
    serverDescription: 'Central node',
    userSessions: {
      enable: true,
      host: proxy.hostPort,
      virtualProxies: virtualProxies.map((virtualProxy) => ({ virtualProxy })),
    },
    serverTags: { site: 'lab' },
    headers: { 'X-Only-For-Health': 'yes' },
  };
  const off: MonitoredServer = {
    ...server,
    serverName: 'node2',
    userSessions: { ...server.userSessions, enable: false },
  };
  const sink = new RecordingPollSink();
  const tracked: TrackedError[] = [];
  const { log, lines } = recordingLog();
  const errors = new ErrorTracker({ enabled: true, log, sink: (e) => tracked.push(e) });
  const deps: SessionPollerDeps = {
    settings: config.userSessions,
    servers: [server, off],
    tls,
    sink,
    errors,
    log,
    timeoutMs: 1_000,
  };
  return { deps, sink, tracked, lines, server };
}

async function pollOnce(deps: SessionPollerDeps) {
  const poller = sessionPoller(deps);
  await poller.start();
  await expect.poll(() => poller.counts().every((c) => c.completed >= 1), { timeout: 5_000 }).toBe(true);
  await poller.stop();
  return poller;
}

describe('session poller', () => {
  it('asks /qps<vp>/session for each virtual proxy of each enabled server, with a new Xrfkey in query and header and the §5.1 headers only', async () => {
    proxy.route('/qps/session', xrfChecked({ json: [] }));
    proxy.route('/qps/hdr/session', xrfChecked({ json: [] }));
    const before = proxy.requests.length;
    const { deps, sink, tracked } = setUp(['/', '/hdr/']);
    const poller = await pollOnce(deps);
    expect(poller.counts().map((c) => c.label)).toEqual(['node1 /', 'node1 /hdr/']);
    const requests = proxy.requests.slice(before);
    expect(requests.map((r) => r.pathname).sort()).toEqual(['/qps/hdr/session', '/qps/session']);
    for (const r of requests) {
      expect(r.clientCert).toBe('svc-client');
      const names = r.rawHeaders.filter(
        (_, i) => i % 2 === 0 && r.rawHeaders[i] !== 'Host' && r.rawHeaders[i] !== 'Connection',
      );
      expect(names).toEqual(['X-Qlik-Xrfkey', 'Cache-Control', 'Content-Type']);
      expect(r.headers['cache-control']).toBe('no-cache');
      expect(r.headers['content-type']).toBe('application/json');
    }
    expect(requests[0]?.query.get('Xrfkey')).not.toBe(requests[1]?.query.get('Xrfkey'));
    expect(tracked).toEqual([]);
    expect(sink.sessionSamples.map((s) => s.sample.virtualProxy).sort()).toEqual(['/', '/hdr/']);
  });

  it('removes excluded users (case-insensitive, the default INTERNAL\\sa_repository too) before counting, listing and publishing', async () => {
    proxy.route(
      '/qps/session',
      xrfChecked({
        json: [
          session('LAB', 'goran', 's1'),
          session('INTERNAL', 'SA_Repository', 's2'),
          session('lab', 'ANNA', 's3'),
          session('LAB', 'kalle', 's4'),
          session('LAB', 'goran', 's5'),
        ],
      }),
    );
    const { deps, sink } = setUp(
      ['/'],
      ['      - { directory: INTERNAL, userId: sa_repository }', '      - { directory: LAB, userId: anna }'],
    );
    await pollOnce(deps);
    const [call] = sink.sessionSamples;
    expect(call?.sample).toEqual({
      serverName: 'node1',
      tags: {
        host: 'node1.lab.local',
        server_name: 'node1',
        server_description: 'Central node',
        site: 'lab',
        user_session_virtual_proxy: '/',
        user_session_host: proxy.hostPort,
      },
      virtualProxy: '/',
      sessions: [
        { UserDirectory: 'LAB', UserId: 'goran', Attributes: [{ Group: 'Sales' }], SessionId: 's1' },
        { UserDirectory: 'LAB', UserId: 'kalle', Attributes: [{ Group: 'Sales' }], SessionId: 's4' },
        { UserDirectory: 'LAB', UserId: 'goran', Attributes: [{ Group: 'Sales' }], SessionId: 's5' },
      ],
      userIdList: 'LAB\\goran,LAB\\kalle',
    });
    expect(Object.keys(call?.sample.tags ?? {})).toEqual([
      'host',
      'server_name',
      'server_description',
      'site',
      'user_session_virtual_proxy',
      'user_session_host',
    ]);
  });

  it('tracks a failure as PROXY_API with the host and virtual proxy, reports it to the sink, and polls the other virtual proxies on', async () => {
    proxy.route('/qps/session', xrfChecked({ json: [session('LAB', 'goran', 's1')] }));
    proxy.route(
      '/qps/bad/session',
      xrfChecked({ json: [session('LAB', 'goran', 's1'), { UserDirectory: 'LAB', SessionId: 's2' }] }),
    );
    proxy.route('/qps/down/session', { status: 500 });
    proxy.route('/qps/object/session', xrfChecked({ json: { sessions: [] } }));
    const { deps, sink, tracked, lines } = setUp(['/', '/bad', '/down', '/object']);
    await pollOnce(deps);
    expect(sink.sessionSamples.map((s) => s.sample.virtualProxy)).toEqual(['/']);
    expect(sink.failed.map((f) => [f.kind, f.serverName, f.tags['user_session_virtual_proxy']]).sort()).toEqual([
      ['sessions', 'node1', '/bad'],
      ['sessions', 'node1', '/down'],
      ['sessions', 'node1', '/object'],
    ]);
    const byVp = new Map(
      tracked.map((t) => [String(t.error instanceof Error ? Reflect.get(t.error, 'virtualProxy') : ''), t]),
    );
    expect(byVp.get('/bad')).toMatchObject({ type: 'PROXY_API', serverName: 'node1', category: 'invalid_response' });
    expect(byVp.get('/down')).toMatchObject({ type: 'PROXY_API', serverName: 'node1', category: 'http_5xx' });
    expect(byVp.get('/object')).toMatchObject({ type: 'PROXY_API', category: 'invalid_response' });
    expect(byVp.get('/bad')?.error).toMatchObject({ host: proxy.hostPort, virtualProxy: '/bad' });
    // The tracked error carries the context too: the svc_errors point (§6.10) takes its tags and the request's timeout from it.
    const point = errorPoint(byVp.get('/down') ?? expect.fail('/down not tracked'), 'svc_errors', '1');
    expect(point.tags).toEqual({
      error_type: 'PROXY_API',
      server_name: 'node1',
      host: proxy.hostPort,
      virtual_proxy: '/down',
    });
    expect(point.fields['request_timeout_ms']).toEqual({ type: 'int', value: 1_000 });
    const messages = lines.filter((l) => l.level === 'error').map((l) => l.msg);
    expect(messages).toContainEqual(
      expect.stringMatching(
        /^session poll of node1 virtual proxy \/bad failed \(https:\/\/127\.0\.0\.1:\d+\/qps\/bad\/session\): invalid response: the body is not a list of sessions: \/1 must have property "UserId" \[invalid_response\]$/,
      ),
    );
    expect(messages).toContainEqual(
      expect.stringMatching(
        /^session poll of node1 virtual proxy \/object failed .*: invalid response: the body is not a list of sessions: \/ must be array \[invalid_response\]$/,
      ),
    );
    // The query (with the Xrfkey) is not in the logged URL.
    expect(messages.join('\n')).not.toMatch(/Xrfkey=/);
  });

  it('builds the path from the virtual proxy as configured', () => {
    expect(sessionPath('/')).toBe('/qps/session');
    expect(sessionPath('/hdr')).toBe('/qps/hdr/session');
    expect(sessionPath('/hdr/')).toBe('/qps/hdr/session');
  });
});
