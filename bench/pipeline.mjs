/**
 * Throughput of the audit pipeline behind the API: the durable local queue, the writer handler and
 * each destination (tsdb, parquet, table file), against baselines measured in the same run; plus
 * how many events an SQS request carries with and without packing.
 *
 *   npm run build && node bench/pipeline.mjs [--events=20000] [--concurrency=32] [--batch-size=1000]
 *       [--window=50] [--rounds=3] [--warmup-events=2000] [--stages=queue,tsdb,parquet,tablefile,sqs]
 *       [--sqs-send-events=1000] [--sqs-single-events=5000] [--timeout=60] [--influxd=/usr/bin/influxd]
 *       [--profile[=cpu|heap|survivors]] [--sends=single|together]
 *
 * (or BENCH_EVENTS, BENCH_CONCURRENCY, BENCH_BATCH_SIZE, BENCH_BATCH_WINDOW_MS, BENCH_ROUNDS,
 * BENCH_WARMUP_EVENTS, BENCH_STAGES, BENCH_SQS_SEND_EVENTS, BENCH_SQS_SINGLE_EVENTS, BENCH_SENDS,
 * BENCH_STAGE_TIMEOUT_S, BENCH_INFLUXD, BENCH_PROFILE). It imports the BUILT modules from ../dist (bench/ is not
 * part of the build). Everything runs in THIS process except influxd; only 127.0.0.1 is contacted.
 *
 * The events: N valid audit envelopes of about 2 KB of JSON each (a fixed mix of
 * selection.state.changed, navigation.sheet.loaded, object.view.duration, app.model.validated and
 * event.bookmark, with realistic context: 12 apps, 4 sheets each, 150 users, browser details),
 * built from a seeded generator as the JSON text of a request body, parsed, checked with
 * validateEnvelope + checkContent (as the audit API does) and wrapped as the audit API queues them
 * ({kind: 'audit', id, receivedAt, event, meta}, sent with the queued JSON the audit API builds
 * around the body: queuedJson, sent as an EncodedEvent, a new string per send, see QUEUED_JSON). That work is
 * the audit API's and is done before the clock starts. Event times are spread over the last two minutes.
 *
 * Stages (each in a fresh temp directory, one after the other; they are run --rounds times, in
 * turn, and the medians compared, which evens out a machine whose load changes meanwhile):
 *   queue → no-op       LocalEventQueue (journal + fdatasync group commit) with ONE consumer group
 *                       running the real writer handler (makeWriterHandler: decode + validate every
 *                       message, partial batch response) over a destination that only counts.
 *   tsdb baseline       the SAME line protocol (auditPoint + toLine of the same events, built before
 *                       the clock starts; the build time is printed separately) POSTed straight to
 *                       influxd's /write?db=…&precision=ns with fetch, in chunks of 1,000, one request
 *                       at a time (like the writer: one batch in flight per consumer group).
 *   queue → tsdb        the queue and writer handler into TsdbDestination + TsdbWriter (v1),
 *                       built by auditDestinations() from a config parsed with parseConfigText.
 *   tsdb destination    the same TsdbDestination's write() of the events straight, in batches of
 *     (no queue)        --batch-size, one at a time: the tsdb side's own CPU per event (points,
 *                       line protocol, requests), without the intake and the queue around it.
 *   queue → parquet     the same into AuditFileDestination + encodeParquet + DirectorySink.
 *   queue → tablefile   the same into AuditFileDestination + encodeQvd + DirectorySink.
 * Sources send one event per `send`, `--concurrency` sends in flight (the yardstick of issue 14); a
 * send resolves once its event is fdatasync'ed. With `--sends=together` the sends of one event-loop
 * turn go to the queue as one `send`, through the audit API's own `sendTogether` (handler.ts), as
 * the audit API hands its requests to the queue: fewer, larger messages. A stage's time runs from
 * the first send until the destination's write() has returned for the last event (influxd answered
 * 204 / the file is synced and renamed); afterwards, untimed, the result is checked: SELECT
 * count(event_id) in influxd, and the row counts of the written files read back (parquet footer via
 * hyparquet, QVD <NoOfRecords>).
 * Consumer group batching: batchSize --batch-size (the config's maxBatchSize, default 1,000), batch
 * window --window ms (default 50; the config's writeFrequency cannot go below 100 ms, so the bench
 * sets the group's window directly); deliveries at a time (maxInFlight) as the destination's builder
 * says (tsdb: 2, the others 1), as Svc composes its groups. Both tsdb databases are created before their stage, with the
 * retention policy the writer would create, so ensureDatabase only finds it.
 *
 * SQS: fauxqs (in-process emulator, port 0; it binds 0.0.0.0, the SDK talks to 127.0.0.1) and the
 * real SqsEventQueue with Svc's own SQS client (shared/aws/sqs.ts, the audit Lambda's and the
 * forwarder's; maxAttempts 1; queues are created and counted with the AWS SDK's). Three runs, each into its own queue:
 *   packed      N events in send() calls of --sqs-send-events events, default limits (1 MiB);
 *   unpacked    the same sends with maxMessageBytes just above the largest single event, so each
 *               message holds exactly one event (checked);
 *   per-event   send([event]) per event (what the audit API does today), --concurrency in flight,
 *               at most --sqs-single-events events.
 * Printed: the adapter's counters (requests, messages, events) and events per request; the event
 * rates there include fauxqs's own CPU in this process and are not SQS figures.
 *
 * Also printed: the machine (CPU model, cores, Node version), the load average at start and end
 * (other processes competing for the cores make every figure lower and noisier: compare ratios of
 * one run, use --rounds on a busy machine), this process's CPU per stage (100 % = one core) and
 * influxd's CPU during the tsdb stages, and this process's CPU per event (µs/ev: CPU seconds of
 * the stage / events) and influxd's (its CPU seconds in the stage / events). --profile runs the timed window of every queue stage (not the event generation,
 * not the baselines) under V8's CPU profiler, one file per stage and round, and prints the top of
 * each stage's profiles. --profile=heap samples the same windows' allocations instead (V8's
 * sampling heap profiler, every 4 KB, the objects collected before the end included: what each
 * event allocates, short-lived or not) and prints them per function with the KB per event;
 * --profile=survivors leaves out what a young-generation collection freed: what was promoted (or
 * still alive at the end), the part of the allocations that costs the scavenges their copying. The exit code is 1 when a check fails or a stage times out.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { Session } from 'node:inspector/promises';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { basename, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { influxdConfig } from './influxd-config.mjs';
import {
  filesystemOf,
  fmt,
  freePort,
  int,
  median,
  nonNegative,
  oneOf,
  option,
  pct,
  percentile,
  positive,
  processCpuSeconds,
  removeOnExit,
  sampleMemory,
} from './lib.mjs';
import { formatSummary, profileDirectory, summarise } from './profile.mjs';

const LOOPBACK = '127.0.0.1';
const CLIENT_VERSION = '0.3.2';
const MEASUREMENT = 'audit_events';
const RETENTION_POLICY = 'svc_rp';
const RETENTION_HOURS = 240; // the config default 10d

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Built modules
// ---------------------------------------------------------------------------------------------

const dist = new URL('../dist/', import.meta.url);
const load = (path) => import(new URL(path, dist).href);

async function loadSvc() {
  const [
    local,
    handler,
    destinations,
    config,
    logger,
    tracker,
    audit,
    lp,
    pointClock,
    writer,
    envelope,
    sqs,
    messages,
    awsSqs,
    auditApi,
  ] = await Promise.all([
    load('shared/queue/local/index.js'),
    load('shared/destinations/handler.js'),
    load('shared/destinations/registry.js'),
    load('shared/config/load.js'),
    load('shared/logging/logger.js'),
    load('shared/errors/tracker.js'),
    load('shared/destinations/tsdb/mappers.js'),
    load('shared/destinations/tsdb/line-protocol.js'),
    load('shared/queue/point-clock.js'),
    load('shared/destinations/tsdb/writer.js'),
    load('shared/audit/envelope.js'),
    load('shared/queue/sqs.js'),
    load('edge-agent/simulate/messages.js'),
    load('shared/aws/sqs.js'),
    load('shared/audit/handler.js'),
  ]);
  return {
    LocalEventQueue: local.LocalEventQueue,
    makeWriterHandler: handler.makeWriterHandler,
    auditDestinations: destinations.auditDestinations,
    parseConfigText: config.parseConfigText,
    createLogger: logger.createLogger,
    ErrorTracker: tracker.ErrorTracker,
    auditPoint: audit.auditPoint,
    toLine: lp.toLine,
    PointClock: pointClock.PointClock,
    TsdbWriter: writer.TsdbWriter,
    validateEnvelope: envelope.validateEnvelope,
    checkContent: envelope.checkContent,
    SqsEventQueue: sqs.SqsEventQueue,
    LeanSqsClient: awsSqs.LeanSqsClient,
    mulberry32: messages.mulberry32,
    queuedJson: auditApi.queuedJson,
    sendTogether: auditApi.sendTogether,
  };
}

// ---------------------------------------------------------------------------------------------
// Events: ~2 KB envelopes (the shape of test/support/audit.ts's envelope(), filled out)
// ---------------------------------------------------------------------------------------------

function uuidFrom(random) {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16));
  hex[12] = '4';
  hex[16] = '89ab'[Math.floor(random() * 4)];
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const pick = (random, list) => list[Math.floor(random() * list.length)];

const APP_NAMES = [
  'Sales Analysis 2026',
  'Finance Dashboard',
  'Supply Chain KPIs',
  'HR Headcount',
  'Customer 360',
  'Marketing Funnel',
  'Inventory Health',
  'Executive Overview',
  'Operations Daily',
  'Procurement Spend',
  'Service Desk',
  'Quality Control',
];
const SHEET_TITLES = ['Overview', 'Details', 'Trends', 'Regions'];
const OBJECT_TYPES = ['barchart', 'linechart', 'table', 'kpi', 'pivot-table', 'map', 'filterpane', 'combochart'];
const FIELDS = [
  'Region',
  'Country',
  'Product Category',
  'Sales Representative',
  'Fiscal Quarter',
  'Customer Segment',
  'Channel',
  'Warehouse',
];
const VALUES = [
  ['EMEA', 'North America'],
  ['Sweden', 'Norway', 'Denmark', 'Finland'],
  ['Bikes', 'Accessories'],
  ['Anna Lindqvist'],
  ['2026-Q3', '2026-Q4'],
  ['Enterprise', 'SMB'],
  ['Online'],
  ['Göteborg DC'],
];
const FIRST = ['Anna', 'Erik', 'Göran', 'Maria', 'Lars', 'Karin', 'Johan', 'Sofia', 'Per', 'Emma'];
const LAST = [
  'Lindqvist',
  'Sander',
  'Johansson',
  'Nilsson',
  'Berg',
  'Holm',
  'Ek',
  'Strand',
  'Lund',
  'Dahl',
  'Sjöberg',
  'Wallin',
  'Falk',
  'Nyberg',
  'Öberg',
];
const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
];
/** Type mix (cumulative weights). */
const TYPES = [
  ['selection.state.changed', 0.45],
  ['navigation.sheet.loaded', 0.65],
  ['object.view.duration', 0.85],
  ['app.model.validated', 0.95],
  ['event.bookmark', 1],
];

function makeWorld(random) {
  const apps = APP_NAMES.map((name) => ({
    id: uuidFrom(random),
    name,
    sheets: SHEET_TITLES.map((title) => ({
      id: uuidFrom(random),
      title,
      objects: Array.from({ length: 5 }, (_, i) => ({
        id: uuidFrom(random).slice(0, 8),
        type: OBJECT_TYPES[i % OBJECT_TYPES.length],
        title: `${title} ${FIELDS[i % FIELDS.length]} ${i + 1}`,
      })),
    })),
  }));
  const users = Array.from({ length: 150 }, (_, i) => {
    const first = FIRST[i % FIRST.length];
    const last = LAST[Math.floor(i / FIRST.length) % LAST.length];
    return {
      directory: i % 5 === 0 ? 'CONTRACTORS' : 'LAB',
      id: `${first}.${last}`.toLowerCase().replace(/ö/g, 'o'),
      name: `${first} ${last}`,
    };
  });
  return { apps, users };
}

/** One valid envelope of about `target` bytes of JSON. */
function makeEnvelope(random, world, target, timeMs) {
  const r = random();
  const type = TYPES.find(([, w]) => r < w)[0];
  const app = pick(random, world.apps);
  const sheet = pick(random, app.sheets);
  const object = pick(random, sheet.objects);
  const user = pick(random, world.users);
  const txn = uuidFrom(random);
  const env = {
    schemaVersion: 1,
    eventId: uuidFrom(random),
    timestamp: new Date(timeMs).toISOString(),
    type,
    correlationId: txn,
    source: { kind: 'qlik-sense-extension', name: 'audit-qs', version: CLIENT_VERSION },
    payload: {
      context: {
        appId: app.id,
        appName: app.name,
        sheetId: sheet.id,
        sheetName: sheet.title,
        // The audit client sends the user as one string (docs/audit-api.md, payload.context.user).
        user: `UserDirectory=${user.directory}; UserId=${user.id}`,
        host: 'analytics.example.com',
        client: {
          userAgent: pick(random, USER_AGENTS),
          language: 'en-GB',
          viewport: { width: 1920, height: 969 },
          timezone: 'Europe/Stockholm',
        },
      },
      event: {},
    },
  };
  let list;
  let item;
  const event = env.payload.event;
  if (type === 'selection.state.changed') {
    Object.assign(event, {
      selectionTxnId: txn,
      trigger: 'user',
      durationMs: Math.round(40 + random() * 400),
      details: [],
    });
    list = event.details;
    item = (i) => ({
      field: `${FIELDS[i % FIELDS.length]}${i >= FIELDS.length ? ` ${Math.floor(i / FIELDS.length) + 1}` : ''}`,
      values: VALUES[i % VALUES.length],
      state: 'selected',
      cardinality: 120 + i * 7,
    });
  } else if (type === 'navigation.sheet.loaded') {
    Object.assign(event, {
      sheetTitle: sheet.title,
      loadMs: Math.round(200 + random() * 1800),
      previousSheetId: pick(random, app.sheets).id,
      objects: [],
    });
    list = event.objects;
    item = (i) => ({ ...sheet.objects[i % sheet.objects.length], rendered: true, renderMs: 30 + i * 11 });
  } else if (type === 'object.view.duration') {
    Object.assign(event, {
      objectId: object.id,
      objectType: object.type,
      duration: Math.round(random() * 120_000) / 1000,
      leftAt: new Date(timeMs).toISOString(),
      interactions: [],
    });
    list = event.interactions;
    item = (i) => ({
      at: new Date(timeMs - (i + 1) * 1500).toISOString(),
      kind: i % 3 === 0 ? 'hover' : i % 3 === 1 ? 'click' : 'scroll',
      target: `${object.type}:${FIELDS[i % FIELDS.length]}`,
    });
  } else if (type === 'app.model.validated') {
    Object.assign(event, { selectionTxnId: txn, dataStateId: Math.floor(random() * 100_000), fields: [] });
    list = event.fields;
    item = (i) => ({
      name: FIELDS[i % FIELDS.length],
      selectedCount: (i * 3) % 17,
      cardinality: 120 + i * 7,
      locked: false,
    });
  } else {
    Object.assign(event, {
      bookmarkId: uuidFrom(random),
      title: `${user.name.split(' ')[0]}'s ${sheet.title.toLowerCase()} view`,
      action: 'applied',
      fields: [],
    });
    list = event.fields;
    item = (i) => ({ name: FIELDS[i % FIELDS.length], values: VALUES[i % VALUES.length] });
  }
  // JSON length grows by the item and a comma (none before the first item).
  let length = JSON.stringify(env).length;
  for (let i = 0; length < target - 80 && i < 64; i++) {
    const next = item(i);
    length += JSON.stringify(next).length + (list.length > 0 ? 1 : 0);
    list.push(next);
  }
  return env;
}

function makeEvents(svc, n, seed) {
  // mulberry32 (the traffic generator's): every run builds the same mix.
  const random = svc.mulberry32(seed);
  const world = makeWorld(random);
  const now = Date.now();
  const events = [];
  for (let i = 0; i < n; i++) {
    const timeMs = now - 120_000 + Math.floor((i / n) * 120_000);
    // As the audit API has it: the request's body text, parsed.
    const body = JSON.stringify(makeEnvelope(random, world, 1800 + Math.floor(random() * 500), timeMs));
    const structural = svc.validateEnvelope(JSON.parse(body));
    if (!structural.ok) throw new Error(`generated envelope ${i} is invalid: ${JSON.stringify(structural.errors)}`);
    const violations = svc.checkContent(structural.envelope);
    if (violations.length > 0)
      throw new Error(`generated envelope ${i} breaks content rules: ${JSON.stringify(violations)}`);
    const env = structural.envelope;
    // The audit API's queued event (its members in its order) and the queued JSON it builds around the body.
    const queued = {
      kind: 'audit',
      id: env.eventId.toLowerCase(),
      receivedAt: new Date(timeMs + 40).toISOString(),
      event: env,
      meta: { clientIp: '127.0.0.2', clientVersion: CLIENT_VERSION },
    };
    if (!structural.holdsInfinity) {
      const json = svc.queuedJson(queued, body);
      // indexOf flattens the concatenation now, before the clock (see QUEUED_JSON).
      QUEUED_JSON.set(queued, { json, bodyAt: json.indexOf('"event":') });
    }
    events.push(queued);
  }
  return events;
}

/**
 * Each event's JSON as the audit API gives it to the queue (`queuedJson` around the request body,
 * sent as an EncodedEvent), built before the clock starts as the audit API builds it before its send (its
 * ≈ 3 µs are the audit API's). The audit API's text is a new concatenation per request, which the
 * queue flattens into a new copy that dies young; a send here gives a new concatenation of the
 * prebuilt (flat) text's two slices, so the queue does the same. Sending the prebuilt text itself
 * would make the queue flatten an old string once and the copy outlive the stage (≈ 2 KB promoted
 * per event, a GC cost the service does not have); building it at the send would count the audit
 * API's ≈ 3 µs in the queue's figures.
 */
const QUEUED_JSON = new WeakMap();

/** `event` as the audit API sends it: an EncodedEvent with its queued JSON, a new concatenation, when it has one. */
function asSent(event) {
  const queued = QUEUED_JSON.get(event);
  return queued === undefined
    ? event
    : { event, json: queued.json.slice(0, queued.bodyAt) + queued.json.slice(queued.bodyAt) };
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const tempDirs = new Set();
function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}
function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 });
  tempDirs.delete(dir);
}

/** Files under `dir` (recursively) ending in `extension`. */
function filesUnder(dir, extension) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path, extension));
    else if (entry.name.endsWith(extension)) out.push(path);
  }
  return out;
}

/** The <NoOfRecords> of a QVD file, from its XML header only. */
function qvdRows(path) {
  const fd = openSync(path, 'r');
  try {
    let text = '';
    const chunk = Buffer.alloc(64 * 1024);
    for (let position = 0; ; position += chunk.length) {
      const n = readSync(fd, chunk, 0, chunk.length, position);
      if (n === 0) break;
      const part = chunk.subarray(0, n);
      const nul = part.indexOf(0);
      text += part.subarray(0, nul === -1 ? n : nul).toString('utf8');
      if (nul !== -1) break;
    }
    const m = /<NoOfRecords>(\d+)<\/NoOfRecords>/.exec(text);
    if (m === null) throw new Error(`${path}: no <NoOfRecords> in the header`);
    return Number(m[1]);
  } finally {
    closeSync(fd);
  }
}

async function parquetRowsOf() {
  const { parquetMetadata } = await import('hyparquet');
  return (path) => {
    const data = readFileSync(path);
    return Number(parquetMetadata(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)).num_rows);
  };
}

/** Rows, files and bytes of the files a file destination wrote. */
async function countFileRows(dir, extension) {
  const files = filesUnder(dir, extension);
  const rowsOf = extension === '.parquet' ? await parquetRowsOf() : qvdRows;
  let rows = 0;
  let bytes = 0;
  for (const f of files) {
    rows += rowsOf(f);
    bytes += statSync(f).size;
  }
  return { rows, files: files.length, bytes };
}

// ---------------------------------------------------------------------------------------------
// influxd (Debian's 1.6 build), with the tests' configuration (influxd-config.mjs)
// ---------------------------------------------------------------------------------------------

let influxdChild;

async function ping(url) {
  try {
    const res = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(1_000) });
    await res.arrayBuffer();
    return res.status === 204;
  } catch {
    return false;
  }
}

async function startInfluxd(binary) {
  const dir = tempDir('svc-bench-influxd-');
  let lastError;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const httpPort = await freePort();
    let rpcPort = await freePort();
    while (rpcPort === httpPort) rpcPort = await freePort();
    const configPath = join(dir, 'influxdb.conf');
    writeFileSync(configPath, influxdConfig({ dir, host: LOOPBACK, httpPort, rpcPort }));
    const child = spawn(binary, ['-config', configPath], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    influxdChild = child;
    let output = '';
    const keep = (chunk) => (output = (output + chunk.toString('utf8')).slice(-8000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let exited = false;
    const exit = new Promise((resolve) =>
      child.once('exit', () => {
        exited = true;
        resolve();
      }),
    );
    child.once('error', (err) => {
      output += `\nspawn error: ${err.message}`;
      exited = true;
    });
    const url = `http://${LOOPBACK}:${httpPort}`;
    const deadline = Date.now() + 20_000;
    while (!exited && Date.now() < deadline && !(await ping(url))) await sleep(100);
    if (!exited && (await ping(url))) {
      const version = execFileSync(binary, ['version'], { encoding: 'utf8' }).trim();
      return {
        url,
        port: httpPort,
        pid: child.pid,
        version,
        stop: async () => {
          if (!exited) {
            child.kill('SIGTERM');
            const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
            await exit;
            clearTimeout(timer);
          }
          influxdChild = undefined;
          removeDir(dir);
        },
      };
    }
    if (!exited) {
      child.kill('SIGKILL');
      await exit;
    }
    lastError = new Error(`influxd did not start (attempt ${attempt}):\n${output.slice(-2000)}`);
    if (!/address already in use/i.test(output)) break;
  }
  influxdChild = undefined;
  removeDir(dir);
  throw lastError;
}

async function influxQuery(influx, q, db) {
  const params = new URLSearchParams({ q });
  if (db !== undefined) params.set('db', db);
  const res = await fetch(`${influx.url}/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: params.toString(),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`influxd query failed: HTTP ${res.status}: ${text.trim()} (q=${q})`);
  const json = JSON.parse(text);
  const error = json.error ?? json.results?.find((r) => r.error)?.error;
  if (error) throw new Error(`influxd query error: ${error} (q=${q})`);
  return json;
}

/** The database with the default retention policy TsdbWriter.ensureDatabase() would create. */
async function createDatabase(influx, db) {
  await influxQuery(
    influx,
    `CREATE DATABASE "${db}" WITH DURATION ${RETENTION_HOURS}h REPLICATION 1 NAME "${RETENTION_POLICY}"`,
  );
}

async function countPoints(influx, db) {
  const json = await influxQuery(influx, `SELECT count(event_id) FROM ${MEASUREMENT}`, db);
  return Number(json.results?.[0]?.series?.[0]?.values?.[0]?.[1] ?? 0);
}

async function postLines(influx, db, body) {
  const params = new URLSearchParams({ db, precision: 'ns' });
  const res = await fetch(`${influx.url}/write?${params.toString()}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain; charset=utf-8' },
    body,
  });
  const text = await res.text();
  if (res.status !== 204) throw new Error(`influxd write failed: HTTP ${res.status}: ${text.trim().slice(0, 500)}`);
}

// ---------------------------------------------------------------------------------------------
// Stages
// ---------------------------------------------------------------------------------------------

function svcConfig(svc, { events, influx, dbName, dir, batchSize }) {
  const yaml = [
    'Svc:',
    '  auditEvents:',
    '    enable: true',
    '    queue:',
    `      capacity: ${Math.min(10_000_000, events + 10_000)}`,
    '    destination:',
    '      enable: true',
    '      type: tsdb,parquet,tablefile',
    '      tsdb:',
    `        measurementName: ${MEASUREMENT}`,
    `        maxBatchSize: ${batchSize}`,
    '        writeFrequency: 100',
    '      parquet:',
    `        exportDirectory: ${JSON.stringify(join(dir, 'parquet'))}`,
    `        maxBatchSize: ${batchSize}`,
    '        writeFrequency: 100',
    '      tablefile:',
    `        exportDirectory: ${JSON.stringify(join(dir, 'tablefile'))}`,
    `        maxBatchSize: ${batchSize}`,
    '        writeFrequency: 100',
    '  tsdbConfig:',
    '    enable: true',
    `    host: ${LOOPBACK}`,
    `    port: ${influx?.port ?? 8086}`,
    '    version: 1',
    '    maxBatchSize: 1000',
    '    v1Config:',
    `      dbName: ${dbName}`,
    '      retentionPolicy:',
    `        name: ${RETENTION_POLICY}`,
    `        duration: ${RETENTION_HOURS / 24}d`,
  ].join('\n');
  return svc.parseConfigText(`${yaml}\n`, 'bench.yaml', {}).config;
}

/** The destination named `type`, as auditDestinations() builds it from the config. */
function configuredDestination(svc, ctx, type, { influx, dbName, dir }) {
  const config = svcConfig(svc, { events: ctx.events.length, influx, dbName, dir, batchSize: ctx.batchSize });
  const found = svc
    .auditDestinations({ config, logger: ctx.log, errors: ctx.errors, clock: new svc.PointClock() })
    .find((d) => d.destination.name === type);
  if (!found) throw new Error(`auditDestinations() built no ${type} destination`);
  return found;
}

/** A destination that counts what the wrapped one wrote and notes when all `target` events are in. */
function counting(inner, target) {
  const stats = { written: 0, failed: 0, batches: 0, largest: 0, doneAt: NaN };
  let finish;
  const done = new Promise((resolve) => (finish = resolve));
  return {
    stats,
    done,
    destination: {
      name: inner.name,
      async write(events) {
        const failed = await inner.write(events);
        stats.written += events.length - failed.size;
        stats.failed += failed.size;
        stats.batches += 1;
        stats.largest = Math.max(stats.largest, events.length);
        if (stats.written >= target && Number.isNaN(stats.doneAt)) {
          stats.doneAt = performance.now();
          finish();
        }
        return failed;
      },
    },
  };
}

/** N events through a fresh LocalEventQueue with one consumer group over `destination`. */
async function queueStage(svc, ctx, name, destination, events, { influxPid, maxInFlight = 1 } = {}) {
  const dir = tempDir('svc-bench-queue-');
  const counter = counting(destination, events.length);
  const queue = new svc.LocalEventQueue({
    directory: dir,
    capacity: events.length + 10_000,
    maxReceiveCount: 3,
    log: ctx.log,
    drainTimeoutMs: 5_000,
    groups: [
      {
        name: destination.name,
        handler: svc.makeWriterHandler({ destination: counter.destination, claimCheck: null, log: ctx.log }),
        batchSize: ctx.batchSize,
        batchWindowMs: ctx.windowMs,
        maxInFlight,
      },
    ],
  });
  await queue.start();
  const latencies = new Float64Array(events.length);
  let next = 0;
  let sendErrors = 0;
  let firstSendError = '';
  const influxCpu0 = influxPid ? processCpuSeconds(influxPid) : NaN;
  const memory = sampleMemory(process.pid);
  const profiling = ctx.profiles ? new Session() : null;
  if (profiling) {
    profiling.connect();
    if (ctx.profiles.kind !== 'cpu') {
      // Every sampled allocation, also the ones collected before the end: what the window allocates, short-lived or not.
      await profiling.post('HeapProfiler.enable');
      await profiling.post('HeapProfiler.startSampling', {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: ctx.profiles.kind === 'heap',
      });
    } else {
      await profiling.post('Profiler.enable');
      await profiling.post('Profiler.start');
    }
  }
  // --sends=together: the sends of one event-loop turn go to the queue as one, through the audit
  // API's own sendTogether; --sends=single (the default): each event is a send of its own.
  const send = ctx.sends === 'together' ? svc.sendTogether(queue) : (event) => queue.send([event]);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const sender = async () => {
    while (next < events.length) {
      const i = next++;
      const started = performance.now();
      try {
        await send(asSent(events[i]));
      } catch (err) {
        sendErrors += 1;
        firstSendError ||= err instanceof Error ? err.message : String(err);
      }
      latencies[i] = performance.now() - started;
    }
  };
  await Promise.all(Array.from({ length: Math.min(ctx.concurrency, events.length) }, sender));
  const sentAt = performance.now();
  let timer;
  const timedOut = await Promise.race([
    counter.done.then(() => false),
    new Promise((resolve) => (timer = setTimeout(() => resolve(true), ctx.timeoutMs))),
  ]);
  clearTimeout(timer);
  const end = timedOut ? performance.now() : counter.stats.doneAt;
  const cpu = process.cpuUsage(cpu0);
  if (profiling) {
    const heap = ctx.profiles.kind !== 'cpu';
    const { profile } = heap
      ? await profiling.post('HeapProfiler.stopSampling')
      : await profiling.post('Profiler.stop');
    profiling.disconnect();
    const file = join(
      ctx.profiles.dir,
      `${name.replace(/[^a-z]+/g, '-')}-${ctx.profiles.files.length + 1}.${heap ? 'heapprofile' : 'cpuprofile'}`,
    );
    writeFileSync(file, JSON.stringify(profile));
    ctx.profiles.files.push({ name, file, events: events.length });
  }
  const influxCpu = influxPid ? processCpuSeconds(influxPid) - influxCpu0 : NaN;
  const { rssMb, peakMb } = memory.stop();
  await queue.stop();
  removeDir(dir);
  const seconds = (end - t0) / 1000;
  const sorted = latencies.sort();
  return {
    name,
    events: events.length,
    written: counter.stats.written,
    seconds,
    eps: counter.stats.written / seconds,
    sendEps: events.length / ((sentAt - t0) / 1000),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    batches: counter.stats.batches,
    meanBatch: counter.stats.batches > 0 ? (counter.stats.written + counter.stats.failed) / counter.stats.batches : NaN,
    largest: counter.stats.largest,
    failed: counter.stats.failed,
    cpu: (cpu.user + cpu.system) / 1e6 / seconds,
    cpuUsPerEvent: (cpu.user + cpu.system) / counter.stats.written,
    influxCpu: influxCpu / seconds,
    rssMb,
    peakMb,
    notes: [
      timedOut ? `TIMED OUT after ${ctx.timeoutMs / 1000} s` : '',
      sendErrors > 0 ? `${sendErrors} send errors (${firstSendError})` : '',
      counter.stats.failed > 0 ? `${counter.stats.failed} events reported failed` : '',
    ].filter(Boolean),
    ok: !timedOut && sendErrors === 0,
  };
}

async function noopStage(svc, ctx, events) {
  return queueStage(svc, ctx, 'queue → no-op', { name: 'noop', write: () => Promise.resolve(new Set()) }, events);
}

/** Runs `work` with this process's CPU and memory and influxd's CPU measured over it. */
async function measured(influx, work) {
  const influxCpu0 = processCpuSeconds(influx.pid);
  const memory = sampleMemory(process.pid);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const { rssMb, peakMb } = memory.stop();
  return {
    seconds,
    cpuUs: cpu.user + cpu.system,
    influxCpu: processCpuSeconds(influx.pid) - influxCpu0,
    rssMb,
    peakMb,
  };
}

/**
 * The row of a stage that timed its own writes of `events` (`measured`, no queue: no send rate or
 * latency), checked against the points influxd holds (`expected`).
 */
function writesRow(name, events, failed, batching, m, stored, expected) {
  const ok = stored === expected && failed === 0;
  return {
    name,
    events,
    written: events - failed,
    seconds: m.seconds,
    eps: (events - failed) / m.seconds,
    sendEps: NaN,
    p50: NaN,
    p99: NaN,
    ...batching,
    failed,
    cpu: m.cpuUs / 1e6 / m.seconds,
    cpuUsPerEvent: m.cpuUs / events,
    influxCpu: m.influxCpu / m.seconds,
    rssMb: m.rssMb,
    peakMb: m.peakMb,
    check: `${int(stored)} points`,
    notes: ok
      ? []
      : [`influxd holds ${stored} points, not ${expected}${failed > 0 ? `; ${failed} reported failed` : ''}`],
    ok,
  };
}

async function tsdbBaselineStage(svc, ctx, influx, events, db) {
  await createDatabase(influx, db);
  const clock = new svc.PointClock();
  const b0 = performance.now();
  const lines = events.map((e) => svc.toLine(svc.auditPoint(e, MEASUREMENT, [], clock)));
  const buildMs = performance.now() - b0;
  const bodies = [];
  for (let i = 0; i < lines.length; i += 1000) bodies.push(lines.slice(i, i + 1000).join('\n'));
  const bytes = bodies.reduce((n, b) => n + Buffer.byteLength(b), 0);
  const m = await measured(influx, async () => {
    for (const body of bodies) await postLines(influx, db, body);
  });
  const stored = await countPoints(influx, db);
  const batching = { batches: bodies.length, meanBatch: events.length / bodies.length, largest: 1000 };
  return {
    ...writesRow('tsdb baseline (fetch)', events.length, 0, batching, m, stored, events.length),
    buildMs,
    lineBytes: bytes,
  };
}

async function tsdbStage(svc, ctx, influx, events, db) {
  await createDatabase(influx, db);
  const { destination, maxInFlight } = configuredDestination(svc, ctx, 'tsdb', { influx, dbName: db, dir: tmpdir() });
  const r = await queueStage(svc, ctx, 'queue → tsdb', destination, events, { influxPid: influx.pid, maxInFlight });
  const stored = await countPoints(influx, db);
  r.check = `${int(stored)} points`;
  if (stored !== events.length) {
    r.notes.push(`influxd holds ${stored} points, not ${events.length}`);
    r.ok = false;
  }
  return r;
}

/** The tsdb destination alone: its write() of the events in batches, one at a time, no queue. */
async function tsdbDestinationStage(svc, ctx, influx, events, db) {
  await createDatabase(influx, db);
  const { destination } = configuredDestination(svc, ctx, 'tsdb', { influx, dbName: db, dir: tmpdir() });
  await destination.write(events.slice(0, 1)); // the first write creates the database (prepare): not timed
  const rest = events.slice(1);
  let failed = 0;
  const m = await measured(influx, async () => {
    for (let i = 0; i < rest.length; i += ctx.batchSize)
      failed += (await destination.write(rest.slice(i, i + ctx.batchSize))).size;
  });
  const stored = await countPoints(influx, db);
  const batch = Math.min(ctx.batchSize, rest.length);
  return writesRow(
    'tsdb dest (no queue)',
    rest.length,
    failed,
    { batches: Math.ceil(rest.length / ctx.batchSize), meanBatch: batch, largest: batch },
    m,
    stored,
    events.length,
  );
}

async function fileStage(svc, ctx, type, events) {
  const dir = tempDir(`svc-bench-${type}-`);
  const { destination, maxInFlight } = configuredDestination(svc, ctx, type, {
    influx: undefined,
    dbName: 'unused',
    dir,
  });
  const r = await queueStage(svc, ctx, `queue → ${type}`, destination, events, { maxInFlight });
  const extension = type === 'parquet' ? '.parquet' : '.qvd';
  const { rows, files, bytes } = await countFileRows(join(dir, type), extension);
  removeDir(dir);
  r.check = `${int(rows)} rows in ${files} files, ${fmt(bytes / 2 ** 20, 1)} MiB`;
  if (rows !== events.length) {
    r.notes.push(`the files hold ${rows} rows, not ${events.length}`);
    r.ok = false;
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// SQS (fauxqs)
// ---------------------------------------------------------------------------------------------

async function sqsStage(svc, ctx, events) {
  const [{ startFauxqs }, { SQSClient, CreateQueueCommand, GetQueueAttributesCommand }] = await Promise.all([
    import('fauxqs'),
    import('@aws-sdk/client-sqs'),
  ]);
  const server = await startFauxqs({ port: 0, logger: false });
  const endpoint = `http://${LOOPBACK}:${server.port}`;
  // The SDK's client creates and counts the queues; the adapter sends with Svc's own.
  const client = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const sender = new svc.LeanSqsClient({
    endpoint,
    region: 'us-east-1',
    credentials: () => Promise.resolve({ accessKeyId: 'local', secretAccessKey: 'local' }),
    maxAttempts: 1,
  });
  const results = [];
  try {
    // Largest single packed body, and the smallest two neighbours packed together.
    const frame = '{"v":1,"events":[]}'.length;
    const single = events.map((e) => Buffer.byteLength(JSON.stringify(e)) + frame);
    const largest = Math.max(...single);
    let smallestPair = Infinity;
    for (let i = 1; i < single.length; i++)
      smallestPair = Math.min(smallestPair, single[i - 1] + single[i] - frame + 1);
    const unpackedLimit = Math.max(1024, largest + 64);
    if (unpackedLimit - 64 >= smallestPair) throw new Error('events too uneven in size to force one event per message');

    const run = async (name, options, chunks, concurrency) => {
      const created = await client.send(new CreateQueueCommand({ QueueName: `svc-bench-${name}` }));
      const queue = new svc.SqsEventQueue({ client: sender, queueUrl: created.QueueUrl, claimCheck: null, ...options });
      let next = 0;
      let errors = 0;
      let firstError = '';
      const t0 = performance.now();
      const worker = async () => {
        while (next < chunks.length) {
          const chunk = chunks[next++];
          try {
            await queue.send(chunk);
          } catch (err) {
            errors += 1;
            firstError ||= err instanceof Error ? err.message : String(err);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, chunks.length) }, worker));
      const seconds = (performance.now() - t0) / 1000;
      const attrs = await client.send(
        new GetQueueAttributesCommand({ QueueUrl: created.QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
      );
      const held = Number(attrs.Attributes?.ApproximateNumberOfMessages ?? NaN);
      const c = queue.counters;
      const events = chunks.reduce((n, ch) => n + ch.length, 0);
      const notes = [
        errors > 0 ? `${errors} send errors (${firstError})` : '',
        held !== c.messages ? `fauxqs holds ${held} messages, counters say ${c.messages}` : '',
        c.events !== events ? `${c.events} of ${events} events sent` : '',
      ].filter(Boolean);
      results.push({ name, sends: chunks.length, events, ...c, seconds, held, notes, ok: notes.length === 0 });
    };

    const perSend = Math.max(1, Math.round(ctx.sqsSendEvents));
    const chunks = [];
    for (let i = 0; i < events.length; i += perSend) chunks.push(events.slice(i, i + perSend));
    await run('packed', {}, chunks, 1);
    await run('unpacked', { maxMessageBytes: unpackedLimit }, chunks, 1);
    const singles = events.slice(0, Math.min(events.length, Math.round(ctx.sqsSingleEvents))).map((e) => [e]);
    await run('per-event', {}, singles, ctx.concurrency);
    const unpacked = results.find((r) => r.name === 'unpacked');
    if (unpacked && unpacked.messages !== unpacked.events) {
      unpacked.notes.push('not one event per message');
      unpacked.ok = false;
    }
    return { results, unpackedLimit, largest };
  } finally {
    client.destroy();
    sender.destroy();
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

const HEADER = `${'stage'.padEnd(22)} ${'events/s'.padStart(9)} ${'time s'.padStart(7)} ${'sends/s'.padStart(8)} ${'send p50'.padStart(9)} ${'send p99'.padStart(9)} ${'batches'.padStart(7)} ${'ev/batch'.padStart(8)} ${'node CPU'.padStart(8)} ${'µs/ev'.padStart(5)} ${'influxd'.padStart(7)} ${'RSS MB'.padStart(6)} ${'peak MB'.padStart(7)}  check`;

function printRow(r) {
  const ms = (n) => (Number.isFinite(n) ? `${fmt(n)} ms` : 'n/a');
  console.log(
    `${r.name.padEnd(22)} ${int(r.eps).padStart(9)} ${fmt(r.seconds).padStart(7)} ${int(r.sendEps).padStart(8)} ${ms(r.p50).padStart(9)} ${ms(r.p99).padStart(9)} ${String(r.batches).padStart(7)} ${fmt(r.meanBatch, 0).padStart(8)} ${pct(r.cpu).padStart(8)} ${fmt(r.cpuUsPerEvent, 0).padStart(5)} ${pct(r.influxCpu).padStart(7)} ${fmt(r.rssMb, 0).padStart(6)} ${fmt(r.peakMb, 0).padStart(7)}  ${r.check ?? `${int(r.written)} acked`}${r.notes.length > 0 ? `   ${r.notes.join('; ')}` : ''}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

async function main() {
  const n = Math.round(positive('events', 'BENCH_EVENTS', 20_000));
  const concurrency = Math.round(positive('concurrency', 'BENCH_CONCURRENCY', 32));
  const batchSize = Math.round(positive('batch-size', 'BENCH_BATCH_SIZE', 1000));
  const windowMs = nonNegative('window', 'BENCH_BATCH_WINDOW_MS', 50);
  const rounds = Math.round(positive('rounds', 'BENCH_ROUNDS', 3));
  const warmupEvents = Math.round(nonNegative('warmup-events', 'BENCH_WARMUP_EVENTS', 2000));
  const sqsSendEvents = Math.round(positive('sqs-send-events', 'BENCH_SQS_SEND_EVENTS', 1000));
  const sqsSingleEvents = Math.round(positive('sqs-single-events', 'BENCH_SQS_SINGLE_EVENTS', 5000));
  const timeoutMs = positive('timeout', 'BENCH_STAGE_TIMEOUT_S', 60) * 1000;
  const sends = oneOf('sends', 'BENCH_SENDS', 'single', ['single', 'together']);
  const influxdBinary = option('influxd', 'BENCH_INFLUXD', '/usr/bin/influxd');
  const stages = new Set(
    option('stages', 'BENCH_STAGES', 'queue,tsdb,parquet,tablefile,sqs')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  for (const s of stages)
    if (!['queue', 'tsdb', 'parquet', 'tablefile', 'sqs'].includes(s))
      throw new Error(`unknown stage "${s}" (queue, tsdb, parquet, tablefile, sqs)`);
  if (n > 1_000_000) throw new Error('--events must be at most 1,000,000');
  if (batchSize > 100_000) throw new Error('--batch-size must be at most 100,000 (the config limit)');

  const svc = await loadSvc();
  // Info level like a production service; the lines go nowhere.
  const devNull = new Writable({ write: (_chunk, _enc, done) => done() });
  const { logger: log } = await svc.createLogger({ level: 'info', destination: devNull, pretty: false });
  const errors = new svc.ErrorTracker({ enabled: true, log });

  const cpu = cpus();
  const loadAtStart = loadavg();
  console.log('pipeline benchmark: durable local queue → writer handler → destination');
  console.log(
    `machine     ${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${platform()} ${release()}, Node ${process.version}`,
  );
  console.log(
    `load avg    ${loadAtStart.map((l) => l.toFixed(2)).join(' ')} (1/5/15 min) at start${loadAtStart[0] > cpu.length / 2 ? '  ← the machine is busy: expect lower, noisier figures' : ''}`,
  );

  const g0 = performance.now();
  const events = makeEvents(svc, n, 1);
  const warmup = warmupEvents > 0 ? makeEvents(svc, warmupEvents, 2) : [];
  const sizes = events.map((e) => Buffer.byteLength(JSON.stringify(e.event))).sort((a, b) => a - b);
  const typeCounts = new Map();
  for (const e of events) typeCounts.set(e.event.type, (typeCounts.get(e.event.type) ?? 0) + 1);
  console.log(
    `events      ${int(n)} envelopes, JSON ${int(percentile(sizes, 50))} B median (${int(sizes[0])}-${int(sizes[sizes.length - 1])}), all pass validateEnvelope + checkContent (generated in ${fmt((performance.now() - g0) / 1000)} s)`,
  );
  console.log(`            mix: ${[...typeCounts].map(([t, c]) => `${t} ${Math.round((c / n) * 100)} %`).join(', ')}`);
  const shape =
    sends === 'single'
      ? 'one event per send()'
      : "the sends of one event-loop turn as one send() (the audit API's sendTogether)";
  console.log(`sources     ${shape}, ${concurrency} sources in flight; a send resolves after fdatasync`);
  console.log(
    `batching    consumer group batchSize ${batchSize} (config maxBatchSize), batch window ${windowMs} ms; tsdbConfig.maxBatchSize 1000`,
  );
  const fsType = filesystemOf(tmpdir());
  console.log(`temp dirs   ${tmpdir()} (${fsType}): queue journals, files, influxd data`);
  console.log(
    `rounds      ${rounds}${warmup.length > 0 ? `, after a warmup of ${int(warmup.length)} events through each path (not counted)` : ''}; stage timeout ${timeoutMs / 1000} s`,
  );

  const profileKind = option('profile', 'BENCH_PROFILE', 'false');
  if (!['false', 'true', 'cpu', 'heap', 'survivors'].includes(profileKind))
    throw new Error('--profile must be given alone (CPU), as --profile=cpu, --profile=heap or --profile=survivors');
  const profiles =
    profileKind !== 'false'
      ? { dir: profileDirectory('pipeline'), files: [], kind: profileKind === 'true' ? 'cpu' : profileKind }
      : null;
  const ctx = {
    events,
    log,
    errors,
    concurrency,
    sends,
    batchSize,
    windowMs,
    timeoutMs,
    sqsSendEvents,
    sqsSingleEvents,
    profiles,
  };
  const wctx = { ...ctx, events: warmup, profiles: null };
  const needInflux = stages.has('tsdb');
  let influx;
  const results = [];
  let failed = false;
  try {
    if (needInflux) {
      influx = await startInfluxd(influxdBinary);
      console.log(
        `influxd     ${influx.version} at ${influx.url} (pid ${influx.pid}), fresh temp dirs, wal-fsync-delay 0s`,
      );
    }
    console.log('');

    if (warmup.length > 0) {
      if (stages.has('queue')) await noopStage(svc, wctx, warmup);
      if (needInflux) {
        await tsdbBaselineStage(svc, wctx, influx, warmup, 'bench_warmup_base');
        await tsdbStage(svc, wctx, influx, warmup, 'bench_warmup_svc');
      }
      if (stages.has('parquet')) await fileStage(svc, wctx, 'parquet', warmup);
      if (stages.has('tablefile')) await fileStage(svc, wctx, 'tablefile', warmup);
    }

    if ([...stages].some((s) => s !== 'sqs')) console.log(HEADER);
    for (let round = 1; round <= rounds; round++) {
      const record = (r) => {
        results.push({ ...r, round });
        printRow(r);
        if (!r.ok) failed = true;
      };
      if (stages.has('queue')) record(await noopStage(svc, ctx, events));
      if (needInflux) {
        record(await tsdbBaselineStage(svc, ctx, influx, events, `bench_base_${round}`));
        record(await tsdbStage(svc, ctx, influx, events, `bench_svc_${round}`));
        record(await tsdbDestinationStage(svc, ctx, influx, events, `bench_dest_${round}`));
      }
      if (stages.has('parquet')) record(await fileStage(svc, ctx, 'parquet', events));
      if (stages.has('tablefile')) record(await fileStage(svc, ctx, 'tablefile', events));
    }

    const names = [...new Set(results.map((r) => r.name))];
    const eps = new Map(names.map((name) => [name, median(results.filter((r) => r.name === name).map((r) => r.eps))]));
    if (results.length > 0) {
      console.log('');
      if (rounds > 1) {
        console.log(`medians of ${rounds} rounds (events/s)`);
        for (const name of names) console.log(`  ${name.padEnd(22)} ${int(eps.get(name)).padStart(9)}`);
        console.log('');
      }
      const ratio = (a, b, label) => {
        if (eps.has(a) && eps.has(b)) console.log(`${label.padEnd(38)} ×${fmt(eps.get(a) / eps.get(b))}`);
      };
      if (needInflux) {
        const bases = results.filter((r) => r.name === 'tsdb baseline (fetch)');
        const buildMs = median(bases.map((r) => r.buildMs));
        const withBuild = median(bases.map((r) => r.events / (r.seconds + r.buildMs / 1000)));
        console.log(
          `line protocol  auditPoint + toLine of ${int(n)} events: ${fmt(buildMs, 0)} ms (${int(n / (buildMs / 1000))} events/s; not in the baseline's time), ${fmt(bases[0].lineBytes / n, 0)} B per line`,
        );
        console.log(`               baseline with that build counted in: ${int(withBuild)} events/s`);
        ratio('queue → tsdb', 'tsdb baseline (fetch)', 'Svc-tsdb / baseline (events/s)');
        ratio('tsdb dest (no queue)', 'tsdb baseline (fetch)', 'tsdb destination alone / baseline');
        if (eps.has('queue → tsdb'))
          console.log(
            `${'Svc-tsdb / (baseline + line build)'.padEnd(38)} ×${fmt(eps.get('queue → tsdb') / withBuild)}`,
          );
      }
      ratio('queue → tsdb', 'queue → no-op', 'queue → tsdb / queue → no-op');
      ratio('queue → parquet', 'queue → no-op', 'queue → parquet / queue → no-op');
      ratio('queue → tablefile', 'queue → no-op', 'queue → tablefile / queue → no-op');
      const cpuPerEvent = names.map((name) => [
        name,
        median(results.filter((r) => r.name === name).map((r) => r.cpuUsPerEvent)),
      ]);
      console.log(
        `node CPU per event (median, µs)        ${cpuPerEvent.map(([name, us]) => `${name} ${fmt(us, 1)}`).join(', ')}`,
      );
      // influxd's CPU seconds in the stage over its events: the same line protocol costs it the same
      // whoever posts it, so node's share of the 2 cores is what is left beside this.
      const influxPerEvent = names
        .map((name) => [
          name,
          median(
            results
              .filter((r) => r.name === name && Number.isFinite(r.influxCpu))
              .map((r) => (r.influxCpu * r.seconds * 1e6) / r.written),
          ),
        ])
        .filter(([, us]) => Number.isFinite(us));
      if (influxPerEvent.length > 0)
        console.log(
          `influxd CPU per event (median, µs)     ${influxPerEvent.map(([name, us]) => `${name} ${fmt(us, 1)}`).join(', ')}`,
        );
      const tracked = errors.summary();
      if (tracked.total > 0) console.log(`tracked errors: ${JSON.stringify(tracked.details)}`);
    }
  } finally {
    await influx?.stop();
  }

  if (stages.has('sqs')) {
    console.log('');
    const sqs = await sqsStage(svc, ctx, events);
    console.log(
      `SQS         SqsEventQueue → fauxqs (in this process); packed/unpacked: send() of ${sqsSendEvents} events, one send at a time (adapter concurrency 4); per-event: ${concurrency} in flight`,
    );
    console.log(
      `            unpacked = maxMessageBytes ${int(sqs.unpackedLimit)} (largest single-event body ${int(sqs.largest)} B): one event per message`,
    );
    console.log(
      `${'run'.padEnd(10)} ${'events'.padStart(7)} ${'sends'.padStart(6)} ${'requests'.padStart(8)} ${'messages'.padStart(8)} ${'ev/request'.padStart(10)} ${'ev/message'.padStart(10)} ${'msg/request'.padStart(11)} ${'retries'.padStart(7)} ${'events/s'.padStart(9)}`,
    );
    for (const r of sqs.results) {
      console.log(
        `${r.name.padEnd(10)} ${String(r.events).padStart(7)} ${String(r.sends).padStart(6)} ${String(r.requests).padStart(8)} ${String(r.messages).padStart(8)} ${fmt(r.events / r.requests, 1).padStart(10)} ${fmt(r.events / r.messages, 1).padStart(10)} ${fmt(r.messages / r.requests, 1).padStart(11)} ${String(r.retries).padStart(7)} ${int(r.events / r.seconds).padStart(9)}${r.notes.length > 0 ? `   ${r.notes.join('; ')}` : ''}`,
      );
      if (!r.ok) failed = true;
    }
    const [packed, unpacked, single] = sqs.results;
    console.log(
      `packed / unpacked    events per request ×${fmt(packed.events / packed.requests / (unpacked.events / unpacked.requests), 1)}`,
    );
    console.log(
      `packed / per-event   events per request ×${fmt(packed.events / packed.requests / (single.events / single.requests), 1)}`,
    );
  }

  if (profiles) {
    // The top of each stage's profile per round, by function (bench/profile.mjs reads them again, by module too).
    for (const name of [...new Set(profiles.files.map((f) => f.name))]) {
      const dir = join(profiles.dir, name.replace(/[^a-z]+/g, '-'));
      mkdirSync(dir, { recursive: true });
      for (const f of profiles.files.filter((p) => p.name === name)) renameSync(f.file, join(dir, basename(f.file)));
      console.log('');
      console.log(`profile     ${name}, the timed windows of ${rounds} round(s): ${dir}`);
      for (const file of readdirSync(dir).sort()) {
        const summary = summarise(join(dir, file), 20);
        const events = profiles.files.find((f) => basename(f.file) === file)?.events ?? NaN;
        // A heap profile of the window holds every sampled allocation (collected ones too), not only the live ones.
        const what =
          profiles.kind === 'survivors'
            ? 'the sampled allocations of the window that outlived a young-generation collection (promoted, or alive at its end)'
            : 'every sampled allocation of the window';
        console.log(
          `  ${file}${summary.kind === 'heap' ? `: ${what}, ${fmt(summary.totalBytes / events / 1024, 1)} KB per event` : ''}`,
        );
        // (A heap summary's first line says "live allocations": not so here, the line above says what it holds.)
        for (const line of formatSummary(summary, { by: 'function', indent: '    ' }).slice(
          summary.kind === 'heap' ? 1 : 0,
        ))
          console.log(line);
      }
    }
  }

  const loadAtEnd = loadavg();
  console.log('');
  console.log(`load avg    ${loadAtEnd.map((l) => l.toFixed(2)).join(' ')} (1/5/15 min) at the end`);
  if (failed) process.exitCode = 1;
}

removeOnExit(tempDirs, () => {
  try {
    influxdChild?.kill('SIGKILL');
  } catch {
    // already gone
  }
});

// The SDK's notice that its releases after January 2027 need Node 22 says nothing about this run.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
await main();
