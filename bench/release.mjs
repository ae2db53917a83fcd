/**
 * The release's single executable against `node dist/…`, in one run: sizes (the archives, the
 * executable, what a `node dist/` install needs), the start time of `svc local` to the first answer
 * of `GET /api/v1/test-connection`, and its idle RSS once started (after the collection five
 * seconds after start, edge-agent/runtime/settle.ts). Prints, asserts nothing.
 *
 * Needs `npm run build` and the Linux executable (`node scripts/release/executables.mjs --target
 * linux-x64`; `npm run bench:release` does both). Options: --rounds=N (SVC_BENCH_ROUNDS, default 5)
 * starts of each, alternated; --idle-ms=N (SVC_BENCH_IDLE_MS, default 8000) before the RSS samples.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  fmt,
  freePort,
  loadNow,
  machineLine,
  median,
  positive,
  removeOnExit,
  sampleMemory,
  stopChild,
} from './lib.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const EXECUTABLE = join(ROOT, 'release/build/linux-x64/svc');
const MAIN = join(ROOT, 'dist/edge-agent/cli/main.js');
const rounds = positive('rounds', 'SVC_BENCH_ROUNDS', 5);
const idleMs = positive('idle-ms', 'SVC_BENCH_IDLE_MS', 8000);

if (!existsSync(EXECUTABLE)) throw new Error(`${EXECUTABLE} is missing: npm run bench:release builds it`);
if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build`);

const dirs = new Set();
const children = new Set();
removeOnExit(dirs, () => {
  for (const child of children) child.kill('SIGKILL');
});

const mb = (bytes) => `${fmt(bytes / 2 ** 20, 1)} MB`;
/** Bytes of every file under `dir`. */
function treeBytes(dir) {
  let total = 0;
  for (const item of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (item.isFile()) total += statSync(join(item.parentPath, item.name)).size;
  return total;
}

console.log(`release bench: ${machineLine()}; load ${loadNow().text}`);
console.log('sizes:');
const release = join(ROOT, 'release');
const archives = existsSync(release) ? readdirSync(release).filter((f) => /\.(tar\.gz|zip)$/.test(f)) : [];
if (archives.length === 0) console.log('  archives: none in release/ (scripts/release/archives.mjs makes them)');
for (const archive of archives) console.log(`  ${archive}: ${mb(statSync(join(release, archive)).size)}`);
for (const target of ['linux-x64', 'linux-arm64', 'win-x64']) {
  const folder = join(release, 'build', target);
  if (existsSync(folder))
    for (const file of readdirSync(folder))
      console.log(`  executable ${target}/${file}: ${mb(statSync(join(folder, file)).size)}`);
}
console.log(
  `  node dist/: Node.js ${mb(statSync(process.execPath).size)} + dist/ ${mb(treeBytes(join(ROOT, 'dist')))} + node_modules/ (production and dev) ${mb(treeBytes(join(ROOT, 'node_modules')) - statSync(process.execPath).size)}`,
);

/** Starts `svc local` (the executable or node dist/) on a fresh config; resolves when test-connection answers 200. */
async function start(kind) {
  const cwd = mkdtempSync(join(tmpdir(), 'svc-bench-release-'));
  dirs.add(cwd);
  const port = await freePort();
  writeFileSync(
    join(cwd, 'svc.yaml'),
    `Svc:\n  localQueue: { directory: queue }\n  auditEvents: { enable: true, port: ${port}, destination: { enable: true, type: parquet, parquet: { exportDirectory: out } } }\n`,
  );
  const [file, args] =
    kind === 'executable'
      ? [EXECUTABLE, ['local', '--config', 'svc.yaml']]
      : [process.execPath, ['--max-semi-space-size=16', MAIN, 'local', '--config', 'svc.yaml']];
  const t0 = performance.now();
  const child = spawn(file, args, { cwd, stdio: 'ignore' });
  children.add(child);
  const url = `http://127.0.0.1:${port}/api/v1/test-connection`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${kind} exited with ${child.exitCode} before answering`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { child, startMs: performance.now() - t0 };
}

const results = { executable: { startMs: [], rssMb: [] }, 'node dist/': { startMs: [], rssMb: [] } };
for (let round = 0; round < rounds; round++) {
  // Alternated, so both see the same machine.
  for (const kind of round % 2 === 0 ? ['executable', 'node dist/'] : ['node dist/', 'executable']) {
    const { child, startMs } = await start(kind);
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const sampler = sampleMemory(child.pid, 100);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const { rssMb } = sampler.stop();
    const ended = await stopChild(child);
    children.delete(child);
    if (ended.code !== 0) throw new Error(`${kind} stopped with ${JSON.stringify(ended)}`);
    results[kind].startMs.push(startMs);
    results[kind].rssMb.push(rssMb);
    console.log(
      `  round ${round + 1} ${kind}: first test-connection answer ${fmt(startMs, 0)} ms, idle RSS ${fmt(rssMb, 1)} MB`,
    );
  }
}
console.log(`median of ${rounds} (load ${loadNow().text}):`);
for (const [kind, r] of Object.entries(results))
  console.log(
    `  ${kind.padEnd(11)} start to first test-connection answer ${fmt(median(r.startMs), 0)} ms (${r.startMs.map((v) => fmt(v, 0)).join(', ')}); idle RSS ${fmt(median(r.rssMb), 1)} MB`,
  );
