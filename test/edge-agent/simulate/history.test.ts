/**
 * The history generator on a real store file: its rollups agree exactly with its events (log counts
 * per hour, engine performance per hour), every table gets rows, health is raw for the raw hours and
 * rolled up before, user events match the presence runs, and the same seed gives the same store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { generateHistory } from '../../../edge-agent/simulate/history.js';
import { HOUR_MS } from '../../../shared/store/ddl.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-history-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NOW = Math.floor(Date.now() / 1000) * 1000;
const options = { now: NOW, days: 3, servers: 2, rawHealthHours: 24, seed: 7 };

function scalar(db: DatabaseSync, sql: string): number {
  const row = db.prepare(sql).get();
  return Number(row?.['n']);
}

describe('generateHistory', () => {
  const path = join(dir, 'a.db');
  const counts = generateHistory({ path, ...options });
  const db = new DatabaseSync(path, { readOnly: true });
  afterAll(() => db.close());

  it('writes every table and reports what it wrote', () => {
    for (const table of [
      'health',
      'health_5m',
      'session_samples',
      'sessions_5m',
      'session_presence',
      'user_events',
      'log_events',
      'log_counts_hourly',
      'perf_events',
      'perf_hourly',
      'audit_events',
    ]) {
      expect(counts[table], table).toBeGreaterThan(0);
      expect(scalar(db, `SELECT count(*) AS n FROM ${table}`), table).toBe(counts[table]);
    }
    expect(scalar(db, 'SELECT count(*) AS n FROM servers')).toBe(2);
  });

  it('keeps raw health for the raw hours and 5-minute rollups before, all within the days', () => {
    const rawFrom = NOW - 24 * HOUR_MS;
    expect(scalar(db, `SELECT min(time_ns / 1000000) AS n FROM health`)).toBeGreaterThanOrEqual(rawFrom);
    expect(scalar(db, `SELECT max(time_ns / 1000000) AS n FROM health`)).toBeLessThan(NOW);
    expect(scalar(db, `SELECT max(bucket_ms) AS n FROM health_5m`)).toBeLessThan(rawFrom);
    expect(scalar(db, `SELECT min(bucket_ms) AS n FROM health_5m`)).toBeGreaterThanOrEqual(NOW - 3 * 24 * HOUR_MS);
  });

  it('counts the log events exactly in log_counts_hourly (the "" row: every event; one row per category)', () => {
    const byHour = db
      .prepare(
        `SELECT (time_ns / 1000000 / ${HOUR_MS}) * ${HOUR_MS} AS hour, server_id, source, level, count(*) AS n
         FROM log_events GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`,
      )
      .all();
    const rolled = db
      .prepare(
        `SELECT hour_ms AS hour, server_id, source, level, count AS n FROM log_counts_hourly WHERE category = ''
         ORDER BY 1, 2, 3, 4`,
      )
      .all();
    expect(rolled).toEqual(byHour);
    const categorised = scalar(db, `SELECT count(*) AS n FROM log_events, json_each(log_events.category)`);
    expect(scalar(db, `SELECT sum(count) AS n FROM log_counts_hourly WHERE category <> ''`)).toBe(categorised);
    expect(scalar(db, `SELECT count(*) AS n FROM log_events WHERE level = 'ERROR' AND exception = ''`)).toBe(0);
  });

  it('indexes each log event once in the FTS table (its integrity check against log_events passes)', () => {
    const writable = new DatabaseSync(path);
    try {
      // rank 1: compare the index with the content table, so a row indexed twice or never fails.
      expect(() =>
        writable.exec("INSERT INTO log_events_fts (log_events_fts, rank) VALUES ('integrity-check', 1)"),
      ).not.toThrow();
    } finally {
      writable.close();
    }
  });

  it('finds log events by a word of the vocabulary through the FTS table', () => {
    const found = scalar(db, `SELECT count(*) AS n FROM log_events_fts WHERE log_events_fts MATCH '"certificate"'`);
    expect(found).toBe(scalar(db, `SELECT count(*) AS n FROM log_events WHERE message LIKE '%certificate%'`));
    expect(found).toBeGreaterThan(0);
  });

  it('sums engine performance exactly in perf_hourly, with histograms that count every event', () => {
    expect(scalar(db, 'SELECT sum(count) AS n FROM perf_hourly')).toBe(counts['perf_events']);
    expect(scalar(db, 'SELECT sum(value) AS n FROM perf_hourly, json_each(perf_hourly.hist)')).toBe(
      counts['perf_events'],
    );
    const total = scalar(db, 'SELECT sum(process_time) AS n FROM perf_events');
    expect(scalar(db, 'SELECT sum(total_ms) AS n FROM perf_hourly')).toBeCloseTo(total, 3);
    const apps = db
      .prepare('SELECT app_name, sum(process_time) AS total FROM perf_events GROUP BY 1 ORDER BY 2 DESC')
      .all()
      .map((row) => row['app_name']);
    expect(apps[0]).toBe('Sales Dashboard');
  });

  it('writes a Start and a Stop session user event per presence run', () => {
    expect(counts['user_events']).toBe(2 * (counts['session_presence'] ?? 0));
    expect(
      scalar(
        db,
        `SELECT count(*) AS n FROM session_presence p WHERE NOT EXISTS (SELECT 1 FROM user_events e
           WHERE e.user_full = p.user_full AND e.command = 'Start session' AND e.time_ns / 1000000 = p.start_ms)`,
      ),
    ).toBe(0);
  });

  it('makes the same store for the same seed, and another for another seed', () => {
    const again = generateHistory({ path: join(dir, 'b.db'), ...options });
    expect(again).toEqual(counts);
    const other = generateHistory({ path: join(dir, 'c.db'), ...options, seed: 8 });
    expect(other['log_events']).not.toBe(counts['log_events']);
  });
});
