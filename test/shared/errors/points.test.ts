/**
 * `svc_errors` points (platform-formats.md §6.10) in a real influxd: real failures are tracked
 * (a point influxd refuses, an MQTT publish without a broker, a health poll to a closed port as the
 * pollers report it), go through the edge's platform pipeline (its durable queue and tsdb
 * destination) and land with exact tags, fields, field types and times; an error point that influxd
 * itself refuses is dropped at DEBUG and not tracked (no recursion).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { platformPipeline } from '../../../edge-agent/runtime/platform-pipeline.js';
import type { SvcConfig } from '../../../shared/config/schema.js';
import { MqttWriter } from '../../../shared/destinations/mqtt/client.js';
import { errorTrackingComponents } from '../../../shared/errors/points.js';
import { ErrorTracker, type TrackedError } from '../../../shared/errors/tracker.js';
import { pointsEvent } from '../../../shared/queue/events.js';
import { PointClock } from '../../../shared/queue/point-clock.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import { captureLog, type LogCapture } from '../../support/audit.js';
import {
  fieldTypes,
  type InfluxdHandle,
  query,
  queryRows,
  startInfluxd,
  tagKeys,
  writeLines,
} from '../../support/influxd.js';
import { mqttOutageRow } from '../../support/mqtt-rig.js';
import { freePort, LOOPBACK } from '../../support/ports.js';
import { svcConfig } from '../../support/udp.js';

let influx: InfluxdHandle;
let capture: LogCapture;
let dir: string;
let running: Component[] = [];

beforeAll(async () => {
  influx = await startInfluxd();
  capture = await captureLog('debug');
  dir = mkdtempSync(join(tmpdir(), 'svc-errors-'));
});
afterAll(async () => {
  await influx?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  for (const c of running.reverse()) await c.stop();
  running = [];
});

function config(
  db: string,
  extra: string[] = [],
  errorTracking = '{ enable: true, tsdb: { enable: true } }',
): SvcConfig {
  return svcConfig([
    `  localQueue: { directory: ${join(dir, db)} }`,
    `  tsdbConfig: { enable: true, host: ${LOOPBACK}, port: ${influx.port}, version: 1, v1Config: { dbName: ${db} } }`,
    `  errorTracking: ${errorTracking}`,
    ...extra,
  ]);
}

/** The edge's pipeline with the error tracking's components, started as boot.ts starts them. */
async function edge(c: SvcConfig) {
  const errors = new ErrorTracker({ enabled: true, log: capture.logger });
  const ctx = { config: c, configFile: 'test.yaml', logger: capture.logger, errors, clock: new PointClock() };
  const pipeline = await platformPipeline(ctx);
  const components = [...pipeline.components, ...errorTrackingComponents(ctx, pipeline.queue)];
  for (const component of components) {
    await component.start();
    running.push(component);
  }
  const tracked: TrackedError[] = [];
  errors.subscribe((e) => tracked.push(e));
  if (!pipeline.queue) throw new Error('the tsdb takes the error points');
  return { errors, tracked, queue: pipeline.queue, tsdb: pipeline.destinations[0] };
}

describe('svc_errors points', () => {
  it('writes each tracked error with its tags, fields and types, at the time it happened', async () => {
    const db = 'errors_written';
    const c = config(db, ['  mqttConfig: { enable: true, brokerHost: 127.0.0.1, brokerPort: 1 }']);
    const { errors, tracked, queue } = await edge(c);

    // 1. A point influxd refuses for good (field type conflict): TSDB_V1_WRITE with the producing module.
    await query(influx, `CREATE DATABASE ${db}`);
    await writeLines(influx, db, `conflict value="text" ${Date.now()}000000`);
    await queue.send([
      pointsEvent('EVENT_COUNTS', [
        {
          measurement: 'conflict',
          tags: { t: 'a' },
          fields: { value: { type: 'int', value: 1 } },
          timeNs: `${Date.now()}000001`,
        },
      ]),
    ]);
    await expect.poll(() => tracked.length, { timeout: 10_000 }).toBe(1);

    // 2. An MQTT broker that is down (port 1 refuses): the outage, then a publish that fails.
    const mqtt = new MqttWriter({ settings: c.mqttConfig, log: capture.logger, errors, connectTimeoutMs: 300 });
    await mqtt.start();
    running.push(mqtt);
    expect(await mqtt.publish('svc/test', 'x', 'LOG_EVENTS_MQTT', 'Node1')).toBe(false);

    // 3. A health poll to a closed port, reported as the pollers report it.
    const closed = await freePort();
    const refused: unknown = await fetch(`http://${LOOPBACK}:${closed}/engine/healthcheck?x=1`).catch(
      (e: unknown) => e,
    );
    errors.track('HEALTH_API', refused, { serverName: 'Node2', host: 'node2.lab.local' });

    const rows = async () => queryRows(influx, 'SELECT * FROM svc_errors ORDER BY time', db, { epoch: 'ms' });
    await expect.poll(async () => (await rows()).length, { timeout: 10_000 }).toBe(4);
    const [tsdbError, mqttOutage, mqttError, healthError] = tracked;
    expect(await rows()).toEqual([
      {
        time: tsdbError?.at.getTime(),
        error_type: 'TSDB_V1_WRITE',
        server_name: '_no_server_context',
        destination_host: LOOPBACK,
        module: 'EVENT_COUNTS',
        error_count: 1,
        error_category: 'http_4xx',
        http_status: 400,
        request_url: `http://${LOOPBACK}:${influx.port}/write`,
      },
      mqttOutageRow(1, mqttOutage?.at.getTime()),
      {
        time: mqttError?.at.getTime(),
        error_type: 'MQTT_PUBLISH',
        server_name: 'Node1',
        destination_host: LOOPBACK,
        module: 'LOG_EVENTS_MQTT',
        error_count: 1,
        error_category: 'mqtt_error',
      },
      {
        time: healthError?.at.getTime(),
        error_type: 'HEALTH_API',
        server_name: 'Node2',
        host: 'node2.lab.local',
        error_count: 1,
        error_category: 'connection_refused',
        error_code: 'ECONNREFUSED',
        remote_address: LOOPBACK,
        remote_port: closed,
        syscall: 'connect',
      },
    ]);
    expect(await fieldTypes(influx, 'svc_errors', db)).toEqual({
      error_category: 'string',
      error_code: 'string',
      error_count: 'integer',
      http_status: 'integer',
      remote_address: 'string',
      remote_port: 'integer',
      request_url: 'string',
      syscall: 'string',
    });
    expect((await tagKeys(influx, 'svc_errors', db)).sort()).toEqual([
      'destination_host',
      'error_type',
      'host',
      'module',
      'server_name',
    ]);
  });

  it('keeps the errors tracked before it starts (a component that starts earlier) and queues them at its start', async () => {
    const db = 'errors_before_start';
    const c = config(db);
    const errors = new ErrorTracker({ enabled: true, log: capture.logger });
    const ctx = { config: c, configFile: 'test.yaml', logger: capture.logger, errors, clock: new PointClock() };
    const pipeline = await platformPipeline(ctx);
    const components = [...pipeline.components, ...errorTrackingComponents(ctx, pipeline.queue)];
    // Tracked while the pipeline is composed but nothing has started, as an MQTT writer's start does.
    errors.track('MQTT_PUBLISH', new Error('not reached at start'), { module: 'MQTT_CONNECTION' });
    for (const component of components) {
      await component.start();
      running.push(component);
    }
    const rows = async () => queryRows(influx, 'SELECT error_count, module FROM svc_errors', db).catch(() => []);
    await expect.poll(async () => (await rows()).length, { timeout: 10_000 }).toBe(1);
    expect(await rows()).toEqual([{ time: expect.any(String) as unknown, error_count: 1, module: 'MQTT_CONNECTION' }]);
  });

  it('uses errorTracking.tsdb.measurementName', async () => {
    const db = 'errors_named';
    const { errors } = await edge(
      config(db, [], '{ enable: true, tsdb: { enable: true, measurementName: own_errors } }'),
    );
    errors.track('UDP_LOG_EVENT', new Error('socket'), { module: 'UDP_LOG_EVENTS' });
    await expect
      .poll(
        async () => (await queryRows(influx, 'SELECT error_count, module FROM own_errors', db).catch(() => [])).length,
        { timeout: 10_000 },
      )
      .toBe(1);
  });

  it('drops an error point influxd refuses at DEBUG, without tracking it (no recursion)', async () => {
    const db = 'errors_refused';
    const { errors, tsdb } = await edge(config(db));
    // svc_errors.error_count already holds strings: influxd refuses every error point for good.
    await query(influx, `CREATE DATABASE ${db}`);
    await writeLines(influx, db, `svc_errors error_count="text" ${Date.now()}000000`);
    errors.track('MONSAAS_POST', new Error('down'), { module: 'LOG_EVENTS_MONSAAS' });

    await expect
      .poll(
        () =>
          capture.lines().some((l) => l['msg'] === 'tsdb refused a point; dropped' && l['module'] === 'ERROR_TRACKING'),
        { timeout: 10_000 },
      )
      .toBe(true);
    const refusal = capture
      .lines()
      .find((l) => l['msg'] === 'tsdb refused a point; dropped' && l['module'] === 'ERROR_TRACKING');
    expect(refusal?.['level']).toBe('debug');
    expect([...errors.sinceStartByType]).toEqual([['MONSAAS_POST', 1]]);
    expect(tsdb?.failedWrites).toBe(0);
    expect(await queryRows(influx, 'SELECT count(error_count) FROM svc_errors', db)).toEqual([
      { time: '1970-01-01T00:00:00Z', count: 1 },
    ]);
  });

  it('is not composed when errorTracking.tsdb is off, and the daily summary only with logSummary', () => {
    const ctx = (lines: string[]) => ({
      config: svcConfig(lines),
      logger: capture.logger,
      errors: new ErrorTracker({ enabled: true, log: capture.logger }),
      clock: new PointClock(),
    });
    const queue = { send: () => Promise.resolve() };
    const names = (lines: string[]) => errorTrackingComponents(ctx(lines), queue).map((c) => c.name);
    expect(names(['  tsdbConfig: { enable: true }', '  errorTracking: { enable: true }'])).toEqual([]);
    expect(
      names([
        '  tsdbConfig: { enable: true }',
        '  errorTracking: { enable: true, tsdb: { enable: true }, logSummary: { enable: true } }',
      ]),
    ).toEqual(['error points writer (svc_errors)', 'daily error summary (00:00 UTC)']);
    expect(names(['  errorTracking: { enable: true, tsdb: { enable: true } }'])).toEqual([]);
    expect(
      names([
        '  tsdbConfig: { enable: true }',
        '  errorTracking: { enable: false, tsdb: { enable: true }, logSummary: { enable: true } }',
      ]),
    ).toEqual([]);
  });
});
