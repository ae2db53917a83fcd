/**
 * The store writer on real SQLite files in a temp folder: each kind lands in its table with the
 * right values, a redelivered batch adds no row and no count, presence runs, the host-to-server
 * mapping, and the opening rules (WAL, incremental auto-vacuum, the schema version). Times are
 * relative to the run's now.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { QueuedEvent } from '../../../shared/queue/events.js';
import { StoreOpenError } from '../../../shared/store/database.js';
import { STORE_SCHEMA_VERSION } from '../../../shared/store/ddl.js';
import { StoreWriter } from '../../../shared/store/writer.js';
import { auditQueued } from '../../support/audit.js';
import { DOC_NAMES, healthQueued, healthSample, sessionSample, sessionsQueued } from '../destinations/polled.js';
import {
  ENGINE,
  logQueued,
  PROXY,
  QIX_PERF_USER,
  REPOSITORY,
  START_SESSION,
  userQueued,
} from '../platform/fixtures.js';

const POLL_MS = 30_000;
let folder: string;
let writer: StoreWriter;

/** A §0.3 point time at `ms` with discriminator `n`. */
const ns = (ms: number, n = 0) => String(BigInt(ms) * 1_000_000n + BigInt(n));

function newWriter(): StoreWriter {
  return new StoreWriter({
    path: join(folder, 'sub', 'svc.db'),
    servers: [{ serverName: 'Node1', host: 'plat-n1.lab.local:4747', serverDescription: 'Central node' }],
    sessionPollMs: POLL_MS,
    upkeep: { retentionDays: 30, rawHealthHours: 48, maxSizeMB: 0 },
  });
}

/** A read-only second connection, as the read API opens the file. */
function reader(): DatabaseSync {
  return new DatabaseSync(join(folder, 'sub', 'svc.db'), { readOnly: true });
}

function rows(sql: string, ...params: (string | number)[]): Record<string, unknown>[] {
  const db = reader();
  try {
    return db.prepare(sql).all(...params);
  } finally {
    db.close();
  }
}

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'svc-store-'));
  writer = newWriter();
  writer.open();
});

afterEach(() => {
  writer.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('opening', () => {
  it('creates the folder, WAL, incremental auto-vacuum and the schema version', () => {
    const db = reader();
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    expect(db.prepare('PRAGMA auto_vacuum').get()).toEqual({ auto_vacuum: 2 });
    expect(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({
      value: String(STORE_SCHEMA_VERSION),
    });
    db.close();
  });

  it('opens a database of the same version again, and refuses a newer one naming the file', () => {
    writer.close();
    const again = newWriter();
    again.open();
    again.close();
    const db = new DatabaseSync(join(folder, 'sub', 'svc.db'));
    db.prepare("UPDATE meta SET value = ? WHERE key = 'schema_version'").run(String(STORE_SCHEMA_VERSION + 1));
    db.close();
    const newer = newWriter();
    expect(() => newer.open()).toThrow(StoreOpenError);
    expect(() => newer.open()).toThrow(/svc\.db has schema version 2, written by a newer Svc/);
    writer = newWriter();
    // afterEach closes `writer`: give it a database it can open.
    rmSync(join(folder, 'sub'), { recursive: true });
    writer.open();
  });
});

describe('each kind in its table', () => {
  it('a health sample: every §6.1 field, the doc names as JSON, its server with tags', () => {
    const now = Date.now();
    writer.write([healthQueued(healthSample({ docNames: DOC_NAMES }), ns(now, 1), 'h1')]);
    const [row] = rows(
      'SELECT version, uptime, mem_committed, mem_free, apps_active, apps_in_memory, apps_calls, cpu_total, session_active, users_total, cache_hits, cache_bytes_added, saturated, docs FROM health',
    );
    expect(row).toMatchObject({
      version: '12.1306.0',
      uptime: '0 days, 1h 00m 18s',
      mem_committed: 4213.6,
      mem_free: 27890.4,
      apps_active: 1,
      apps_in_memory: 2,
      apps_calls: 15234,
      cpu_total: 7.5,
      session_active: 3,
      users_total: 9,
      cache_hits: 1290,
      cache_bytes_added: 52428800,
      saturated: 0,
    });
    expect(JSON.parse(String(row?.docs))).toEqual(DOC_NAMES);
    expect(rows('SELECT name, host, description, tags, first_seen_ms, last_seen_ms FROM servers')).toEqual([
      {
        name: 'Node1',
        host: 'node1.lab.local',
        description: 'Central node',
        tags: JSON.stringify({ host: 'node1.lab.local', server_name: 'Node1', server_description: 'Central node' }),
        first_seen_ms: now,
        last_seen_ms: now,
      },
    ]);
  });

  it('log events: columns, upper-case level, short source, category JSON, the rest as JSON, free text, hourly counts', () => {
    const now = Date.now();
    const events = [
      logQueued({ ...PROXY, level: 'warn' }, ns(now, 1), 'l1'),
      logQueued(REPOSITORY, ns(now, 2), 'l2'),
      logQueued(ENGINE, ns(now, 3), 'l3'),
    ];
    const first = writer.write(events);
    expect(first).toMatchObject({ inserted: 3, duplicates: 0 });
    const proxy = rows(
      "SELECT level, subsystem, message, exception, category, user_full, rest FROM log_events WHERE source = 'proxy'",
    )[0];
    expect(proxy).toMatchObject({
      level: 'WARN',
      subsystem: PROXY.subsystem,
      message: PROXY.message,
      exception: '',
      category: JSON.stringify(PROXY.category),
      user_full: 'LAB\\kalle',
    });
    expect(JSON.parse(String(proxy?.rest))).toMatchObject({ command: 'Login', result_code: '403', host: 'PLAT-N1' });
    expect(
      rows(
        "SELECT l.source FROM log_events_fts f JOIN log_events l ON l.time_ns = f.rowid WHERE log_events_fts MATCH 'WebException'",
      ),
    ).toEqual([{ source: 'repository' }]);
    const counts = () => rows('SELECT source, level, category, count FROM log_counts_hourly ORDER BY source, category');
    // Every event counts in its '' row, and in the row of each category it has.
    expect(counts()).toEqual([
      { source: 'engine', level: 'WARN', category: '', count: 1 },
      { source: 'proxy', level: 'WARN', category: '', count: 1 },
      { source: 'proxy', level: 'WARN', category: 'qs_log_category=access-denied', count: 1 },
      { source: 'repository', level: 'ERROR', category: '', count: 1 },
    ]);
    // The same delivery again: no row, no count, no second index entry.
    expect(writer.write(events)).toMatchObject({ inserted: 0, duplicates: 3 });
    expect(rows('SELECT count(*) AS n FROM log_events')).toEqual([{ n: 3 }]);
    expect(counts().map((c) => c.count)).toEqual([1, 1, 1, 1]);
    expect(rows("SELECT count(*) AS n FROM log_events_fts WHERE log_events_fts MATCH 'WebException'")).toEqual([
      { n: 1 },
    ]);
  });

  it('engine performance: perf_events and the hourly rollup with its histogram, counted once', () => {
    const now = Date.now();
    const events = [
      logQueued(QIX_PERF_USER, ns(now, 1), 'p1'),
      logQueued({ ...QIX_PERF_USER, process_time: 3 }, ns(now, 2), 'p2'),
    ];
    writer.write(events);
    writer.write(events);
    expect(rows('SELECT count(*) AS n FROM perf_events')).toEqual([{ n: 2 }]);
    expect(rows('SELECT count(*) AS n FROM log_events')).toEqual([{ n: 0 }]);
    const [hour] = rows(
      'SELECT app_name, object_id, object_type, method, count, total_ms, max_ms, hist FROM perf_hourly',
    );
    expect(hour).toMatchObject({
      app_name: 'Sales dashboard',
      object_id: 'hXbRtP',
      object_type: 'barchart',
      method: 'GenericObject::GetLayout',
      count: 2,
      total_ms: 415.5,
      max_ms: 412.5,
    });
    const hist = JSON.parse(String(hour?.hist)) as number[];
    expect(hist.reduce((a, b) => a + b, 0)).toBe(2);
    expect(hist[2]).toBe(1); // 3 ms: the ≤ 5 ms bucket
    expect(hist[8]).toBe(1); // 412.5 ms: the ≤ 500 ms bucket
  });

  it('user events, with the host mapped to the configured server of that host', () => {
    const now = Date.now();
    writer.write([userQueued({ ...START_SESSION, host: 'PLAT-N1.lab.local' }, ns(now, 1), 'u1')]);
    writer.write([userQueued({ ...START_SESSION, host: 'other-host' }, ns(now, 2), 'u2')]);
    expect(
      rows(
        'SELECT s.name, e.command, e.user_full FROM user_events e JOIN servers s ON s.id = e.server_id ORDER BY e.time_ns',
      ),
    ).toEqual([
      { name: 'Node1', command: START_SESSION.command, user_full: START_SESSION.user_full },
      { name: 'other-host', command: START_SESSION.command, user_full: START_SESSION.user_full },
    ]);
  });

  it('audit events by their id, whatever their destination settings say', () => {
    const event = auditQueued({
      type: 'object.view.duration',
      payload: {
        context: { appId: 'A1B2', sheetId: 's1', user: 'UserDirectory=LAB; UserId=goran' },
        event: { objectId: 'o1', duration: 12.5 },
      },
    });
    writer.write([event]);
    writer.write([event]);
    expect(rows('SELECT id, type, app_id, sheet_id, object_id, user_id, duration_ms FROM audit_events')).toEqual([
      {
        id: event.id,
        type: 'object.view.duration',
        app_id: 'a1b2',
        sheet_id: 's1',
        object_id: 'o1',
        user_id: 'UserDirectory=LAB; UserId=goran',
        duration_ms: 12.5,
      },
    ]);
  });

  it('session samples and presence runs: extended within 2.5 polls, a new run after a longer gap, a redelivery changes nothing', () => {
    const t0 = Date.now() - 10 * POLL_MS;
    const sample = (ms: number, users: string, id: string) =>
      sessionsQueued(sessionSample({ userIdList: users }), ns(ms, 5), id);
    const first: QueuedEvent[] = [sample(t0, 'LAB\\goran,LAB\\anna', 's1')];
    writer.write(first);
    writer.write([sample(t0 + 2 * POLL_MS, 'LAB\\goran', 's2')]);
    writer.write([sample(t0 + 5 * POLL_MS, 'LAB\\goran,LAB\\anna', 's3')]);
    writer.write(first);
    expect(rows('SELECT virtual_proxy, sessions, users, user_list FROM session_samples ORDER BY time_ns')).toEqual([
      { virtual_proxy: '/hdr', sessions: 2, users: 2, user_list: 'LAB\\goran,LAB\\anna' },
      { virtual_proxy: '/hdr', sessions: 2, users: 1, user_list: 'LAB\\goran' },
      { virtual_proxy: '/hdr', sessions: 2, users: 2, user_list: 'LAB\\goran,LAB\\anna' },
    ]);
    expect(rows('SELECT user_full, start_ms, end_ms FROM session_presence ORDER BY user_full, start_ms')).toEqual([
      { user_full: 'LAB\\anna', start_ms: t0, end_ms: t0 },
      { user_full: 'LAB\\anna', start_ms: t0 + 5 * POLL_MS, end_ms: t0 + 5 * POLL_MS },
      { user_full: 'LAB\\goran', start_ms: t0, end_ms: t0 + 2 * POLL_MS },
      { user_full: 'LAB\\goran', start_ms: t0 + 5 * POLL_MS, end_ms: t0 + 5 * POLL_MS },
    ]);
  });

  it('an event with a bad point time is rejected alone; the rest of the delivery is written', () => {
    const now = Date.now();
    const result = writer.write([logQueued(PROXY, 'not-a-time', 'bad'), logQueued(PROXY, ns(now, 9), 'good')]);
    expect([...result.rejected.keys()]).toEqual(['bad']);
    expect(rows('SELECT count(*) AS n FROM log_events')).toEqual([{ n: 1 }]);
  });

  it('a store folder removed under a running writer is created again at the next delivery, which lands in it', () => {
    const now = Date.now();
    writer.write([logQueued(PROXY, ns(now, 1), 'before')]);
    rmSync(join(folder, 'sub'), { recursive: true });
    expect(writer.write([logQueued(PROXY, ns(now, 2), 'after')])).toMatchObject({ inserted: 1 });
    expect(rows('SELECT count(*) AS n FROM log_events')).toEqual([{ n: 1 }]);
    expect(rows('PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
  });

  it('a delivery in slices: the event loop runs between them, and a delivery again after a partial write adds no row and no count', async () => {
    const now = Date.now();
    const events = Array.from({ length: 250 }, (_, i) =>
      logQueued({ ...PROXY, message: `slice ${i}` }, ns(now - 1000 + i, i), `s-${i}`),
    );
    // As if Svc died after the first slices were committed: some of the delivery is in already.
    await writer.writeInSlices(events.slice(0, 120), 100);
    const order: string[] = [];
    const pending = writer.writeInSlices(events, 100).then((result) => {
      order.push('written');
      return result;
    });
    setImmediate(() => order.push('event loop'));
    expect(await pending).toMatchObject({ inserted: 130, duplicates: 120 });
    expect(order).toEqual(['event loop', 'written']);
    expect(rows('SELECT count(*) AS n FROM log_events')).toEqual([{ n: 250 }]);
    expect(rows("SELECT sum(count) AS n FROM log_counts_hourly WHERE category = ''")).toEqual([{ n: 250 }]);
  });

  it('Svc counters: one row per name and labels at a sample time', () => {
    writer.writeCounters(1000, [{ name: 'received', labels: { listener: 'log_events' }, value: 7 }]);
    writer.writeCounters(1000, [{ name: 'received', labels: { listener: 'log_events' }, value: 8 }]);
    expect(rows('SELECT * FROM svc_counters')).toEqual([
      { time_ms: 1000, name: 'received', labels: '{"listener":"log_events"}', value: 8 },
    ]);
  });
});
