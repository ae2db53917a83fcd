/**
 * The time from a server failing to the alert's arrival at a webhook, and from its healing to the
 * resolved notification, against what the configuration allows: `for` plus one evaluation interval
 * plus one polling interval (a failure is seen at the next poll, then at the next evaluation).
 *
 *   npm run build && node bench/alerts-latency.mjs [--trials=5] [--for=10] [--interval=10] [--polling=10]
 *
 * (or BENCH_TRIALS, BENCH_FOR, BENCH_INTERVAL, BENCH_POLLING; seconds). It runs the platform
 * simulator (3 servers, mutual TLS) in this process and the built `svc local` as a child, with the
 * built-in serverDown rule (`for` as given, groupWait 0) and one webhook channel to a recording HTTP
 * server here. Each trial waits a random part of a polling interval, fails node2 (HTTP 500), waits for
 * the firing webhook, heals node2 and waits for the resolved one.
 *
 * Printed per trial and as p50/max: fail → firing (s), and ÷ the bound (for + interval + polling);
 * heal → resolved (s), and ÷ its bound (interval + polling). A ratio at or under 1 is on time.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fmt, freePort, machineLine, percentile, positive, removeOnExit, stopChild } from './lib.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const load = (path) => import(pathToFileURL(join(ROOT, 'dist', path)).href);

const trials = positive('trials', 'BENCH_TRIALS', 5);
const forS = positive('for', 'BENCH_FOR', 10);
const intervalS = positive('interval', 'BENCH_INTERVAL', 10);
const pollingS = positive('polling', 'BENCH_POLLING', 10);

const { startPlatformSimulator } = await load('edge-agent/simulate/platform/server.js');
const dir = mkdtempSync(join(tmpdir(), 'svc-alerts-latency-'));
removeOnExit(new Set([dir]));

/** Webhook payloads as they arrive: [time, payload]. */
const arrivals = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    arrivals.push([Date.now(), JSON.parse(body)]);
    res.writeHead(200).end();
  });
});
const receiverPort = await freePort();
await new Promise((resolve) => receiver.listen(receiverPort, '127.0.0.1', resolve));

const sim = await startPlatformSimulator({ servers: 3, seed: 21, certDir: join(dir, 'certs') });
const config = {
  Svc: {
    uptimeMonitor: { enable: false },
    systemInfo: { enable: false },
    localQueue: { directory: join(dir, 'queue') },
    store: { path: join(dir, 'store', 'svc.db') },
    cert: sim.config.Svc.cert,
    serversToMonitor: { ...sim.config.Svc.serversToMonitor, pollingInterval: pollingS * 1000 },
    userSessions: { ...sim.config.Svc.userSessions, enableSessionExtract: false },
    appNames: sim.config.Svc.appNames,
    alerts: {
      evaluationInterval: `${intervalS}s`,
      groupWait: '0',
      builtIn: { serverDown: { for: `${forS}s` } },
      channels: [{ name: 'hook', type: 'webhook', url: `http://127.0.0.1:${receiverPort}/hook` }],
    },
  },
};
writeFileSync(join(dir, 'svc.yaml'), JSON.stringify(config));
const child = spawn(join(ROOT, 'node_modules/.bin/svc'), ['local', '--config', 'svc.yaml'], {
  cwd: dir,
  env: { ...process.env, SVC_CONFIG: '' },
});
let output = '';
child.stdout.on('data', (c) => (output += c));
child.stderr.on('data', (c) => (output += c));

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function waitFor(what, check, timeoutMs) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const found = check();
    if (found) return found;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}\n${output.slice(-3000)}`);
}
const about = (status) => () =>
  arrivals.find(
    ([, p]) => p.alerts.some((a) => a.labels.server === 'node2' && a.status === status) && !p.seen && (p.seen = true),
  );

await waitFor('svc local running', () => output.includes(' running ('), 60_000);
// A full polling interval and evaluation, so that node2 was seen up.
await sleep((pollingS + intervalS) * 1000);

const firing = [];
const resolved = [];
for (let trial = 1; trial <= trials; trial++) {
  await sleep(Math.random() * pollingS * 1000);
  const failedAt = Date.now();
  sim.fail('node2', 'http-500');
  const [firedAt] = await waitFor('the firing webhook', about('firing'), (forS + intervalS + pollingS) * 3000);
  await sleep(Math.random() * pollingS * 1000);
  const healedAt = Date.now();
  sim.heal('node2');
  const [resolvedAt] = await waitFor('the resolved webhook', about('resolved'), (intervalS + pollingS) * 3000);
  firing.push((firedAt - failedAt) / 1000);
  resolved.push((resolvedAt - healedAt) / 1000);
  console.log(`trial ${trial}: fail → firing ${fmt(firing.at(-1), 1)} s, heal → resolved ${fmt(resolved.at(-1), 1)} s`);
}

const fireBound = forS + intervalS + pollingS;
const resolveBound = intervalS + pollingS;
const line = (name, xs, bound) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const p50 = percentile(sorted, 0.5);
  const max = sorted.at(-1);
  console.log(
    `${name}: p50 ${fmt(p50, 1)} s, max ${fmt(max, 1)} s; bound ${bound} s; p50 ÷ bound ${fmt(p50 / bound)}, max ÷ bound ${fmt(max / bound)}`,
  );
};
console.log(
  `\nserverDown, for ${forS} s, evaluation every ${intervalS} s, health polls every ${pollingS} s, ${trials} trials`,
);
line('fail → firing webhook', firing, fireBound);
line('heal → resolved webhook', resolved, resolveBound);
console.log(machineLine());

await stopChild(child);
await sim.stop();
receiver.close();
