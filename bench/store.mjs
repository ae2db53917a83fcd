/**
 * The embedded store: its ingestion rate through the store destination's write path, against plain
 * node:sqlite prepared INSERTs of the same rows in the same run; then its disk use per server per day.
 *
 *   npm run build && node bench/store.mjs [--events=100000] [--batch=1000] [--rounds=3] [--main-thread]
 *       [--log-events=20000] [--perf-events=50000] [--user-events=2000] [--virtual-proxies=1]
 *
 * (or BENCH_EVENTS, BENCH_BATCH, BENCH_ROUNDS, BENCH_MAIN_THREAD, BENCH_LOG_EVENTS, BENCH_PERF_EVENTS,
 * BENCH_USER_EVENTS, BENCH_VIRTUAL_PROXIES). It imports the BUILT modules from ../dist. Files go to
 * a temp dir (printed with its filesystem), removed at exit.
 *
 * Ingestion: --events queued events (70 % log events of the four sources, 20 % engine performance,
 * 10 % user events, each with its own point time) in deliveries of --batch events:
 *   store   StoreComponent → StoreDestination.write (BaseDestination's filtering, the events
 *           posted to the store's worker thread, the mapping of rows.ts, the servers' upsert, INSERT
 *           OR IGNORE, the hourly rollups, one transaction and one sync per delivery: what a queue
 *           delivery costs; --main-thread: the writer on the main thread in slices, as in the
 *           single executable);
 *   plain   the same rows, mapped before the clock starts, inserted by prepared INSERTs into a
 *           database with the same tables, indexes, free-text triggers and pragmas (WAL,
 *           synchronous=FULL), one transaction per delivery: what SQLite itself costs.
 * Alternated --rounds times, each on fresh files; printed: events/s and µs per event of each, and
 * store / plain (the issue aims at ≥ ×0.7).
 *
 * Disk: one simulated day of one server through the real writer: health and session samples every
 * pollingInterval (the config defaults, per virtual proxy), --log-events log events, --perf-events
 * engine performance events, --user-events user events, spread over the day. Printed: the bytes of
 * the database (after a checkpoint) empty, with the day raw, and after the upkeep rolled the day's
 * samples up (as it does after rawHealthHours), per server per day; and what 30 days of 50 servers
 * would take at those rates.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { filesystemOf, fmt, int, machineLine, median, option, positive, removeOnExit } from './lib.mjs';

const dist = new URL('../dist/', import.meta.url);
const load = (path) => import(new URL(path, dist).href);
const [store, rows, ddl, config] = await Promise.all([
  load('shared/destinations/store/build.js'),
  load('shared/store/rows.js'),
  load('shared/store/ddl.js'),
  load('shared/config/load.js'),
]);

const tempDirs = new Set();
removeOnExit(tempDirs);
const folder = mkdtempSync(join(tmpdir(), 'svc-bench-store-'));
tempDirs.add(folder);

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const baseConfig = config.parseConfigText('Svc:\n  logLevel: warn\n', 'bench.yaml', {}).config;
let fileSeq = 0;
const nextFile = () => join(folder, `svc-${++fileSeq}.db`);

async function storeComponent(file, servers = [], thread = !mainThread) {
  const ctx = {
    config: {
      ...baseConfig,
      store: { ...baseConfig.store, path: file },
      serversToMonitor: { ...baseConfig.serversToMonitor, servers },
    },
    logger: silent,
    errors: { track() {} },
    clock: null,
  };
  const component = new store.StoreComponent(ctx, Date.now, thread);
  await component.open();
  return component;
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

const APPS = Array.from({ length: 40 }, (_, i) => ({
  id: `0a1b2c3d-4e5f-4a6b-8c7d-${String(i).padStart(12, '0')}`,
  name: `App ${i}`,
}));
const USERS = Array.from({ length: 200 }, (_, i) => `LAB\\user${i}`);
const METHODS = ['GenericObject::GetLayout', 'Doc::GetObject', 'GenericObject::GetHyperCubeData', 'Doc::DoReload'];
const LEVELS = ['INFO', 'WARN', 'ERROR'];
const pick = (list, i) => list[i % list.length];
const ns = (ms, n) => String(BigInt(Math.floor(ms)) * 1_000_000n + BigInt(n));

function head(source, i, host) {
  return {
    source,
    log_row: i,
    ts_iso: '',
    ts_local: '',
    level: pick(LEVELS, i * 7),
    host,
    subsystem: `System.${source}.Core.Part${i % 9}`,
    windows_user: 'LAB\\svc_platform',
  };
}

function logEvent(i, host) {
  const user = pick(USERS, i);
  const [dir, id] = user.split('\\');
  const app = pick(APPS, i);
  const message = `Message ${i} about ${app.name} for ${user}: operation ${i % 97} finished with code ${i % 13}`;
  switch (i % 4) {
    case 0:
      return {
        ...head('qseow-engine', i, host),
        message,
        proxy_session_id: `ps-${i % 500}`,
        user_directory: dir,
        user_id: id,
        user_full: user,
        engine_ts: '',
        process_id: 'p-1',
        engine_exe_version: '14.1',
        server_started: '',
        entry_type: 'Warning',
        session_id: `s-${i % 500}`,
        app_id: app.id,
        category: [{ name: 'qs_log_category', value: 'engine' }],
      };
    case 1:
      return {
        ...head('qseow-proxy', i, host),
        message,
        exception_message: '',
        user_directory: dir,
        user_id: id,
        user_full: user,
        command: 'Login',
        result_code: '200',
        origin: 'AppAccess',
        context: '/hub/',
      };
    case 2:
      return {
        ...head('qseow-repository', i, host),
        message,
        exception_message: i % 10 === 0 ? 'System.Net.WebException: timeout' : '',
        user_directory: dir,
        user_id: id,
        user_full: user,
        command: '',
        result_code: '',
        origin: 'Not available',
        context: 'Not available',
      };
    default:
      return {
        ...head('qseow-scheduler', i, host),
        message,
        exception_message: '',
        user_directory: dir,
        user_id: id,
        user_full: user,
        task_name: `Reload of ${app.name}`,
        app_name: app.name,
        task_id: `t-${i % 50}`,
        app_id: app.id,
        execution_id: `e-${i}`,
      };
  }
}

function perfEvent(i, host) {
  const user = pick(USERS, i * 3);
  const [dir, id] = user.split('\\');
  const app = pick(APPS, i * 5);
  const time = (i * 37) % 2000;
  return {
    ...head('qseow-qix-perf', i, host),
    level: 'INFO',
    proxy_session_id: `ps-${i % 500}`,
    event_activity_source: 'user',
    user_directory: dir,
    user_id: id,
    user_full: user,
    engine_ts: '',
    session_id: `s-${i % 500}`,
    app_id: app.id,
    app_name: app.name,
    request_id: i,
    method: pick(METHODS, i),
    process_time: time,
    work_time: time * 0.9,
    lock_time: 0.1,
    validate_time: 0.5,
    traverse_time: time / 2,
    handle: i % 20,
    object_id: `obj${i % 60}`,
    net_ram: 1024 * (i % 100),
    peak_ram: 4096 * (i % 100),
    object_type: pick(['barchart', 'table', 'kpi', 'linechart'], i),
  };
}

function userEvent(i, host) {
  const user = pick(USERS, i);
  const [dir, id] = user.split('\\');
  return {
    messageType: 'qseow-proxy-session',
    host,
    command: i % 2 === 0 ? 'Start session' : 'Stop session',
    user_directory: dir,
    user_id: id,
    user_full: user,
    origin: 'AppAccess',
    context: '/hub/',
    message: `Session for ${user} ${i % 2 === 0 ? 'started' : 'stopped'}`,
    uaBrowserName: 'Chrome',
    uaBrowserMajorVersion: '131',
    uaOsName: 'Windows',
    uaOsVersion: '10',
  };
}

let idSeq = 0;
const queued = (kind, timeNs, event) => ({
  kind,
  id: `e-${++idSeq}`,
  receivedAt: new Date().toISOString(),
  timeNs,
  event,
});

/** The ingestion mix: 70 % log events, 20 % engine performance, 10 % user events, one per ms from `start`. */
function ingestionEvents(n, start = Date.now() - n) {
  return Array.from({ length: n }, (_, i) => {
    const t = ns(start + i, i % 1000);
    const r = i % 10;
    if (r < 7) return queued('log-event', t, logEvent(i, 'node1.lab.local'));
    if (r < 9) return queued('log-event', t, perfEvent(i, 'node1.lab.local'));
    return queued('user-event', t, userEvent(i, 'node1.lab.local'));
  });
}

// ---------------------------------------------------------------------------------------------
// Ingestion: store vs plain
// ---------------------------------------------------------------------------------------------

async function storeRun(events, batch, warmUp) {
  const component = await storeComponent(nextFile());
  const { destination } = component.destination();
  // A fresh worker thread per round: its code is warmed up on other events first, not timed.
  for (let i = 0; i < warmUp.length; i += batch) await destination.write(warmUp.slice(i, i + batch));
  const t0 = performance.now();
  for (let i = 0; i < events.length; i += batch) {
    const again = await destination.write(events.slice(i, i + batch));
    if (again.size > 0) throw new Error(`the store did not write ${again.size} event(s)`);
  }
  const ms = performance.now() - t0;
  await component.stop();
  return ms;
}

/** The rows of `events` in their tables, mapped before the clock starts (server id 1). */
function plainRows(events) {
  return events.map((q) => {
    const { timeNs } = rows.eventTime(q.timeNs);
    if (q.kind === 'user-event') return { table: 'user_events', cells: [timeNs, 1, ...rows.userEventCells(q)] };
    if (rows.isPerf(q.event)) return { table: 'perf_events', cells: [timeNs, 1, ...rows.perfRow(q.event).cells] };
    return { table: 'log_events', cells: [timeNs, 1, ...rows.logRow(q.event).cells] };
  });
}

function plainRun(mapped, batch) {
  const db = new DatabaseSync(nextFile());
  db.exec('PRAGMA auto_vacuum = INCREMENTAL');
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = FULL');
  db.exec(ddl.STORE_DDL);
  const insert = {};
  for (const [table, n] of [
    ['user_events', 14],
    ['perf_events', 17],
    ['log_events', 13],
  ])
    insert[table] = db.prepare(`INSERT INTO ${table} VALUES (${Array(n).fill('?').join(', ')})`);
  const t0 = performance.now();
  for (let i = 0; i < mapped.length; i += batch) {
    db.exec('BEGIN IMMEDIATE');
    for (const row of mapped.slice(i, i + batch)) insert[row.table].run(...row.cells);
    db.exec('COMMIT');
  }
  const ms = performance.now() - t0;
  db.close();
  return ms;
}

// ---------------------------------------------------------------------------------------------
// Disk per server per day
// ---------------------------------------------------------------------------------------------

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function healthSample(i) {
  return {
    serverName: 'Node1',
    tags: { host: 'node1.lab.local', server_name: 'Node1', server_description: 'Central node' },
    uptime: `${Math.floor(i / 2880)} days, ${Math.floor(i / 120) % 24}h 00m 00s`,
    body: {
      version: '14.1.4',
      started: '20261201T081512.000Z',
      mem: { committed: 4000 + (i % 100), allocated: 4500 + (i % 50), free: 27000 - (i % 70) },
      apps: {
        active_docs: APPS.slice(0, 5).map((a) => a.id),
        in_memory_docs: APPS.slice(0, 8).map((a) => a.id),
        loaded_docs: APPS.slice(0, 6).map((a) => a.id),
        calls: 10_000 + i * 3,
        selections: 800 + i,
      },
      cpu: { total: (i * 7) % 100 },
      session: { active: i % 30, total: 40 },
      users: { active: i % 20, total: 30 },
      cache: { hits: 1000 + i, lookups: 1500 + i, added: 400, replaced: 10, bytes_added: 5_000_000 },
      saturated: false,
    },
    docNames: {
      active: { names: APPS.slice(0, 5).map((a) => a.name), sessionApps: [] },
      loaded: { names: APPS.slice(0, 6).map((a) => a.name), sessionApps: [] },
      inMemory: { names: APPS.slice(0, 8).map((a) => a.name), sessionApps: [] },
    },
  };
}

function sessionSample(i, proxy) {
  const users = USERS.slice(i % 50, (i % 50) + (i % 15) + 1);
  return {
    serverName: 'Node1',
    tags: { host: 'node1.lab.local', user_session_virtual_proxy: proxy, user_session_host: 'node1.lab.local:4243' },
    virtualProxy: proxy,
    sessions: users.map((u, k) => ({ UserDirectory: 'LAB', UserId: u.split('\\')[1], SessionId: `sid-${k}` })),
    userIdList: users.join(','),
  };
}

const fileBytes = (file) => {
  let total = 0;
  for (const f of [file, `${file}-wal`]) {
    try {
      total += statSync(f).size;
    } catch {
      // absent
    }
  }
  return total;
};

/**
 * Bytes per table (its indexes and, for log_events, its free-text index included) and rows, read with
 * SQLite's dbstat: what each kind costs, for sizing by an operator's own rates.
 */
function tableBytes(file) {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const owner = new Map(
      db
        .prepare("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')")
        .all()
        .map((r) => [r.name, r.tbl_name]),
    );
    const tableOf = (name) => {
      const table = owner.get(name) ?? name;
      return table.startsWith('log_events_fts') ? 'log_events' : table;
    };
    const bytes = new Map();
    for (const { name, size } of db.prepare('SELECT name, SUM(pgsize) AS size FROM dbstat GROUP BY name').all())
      bytes.set(tableOf(name), (bytes.get(tableOf(name)) ?? 0) + Number(size));
    const out = [];
    for (const [table, size] of [...bytes].sort((a, b) => b[1] - a[1])) {
      if (table.startsWith('sqlite_') || size === 0) continue;
      const rows = Number(db.prepare(`SELECT count(*) AS n FROM "${table}"`).get().n);
      if (rows > 0) out.push({ table, size, rows });
    }
    return out;
  } finally {
    db.close();
  }
}

async function dayOfOneServer(rates) {
  const file = nextFile();
  const servers = [{ serverName: 'Node1', host: 'node1.lab.local:4747', serverDescription: 'Central node' }];
  let component = await storeComponent(file, servers);
  await component.stop();
  const empty = fileBytes(file);
  component = await storeComponent(file, servers);
  const { destination } = component.destination();
  const dayStart = Date.now() - DAY;
  const events = [];
  const healthEvery = baseConfig.serversToMonitor.pollingInterval;
  const sessionsEvery = baseConfig.userSessions.pollingInterval;
  let n = 0;
  for (let t = 0, i = 0; t < DAY; t += healthEvery, i++)
    events.push({
      kind: 'health',
      id: `h-${i}`,
      receivedAt: '',
      timeNs: ns(dayStart + t, n++ % 1000),
      sample: healthSample(i),
    });
  for (let p = 0; p < rates.virtualProxies; p++)
    for (let t = 0, i = 0; t < DAY; t += sessionsEvery, i++)
      events.push({
        kind: 'user-sessions',
        id: `s-${p}-${i}`,
        receivedAt: '',
        timeNs: ns(dayStart + t, n++ % 1000),
        sample: sessionSample(i, p === 0 ? '/' : `/vp${p}`),
      });
  const spread = (count, make) => {
    for (let i = 0; i < count; i++) events.push(make(i, ns(dayStart + (i * DAY) / count, n++ % 1000)));
  };
  spread(rates.log, (i, t) => queued('log-event', t, logEvent(i, 'node1.lab.local')));
  spread(rates.perf, (i, t) => queued('log-event', t, perfEvent(i, 'node1.lab.local')));
  spread(rates.user, (i, t) => queued('user-event', t, userEvent(i, 'node1.lab.local')));
  events.sort((a, b) => (BigInt(a.timeNs) < BigInt(b.timeNs) ? -1 : 1));
  for (let i = 0; i < events.length; i += 1000) await destination.write(events.slice(i, i + 1000));
  await component.stop();
  const raw = fileBytes(file);
  const rawTables = tableBytes(file);
  // The upkeep as it runs once the day is older than rawHealthHours: its samples become 5-minute rows.
  component = await storeComponent(file, servers);
  const report = await component.upkeep(Date.now() + baseConfig.store.rawHealthHours * HOUR);
  await component.stop();
  const rolled = fileBytes(file);
  return {
    empty,
    raw,
    rolled,
    rolledUp: report.rolledUp,
    events: events.length,
    rawTables,
    rolledTables: tableBytes(file),
  };
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

const total = Math.round(positive('events', 'BENCH_EVENTS', 100_000));
const mainThread = option('main-thread', 'BENCH_MAIN_THREAD', 'false') !== 'false';
const batch = Math.round(positive('batch', 'BENCH_BATCH', 1000));
const rounds = Math.round(positive('rounds', 'BENCH_ROUNDS', 3));
const rates = {
  log: Math.round(positive('log-events', 'BENCH_LOG_EVENTS', 20_000)),
  perf: Math.round(positive('perf-events', 'BENCH_PERF_EVENTS', 50_000)),
  user: Math.round(positive('user-events', 'BENCH_USER_EVENTS', 2_000)),
  virtualProxies: Math.round(positive('virtual-proxies', 'BENCH_VIRTUAL_PROXIES', 1)),
};

console.log(
  'Embedded store benchmark: ingestion through the store destination against plain node:sqlite inserts; disk per server per day',
);
console.log(machineLine());
console.log(`files       ${folder} (${filesystemOf(folder)}); WAL, synchronous=FULL, one transaction per delivery`);
console.log(
  `ingestion   ${int(total)} events (70 % log, 20 % engine performance, 10 % user events) in deliveries of ${int(batch)}, ${rounds} rounds alternated; the store's writer ${mainThread ? 'on the main thread, in slices (the single executable)' : 'in its worker thread, warmed up on other events first'}`,
);

const events = ingestionEvents(total);
const warmUp = ingestionEvents(Math.min(total, 5 * batch), Date.now() - 2 * total - 10 * batch);
const mapped = plainRows(events);
const storeMs = [];
const plainMs = [];
for (let r = 0; r < rounds; r++) {
  plainMs.push(plainRun(mapped, batch));
  // Fresh ids per round: each round writes new rows to a new file anyway; the ids only need to be unique in one.
  storeMs.push(await storeRun(events, batch, warmUp));
  console.log(
    `round ${r + 1}     store ${int((total / storeMs[r]) * 1000).padStart(8)} events/s (${fmt((storeMs[r] * 1000) / total)} µs/ev)   plain ${int((total / plainMs[r]) * 1000).padStart(8)} events/s (${fmt((plainMs[r] * 1000) / total)} µs/ev)`,
  );
}
const storeRate = (total / median(storeMs)) * 1000;
const plainRate = (total / median(plainMs)) * 1000;
console.log(`median      store ${int(storeRate)} events/s, plain ${int(plainRate)} events/s`);
console.log(`store / plain  ×${fmt(storeRate / plainRate)}  (the issue aims at ≥ ×0.7)`);
console.log('');

const day = await dayOfOneServer(rates);
const healthPerDay = Math.floor(DAY / baseConfig.serversToMonitor.pollingInterval);
const sessionsPerDay = Math.floor(DAY / baseConfig.userSessions.pollingInterval) * rates.virtualProxies;
console.log(
  `one day     of one server: ${int(healthPerDay)} health samples (every ${baseConfig.serversToMonitor.pollingInterval / 1000} s), ${int(sessionsPerDay)} session samples (every ${baseConfig.userSessions.pollingInterval / 1000} s, ${rates.virtualProxies} virtual prox${rates.virtualProxies === 1 ? 'y' : 'ies'}), ${int(rates.log)} log events, ${int(rates.perf)} engine performance events, ${int(rates.user)} user events`,
);
const mb = (b) => `${fmt(b / 2 ** 20)} MB`;
console.log(
  `database    empty ${mb(day.empty)}; with the day raw ${mb(day.raw)}; after the rollup of its ${int(day.rolledUp)} samples ${mb(day.rolled)}`,
);
for (const [when, tables] of [
  ['raw', day.rawTables],
  ['rolled up', day.rolledTables],
]) {
  console.log(`tables (${when}): the bytes of each table with its indexes, its rows, bytes per row`);
  for (const { table, size, rows } of tables)
    console.log(
      `  ${table.padEnd(20)} ${mb(size).padStart(10)}  ${int(rows).padStart(8)} rows  ${int(size / rows).padStart(6)} B/row`,
    );
}
const rawPerDay = day.raw - day.empty;
const rolledPerDay = day.rolled - day.empty;
console.log(`per server per day   raw ${mb(rawPerDay)}, after rollup ${mb(rolledPerDay)}`);
const retention = baseConfig.store.retentionDays;
const rawDays = baseConfig.store.rawHealthHours / 24;
console.log(
  `50 servers, ${retention} days   about ${mb(50 * (rawDays * rawPerDay + (retention - rawDays) * rolledPerDay))} (${rawDays} days raw, the rest rolled up, at these rates)`,
);
