/**
 * Throughput and latency of the audit API (POST /api/v1/audit-event) in local mode, against a
 * baseline measured in the same run.
 *
 *   npm run build && node bench/audit-api.mjs [--duration=10] [--warmup=3] [--concurrency=32] [--ips=16] [--rounds=1] [--durable]
 *                                             [--servers=Svc,Svc+disk] [--profile] [--threads]
 *
 * (or BENCH_DURATION_S, BENCH_WARMUP_S, BENCH_CONCURRENCY, BENCH_CLIENT_IPS, BENCH_MAX_REQUESTS, BENCH_ROUNDS,
 * BENCH_DURABLE=1). With --rounds=N the servers are measured in turn N times (baseline, Svc, baseline,
 * Svc, …) and the medians are compared, which evens out a machine whose load changes meanwhile.
 * It imports the BUILT modules from ../dist (bench/ is not part of the build).
 *
 * Servers, one after the other, each in THIS process, listening on 127.0.0.1:
 *   baseline  a bare node:http server: reads the body, JSON.parse, answers 202 with a small JSON body.
 *   Svc       the real local gateway (functions/local/gateway/) in front of the real audit handler
 *             (makeAuditHandlers: CORS, rate limit ON, bearer token, schema (schema-check.ts) + content checks,
 *             version check), composed like functions/local/audit.ts, with a queue that takes each
 *             event and discards it, so the figures are the API's, not a writer's.
 *   Svc+disk  (with --durable) the same with the durable local queue (LocalEventQueue: journal with
 *             fdatasync group commit in a temp directory) and a consumer group that acknowledges
 *             every batch; the idempotency store OFF (the figure before it existed).
 *   Svc+idem  (with --durable) Svc+disk with the idempotency store ON (a record per eventId, synced
 *             before the 202), as `svc local` runs by default.
 * The idempotency store is off in "Svc" and "Svc+disk"; every request carries a fresh eventId, so
 * none is a duplicate.
 *
 * Load: a CHILD PROCESS (this file with --client), so the client's CPU does not share the server's
 * event loop; on a two-core machine the server and the client each have about one core. Fixed
 * concurrency over keep-alive connections spread over several client addresses 127.0.0.2 …
 * 127.0.0.<ips+1> (one http.Agent each), so the per-IP rate limit (ON, maxPerMinute 1,000,000) is
 * exercised but never binds. Each run: warmup (not counted), then a measured period; the number of
 * requests is also bounded (BENCH_MAX_REQUESTS). Only 127.0.0.x addresses are used.
 *
 * The request: a valid ~2 KB envelope (selection.state.changed, realistic context and selection
 * details), `Authorization: Bearer …`, `Content-Type: application/json`, `X-Audit-Client-Version`.
 * Every answer must be 202: any other status is counted and printed.
 *
 * --threads: each server's CPU per request split by thread kind (main, libuv pool, V8's helpers
 * and other threads; bench/lib.mjs threadKinds; from /proc/<pid>/task/<tid>/stat before and after the window: the CPU column is all
 * threads, a --cpu-prof profile the main thread only), and, for the Svc servers, counts per request
 * taken by wrapping the built modules from here (no product code changes): synced segment appends,
 * unsynced ack-log appends, ack-log fdatasyncs, deliveries and queue sends (one per event-loop turn
 * with requests). Messages per delivery: sends packed into one journal message each.
 *
 * Printed: requests/s, p50/p99/mean latency (ms), server CPU and event-loop utilisation, client
 * CPU (near 100 % means the client, not the server, was the limit), and Svc/baseline ratios; plus the
 * machine (CPU model, cores, Node version) and its load average before and after (other processes
 * competing for the cores make every figure lower and noisier).
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { Session } from 'node:inspector/promises';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import {
  fmt,
  option,
  pct,
  percentile,
  positive,
  sampleMemory,
  THREAD_KINDS,
  threadCpuByKind,
  threadTimes,
} from './lib.mjs';
import { formatSummary, profileDirectory, summariseProfile } from './profile.mjs';

const PATH = '/api/v1/audit-event';
const TOKEN = 'bench-token-0123456789abcdef';
export const CLIENT_VERSION = '0.3.2';

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// The request
// ---------------------------------------------------------------------------------------------

/** A valid selection.state.changed envelope of about `targetBytes` bytes of JSON (bench/memory.mjs --load sends it too). */
export function envelopeText(targetBytes = 2048) {
  const txn = randomUUID();
  const env = {
    schemaVersion: 1,
    eventId: randomUUID(),
    timestamp: new Date().toISOString(),
    type: 'selection.state.changed',
    correlationId: txn,
    source: { kind: 'qlik-sense-extension', name: 'audit-qs', version: CLIENT_VERSION },
    payload: {
      context: {
        appId: randomUUID(),
        appName: 'Sales Analysis 2026',
        sheetId: 'a1b2c3d4-overview',
        sheetName: 'Overview',
        // The audit client sends the user as one string (docs/audit-api.md, payload.context.user).
        user: 'UserDirectory=LAB; UserId=goran',
        host: 'analytics.example.com',
        client: {
          userAgent:
            'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
          language: 'en-GB',
          viewport: { width: 1920, height: 969 },
          timezone: 'Europe/Stockholm',
        },
      },
      event: {
        selectionTxnId: txn,
        trigger: 'user',
        durationMs: 184,
        details: [],
      },
    },
  };
  const fields = [
    'Region',
    'Country',
    'Product Category',
    'Sales Representative',
    'Fiscal Quarter',
    'Customer Segment',
    'Channel',
    'Warehouse',
  ];
  const values = [
    ['EMEA', 'North America'],
    ['Sweden', 'Norway', 'Denmark', 'Finland'],
    ['Bikes', 'Accessories'],
    ['Anna Lindqvist'],
    ['2026-Q3', '2026-Q4'],
    ['Enterprise', 'SMB'],
    ['Online'],
    ['Göteborg DC'],
  ];
  for (let i = 0; JSON.stringify(env).length < targetBytes - 120 && i < 64; i++) {
    const k = i % fields.length;
    env.payload.event.details.push({
      field: `${fields[k]}${i >= fields.length ? ` ${Math.floor(i / fields.length) + 1}` : ''}`,
      values: values[k],
      state: 'selected',
      cardinality: 120 + i * 7,
    });
  }
  return JSON.stringify(env);
}

// ---------------------------------------------------------------------------------------------
// Client (child process)
// ---------------------------------------------------------------------------------------------

async function runClient(job) {
  // rate (requests/s, optional): request n is not issued before t0 + n / rate, so the load is the
  // same from run to run (bench/memory.mjs --audit-rate) instead of whatever the machine allows.
  const { port, body, headers, concurrency, ips, warmupMs, durationMs, maxRequests, rate } = job;
  const template = Buffer.from(body);
  // Every request gets a fresh eventId (same length, written in place into a copy of the body).
  const idAt = template.indexOf(JSON.parse(body).eventId);
  const payloadWithNewId = () => {
    const payload = Buffer.from(template);
    payload.write(randomUUID(), idAt, 'latin1');
    return payload;
  };
  const agents = Array.from({ length: ips }, (_, i) => {
    const localAddress = `127.0.0.${2 + i}`;
    return {
      localAddress,
      agent: new Agent({ keepAlive: true, maxSockets: Math.ceil(concurrency / ips), localAddress }),
    };
  });
  const latencies = new Float64Array(Math.min(maxRequests, 20_000_000));
  const statuses = new Map();
  let measured = 0;
  let issued = 0;
  let errors = 0;
  let firstError = '';

  const t0 = performance.now();
  const measureFrom = t0 + warmupMs;
  const measureTo = measureFrom + durationMs;
  let cpuAtStart;
  let measureStarted = false;

  const once = ({ agent, localAddress }) =>
    new Promise((resolve) => {
      const payload = payloadWithNewId();
      const started = performance.now();
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: PATH,
          agent,
          localAddress,
          headers: { ...headers, 'content-length': String(payload.length) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, started, ended: performance.now() }));
        },
      );
      req.on('error', (err) => {
        errors += 1;
        firstError ||= err.message;
        resolve({ status: 0, started, ended: performance.now() });
      });
      req.end(payload);
    });

  const worker = async (i) => {
    const target = agents[i % agents.length];
    for (;;) {
      const now = performance.now();
      if (now >= measureTo || issued >= maxRequests) return;
      if (!measureStarted && now >= measureFrom) {
        measureStarted = true;
        cpuAtStart = process.cpuUsage();
        process.send?.({ type: 'measure-start' });
      }
      if (rate !== undefined) {
        const due = t0 + (issued / rate) * 1000;
        if (due > now) {
          issued += 1;
          await new Promise((r) => setTimeout(r, due - now));
          if (performance.now() >= measureTo) return;
        } else issued += 1;
      } else issued += 1;
      const r = await once(target);
      if (r.started >= measureFrom && r.ended <= measureTo) {
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (measured < latencies.length) latencies[measured] = r.ended - r.started;
        measured += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => worker(i)));
  const measureEnd = Math.min(performance.now(), measureTo);
  process.send?.({ type: 'measure-end' });
  const cpu = process.cpuUsage(cpuAtStart);
  for (const { agent } of agents) agent.destroy();

  const window = measureStarted ? measureEnd - measureFrom : 0;
  const sorted = latencies.slice(0, Math.min(measured, latencies.length)).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    requests: measured,
    seconds: window / 1000,
    rps: window > 0 ? measured / (window / 1000) : 0,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length > 0 ? sum / sorted.length : NaN,
    statuses: Object.fromEntries(statuses),
    errors,
    firstError,
    clientCpu: window > 0 ? (cpu.user + cpu.system) / 1000 / window : NaN,
  };
}

// ---------------------------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------------------------

function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

async function startBaseline() {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json; charset=utf-8' });
        res.end('{"status":"error","outcome":"dropped"}');
        return;
      }
      res.writeHead(202, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ status: 'accepted', receivedAt: new Date().toISOString(), outcome: 'processed' }));
    });
  });
  server.keepAliveTimeout = 65_000;
  const port = await listen(server);
  return {
    port,
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * --threads: what the durable path does per request, counted from outside the product code (the
 * bench wraps the queue's send, the consumer's handler and AppendLog's append of the built modules):
 * sends (one per event-loop turn with requests), deliveries, synced segment appends and unsynced
 * ack-log appends. Reset at the start of each measured window.
 */
const counters = {
  sends: 0,
  sentEvents: 0,
  deliveries: 0,
  delivered: 0,
  syncedAppends: 0,
  unsyncedAppends: 0,
  fdatasyncs: 0,
};
const resetCounters = () => {
  for (const k of Object.keys(counters)) counters[k] = 0;
};
let countingAppends = false;
/**
 * How long each synced segment write of the measured window took (ms, from AppendLog.append to its
 * end: the wait for a pool thread and the O_DSYNC write), for the durable rows. A durable 202 waits
 * for one such write to end, often for two (the one in flight when its request was read, then the
 * one that carries it): their p99 is a floor under the row's p99 that no code of Svc's moves.
 */
const syncedWrites = { recording: false, ms: [] };

async function countAppends(load) {
  if (countingAppends) return;
  countingAppends = true;
  const { AppendLog } = await load('shared/queue/local/append-log.js');
  const append = AppendLog.prototype.append;
  AppendLog.prototype.append = function (data, options = {}) {
    if (options.sync === false) {
      counters.unsyncedAppends += 1;
      return append.call(this, data, options);
    }
    counters.syncedAppends += 1;
    if (!syncedWrites.recording) return append.call(this, data, options);
    const start = performance.now();
    const done = () => syncedWrites.ms.push(performance.now() - start);
    const written = append.call(this, data, options);
    written.then(done, () => {});
    return written;
  };
  const sync = AppendLog.prototype.sync;
  AppendLog.prototype.sync = function () {
    counters.fdatasyncs += 1;
    return sync.call(this);
  };
}

async function startSvc({ durable, idempotency }) {
  const dist = new URL('../dist/', import.meta.url);
  const load = (path) => import(new URL(path, dist).href);
  const [
    { makeAuditHandlers },
    { LocalGateway },
    { parseConfigText },
    { createLogger },
    { MemoryRateLimiter },
    { PointClock },
    { LocalIdempotencyStore },
  ] = await Promise.all([
    load('shared/audit/handler.js'),
    load('functions/local/gateway/gateway.js'),
    load('shared/config/load.js'),
    load('shared/logging/logger.js'),
    load('shared/ratelimit/memory.js'),
    load('shared/queue/point-clock.js'),
    load('shared/idempotency/local.js'),
  ]);
  const yaml = [
    'Svc:',
    '  auditEvents:',
    '    enable: true',
    `    apiToken: ${TOKEN}`,
    '    rateLimit:',
    '      enable: true',
    '      maxPerMinute: 1000000',
    '    cors:',
    '      allowedOrigins: [https://analytics.example.com]',
    '    queue:',
    '      capacity: 10000000',
  ].join('\n');
  const config = parseConfigText(`${yaml}\n`, 'bench.yaml', {}).config;
  const settings = config.auditEvents;
  // Info level like a production service; lines go nowhere (none are written on the 202 path).
  const devNull = new Writable({ write: (_chunk, _enc, done) => done() });
  const { logger: log } = await createLogger({ level: 'info', destination: devNull, pretty: false });

  if (threadsOption() || durable) await countAppends(load);
  let queue = { send: () => Promise.resolve() };
  let stopQueue = () => Promise.resolve();
  let store = null;
  const directory = mkdtempSync(join(tmpdir(), 'svc-bench-queue-'));
  if (idempotency) {
    store = new LocalIdempotencyStore({
      directory,
      windowSeconds: 86_400,
      maxEntries: settings.idempotency.maxEntries,
      log,
    });
    await store.start();
  }
  if (durable) {
    const { LocalEventQueue } = await load('shared/queue/local/index.js');
    const local = new LocalEventQueue({
      directory,
      capacity: settings.queue.capacity,
      maxReceiveCount: 3,
      log,
      groups: [
        {
          name: 'discard',
          batchSize: 100,
          batchWindowMs: 0,
          handler: (event) => {
            counters.deliveries += 1;
            counters.delivered += event.Records.length;
            return Promise.resolve({ batchItemFailures: [] });
          },
        },
      ],
    });
    await local.start();
    queue = local;
    stopQueue = () => local.stop();
  }

  const counted = {
    send: (events) => {
      counters.sends += 1;
      counters.sentEvents += events.length;
      return queue.send(events);
    },
  };
  const handlers = makeAuditHandlers({
    settings,
    rateLimiter: settings.rateLimit.enable ? new MemoryRateLimiter({ limit: settings.rateLimit.maxPerMinute }) : null,
    idempotency: store,
    queue: threadsOption() ? counted : queue,
    clock: new PointClock(),
    log,
  });
  const gateway = new LocalGateway({
    name: 'audit API',
    host: '127.0.0.1',
    port: 0,
    ...handlers,
    log,
    limits: settings,
  });
  await gateway.start();
  return {
    port: gateway.address.port,
    stop: async () => {
      await gateway.stop();
      await store?.stop();
      await stopQueue();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------------------------

/** One probe request from this process: the server must answer 202 before it is measured. */
function probe(port, body, headers) {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: PATH, headers, localAddress: '127.0.0.2', agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * --profile: each Svc server's measured window (not its warmup, not the baseline) under V8's CPU
 * profiler, through node:inspector in this process (the servers run here; the load generator is a
 * child). The profiler costs some throughput: read the shares, not that row's req/s.
 */
const profiling = { session: null, dir: '', files: [] };

async function measure(name, server, job) {
  const profile = profiling.session !== null && name !== 'baseline';
  const check = await probe(server.port, job.body, job.headers);
  if (check.status !== 202) throw new Error(`${name}: the probe request got ${check.status}: ${check.text}`);
  const child = fork(fileURLToPath(import.meta.url), ['--client'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let cpuAt;
  let eluAt;
  let serverLoad = { cpu: NaN, system: NaN, elu: NaN };
  let threadsAt;
  let threads;
  let counted;
  let writes = null;
  // The event loop's delay in the window (how late a timer of 1 ms ran): a request in flight waits as long.
  let loopDelay;
  let delayP99 = NaN;
  let windowStart = 0;
  // RSS of this process (the servers run in it; the load generator is a child) every 100 ms of the window.
  let sampler;
  let memory = { rssMb: NaN, peakMb: NaN };
  let stopped = Promise.resolve();
  const result = await new Promise((resolve, reject) => {
    child.on('message', (m) => {
      if (m.type === 'measure-start') {
        if (profile) void profiling.session.post('Profiler.start');
        cpuAt = process.cpuUsage();
        eluAt = performance.eventLoopUtilization();
        windowStart = performance.now();
        sampler = sampleMemory(process.pid);
        syncedWrites.ms = [];
        syncedWrites.recording = true;
        loopDelay = monitorEventLoopDelay({ resolution: 1 });
        loopDelay.enable();
        if (threadsOption()) {
          threadsAt = threadTimes();
          resetCounters();
        }
      } else if (m.type === 'measure-end' && cpuAt) {
        memory = sampler.stop();
        sampler = undefined;
        syncedWrites.recording = false;
        writes = percentiles(syncedWrites.ms);
        loopDelay.disable();
        delayP99 = loopDelay.percentile(99) / 1e6;
        const cpu = process.cpuUsage(cpuAt);
        const elapsed = performance.now() - windowStart;
        if (threadsAt) {
          threads = threadCpuByKind(threadsAt, threadTimes());
          counted = { ...counters };
        }
        serverLoad = {
          cpu: (cpu.user + cpu.system) / 1000 / elapsed,
          system: cpu.system / 1000 / elapsed,
          elu: performance.eventLoopUtilization(eluAt).utilization,
        };
        if (profile) {
          stopped = profiling.session.post('Profiler.stop').then(({ profile: data }) => {
            const file = join(profiling.dir, `${name.replace(/\W+/g, '-')}-${profiling.files.length + 1}.cpuprofile`);
            writeFileSync(file, JSON.stringify(data));
            profiling.files.push({ name, file });
          });
        }
      } else if (m.type === 'result') {
        resolve(m.result);
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`${name}: the load generator exited with ${code}`));
    });
    child.send({ ...job, port: server.port });
  });
  if (sampler) memory = sampler.stop();
  await stopped;
  return {
    name,
    ...result,
    threads,
    counted,
    writes,
    delayP99,
    serverCpu: serverLoad.cpu,
    serverSystem: serverLoad.system,
    serverElu: serverLoad.elu,
    ...memory,
  };
}

/** Count, p50 and p99 of a list of durations (null when empty). */
function percentiles(ms) {
  if (ms.length === 0) return null;
  const sorted = [...ms].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/** --threads (BENCH_THREADS=1): the per-thread CPU split and the durable path's counts per request. */
const threadsOption = () => option('threads', 'BENCH_THREADS', 'false') !== 'false';

/** µs of CPU per request by thread kind (user+system, sys in parentheses), and the counts per request. */
function printThreads(r) {
  if (!r.threads || !(r.rps > 0)) return;
  const n = r.rps * r.seconds;
  const parts = THREAD_KINDS.map((k) => {
    const t = r.threads[k];
    return `${k} ${fmt((t.user + t.system) / n, 1)} (sys ${fmt(t.system / n, 1)}, ${t.threads} thr)`;
  });
  console.log(`           µs CPU/req by thread: ${parts.join('; ')}`);
  const c = r.counted;
  if (c && c.sends > 0) {
    const per = (x) => fmt(x / n, 3);
    console.log(
      `           per request: synced appends ${per(c.syncedAppends)}, unsynced (ack) appends ${per(c.unsyncedAppends)}, ack fdatasyncs ${per(c.fdatasyncs)}, deliveries ${per(c.deliveries)}, sends ${per(c.sends)} (${fmt(c.sentEvents / c.sends, 1)} requests/send, ${fmt(c.deliveries > 0 ? c.delivered / c.deliveries : NaN, 1)} messages/delivery)`,
    );
  }
}

/** Server CPU (user + system) per answered request, in µs: the figure that a busy machine moves least. */
const cpuPerRequest = (r) => (r.rps > 0 ? (r.serverCpu / r.rps) * 1e6 : NaN);

function printRow(r) {
  const others = Object.entries(r.statuses).filter(([s]) => s !== '202');
  // The kernel's share (system time: socket and file writes, fdatasync) says how much of the CPU is not JavaScript's.
  const system =
    r.rps > 0 && Number.isFinite(r.serverSystem) ? `sys ${fmt((r.serverSystem / r.rps) * 1e6, 1)} µs/req` : '';
  // The durable rows: the synced writes every 202 waits for (see syncedWrites).
  const writes = r.writes
    ? `synced writes ${r.writes.count}: p50 ${fmt(r.writes.p50)} p99 ${fmt(r.writes.p99)} ms`
    : '';
  const delay = Number.isFinite(r.delayP99) ? `loop delay p99 ${fmt(r.delayP99)} ms` : '';
  const notes = [
    system,
    delay,
    writes,
    others.length > 0 ? `non-202: ${others.map(([s, n]) => `${s}×${n}`).join(' ')}` : '',
    r.errors > 0 ? `errors: ${r.errors} (${r.firstError})` : '',
  ]
    .filter(Boolean)
    .join('; ');
  console.log(
    `${r.name.padEnd(10)} ${fmt(r.rps, 0).padStart(9)} ${fmt(r.p50).padStart(8)} ${fmt(r.p99).padStart(8)} ${fmt(r.mean).padStart(8)} ${String(r.requests).padStart(9)} ${pct(r.serverCpu).padStart(7)} ${fmt(cpuPerRequest(r), 1).padStart(6)} ${pct(r.serverElu).padStart(6)} ${pct(r.clientCpu).padStart(7)} ${fmt(r.rssMb, 0).padStart(6)} ${fmt(r.peakMb, 0).padStart(7)}${notes ? `   ${notes}` : ''}`,
  );
}

async function main() {
  const durationS = positive('duration', 'BENCH_DURATION_S', 10);
  const warmupS = positive('warmup', 'BENCH_WARMUP_S', 3);
  const concurrency = Math.round(positive('concurrency', 'BENCH_CONCURRENCY', 32));
  const ips = Math.round(positive('ips', 'BENCH_CLIENT_IPS', 16));
  const maxRequests = Math.round(positive('max-requests', 'BENCH_MAX_REQUESTS', 5_000_000));
  const rounds = Math.round(positive('rounds', 'BENCH_ROUNDS', 1));
  const durable = ['1', 'true'].includes(option('durable', 'BENCH_DURABLE', 'false'));
  if (option('profile', 'BENCH_PROFILE', 'false') !== 'false') {
    profiling.session = new Session();
    profiling.session.connect();
    await profiling.session.post('Profiler.enable');
    profiling.dir = profileDirectory('audit-api');
  }
  if (ips > 250) throw new Error('--ips must be at most 250 (127.0.0.2 … 127.0.0.251)');

  // The first listing of this process's threads tells libuv's pool on Node 20 (bench/lib.mjs threadKinds).
  if (threadsOption()) threadTimes();
  const body = envelopeText();
  const headers = {
    'content-type': 'application/json',
    authorization: `Bearer ${TOKEN}`,
    'x-audit-client-version': CLIENT_VERSION,
  };
  const job = { body, headers, concurrency, ips, warmupMs: warmupS * 1000, durationMs: durationS * 1000, maxRequests };

  const cpu = cpus();
  console.log('audit API benchmark: POST /api/v1/audit-event');
  console.log(
    `machine     ${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${platform()} ${release()}, Node ${process.version}`,
  );
  console.log(
    `load        ${concurrency} keep-alive connections from ${ips} client addresses (127.0.0.2-127.0.0.${ips + 1}), load generator in a child process`,
  );
  console.log(`            warmup ${warmupS} s, measured ${durationS} s per server (at most ${maxRequests} requests)`);
  console.log(
    `request     ${Buffer.byteLength(body)} B envelope (selection.state.changed), bearer token, X-Audit-Client-Version ${CLIENT_VERSION}`,
  );
  console.log(
    `load avg    ${loadavg()
      .map((l) => l.toFixed(2))
      .join(
        ' ',
      )} (1/5/15 min) at start${loadavg()[0] > cpu.length / 2 ? '  ← the machine is busy: expect lower, noisier figures' : ''}`,
  );
  console.log('');

  const results = [];
  const every = [
    ['baseline', () => startBaseline()],
    ['Svc', () => startSvc({ durable: false, idempotency: false })],
    ...(durable
      ? [
          ['Svc+disk', () => startSvc({ durable: true, idempotency: false })],
          ['Svc+idem', () => startSvc({ durable: true, idempotency: true })],
        ]
      : []),
  ];
  // --servers=Svc+disk measures only that one against the baseline (always measured: the ratios need it).
  const only = option('servers', 'BENCH_SERVERS', '').split(',').filter(Boolean);
  const unknown = only.filter((n) => !every.some(([name]) => name === n));
  if (unknown.length > 0)
    throw new Error(
      `--servers: unknown ${unknown.join(', ')} (of ${every.map(([n]) => n).join(', ')}${durable ? '' : '; Svc+disk and Svc+idem need --durable'})`,
    );
  const runs = only.length === 0 ? every : every.filter(([name]) => name === 'baseline' || only.includes(name));
  console.log(
    `${'server'.padEnd(10)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'mean ms'.padStart(8)} ${'requests'.padStart(9)} ${'srv CPU'.padStart(7)} ${'µs/req'.padStart(6)} ${'srv EL'.padStart(6)} ${'cli CPU'.padStart(7)} ${'RSS MB'.padStart(6)} ${'peak MB'.padStart(7)}`,
  );
  for (let round = 0; round < rounds; round++) {
    for (const [name, start] of runs) {
      const server = await start();
      try {
        const r = await measure(name, server, job);
        results.push(r);
        printRow(r);
        printThreads(r);
      } finally {
        await server.stop();
      }
    }
  }

  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const summary = runs.map(([name]) => {
    const mine = results.filter((r) => r.name === name);
    return {
      name,
      rps: median(mine.map((r) => r.rps)),
      p50: median(mine.map((r) => r.p50)),
      p99: median(mine.map((r) => r.p99)),
      us: median(mine.map(cpuPerRequest)),
    };
  });
  const [base, ...rest] = summary;
  console.log('');
  if (rounds > 1) {
    console.log(`medians of ${rounds} rounds`);
    for (const m of summary)
      console.log(
        `${m.name.padEnd(10)} ${fmt(m.rps, 0).padStart(9)} ${fmt(m.p50).padStart(8)} ${fmt(m.p99).padStart(8)}   ${fmt(m.us, 1)} µs CPU/req`,
      );
    console.log('');
  }
  for (const r of rest) {
    console.log(
      `${`${r.name}/baseline`.padEnd(19)} req/s ×${fmt(r.rps / base.rps)}   p50 ×${fmt(r.p50 / base.p50)}   p99 ×${fmt(r.p99 / base.p99)}   CPU/req ×${fmt(r.us / base.us)}`,
    );
  }
  const disk = summary.find((m) => m.name === 'Svc+disk');
  const idem = summary.find((m) => m.name === 'Svc+idem');
  if (disk && idem)
    console.log(
      `${'Svc+idem/Svc+disk'.padEnd(19)} req/s ×${fmt(idem.rps / disk.rps)}   p50 ×${fmt(idem.p50 / disk.p50)}   p99 ×${fmt(idem.p99 / disk.p99)}   (the idempotency store's cost)`,
    );
  console.log(
    `load avg    ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (1/5/15 min) at the end`,
  );
  const clientBound = results.filter((r) => r.clientCpu >= 0.9).map((r) => r.name);
  if (clientBound.length > 0)
    console.log(
      `note: the load generator used ≥ 90 % of a core during: ${clientBound.join(', ')} (those figures may be client-bound)`,
    );
  for (const { name, file } of profiling.files) {
    console.log(`\nprofile     ${name}'s measured window (this process): ${file}`);
    for (const line of formatSummary(summariseProfile(file, 15))) console.log(line);
  }
  const bad = results.filter((r) => r.errors > 0 || Object.keys(r.statuses).some((s) => s !== '202'));
  if (bad.length > 0) process.exitCode = 1;
}

// ---------------------------------------------------------------------------------------------
// Entry: the load generator (child) or the benchmark (parent)
// ---------------------------------------------------------------------------------------------

if (process.argv.includes('--client')) {
  process.once('message', (job) => {
    runClient(job).then(
      (result) => process.send?.({ type: 'result', result }, () => process.exit(0)),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // Run as the bench, not imported (bench/memory.mjs imports the envelope and forks the client).
  await main();
}
