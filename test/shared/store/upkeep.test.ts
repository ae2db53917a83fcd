/**
 * The store's upkeep on a real SQLite file, with its clock injected (`nowMs`) and every fixture time
 * relative to the run's now: rollups of raw samples older than rawHealthHours into 5-minute
 * min/mean/max, retention by retentionDays across the tables, and the size cap (oldest first, the
 * file shrinks).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAlertStore } from '../../../shared/alerts/store.js';
import type { QueuedEvent } from '../../../shared/queue/events.js';
import { HOUR_MS, ROLLUP_BUCKET_MS } from '../../../shared/store/ddl.js';
import { storeBytes, type UpkeepSettings } from '../../../shared/store/upkeep.js';
import { StoreWriter } from '../../../shared/store/writer.js';
import { auditQueued } from '../../support/audit.js';
import { alertRecord } from '../alerts/fixtures.js';
import { healthBody, healthQueued, healthSample, sessionSample, sessionsQueued } from '../destinations/polled.js';
import { logQueued, PROXY, QIX_PERF_USER, REPOSITORY } from '../platform/fixtures.js';

const DAY_MS = 24 * HOUR_MS;
let folder: string;
let file: string;
let writer: StoreWriter;

const ns = (ms: number, n = 0) => String(BigInt(ms) * 1_000_000n + BigInt(n));

function open(upkeep: UpkeepSettings): StoreWriter {
  writer?.close();
  writer = new StoreWriter({ path: file, servers: [], sessionPollMs: 30_000, upkeep });
  writer.open();
  return writer;
}

function rows(sql: string): Record<string, unknown>[] {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}
const count = (table: string) => Number(rows(`SELECT count(*) AS n FROM ${table}`)[0]?.n);

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'svc-store-upkeep-'));
  file = join(folder, 'svc.db');
});

afterEach(() => {
  writer.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('store upkeep', () => {
  it('rolls raw health and session samples older than rawHealthHours into 5-minute min/mean/max, and deletes them', () => {
    const now = Date.now();
    open({ retentionDays: 30, rawHealthHours: 2, maxSizeMB: 0 });
    // Three samples in one old bucket (3 h ago), one recent sample.
    const old = Math.floor((now - 3 * HOUR_MS) / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS;
    const cpu = [10, 20, 60];
    const events: QueuedEvent[] = cpu.map((total, i) =>
      healthQueued(
        healthSample({
          body: healthBody({
            cpu: { total },
            cache: { hits: 100 + i, lookups: 200 + i, added: 0, replaced: 0, bytes_added: 0 },
          }),
        }),
        ns(old + i * 60_000, i),
        `old-${i}`,
      ),
    );
    events.push(healthQueued(healthSample(), ns(now - 60_000, 9), 'recent'));
    events.push(
      ...[2, 4].map((n, i) =>
        sessionsQueued(
          sessionSample({ sessions: sessionSample().sessions.slice(0, n / 2), userIdList: 'LAB\\goran' }),
          ns(old + i * 60_000, 20 + i),
          `s-${i}`,
        ),
      ),
    );
    writer.write(events);
    const report = writer.upkeep(now);
    expect(report.rolledUp).toBe(5);
    expect(count('health')).toBe(1);
    expect(count('session_samples')).toBe(0);
    expect(rows('SELECT bucket_ms, samples, cpu_min, cpu_mean, cpu_max, cache_hits_last FROM health_5m')).toEqual([
      { bucket_ms: old, samples: 3, cpu_min: 10, cpu_mean: 30, cpu_max: 60, cache_hits_last: 102 },
    ]);
    expect(
      rows('SELECT bucket_ms, samples, sessions_min, sessions_mean, sessions_max, users_max FROM sessions_5m'),
    ).toEqual([{ bucket_ms: old, samples: 2, sessions_min: 1, sessions_mean: 1.5, sessions_max: 2, users_max: 1 }]);
    // A late raw sample of the same bucket (a redelivery after the rollup) is merged into its row.
    writer.write([
      healthQueued(healthSample({ body: healthBody({ cpu: { total: 90 } }) }), ns(old + 3 * 60_000, 3), 'late'),
    ]);
    writer.upkeep(now);
    expect(rows('SELECT samples, cpu_min, cpu_mean, cpu_max FROM health_5m')).toEqual([
      { samples: 4, cpu_min: 10, cpu_mean: 45, cpu_max: 90 },
    ]);
  });

  it('deletes everything older than retentionDays from every table, presence by its end', () => {
    const now = Date.now();
    open({ retentionDays: 2, rawHealthHours: 720, maxSizeMB: 0 });
    const at = (ms: number, n: number): QueuedEvent[] => [
      healthQueued(healthSample(), ns(ms, n), `h${n}`),
      sessionsQueued(sessionSample({ userIdList: 'LAB\\goran' }), ns(ms, n + 1), `s${n}`),
      logQueued(REPOSITORY, ns(ms, n + 2), `l${n}`),
      logQueued(QIX_PERF_USER, ns(ms, n + 3), `p${n}`),
    ];
    writer.write([...at(now - 3 * DAY_MS, 0), ...at(now - DAY_MS, 10)]);
    writer.write([auditQueued({ timestamp: new Date(now - 3 * DAY_MS).toISOString() }), auditQueued()]);
    writer.writeCounters(now - 3 * DAY_MS, [{ name: 'received', labels: {}, value: 1 }]);
    writer.writeCounters(now, [{ name: 'received', labels: {}, value: 2 }]);
    const tables = [
      'health',
      'session_samples',
      'session_presence',
      'log_events',
      'log_counts_hourly',
      'perf_events',
      'perf_hourly',
      'audit_events',
      'svc_counters',
    ];
    for (const table of tables) expect(count(table), table).toBe(2);
    const report = writer.upkeep(now);
    expect(report.expired).toBe(tables.length);
    for (const table of tables) expect(count(table), table).toBe(1);
    expect(rows("SELECT count(*) AS n FROM log_events_fts WHERE log_events_fts MATCH 'alive'")).toEqual([{ n: 1 }]);
  });

  it('prunes the alerts tables in the retention step: old history, ended silences, deliveries of alerts no longer active, resolutions never told', () => {
    const now = Date.now();
    open({ retentionDays: 2, rawHealthHours: 720, maxSizeMB: 0 });
    // The alerts' store writes the same file through a connection of its own, as the engine does.
    const alerts = openAlertStore(file);
    try {
      const active = alertRecord('node1', now - 3 * DAY_MS);
      const gone = alertRecord('node2', now - 3 * DAY_MS);
      alerts.applyTransitions({ at: now - 3 * DAY_MS, active: [active, gone], fired: [active, gone], resolved: [] });
      alerts.applyTransitions({ at: now, active: [active], fired: [], resolved: [gone] });
      alerts.setDeliveries([
        { fingerprint: active.fingerprint, channel: 'ops', status: 'firing', sentAt: now - 3 * DAY_MS },
        { fingerprint: gone.fingerprint, channel: 'ops', status: 'firing', sentAt: now - 3 * DAY_MS },
      ]);
      // Resolutions still to tell: one older than the retention, one of now.
      const old = alertRecord('node3', now - 4 * DAY_MS);
      alerts.saveResolutions([
        { record: old, resolvedAt: now - 3 * DAY_MS },
        { record: gone, resolvedAt: now },
      ]);
      const silence = { rule: null, matchers: { server: 'node1' }, createdBy: 'ops', comment: '' };
      alerts.addSilence({ ...silence, startsAt: now - 4 * DAY_MS, endsAt: now - 3 * DAY_MS });
      alerts.addSilence({ ...silence, startsAt: now - 4 * DAY_MS, endsAt: now + DAY_MS });
    } finally {
      alerts.close();
    }
    const report = writer.upkeep(now);
    expect(report.expired).toBe(2 + 1 + 1 + 1);
    expect(rows('SELECT event FROM alert_history')).toEqual([{ event: 'resolved' }]);
    expect(count('alert_resolved')).toBe(1);
    expect(count('alert_silences')).toBe(1);
    expect(count('alert_deliveries')).toBe(1);
    expect(count('alert_state')).toBe(1);
  });

  it('above maxSizeMB deletes the oldest hours first until it fits, and the file shrinks', () => {
    const now = Date.now();
    open({ retentionDays: 30, rawHealthHours: 720, maxSizeMB: 0 });
    // About 3 MB of log events over 10 hours, each message unique and incompressible enough.
    const hours = 10;
    const perHour = 600;
    for (let h = 0; h < hours; h++) {
      const start = now - (hours - h) * HOUR_MS;
      const events = Array.from({ length: perHour }, (_, i) =>
        logQueued(
          { ...PROXY, message: `event ${h}-${i} ${'x'.repeat(300)} ${Math.random()}` },
          ns(start + i * 1000, i),
          `l-${h}-${i}`,
        ),
      );
      writer.write(events);
    }
    const before = storeBytes(file);
    expect(before).toBeGreaterThan(2 * 1024 * 1024);
    // 2 MB, not 1: an hour of these events and the empty tables (the alerts' among them) take about 1 MB,
    // so a 1 MB cap left no whole hour.
    open({ retentionDays: 30, rawHealthHours: 720, maxSizeMB: 2 });
    const report = writer.upkeep(now);
    const after = statSync(file).size;
    expect(after).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(after).toBeLessThan(before);
    expect(report.capped).toBeGreaterThan(0);
    // What is left is the newest: nothing older than the first hour kept, the newest hour whole.
    const kept = rows('SELECT min(time_ns / 1000000) AS oldest, max(time_ns / 1000000) AS newest FROM log_events')[0];
    expect(Number(kept?.oldest)).toBeGreaterThanOrEqual(Number(report.keptFromMs));
    expect(Number(kept?.newest)).toBe(now - HOUR_MS + (perHour - 1) * 1000);
    expect(count('log_events')).toBeLessThan(hours * perHour);
  });
});
