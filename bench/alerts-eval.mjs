/**
 * The cost of evaluating the built-in alert pack (docs/alerts.md "Rules") for many servers: the
 * real facts (AlertFacts over an Observed, the error tracker, an AlertPollSink fed health and
 * session samples, log events counted by LogLevelCounts) evaluated by the real Evaluator every
 * `--interval` seconds of simulated time for `--minutes` of it (no waiting: the times are passed
 * in). Between evaluations the simulated platform moves on (not measured): CPU and sessions change,
 * log events arrive from 4 sources with categories, queues and listeners count, a few servers
 * misbehave so that some alerts pend, fire and resolve.
 *
 * Per evaluation, CPU (process.cpuUsage, user + system) of the same-run baseline, reading every
 * field the pack reads from the facts alone, then of the evaluation (which reads them too): p50,
 * p99 and the ratio; then the heap after the run (exact with --expose-gc) and the series the
 * evaluator remembers.
 *
 *   npm run build && node --expose-gc bench/alerts-eval.mjs [--servers=500] [--minutes=60] [--interval=10]
 */
import { fmt, int, loadNow, machineLine, percentile, positive } from './lib.mjs';

const dist = new URL('../dist/', import.meta.url);
const { AlertFacts, AlertPollSink } = await import(new URL('edge-agent/alerts/facts.js', dist).href);
const { Observed } = await import(new URL('edge-agent/endpoints/observed.js', dist).href);
const { LogLevelCounts } = await import(new URL('edge-agent/sources/udp/log-levels.js', dist).href);
const { ruleDefinitions } = await import(new URL('shared/alerts/rules/definitions.js', dist).href);
const { Evaluator } = await import(new URL('shared/alerts/rules/evaluator.js', dist).href);
const { parseConfigText } = await import(new URL('shared/config/load.js', dist).href);
const { ErrorTracker } = await import(new URL('shared/errors/tracker.js', dist).href);

const serverCount = Math.round(positive('servers', 'BENCH_SERVERS', 500));
const minutes = positive('minutes', 'BENCH_MINUTES', 60);
const intervalMs = positive('interval', 'BENCH_INTERVAL_S', 10) * 1000;

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const SOURCES = ['qseow-engine', 'qseow-proxy', 'qseow-repository', 'qseow-scheduler'];
const LEVELS = ['INFO', 'WARN', 'ERROR'];
const CATEGORIES = [
  [],
  [{ name: 'qs_log_category', value: 'license' }],
  [{ name: 'qs_log_category', value: 'reload' }],
];
const VIRTUAL_PROXIES = ['/', '/hdr'];
const DESTINATIONS = ['tsdb', 'mqtt', 'store', 'parquet'];

/** A deterministic pseudo-random sequence, so runs compare. */
let seed = 31;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

const servers = Array.from({ length: serverCount }, (_, i) => ({
  serverName: `node${i + 1}`,
  host: `node${i + 1}.lab.local`,
  serverDescription: '',
}));
const { config } = parseConfigText('Svc:\n', 'bench.yaml', {});
const rules = ruleDefinitions(config.alerts);

// The parts the facts read: what boot.ts registers with Observed, here with counts the bench moves.
const observed = new Observed();
const levels = new LogLevelCounts(servers);
observed.logEvents = levels;
const listenerTotals = (queueType) => {
  const totals = {
    received: 0,
    processed: 0,
    failed: 0,
    dropped: { source: 0, size: 0, rate_limit: 0, queue_full: 0, kernel: 0 },
    kernelCounted: false,
  };
  observed.listener({ name: queueType, queueType, bound: true, totals: () => totals });
  return totals;
};
const listeners = [listenerTotals('user_events'), listenerTotals('log_events')];
const groups = Object.fromEntries(
  DESTINATIONS.map((name) => [name, { pendingEvents: 0, deadLettered: 0, oldestPendingAt: null }]),
);
const destinations = DESTINATIONS.map((name) => ({ name, failedWrites: 0, writtenEvents: 0 }));
observed.queue({
  name: 'platform',
  queue: { capacity: 100_000, storageFault: null, stats: () => groups },
  destinations,
});
observed.clientCertificate = { file: '/etc/svc/client.pem', validTo: new Date(Date.now() + 40 * 86_400_000) };
const errors = new ErrorTracker({ enabled: true, log: silent });
const polls = new AlertPollSink(servers.map((s) => ({ kind: 'health', serverName: s.serverName })));
const facts = new AlertFacts({ observed, errors, polls });
const fieldsRead = [...new Set(rules.flatMap((rule) => rule.conditions.map((c) => c.field)))];

const sessions = servers.map(() => Math.floor(random() * 40));
/** One poll interval of the simulated platform at `at`. */
function step(at, n) {
  for (let i = 0; i < serverCount; i++) {
    const server = servers[i];
    // One server in 100 stops answering for 5 minutes of every 20; one in 50 runs hot for 8 of every 30.
    if (i % 100 === 7 && n % 120 < 30) {
      polls.healthFailed(server.serverName, {});
      continue;
    }
    sessions[i] = Math.max(0, sessions[i] + Math.round((random() - 0.5) * 4));
    const hot = i % 50 === 3 && n % 180 < 48;
    polls.health(
      {
        serverName: server.serverName,
        tags: {},
        uptime: '',
        body: {
          version: '14.0',
          started: '20261201T000000.000Z',
          mem: { committed: 6000 + random() * 2000, allocated: 5000, free: hot ? 300 : 20_000 },
          apps: { active_docs: [], in_memory_docs: [], loaded_docs: [], calls: n * 10, selections: n },
          cpu: { total: hot ? 97 : random() * 60 },
          session: { active: sessions[i], total: sessions[i] },
          users: { active: sessions[i], total: sessions[i] },
          cache: { hits: n, lookups: n * 2, added: n, replaced: 0, bytes_added: n * 1000 },
          saturated: false,
        },
      },
      at,
    );
    for (const virtualProxy of VIRTUAL_PROXIES)
      polls.sessions(
        {
          serverName: server.serverName,
          tags: { user_session_virtual_proxy: virtualProxy },
          virtualProxy,
          sessions: Array.from({ length: sessions[i] % 7 }, (_, k) => ({
            UserDirectory: 'LAB',
            UserId: `user${k}`,
            SessionId: `${i}-${k}`,
          })),
          userIdList: '',
        },
        at,
      );
    // A few log events per server and interval, of 4 sources, with categories.
    for (let e = 0; e < 4; e++) {
      const source = SOURCES[Math.floor(random() * SOURCES.length)];
      const level = LEVELS[Math.floor(random() * LEVELS.length)];
      levels.count(source, level, server.host, CATEGORIES[Math.floor(random() * CATEGORIES.length)]);
    }
  }
  listeners[1].received += serverCount * 4;
  if (n % 90 === 45) listeners[1].dropped.queue_full += 3;
  for (const [k, name] of DESTINATIONS.entries()) {
    groups[name].pendingEvents = Math.floor(random() * 100);
    groups[name].oldestPendingAt = k === 0 && n % 200 > 150 ? at - 400_000 : at - 2_000;
  }
  if (n % 60 < 10) destinations[1].failedWrites += 2;
}

const cpuMs = (since) => {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
};

console.log(
  `alert evaluation: the built-in pack over ${int(serverCount)} servers, every ${intervalMs / 1000} s for ${minutes} min of simulated time`,
);
console.log(`machine     ${machineLine()}`);
console.log(`load avg    ${loadNow().text} at start`);

const start = Date.now();
const evaluator = new Evaluator(rules, [], { startedAt: start });
const baseline = [];
const evaluation = [];
let fired = 0;
let resolved = 0;
const evaluations = Math.floor((minutes * 60_000) / intervalMs);
for (let n = 0; n <= evaluations; n++) {
  const at = start + n * intervalMs;
  step(at, n);
  let since = process.cpuUsage();
  const read = facts.at(at);
  for (const field of fieldsRead) read.samples(field);
  baseline.push(cpuMs(since));
  since = process.cpuUsage();
  const { transitions } = evaluator.evaluate(facts.at(at));
  evaluation.push(cpuMs(since));
  fired += transitions.fired.length;
  resolved += transitions.resolved.length;
}
globalThis.gc?.();
const heapMb = process.memoryUsage().heapUsed / 2 ** 20;

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const [b, e] = [sorted(baseline), sorted(evaluation)];
console.log(
  `evaluations ${int(evaluation.length)} of ${rules.length} rules; ${int(fired)} alerts fired, ${int(resolved)} resolved`,
);
console.log(
  `baseline (read the facts)   p50 ${fmt(percentile(b, 50))} ms   p99 ${fmt(percentile(b, 99))} ms of CPU per evaluation`,
);
console.log(
  `evaluation (facts + pack)   p50 ${fmt(percentile(e, 50))} ms   p99 ${fmt(percentile(e, 99))} ms of CPU per evaluation   (×${fmt(percentile(e, 50) / percentile(b, 50), 1)} the baseline at p50)`,
);
console.log(
  `heap used   ${fmt(heapMb, 1)} MB after the run${globalThis.gc ? '' : ' (without --expose-gc: garbage included)'}; the evaluator remembers ${int(evaluator.seriesCount)} series`,
);
console.log(`load avg    ${loadNow().text} at end`);
