/**
 * RSS of `svc edge` with every operator feature on against the same process with all of them off,
 * in one run (both processes run side by side, so they see the same machine): idle after --idle
 * seconds, then with the status page open in headless Chromium for --page seconds (the page polls
 * /status.json every 3 s). The features: configVisualisation (with the status page),
 * containerHealthCheck, metricsEndpoint, heartbeat (to a local recording server), uptimeMonitor,
 * systemInfo, anonTelemetry (to the same recording server). Both processes run a UDP log listener with no
 * traffic, so the baseline is a real edge agent, not an empty process.
 *
 * RSS is read from /proc/<pid>/status (VmRSS) on Linux, else `ps -o rss=`; each figure is the
 * median of 5 readings 1 s apart.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { fmt, median, positive, removeOnExit } from './lib.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const IDLE_S = positive('idle', 'BENCH_IDLE_S', 30);
const PAGE_S = positive('page', 'BENCH_PAGE_S', 60);
const CHROMIUM =
  process.env.CHROMIUM_PATH ??
  ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => {
    try {
      execFileSync(p, ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  });
const TARGET_MB = 15;
const HOST = '127.0.0.1';

const dirs = new Set();
const children = [];
removeOnExit(dirs, () => children.forEach((c) => c.kill('SIGKILL')));

const signed = (mb) => `${mb >= 0 ? '+' : ''}${fmt(mb, 1)}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port free for TCP a moment ago (the idle UDP listeners take one too: nothing else binds them here). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function rssKb(pid) {
  if (process.platform === 'linux') {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (m) return Number(m[1]);
  }
  return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim());
}

async function rssMb(pids) {
  const readings = pids.map(() => []);
  for (let i = 0; i < 5; i++) {
    pids.forEach((pid, k) => readings[k].push(rssKb(pid) / 1024));
    await sleep(1000);
  }
  return readings.map(median);
}

function startEdge(name, lines) {
  const cwd = mkdtempSync(join(os.tmpdir(), `svc-bench-rss-${name}-`));
  dirs.add(cwd);
  writeFileSync(join(cwd, 'svc.yaml'), ['Svc:', ...lines, ''].join('\n'));
  const child = spawn(process.execPath, [join(ROOT, 'edge-agent/bin/svc.js'), 'edge', '--config', 'svc.yaml'], {
    cwd,
    env: { ...process.env, SVC_CONFIG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  const running = new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (out.includes('svc edge') && out.includes(' running (')) {
        clearInterval(timer);
        resolve();
      }
    }, 100);
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`svc edge (${name}) exited with ${code}:\n${out}`));
    });
  });
  return { child, running, output: () => out };
}

async function main() {
  let heartbeats = 0;
  let telemetry = 0;
  const recorder = createServer((req, res) => {
    if (req.url === '/telemetry') telemetry++;
    else heartbeats++;
    req.resume();
    res.end('ok');
  });
  await new Promise((resolve) => recorder.listen(0, HOST, resolve));
  const [offUdp, onUdp, webPort, healthPort, metricsPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const base = (udp) => [
    `  logEvents: {udpServerConfig: {serverHost: ${HOST}, portLogEvents: ${udp}}, source: {proxy: {enable: true}}}`,
    '  localQueue: {directory: queue}',
  ];
  const off = startEdge('off', [...base(offUdp), '  uptimeMonitor: {enable: false}', '  systemInfo: {enable: false}']);
  const on = startEdge('on', [
    ...base(onUdp),
    `  configVisualisation: {enable: true, host: ${HOST}, port: ${webPort}}`,
    `  containerHealthCheck: {enable: true, port: ${healthPort}}`,
    `  metricsEndpoint: {enable: true, host: ${HOST}, port: ${metricsPort}}`,
    `  heartbeat: {enable: true, remoteURL: "http://${HOST}:${recorder.address().port}/alive", frequency: "every 10 seconds"}`,
    '  uptimeMonitor: {enable: true, frequency: "every 1 minute"}',
    '  systemInfo: {enable: true}',
    '  anonTelemetry: true',
    `  anonTelemetrySettings: {url: "http://${HOST}:${recorder.address().port}/telemetry"}`,
  ]);
  await Promise.all([off.running, on.running]);
  // The start line's `components` field: what each process runs.
  const components = (o) => {
    const line = o
      .output()
      .split('\n')
      .find((l) => l.includes('"components":'));
    return line ? JSON.parse(line).components.join(', ') : '?';
  };
  console.log(`svc edge, operator features off: ${components(off)}`);
  console.log(`svc edge, operator features on:  ${components(on)}`);
  console.log(`idle for ${IDLE_S} s …`);
  await sleep(IDLE_S * 1000);
  const [offIdle, onIdle] = await rssMb([off.child.pid, on.child.pid]);

  let pageMb = NaN;
  let offLater = NaN;
  let refreshes = 0;
  if (CHROMIUM) {
    console.log(`status page open in headless Chromium for ${PAGE_S} s …`);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
    const page = await browser.newPage();
    page.on('response', (r) => (r.url().endsWith('/status.json') ? refreshes++ : undefined));
    await page.goto(`http://${HOST}:${webPort}/status`);
    await sleep(PAGE_S * 1000);
    [offLater, pageMb] = await rssMb([off.child.pid, on.child.pid]);
    await browser.close();
  } else {
    console.log('no Chromium found (set CHROMIUM_PATH): the status-page figure is skipped');
  }
  for (const c of children) c.kill('SIGTERM');
  recorder.close();

  const [l1, l5, l15] = os.loadavg();
  console.log('');
  console.log(
    `machine: ${os.cpus().length} CPUs, load average ${fmt(l1)} ${fmt(l5)} ${fmt(l15)}; node ${process.version}`,
  );
  console.log('| process | RSS MB | vs off |');
  console.log('|---|---|---|');
  console.log(`| features off, idle ${IDLE_S} s | ${fmt(offIdle, 1)} | |`);
  console.log(`| features on, idle ${IDLE_S} s | ${fmt(onIdle, 1)} | ${signed(onIdle - offIdle)} |`);
  if (CHROMIUM) {
    console.log(`| features off, ${PAGE_S} s later | ${fmt(offLater, 1)} | |`);
    console.log(
      `| features on, status page open ${PAGE_S} s (${refreshes} refreshes) | ${fmt(pageMb, 1)} | ${signed(pageMb - offLater)} |`,
    );
  }
  console.log(`heartbeats received: ${heartbeats}; telemetry reports received: ${telemetry}`);
  const worst = Math.max(onIdle - offIdle, CHROMIUM ? pageMb - offLater : -Infinity);
  console.log(
    `target: the features cost ≤ ${TARGET_MB} MB together: ${worst <= TARGET_MB ? 'met' : 'NOT met'} (${signed(worst)} MB at most)`,
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
