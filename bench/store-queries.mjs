/**
 * The read API's latency on a store of a month of a 10-server platform: what each history page's API
 * calls cost over real HTTP, against the same server's /status.json in the same run.
 *
 *   npm run bench:store-queries        # = npm run -s build && node bench/store-queries.mjs
 *   node bench/store-queries.mjs --quick    # 2 days of 2 servers, 5 runs: checks that it works
 *       [--days=30] [--servers=10] [--runs=50] [--seed=1] [--keep=<dir>]
 *
 * (or BENCH_DAYS, BENCH_SERVERS, BENCH_RUNS). It imports the BUILT modules from ../dist.
 *
 * 1. The history generator (dist/edge-agent/simulate/history.js) fills a fresh store file with
 *    --days of --servers servers ending now; the rows per table, the file size and the time taken
 *    are printed.
 * 2. The real web view is started in this process as compose.ts builds it (config view, status page
 *    and the read API with the store on that file), on a free 127.0.0.1 port.
 * 3. Each call below is made --runs times (after 2 unmeasured), one at a time, each on a new
 *    connection, from a rotating 127.0.0.x address (the web view allows 300 requests a minute per
 *    address); p50, p99 and max of the time to the last byte, and the answer's size. The baseline is
 *    /status.json of the same server, measured the same way in the same run. The calls: servers;
 *    health of one server for 1 h, 24 h, 7 d, 30 d; log-events newest 100, with q and with
 *    level=ERROR over 30 d; log-event counts by level and by category, 30 d; user-sessions 24 h and
 *    30 d; performance/top by app, object and method, 30 d; audit-events and audit counts, 7 d.
 * 4. Each history page's calls as the page makes them (all at once, assets/*.js), for 24 h and 30 d:
 *    p50, p99 and max of the time until the last answer.
 *
 * Every answer must be 200; the run exits 1 otherwise. The machine and its load are printed: compare
 * the ratios to the baseline of one run, not figures across machines.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fmt, freePort, int, loadNow, machineLine, percentile, positive, removeOnExit } from './lib.mjs';

const dist = new URL('../dist/', import.meta.url);
const quick = process.argv.includes('--quick');
const days = positive('days', 'BENCH_DAYS', quick ? 2 : 30);
const servers = positive('servers', 'BENCH_SERVERS', quick ? 2 : 10);
const runs = positive('runs', 'BENCH_RUNS', quick ? 5 : 50);
const seed = positive('seed', 'BENCH_SEED', 1);

const { generateHistory } = await import(new URL('edge-agent/simulate/history.js', dist).href);
const { webView } = await import(new URL('edge-agent/endpoints/web/compose.js', dist).href);
const { Observed } = await import(new URL('edge-agent/endpoints/observed.js', dist).href);
const { ErrorTracker } = await import(new URL('shared/errors/tracker.js', dist).href);
const { parseConfigText } = await import(new URL('shared/config/load.js', dist).href);

const dirs = new Set();
removeOnExit(dirs);
const dir = mkdtempSync(join(tmpdir(), 'svc-bench-store-'));
dirs.add(dir);
const path = join(dir, 'svc.db');

console.log(machineLine());
console.log(`load before: ${loadNow().text}`);
const now = Date.now();
const began = performance.now();
const counts = generateHistory({ path, now, days, servers, seed });
const generatedSeconds = (performance.now() - began) / 1000;
const bytes = statSync(path).size;
console.log(
  `\nstore: ${days} days × ${servers} servers, generated in ${fmt(generatedSeconds, 1)} s, ${fmt(bytes / 1e6, 1)} MB`,
);
for (const [table, rows] of Object.entries(counts)) console.log(`  ${table.padEnd(18)} ${int(rows).padStart(10)} rows`);

const silent = { debug() {}, info() {}, warn() {}, error: (obj, msg) => console.error(msg, obj) };
const logger = { ...silent, child: () => logger };
const config = parseConfigText(
  `Svc:\n  configVisualisation: {enable: true, host: 127.0.0.1, port: ${await freePort()}}\n  store: {enable: true, path: ${JSON.stringify(path)}, retentionDays: ${Math.max(days, 1)}}\n`,
  'bench.yaml',
  {},
).config;
const parts = webView(
  { config, configFile: 'bench.yaml', logger, errors: new ErrorTracker({ enabled: false, log: silent }) },
  { observed: new Observed(), mode: 'edge', installDir: new URL('..', dist).pathname },
);
await parts.component.start();
const base = `http://127.0.0.1:${parts.component.port}`;

let address = 0;
/** One GET on a new connection from the next 127.0.0.x address: [ms to the last byte, status, bytes]. */
function get(url) {
  const localAddress = `127.0.0.${2 + (address++ % 250)}`;
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = request(`${base}${url}`, { localAddress, agent: false }, (res) => {
      let size = 0;
      res.on('data', (chunk) => (size += chunk.length));
      res.on('end', () => resolve([performance.now() - start, res.statusCode, size]));
    });
    req.on('error', reject);
    req.end();
  });
}

const ago = (ms) => new Date(now - ms).toISOString();
const H = 3_600_000;
const D = 24 * H;
const span = (ms) => `from=${ago(Math.min(ms, days * D - 60_000))}&to=${new Date(now).toISOString()}`;
const calls = [
  ['baseline: /status.json', '/status.json'],
  ['servers', `/api/v1/servers?${span(H)}`],
  ['health 1 h', `/api/v1/servers/node1/health?${span(H)}`],
  ['health 24 h', `/api/v1/servers/node1/health?${span(D)}`],
  ['health 7 d', `/api/v1/servers/node1/health?${span(7 * D)}`],
  ['health 30 d', `/api/v1/servers/node1/health?${span(30 * D)}`],
  ['log-events newest 100, 30 d', `/api/v1/log-events?${span(30 * D)}&limit=100`],
  ['log-events q=reload timeout, 30 d', `/api/v1/log-events?${span(30 * D)}&limit=100&q=reload%20timeout`],
  ['log-events level=ERROR, 30 d', `/api/v1/log-events?${span(30 * D)}&limit=100&level=ERROR`],
  ['log counts by level, 30 d', `/api/v1/log-events/counts?${span(30 * D)}&by=level`],
  ['log counts by category, 30 d', `/api/v1/log-events/counts?${span(30 * D)}&by=category`],
  ['user-sessions 24 h', `/api/v1/user-sessions?${span(D)}`],
  ['user-sessions 30 d', `/api/v1/user-sessions?${span(30 * D)}`],
  ['performance/top by app, 30 d', `/api/v1/performance/top?${span(30 * D)}&by=app`],
  ['performance/top by object, 30 d', `/api/v1/performance/top?${span(30 * D)}&by=object`],
  ['performance/top by method, 30 d', `/api/v1/performance/top?${span(30 * D)}&by=method`],
  ['audit-events 7 d', `/api/v1/audit-events?${span(7 * D)}`],
  ['audit counts by type, 7 d', `/api/v1/audit-events/counts?${span(7 * D)}&by=type`],
];

/**
 * The history pages' API calls as the pages make them (edge-agent/endpoints/web/assets/*.js): all of a
 * page's calls at once; the time is until the last answer.
 */
const serverNames = Array.from({ length: servers }, (_, index) => `node${index + 1}`);
const pages = (ms) => [
  [
    'Servers',
    [`/api/v1/servers?${span(ms)}`, ...serverNames.map((name) => `/api/v1/servers/${name}/health?${span(ms)}`)],
  ],
  [
    'Log events',
    ['log-events?limit=100', 'log-events/counts?by=level', 'log-events/counts?by=category'].map(
      (call) => `/api/v1/${call}${call.includes('?') ? '&' : '?'}${span(ms)}`,
    ),
  ],
  ['Users', [`/api/v1/user-sessions?${span(ms)}`, `/api/v1/user-events?${span(ms)}`]],
  ['Performance', [`/api/v1/performance/top?by=app&order=total&${span(ms)}`]],
  [
    'Audit',
    [
      `/api/v1/audit-events?${span(ms)}`,
      ...['type', 'app', 'sheet', 'user'].map((by) => `/api/v1/audit-events/counts?by=${by}&${span(ms)}`),
    ],
  ],
];

let failed = false;
const results = [];
for (const [label, url] of calls) {
  const times = [];
  let size = 0;
  for (let run = 0; run < runs + 2; run++) {
    const [ms, status, bytesOut] = await get(url);
    if (status !== 200) {
      console.error(`${label}: ${url} answered ${status}`);
      failed = true;
      break;
    }
    size = bytesOut;
    if (run >= 2) times.push(ms);
  }
  times.sort((a, b) => a - b);
  results.push({ label, p50: percentile(times, 50), p99: percentile(times, 99), max: times[times.length - 1], size });
}

const pageResults = [];
for (const [rangeLabel, ms] of [
  ['24 h', D],
  ['30 d', 30 * D],
]) {
  for (const [page, urls] of pages(ms)) {
    const times = [];
    for (let run = 0; run < runs + 2; run++) {
      const start = performance.now();
      const answers = await Promise.all(urls.map((url) => get(url)));
      const bad = answers.find(([, status]) => status !== 200);
      if (bad) {
        console.error(`${page} ${rangeLabel}: a call answered ${bad[1]}`);
        failed = true;
        break;
      }
      if (run >= 2) times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    pageResults.push({
      label: `${page} page, ${rangeLabel} (${urls.length} calls)`,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      max: times[times.length - 1],
    });
  }
}
await parts.component.stop();

const baseline = results[0]?.p50 ?? Number.NaN;
console.log(`\n${runs} runs per call, ms to the last byte (new connection each):`);
console.log(
  `${'call'.padEnd(36)} ${'p50'.padStart(8)} ${'p99'.padStart(8)} ${'max'.padStart(8)} ${'× base p50'.padStart(11)} ${'KB'.padStart(8)}`,
);
for (const { label, p50, p99, max, size } of results) {
  console.log(
    `${label.padEnd(36)} ${fmt(p50).padStart(8)} ${fmt(p99).padStart(8)} ${fmt(max).padStart(8)} ${fmt(p50 / baseline, 1).padStart(11)} ${fmt(size / 1024, 1).padStart(8)}`,
  );
}
console.log(`\nwhole pages: every API call of a page at once, ms until the last answer:`);
for (const { label, p50, p99, max } of pageResults) {
  console.log(`${label.padEnd(40)} ${fmt(p50).padStart(8)} ${fmt(p99).padStart(8)} ${fmt(max).padStart(8)}`);
}
console.log(`\nload after: ${loadNow().text}`);
process.exit(failed ? 1 : 0);
