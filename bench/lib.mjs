/**
 * What the benchmarks share: command-line/environment options, number formatting, statistics,
 * clean-up at exit, free ports, the machine and its load, and what a child process costs (/proc).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';

/** `--name=value`, `--name` (true), else the environment variable, else the fallback. */
export function option(name, envName, fallback) {
  const arg = process.argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (arg !== undefined) return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : 'true';
  return process.env[envName] ?? fallback;
}

export function positive(name, envName, fallback) {
  const value = Number(option(name, envName, String(fallback)));
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

export function nonNegative(name, envName, fallback) {
  const value = Number(option(name, envName, String(fallback)));
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number >= 0`);
  return value;
}

/** `option`, one of `allowed`; anything else is refused, naming them. */
export function oneOf(name, envName, fallback, allowed) {
  const value = option(name, envName, fallback);
  if (!allowed.includes(value))
    throw new Error(`--${name} must be ${allowed.slice(0, -1).join(', ')} or ${allowed[allowed.length - 1]}`);
  return value;
}

export const fmt = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
export const pct = (n) => (Number.isFinite(n) ? `${Math.round(n * 100)} %` : 'n/a');
export const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');

/** The p-th percentile of an ascending array (nearest rank). */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export function median(xs) {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/**
 * Removes `dirs` (a Set the bench fills) when the process exits or is interrupted; `before` runs
 * first (e.g. to kill a server the bench started).
 */
export function removeOnExit(dirs, before = () => {}) {
  const cleanup = () => {
    before();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    dirs.clear();
  };
  process.on('exit', cleanup);
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ]) {
    process.once(signal, () => {
      cleanup();
      process.exit(code);
    });
  }
}

/** A free TCP port on `host`, picked by the OS (another process may still take it before it is used). */
export function freePort(host = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const { port } = server.address();
      server.close((err) => (err ? reject(err) : resolve(port)));
    });
  });
}

let clockTicks = 100;
try {
  clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // not Linux/POSIX: keep 100
}

/** CPU seconds used so far by process `pid` (Linux /proc), NaN elsewhere. */
export function processCpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks; // utime, stime (fields 14, 15)
  } catch {
    return NaN;
  }
}

/** Resident memory of process `pid` in bytes, now (`rss`, VmRSS) and its peak (`peak`, VmHWM); NaN where there is no /proc. */
export function processMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return { rss: NaN, peak: NaN };
  }
}

/**
 * Samples a process's RSS every `everyMs` until `stop()`, which answers the median RSS of the
 * samples and the process's peak (VmHWM: the highest since it started, not only in the window) in MB.
 */
export function sampleMemory(pid, everyMs = 100) {
  const rss = [processMemory(pid).rss];
  const timer = setInterval(() => rss.push(processMemory(pid).rss), everyMs);
  return {
    stop() {
      clearInterval(timer);
      return { rssMb: median(rss) / 2 ** 20, peakMb: processMemory(pid).peak / 2 ** 20 };
    },
  };
}

/**
 * The filesystem type of the mount holding `dir` (its kernel name, `ext4`, `tmpfs`, …: what the
 * journal's synced writes depend on), from findmnt; GNU stat's name when findmnt is missing (stat -f
 * names ext2, ext3 and ext4 alike "ext2/ext3", by their shared magic number).
 */
export function filesystemOf(dir) {
  for (const [cmd, args] of [
    ['findmnt', ['-n', '-o', 'FSTYPE', '-T', dir]],
    ['stat', ['-f', '-c', '%T', dir]],
  ]) {
    try {
      const type = execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      if (type !== '') return type;
    } catch {
      // not installed here: try the next
    }
  }
  return 'unknown filesystem';
}

/** One line about the machine: CPU model, cores, memory, OS, Node. */
export function machineLine() {
  const cpu = cpus();
  return `${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${platform()} ${release()}, Node ${process.version}`;
}

/**
 * The load average now: `text` (1/5/15 min), and `busy` when the 1-minute figure is above the
 * number of cores (processes were waiting for a core: every figure is lower and noisier).
 */
export function loadNow() {
  const load = loadavg();
  const cores = cpus().length;
  return {
    one: load[0],
    busy: load[0] > cores,
    text: `${load.map((l) => l.toFixed(2)).join(' ')} (1/5/15 min), ${cores} cores`,
  };
}

/**
 * Stops a child process: SIGTERM, then SIGKILL after `graceMs`. Resolves to how it ended:
 * `{ code, signal, killed }` (`killed` when SIGKILL was needed).
 */
export function stopChild(child, graceMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode, killed: false });
  return new Promise((resolve) => {
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, graceMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, killed });
    });
    child.kill('SIGTERM');
  });
}

/** Clock ticks per second of /proc's utime/stime (USER_HZ: 100 on Linux for every architecture Node runs on). */
const USER_HZ = 100;

/**
 * The kind of a thread of a Node process: the main thread (tid = pid), libuv's thread pool (fs
 * writes and syncs, dns, zlib), V8's helper threads (concurrent and parallel GC, compilation), or
 * other. Node ≥ 22 names its threads (/proc/<pid>/task/<tid>/comm: `libuv-worker`, `V8 DefaultWorke`);
 * Node 20 names them all `node`, so then the pool is told by creation order: libuv starts its
 * UV_THREADPOOL_SIZE threads (default 4) at the first thread-pool job, after V8's platform threads
 * (measured: with UV_THREADPOOL_SIZE=1, 8, --v8-pool-size=2 the counts move accordingly), and an
 * ES module entry has already made one. So the highest tids of the process's first listing are the
 * pool, and the rest ("V8 + other": V8's workers, its delayed-task thread, node's signal thread)
 * are mostly V8's GC helpers once the process is busy.
 */
const firstListing = new Map();

function threadKinds(pid, tids, comms) {
  const named = [...comms.values()].some((c) => c !== 'node' && c !== '');
  if (!firstListing.has(pid))
    firstListing.set(
      pid,
      [...tids].map(Number).sort((a, b) => a - b),
    );
  const first = firstListing.get(pid);
  const poolSize = Math.max(1, Number(process.env.UV_THREADPOOL_SIZE) || 4);
  const pool = new Set(first.slice(-poolSize));
  const kinds = new Map();
  for (const tid of tids) {
    const n = Number(tid);
    const comm = comms.get(tid) ?? '';
    let kind;
    if (n === pid) kind = 'main';
    else if (named) kind = comm.startsWith('libuv-worker') ? 'libuv pool' : 'V8 + other';
    else kind = pool.has(n) ? 'libuv pool' : 'V8 + other';
    kinds.set(tid, kind);
  }
  return kinds;
}

export const THREAD_KINDS = ['main', 'libuv pool', 'V8 + other'];

/**
 * CPU time (µs, user and system) of every thread of `pid` now, by tid (call it once early, before
 * anything could start more threads: see threadKinds): take one before and one after a window and pass both to `threadCpuByKind`. process.cpuUsage() sums all threads, and --cpu-prof
 * sees only the main one; this says which thread spent it. Linux only (/proc); {} elsewhere.
 */
export function threadTimes(pid = process.pid) {
  const times = {};
  let tids;
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return times;
  }
  const comms = new Map();
  const raw = new Map();
  for (const name of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${name}/stat`, 'utf8');
      // The name (field 2) is in parentheses and may hold spaces: the fields after it start at the last ')'.
      comms.set(name, stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
      raw.set(name, stat.slice(stat.lastIndexOf(')') + 2).split(' '));
    } catch {
      // The thread ended meanwhile.
    }
  }
  const kinds = threadKinds(pid, [...raw.keys()], comms);
  const tick = 1e6 / USER_HZ;
  for (const [name, fields] of raw) {
    // fields[0] is field 3 (state): utime is field 14, stime field 15.
    times[name] = {
      kind: kinds.get(name) ?? 'V8 + other',
      user: Number(fields[11]) * tick,
      system: Number(fields[12]) * tick,
    };
  }
  return times;
}

/**
 * CPU spent between two `threadTimes` samples, by thread kind: { [kind]: { user, system, threads } } in µs.
 * A thread that ended within the window is missed (its time is gone from /proc/<pid>/task).
 */
export function threadCpuByKind(before, after) {
  const out = Object.fromEntries(THREAD_KINDS.map((k) => [k, { user: 0, system: 0, threads: 0 }]));
  for (const [tid, a] of Object.entries(after)) {
    const b = before[tid] ?? { user: 0, system: 0 };
    const slot = out[a.kind];
    slot.user += a.user - b.user;
    slot.system += a.system - b.system;
    if (a.user + a.system > b.user + b.system) slot.threads += 1;
  }
  return out;
}
