/**
 * platformDestinations / platformOutputs: the §0.6 gating of the platform's UDP events, one test per
 * rule, the batching of each destination, and the whole wiring from a config to real servers
 * (influxd, mosquitto, a recording HTTP server for the monitoring SaaS).
 */
import { connectAsync } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../shared/config/load.js';
import { type PlatformOutputs, platformOutputs } from '../../../shared/config/outputs.js';
import type { SvcConfig } from '../../../shared/config/schema.js';
import {
  cloudWriterDestination,
  platformDestinations,
  wantsLogEvent,
  wantsUserEvent,
} from '../../../shared/destinations/registry.js';
import { StoreComponent } from '../../../shared/destinations/store/build.js';
import { ErrorTracker } from '../../../shared/errors/tracker.js';
import { PointClock } from '../../../shared/queue/point-clock.js';
import { captureLog, type LogCapture } from '../../support/audit.js';
import { fieldTypes, type InfluxdHandle, query, queryRows, startInfluxd } from '../../support/influxd.js';
import { silentLog } from '../../support/log.js';
import { type MosquittoHandle, startMosquitto } from '../../support/mosquitto.js';
import { sleep } from '../../support/ports.js';
import { type RecordingServer, startRecordingServer } from '../../support/recording-http.js';
import {
  ENGINE,
  logQueued,
  PROXY,
  QIX_PERF_USER,
  REPOSITORY,
  START_SESSION,
  userQueued,
} from '../platform/fixtures.js';
import { auditQueued, EVENT_COUNT, pointsQueued } from '../platform/queued.js';
import { healthQueued, sessionsQueued } from './polled.js';

/**
 * A config from YAML lines below `Svc:` (two-space indented). The embedded store (on by default) is
 * off unless the lines name `store:`, so each rule of the other destinations is seen alone.
 */
function config(...lines: string[]): SvcConfig {
  const store = lines.includes('store:') ? [] : ['store:', '  enable: false'];
  return parseConfigText(['Svc:', ...[...store, ...lines].map((l) => `  ${l}`), ''].join('\n'), 'test.yaml', {}).config;
}

const TSDB = ['tsdbConfig:', '  enable: true'];
const MQTT = ['mqttConfig:', '  enable: true'];
const MONSAAS = [
  'monsaas:',
  '  enable: true',
  '  metric:',
  '    url: https://metrics.example.com/metric/v1',
  '  event:',
  '    url: https://events.example.com/',
  'thirdPartyToolsCredentials:',
  '  monsaas:',
  '    - {accountName: ops, insertApiKey: key-1, accountId: "111"}',
];
/** monsaas with metrics: `monsaas.metric.dynamic` lines (relative to `dynamic:`), the accounts, the credentials. */
const METRICS = (dynamic: string[], accounts = '[ops]', enable = true) => [
  'monsaas:',
  `  enable: ${enable}`,
  '  metric:',
  '    url: https://metrics.example.com/metric/v1',
  `    destinationAccount: ${accounts}`,
  '    dynamic:',
  ...dynamic.map((l) => `      ${l}`),
  'thirdPartyToolsCredentials:',
  '  monsaas:',
  '    - {accountName: ops, insertApiKey: key-1, accountId: "111"}',
];
/** One monitored server; with `sessions`, user sessions per the arguments. */
const SERVERS = (sessions?: {
  extract: boolean;
  enable: boolean;
  proxies: string;
  intervals?: [health: number, sessions: number];
}) => [
  ...(sessions ? ['userSessions:', `  enableSessionExtract: ${sessions.extract}`] : []),
  ...(sessions?.intervals ? [`  pollingInterval: ${sessions.intervals[1]}`] : []),
  'serversToMonitor:',
  ...(sessions?.intervals ? [`  pollingInterval: ${sessions.intervals[0]}`] : []),
  '  serverTagsDefinition: []',
  '  servers:',
  '    - host: node1.lab.local:4747',
  '      serverName: Node1',
  '      serverDescription: Central node',
  ...(sessions
    ? [
        '      userSessions:',
        `        enable: ${sessions.enable}`,
        '        host: node1.lab.local:4243',
        `        virtualProxies: ${sessions.proxies}`,
      ]
    : []),
];
const USER = (...rest: string[]) => ['userEvents:', '  enable: true', ...rest.map((l) => `  ${l}`)];
const LOG = (...rest: string[]) => [
  'logEvents:',
  '  source:',
  '    proxy:',
  '      enable: true',
  ...rest.map((l) => `  ${l}`),
];

const OFF = { tsdb: false, mqtt: false, monsaas: false, store: false };
const NONE: PlatformOutputs = { userEvents: OFF, logEvents: OFF, health: OFF, sessions: OFF, points: false };

let capture: LogCapture;
const errors = new ErrorTracker({ enabled: true, log: silentLog });

function build(c: SvcConfig) {
  const built = platformDestinations({ config: c, logger: capture.logger, errors, clock: new PointClock() });
  return {
    ...built,
    names: built.destinations.map((d) => d.destination.name),
    components: built.components.map((x) => x.name),
  };
}

beforeAll(async () => {
  capture = await captureLog('info');
});

describe('platformOutputs / platformDestinations gating (§0.6)', () => {
  it('creates nothing by default', () => {
    const c = config();
    expect(platformOutputs(c)).toEqual(NONE);
    expect(build(c)).toMatchObject({ destinations: [], components: [] });
  });

  it('user events to the tsdb need userEvents.enable, tsdbConfig.enable and sendToTsdb.enable', () => {
    const on = config(...TSDB, ...USER('sendToTsdb:', '  enable: true'));
    expect(platformOutputs(on)).toEqual({
      ...NONE,
      userEvents: { tsdb: true, mqtt: false, monsaas: false, store: false },
    });
    expect(build(on).names).toEqual(['tsdb']);
    expect(platformOutputs(config(...USER('sendToTsdb:', '  enable: true'))).userEvents.tsdb).toBe(false);
    expect(
      platformOutputs(config(...TSDB, 'userEvents:', '  enable: false', '  sendToTsdb:', '    enable: true')).userEvents
        .tsdb,
    ).toBe(false);
    expect(platformOutputs(config(...TSDB, ...USER())).userEvents.tsdb).toBe(false);
    expect(build(config(...TSDB, ...USER())).names).toEqual([]);
  });

  it('log events to the tsdb need a log source, tsdbConfig.enable and sendToTsdb.enable', () => {
    expect(platformOutputs(config(...TSDB, ...LOG('sendToTsdb:', '  enable: true'))).logEvents.tsdb).toBe(true);
    expect(platformOutputs(config(...TSDB, 'logEvents:', '  sendToTsdb:', '    enable: true')).logEvents.tsdb).toBe(
      false,
    );
    expect(platformOutputs(config(...LOG('sendToTsdb:', '  enable: true'))).logEvents.tsdb).toBe(false);
    // The engine-performance source alone runs the listener too.
    expect(
      platformOutputs(
        config(
          ...TSDB,
          'logEvents:',
          '  source:',
          '    apiPerf:',
          '      enable: true',
          '  sendToTsdb:',
          '    enable: true',
        ),
      ).logEvents.tsdb,
    ).toBe(true);
  });

  it('the tsdb destination also exists for event and rejected counts (platformEvents.tsdb + a counter)', () => {
    const counts = (tsdb: boolean, eventCount: boolean, rejected: boolean, master = true) =>
      platformOutputs(
        config(
          ...(master ? TSDB : []),
          'platformEvents:',
          '  tsdb:',
          `    enable: ${tsdb}`,
          '  eventCount:',
          `    enable: ${eventCount}`,
          '  rejectedEventCount:',
          `    enable: ${rejected}`,
        ),
      ).points;
    expect([
      counts(true, true, false),
      counts(true, false, true),
      counts(true, false, false),
      counts(false, true, true),
      counts(true, true, true, false),
    ]).toEqual([true, true, false, false, false]);
    const built = build(
      config(...TSDB, 'platformEvents:', '  tsdb:', '    enable: true', '  eventCount:', '    enable: true'),
    );
    expect(built.names).toEqual(['tsdb']);
  });

  it('the tsdb destination also exists for the queue metrics of a running listener', () => {
    const qm = ['udpServerConfig:', '  queueMetrics:', '    tsdb:', '      enable: true'];
    expect(platformOutputs(config(...TSDB, ...USER(...qm))).points).toBe(true);
    expect(platformOutputs(config(...TSDB, ...LOG(...qm))).points).toBe(true);
    expect(platformOutputs(config(...TSDB, 'logEvents:', ...qm.map((l) => `  ${l}`))).points).toBe(false);
    expect(platformOutputs(config(...USER(...qm))).points).toBe(false);
    expect(build(config(...TSDB, ...LOG(...qm))).names).toEqual(['tsdb']);
  });

  it('user events to MQTT need mqttConfig.enable, sendToMQTT.enable and an enabled topic; the MqttWriter is a component', () => {
    const topic = ['sendToMQTT:', '  enable: true', '  postTo:', '    sessionStopTopic:', '      enable: true'];
    const on = config(...MQTT, ...USER(...topic));
    expect(platformOutputs(on).userEvents).toEqual({ tsdb: false, mqtt: true, monsaas: false, store: false });
    expect(build(on)).toMatchObject({ names: ['mqtt'], components: ['mqtt-writer'] });
    expect(platformOutputs(config(...USER(...topic))).userEvents.mqtt).toBe(false);
    expect(platformOutputs(config(...MQTT, ...USER('sendToMQTT:', '  enable: true'))).userEvents.mqtt).toBe(false);
    expect(build(config(...MQTT, ...USER('sendToMQTT:', '  enable: true')))).toMatchObject({
      names: [],
      components: [],
    });
  });

  it('log events to MQTT need mqttConfig.enable, sendToMQTT.enable and a postTo flag', () => {
    const to = (base: boolean, sub: boolean, master = true) =>
      platformOutputs(
        config(
          ...(master ? MQTT : []),
          ...LOG('sendToMQTT:', '  enable: true', '  postTo:', `    baseTopic: ${base}`, `    subsystemTopics: ${sub}`),
        ),
      ).logEvents.mqtt;
    expect([to(true, false), to(false, true), to(false, false), to(true, true, false)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  it('user events to monsaas need monsaas.enable, sendToMonSaas.enable and an account', () => {
    const send = (accounts: string) => USER('sendToMonSaas:', '  enable: true', `  destinationAccount: ${accounts}`);
    const on = config(...MONSAAS, ...send('[ops]'));
    expect(platformOutputs(on).userEvents).toEqual({ tsdb: false, mqtt: false, monsaas: true, store: false });
    expect(build(on)).toMatchObject({ names: ['monsaas'], components: [] });
    expect(platformOutputs(config(...MONSAAS, ...send('[]'))).userEvents.monsaas).toBe(false);
    expect(platformOutputs(config(...MONSAAS, ...USER())).userEvents.monsaas).toBe(false);
  });

  it('log events to monsaas need a source that is both handled and sendable at some level', () => {
    const send = (source: string, error: boolean, warn: boolean) =>
      LOG(
        'sendToMonSaas:',
        '  enable: true',
        '  destinationAccount: [ops]',
        '  source:',
        `    ${source}:`,
        '      enable: true',
        '      logLevel:',
        `        error: ${error}`,
        `        warn: ${warn}`,
      );
    expect(platformOutputs(config(...MONSAAS, ...send('proxy', true, false))).logEvents.monsaas).toBe(true);
    expect(platformOutputs(config(...MONSAAS, ...send('proxy', false, true))).logEvents.monsaas).toBe(true);
    expect(platformOutputs(config(...MONSAAS, ...send('proxy', false, false))).logEvents.monsaas).toBe(false);
    // The engine source is sendable, but only the proxy source is handled.
    expect(platformOutputs(config(...MONSAAS, ...send('engine', true, true))).logEvents.monsaas).toBe(false);
  });

  it('batches: tsdb maxBatchSize within 1 s, MQTT 100 and monsaas 1 message (of up to 20 events) at once', () => {
    const c = config(
      'tsdbConfig:',
      '  enable: true',
      '  maxBatchSize: 250',
      ...MQTT,
      ...MONSAAS,
      ...USER(
        'sendToTsdb:',
        '  enable: true',
        'sendToMQTT:',
        '  enable: true',
        '  postTo:',
        '    everythingTopic:',
        '      enable: true',
        'sendToMonSaas:',
        '  enable: true',
        '  destinationAccount: [ops]',
      ),
    );
    expect(
      platformDestinations({ config: c, logger: capture.logger, errors, clock: new PointClock() }).destinations.map(
        (d) => [d.destination.name, d.batchSize, d.batchWindowMs],
      ),
    ).toEqual([
      ['tsdb', 250, 1000],
      ['mqtt', 100, 0],
      ['monsaas', 1, 0],
    ]);
  });

  it('scrambling without a secret generates a key and warns once', () => {
    const before = capture.lines().length;
    build(
      config(
        ...MONSAAS,
        ...USER('sendToMonSaas:', '  enable: true', '  destinationAccount: [ops]', '  scramble: true'),
      ),
    );
    const warnings = capture
      .lines()
      .slice(before)
      .filter((l) => String(l['msg']).includes('pseudonyms change on every restart'));
    expect(warnings).toHaveLength(1);
    build(
      config(
        ...MONSAAS,
        ...USER(
          'sendToMonSaas:',
          '  enable: true',
          '  destinationAccount: [ops]',
          '  scramble: true',
          '  scrambleSecret: example-secret-change-me-0123456789',
        ),
      ),
    );
    expect(
      capture
        .lines()
        .slice(before)
        .filter((l) => String(l['msg']).includes('pseudonyms change on every restart')),
    ).toHaveLength(1);
  });

  it('health polls go to each destination by its master switch alone; a destination exists for them alone', () => {
    expect(
      platformOutputs(config(...TSDB, ...MQTT, ...METRICS(['engine:', '  cpu:', '    enable: true']))).health,
    ).toEqual(OFF);
    const tsdbOnly = config(...TSDB, ...SERVERS());
    expect(platformOutputs(tsdbOnly)).toEqual({
      ...NONE,
      health: { tsdb: true, mqtt: false, monsaas: false, store: false },
    });
    expect(build(tsdbOnly)).toMatchObject({ names: ['tsdb'], components: [] });
    expect(build(config(...MQTT, ...SERVERS()))).toMatchObject({ names: ['mqtt'], components: ['mqtt-writer'] });
    expect(platformOutputs(config(...SERVERS())).health).toEqual(OFF);
  });

  it('health polls to monsaas need monsaas.enable, a metric group flag and a metric account; app-list flags alone are not enough', () => {
    const cpu = ['engine:', '  cpu:', '    enable: true'];
    const on = config(...SERVERS(), ...METRICS(cpu));
    expect(platformOutputs(on).health).toEqual({ tsdb: false, mqtt: false, monsaas: true, store: false });
    expect(build(on)).toMatchObject({ names: ['monsaas'], components: [] });
    for (const group of [
      ['engine:', '  memory:', '    enable: true'],
      ['engine:', '  saturated:', '    enable: true'],
      ['apps:', '  docCount:', '    enable: true'],
      ['cache:', '  cache:', '    enable: true'],
    ]) {
      expect(platformOutputs(config(...SERVERS(), ...METRICS(group))).health.monsaas, group.join(' ')).toBe(true);
    }
    const lists = [
      'apps:',
      '  activeDocs:',
      '    enable: true',
      '  loadedDocs:',
      '    enable: true',
      '  inMemoryDocs:',
      '    enable: true',
    ];
    expect(platformOutputs(config(...SERVERS(), ...METRICS(lists))).health.monsaas).toBe(false);
    expect(build(config(...SERVERS(), ...METRICS(lists))).names).toEqual([]);
    expect(platformOutputs(config(...SERVERS(), ...METRICS(cpu, '[]'))).health.monsaas).toBe(false);
    expect(platformOutputs(config(...SERVERS(), ...METRICS(cpu, '[ops]', false))).health.monsaas).toBe(false);
  });

  it('session polls need userSessions.enableSessionExtract and a server with sessions and a virtual proxy; monsaas also proxy.sessions', () => {
    const sessions = (extract: boolean, enable: boolean, proxies: string) =>
      config(
        ...TSDB,
        ...MQTT,
        ...METRICS(['proxy:', '  sessions:', '    enable: true']),
        ...SERVERS({ extract, enable, proxies }),
      );
    expect(platformOutputs(sessions(true, true, '[{virtualProxy: /}]')).sessions).toEqual({
      tsdb: true,
      mqtt: true,
      monsaas: true,
      store: false,
    });
    expect(platformOutputs(sessions(false, true, '[{virtualProxy: /}]')).sessions).toEqual(OFF);
    expect(platformOutputs(sessions(true, false, '[{virtualProxy: /}]')).sessions).toEqual(OFF);
    expect(platformOutputs(sessions(true, true, '[]')).sessions).toEqual(OFF);
    const noFlag = config(
      ...METRICS(['engine:', '  cpu:', '    enable: true']),
      ...SERVERS({ extract: true, enable: true, proxies: '[{virtualProxy: /hdr}]' }),
    );
    expect(platformOutputs(noFlag).sessions.monsaas).toBe(false);
    expect(build(sessions(true, true, '[{virtualProxy: /}]')).names).toEqual(['tsdb', 'mqtt', 'monsaas']);
  });

  it('the embedded store (Svc.store.enable, on by default) takes every platform kind whose source is on, alone, last of the destinations', () => {
    const sources = [...USER(), ...LOG(), ...SERVERS({ extract: true, enable: true, proxies: '[{virtualProxy: /}]' })];
    const on = config('store:', '  enable: true', ...sources);
    const only = { tsdb: false, mqtt: false, monsaas: false, store: true };
    expect(platformOutputs(on)).toEqual({
      userEvents: only,
      logEvents: only,
      health: only,
      sessions: only,
      points: false,
    });
    // The sources enqueue what only the store takes (they counted and dropped it before).
    expect(wantsUserEvent(platformOutputs(on))).toBe(true);
    expect(wantsLogEvent(on, platformOutputs(on), PROXY)).toBe(true);
    expect(wantsLogEvent(on, platformOutputs(on), QIX_PERF_USER)).toBe(true);
    // The registry adds the store's destination when it is given the process's store component.
    const ctx = { config: on, logger: capture.logger, errors, clock: new PointClock() };
    const store = new StoreComponent(ctx);
    expect(platformDestinations(ctx, store).destinations.map((d) => d.destination.name)).toEqual(['store']);
    expect(platformDestinations(ctx).destinations).toEqual([]);
    // Off, or with the sources off, it takes nothing.
    expect(platformOutputs(config('store:', '  enable: false', ...sources))).toEqual(NONE);
    expect(platformOutputs(config('store:', '  enable: true'))).toEqual(NONE);
    // Never a cloud destination: the writer Lambdas and the placement do not know it.
    expect(
      cloudWriterDestination({ config: on, logger: capture.logger, errors, clock: new PointClock() }, 'store'),
    ).toBeNull();
  });

  it('tells the listeners which events to enqueue', () => {
    const none = config(...LOG());
    expect(wantsUserEvent(platformOutputs(none))).toBe(false);
    expect(wantsLogEvent(none, platformOutputs(none), PROXY)).toBe(false);
    const c = config(
      ...MONSAAS,
      ...USER(),
      ...LOG(
        'sendToMonSaas:',
        '  enable: true',
        '  destinationAccount: [ops]',
        '  source:',
        '    proxy:',
        '      enable: true',
        '      logLevel:',
        '        warn: false',
      ),
    );
    const o = platformOutputs(c);
    expect(wantsUserEvent(o)).toBe(false);
    expect(wantsLogEvent(c, o, PROXY)).toBe(false);
    expect(wantsLogEvent(c, o, { ...PROXY, level: 'ERROR' })).toBe(true);
    expect(wantsLogEvent(c, o, QIX_PERF_USER)).toBe(false);
  });
});

describe('platformDestinations against real servers', () => {
  let influx: InfluxdHandle;
  let broker: MosquittoHandle;
  let monsaas: RecordingServer;
  beforeAll(async () => {
    [influx, broker, monsaas] = await Promise.all([startInfluxd(), startMosquitto(), startRecordingServer()]);
  });
  afterAll(async () => {
    await Promise.all([influx?.stop(), broker?.stop(), monsaas?.stop()]);
  });

  it('writes user and log events and points where the config says, with the configured tags', async () => {
    const c = config(
      'tsdbConfig:',
      '  enable: true',
      '  host: 127.0.0.1',
      `  port: ${influx.port}`,
      '  v1Config:',
      '    dbName: platform_e2e',
      '    retentionPolicy:',
      '      duration: 5000w',
      'mqttConfig:',
      '  enable: true',
      '  brokerHost: 127.0.0.1',
      `  brokerPort: ${broker.port}`,
      'monsaas:',
      '  enable: true',
      '  metric:',
      `    url: ${monsaas.url}/metric/v1`,
      '  event:',
      `    url: ${monsaas.url}`,
      '    attribute:',
      '      static: [{name: team, value: platform}]',
      'thirdPartyToolsCredentials:',
      '  monsaas:',
      '    - {accountName: ops, insertApiKey: key-1, accountId: "111"}',
      'platformEvents:',
      '  tsdb:',
      '    enable: true',
      '  eventCount:',
      '    enable: true',
      ...USER(
        'tags: [{name: env, value: e2e}]',
        'sendToTsdb:',
        '  enable: true',
        'sendToMQTT:',
        '  enable: true',
        '  postTo:',
        '    sessionStartTopic:',
        '      enable: true',
        '      topic: e2e/start',
      ),
      'logEvents:',
      '  tags: [{name: site, value: lab}]',
      '  source:',
      '    proxy:',
      '      enable: true',
      '    repository:',
      '      enable: true',
      '  sendToMonSaas:',
      '    enable: true',
      '    destinationAccount: [ops]',
      '    source:',
      '      repository:',
      '        enable: true',
    );
    const { destinations, components } = platformDestinations({
      config: c,
      logger: capture.logger,
      errors,
      clock: new PointClock(),
    });
    expect(destinations.map((d) => d.destination.name)).toEqual(['tsdb', 'mqtt', 'monsaas']);
    const subscriber = await connectAsync(broker.url, { reconnectPeriod: 0 });
    const received: string[] = [];
    subscriber.on('message', (topic, payload) => received.push(`${topic} ${payload.toString('utf8')}`));
    await subscriber.subscribeAsync('#', { qos: 1 });
    for (const component of components) await component.start();
    try {
      const events = [
        userQueued(START_SESSION, '1710234000000000031'),
        logQueued(PROXY, '1710233101876000032'),
        logQueued(REPOSITORY, '1710233101876000033'),
        logQueued(ENGINE),
        pointsQueued('EVENT_COUNTS', [EVENT_COUNT]),
      ];
      for (const d of destinations) expect(await d.destination.write(events), d.destination.name).toEqual(new Set());

      // tsdb: user events with their tag; log events not (sendToTsdb off); the points.
      const result = (await query(influx, 'SHOW MEASUREMENTS', 'platform_e2e')) as {
        results: { series?: { values: string[][] }[] }[];
      };
      expect(result.results[0]?.series?.[0]?.values.flat().sort()).toEqual(['event_count', 'user_events']);
      const env = (await query(
        influx,
        "SELECT count(userId_field) FROM user_events WHERE env = 'e2e'",
        'platform_e2e',
      )) as { results: { series?: { values: unknown[][] }[] }[] };
      expect(env.results[0]?.series?.[0]?.values[0]?.[1]).toBe(1);

      // MQTT: the session start on its topic, with the user tags.
      const deadline = Date.now() + 5_000;
      while (received.length === 0 && Date.now() < deadline) await sleep(20);
      await sleep(100);
      expect(received).toEqual([
        'e2e/start {"messageType":"qseow-proxy-session","host":"PLAT-N1","command":"Start session","userDir":"LAB","userId":"goran","origin":"AppAccess","context":"/hub/","message":"Start session for user \'LAB\\\\goran\'","tags":{"env":"e2e"}}',
      ]);

      // monsaas: only the repository ERROR (proxy not enabled for monsaas, user events not sent there).
      expect(monsaas.requests.map((r) => r.url)).toEqual(['/v1/accounts/111/events']);
      expect(monsaas.requests[0]?.body).toMatchObject({
        eventType: 'qs_logEvent',
        qs_log_source: 'qseow-repository',
        site: 'lab',
        team: 'platform',
        svcVersion: expect.any(String) as unknown,
      });
    } finally {
      await subscriber.endAsync();
      for (const component of components) await component.stop();
    }
  });
  it('writes health and session polls to the tsdb, MQTT and monsaas as the config says', async () => {
    const c = config(
      'tsdbConfig:',
      '  enable: true',
      '  host: 127.0.0.1',
      `  port: ${influx.port}`,
      '  v1Config:',
      '    dbName: polled_e2e',
      '    retentionPolicy:',
      '      duration: 5000w',
      '  includeFields:',
      '    activeDocs: true',
      'mqttConfig:',
      '  enable: true',
      '  brokerHost: 127.0.0.1',
      `  brokerPort: ${broker.port}`,
      '  baseTopic: e2e-polled/',
      'monsaas:',
      '  enable: true',
      '  metric:',
      `    url: ${monsaas.url}/metric/v1`,
      '    destinationAccount: [ops]',
      '    dynamic:',
      '      engine:',
      '        cpu:',
      '          enable: true',
      '      proxy:',
      '        sessions:',
      '          enable: true',
      'thirdPartyToolsCredentials:',
      '  monsaas:',
      '    - {accountName: ops, insertApiKey: key-1, accountId: "111"}',
      ...SERVERS({ extract: true, enable: true, proxies: '[{virtualProxy: /hdr}]', intervals: [20_000, 40_000] }),
    );
    monsaas.reset();
    const { destinations, components } = platformDestinations({
      config: c,
      logger: capture.logger,
      errors,
      clock: new PointClock(),
    });
    expect(destinations.map((d) => d.destination.name)).toEqual(['tsdb', 'mqtt', 'monsaas']);
    const subscriber = await connectAsync(broker.url, { reconnectPeriod: 0 });
    const received: string[] = [];
    subscriber.on('message', (topic) => received.push(topic));
    await subscriber.subscribeAsync('e2e-polled/#', { qos: 1 });
    for (const component of components) await component.start();
    try {
      const events = [healthQueued(), sessionsQueued()];
      for (const d of destinations) expect(await d.destination.write(events), d.destination.name).toEqual(new Set());

      const measurements = (await queryRows(influx, 'SHOW MEASUREMENTS', 'polled_e2e')).map((r) => r['name']);
      expect(measurements).toEqual([
        'apps',
        'cache',
        'cpu',
        'mem',
        'saturated',
        'server_info',
        'session',
        'user_session_details',
        'user_session_summary',
        'users',
      ]);
      const apps = Object.keys(await fieldTypes(influx, 'apps', 'polled_e2e'));
      expect(apps).toContain('active_docs');
      expect(apps).not.toContain('loaded_docs');

      const deadline = Date.now() + 5_000;
      while (received.length < 23 && Date.now() < deadline) await sleep(20);
      await sleep(100);
      expect(received).toHaveLength(23);
      expect(received).toContain('e2e-polled/node1.lab.local/cpu/total');
      expect(received).toContain('e2e-polled/node1.lab.local/usersession/hdr');

      expect(monsaas.requests.map((r) => r.url)).toEqual(['/metric/v1', '/metric/v1']);
      const bodies = monsaas.requests.map((r) => r.rawBody).sort();
      expect(bodies.find((b) => b.includes('qs_cpuTotal'))).toContain('"interval.ms":20000');
      expect(bodies.find((b) => b.includes('qs_proxySessions'))).toContain('"interval.ms":40000');
      expect(bodies.some((b) => b.includes('qs_memCommitted'))).toBe(false);
    } finally {
      await subscriber.endAsync();
      for (const component of components) await component.stop();
    }
  });
});

describe('cloudWriterDestination (the destination a writer Lambda serves)', () => {
  const AUDIT = (type: string) => [
    'auditEvents:',
    '  enable: true',
    '  destination:',
    '    enable: true',
    `    type: ${type}`,
  ];
  const ctx = (c: SvcConfig) => ({ config: c, logger: capture.logger, errors, clock: new PointClock() });
  const kinds = [
    auditQueued(),
    userQueued(START_SESSION),
    logQueued(PROXY),
    pointsQueued('EVENT_COUNTS', [EVENT_COUNT]),
    healthQueued(),
    sessionsQueued(),
  ];
  const taken = (c: SvcConfig, name: string) => {
    const d = cloudWriterDestination(ctx(c), name);
    return d === null ? null : { name: d.name, kinds: kinds.filter((e) => d.takes(e)).map((e) => e.kind) };
  };
  const PLATFORM = [
    ...USER('sendToTsdb:', '  enable: true'),
    ...LOG('sendToTsdb:', '  enable: true'),
    'platformEvents:',
    '  tsdb:',
    '    enable: true',
    '  eventCount:',
    '    enable: true',
  ];

  it('tsdb: one destination for the audit events and every platform kind the config routes to the tsdb', () => {
    expect(taken(config(...TSDB, ...AUDIT('tsdb'), ...PLATFORM), 'tsdb')).toEqual({
      name: 'tsdb',
      kinds: ['audit', 'user-event', 'log-event', 'points'],
    });
    expect(
      taken(
        config(
          ...TSDB,
          ...AUDIT('tsdb'),
          ...PLATFORM,
          ...SERVERS({ extract: true, enable: true, proxies: '[{virtualProxy: /hdr}]' }),
        ),
        'tsdb',
      )?.kinds,
    ).toEqual(['audit', 'user-event', 'log-event', 'points', 'health', 'user-sessions']);
  });

  it('tsdb: only what is routed to it (platform kinds without audit, audit without platform kinds), null for nothing', () => {
    expect(taken(config(...TSDB, ...PLATFORM), 'tsdb')?.kinds).toEqual(['user-event', 'log-event', 'points']);
    expect(taken(config(...TSDB, ...AUDIT('tsdb')), 'tsdb')?.kinds).toEqual(['audit']);
    expect(taken(config(...TSDB, ...AUDIT('parquet')), 'tsdb')).toBeNull();
  });

  it('parquet takes audit events; MQTT is not a writer Lambda', () => {
    expect(taken(config(...TSDB, ...AUDIT('tsdb, parquet'), ...PLATFORM), 'parquet')).toEqual({
      name: 'parquet',
      kinds: ['audit'],
    });
    expect(taken(config(...TSDB, ...AUDIT('tsdb'), ...PLATFORM), 'parquet')).toBeNull();
    expect(
      taken(
        config(
          ...MQTT,
          ...USER('sendToMQTT:', '  enable: true', '  postTo:', '    everythingTopic:', '      enable: true'),
        ),
        'mqtt',
      ),
    ).toBeNull();
  });

  it('monsaas: the destination local mode builds, taking the platform kinds routed to monsaas (never audit events), null for none', () => {
    const userAndLog = [
      ...MONSAAS,
      ...USER('sendToMonSaas:', '  enable: true', '  destinationAccount: [ops]'),
      ...LOG(
        'sendToMonSaas:',
        '  enable: true',
        '  destinationAccount: [ops]',
        '  source:',
        '    proxy:',
        '      enable: true',
      ),
    ];
    const c = config(...TSDB, ...AUDIT('tsdb'), ...userAndLog);
    expect(taken(c, 'monsaas')).toEqual({ name: 'monsaas', kinds: ['user-event', 'log-event'] });
    const local = platformDestinations(ctx(c)).destinations.find((d) => d.destination.name === 'monsaas')?.destination;
    expect(cloudWriterDestination(ctx(c), 'monsaas')?.constructor).toBe(local?.constructor);
    expect(
      taken(
        config(
          ...METRICS(['engine:', '  cpu:', '    enable: true', 'proxy:', '  sessions:', '    enable: true']),
          ...SERVERS({ extract: true, enable: true, proxies: '[{virtualProxy: /hdr}]' }),
        ),
        'monsaas',
      )?.kinds,
    ).toEqual(['health', 'user-sessions']);
    expect(taken(config(...MONSAAS, ...AUDIT('parquet')), 'monsaas')).toBeNull();
  });
});
