/**
 * TsdbDestination against a real influxd (version 1): user events, log events and the edge's
 * own points are stored with their measurement, tags, field types and §0.3 times; kinds it does not
 * serve are left alone; a tsdb that is away sends the events back for redelivery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../../shared/config/load.js';
import type { SvcConfig } from '../../../../shared/config/schema.js';
import {
  LOG_EVENTS_TSDB_MODULE,
  TsdbDestination,
  type TsdbDestinationOptions,
  USER_EVENTS_TSDB_MODULE,
} from '../../../../shared/destinations/tsdb/destination.js';
import { TsdbWriter } from '../../../../shared/destinations/tsdb/writer.js';
import { ERROR_TRACKING_MODULE } from '../../../../shared/errors/points.js';
import { ErrorTracker, type TrackedError } from '../../../../shared/errors/tracker.js';
import type { Logger } from '../../../../shared/logging/logger.js';
import type { QueuedEvent } from '../../../../shared/queue/events.js';
import { captureLog, type LogCapture } from '../../../support/audit.js';
import {
  fieldTypes,
  type InfluxdHandle,
  queryRows,
  startInfluxd,
  tagKeys as tagKeysOf,
} from '../../../support/influxd.js';
import { freePort } from '../../../support/ports.js';
import {
  logQueued,
  OPEN_CONNECTION,
  PROXY,
  QIX_PERF_INTERNAL,
  START_SESSION,
  userQueued,
} from '../../platform/fixtures.js';
import { auditQueued, EVENT_COUNT, pointsQueued, QUEUE_METRICS } from '../../platform/queued.js';
import { waiting } from './helpers.js';

const rows = queryRows;
const measurements = async (influx: InfluxdHandle, db: string): Promise<unknown[]> =>
  (await queryRows(influx, 'SHOW MEASUREMENTS', db)).map((r) => r['name']);
const tagKeys = async (influx: InfluxdHandle, measurement: string, db: string): Promise<string[]> =>
  (await tagKeysOf(influx, measurement, db)).sort();

/** The spec's example times are in 2024: a retention long enough to keep them. */
function tsdbConfig(port: number, dbName: string): SvcConfig['tsdbConfig'] {
  const { config } = parseConfigText(
    [
      'Svc:',
      '  tsdbConfig:',
      '    enable: true',
      '    host: 127.0.0.1',
      `    port: ${port}`,
      '    version: 1',
      '    v1Config:',
      `      dbName: ${dbName}`,
      '      retentionPolicy:',
      '        duration: 5000w',
      '',
    ].join('\n'),
    'test.yaml',
    {},
  );
  return config.tsdbConfig;
}

/** The platform side of the destination: no audit events, the edge's points taken. */
function platform(
  options: Pick<TsdbDestinationOptions, 'writer' | 'userEvents' | 'logEvents' | 'log'>,
): TsdbDestination {
  return new TsdbDestination({ ...options, audit: null, points: true });
}

describe('TsdbDestination (platform events)', () => {
  let influx: InfluxdHandle;
  let capture: LogCapture;
  let log: Logger;
  const tracked: TrackedError[] = [];
  let errors: ErrorTracker;

  beforeAll(async () => {
    influx = await startInfluxd();
    capture = await captureLog('info');
    log = capture.logger;
    errors = new ErrorTracker({ enabled: true, log, sink: (e) => tracked.push(e) });
  });
  afterAll(() => influx.stop());

  const writer = (dbName: string, port = influx.port, extra: { requestTimeoutMs?: number } = {}) =>
    new TsdbWriter({
      config: tsdbConfig(port, dbName),
      log,
      onError: (type, module, err) => errors.track(type, err, { module }),
      retryDelaysMs: [],
      ...extra,
    });

  it('stores user events, log events and points exactly, and ignores other kinds', async () => {
    const db = 'platform_all';
    const destination = platform({
      writer: writer(db),
      userEvents: { tags: [{ name: 'env', value: 'test' }] },
      logEvents: { tags: [{ name: 'site', value: 'lab' }] },
      log,
    });
    const batch: QueuedEvent[] = [
      userQueued(OPEN_CONNECTION, '1710234000000000002'),
      userQueued(START_SESSION, '1710234000000000003'),
      logQueued(PROXY, '1710233101876000003'),
      logQueued(QIX_PERF_INTERNAL, '1710230101002000007'),
      pointsQueued('EVENT_COUNTS', [EVENT_COUNT]),
      pointsQueued('LOG_EVENTS_QUEUE', [QUEUE_METRICS]),
      auditQueued(),
    ];
    expect(await destination.write(batch)).toEqual(new Set());

    const users = await rows(influx, 'SELECT * FROM user_events', db);
    expect(users).toEqual([
      {
        time: '2024-03-12T09:00:00.000000002Z',
        host: 'PLAT-N1',
        event_action: 'Open connection',
        userFull: 'LAB\\goran',
        userDirectory: 'LAB',
        userId: 'goran',
        origin: 'AppAccess',
        appId: OPEN_CONNECTION.appId,
        appName: '<unknown app name>',
        uaBrowserName: 'Chrome',
        uaBrowserMajorVersion: '120',
        uaOsName: 'Windows',
        uaOsVersion: 'NT 10.0',
        env: 'test',
        userFull_field: 'LAB\\goran',
        userId_field: 'goran',
        appId_field: OPEN_CONNECTION.appId,
        appName_field: '<unknown app name>',
      },
      {
        time: '2024-03-12T09:00:00.000000003Z',
        host: 'PLAT-N1',
        event_action: 'Start session',
        userFull: 'LAB\\goran',
        userDirectory: 'LAB',
        userId: 'goran',
        origin: 'AppAccess',
        env: 'test',
        userFull_field: 'LAB\\goran',
        userId_field: 'goran',
      },
    ]);
    expect(await tagKeys(influx, 'user_events', db)).toEqual([
      'appId',
      'appName',
      'env',
      'event_action',
      'host',
      'origin',
      'uaBrowserMajorVersion',
      'uaBrowserName',
      'uaOsName',
      'uaOsVersion',
      'userDirectory',
      'userFull',
      'userId',
    ]);

    const proxy = await rows(influx, "SELECT * FROM log_event WHERE source = 'qseow-proxy'", db);
    expect(proxy).toHaveLength(1);
    const { raw_event: raw, ...proxyRow } = proxy[0] ?? {};
    expect(proxyRow).toEqual({
      time: '2024-03-12T08:45:01.876000003Z',
      host: 'PLAT-N1',
      level: 'WARN',
      source: 'qseow-proxy',
      log_row: '312',
      subsystem: 'Audit.Proxy.Proxy.Core.RequestListener',
      qs_log_category: 'access-denied',
      user_full: 'LAB\\kalle',
      user_directory: 'LAB',
      user_id: 'kalle',
      windows_user: 'LAB\\svc_platform',
      result_code: '403',
      site: 'lab',
      message: PROXY.message,
      exception_message: '',
      command: 'Login',
      result_code_field: '403',
      origin: 'AppAccess',
      context: '/hub/',
    });
    expect(JSON.parse(String(raw))).toEqual(PROXY);

    const perf = await rows(influx, "SELECT * FROM log_event WHERE source = 'qseow-qix-perf'", db);
    expect(perf[0]).toMatchObject({
      time: '2024-03-12T07:55:01.002000007Z',
      event_activity_source: 'non-user',
      method: 'Global::OpenApp',
      process_time: 2380.3,
      lock_time: 12,
      handle: -1,
      net_ram: 104857600,
    });
    expect(await fieldTypes(influx, 'log_event', db)).toEqual({
      app_id_field: 'string',
      command: 'string',
      context: 'string',
      exception_message: 'string',
      handle: 'integer',
      lock_time: 'float',
      message: 'string',
      net_ram: 'integer',
      origin: 'string',
      peak_ram: 'integer',
      process_time: 'float',
      raw_event: 'string',
      result_code_field: 'string',
      traverse_time: 'float',
      validate_time: 'float',
      work_time: 'float',
    });

    expect(await rows(influx, 'SELECT * FROM event_count', db)).toEqual([
      {
        time: '2024-03-12T08:45:20.000000004Z',
        counter: 3,
        event_type: 'log',
        host: 'PLAT-N1',
        source: 'qseow-proxy',
        subsystem: 'Audit.Proxy.Proxy.Core.RequestListener',
      },
    ]);
    expect(await fieldTypes(influx, 'event_count', db)).toEqual({ counter: 'integer' });
    expect(await fieldTypes(influx, 'log_events_queue', db)).toEqual({
      processing_time_p95_ms: 'float',
      queue_size: 'integer',
      queue_utilization_pct: 'float',
    });
    expect((await measurements(influx, db)).sort()).toEqual([
      'event_count',
      'log_event',
      'log_events_queue',
      'user_events',
    ]);
  });

  it('a redelivered event overwrites its point instead of duplicating it', async () => {
    const db = 'platform_redelivery';
    const destination = platform({ writer: writer(db), userEvents: { tags: [] }, logEvents: null, log });
    const q = userQueued(START_SESSION, '1710234000000000009');
    expect(await destination.write([q])).toEqual(new Set());
    expect(await destination.write([q])).toEqual(new Set());
    expect(await rows(influx, 'SELECT count(userId_field) FROM user_events', db)).toEqual([
      { time: '1970-01-01T00:00:00Z', count: 1 },
    ]);
  });

  it('takes user and log events only when they go to the tsdb, points always', async () => {
    const db = 'platform_gated';
    const destination = platform({ writer: writer(db), userEvents: null, logEvents: null, log });
    expect(
      await destination.write([
        userQueued(START_SESSION),
        logQueued(PROXY),
        pointsQueued('EVENT_COUNTS', [EVENT_COUNT]),
      ]),
    ).toEqual(new Set());
    expect(await measurements(influx, db)).toEqual(['event_count']);

    const logsOnly = platform({ writer: writer('platform_logs_only'), userEvents: null, logEvents: { tags: [] }, log });
    expect(await logsOnly.write([userQueued(START_SESSION), logQueued(PROXY)])).toEqual(new Set());
    expect(await measurements(influx, 'platform_logs_only')).toEqual(['log_event']);
  });

  it('leaves every event it serves waiting when the database cannot be prepared, and the others not', async () => {
    const closed = await freePort();
    const destination = platform({
      writer: writer('never', closed, { requestTimeoutMs: 1000 }),
      userEvents: null,
      logEvents: { tags: [] },
      log,
    });
    const user = userQueued(START_SESSION);
    const logEvent = logQueued(PROXY);
    const points = pointsQueued('EVENT_COUNTS', [EVENT_COUNT]);
    tracked.length = 0;
    expect(await waiting(destination.write([user, logEvent, points, auditQueued()]))).toEqual(
      new Set([logEvent.id, points.id]),
    );
    expect(
      capture
        .lines()
        .some(
          (l) =>
            l['level'] === 'warn' && /^tsdb v1 at .* cannot be written: .*ECONNREFUSED.* wait/.test(String(l['msg'])),
        ),
    ).toBe(true);
    // Tracked like a failed write (the status page and svc_errors see the outage), once per batch.
    expect(tracked.map((t) => [t.type, t.module])).toEqual([['TSDB_V1_WRITE', LOG_EVENTS_TSDB_MODULE]]);
    // A batch of the error tracker's own points alone tracks nothing (no recursion).
    const errorPoint = {
      measurement: 'svc_errors',
      tags: { error_type: 'TSDB_V1_WRITE', server_name: '_no_server_context' },
      fields: { error_count: { type: 'int' as const, value: 1 } },
      timeNs: '1710233120000000005',
    };
    const errorsOnly = pointsQueued(ERROR_TRACKING_MODULE, [errorPoint]);
    expect(await waiting(destination.write([errorsOnly]))).toEqual(new Set([errorsOnly.id]));
    expect(tracked).toHaveLength(1);
  });

  it('leaves the events of a batch that failed whole waiting, and does not send the next module once one failed', async () => {
    const db = 'platform_outage';
    const real = writer(db, influx.port, { requestTimeoutMs: 500 });
    const modules: string[] = [];
    const counting = {
      ensureDatabase: () => real.ensureDatabase(),
      write: (...args: Parameters<TsdbWriter['write']>) => {
        modules.push(args[1]);
        return real.write(...args);
      },
    };
    const destination = platform({ writer: counting, userEvents: { tags: [] }, logEvents: { tags: [] }, log });
    expect(await destination.write([userQueued(START_SESSION, '1710234000000000011')])).toEqual(new Set());
    modules.length = 0;

    const user = userQueued(OPEN_CONNECTION, '1710234000000000012');
    const logEvent = logQueued(PROXY, '1710233101876000013');
    const points = pointsQueued('EVENT_COUNTS', [EVENT_COUNT]);
    influx.pause();
    let failed: ReadonlySet<string>;
    try {
      failed = await waiting(destination.write([user, logEvent, points]));
    } finally {
      influx.resume();
    }
    expect(failed).toEqual(new Set([user.id, logEvent.id, points.id]));
    expect(modules).toEqual([USER_EVENTS_TSDB_MODULE]);
    expect(tracked.some((t) => t.type === 'TSDB_V1_WRITE' && t.module === USER_EVENTS_TSDB_MODULE)).toBe(true);

    // Delivered again once the tsdb answers: written, each module tracked under its own name.
    expect(await destination.write([user, logEvent, points])).toEqual(new Set());
    expect(modules).toEqual([USER_EVENTS_TSDB_MODULE, USER_EVENTS_TSDB_MODULE, LOG_EVENTS_TSDB_MODULE, 'EVENT_COUNTS']);
    expect(await rows(influx, 'SELECT count(userId_field) FROM user_events', db)).toEqual([
      { time: '1970-01-01T00:00:00Z', count: 2 },
    ]);
  });

  it("writes the error tracker's points last and untracked: an outage is tracked for real data only (§6.10, no recursion)", async () => {
    const db = 'platform_error_points';
    const real = writer(db, influx.port, { requestTimeoutMs: 500 });
    const modules: string[] = [];
    const counting = {
      ensureDatabase: () => real.ensureDatabase(),
      write: (...args: Parameters<TsdbWriter['write']>) => {
        modules.push(`${args[1]}${args[2]?.untracked ? ' (untracked)' : ''}`);
        return real.write(...args);
      },
    };
    const destination = platform({ writer: counting, userEvents: null, logEvents: null, log });
    expect(await destination.write([pointsQueued('EVENT_COUNTS', [EVENT_COUNT])])).toEqual(new Set());
    modules.length = 0;
    const errorPoint = {
      measurement: 'svc_errors',
      tags: { error_type: 'MQTT_PUBLISH', server_name: '_no_server_context' },
      fields: { error_count: { type: 'int' as const, value: 1 } },
      timeNs: '1710233120000000005',
    };
    const errorsFirst = pointsQueued(ERROR_TRACKING_MODULE, [errorPoint]);
    const counts = pointsQueued('EVENT_COUNTS', [EVENT_COUNT]);
    tracked.length = 0;
    influx.pause();
    try {
      expect(await waiting(destination.write([errorsFirst, counts]))).toEqual(new Set([errorsFirst.id, counts.id]));
      expect(modules).toEqual(['EVENT_COUNTS']);
      expect(tracked.map((t) => [t.type, t.module])).toEqual([['TSDB_V1_WRITE', 'EVENT_COUNTS']]);
      // Only error points: their failure is not tracked, so it cannot make another error point.
      expect(await waiting(destination.write([errorsFirst]))).toEqual(new Set([errorsFirst.id]));
      expect(modules).toEqual(['EVENT_COUNTS', 'ERROR_TRACKING (untracked)']);
      expect(tracked).toHaveLength(1);
    } finally {
      influx.resume();
    }
    expect(await destination.write([errorsFirst, counts])).toEqual(new Set());
    expect(await rows(influx, 'SELECT error_count FROM svc_errors', db)).toEqual([
      { time: '2024-03-12T08:45:20.000000005Z', error_count: 1 },
    ]);
  });

  it('drops (does not redeliver) a queued event that cannot become a point', async () => {
    const destination = platform({ writer: writer('platform_bad'), userEvents: { tags: [] }, logEvents: null, log });
    const bad = userQueued(START_SESSION, 'not-a-time');
    const good = userQueued(START_SESSION, '1710234000000000021');
    expect(await destination.write([bad, good])).toEqual(new Set());
    expect(
      capture
        .lines()
        .some((l) => l['msg'] === 'queued event cannot be turned into tsdb points; dropped' && l['id'] === bad.id),
    ).toBe(true);
    expect(await rows(influx, 'SELECT count(userId_field) FROM user_events', 'platform_bad')).toEqual([
      { time: '1970-01-01T00:00:00Z', count: 1 },
    ]);
  });
});
