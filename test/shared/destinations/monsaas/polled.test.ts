/**
 * Monitoring-SaaS metrics of polled data (platform-formats.md §8.1, §8.2): the payload of health and
 * session polls exactly, every `metric.dynamic.*` flag, the app-list attributes and their 4,096
 * characters, attributes and interval from the config; and the MonSaasDestination against a
 * recording HTTP server standing in for the SaaS: one POST per poll to `monsaas.metric.url` for each
 * account with the §8 headers, transient failures retried, a lasting failure tracked with
 * HEALTH_METRICS_MONSAAS / PROXY_SESSIONS_MONSAAS and the server, and the redelivery sent only to
 * the accounts that did not take it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../../shared/config/load.js';
import type { SvcConfig } from '../../../../shared/config/schema.js';
import { MonSaasWriter } from '../../../../shared/destinations/monsaas/client.js';
import {
  HEALTH_MONSAAS_MODULE,
  MonSaasDestination,
  SESSIONS_MONSAAS_MODULE,
} from '../../../../shared/destinations/monsaas/destination.js';
import {
  type HealthMetricOptions,
  healthMetricPayload,
  joinWithin,
  type MetricFlags,
  type MetricOptions,
  monSaasMetricOptions,
  sessionMetricPayload,
} from '../../../../shared/destinations/monsaas/mappers.js';
import { ErrorTracker, type TrackedError } from '../../../../shared/errors/tracker.js';
import { SVC_VERSION } from '../../../../shared/version.js';
import { silentLog } from '../../../support/log.js';
import { type RecordingServer, startRecordingServer } from '../../../support/recording-http.js';
import { START_SESSION, userQueued } from '../../platform/fixtures.js';
import { APP_ID, DOC_NAMES, healthBody, healthQueued, healthSample, SESSION_APP, sessionsQueued } from '../polled.js';

/** A config from YAML lines below `Svc:` (two-space indented). */
function config(...lines: string[]): SvcConfig {
  return parseConfigText(['Svc:', ...lines.map((l) => `  ${l}`), ''].join('\n'), 'test.yaml', {}).config;
}

const flag = (on: boolean) => ({ enable: on });
/** `metric.dynamic` with the named flags on (`engine.cpu`, `apps.docCount`, …). */
function flags(...on: string[]): MetricFlags {
  const f = (name: string) => flag(on.includes(name));
  return {
    engine: {
      memory: f('engine.memory'),
      cpu: f('engine.cpu'),
      calls: f('engine.calls'),
      selections: f('engine.selections'),
      sessions: f('engine.sessions'),
      users: f('engine.users'),
      saturated: f('engine.saturated'),
    },
    apps: {
      docCount: f('apps.docCount'),
      activeDocs: f('apps.activeDocs'),
      loadedDocs: f('apps.loadedDocs'),
      inMemoryDocs: f('apps.inMemoryDocs'),
    },
    cache: { cache: f('cache.cache') },
    proxy: { sessions: f('proxy.sessions') },
  };
}
const ALL_GROUPS = [
  'engine.memory',
  'engine.cpu',
  'engine.calls',
  'engine.selections',
  'engine.sessions',
  'engine.users',
  'engine.saturated',
  'apps.docCount',
  'cache.cache',
];
const LISTS = ['apps.activeDocs', 'apps.loadedDocs', 'apps.inMemoryDocs'];

const BASE: MetricOptions = {
  staticAttributes: [{ name: 'team', value: 'platform' }],
  svcVersion: '15.0.0',
  intervalMs: 30_000,
};
const health = (...on: string[]): HealthMetricOptions => ({ ...BASE, flags: flags(...on) });
const SERVER = { host: 'node1.lab.local', server_name: 'Node1', server_description: 'Central node' };

describe('health metric payload (§8.1, §8.2)', () => {
  it('carries every gauge of the groups switched on, the server tags, the app lists, static attributes and svcVersion', () => {
    expect(
      healthMetricPayload(healthQueued(healthSample({ docNames: DOC_NAMES })), health(...ALL_GROUPS, ...LISTS)),
    ).toEqual([
      {
        common: {
          timestamp: 1710233130000,
          'interval.ms': 30000,
          attributes: {
            ...SERVER,
            qs_activeDocs: 'Sales dashboard',
            qs_loadedDocs: 'Sales dashboard',
            qs_inMemoryDocs: `Sales dashboard,${SESSION_APP}`,
            team: 'platform',
            svcVersion: '15.0.0',
          },
        },
        metrics: [
          { name: 'qs_memCommitted', type: 'gauge', value: 4418279833.6 },
          { name: 'qs_memAllocated', type: 'gauge', value: 4799646924.8 },
          { name: 'qs_memFree', type: 'gauge', value: 29245204070.4 },
          { name: 'qs_cpuTotal', type: 'gauge', value: 7.5 },
          { name: 'qs_engineCalls', type: 'gauge', value: 15234 },
          { name: 'qs_engineSelections', type: 'gauge', value: 812 },
          { name: 'qs_engineSessionsActive', type: 'gauge', value: 3 },
          { name: 'qs_engineSessionsTotal', type: 'gauge', value: 12 },
          { name: 'qs_engineUsersActive', type: 'gauge', value: 2 },
          { name: 'qs_engineUsersTotal', type: 'gauge', value: 9 },
          { name: 'qs_engineSaturated', type: 'gauge', value: 0 },
          { name: 'qs_docsActiveCount', type: 'gauge', value: 1 },
          { name: 'qs_docsLoadedCount', type: 'gauge', value: 1 },
          { name: 'qs_docsInMemoryCount', type: 'gauge', value: 2 },
          { name: 'qs_cacheHits', type: 'gauge', value: 1290 },
          { name: 'qs_cacheLookups', type: 'gauge', value: 1720 },
          { name: 'qs_cacheAdded', type: 'gauge', value: 430 },
          { name: 'qs_cacheReplaced', type: 'gauge', value: 12 },
          { name: 'qs_cacheBytesAdded', type: 'gauge', value: 52428800 },
        ],
      },
    ]);
  });

  it('sends for each flag exactly its gauges', () => {
    const names = (...on: string[]) =>
      healthMetricPayload(healthQueued(), health(...on))?.[0]?.metrics.map((m) => m.name);
    expect(names('engine.memory')).toEqual(['qs_memCommitted', 'qs_memAllocated', 'qs_memFree']);
    expect(names('engine.cpu')).toEqual(['qs_cpuTotal']);
    expect(names('engine.calls')).toEqual(['qs_engineCalls']);
    expect(names('engine.selections')).toEqual(['qs_engineSelections']);
    expect(names('engine.sessions')).toEqual(['qs_engineSessionsActive', 'qs_engineSessionsTotal']);
    expect(names('engine.users')).toEqual(['qs_engineUsersActive', 'qs_engineUsersTotal']);
    expect(names('engine.saturated')).toEqual(['qs_engineSaturated']);
    expect(names('apps.docCount')).toEqual(['qs_docsActiveCount', 'qs_docsLoadedCount', 'qs_docsInMemoryCount']);
    expect(names('cache.cache')).toEqual([
      'qs_cacheHits',
      'qs_cacheLookups',
      'qs_cacheAdded',
      'qs_cacheReplaced',
      'qs_cacheBytesAdded',
    ]);
    expect(names('engine.cpu', 'proxy.sessions')).toEqual(['qs_cpuTotal']);
  });

  it("matches §8.1's example: memory in bytes, and the example's attributes", () => {
    const [block] =
      healthMetricPayload(healthQueued(healthSample(), '1710233101876000003'), {
        staticAttributes: [],
        svcVersion: '1.0.0',
        intervalMs: 30_000,
        flags: flags('engine.memory'),
      }) ?? [];
    expect(block?.common).toEqual({
      timestamp: 1710233101876,
      'interval.ms': 30000,
      attributes: { ...SERVER, svcVersion: '1.0.0' },
    });
    expect(block?.metrics[0]).toEqual({ name: 'qs_memCommitted', type: 'gauge', value: 4418279833.6 });
  });

  it('saturation is 1 or 0', () => {
    const saturated = (on: boolean) =>
      healthMetricPayload(
        healthQueued(healthSample({ body: healthBody({ saturated: on }) })),
        health('engine.saturated'),
      )?.[0]?.metrics[0]?.value;
    expect([saturated(true), saturated(false)]).toEqual([1, 0]);
  });

  it('leaves out a server tag with an empty value (as the tsdb does)', () => {
    const tags = { host: 'node2', server_name: 'Node2', server_description: '', site: 'lab' };
    expect(
      healthMetricPayload(healthQueued(healthSample({ tags })), health('engine.cpu'))?.[0]?.common.attributes,
    ).toEqual({ host: 'node2', server_name: 'Node2', site: 'lab', team: 'platform', svcVersion: '15.0.0' });
  });

  it('sends nothing when no metric group is on, whatever the app-list flags say', () => {
    expect(
      healthMetricPayload(healthQueued(healthSample({ docNames: DOC_NAMES })), health(...LISTS, 'proxy.sessions')),
    ).toBeNull();
  });

  it('app lists: the ids without app names, only the lists switched on; svcVersion and static attributes never replace built-in ones', () => {
    const options: HealthMetricOptions = {
      staticAttributes: [
        { name: 'host', value: 'other' },
        { name: 'env', value: 'prod' },
      ],
      svcVersion: null,
      intervalMs: 60_000,
      flags: flags('engine.cpu', 'apps.inMemoryDocs'),
    };
    expect(healthMetricPayload(healthQueued(), options)?.[0]?.common).toEqual({
      timestamp: 1710233130000,
      'interval.ms': 60000,
      attributes: { ...SERVER, qs_inMemoryDocs: `${APP_ID},${SESSION_APP}`, env: 'prod' },
    });
  });

  it('an app list is cut after the last whole name within 4,096 characters (code points)', () => {
    const name = (c: string, n: number) => c.repeat(n);
    expect(joinWithin([name('a', 1000), name('b', 1000), name('c', 1000), name('d', 1000), name('e', 1000)])).toBe(
      [name('a', 1000), name('b', 1000), name('c', 1000), name('d', 1000)].join(','),
    );
    expect(joinWithin([name('a', 2047), name('b', 2048)])).toHaveLength(4096);
    expect(joinWithin([name('a', 2047), name('b', 2049)])).toBe(name('a', 2047));
    expect(joinWithin([name('x', 5000)])).toBe(name('x', 4096));
    expect([...joinWithin([name('😀', 4097)])]).toHaveLength(4096);
    expect(joinWithin([])).toBe('');
    const many = Array.from({ length: 600 }, (_, i) => `App number ${i}`);
    const body = healthBody({ apps: { ...healthBody().apps, active_docs: many } });
    const attribute = healthMetricPayload(
      healthQueued(healthSample({ body })),
      health('engine.cpu', 'apps.activeDocs'),
    )?.[0]?.common.attributes['qs_activeDocs'];
    expect(typeof attribute === 'string' && attribute.length <= 4096 && attribute.length > 4000).toBe(true);
    expect(
      String(attribute)
        .split(',')
        .every((n, i) => n === many[i]),
    ).toBe(true);
  });

  it('takes the interval and attributes from the config (serversToMonitor / userSessions polling intervals)', () => {
    const c = config(
      'serversToMonitor:',
      '  pollingInterval: 15000',
      'userSessions:',
      '  enableSessionExtract: true',
      '  pollingInterval: 45000',
      'monsaas:',
      '  enable: true',
      '  metric:',
      '    url: https://m.example.com/metric/v1',
      '    attribute:',
      '      static:',
      '        - {name: team, value: ops}',
      '      dynamic:',
      '        svcVersion:',
      '          enable: false',
    );
    expect(monSaasMetricOptions(c, 'health')).toEqual({
      staticAttributes: [{ name: 'team', value: 'ops' }],
      svcVersion: null,
      intervalMs: 15_000,
    });
    expect(monSaasMetricOptions(c, 'sessions')).toEqual({
      staticAttributes: [{ name: 'team', value: 'ops' }],
      svcVersion: null,
      intervalMs: 45_000,
    });
    expect(
      monSaasMetricOptions(
        config('monsaas:', '  enable: true', '  metric:', '    url: https://m.example.com/metric/v1'),
        'health',
      ).svcVersion,
    ).toBe(SVC_VERSION);
  });
});

describe('session metric payload (§8.2)', () => {
  it('qs_proxySessions with the session tags, static attributes and svcVersion', () => {
    expect(sessionMetricPayload(sessionsQueued(), { ...BASE, intervalMs: 45_000 })).toEqual([
      {
        common: {
          timestamp: 1710233131000,
          'interval.ms': 45000,
          attributes: {
            ...SERVER,
            user_session_virtual_proxy: '/hdr',
            user_session_host: 'node1.lab.local:4243',
            team: 'platform',
            svcVersion: '15.0.0',
          },
        },
        metrics: [{ name: 'qs_proxySessions', type: 'gauge', value: 2 }],
      },
    ]);
  });
});

describe('MonSaasDestination (health and sessions)', () => {
  let server: RecordingServer;
  let writer: MonSaasWriter;
  let noRetries: MonSaasWriter;
  const tracked: TrackedError[] = [];
  const CREDENTIALS: SvcConfig['thirdPartyToolsCredentials']['monsaas'] = [
    { accountName: 'ops', insertApiKey: 'ops-key-0123456789', accountId: '111' },
    { accountName: 'dev', insertApiKey: 'dev-key-0123456789', accountId: '222' },
  ];

  beforeAll(async () => {
    server = await startRecordingServer();
    const settings = config(
      'monsaas:',
      '  enable: true',
      '  metric:',
      `    url: ${server.url}/metric/v1`,
      '    header:',
      '      - {name: X-Team, value: platform}',
    ).monsaas;
    const errors = new ErrorTracker({ enabled: true, log: silentLog, sink: (e) => tracked.push(e) });
    writer = new MonSaasWriter({ settings, credentials: CREDENTIALS, log: silentLog, errors, retryDelaysMs: [10] });
    noRetries = new MonSaasWriter({ settings, credentials: CREDENTIALS, log: silentLog, errors, retryDelaysMs: [] });
  });
  beforeEach(() => {
    server.reset();
    tracked.length = 0;
  });
  afterAll(() => server.stop());

  const both = (accounts: string[]) =>
    new MonSaasDestination({
      writer,
      userEvents: null,
      logEvents: null,
      health: { accounts, options: health(...ALL_GROUPS, ...LISTS) },
      sessions: { accounts, options: BASE },
      log: silentLog,
    });

  it('posts each poll once to monsaas.metric.url per account with the §8 headers, and leaves other kinds alone', async () => {
    const h = healthQueued(healthSample({ docNames: DOC_NAMES }));
    const s = sessionsQueued();
    expect(await both(['ops', 'dev']).write([h, s, userQueued(START_SESSION)])).toEqual(new Set());
    expect(server.requests).toHaveLength(4);
    for (const r of server.requests) {
      expect(r.method).toBe('POST');
      expect(r.url).toBe('/metric/v1');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['x-team']).toBe('platform');
    }
    const byKey = (key: string) =>
      server.requests
        .filter((r) => r.headers['api-key'] === key)
        .map((r) => r.rawBody)
        .sort();
    const expected = [
      JSON.stringify(healthMetricPayload(h, health(...ALL_GROUPS, ...LISTS))),
      JSON.stringify(sessionMetricPayload(s, BASE)),
    ].sort();
    expect(byKey('ops-key-0123456789')).toEqual(expected);
    expect(byKey('dev-key-0123456789')).toEqual(expected);
  });

  it('a transient 503 is retried by the writer and the poll counts as written', async () => {
    server.reply(503);
    expect(await both(['ops']).write([sessionsQueued()])).toEqual(new Set());
    expect(server.requests.map((r) => r.url)).toEqual(['/metric/v1', '/metric/v1']);
    expect(tracked).toEqual([]);
  });

  it('a lasting failure is tracked with the module and server; the redelivery goes only to the account that failed', async () => {
    for (const [q, module] of [
      [healthQueued(), HEALTH_MONSAAS_MODULE],
      [sessionsQueued(), SESSIONS_MONSAAS_MODULE],
    ] as const) {
      server.reset();
      tracked.length = 0;
      const destination = new MonSaasDestination({
        writer: noRetries,
        userEvents: null,
        logEvents: null,
        health: { accounts: ['ops', 'dev'], options: health('engine.cpu') },
        sessions: { accounts: ['ops', 'dev'], options: BASE },
        log: silentLog,
      });
      server.reply(500); // whichever account's POST arrives first
      expect(await destination.write([q])).toEqual(new Set([q.id]));
      expect(server.requests).toHaveLength(2);
      const failedKey = server.requests[0]?.headers['api-key'];
      expect(tracked.map((t) => [t.type, t.module, t.serverName])).toEqual([['MONSAAS_POST', module, 'Node1']]);

      expect(await destination.write([q])).toEqual(new Set());
      expect(server.requests).toHaveLength(3);
      expect(server.requests[2]?.headers['api-key']).toBe(failedKey);
      expect(server.requests[2]?.rawBody).toBe(server.requests[0]?.rawBody);
    }
    expect(HEALTH_MONSAAS_MODULE).toBe('HEALTH_METRICS_MONSAAS');
    expect(SESSIONS_MONSAAS_MODULE).toBe('PROXY_SESSIONS_MONSAAS');
  });

  it('takes health and session polls only when they go to monsaas; a health poll without metric groups sends nothing and is not failed', async () => {
    const sessionsOnly = new MonSaasDestination({
      writer,
      userEvents: null,
      logEvents: null,
      sessions: { accounts: ['ops'], options: BASE },
      log: silentLog,
    });
    expect(await sessionsOnly.write([healthQueued(), sessionsQueued()])).toEqual(new Set());
    expect(server.requests.map((r) => r.rawBody)).toEqual([
      JSON.stringify(sessionMetricPayload(sessionsQueued(), BASE)),
    ]);

    server.reset();
    const listsOnly = new MonSaasDestination({
      writer,
      userEvents: null,
      logEvents: null,
      health: { accounts: ['ops'], options: health(...LISTS) },
      log: silentLog,
    });
    expect(await listsOnly.write([healthQueued(), sessionsQueued()])).toEqual(new Set());
    expect(server.requests).toEqual([]);
  });
});
