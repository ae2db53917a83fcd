/**
 * How many monitored servers one edge agent polls with no poll skipped or failed, what each server
 * costs it in CPU and memory, and how long a scrape of its metrics endpoint takes with 100 servers.
 *
 *   npm run bench:pollers              # = npm run -s build && node bench/pollers.mjs
 *   node bench/pollers.mjs --quick     # about 2 minutes: 5 s interval, 50–500 servers
 *       [--servers=50,100,250,500,1000,2000] [--interval=30000] [--ticks=2] [--warmup-ticks=1]
 *       [--scrape-servers=100] [--scrapes=200] [--keep-going] [--profile=N] [--time-limit=40]
 *
 * (or BENCH_SERVERS, BENCH_INTERVAL_MS, BENCH_TICKS, BENCH_WARMUP_TICKS, BENCH_SCRAPE_SERVERS,
 * BENCH_SCRAPES, BENCH_KEEP_GOING, BENCH_PROFILE, BENCH_TIME_LIMIT_MIN). It imports the BUILT
 * modules from ../dist (bench/ is not part of the build). Only 127.0.0.1 is used.
 *
 * Per step (N servers), two child processes, both fresh:
 *   simulator  startPlatformSimulator (dist/edge-agent/simulate/platform/server.js) in a child
 *              process of this script (so its CPU is not the agent's): N servers, each with the
 *              health API and the session API with two virtual proxies (`/`, `/hdr`), and the app
 *              list; every port free (0); the certificates made once and reused by every step.
 *   agent      a real `svc edge` (node dist/edge-agent/cli/main.js edge --config …): the
 *              simulator's config sections (cert, serversToMonitor, userSessions, appNames) with
 *              pollingInterval --interval for health and sessions, the metrics endpoint on, no
 *              destination (so no queue), uptime monitor and system info off.
 * The baseline (N = 0) is the same config with an empty server list: the agent idles with its
 * metrics endpoint and app-list poller (the simulator still serves the app list).
 *
 * The agent polls every target at start (tick 0) and then every interval, all targets together.
 * After --warmup-ticks ticks, the window runs over --ticks ticks, from just before one tick to just
 * before the one after the last (5 % of an interval before, so every answer of a measured tick
 * lies in the window). In it: the simulator's answers (expected: N × ticks health, 2N × ticks
 * sessions), the agent's CPU (/proc utime + stime) and the simulator's. At its end: the agent's
 * RSS (VmRSS) and peak (VmHWM), and, from the endpoint, svc_polls_failed_total and
 * svc_polls_skipped_total since the agent started. Also timed: how long after the first measured
 * tick the simulator had sent the last of its 3N answers ("burst"; the agent's request timeout is
 * 5 s). A step passes with 0 failed, 0 skipped, nothing refused by the simulator, and at the
 * window's end every poll of every tick so far answered (the window's own count is shown, not
 * judged: a burst that ends after the window's edge moves answers across it); the figure is the
 * largest N that passes. After the first step that does not pass, larger N are not tried (--keep-going
 * tries them).
 *
 * Per server: CPU = (agent CPU in the window − the baseline's idle CPU for as long) / (N × ticks),
 * in ms per server and interval; RSS = (RSS − baseline RSS) / N.
 *
 * Scrape latency: with --scrape-servers polled (every gauge present, checked), after a tick's burst,
 * --scrapes sequential GET /metrics on one keep-alive connection (5 unmeasured first); the same
 * against the baseline agent (only Svc's own metrics). p50/p99/max and the body size.
 *
 * --profile=N: after the steps, one more run at N servers with the agent under `node --cpu-prof`;
 * the top of the profile (self time by function and by module) is printed. Not in the table.
 *
 * The machine, and the load average before and after (and per step) are printed; a 1-minute load
 * above the number of cores means other processes competed for the cores: compare the ratios of
 * one run. Every wait is bounded; --time-limit ends the whole run. Children are killed on exit and
 * on Ctrl-C. Exit code 1 when a child cannot be started, dies, or the time limit is hit.
 */
import { fork, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  fmt,
  freePort,
  int,
  loadNow,
  machineLine,
  median,
  option,
  percentile,
  positive,
  processCpuSeconds,
  processMemory,
  removeOnExit,
  stopChild,
} from './lib.mjs';
import { formatSummary, profileDirectory, summariseProfile } from './profile.mjs';

const LOOPBACK = '127.0.0.1';
const SELF = fileURLToPath(import.meta.url);
const SVC_MAIN = fileURLToPath(new URL('../dist/edge-agent/cli/main.js', import.meta.url));
const SIMULATOR = new URL('../dist/edge-agent/simulate/platform/server.js', import.meta.url).href;
/** The simulated platform: same servers, users and apps every run. */
const SEED = 42;
const VIRTUAL_PROXIES = ['/', '/hdr'];
/** Health + one session poll per virtual proxy. */
const POLLS_PER_SERVER = 1 + VIRTUAL_PROXIES.length;
/** The window's edges lie this share of an interval before a tick. */
const EDGE_SHARE = 0.05;
/** How long a child may take to start: the simulator makes its certificates and 2N listeners, the agent reads its config. */
const START_TIMEOUT_MS = 90_000;
/** RSS is read this often in the window. */
const RSS_SAMPLE_MS = 500;
/** Unmeasured scrapes before the timed ones. */
const SCRAPE_WARMUP = 5;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const errorText = (err) => (err instanceof Error ? err.message : String(err));

// ---------------------------------------------------------------------------------------------
// The simulator's side: this file forked with --simulator-child, driven over IPC
// ---------------------------------------------------------------------------------------------

async function simulatorChild() {
  const { startPlatformSimulator } = await import(SIMULATOR);
  let sim;
  // The bench is gone (killed, Ctrl-C): the listeners go with this process.
  process.on('disconnect', () => process.exit(0));
  const handle = async (message) => {
    switch (message.type) {
      case 'start':
        sim = await startPlatformSimulator(message.options);
        return { config: sim.config };
      case 'status':
        if (sim === undefined) throw new Error('the simulator is not started');
        return sim.status();
      case 'stop':
        await sim?.stop();
        sim = undefined;
        return null;
      default:
        throw new Error(`unknown request ${JSON.stringify(message.type)}`);
    }
  };
  process.on('message', (message) => {
    handle(message).then(
      (value) => process.send({ id: message.id, value }),
      (err) => process.send({ id: message.id, error: errorText(err) }),
    );
  });
  process.send({ ready: true });
}

// ---------------------------------------------------------------------------------------------
// The bench's side
// ---------------------------------------------------------------------------------------------

/** Every child this run started, killed at exit or Ctrl-C. */
const children = new Set();
const tempDirs = new Set();

function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Keeps the last `max` lines of a stream, for error messages. */
function tail(max) {
  const lines = [];
  return {
    push(line) {
      lines.push(line);
      if (lines.length > max) lines.shift();
    },
    text: () => lines.join('\n'),
  };
}

/** Forks the simulator child and starts a simulator of `servers` servers in it. */
async function startSimulator(servers, certDir) {
  const child = track(fork(SELF, ['--simulator-child'], { execArgv: [], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] }));
  const output = tail(20);
  for (const stream of [child.stdout, child.stderr])
    createInterface({ input: stream }).on('line', (line) => output.push(line));
  const waiting = new Map();
  let next = 0;
  let ended;
  const failAll = (reason) => {
    for (const { reject } of waiting.values()) reject(new Error(reason));
    waiting.clear();
  };
  child.on('message', (message) => {
    const entry = waiting.get(message.id);
    if (entry === undefined) return;
    waiting.delete(message.id);
    if (message.error !== undefined) entry.reject(new Error(message.error));
    else entry.resolve(message.value);
  });
  child.once('exit', (code, signal) => {
    ended = `the simulator process exited (${signal ?? `code ${code}`})${output.text() ? `:\n${output.text()}` : ''}`;
    failAll(ended);
  });
  child.once('error', (err) => failAll(`the simulator process failed: ${errorText(err)}`));
  const call = (type, args, timeoutMs) =>
    new Promise((resolve, reject) => {
      if (ended !== undefined) return reject(new Error(ended));
      const id = ++next;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`the simulator did not answer "${type}" within ${timeoutMs} ms`));
      }, timeoutMs);
      waiting.set(id, {
        resolve: (value) => (clearTimeout(timer), resolve(value)),
        reject: (err) => (clearTimeout(timer), reject(err)),
      });
      child.send({ id, type, ...args });
    });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the simulator process did not start within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    child.once('message', () => (clearTimeout(timer), resolve()));
    child.once('exit', () => (clearTimeout(timer), reject(new Error(ended))));
  });
  try {
    const { config } = await call(
      'start',
      { options: { servers, seed: SEED, virtualProxies: VIRTUAL_PROXIES, certDir } },
      START_TIMEOUT_MS,
    );
    return {
      pid: child.pid,
      config,
      status: () => call('status', {}, 5_000),
      async stop() {
        if (ended === undefined) await call('stop', {}, 15_000).catch(() => undefined);
        child.disconnect?.();
        await stopChild(child, 5_000);
      },
    };
  } catch (err) {
    await stopChild(child, 2_000);
    throw new Error(`the simulator with ${servers} servers did not start: ${errorText(err)}`);
  }
}

/** The agent's config: the simulator's sections, the interval, the metrics endpoint; nothing else on. */
function agentConfig(simConfig, servers, intervalMs, metricsPort) {
  const svc = simConfig.Svc;
  return {
    Svc: {
      ...svc,
      serversToMonitor: {
        ...svc.serversToMonitor,
        pollingInterval: intervalMs,
        servers: servers === 0 ? [] : svc.serversToMonitor.servers,
      },
      userSessions: { ...svc.userSessions, pollingInterval: intervalMs },
      metricsEndpoint: { enable: true, host: LOOPBACK, port: metricsPort },
      localQueue: { directory: 'queue' },
      uptimeMonitor: { enable: false },
      systemInfo: { enable: false },
    },
  };
}

/**
 * Starts `svc edge` in `dir` with `config` (JSON, which YAML reads as it is); resolves once it logs
 * that it runs, with the time it was seen. Counts its WARN and ERROR lines and keeps the first few.
 */
async function startAgent(dir, config, nodeFlags = []) {
  const file = join(dir, 'svc.yaml');
  writeFileSync(file, `${JSON.stringify(config, null, 1)}\n`);
  const child = track(
    spawn(process.execPath, [...nodeFlags, SVC_MAIN, 'edge', '--config', file], {
      cwd: dir,
      env: { ...process.env, SVC_CONFIG: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const log = { warn: 0, error: 0, first: [], tail: tail(20) };
  let onRunning;
  const running = new Promise((resolve) => (onRunning = resolve));
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      log.tail.push(line);
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (typeof entry !== 'object' || entry === null) return;
      const { level, msg } = entry;
      if (level === 'warn' || level === 'error' || level === 'fatal') {
        log[level === 'warn' ? 'warn' : 'error'] += 1;
        if (log.first.length < 5) log.first.push(`${level}: ${msg}`);
      }
      if (typeof msg === 'string' && /^svc edge \S+ running/.test(msg)) onRunning(performance.now());
    });
  }
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const startedAt = await Promise.race([
    running,
    exited.then(({ code, signal }) => {
      throw new Error(`svc edge exited before it ran (${signal ?? `code ${code}`}):\n${log.tail.text()}`);
    }),
    sleep(START_TIMEOUT_MS).then(() => {
      throw new Error(`svc edge did not log "running" within ${START_TIMEOUT_MS} ms:\n${log.tail.text()}`);
    }),
  ]).catch(async (err) => {
    await stopChild(child, 2_000);
    throw err;
  });
  return {
    child,
    pid: child.pid,
    startedAt,
    log,
    exited,
    alive: () => child.exitCode === null && child.signalCode === null,
  };
}

/** GET `url` on `agent`: status, body and milliseconds until the last byte. */
function get(url, agent, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(url, { agent, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks), ms: performance.now() - t0 }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{.*\})? (\S+)$/;

/** Per metric name of a Prometheus text exposition: the sum of its samples' values and their count. */
function metricSums(text) {
  const sums = new Map();
  for (const line of text.split('\n')) {
    const m = SAMPLE_LINE.exec(line);
    if (m === null) continue;
    const entry = sums.get(m[1]) ?? { sum: 0, count: 0 };
    entry.sum += Number(m[2]);
    entry.count += 1;
    sums.set(m[1], entry);
  }
  return {
    sum: (name) => sums.get(name)?.sum ?? 0,
    count: (name) => sums.get(name)?.count ?? 0,
    samples: [...sums.values()].reduce((n, e) => n + e.count, 0),
  };
}

async function scrapeMetrics(url) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const res = await get(url, agent, 30_000);
    if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}`);
    return metricSums(res.body.toString('utf8'));
  } finally {
    agent.destroy();
  }
}

/** `count` sequential GETs on one keep-alive connection after SCRAPE_WARMUP unmeasured ones. */
async function scrapeLatency(url, count) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const times = [];
    let bytes = 0;
    for (let i = 0; i < SCRAPE_WARMUP + count; i++) {
      const res = await get(url, agent);
      if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}`);
      bytes = res.body.length;
      if (i >= SCRAPE_WARMUP) times.push(res.ms);
    }
    times.sort((a, b) => a - b);
    return { p50: percentile(times, 50), p99: percentile(times, 99), max: times[times.length - 1], bytes };
  } finally {
    agent.destroy();
  }
}

const answered = (status) => ({
  health: status.stats.health.ok,
  sessions: status.stats.sessions.ok,
  apps: status.stats.apps.ok,
});
const refused = (status) => {
  const s = status.stats;
  return (
    s.health.failed +
    s.health.rejected +
    s.sessions.failed +
    s.sessions.rejected +
    s.apps.failed +
    s.apps.rejected +
    s.notFound +
    s.tlsRejected
  );
};

/**
 * Waits until the simulator has answered `expected` more polls than in `before`, polling its status
 * every 50 ms; resolves to the time that took from `since` (ms), or NaN at `deadline`.
 */
async function burstEnd(sim, before, expected, since, deadline) {
  const base = answered(before);
  while (performance.now() < deadline) {
    const now = answered(await sim.status());
    if (now.health - base.health + now.sessions - base.sessions >= expected) return performance.now() - since;
    await sleep(50);
  }
  return NaN;
}

async function sleepUntil(t) {
  const ms = t - performance.now();
  if (ms > 0) await sleep(ms);
}

/**
 * One step: a simulator with max(servers, 1) servers, the agent polling `servers` of them; the
 * window; the counts. With `scrapes`, the scrape latency after the window.
 */
async function runStep(ctx, servers, { scrapes = 0, nodeFlags = [] } = {}) {
  const { intervalMs, ticks, warmupTicks, certDir } = ctx;
  const dir = mkdtempSync(join(tmpdir(), `svc-bench-pollers-${servers}-`));
  tempDirs.add(dir);
  const sim = await startSimulator(Math.max(servers, 1), certDir);
  let agent;
  let sampler;
  try {
    const metricsPort = await freePort(LOOPBACK);
    const metricsUrl = `http://${LOOPBACK}:${metricsPort}/metrics`;
    agent = await startAgent(dir, agentConfig(sim.config, servers, intervalMs, metricsPort), nodeFlags);
    const edge = EDGE_SHARE * intervalMs;
    const tickAt = (n) => agent.startedAt + n * intervalMs;
    const expected = servers * POLLS_PER_SERVER * ticks;

    await sleepUntil(tickAt(warmupTicks) - edge);
    const a = {
      t: performance.now(),
      cpu: processCpuSeconds(agent.pid),
      simCpu: processCpuSeconds(sim.pid),
      sim: await sim.status(),
    };
    const load = loadNow();
    // RSS goes up and down with the bursts and the collector: its median over the window, not one reading.
    const rssSamples = [processMemory(agent.pid).rss];
    sampler = setInterval(() => rssSamples.push(processMemory(agent.pid).rss), RSS_SAMPLE_MS);
    // The first measured tick: how long until the simulator has sent all its answers.
    const burstMs =
      servers === 0
        ? NaN
        : await burstEnd(sim, a.sim, servers * POLLS_PER_SERVER, tickAt(warmupTicks), tickAt(warmupTicks + 1) - edge);
    await sleepUntil(tickAt(warmupTicks + ticks) - edge);
    const b = {
      t: performance.now(),
      cpu: processCpuSeconds(agent.pid),
      simCpu: processCpuSeconds(sim.pid),
      sim: await sim.status(),
    };
    clearInterval(sampler);
    const memory = processMemory(agent.pid);
    if (!agent.alive()) throw new Error(`svc edge died during the window:\n${agent.log.tail.text()}`);
    const metrics = await scrapeMetrics(metricsUrl);
    const seconds = (b.t - a.t) / 1000;
    const result = {
      servers,
      expected,
      answered: answered(b.sim).health - answered(a.sim).health + answered(b.sim).sessions - answered(a.sim).sessions,
      // Since the simulator started: every tick fired so far (0 … warmup + ticks − 1) fully answered.
      answeredTotal: answered(b.sim).health + answered(b.sim).sessions,
      expectedTotal: servers * POLLS_PER_SERVER * (warmupTicks + ticks),
      refused: refused(b.sim),
      failed: metrics.sum('svc_polls_failed_total'),
      skipped: metrics.sum('svc_polls_skipped_total'),
      healthSeries: metrics.count('svc_cpu_total'),
      sessionSeries: metrics.count('svc_user_session_total'),
      ticks,
      seconds,
      cpu: (b.cpu - a.cpu) / seconds,
      cpuSeconds: b.cpu - a.cpu,
      simCpu: (b.simCpu - a.simCpu) / seconds,
      rss: median(rssSamples),
      peak: memory.peak,
      burstMs,
      load,
      warn: agent.log.warn,
      error: agent.log.error,
      logFirst: agent.log.first,
    };
    // The window's count is shown, not judged: a burst that ends after the window's edge moves answers across it.
    result.passed =
      result.failed === 0 &&
      result.skipped === 0 &&
      result.refused === 0 &&
      result.answeredTotal === result.expectedTotal;

    if (scrapes > 0) {
      // After the next tick's burst, so the scrapes do not share the agent with a burst.
      const before = await sim.status();
      if (servers > 0)
        await burstEnd(
          sim,
          before,
          servers * POLLS_PER_SERVER,
          tickAt(warmupTicks + ticks),
          tickAt(warmupTicks + ticks + 1) - edge,
        );
      const check = await scrapeMetrics(metricsUrl);
      const present = { health: check.count('svc_cpu_total'), sessions: check.count('svc_user_session_total') };
      const t0 = performance.now();
      result.scrape = { ...(await scrapeLatency(metricsUrl, scrapes)), samples: check.samples, present };
      result.scrape.overlappedTick =
        servers > 0 && performance.now() > tickAt(warmupTicks + ticks + 1) && t0 < tickAt(warmupTicks + ticks + 1);
    }
    return result;
  } finally {
    clearInterval(sampler);
    if (agent !== undefined) {
      const end = await stopChild(agent.child, 15_000);
      if (end.killed)
        console.log(`  note: svc edge (${servers} servers) did not stop within 15 s of SIGTERM and was killed`);
    }
    await sim.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

function parseOptions(maxServers) {
  const quick = option('quick', 'BENCH_QUICK', 'false') !== 'false';
  const servers = String(option('servers', 'BENCH_SERVERS', quick ? '50,100,250,500' : '50,100,250,500,1000,2000'))
    .split(',')
    .map((s) => Number(s.trim()));
  for (const n of servers)
    if (!Number.isSafeInteger(n) || n < 1 || n > maxServers)
      throw new Error(`--servers: every count must be an integer 1–${maxServers} (got ${n})`);
  const intervalMs = positive('interval', 'BENCH_INTERVAL_MS', quick ? 5_000 : 30_000);
  if (!Number.isSafeInteger(intervalMs) || intervalMs < 1000)
    throw new Error('--interval must be an integer ≥ 1000 (ms)');
  const ticks = positive('ticks', 'BENCH_TICKS', 2);
  const warmupTicks = positive('warmup-ticks', 'BENCH_WARMUP_TICKS', 1);
  if (!Number.isSafeInteger(ticks) || !Number.isSafeInteger(warmupTicks))
    throw new Error('--ticks and --warmup-ticks must be integers ≥ 1');
  const scrapeServers = positive('scrape-servers', 'BENCH_SCRAPE_SERVERS', 100);
  const scrapes = positive('scrapes', 'BENCH_SCRAPES', quick ? 100 : 200);
  if (scrapeServers > maxServers || !Number.isSafeInteger(scrapeServers))
    throw new Error(`--scrape-servers must be an integer 1–${maxServers}`);
  if (scrapes > 10_000 || !Number.isSafeInteger(scrapes)) throw new Error('--scrapes must be an integer 1–10000');
  const keepGoing = option('keep-going', 'BENCH_KEEP_GOING', 'false') !== 'false';
  const profileOption = option('profile', 'BENCH_PROFILE', '');
  const profile = profileOption === '' ? undefined : Number(profileOption);
  if (profile !== undefined && (!Number.isSafeInteger(profile) || profile < 1 || profile > maxServers))
    throw new Error(`--profile must name a server count 1–${maxServers}`);
  const steps = [...new Set(servers)].sort((x, y) => x - y);
  // A step: start + warmup ticks + the window + the scrape tick + stop, with slack.
  const stepS = ((warmupTicks + ticks + 1) * intervalMs) / 1000 + 30;
  const estimateMin = ((steps.length + 1 + (steps.includes(scrapeServers) ? 0 : 1) + (profile ? 1 : 0)) * stepS) / 60;
  const timeLimitMin = positive('time-limit', 'BENCH_TIME_LIMIT_MIN', Math.ceil(estimateMin * 2 + 5));
  return {
    quick,
    steps,
    intervalMs,
    ticks,
    warmupTicks,
    scrapeServers,
    scrapes,
    keepGoing,
    profile,
    timeLimitMin,
    estimateMin,
  };
}

/** Why a step did not pass, beyond its failed and skipped counts. */
function verdictNotes(r) {
  const notes = [];
  if (r.answeredTotal !== r.expectedTotal)
    notes.push(`${int(r.answeredTotal)} of ${int(r.expectedTotal)} polls since the start answered at the window's end`);
  if (r.refused > 0)
    notes.push(
      `${r.refused} refused by the simulator (TLS or request checks; a client giving up mid-handshake counts)`,
    );
  return notes.length > 0 ? ` (${notes.join('; ')})` : '';
}

function stepLine(r, baseline) {
  const extraCpuS = r.cpuSeconds - baseline.cpu * r.seconds;
  const cpuMsPerServer = (extraCpuS * 1000) / (r.servers * r.ticks);
  const rssPerServer = (r.rss - baseline.rss) / r.servers;
  r.cpuMsPerServer = cpuMsPerServer;
  r.rssPerServer = rssPerServer;
  return [
    String(r.servers).padStart(7),
    `${int(r.answered)}/${int(r.expected)}`.padStart(15),
    String(r.failed).padStart(6),
    String(r.skipped).padStart(7),
    (Number.isFinite(r.burstMs) ? fmt(r.burstMs / 1000, 2) : '> tick').padStart(7),
    `${fmt(r.cpu * 100, 1)} %`.padStart(9),
    fmt(cpuMsPerServer, 2).padStart(11),
    fmt(r.rss / 2 ** 20, 1).padStart(8),
    fmt(rssPerServer / 1024, 1).padStart(10),
    `${fmt(r.simCpu * 100, 1)} %`.padStart(9),
    `${fmt(r.load.one, 2)}${r.load.busy ? '*' : ' '}`.padStart(7),
    `  ${r.passed ? 'ok' : 'NOT OK'}${verdictNotes(r)}`,
  ].join(' ');
}

async function main() {
  const { MAX_SERVERS } = await import(SIMULATOR);
  const o = parseOptions(MAX_SERVERS);
  removeOnExit(tempDirs, () => {
    for (const child of children) child.kill('SIGKILL');
  });
  const limit = setTimeout(() => {
    console.error(`\npollers bench: the time limit of ${o.timeLimitMin} min is over (--time-limit); stopping`);
    process.exit(1);
  }, o.timeLimitMin * 60_000);
  limit.unref();

  const loadStart = loadNow();
  console.log(
    'pollers benchmark: one svc edge polling N simulated servers (health + sessions with 2 virtual proxies + the app list) over mutual TLS',
  );
  console.log(`machine     ${machineLine()}`);
  console.log(
    `load avg    ${loadStart.text} at start${loadStart.busy ? '  ← busy: the load is above the cores; expect lower, noisier figures' : ''}`,
  );
  console.log(
    `interval    ${int(o.intervalMs)} ms (health and sessions); ${o.warmupTicks} warmup tick(s), then a window of ${o.ticks} ticks; steps ${o.steps.join(', ')} servers; about ${Math.ceil(o.estimateMin)} min (limit ${o.timeLimitMin} min)`,
  );
  console.log(
    '            simulator and agent are child processes; the agent is `svc edge` with the metrics endpoint and no destination',
  );

  const certDir = mkdtempSync(join(tmpdir(), 'svc-bench-pollers-certs-'));
  tempDirs.add(certDir);
  mkdirSync(certDir, { recursive: true });
  const ctx = { intervalMs: o.intervalMs, ticks: o.ticks, warmupTicks: o.warmupTicks, certDir };

  const wantsScrape = (n) => n === o.scrapeServers;
  console.log('\nbaseline: 0 servers …');
  const baseline = await runStep(ctx, 0, { scrapes: o.scrapes });
  console.log(
    `baseline    CPU ${fmt(baseline.cpu * 100, 2)} % of a core idle, RSS ${fmt(baseline.rss / 2 ** 20, 1)} MB (peak ${fmt(baseline.peak / 2 ** 20, 1)}), ${baseline.scrape.samples} samples on /metrics; ${baseline.warn} WARN, ${baseline.error} ERROR lines`,
  );

  const header = [
    'servers'.padStart(7),
    'answered/expect'.padStart(15),
    'failed'.padStart(6),
    'skipped'.padStart(7),
    'burst s'.padStart(7),
    'agent CPU'.padStart(9),
    'CPU ms/srv'.padStart(11),
    'RSS MB'.padStart(8),
    'RSS KB/srv'.padStart(10),
    'sim CPU'.padStart(9),
    'load1'.padStart(7),
    '  verdict',
  ].join(' ');
  console.log(`\n${header}`);
  const results = [];
  let scrapeResult;
  let failedStep;
  for (const n of o.steps) {
    let r;
    try {
      r = await runStep(ctx, n, { scrapes: wantsScrape(n) ? o.scrapes : 0 });
    } catch (err) {
      console.log(`${String(n).padStart(7)}   step failed: ${errorText(err)}`);
      process.exitCode = 1;
      failedStep ??= n;
      if (!o.keepGoing) break;
      continue;
    }
    results.push(r);
    if (r.scrape) scrapeResult = r;
    console.log(stepLine(r, baseline));
    if (!r.passed) {
      failedStep ??= n;
      for (const line of r.logFirst) console.log(`          log: ${line.slice(0, 200)}`);
      if (!o.keepGoing) break;
    }
  }
  if (scrapeResult === undefined) {
    console.log(`\nscrape step: ${o.scrapeServers} servers …`);
    try {
      scrapeResult = await runStep(ctx, o.scrapeServers, { scrapes: o.scrapes });
      console.log(stepLine(scrapeResult, baseline));
    } catch (err) {
      console.log(`  the scrape step failed: ${errorText(err)}`);
      process.exitCode = 1;
    }
  }

  console.log(
    "\n  answered/expect  the simulator's answers in the window / servers × 3 polls × ticks; failed, skipped: svc_polls_*_total since the agent started",
  );
  console.log(
    '  burst s          after the first measured tick, until the simulator had sent its last answer (the request timeout is 5 s)',
  );
  console.log(
    "  CPU ms/srv       agent CPU per server and interval, less the baseline's idle CPU; RSS KB/srv = (RSS − baseline RSS) / servers",
  );
  console.log("  load1            1-minute load average at the window's start; * = above the cores (busy)");

  const passing = results.filter((r) => r.passed);
  const best = passing.length > 0 ? passing[passing.length - 1] : undefined;
  const firstFail = results.find((r) => !r.passed);
  console.log('');
  if (best === undefined) {
    console.log(`largest N   none: no step passed (first: ${o.steps[0]} servers)`);
  } else {
    const contiguous = firstFail === undefined || firstFail.servers > best.servers;
    console.log(
      `largest N   ${best.servers} servers with 0 skipped and 0 failed polls at a ${int(o.intervalMs)} ms interval${contiguous ? '' : ' (a smaller step failed: noisy machine?)'}${failedStep === undefined ? ` (the largest step tried; ${o.steps.at(-1)} is not a limit)` : `; ${failedStep} did not pass`}`,
    );
    console.log(
      `500/agent   ${best.servers >= 500 ? 'reached' : 'NOT reached'}${o.intervalMs !== 30_000 ? ` (at ${int(o.intervalMs)} ms; the goal is for 30,000 ms)` : ''}`,
    );
    const perServerMs = best.cpuMsPerServer;
    if (Number.isFinite(perServerMs) && perServerMs > 0) {
      console.log(
        `per server  ${fmt(perServerMs, 2)} ms CPU per interval (${fmt((perServerMs / o.intervalMs) * 100, 4)} % of a core), ${fmt(best.rssPerServer / 1024, 1)} KB RSS, at ${best.servers} servers`,
      );
      console.log(
        `            CPU alone would allow ~${int(o.intervalMs / perServerMs)} servers per core at this interval; the limit is usually the burst (all targets polled at the same moment, each within 5 s)`,
      );
    }
  }

  if (scrapeResult?.scrape !== undefined) {
    const s = scrapeResult.scrape;
    const b = baseline.scrape;
    console.log(
      `\nscrape      ${o.scrapes} sequential GET /metrics on one keep-alive connection (after ${SCRAPE_WARMUP} unmeasured), after a poll burst`,
    );
    console.log(
      `${'agent'.padEnd(14)} ${'samples'.padStart(8)} ${'body KB'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)}`,
    );
    const row = (name, x) =>
      console.log(
        `${name.padEnd(14)} ${String(x.samples).padStart(8)} ${fmt(x.bytes / 1024, 1).padStart(8)} ${fmt(x.p50, 2).padStart(8)} ${fmt(x.p99, 2).padStart(8)} ${fmt(x.max, 2).padStart(8)}`,
      );
    row('0 servers', b);
    row(`${scrapeResult.servers} servers`, s);
    console.log(
      `ratio          ${fmt(s.samples / b.samples, 1).padStart(8)} ${fmt(s.bytes / b.bytes, 1).padStart(8)} ${fmt(s.p50 / b.p50, 1).padStart(8)} ${fmt(s.p99 / b.p99, 1).padStart(8)} ${fmt(s.max / b.max, 1).padStart(8)}`,
    );
    const complete =
      s.present.health === scrapeResult.servers && s.present.sessions === scrapeResult.servers * VIRTUAL_PROXIES.length;
    console.log(
      `gauges      svc_cpu_total ${s.present.health} series, svc_user_session_total ${s.present.sessions}${complete ? ' (all present)' : `  ← expected ${scrapeResult.servers} and ${scrapeResult.servers * VIRTUAL_PROXIES.length}`}${s.overlappedTick ? '; the scrapes ran into the next tick' : ''}`,
    );
  }

  if (o.profile !== undefined) {
    console.log(`\nprofile: ${o.profile} servers, svc edge under node --cpu-prof (not in the table) …`);
    const profileDir = profileDirectory('pollers');
    try {
      const r = await runStep(ctx, o.profile, { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] });
      console.log(stepLine(r, baseline));
      const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
      if (file === undefined) throw new Error('the agent wrote no .cpuprofile (it did not exit cleanly)');
      const p = summariseProfile(join(profileDir, file));
      console.log(
        `profile     start, warmup and window: ${join(profileDir, file)} (node bench/profile.mjs <file> reads it)`,
      );
      for (const line of formatSummary(p, { indent: '  ' })) console.log(line);
    } catch (err) {
      console.log(`  the profile run failed: ${errorText(err)}`);
      process.exitCode = 1;
    }
  }

  const loadEnd = loadNow();
  console.log(
    `\nload avg    ${loadEnd.text} at the end${loadEnd.busy || loadStart.busy || results.some((r) => r.load.busy) ? '  ← the machine was busy during the run: compare ratios within this run' : ''}`,
  );
}

if (process.argv.includes('--simulator-child')) {
  await simulatorChild();
} else {
  try {
    await main();
  } catch (err) {
    console.error(`pollers bench: ${errorText(err)}`);
    process.exitCode = 1;
  }
}
