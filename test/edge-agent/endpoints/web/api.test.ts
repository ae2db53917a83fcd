/**
 * The read API under /api/v1/ over real HTTP, on the real web view as compose.ts builds it, reading
 * a real store file filled by the history generator (3 days of 2 servers, 24 raw hours) plus a few
 * planted rows: every parameter of every endpoint, bad input (each 400 names its parameter), paging
 * through a whole range (each row once, also with rows added between pages), q found by a word and
 * not by an absent one, raw samples against rollups, the counts against the rows, no secret of the
 * config in any answer, the empty store (the file made while Svc runs), the store off, a failing
 * query (500 with no internal text, logged), the headers, and the web view's rate limit.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Observed } from '../../../../edge-agent/endpoints/observed.js';
import { webView } from '../../../../edge-agent/endpoints/web/compose.js';
import { CONTENT_SECURITY_POLICY, type WebView } from '../../../../edge-agent/endpoints/web/server.js';
import { generateHistory } from '../../../../edge-agent/simulate/history.js';
import { MASK } from '../../../../shared/config/mask.js';
import { ErrorTracker } from '../../../../shared/errors/tracker.js';
import { ANSWERS } from '../../../../shared/store/api-types.js';
import { HOUR_MS } from '../../../../shared/store/ddl.js';
import { captureLog } from '../../../support/audit.js';
import { REPO_ROOT } from '../../../support/build.js';
import { type Answer, fetchFrom } from '../../../support/http-from.js';
import { freePort, LOOPBACK, until } from '../../../support/ports.js';
import { svcConfig } from '../../../support/udp.js';
import { secretConfigLines } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-api-'));
const NOW = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();
const PLANTED_MS = NOW - 10 * 60_000;
const PLANTED_MESSAGE = 'zebracorn appeared near MARKER-TSDB-PASSWORD while reloading';
const PLANTED_CATEGORY = [{ name: 'qs_log_category', value: 'planted' }];

interface View {
  view: WebView;
  base: string;
  /** What Svc logged: pino's JSON lines (level 'warn', 'error', …). */
  lines: () => Record<string, unknown>[];
}

/** A web view as compose.ts makes it (the config holds the secret markers), on a free port. */
async function startView(store: string): Promise<View> {
  const port = await freePort();
  const config = svcConfig([
    `  configVisualisation: {enable: true, host: ${LOOPBACK}, port: ${port}}`,
    `  store: ${store}`,
    ...secretConfigLines(await freePort()),
  ]);
  const logged = await captureLog('info');
  const parts = webView(
    {
      config,
      configFile: 'test.yaml',
      logger: logged.logger,
      errors: new ErrorTracker({ enabled: false, log: logged.logger }),
    },
    { observed: new Observed(), mode: 'edge', installDir: REPO_ROOT },
  );
  if (!parts) throw new Error('the web view is off');
  await parts.component.start();
  return { view: parts.component, base: `http://${LOOPBACK}:${parts.component.port}/api/v1`, lines: logged.lines };
}

const storePath = join(dir, 'svc.db');
let main: View;

/** A writable connection to the test's store (the writer's stand-in: the reader must see its commits). */
function writer(): DatabaseSync {
  return new DatabaseSync(storePath);
}

function plantLogEvent(
  db: DatabaseSync,
  ms: number,
  message: string,
  extra: { exception?: string; rest?: string; category?: readonly object[] } = {},
): void {
  const time = BigInt(ms) * 1_000_000n + 999_999n;
  const server = db.prepare("SELECT id FROM servers WHERE name = 'node1'").get();
  db.prepare('INSERT INTO log_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
    time,
    Number(server?.['id']),
    'engine',
    'ERROR',
    'Engine.Planted',
    message,
    extra.exception ?? '',
    JSON.stringify(extra.category ?? []),
    '',
    '',
    '',
    '',
    extra.rest ?? '{}',
  );
}

beforeAll(async () => {
  generateHistory({ path: storePath, now: NOW, days: 3, servers: 2, rawHealthHours: 24, seed: 3 });
  const db = writer();
  plantLogEvent(db, PLANTED_MS, PLANTED_MESSAGE, {
    exception: 'System.Exception: token MARKER-AUDIT-API-TOKEN refused',
    rest: JSON.stringify({ command_line: 'svc --password MARKER-MONSAAS-INSERT-KEY' }),
    category: PLANTED_CATEGORY,
  });
  db.close();
  main = await startView(`{enable: true, path: ${JSON.stringify(storePath)}, retentionDays: 30}`);
}, 60_000);
afterAll(async () => {
  await main?.view.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function getJson(
  path: string,
  from?: string,
): Promise<{ status: number; json: Record<string, unknown>; answer: Answer }> {
  const answer = await fetchFrom(`${main.base}/${path}`, from ? { from } : {});
  const parsed: unknown = JSON.parse(answer.body);
  if (typeof parsed !== 'object' || parsed === null) throw new Error(`not a JSON object: ${answer.body}`);
  return { status: answer.status, json: { ...parsed }, answer };
}

/** The 200 answer of a path (fails the test with the body otherwise). */
async function ok<T>(path: string): Promise<T> {
  const { status, answer } = await getJson(path);
  expect(status, answer.body.slice(0, 300)).toBe(200);
  const parsed: T = JSON.parse(answer.body);
  return parsed;
}

/** Expects a 400 naming `parameter`. */
async function bad(path: string, parameter: string): Promise<string> {
  const { status, json } = await getJson(path);
  expect(status, `${path}: ${JSON.stringify(json)}`).toBe(400);
  expect(json).toMatchObject({ error: 'bad_request', parameter });
  expect(String(json['message'])).toContain(parameter);
  return String(json['message']);
}

const range = (fromMs: number, toMs = NOW + 60_000) => `from=${iso(fromMs)}&to=${iso(toMs)}`;
/** The range most tests read: the generated 3 days but their first minute (so `from` is inside the store). */
const DAY3_FROM = NOW - 3 * 24 * HOUR_MS + 60_000;
const DAY3 = range(DAY3_FROM);
/** DAY3's bounds as point times, for counting rows in it. */
const DAY3_NS = [BigInt(DAY3_FROM) * 1_000_000n, BigInt(NOW + 60_000) * 1_000_000n + 999_999n] as const;

function scalar(sql: string, ...values: (string | number | bigint)[]): number {
  const db = new DatabaseSync(storePath, { readOnly: true });
  try {
    return Number(db.prepare(sql).get(...values)?.['n']);
  } finally {
    db.close();
  }
}

interface EventList {
  events: {
    id: string;
    timeMs: number;
    level: string;
    source: string;
    server: string;
    message: string;
    category: unknown[];
  }[];
  nextCursor: string | null;
}

describe('read API: common rules', () => {
  it('answers JSON with no-store and the web view security headers; HEAD has no body', async () => {
    const { answer } = await getJson('servers');
    expect(answer.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
    });
    const head = await fetchFrom(`${main.base}/servers`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('refuses other methods with 405 and an Allow header', async () => {
    const answer = await fetchFrom(`${main.base}/log-events`, { method: 'POST' });
    expect(answer.status).toBe(405);
    expect(answer.headers['allow']).toBe('GET, HEAD');
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'method_not_allowed' });
  });

  it('answers an unknown path below /api/ with a JSON 404', async () => {
    for (const path of ['nothing', 'servers/node1/nothing', '../v2/servers']) {
      const { status, json } = await getJson(path);
      expect(status, path).toBe(404);
      expect(json['error']).toBe('not_found');
    }
  });

  it('names the parameter of every bad range: bad times, from after to, longer than the retention', async () => {
    await bad('log-events?from=yesterday', 'from');
    await bad('log-events?to=2026-13-01T00:00:00Z', 'to');
    await bad(`log-events?from=${iso(NOW)}&to=${iso(NOW - 1000)}`, 'from');
    await bad(`log-events?from=${iso(NOW - 32 * 24 * HOUR_MS)}&to=${iso(NOW)}`, 'from');
    // 31 days (retention + 1) is allowed; a future `to` is fine.
    await ok(`log-events?from=${iso(NOW - 31 * 24 * HOUR_MS + 1000)}&to=${iso(NOW + 1000)}`);
  });

  it('names an unknown parameter, a repeated one, a bad limit and a bad cursor', async () => {
    expect(await bad('servers?level=ERROR', 'level')).toContain('unknown parameter');
    expect(await bad('log-events?level=ERROR&level=WARN', 'level')).toContain('more than once');
    for (const limit of ['0', '1001', 'ten', '-1', '1.5', '']) await bad(`log-events?limit=${limit}`, 'limit');
    await bad('log-events?cursor=bm90LWEtY3Vyc29y', 'cursor');
    await bad('user-events?cursor=%21%21', 'cursor');
    await bad('audit-events?cursor=MTIz', 'cursor');
  });
});

describe('read API: servers and health', () => {
  it('lists the servers with their newest sample in the range, and null where the range has none', async () => {
    const answer = await ok<{ servers: { name: string; latest: { time: number; cpu: number } | null }[] }>('servers');
    expect(answer.servers.map((server) => server.name)).toEqual(['node1', 'node2']);
    for (const server of answer.servers) {
      expect(server.latest?.time).toBeGreaterThan(NOW - 60_000);
      expect(server.latest?.cpu).toBeGreaterThan(0);
    }
    const old = await ok<{ servers: { latest: unknown }[] }>(
      `servers?${range(NOW - 48 * HOUR_MS, NOW - 40 * HOUR_MS)}`,
    );
    expect(old.servers.map((server) => server.latest)).toEqual([null, null]);
  });

  it('gives raw samples for the last hour, bucketed raw samples for a day, and rollups plus raw samples for 3 days', async () => {
    interface Health {
      stepMs: number | null;
      t: number[];
      cpu: (number | null)[];
      cpuMax: (number | null)[];
      cacheHitRatio: (number | null)[];
    }
    const hour = await ok<Health>(`servers/node1/health?${range(NOW - HOUR_MS)}`);
    expect(hour.stepMs).toBeNull();
    expect(hour.t.length).toBe(
      scalar(
        'SELECT count(*) AS n FROM health WHERE server_id = 1 AND time_ns >= ?',
        BigInt(NOW - HOUR_MS) * 1_000_000n,
      ),
    );
    expect(hour.cpu.length).toBe(hour.t.length);
    expect(hour.cacheHitRatio.filter((ratio) => ratio !== null).length).toBeGreaterThan(0);
    const day = await ok<Health>(`servers/node1/health?${range(NOW - 23 * HOUR_MS)}`);
    expect(day.stepMs).toBe(120_000);
    expect(day.t.length).toBeLessThanOrEqual(1000);
    const three = await ok<Health>(`servers/node1/health?${DAY3}`);
    expect(three.stepMs).toBe(300_000);
    expect(three.t.length).toBeLessThanOrEqual(1000);
    // Rollups before the raw hours, raw samples after: both parts are there.
    expect(three.t.filter((t) => t < NOW - 30 * HOUR_MS).length).toBeGreaterThan(400);
    expect(three.t.filter((t) => t > NOW - 20 * HOUR_MS).length).toBeGreaterThan(200);
    three.cpu.forEach((cpu, index) => expect(cpu ?? 0).toBeLessThanOrEqual(three.cpuMax[index] ?? 0));
  });

  it('answers 404 naming a server the store does not know', async () => {
    const { status, json } = await getJson('servers/nodeX/health');
    expect(status).toBe(404);
    expect(json['message']).toContain('nodeX');
  });
});

describe('read API: log events', () => {
  it('lists newest first, a page of limit, each row once when paging through a range even as rows are added', async () => {
    const window = range(NOW - 6 * HOUR_MS, NOW);
    const expected = scalar(
      'SELECT count(*) AS n FROM log_events WHERE time_ns BETWEEN ? AND ?',
      BigInt(NOW - 6 * HOUR_MS) * 1_000_000n,
      BigInt(NOW) * 1_000_000n + 999_999n,
    );
    const seen = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    let previous = Number.POSITIVE_INFINITY;
    do {
      const page: EventList = await ok<EventList>(`log-events?${window}&limit=50${cursor ? `&cursor=${cursor}` : ''}`);
      for (const event of page.events) {
        expect(seen.has(event.id), event.id).toBe(false);
        expect(event.timeMs).toBeLessThanOrEqual(previous);
        previous = event.timeMs;
        seen.add(event.id);
      }
      if (pages === 0) {
        // A newer event arrives while the operator pages: the pages already promised do not shift.
        const db = writer();
        plantLogEvent(db, NOW - 1000, 'arrived between two pages');
        db.close();
      }
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBeGreaterThan(3);
    expect(seen.size).toBe(expected);
  });

  it('filters by level (several, any case), source, server and category', async () => {
    const errors = await ok<EventList>(`log-events?${DAY3}&level=error,Warn&limit=1000`);
    expect(errors.events.length).toBe(1000);
    expect(new Set(errors.events.map((event) => event.level))).toEqual(new Set(['ERROR', 'WARN']));
    const engine = await ok<EventList>(`log-events?${DAY3}&source=engine,scheduler&server=node2&limit=500`);
    expect(engine.events.length).toBeGreaterThan(0);
    for (const event of engine.events) {
      expect(['engine', 'scheduler']).toContain(event.source);
      expect(event.server).toBe('node2');
    }
    const planted = await ok<EventList>(`log-events?${DAY3}&category=qs_log_category=planted`);
    expect(planted.events.map((event) => event.category)).toEqual(planted.events.map(() => PLANTED_CATEGORY));
    expect(planted.events.length).toBe(1);
    const byName = await ok<{ events: { category: { name: string }[] }[] }>(
      `log-events?${DAY3}&category=qs_log_category&limit=200`,
    );
    expect(byName.events.length).toBe(200);
    for (const event of byName.events) expect(event.category.map((item) => item.name)).toContain('qs_log_category');
    expect((await ok<EventList>(`log-events?${DAY3}&server=nobody`)).events).toEqual([]);
    const app = 'a0000001-0000-4000-8000-000000000001';
    const ofApp = await ok<{ events: { appId: string }[] }>(`log-events?${DAY3}&app=${app}&limit=1000`);
    expect(ofApp.events.length).toBe(
      scalar('SELECT count(*) AS n FROM log_events WHERE app_id = ? AND time_ns BETWEEN ? AND ?', app, ...DAY3_NS),
    );
    for (const event of ofApp.events) expect(event.appId).toBe(app);
    await bad('log-events?level=LOUD', 'level');
    await bad('log-events?level=ERROR,', 'level');
    await bad('log-events?source=kernel', 'source');
    await bad('log-events?category=', 'category');
  });

  it('finds by a word of the message (every word must match, start of a word, any case) and not by an absent word', async () => {
    const found = await ok<EventList>(`log-events?${DAY3}&q=ZEBRACORN`);
    expect(found.events.map((event) => event.timeMs)).toEqual([PLANTED_MS]);
    expect((await ok<EventList>(`log-events?${DAY3}&q=zebra%20reloading`)).events.length).toBe(1);
    expect((await ok<EventList>(`log-events?${DAY3}&q=refused`)).events.length).toBe(1);
    expect((await ok<EventList>(`log-events?${DAY3}&q=zebracorn%20certificate`)).events).toEqual([]);
    expect((await ok<EventList>(`log-events?${DAY3}&q=quokka`)).events).toEqual([]);
    const certificate = await ok<EventList>(`log-events?${DAY3}&q=certificate&limit=1000`);
    expect(certificate.events.length).toBe(
      scalar(
        "SELECT count(*) AS n FROM log_events WHERE message LIKE '%certificate%' AND time_ns BETWEEN ? AND ?",
        ...DAY3_NS,
      ),
    );
    // FTS5 syntax in q is text: no 500, and a q of symbols only is a 400.
    for (const q of ['"', 'NEAR(a b)', 'a OR', '*', 'message:zebracorn', "zebracorn'"]) {
      const { status } = await getJson(`log-events?${DAY3}&q=${encodeURIComponent(q)}`);
      expect(status, q).not.toBe(500);
    }
    await bad(`log-events?q=${encodeURIComponent('!! ** ""')}`, 'q');
  });

  it('never shows a config secret: masked in the message, the exception and the whole event', async () => {
    const answer = await fetchFrom(`${main.base}/log-events?${DAY3}&q=zebracorn`);
    expect(answer.status).toBe(200);
    for (const secret of ['MARKER-TSDB-PASSWORD', 'MARKER-AUDIT-API-TOKEN', 'MARKER-MONSAAS-INSERT-KEY']) {
      expect(answer.body).not.toContain(secret);
    }
    const event = (JSON.parse(answer.body) as EventList).events[0];
    expect(event?.message).toBe(`zebracorn appeared near ${MASK} while reloading`);
    // A 400 repeating a secret given as a value masks it too.
    const badValue = await fetchFrom(`${main.base}/log-events?level=MARKER-TSDB-PASSWORD`);
    expect(badValue.status).toBe(400);
    expect(badValue.body).not.toContain('MARKER-TSDB-PASSWORD');
  });

  it('counts by level from the events for short ranges and from the hourly counts for long ones, equal to the rows', async () => {
    interface Counts {
      stepMs: number;
      t: number[];
      series: { key: string; total: number; counts: number[] }[];
    }
    const from = NOW - 2 * HOUR_MS;
    const short = await ok<Counts>(`log-events/counts?${range(from, NOW)}&by=level`);
    expect(short.stepMs).toBeLessThan(HOUR_MS);
    const rowsIn = (level: string, a: number, b: number) =>
      scalar(
        'SELECT count(*) AS n FROM log_events WHERE level = ? AND time_ns BETWEEN ? AND ?',
        level,
        BigInt(a) * 1_000_000n,
        BigInt(b) * 1_000_000n + 999_999n,
      );
    for (const series of short.series) {
      expect(series.total, series.key).toBe(rowsIn(series.key, from, NOW));
      expect(series.counts.length).toBe(short.t.length);
    }
    expect(short.series.map((series) => series.key).sort()).toEqual(['ERROR', 'INFO', 'WARN']);
    const long = await ok<Counts>(`log-events/counts?${DAY3}&by=level&source=engine`);
    expect(long.stepMs).toBeGreaterThanOrEqual(HOUR_MS);
    const hourFrom = Math.floor(DAY3_FROM / HOUR_MS) * HOUR_MS;
    const engineErrors = scalar(
      "SELECT count(*) AS n FROM log_events WHERE level = 'ERROR' AND source = 'engine' AND time_ns >= ?",
      BigInt(hourFrom) * 1_000_000n,
    );
    // The planted events are not in the hourly counts (they were written without the writer).
    expect(long.series.find((series) => series.key === 'ERROR')?.total).toBe(engineErrors - 2);
    const categories = await ok<Counts>(`log-events/counts?${range(NOW - 20 * 60_000, NOW)}&by=category&level=ERROR`);
    expect(categories.series.find((series) => series.key === 'qs_log_category=planted')?.total).toBe(1);
    // By app: the hourly counts have no app, so long ranges count the events (whole buckets, exact).
    const app = 'a0000002-0000-4000-8000-000000000002';
    const forApp = await ok<Counts>(`log-events/counts?${DAY3}&by=level&app=${app}`);
    expect(forApp.stepMs).toBeGreaterThanOrEqual(HOUR_MS);
    expect(forApp.series.reduce((sum, series) => sum + series.total, 0)).toBe(
      scalar('SELECT count(*) AS n FROM log_events WHERE app_id = ? AND time_ns BETWEEN ? AND ?', app, ...DAY3_NS),
    );
    await bad('log-events/counts', 'by');
    await bad('log-events/counts?by=server', 'by');
    await bad('log-events/counts?by=level&q=x', 'q');
  });
});

describe('read API: users and sessions', () => {
  it('gives sessions per server and virtual proxy, and who was on, filtered by server, virtual proxy and user', async () => {
    interface Sessions {
      stepMs: number | null;
      series: { server: string; virtualProxy: string; t: number[]; sessions: (number | null)[] }[];
      presence: { user: string; server: string; virtualProxy: string; start: number; end: number }[];
      presenceTruncated: boolean;
    }
    const all = await ok<Sessions>(`user-sessions?${DAY3}&limit=1000`);
    expect(all.series.map((series) => `${series.server} ${series.virtualProxy}`)).toEqual([
      'node1 /',
      'node1 /hdr',
      'node2 /',
      'node2 /hdr',
    ]);
    expect(all.stepMs).toBe(300_000);
    const hdr = await ok<Sessions>(`user-sessions?${DAY3}&server=node2&virtualProxy=/hdr&limit=5`);
    expect(hdr.series.map((series) => `${series.server} ${series.virtualProxy}`)).toEqual(['node2 /hdr']);
    expect(hdr.presence.length).toBe(5);
    expect(hdr.presenceTruncated).toBe(true);
    for (const run of hdr.presence) expect([run.server, run.virtualProxy]).toEqual(['node2', '/hdr']);
    const user = all.presence[0]?.user ?? '';
    const one = await ok<Sessions>(`user-sessions?${DAY3}&user=${encodeURIComponent(user)}&limit=1000`);
    expect(one.presence.length).toBeGreaterThan(0);
    for (const run of one.presence) expect(run.user).toBe(user);
    expect(one.presenceTruncated).toBe(false);
    const hour = await ok<Sessions>(`user-sessions?${range(NOW - HOUR_MS)}`);
    expect(hour.stepMs).toBeNull();
  });

  it('lists user events filtered by user and app, paged', async () => {
    interface UserEvents {
      events: { id: string; user: string; command: string; appId: string | null }[];
      nextCursor: string | null;
    }
    const first = await ok<UserEvents>(`user-events?${DAY3}&limit=3`);
    expect(first.events.length).toBe(3);
    const user = first.events[0]?.user ?? '';
    const mine = await ok<UserEvents>(`user-events?${DAY3}&user=${encodeURIComponent(user)}&limit=1000`);
    expect(mine.events.length).toBe(
      scalar('SELECT count(*) AS n FROM user_events WHERE user_full = ? AND time_ns BETWEEN ? AND ?', user, ...DAY3_NS),
    );
    const app = first.events[0]?.appId ?? '';
    const forApp = await ok<UserEvents>(`user-events?${DAY3}&app=${app}&limit=1000`);
    for (const event of forApp.events) expect(event.appId).toBe(app);
    const second = await ok<UserEvents>(`user-events?${DAY3}&limit=3&cursor=${first.nextCursor ?? ''}`);
    expect(second.events.map((event) => event.id)).not.toContain(first.events[0]?.id);
    await bad('user-events?level=ERROR', 'level');
  });
});

describe('read API: performance', () => {
  interface Top {
    by: string;
    order: string;
    rows: {
      key: string;
      count: number;
      totalMs: number;
      p95Ms: number;
      maxMs: number;
      topUsers: { user: string; totalMs: number }[];
    }[];
  }
  it('ranks apps, objects and methods by total, p95 and count, with counts equal to the events of the hours', async () => {
    const hourFrom = Math.floor(DAY3_FROM / HOUR_MS) * HOUR_MS;
    const events = scalar('SELECT count(*) AS n FROM perf_events WHERE time_ns >= ?', BigInt(hourFrom) * 1_000_000n);
    for (const by of ['app', 'object', 'method']) {
      for (const order of ['total', 'p95', 'count'] as const) {
        const top = await ok<Top>(`performance/top?${DAY3}&by=${by}&order=${order}&limit=1000`);
        expect(top.by).toBe(by);
        expect(
          top.rows.reduce((sum, row) => sum + row.count, 0),
          `${by} ${order}`,
        ).toBe(events);
        const measure = top.rows.map((row) =>
          order === 'total' ? row.totalMs : order === 'p95' ? row.p95Ms : row.count,
        );
        expect(measure).toEqual([...measure].sort((a, b) => b - a));
        for (const row of top.rows) {
          expect(row.p95Ms).toBeLessThanOrEqual(row.maxMs);
          expect(row.topUsers.length).toBeLessThanOrEqual(5);
        }
      }
    }
    const apps = await ok<Top>(`performance/top?${DAY3}&by=app&limit=2`);
    expect(apps.rows.length).toBe(2);
    // The generator makes the first app the costliest.
    expect(apps.rows[0]?.key).toBe('a0000000-0000-4000-8000-000000000000');
    const totalOfApp = scalar(
      "SELECT sum(process_time) AS n FROM perf_events WHERE app_id = 'a0000000-0000-4000-8000-000000000000' AND time_ns >= ?",
      BigInt(hourFrom) * 1_000_000n,
    );
    // Equal but for the order of the float additions.
    expect(Math.abs((apps.rows[0]?.totalMs ?? 0) - totalOfApp) / totalOfApp).toBeLessThan(1e-9);
  });

  it('filters by server, app and user', async () => {
    const user = 'CORP\\user001';
    const top = await ok<Top>(`performance/top?${DAY3}&by=method&server=node1&user=${encodeURIComponent(user)}`);
    expect(top.rows.length).toBeGreaterThan(0);
    for (const row of top.rows) expect(row.topUsers.map((cost) => cost.user)).toEqual([user]);
    const oneApp = await ok<Top>(`performance/top?${DAY3}&by=app&app=a0000001-0000-4000-8000-000000000001`);
    expect(oneApp.rows.map((row) => row.key)).toEqual(['a0000001-0000-4000-8000-000000000001']);
    await bad('performance/top', 'by');
    await bad('performance/top?by=sheet', 'by');
    await bad('performance/top?by=app&order=mean', 'order');
  });
});

describe('read API: audit', () => {
  interface Audit {
    events: { id: string; timeMs: number; type: string; appId: string; sheetId: string; user: string }[];
    nextCursor: string | null;
  }
  it('pages through every audit event of a range once, and filters by type, app, sheet and user', async () => {
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: Audit = await ok<Audit>(`audit-events?${DAY3}&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      for (const event of page.events) seen.add(event.id);
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen.size).toBe(
      scalar('SELECT count(*) AS n FROM audit_events WHERE time_ms BETWEEN ? AND ?', DAY3_FROM, NOW + 60_000),
    );
    const first = (await ok<Audit>(`audit-events?${DAY3}&limit=1`)).events[0];
    if (!first) throw new Error('no audit event');
    const filtered = await ok<Audit>(
      `audit-events?${DAY3}&type=${first.type}&app=${first.appId}&sheet=${first.sheetId}&user=${encodeURIComponent(first.user)}&limit=1000`,
    );
    expect(filtered.events.map((event) => event.id)).toContain(first.id);
    for (const event of filtered.events) {
      expect([event.type, event.appId, event.sheetId, event.user]).toEqual([
        first.type,
        first.appId,
        first.sheetId,
        first.user,
      ]);
    }
  });

  it('counts by type, app, sheet and user, totals equal to the events', async () => {
    const events = scalar('SELECT count(*) AS n FROM audit_events WHERE time_ms >= ?', DAY3_FROM);
    for (const by of ['type', 'app', 'sheet', 'user']) {
      const counts = await ok<{ series: { total: number }[] }>(`audit-events/counts?${DAY3}&by=${by}`);
      const total = counts.series.reduce((sum, series) => sum + series.total, 0);
      // At most 20 series: the users' (40) and the sheets' (40) are cut, the others are whole.
      if (by === 'user' || by === 'sheet') expect(total).toBeLessThan(events);
      else expect(total, by).toBe(events);
    }
    await bad('audit-events/counts?by=level', 'by');
  });
});

describe('read API: answers match api-types.ts', () => {
  it('every endpoint answers with its schema (the one the OpenAPI document and the pages read)', async () => {
    const paths: Record<string, string> = {
      servers: 'servers',
      'servers/{serverName}/health': 'servers/node1/health',
      'log-events': 'log-events?limit=5',
      'log-events/counts': 'log-events/counts?by=category',
      'user-sessions': 'user-sessions?limit=5',
      'user-events': 'user-events?limit=5',
      'performance/top': 'performance/top?by=object&limit=5',
      'audit-events': 'audit-events?limit=5',
      'audit-events/counts': 'audit-events/counts?by=sheet',
      // Alerts are off in this web view (no engine): the answers say so (api-alerts.test.ts has them on).
      alerts: 'alerts',
      'alerts/history': 'alerts/history?limit=5',
    };
    expect(Object.keys(paths)).toEqual(Object.keys(ANSWERS));
    for (const [template, path] of Object.entries(paths)) {
      // `alerts` is of now: it takes no range.
      for (const span of template === 'alerts' ? [''] : [range(NOW - HOUR_MS), DAY3]) {
        const answer: unknown = await ok(span ? `${path}${path.includes('?') ? '&' : '?'}${span}` : path);
        const schema = ANSWERS[template];
        if (!schema) throw new Error(template);
        expect(
          [...Value.Errors(schema, answer)].map((error) => `${error.path}: ${error.message}`),
          template,
        ).toEqual([]);
      }
    }
  });
});

describe('read API: OpenAPI document', () => {
  it('is served at /api/v1/openapi.json and lists every endpoint', async () => {
    const document = await ok<{ openapi: string; paths: Record<string, unknown> }>('openapi.json');
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toEqual([
      '/servers',
      '/servers/{serverName}/health',
      '/log-events',
      '/log-events/counts',
      '/user-sessions',
      '/user-events',
      '/performance/top',
      '/audit-events',
      '/audit-events/counts',
      '/alerts',
      '/alerts/history',
      '/alerts/silences',
      '/alerts/silences/{id}/expire',
    ]);
  });
});

describe('read API: the store missing, off or failing', () => {
  it('answers as an empty store until the store file exists, then reads it', async () => {
    const later = join(dir, 'later', 'svc.db');
    const empty = await startView(`{enable: true, path: ${JSON.stringify(later)}}`);
    try {
      const get = async (path: string, key: string) => {
        const answer = await fetchFrom(`${empty.base}/${path}`);
        expect(answer.status, `${path}: ${answer.body}`).toBe(200);
        const parsed: Record<string, unknown> = JSON.parse(answer.body);
        return parsed[key];
      };
      expect(await get('servers', 'servers')).toEqual([]);
      expect(await get('log-events', 'events')).toEqual([]);
      expect(await get('log-events/counts?by=level', 'series')).toEqual([]);
      expect(await get('user-sessions', 'series')).toEqual([]);
      expect(await get('user-events', 'events')).toEqual([]);
      expect(await get('performance/top?by=app', 'rows')).toEqual([]);
      expect(await get('audit-events', 'events')).toEqual([]);
      expect(await get('audit-events/counts?by=type', 'series')).toEqual([]);
      expect((await fetchFrom(`${empty.base}/servers/node1/health`)).status).toBe(404);
      generateHistory({ path: later, now: NOW, days: 1, servers: 1, rawHealthHours: 2, seed: 5 });
      expect(await get('servers', 'servers')).toHaveLength(1);
    } finally {
      await empty.view.stop();
    }
  });

  it('answers 404 JSON saying the store is off when Svc.store.enable is false', async () => {
    const off = await startView('{enable: false}');
    try {
      for (const path of ['servers', 'openapi.json', 'log-events?level=ERROR']) {
        const answer = await fetchFrom(`${off.base}/${path}`);
        expect(answer.status).toBe(404);
        expect(JSON.parse(answer.body)).toMatchObject({ error: 'not_found' });
        expect(answer.body).toContain('store is off');
      }
    } finally {
      await off.view.stop();
    }
  });

  it('answers 500 with no internal text when a query fails, and logs it at ERROR', async () => {
    const broken = join(dir, 'broken.db');
    generateHistory({ path: broken, now: NOW, days: 1, servers: 1, rawHealthHours: 2, seed: 6 });
    const db = new DatabaseSync(broken);
    db.exec('DROP TABLE perf_hourly');
    db.close();
    const failing = await startView(`{enable: true, path: ${JSON.stringify(broken)}}`);
    try {
      const answer = await fetchFrom(`${failing.base}/performance/top?by=app`);
      expect(answer.status).toBe(500);
      expect(JSON.parse(answer.body)).toEqual({
        error: 'internal',
        message: "the query failed; the reason is in Svc's log",
      });
      expect(answer.body).not.toContain('perf_hourly');
      const errorLines = () => failing.lines().filter((line) => line['level'] === 'error');
      await until('the ERROR line', () => errorLines().length > 0);
      expect(errorLines().map((line) => line['msg'])).toEqual([
        'read API: the query of /api/v1/performance/top failed; answered 500',
      ]);
      expect((await fetchFrom(`${failing.base}/servers`)).status).toBe(200);
    } finally {
      await failing.view.stop();
    }
  });
});

describe('read API: rate limit', () => {
  it('shares the web view limit of 300 requests a minute per address: a 429 comes within 700 requests', async () => {
    // 700 requests span at most two fixed windows, so one of them gets more than 300.
    let refused: Answer | undefined;
    for (let sent = 0; sent < 700 && !refused; sent++) {
      const answer = await fetchFrom(`${main.base}/openapi.json`, { from: '127.0.0.77' });
      if (answer.status === 429) refused = answer;
      else expect(answer.status).toBe(200);
    }
    expect(refused?.status).toBe(429);
    expect(refused?.headers['retry-after']).toBeDefined();
    await until('the WARN line', () =>
      main.lines().some((line) => line['level'] === 'warn' && String(line['msg']).includes('127.0.0.77')),
    );
  }, 60_000);
});
