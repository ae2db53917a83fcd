/**
 * Resident memory of `svc local` (the built CLI) on a config (default config/local.yaml), beside two
 * baselines started in the same run and measured side by side (so they see the same machine):
 * `svc local` on a minimal config (the defaults: system info and the uptime monitor, no source,
 * no destination) and a bare `node -e "setInterval(() => {}, 1e3)"`.
 *
 * For each: the time to its "running" log line, RSS --idle seconds after start (VmRSS, the median of
 * --readings readings 1 s apart) and the peak (VmHWM: the most RSS the process ever had, normally at
 * start). Then, in a separate start that is not measured, the packages the config's start loads
 * (the ESM resolve and CommonJS require hooks of bench/loaded-modules.mjs: the hook's own thread
 * would add to the RSS).
 * With --load, one more start under load (`underLoad` below says what load): the issue's "≤ 150 MB
 * under the UDP and audit loads", measured on the svc process itself rather than a bench process.
 * With --profile, one more start of the config's `svc local` under `--heap-prof --cpu-prof`,
 * stopped after --idle seconds: the top of both profiles (bench/profile.mjs), files kept.
 *
 * Each process gets its own temp working directory (the config's relative paths, ./data/…, land
 * there) with the config copied in; SVC_CONFIG is cleared. Linux only (/proc).
 */
import { fork, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { CLIENT_VERSION, envelopeText } from './audit-api.mjs';
import { formatSnapshot, summariseSnapshot } from './heap-snapshot.mjs';
import {
  fmt,
  freePort,
  int,
  loadNow,
  machineLine,
  median,
  option,
  positive,
  processCpuSeconds,
  processMemory,
  removeOnExit,
  sampleMemory,
  stopChild,
} from './lib.mjs';
import { formatSummary, profileDirectory, summarise } from './profile.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SVC = join(ROOT, 'edge-agent/bin/svc.js');
const CONFIG = resolve(option('config', 'BENCH_CONFIG', join(ROOT, 'config/local.yaml')));
const IDLE_S = positive('idle', 'BENCH_IDLE_S', 30);
const READINGS = Math.round(positive('readings', 'BENCH_READINGS', 5));
/** The node flags of the svc bin's shebang (`#!/usr/bin/env -S node <flags>`): what `svc` runs with. */
const SHEBANG_FLAGS = /^#!\/usr\/bin\/env -S node(.*)$/m.exec(readFileSync(SVC, 'utf8'))?.[1]?.trim() ?? '';
// Default: the flags `svc` runs with (its shebang); --node-flags='' measures node without any.
const NODE_FLAGS = String(option('node-flags', 'BENCH_NODE_FLAGS', SHEBANG_FLAGS))
  .split(' ')
  .filter(Boolean);
const PROFILE = option('profile', 'BENCH_PROFILE', 'false') !== 'false';
const LOAD = option('load', 'BENCH_LOAD', 'false') !== 'false';
const LOAD_S = positive('load-duration', 'BENCH_LOAD_S', 10);
const UDP_RATE = Math.round(positive('udp-rate', 'BENCH_UDP_RATE', 20_000));
const AUDIT_CONCURRENCY = Math.round(positive('audit-concurrency', 'BENCH_AUDIT_CONCURRENCY', 32));
// A fixed audit rate (the generator paces its requests), so the peak follows the code rather than
// how fast the shared machine lets the client go; --audit-rate=0 sends as fast as it can.
const AUDIT_RATE = Math.round(Number(option('audit-rate', 'BENCH_AUDIT_RATE', 3000)));
// --load-only: skip the idle readings, the module list and the profile (a quicker before/after of the load).
const LOAD_ONLY = option('load-only', 'BENCH_LOAD_ONLY', 'false') !== 'false';
// --load-snapshot=<s>: a heap snapshot of the loaded svc <s> seconds into the load (SIGUSR2 through
// --heapsnapshot-signal), summarised by bench/heap-snapshot.mjs. Writing it stops the process for a
// while and doubles its heap, so the RSS figures of such a run are not the code's.
const LOAD_SNAPSHOT_S = Number(option('load-snapshot', 'BENCH_LOAD_SNAPSHOT_S', 0));
const MINIMAL = ['Svc:', '  localQueue: {directory: ./data/queue}', ''].join('\n');

const dirs = new Set();
const children = new Set();
removeOnExit(dirs, () => children.forEach((c) => c.kill('SIGKILL')));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes) => bytes / 2 ** 20;

/** Starts one process in its own temp dir; `running` resolves when its start-up is done. */
function start(name, args, { config, env = {}, ready }) {
  const cwd = mkdtempSync(join(tmpdir(), `svc-bench-memory-${name}-`));
  dirs.add(cwd);
  if (config !== undefined) writeFileSync(join(cwd, 'svc.yaml'), config);
  const startedAt = performance.now();
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, SVC_CONFIG: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  const running = new Promise((resolve, reject) => {
    if (ready === undefined) return resolve(0);
    const timer = setInterval(() => {
      if (ready.test(out)) {
        clearInterval(timer);
        resolve(performance.now() - startedAt);
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`${name} exited with ${code} before it was running:\n${out.slice(-2000)}`));
    });
  });
  return { name, child, cwd, running, output: () => out };
}

const svcLocal = (name, config, extra = {}) =>
  start(name, [...NODE_FLAGS, ...(extra.flags ?? []), SVC, 'local', '--config', 'svc.yaml'], {
    config,
    env: extra.env,
    ready: /svc local \S+ running \(/,
  });

/** VmRSS readings 1 s apart (median) and the VmHWM after them, of every process at once, in MB. */
async function readMemory(procs) {
  const readings = procs.map(() => []);
  for (let i = 0; i < READINGS; i++) {
    if (i > 0) await sleep(1000);
    procs.forEach((p, k) => readings[k].push(mb(processMemory(p.child.pid).rss)));
  }
  return procs.map((p, k) => ({ rss: median(readings[k]), peak: mb(processMemory(p.child.pid).peak) }));
}

/** The packages (node_modules/<pkg>) the config's start loads, from a start under the resolve hook. */
async function packagesLoaded(config) {
  const list = join(mkdtempSync(join(tmpdir(), 'svc-bench-memory-modules-')), 'modules.txt');
  dirs.add(resolve(list, '..'));
  const p = start(
    'modules',
    ['--import', join(ROOT, 'bench/loaded-modules.mjs'), SVC, 'local', '--config', 'svc.yaml'],
    { config, env: { SVC_LOADED_MODULES: list }, ready: /svc local \S+ running \(/ },
  );
  await p.running;
  await stopChild(p.child);
  const urls = new Set(
    readFileSync(list, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ')[0]),
  );
  const packages = new Map();
  for (const url of urls) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    if (pkg !== undefined) packages.set(pkg, (packages.get(pkg) ?? 0) + 1);
  }
  const own = [...urls].filter((u) => u.includes('/dist/')).length;
  return { packages, own, total: urls.size };
}

async function main() {
  const config = readFileSync(CONFIG, 'utf8');
  const loadStart = loadNow();
  console.log(
    `memory bench: svc local --config ${CONFIG} (node ${NODE_FLAGS.length ? NODE_FLAGS.join(' ') : 'without flags'}), RSS ${IDLE_S} s after start, ${READINGS} readings`,
  );
  console.log(`machine     ${machineLine()}`);
  console.log(`load avg    ${loadStart.text} at the start`);

  if (LOAD_ONLY) {
    await underLoad(config);
    console.log(`\nload avg    ${loadNow().text} at the end`);
    return;
  }
  const procs = [
    svcLocal(basename(CONFIG), config),
    svcLocal('minimal config', MINIMAL),
    start('bare node', [...NODE_FLAGS, '-e', 'setInterval(() => {}, 1e3)'], {}),
  ];
  const startMs = await Promise.all(procs.map((p) => p.running));
  const wait = IDLE_S * 1000 - Math.max(...startMs);
  if (wait > 0) await sleep(wait);
  const memory = await readMemory(procs);
  const loadRead = loadNow();
  await Promise.all(procs.map((p) => stopChild(p.child)));

  console.log('');
  console.log(`| process | running after | RSS ${IDLE_S} s after start (median) | peak (VmHWM) |`);
  console.log('|---|---|---|---|');
  procs.forEach((p, k) =>
    console.log(
      `| ${p.name === basename(CONFIG) ? `svc local, ${basename(CONFIG)}` : p.name === 'bare node' ? 'bare node (setInterval)' : 'svc local, minimal config'} | ${p.name === 'bare node' ? '' : `${fmt(startMs[k], 0)} ms`} | ${fmt(memory[k].rss, 1)} MB | ${fmt(memory[k].peak, 1)} MB |`,
    ),
  );
  console.log(
    `load avg    ${loadRead.text} at the readings${loadRead.busy || loadStart.busy ? '  ← the machine was busy: start times are longer; RSS is less affected' : ''}`,
  );

  const { packages, own, total } = await packagesLoaded(config);
  console.log(
    `\nloaded at start (${basename(CONFIG)}): ${total} modules resolved, ${own} of Svc's, ${packages.size} packages:`,
  );
  console.log(
    `  ${[...packages]
      .sort((a, b) => b[1] - a[1])
      .map(([pkg, n]) => `${pkg}${n > 1 ? ` (${n})` : ''}`)
      .join(', ')}`,
  );

  if (PROFILE) {
    const dir = profileDirectory('memory');
    console.log(
      `\nprofile: svc local --config ${basename(CONFIG)} under --heap-prof --cpu-prof for ${IDLE_S} s; files in ${dir}`,
    );
    const p = svcLocal('profile', config, {
      flags: ['--heap-prof', `--heap-prof-dir=${dir}`, '--cpu-prof', `--cpu-prof-dir=${dir}`],
    });
    await p.running;
    await sleep(IDLE_S * 1000);
    await stopChild(p.child);
    const files = existsSync(dir)
      ? readdirSync(dir).filter((f) => f.endsWith('.heapprofile') || f.endsWith('.cpuprofile'))
      : [];
    if (files.length === 0) throw new Error('svc local wrote no profile (it did not exit cleanly)');
    for (const f of files.sort()) {
      console.log(`${f.endsWith('.heapprofile') ? 'heap (live at exit)' : 'cpu (start and idle)'}: ${join(dir, f)}`);
      for (const line of formatSummary(summarise(join(dir, f), 15))) console.log(line);
    }
  }
  if (LOAD) await underLoad(config);
  console.log(`\nload avg    ${loadNow().text} at the end`);
}

/**
 * --load: one more `svc local` on the config with a UDP log listener added (all four log sources
 * on), its audit API and the listener driven at once for --load-duration s: audit POSTs of a 2 KB
 * envelope from bench/audit-api.mjs's load generator (--audit-concurrency in flight, a child
 * process) and `svc simulate udp --kinds log` at --udp-rate datagrams/s (a child process). RSS of
 * the svc process every 100 ms during the load (median) and its VmHWM after it.
 */
async function underLoad(config) {
  const [auditPort, udpPort] = [await freePort(), await freePort()];
  const doc = parseDocument(config);
  doc.setIn(['Svc', 'auditEvents', 'host'], '127.0.0.1');
  doc.setIn(['Svc', 'auditEvents', 'port'], auditPort);
  // As bench:audit: the per-IP limit stays on but does not bind, so every request takes the whole path.
  doc.setIn(['Svc', 'auditEvents', 'rateLimit', 'maxPerMinute'], 1_000_000);
  doc.setIn(['Svc', 'logEvents', 'udpServerConfig', 'serverHost'], '127.0.0.1');
  doc.setIn(['Svc', 'logEvents', 'udpServerConfig', 'portLogEvents'], udpPort);
  for (const source of ['engine', 'proxy', 'repository', 'scheduler'])
    doc.setIn(['Svc', 'logEvents', 'source', source, 'enable'], true);
  console.log(
    `\nunder load: svc local on ${basename(CONFIG)} + a UDP log listener, for ${LOAD_S} s: audit POSTs (2 KB, ${AUDIT_CONCURRENCY} in flight, ${AUDIT_RATE > 0 ? `paced at ${int(AUDIT_RATE)}/s` : 'unpaced'}) and ${int(UDP_RATE)} log datagrams/s at once`,
  );
  const usageFile = join(mkdtempSync(join(tmpdir(), 'svc-bench-memory-usage-')), 'usage.jsonl');
  dirs.add(resolve(usageFile, '..'));
  const snapshotFlags = LOAD_SNAPSHOT_S > 0 ? ['--heapsnapshot-signal=SIGUSR2'] : [];
  const p = svcLocal('under load', doc.toString(), {
    flags: ['--import', join(ROOT, 'bench/memory-usage.mjs'), ...snapshotFlags],
    env: { SVC_MEMORY_USAGE: usageFile },
  });
  await p.running;
  const idleBefore = mb(processMemory(p.child.pid).rss);
  const cpuBefore = processCpuSeconds(p.child.pid);
  const sampler = sampleMemory(p.child.pid);
  const client = fork(join(ROOT, 'bench/audit-api.mjs'), ['--client'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(client);
  const audit = new Promise((resolve, reject) => {
    client.on('message', (m) => m.type === 'result' && resolve(m.result));
    client.once('exit', (code) => code !== 0 && reject(new Error(`the audit load generator exited with ${code}`)));
  });
  client.send({
    port: auditPort,
    body: envelopeText(),
    headers: { 'content-type': 'application/json', 'x-audit-client-version': CLIENT_VERSION },
    concurrency: AUDIT_CONCURRENCY,
    ips: 16,
    warmupMs: 0,
    durationMs: LOAD_S * 1000,
    maxRequests: 5_000_000,
    ...(AUDIT_RATE > 0 ? { rate: AUDIT_RATE } : {}),
  });
  const sender = spawn(
    process.execPath,
    [
      SVC,
      'simulate',
      'udp',
      '--target',
      `127.0.0.1:${udpPort}`,
      '--rate',
      String(UDP_RATE),
      '--duration',
      String(LOAD_S),
      '--kinds',
      'log',
      '--seed',
      '42',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.add(sender);
  let senderOut = '';
  sender.stdout.on('data', (c) => (senderOut += c));
  const snapshotTimer =
    LOAD_SNAPSHOT_S > 0 ? setTimeout(() => p.child.kill('SIGUSR2'), LOAD_SNAPSHOT_S * 1000) : undefined;
  const [a] = await Promise.all([audit, new Promise((resolve) => sender.once('exit', resolve))]);
  clearTimeout(snapshotTimer);
  const during = sampler.stop();
  const peak = mb(processMemory(p.child.pid).peak);
  // svc's CPU over the load (all its threads: GC helpers and the libuv pool too), per audit request
  // and datagram together: what its node flags cost it at this fixed load.
  const cpuSeconds = processCpuSeconds(p.child.pid) - cpuBefore;
  // A svc that ended during the load (a crash) makes every figure meaningless: say so, with its log's end.
  if (p.child.exitCode !== null || p.child.signalCode !== null)
    console.log(
      `svc local ENDED during the load (exit ${p.child.exitCode ?? p.child.signalCode}); the end of its log:\n${p.output().slice(-3000)}`,
    );
  await stopChild(p.child);
  // --load-log=<file>: svc's own log of the loaded run (what it wrote when), for a closer look.
  const logFile = option('load-log', 'BENCH_LOAD_LOG', '');
  if (logFile) writeFileSync(String(logFile), p.output());
  const statuses = Object.entries(a.statuses)
    .map(([status, n]) => `${status}: ${int(n)}`)
    .join(', ');
  const short =
    AUDIT_RATE > 0 && a.rps < AUDIT_RATE * 0.95
      ? ` — below the --audit-rate ${int(AUDIT_RATE)}/s: the server or the machine could not keep up`
      : '';
  console.log(
    `audit       ${int(a.requests)} requests in ${fmt(a.seconds, 1)} s (${int(a.rps)}/s reached${short}; ${statuses}${a.errors > 0 ? `; ${a.errors} errors: ${a.firstError}` : ''})`,
  );
  console.log(`udp         ${senderOut.trim().split('\n').at(-1) ?? ''}`);
  const datagrams = Number(/sent (\d+) datagrams/.exec(senderOut)?.[1] ?? NaN);
  console.log(
    `svc CPU     ${fmt(cpuSeconds, 2)} s during the load (${fmt((cpuSeconds / LOAD_S) * 100, 0)} % of a core); ${fmt((cpuSeconds * 1e6) / (a.requests + datagrams), 1)} µs per request or datagram (${int(a.requests)} + ${int(datagrams)})`,
  );
  console.log(`| process | RSS before the load | RSS during the load (median) | peak (VmHWM) |`);
  console.log('|---|---|---|---|');
  console.log(
    `| svc local, ${basename(CONFIG)} + UDP log listener | ${fmt(idleBefore, 1)} MB | ${fmt(during.rssMb, 1)} MB | ${fmt(peak, 1)} MB |`,
  );
  printUsage(usageFile);
  if (LOAD_SNAPSHOT_S > 0) {
    const written = readdirSync(p.cwd).filter((f) => f.endsWith('.heapsnapshot'));
    if (written.length === 0)
      console.log(`\nno heap snapshot was written (--load-snapshot=${LOAD_SNAPSHOT_S} is past the load?)`);
    for (const f of written) {
      const kept = join(profileDirectory('memory-load'), f);
      copyFileSync(join(p.cwd, f), kept);
      console.log(`\n${LOAD_SNAPSHOT_S} s into the load: ${kept}`);
      for (const line of formatSnapshot(summariseSnapshot(kept, 20))) console.log(line);
    }
  }
}

/** From bench/memory-usage.mjs's samples: what the RSS was made of at its highest sample, and each part's own highest. */
function printUsage(file) {
  if (!existsSync(file)) return;
  const samples = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  if (samples.length === 0) return;
  const parts = (s) => ({
    rss: s.rss,
    heapUsed: s.heapUsed,
    heapTotal: s.heapTotal,
    external: s.external,
    arrayBuffers: s.arrayBuffers,
    native: s.rss - s.heapTotal - s.external,
  });
  const highest = samples.reduce((a, b) => (b.rss > a.rss ? b : a));
  const top = parts(highest);
  const most = Object.fromEntries(Object.keys(top).map((k) => [k, Math.max(...samples.map((s) => parts(s)[k]))]));
  const row = (name, v) =>
    `| ${name} | ${fmt(mb(v.rss), 1)} | ${fmt(mb(v.heapUsed), 1)} | ${fmt(mb(v.heapTotal), 1)} | ${fmt(mb(v.external), 1)} | ${fmt(mb(v.arrayBuffers), 1)} | ${fmt(mb(v.native), 1)} |`;
  console.log(
    `\nprocess.memoryUsage() of svc local every 100 ms (${samples.length} samples; native = rss − heapTotal − external), MB:`,
  );
  console.log('| sample | rss | heapUsed | heapTotal | external | (of which arrayBuffers) | native |');
  console.log('|---|---|---|---|---|---|---|');
  console.log(row('at the highest rss', top));
  console.log(row('each part at its highest', most));
  if (highest.spaces === undefined) return;
  // Once a second: how the parts moved (a backlog grows steadily; an old space waiting for its
  // mark-compact grows and then drops).
  console.log(
    '\nonce a second (MB): rss | new space committed | old space used / committed | arrayBuffers | malloc (anonymous − heap − external)',
  );
  for (let i = 0; i < samples.length; i += 10) {
    const s = samples[i];
    const o = s.spaces?.old_space ?? { size: 0, used: 0 };
    console.log(
      `  ${String(i / 10).padStart(3)} s  ${fmt(mb(s.rss), 0).padStart(4)} | ${fmt(mb(s.spaces?.new_space?.size ?? 0), 0).padStart(3)} | ${fmt(mb(o.used), 0).padStart(3)} / ${fmt(mb(o.size), 0).padStart(3)} | ${fmt(mb(s.arrayBuffers), 0).padStart(3)} | ${fmt(mb(s.rssAnon - s.heapTotal - s.external), 0).padStart(3)}`,
    );
  }
  // The same sample by V8 heap space (committed / used) and as the kernel counts it: file pages
  // (the node binary) and anonymous memory; what is anonymous beyond V8's heap and the external
  // memory is the allocator's (malloc: V8's own tables, libuv, zlib, thread arenas).
  const space = (name) => highest.spaces[name] ?? { size: 0, used: 0 };
  const named = ['new_space', 'old_space', 'code_space', 'large_object_space'];
  const others = Object.entries(highest.spaces)
    .filter(([k]) => !named.includes(k))
    .reduce((t, [, v]) => ({ size: t.size + v.size, used: t.used + v.used }), { size: 0, used: 0 });
  const sp = (v) => `${fmt(mb(v.size), 1)} / ${fmt(mb(v.used), 1)}`;
  const malloc = highest.rssAnon - highest.heapTotal - highest.external;
  console.log('\nthe highest sample by V8 heap space (committed / used, MB) and by page kind (MB):');
  console.log(
    '| new space | old space | code | large objects | other spaces | file pages (RssFile) | anonymous (RssAnon) | anonymous − heap − external (malloc) |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  console.log(
    `| ${sp(space('new_space'))} | ${sp(space('old_space'))} | ${sp(space('code_space'))} | ${sp(space('large_object_space'))} | ${sp(others)} | ${fmt(mb(highest.rssFile), 1)} | ${fmt(mb(highest.rssAnon), 1)} | ${fmt(mb(malloc), 1)} |`,
  );
}

try {
  await main();
} catch (err) {
  console.error(`memory bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
