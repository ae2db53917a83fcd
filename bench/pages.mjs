/**
 * How long each history page takes to show its data in headless Chromium, on a generated store of
 * `--days` days × `--servers` servers, against the status page's load in the same run.
 *
 *   npm run build && node bench/pages.mjs [--days=30] [--servers=10] [--loads=20] [--ranges=24h,30d] [--keep=path.db]
 *
 * (or BENCH_DAYS, BENCH_SERVERS, BENCH_LOADS, BENCH_RANGES). It imports the BUILT modules from ../dist.
 * The store is filled by the history generator (dist/edge-agent/simulate/history.js) ending at now;
 * the real web view with its read API (/api/v1/) serves it on 127.0.0.1, in this process. Each load
 * is a fresh browser page (no cache) going to the page's URL; the time is from the navigation's start
 * to the page's "data shown" marker (`document.body.dataset.loaded`, set by history.js after the first
 * render, charts and tables included). The baseline is /status (its first render of /status.json:
 * the summary line leaves "Loading…").
 * The web view's rate limit (300 requests a minute per IP) would bind after a few loads of
 * /servers (one request per server); the limiter's clock is moved a minute ahead before each load.
 *
 * Printed: the store (rows per table, file size, generation time), then per page and range the
 * p50/p99/max of N loads (ms) and p50 ÷ the baseline's p50; plus the machine and its load.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { fmt, freePort, int, loadNow, machineLine, option, percentile, positive, removeOnExit } from './lib.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const load = (path) => import(pathToFileURL(join(DIST, path)).href);

const days = positive('days', 'BENCH_DAYS', 30);
const servers = positive('servers', 'BENCH_SERVERS', 10);
const loads = positive('loads', 'BENCH_LOADS', 20);
const ranges = option('ranges', 'BENCH_RANGES', '24h,30d').split(',');
const keep = option('keep', 'BENCH_KEEP', '');
const PAGES = ['servers', 'logs', 'users', 'performance', 'audit'];

const { generateHistory } = await load('edge-agent/simulate/history.js');
const { webView } = await load('edge-agent/endpoints/web/compose.js');
const { Observed } = await load('edge-agent/endpoints/observed.js');
const { ErrorTracker } = await load('shared/errors/tracker.js');
const { parseConfigText } = await load('shared/config/load.js');

/**
 * The real web view with its read API on the store at `storePath`, composed as `svc local` composes
 * it (compose.ts); nextMinute() moves its rate limiter's clock a minute ahead.
 */
async function startWebView(storePath) {
  const port = await freePort();
  const yaml = `Svc:\n  configVisualisation: {enable: true, host: 127.0.0.1, port: ${port}}\n  store: {path: ${JSON.stringify(storePath)}}\n`;
  const { config } = parseConfigText(yaml, 'bench.yaml', {});
  const quiet = { info() {}, warn() {}, debug() {}, error: (...args) => console.error(...args) };
  const errors = new ErrorTracker({ enabled: false, log: quiet });
  let offset = 0;
  const { component } = webView(
    { config, configFile: 'bench.yaml', logger: quiet, errors },
    { observed: new Observed(), mode: 'local', installDir: ROOT, now: () => Date.now() + offset },
  );
  await component.start();
  return {
    base: `http://127.0.0.1:${port}`,
    nextMinute: () => {
      offset += 60_000;
    },
    stop: () => component.stop(),
  };
}

const dirs = new Set();
removeOnExit(dirs);
const dir = mkdtempSync(join(tmpdir(), 'svc-bench-pages-'));
dirs.add(dir);
const path = keep || join(dir, 'svc.db');

console.log(machineLine());
console.log(`load before: ${loadNow().text}`);
const started = performance.now();
const counts = generateHistory({ path, now: Date.now(), days, servers, seed: 1 });
console.log(
  `store: ${days} days × ${servers} servers in ${fmt((performance.now() - started) / 1000, 1)} s, ${int(statSync(path).size / 1_048_576)} MiB; rows: ${Object.entries(
    counts,
  )
    .map(([table, n]) => `${table} ${int(n)}`)
    .join(', ')}`,
);

const web = await startWebView(path);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});

/** The times (ms) of N fresh loads of `url` until `ready` holds in the page. */
async function measure(url, ready) {
  const times = [];
  for (let i = 0; i < loads; i += 1) {
    web.nextMinute();
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(err.message));
    const t0 = performance.now();
    await page.goto(url);
    await page.waitForFunction(ready, null, { timeout: 60_000 });
    times.push(performance.now() - t0);
    const shownError = await page.evaluate(() => {
      const box = document.getElementById('error');
      return box && !box.hidden ? box.textContent : '';
    });
    await context.close();
    if (errors.length > 0 || shownError) throw new Error(`${url}: ${[...errors, shownError].join('; ')}`);
  }
  return times.sort((a, b) => a - b);
}

const line = (what, times, baseline) =>
  `${what.padEnd(22)} p50 ${fmt(percentile(times, 50), 0).padStart(6)} ms  p99 ${fmt(percentile(times, 99), 0).padStart(6)} ms  max ${fmt(times.at(-1), 0).padStart(6)} ms${
    baseline ? `  ×${fmt(percentile(times, 50) / percentile(baseline, 50), 2)} of /status` : ''
  }`;

try {
  const baseline = await measure(`${web.base}/status`, () => {
    const summary = document.getElementById('summary');
    return summary !== null && summary.textContent !== 'Loading…';
  });
  console.log(`${loads} loads each, 1366×768, from navigation to the data shown:`);
  console.log(line('/status (baseline)', baseline));
  for (const range of ranges)
    for (const name of PAGES) {
      const times = await measure(`${web.base}/${name}?range=${range}`, () => document.body.dataset.loaded === '1');
      console.log(line(`/${name} ${range}`, times, baseline));
    }
} finally {
  await browser.close();
  await web.stop();
  console.log(`load after: ${loadNow().text}`);
}
