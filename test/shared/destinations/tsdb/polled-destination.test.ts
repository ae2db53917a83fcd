/**
 * TsdbDestination with polled data (platform-formats.md §6.1, §6.2): against a real influxd 1.x the
 * points are stored with their measurement, tags, field types (SHOW FIELD KEYS) and times; the
 * request bodies of versions 1, 2 and 3 are byte-for-byte the same — versions 2 and 3 against the
 * fake InfluxDB (test/support/fake-influx.ts), since no InfluxDB 2 or 3 server can be installed
 * here; failures are tracked with the modules HEALTH_METRICS and PROXY_SESSIONS; kinds the config
 * does not send to the tsdb are left alone.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../../shared/config/load.js';
import type { SvcConfig } from '../../../../shared/config/schema.js';
import {
  type FieldType,
  HEALTH_MEASUREMENTS,
  USER_SESSION_DETAILS,
  USER_SESSION_SUMMARY,
} from '../../../../shared/destinations/tsdb/datamodel.js';
import {
  HEALTH_TSDB_MODULE,
  SESSIONS_TSDB_MODULE,
  TsdbDestination,
  type TsdbDestinationOptions,
} from '../../../../shared/destinations/tsdb/destination.js';
import { toLine } from '../../../../shared/destinations/tsdb/line-protocol.js';
import { healthPoints, type IncludeFields, sessionPoints } from '../../../../shared/destinations/tsdb/mappers.js';
import { TsdbWriter } from '../../../../shared/destinations/tsdb/writer.js';
import type { QueuedEvent } from '../../../../shared/queue/events.js';
import { type FakeInflux, startFakeInflux } from '../../../support/fake-influx.js';
import { fieldTypes, type InfluxdHandle, queryRows, startInfluxd, tagKeys } from '../../../support/influxd.js';
import { silentLog } from '../../../support/log.js';
import { START_SESSION, userQueued } from '../../platform/fixtures.js';
import { auditQueued, EVENT_COUNT, pointsQueued } from '../../platform/queued.js';
import {
  APP_ID,
  DOC_NAMES,
  healthQueued,
  healthSample,
  SESSION_APP,
  sessionSample,
  sessionsQueued,
} from '../polled.js';
import { fakeWriter, type Recorder, recorder, waiting } from './helpers.js';

const ALL: IncludeFields = { activeDocs: true, loadedDocs: true, inMemoryDocs: true };

/** A v1 tsdbConfig for the real influxd; the examples are from 2024, so a long retention keeps them. */
function v1Config(port: number, dbName: string): SvcConfig['tsdbConfig'] {
  const yaml = [
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
  ];
  return parseConfigText(yaml.join('\n'), 'test.yaml', {}).config.tsdbConfig;
}

/** The polled-data side of the destination (no audit, user or log events, no points). */
function polled(
  writer: TsdbDestinationOptions['writer'],
  health: IncludeFields | null,
  sessions: boolean,
): TsdbDestination {
  return new TsdbDestination({
    writer,
    audit: null,
    userEvents: null,
    logEvents: null,
    points: false,
    health: health === null ? null : { includeFields: health },
    sessions,
    log: silentLog,
  });
}

const TYPE_WORD: Record<FieldType, string> = { int: 'integer', float: 'float', string: 'string', bool: 'boolean' };

describe('TsdbDestination (health and sessions)', () => {
  let influx: InfluxdHandle;
  const fakes: Partial<Record<1 | 2 | 3, FakeInflux>> = {};
  let rec: Recorder;

  beforeAll(async () => {
    influx = await startInfluxd();
    fakes[1] = await startFakeInflux({ version: 1 });
    fakes[2] = await startFakeInflux({ version: 2, token: 'v2-token', org: 'acme', existing: ['svc'] });
    fakes[3] = await startFakeInflux({ version: 3, token: 'v3-token' });
  });
  afterAll(async () => {
    await influx?.stop();
    for (const fake of Object.values(fakes)) await fake.close();
  });
  beforeEach(() => {
    rec = recorder();
    for (const fake of Object.values(fakes)) fake.reset();
  });

  const realWriter = (db: string) =>
    new TsdbWriter({ config: v1Config(influx.port, db), log: silentLog, onError: rec.onError, retryDelaysMs: [] });
  const fake = (version: 1 | 2 | 3): FakeInflux => fakes[version] ?? expect.fail(`no fake v${version}`);

  it('influxd 1.x stores every health and session point with its tags, field types and time', async () => {
    const db = 'polled_all';
    const destination = polled(realWriter(db), ALL, true);
    const health = healthQueued(healthSample({ docNames: DOC_NAMES, tags: { ...healthSample().tags, site: 'lab' } }));
    const sessions = sessionsQueued();
    expect(await destination.write([health, sessions])).toEqual(new Set());

    const measurements = (await queryRows(influx, 'SHOW MEASUREMENTS', db)).map((r) => r['name']);
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

    const tags = { host: 'node1.lab.local', server_name: 'Node1', server_description: 'Central node', site: 'lab' };
    expect(await queryRows(influx, 'SELECT * FROM mem', db)).toEqual([
      { time: '2024-03-12T08:45:30.000000001Z', ...tags, committed: 4213.6, allocated: 4577.3, free: 27890.4 },
    ]);
    expect(await queryRows(influx, 'SELECT * FROM cpu', db)).toEqual([
      { time: '2024-03-12T08:45:30.000000003Z', ...tags, total: 7.5 },
    ]);
    expect(await queryRows(influx, 'SELECT * FROM saturated', db)).toEqual([
      { time: '2024-03-12T08:45:30.000000007Z', ...tags, saturated: false },
    ]);
    expect(await queryRows(influx, 'SELECT * FROM apps', db)).toEqual([
      {
        time: '2024-03-12T08:45:30.000000002Z',
        ...tags,
        active_docs_count: 1,
        loaded_docs_count: 1,
        in_memory_docs_count: 2,
        calls: 15234,
        selections: 812,
        active_docs: APP_ID,
        active_docs_names: 'Sales dashboard',
        active_session_docs_names: '',
        loaded_docs: APP_ID,
        loaded_docs_names: 'Sales dashboard',
        loaded_session_docs_names: '',
        in_memory_docs: `${APP_ID},${SESSION_APP}`,
        in_memory_docs_names: 'Sales dashboard',
        in_memory_session_docs_names: SESSION_APP,
      },
    ]);

    // §6.1's types, as influxd reports them (and as docs/data-model.md lists them).
    const i = 'integer';
    expect(await fieldTypes(influx, 'server_info', db)).toEqual({
      started: 'string',
      uptime: 'string',
      version: 'string',
    });
    expect(await fieldTypes(influx, 'mem', db)).toEqual({ allocated: 'float', committed: 'float', free: 'float' });
    expect(await fieldTypes(influx, 'cpu', db)).toEqual({ total: 'float' });
    expect(await fieldTypes(influx, 'session', db)).toEqual({ active: i, total: i });
    expect(await fieldTypes(influx, 'users', db)).toEqual({ active: i, total: i });
    expect(await fieldTypes(influx, 'cache', db)).toEqual({
      added: i,
      bytes_added: i,
      hits: i,
      lookups: i,
      replaced: i,
    });
    expect(await fieldTypes(influx, 'saturated', db)).toEqual({ saturated: 'boolean' });
    const apps = await fieldTypes(influx, 'apps', db);
    expect(
      Object.entries(apps)
        .filter(([, t]) => t === i)
        .map(([n]) => n)
        .sort(),
    ).toEqual(['active_docs_count', 'calls', 'in_memory_docs_count', 'loaded_docs_count', 'selections']);
    for (const model of [...HEALTH_MEASUREMENTS, USER_SESSION_SUMMARY, USER_SESSION_DETAILS]) {
      const expected = Object.fromEntries(Object.entries(model.fields).map(([name, f]) => [name, TYPE_WORD[f.type]]));
      expect(await fieldTypes(influx, model.names[0], db), model.names[0]).toEqual(expected);
    }

    const sessionTags = {
      host: 'node1.lab.local',
      server_name: 'Node1',
      server_description: 'Central node',
      user_session_virtual_proxy: '/hdr',
      user_session_host: 'node1.lab.local:4243',
    };
    expect(await queryRows(influx, 'SELECT * FROM user_session_summary', db)).toEqual([
      {
        time: '2024-03-12T08:45:31.00000001Z',
        ...sessionTags,
        session_count: 2,
        session_user_id_list: 'LAB\\goran,LAB\\anna',
      },
    ]);
    expect(await fieldTypes(influx, 'user_session_summary', db)).toEqual({
      session_count: 'integer',
      session_user_id_list: 'string',
    });
    expect(await queryRows(influx, 'SELECT * FROM user_session_details', db)).toEqual([
      {
        time: '2024-03-12T08:45:31.000000011Z',
        ...sessionTags,
        user_session_id: '4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11',
        user_session_user_directory: 'LAB',
        user_session_user_id: 'goran',
        session_id: '4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11',
        user_directory: 'LAB',
        user_id: 'goran',
      },
      {
        time: '2024-03-12T08:45:31.000000012Z',
        ...sessionTags,
        user_session_id: '9f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f',
        user_session_user_directory: 'LAB',
        user_session_user_id: 'anna',
        session_id: '9f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f',
        user_directory: 'LAB',
        user_id: 'anna',
      },
    ]);
    expect((await tagKeys(influx, 'user_session_details', db)).sort()).toEqual(
      Object.keys(USER_SESSION_DETAILS.tags).sort(),
    );
  });

  it('a redelivered poll overwrites its own points instead of adding new ones', async () => {
    const db = 'polled_redelivery';
    const destination = polled(realWriter(db), null, true);
    const q = sessionsQueued();
    expect(await destination.write([q])).toEqual(new Set());
    expect(await destination.write([structuredClone(q)])).toEqual(new Set());
    expect(await queryRows(influx, 'SELECT count(session_id) FROM user_session_details', db)).toEqual([
      { time: '1970-01-01T00:00:00Z', count: 2 },
    ]);
    expect(await queryRows(influx, 'SELECT count(session_count) FROM user_session_summary', db)).toEqual([
      { time: '1970-01-01T00:00:00Z', count: 1 },
    ]);
  });

  it('sends byte-for-byte the same line protocol to versions 1, 2 and 3', async () => {
    const first = healthQueued(healthSample({ docNames: DOC_NAMES }));
    const sessions = sessionsQueued();
    const second = healthQueued(
      healthSample({ body: { ...healthSample().body, cpu: { total: 7 } } }),
      '1710233160000000020',
    );
    const events = [first, sessions, second];
    for (const version of [1, 2, 3] as const) {
      const writer = fakeWriter(fake(version), rec);
      // The fake 1.x has no query API for the database setup (tested against influxd in v1.test.ts).
      const destination = polled(
        version === 1 ? { ensureDatabase: () => Promise.resolve(), write: (p, m) => writer.write(p, m) } : writer,
        ALL,
        true,
      );
      expect(await destination.write(events)).toEqual(new Set());
    }
    const bodies = ([1, 2, 3] as const).map((v) =>
      fake(v)
        .writes()
        .map((w) => w.body),
    );
    const expected = [
      [...healthPoints(first, ALL), ...healthPoints(second, ALL)].map(toLine).join('\n'),
      sessionPoints(sessions).map(toLine).join('\n'),
    ];
    expect(bodies[0]).toEqual(expected);
    expect(bodies[1]).toEqual(expected);
    expect(bodies[2]).toEqual(expected);
    expect(bodies[0]?.[0]).toContain(
      'cpu,host=node1.lab.local,server_name=Node1,server_description=Central\\ node total=7 1710233160000000023',
    );
  });

  it('tracks a point the tsdb refuses with the module HEALTH_METRICS or PROXY_SESSIONS', async () => {
    const v2 = fake(2);
    v2.poison('cpu,', 400);
    v2.poison('user_session_summary,', 400);
    const destination = polled(fakeWriter(v2, rec), ALL, true);
    expect(await destination.write([healthQueued(), sessionsQueued()])).toEqual(new Set());
    expect(rec.errors.map((e) => [e.type, e.module])).toEqual([
      ['TSDB_V2_WRITE', HEALTH_TSDB_MODULE],
      ['TSDB_V2_WRITE', SESSIONS_TSDB_MODULE],
    ]);
    expect(HEALTH_TSDB_MODULE).toBe('HEALTH_METRICS');
    expect(SESSIONS_TSDB_MODULE).toBe('PROXY_SESSIONS');
    const stored = v2.lines().map((l) => l.slice(0, l.indexOf(',')));
    expect(stored).toEqual([
      'server_info',
      'mem',
      'apps',
      'session',
      'users',
      'cache',
      'saturated',
      'user_session_details',
      'user_session_details',
    ]);
  });

  it('leaves the polls of a batch whose write failed whole waiting, for redelivery', async () => {
    const v3 = fake(3);
    const health = healthQueued();
    const sessions = sessionsQueued();
    await v3.refuseConnections();
    try {
      const destination = polled(fakeWriter(v3, rec), ALL, true);
      expect(await waiting(destination.write([health, sessions]))).toEqual(new Set([health.id, sessions.id]));
    } finally {
      await v3.acceptConnections();
    }
  });

  it('takes health and session polls only when they go to the tsdb, and leaves the other kinds alone', async () => {
    const v2 = fake(2);
    const healthOnly = polled(fakeWriter(v2, rec), ALL, false);
    const others: QueuedEvent[] = [
      sessionsQueued(),
      userQueued(START_SESSION),
      pointsQueued('EVENT_COUNTS', [EVENT_COUNT]),
      auditQueued(),
    ];
    expect(await healthOnly.write([...others, healthQueued()])).toEqual(new Set());
    expect(v2.lines().map((l) => l.slice(0, l.indexOf(',')))).toEqual(HEALTH_MEASUREMENTS.map((m) => m.names[0]));

    v2.reset();
    const sessionsOnly = polled(fakeWriter(v2, rec), null, true);
    expect(
      await sessionsOnly.write([healthQueued(), sessionsQueued(sessionSample({ sessions: [], userIdList: '' }))]),
    ).toEqual(new Set());
    expect(v2.lines()).toEqual([
      'user_session_summary,host=node1.lab.local,server_name=Node1,server_description=Central\\ node,user_session_virtual_proxy=/hdr,user_session_host=node1.lab.local:4243 session_count=0i,session_user_id_list="" 1710233131000000010',
    ]);

    v2.reset();
    expect(await polled(fakeWriter(v2, rec), null, false).write([healthQueued(), sessionsQueued()])).toEqual(new Set());
    expect(v2.requests).toEqual([]);
  });
});
