/**
 * The read API's queries on a generated store use the tables' keys and indexes: every statement they
 * prepare is run through EXPLAIN QUERY PLAN, and none may scan an event or rollup table whole (the
 * small `servers` table and the JSON functions' virtual tables may be scanned). The queries are run
 * with every filter, so each variant of their SQL is planned.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { generateHistory } from '../../../edge-agent/simulate/history.js';
import { auditCounts, auditEvents } from '../../../shared/store/queries/audit.js';
import { preparedSql } from '../../../shared/store/queries/common.js';
import { logCounts, logEvents } from '../../../shared/store/queries/log-events.js';
import { performanceTop } from '../../../shared/store/queries/performance.js';
import { health, servers } from '../../../shared/store/queries/servers.js';
import { userEvents, userSessions } from '../../../shared/store/queries/sessions.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-plans-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BIG_TABLES =
  /^SCAN (health|health_5m|session_samples|sessions_5m|session_presence|user_events|log_events|log_counts_hourly|perf_events|perf_hourly|audit_events)\b/;

describe('read API query plans', () => {
  it('never scans a whole event or rollup table', () => {
    const now = Date.now();
    const path = join(dir, 'svc.db');
    generateHistory({ path, now, days: 2, servers: 2, rawHealthHours: 12, seed: 2 });
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      const hours = (count: number) => ({ from: now - count * 3_600_000, to: now });
      for (const range of [hours(1), hours(10), hours(47)]) {
        servers(db, range);
        health(db, { range, server: 'node1' });
        for (const filters of [
          {},
          {
            levels: ['ERROR'],
            sources: ['engine'],
            servers: ['node1'],
            categories: [{ name: 'qs_log_category', value: 'reload' }, { name: 'qs_log_category' }],
            apps: ['a0000000-0000-4000-8000-000000000000'],
          },
          { words: ['reload'] },
        ]) {
          logEvents(db, { range, filters, limit: 10 });
          for (const by of ['level', 'category'] as const) logCounts(db, { range, by, filters });
        }
        userSessions(db, { range, filters: {}, limit: 10 });
        userSessions(db, {
          range,
          filters: { servers: ['node1'], virtualProxies: ['/'], users: ['CORP\\user001'] },
          limit: 10,
        });
        userEvents(db, { range, filters: {}, limit: 10 });
        userEvents(db, { range, filters: { servers: ['node1'], users: ['CORP\\user001'], apps: ['x'] }, limit: 10 });
        for (const by of ['app', 'object', 'method'] as const) {
          performanceTop(db, { range, by, order: 'total', filters: {}, limit: 10 });
          performanceTop(db, {
            range,
            by,
            order: 'p95',
            filters: { servers: ['node1'], apps: ['x'], users: ['y'] },
            limit: 10,
          });
        }
        auditEvents(db, { range, filters: {}, limit: 10 });
        auditEvents(db, { range, filters: { types: ['t'], apps: ['a'], sheets: ['s'], users: ['u'] }, limit: 10 });
        for (const by of ['type', 'app', 'sheet', 'user'] as const) auditCounts(db, { range, by, filters: {} });
      }
      const statements = preparedSql(db);
      expect(statements.length).toBeGreaterThan(30);
      const scans = statements.flatMap((sql) =>
        db
          .prepare(`EXPLAIN QUERY PLAN ${sql}`)
          .all()
          .map((step) => String(step['detail']))
          .filter((detail) => BIG_TABLES.test(detail))
          .map((detail) => `${detail}  ←  ${sql.replace(/\s+/g, ' ').slice(0, 120)}`),
      );
      expect(scans).toEqual([]);
    } finally {
      db.close();
    }
  });
});
