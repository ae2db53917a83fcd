/**
 * UDP events end to end (issue: datagrams over real UDP sockets → real influxd and real mosquitto):
 * the listeners, handlers, durable local queue and the platform writers composed as `svc local`
 * composes them, with the spec's example messages plus garbage and oversize datagrams.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformPipeline } from '../../../../edge-agent/runtime/platform-pipeline.js';
import { type UdpEdge, udpComponents } from '../../../../edge-agent/sources/udp/compose.js';
import { ErrorTracker } from '../../../../shared/errors/tracker.js';
import { NO_APP_NAMES } from '../../../../shared/platform/app-names.js';
import { PointClock } from '../../../../shared/queue/point-clock.js';
import { Lifecycle } from '../../../../shared/runtime/lifecycle.js';
import { captureLog, type LogCapture } from '../../../support/audit.js';
import { fieldTypes, type InfluxdHandle, queryRows, startInfluxd, tagKeys } from '../../../support/influxd.js';
import { type MosquittoHandle, startMosquitto } from '../../../support/mosquitto.js';
import { freeUdpPort, LOOPBACK } from '../../../support/ports.js';
import { eventually, sendDatagrams, svcConfig } from '../../../support/udp.js';
import { LOG_EXAMPLES, LOG_PROXY, USER_EXAMPLES } from './parse/fixtures.js';

const DB = 'svc_udp_e2e';

let influx: InfluxdHandle;
let broker: MosquittoHandle;
let subscriber: mqtt.MqttClient;
const received: { topic: string; payload: string }[] = [];
let edge: UdpEdge;
let lifecycle: Lifecycle;
let log: LogCapture;
let dir: string;
let userPort: number;
let logPort: number;
let sentAt: number;

beforeAll(async () => {
  [influx, broker] = await Promise.all([startInfluxd(), startMosquitto()]);
  subscriber = await mqtt.connectAsync(broker.url);
  await subscriber.subscribeAsync('#');
  subscriber.on('message', (topic, payload) => received.push({ topic, payload: payload.toString('utf8') }));
  dir = mkdtempSync(join(tmpdir(), 'svc-udp-e2e-'));
  userPort = await freeUdpPort();
  logPort = await freeUdpPort();
  const listener = (port: string, value: number) => [
    '    udpServerConfig:',
    `      serverHost: ${LOOPBACK}`,
    `      ${port}: ${value}`,
    '      maxMessageSize: 2000',
    '      queueMetrics:',
    '        tsdb: { enable: true, writeFrequency: 1000 }',
  ];
  const config = svcConfig([
    '  localQueue:',
    `    directory: ${dir}`,
    '  tsdbConfig:',
    '    enable: true',
    `    host: ${LOOPBACK}`,
    `    port: ${influx.port}`,
    // The spec's examples are from 2024: a long retention keeps them.
    `    v1Config: { dbName: ${DB}, retentionPolicy: { name: long, duration: 1000w } }`,
    '  mqttConfig:',
    '    enable: true',
    `    brokerHost: ${LOOPBACK}`,
    `    brokerPort: ${broker.port}`,
    '  platformEvents:',
    '    tsdb: { enable: true, writeFrequency: 1000 }',
    '    eventCount: { enable: true }',
    '    rejectedEventCount: { enable: true }',
    '  userEvents:',
    '    enable: true',
    '    tags: [{ name: env, value: e2e }]',
    ...listener('portUserActivityEvents', userPort),
    '    sendToTsdb: { enable: true }',
    '    sendToMQTT:',
    '      enable: true',
    '      postTo:',
    '        everythingTopic: { enable: true, topic: e2e/userevent }',
    '        sessionStartTopic: { enable: true, topic: e2e/userevent/session/start }',
    '        connectionCloseTopic: { enable: true, topic: e2e/userevent/connection/close }',
    '  logEvents:',
    ...listener('portLogEvents', logPort),
    '    tags: [{ name: env, value: e2e }]',
    '    source:',
    '      engine: { enable: true }',
    '      proxy: { enable: true }',
    '      repository: { enable: true }',
    '      scheduler: { enable: true }',
    '      apiPerf: { enable: true }',
    '    categorise:',
    '      enable: true',
    '      rules:',
    "        - { logLevel: [warn], action: categorise, category: [{ name: qs_log_category, value: access-denied }], filter: [{ type: sw, value: 'Access was denied' }] }",
    "        - { logLevel: [error], action: drop, filter: [{ type: so, value: 'Database connection failed' }] }",
    '    enginePerformanceMonitor:',
    '      enable: true',
    '      trackRejectedEvents: { enable: true }',
    '      monitorFilter:',
    '        allApps: { enable: true, method: { allMethods: true, allMethodsExclude: [Global::OpenApp] } }',
    '    sendToTsdb: { enable: true }',
    '    sendToMQTT:',
    '      enable: true',
    '      baseTopic: e2e/logevent',
    '      postTo: { baseTopic: true, subsystemTopics: true }',
  ]);
  log = await captureLog();
  const errors = new ErrorTracker({ enabled: true, log: log.logger });
  const ctx = { config, configFile: 'test.yaml', logger: log.logger, errors, clock: new PointClock() };
  const pipeline = await platformPipeline(ctx);
  const made = udpComponents(ctx, { appNames: NO_APP_NAMES, pipeline });
  if (made === null) throw new Error('no UDP components');
  edge = made;
  lifecycle = new Lifecycle({ log: log.logger });
  for (const c of [...pipeline.components, ...edge.components]) lifecycle.add(c);
  await lifecycle.start();

  sentAt = Date.now();
  await sendDatagrams(userPort, USER_EXAMPLES);
  await sendDatagrams(logPort, [
    ...LOG_EXAMPLES,
    'garbage without any structure',
    Buffer.from([0xff, 0xfe, 0x00, 0x3b]),
    `${LOG_PROXY};${'x'.repeat(2100)}`,
  ]);
}, 60_000);

afterAll(async () => {
  await lifecycle?.stop();
  await subscriber?.endAsync();
  await Promise.all([influx?.stop(), broker?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const rows = (q: string) => queryRows(influx, q, DB);

describe('UDP events end to end', () => {
  it('writes user events to the tsdb with the §6.3 tags, field types and the receive time', async () => {
    await eventually(
      async () => (await rows('SELECT * FROM user_events').catch(() => [])).length === 4,
      10_000,
      '4 user_events points',
    );
    const points = await rows('SELECT * FROM user_events');
    const open = points.find((p) => p['event_action'] === 'Open connection');
    expect(open).toMatchObject({
      host: 'PLAT-N1',
      userFull: 'LAB\\goran',
      userDirectory: 'LAB',
      userId: 'goran',
      origin: 'AppAccess',
      env: 'e2e',
      appId: 'e7af59a0-c243-480d-9571-08727551a66f',
      appName: '<unknown app name>',
      uaBrowserName: 'Chrome',
      uaBrowserMajorVersion: '120',
      uaOsName: 'Windows',
      uaOsVersion: 'NT 10.0',
      userFull_field: 'LAB\\goran',
      userId_field: 'goran',
      appId_field: 'e7af59a0-c243-480d-9571-08727551a66f',
      appName_field: '<unknown app name>',
    });
    const t = Date.parse(String(open?.['time']));
    expect(t).toBeGreaterThanOrEqual(sentAt - 1);
    expect(t).toBeLessThan(sentAt + 10_000);
    expect(await fieldTypes(influx, 'user_events', DB)).toEqual({
      userFull_field: 'string',
      userId_field: 'string',
      appId_field: 'string',
      appName_field: 'string',
    });
    expect(await tagKeys(influx, 'user_events', DB)).toEqual(
      expect.arrayContaining(['host', 'event_action', 'userFull', 'userDirectory', 'userId', 'origin', 'env']),
    );
  });

  it('writes log events with their own time, categories, and drops what a rule or the perf filter rejects', async () => {
    // 9 examples: the repository surplus example is dropped by the rule, one perf event by the filter.
    await eventually(
      async () => (await rows('SELECT * FROM log_event').catch(() => [])).length === 7,
      10_000,
      '7 log_event points',
    );
    const points = await rows('SELECT * FROM log_event');
    const proxy = points.find((p) => p['log_row'] === '312');
    expect(proxy).toMatchObject({
      host: 'PLAT-N1',
      level: 'WARN',
      source: 'qseow-proxy',
      subsystem: 'Audit.Proxy.Proxy.Core.RequestListener',
      qs_log_category: 'access-denied',
      user_full: 'LAB\\kalle',
      result_code: '403',
      result_code_field: '403',
      command: 'Login',
      env: 'e2e',
    });
    // The event's own millisecond; the nanoseconds below it are the §0.3 point counter.
    expect(String(proxy?.['time']).slice(0, 23)).toBe('2024-03-12T08:45:01.876');
    const surplus = points.find((p) => p['log_row'] === '313');
    expect(surplus?.['message']).toBe('Login failed; account locked');
    expect(String(surplus?.['time']).slice(0, 23)).toBe('2024-03-12T14:45:02.001');
    const perf = points.filter((p) => p['source'] === 'qseow-qix-perf');
    expect(perf.map((p) => p['method'])).toEqual(['GenericObject::GetLayout']);
    const types = await fieldTypes(influx, 'log_event', DB);
    expect(types).toMatchObject({
      process_time: 'float',
      handle: 'integer',
      net_ram: 'integer',
      message: 'string',
      raw_event: 'string',
    });
    expect(JSON.parse(String(proxy?.['raw_event']))).toMatchObject({
      source: 'qseow-proxy',
      log_row: 312,
      category: [{ name: 'qs_log_category', value: 'access-denied' }],
    });
  });

  it('publishes user and log events to their MQTT topics', async () => {
    await eventually(
      () => received.filter((m) => m.topic.startsWith('e2e/logevent/')).length >= 7,
      10_000,
      'subsystem topics',
    );
    await eventually(
      () => received.filter((m) => m.topic === 'e2e/userevent').length === 4,
      10_000,
      'everything topic',
    );
    const topics = received.map((m) => m.topic);
    expect(topics.filter((t) => t === 'e2e/userevent/session/start')).toHaveLength(1);
    expect(topics.filter((t) => t === 'e2e/userevent/connection/close')).toHaveLength(1);
    expect(topics.filter((t) => t === 'e2e/logevent')).toHaveLength(7);
    expect(topics).toContain('e2e/logevent/audit/proxy/proxy/core/requestlistener');
    const start = received.find((m) => m.topic === 'e2e/userevent/session/start');
    expect(JSON.parse(start?.payload ?? '{}')).toEqual({
      messageType: 'qseow-proxy-session',
      host: 'PLAT-N1',
      command: 'Start session',
      userDir: 'LAB',
      userId: 'goran',
      origin: 'AppAccess',
      context: '/hub/',
      message: "Start session for user 'LAB\\goran'",
      tags: { env: 'e2e' },
    });
  });

  it('counts events, rejected events and the listeners’ drops in the tsdb', async () => {
    await eventually(
      async () => {
        const counts = await rows('SELECT * FROM event_count').catch(() => []);
        return counts.reduce((n, p) => n + Number(p['counter']), 0) === 4 + 9 + 2;
      },
      10_000,
      'event counts of all 15 parsed or unrecognised datagrams',
    );
    const counts = await rows('SELECT * FROM event_count');
    const unknown = counts.filter((p) => p['source'] === 'unknown');
    expect(unknown.map((p) => [p['event_type'], p['host'], p['subsystem']])).toEqual([['log', 'unknown', 'unknown']]);
    expect(unknown[0]?.['counter']).toBe(2);
    const rejected = await rows('SELECT * FROM rejected_event_count');
    expect(rejected.map((p) => p['reason']).sort()).toEqual(['category_drop', 'perf_filter']);

    await eventually(
      async () => {
        const metrics = await rows(
          'SELECT sum(messages_received) AS received, sum(messages_failed) AS failed, sum(messages_dropped_size) AS size, sum(messages_processed) AS processed FROM log_events_queue',
        ).catch(() => []);
        return metrics[0]?.['received'] === 12;
      },
      10_000,
      'log listener metrics',
    );
    const [m] = await rows(
      'SELECT sum(messages_received) AS received, sum(messages_failed) AS failed, sum(messages_dropped_size) AS size, sum(messages_processed) AS processed FROM log_events_queue',
    );
    expect(m).toMatchObject({ received: 12, failed: 2, size: 1, processed: 9 });
    expect(await fieldTypes(influx, 'log_events_queue', DB)).toMatchObject({
      queue_size: 'integer',
      queue_utilization_pct: 'float',
      processing_time_p95_ms: 'float',
      messages_dropped_kernel: 'integer',
    });
  });
});
