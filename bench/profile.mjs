/**
 * The one reader of V8 profiles for the benches: the top of a CPU profile (`node --cpu-prof`,
 * `.cpuprofile`) by self time, and of a sampling heap profile (`node --heap-prof`, `.heapprofile`)
 * by self size, each grouped per package (node_modules/<pkg>), per Svc source file (through the
 * source map beside a file: dist/ and the esbuild bundles have them) and per Node internal module,
 * and per function.
 *
 *   node bench/profile.mjs <file.cpuprofile | file.heapprofile | dir of them> [--top=25] [--by=module|function|both]
 *
 * CPU: self time is the sampled time a function was on top of the stack (timeDeltas[i] is the time
 * before sample i, so it is spent in sample i − 1); shares are of the busy time, "(idle)" excluded
 * and printed beside. Heap: `--heap-prof` writes the sampled allocations still live when the
 * profile was taken (at exit): what the process holds, by the place that allocated it, not what it
 * allocated and freed; shares are of that total.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { oneOf, positive } from './lib.mjs';

const maps = new Map();
/** The source map of a script URL (file:// or a path), or null. */
function sourceMapOf(url) {
  if (maps.has(url)) return maps.get(url);
  let map = null;
  try {
    const path = url.startsWith('file://') ? fileURLToPath(url) : url;
    if (path.startsWith('/') && existsSync(`${path}.map`))
      map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
  } catch {
    map = null;
  }
  maps.set(url, map);
  return map;
}

/** Where a frame's code comes from: { group (package, source file or native), fn (function label) }. */
export function place(frame) {
  const { url, functionName, lineNumber, columnNumber } = frame;
  const name = functionName || '(anonymous)';
  if (url === '') return { group: name.startsWith('(') ? name : '(V8 / native)', fn: name };
  let source = url;
  let line = lineNumber + 1;
  const map = sourceMapOf(url);
  if (map !== null && lineNumber >= 0) {
    const entry = map.findEntry(lineNumber, columnNumber);
    if (entry?.originalSource) {
      // Sources are relative to the map's file (a bundle under node_modules/.cache names ../../x).
      source = new URL(entry.originalSource, url.startsWith('file://') ? url : pathToFileURL(url)).pathname;
      line = entry.originalLine + 1;
    }
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source)?.[1];
  const group =
    pkg ?? source.replace(/^file:\/\//, '').replace(/^.*?\/((?:shared|functions|edge-agent|infra|bench|test)\/)/, '$1');
  return { group, fn: `${name} ${group}:${line}` };
}

const rank = (map, total, top) =>
  [...map]
    .sort((x, y) => y[1] - x[1])
    .slice(0, top)
    .map(([name, amount]) => ({ name, amount, share: total > 0 ? amount / total : NaN }));

/**
 * Self time of a .cpuprofile: `{ kind: 'cpu', totalMs, busyMs, idleMs, functions, modules }`, the
 * top `top` of each as `{ name, amount (ms), share (of busy) }`.
 */
export function summariseProfile(file, top = 15) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  if (!Array.isArray(profile.nodes) || !Array.isArray(profile.samples) || !Array.isArray(profile.timeDeltas))
    throw new Error(`${file} is not a V8 CPU profile`);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map();
  for (let i = 1; i < profile.samples.length; i++)
    selfUs.set(profile.samples[i - 1], (selfUs.get(profile.samples[i - 1]) ?? 0) + profile.timeDeltas[i]);
  const byFunction = new Map();
  const byModule = new Map();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame ?? { functionName: '?', url: '', lineNumber: -1, columnNumber: -1 };
    const ms = us / 1000;
    total += ms;
    if (frame.functionName === '(idle)') {
      idle += ms;
      continue;
    }
    const { group, fn } = place(frame);
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
    byModule.set(group, (byModule.get(group) ?? 0) + ms);
  }
  const busy = total - idle;
  return {
    kind: 'cpu',
    totalMs: total,
    busyMs: busy,
    idleMs: idle,
    functions: rank(byFunction, busy, top),
    modules: rank(byModule, busy, top),
  };
}

/**
 * Self size of a .heapprofile (the sampled live allocations): `{ kind: 'heap', totalBytes,
 * functions, modules }`, the top `top` of each as `{ name, amount (bytes), share }`.
 */
export function summariseHeapProfile(file, top = 15) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  if (typeof profile.head !== 'object' || profile.head === null || !Array.isArray(profile.head.children))
    throw new Error(`${file} is not a V8 sampling heap profile`);
  const byFunction = new Map();
  const byModule = new Map();
  let total = 0;
  const stack = [profile.head];
  while (stack.length > 0) {
    const node = stack.pop();
    stack.push(...node.children);
    if (!(node.selfSize > 0)) continue;
    total += node.selfSize;
    const { group, fn } = place(node.callFrame);
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + node.selfSize);
    byModule.set(group, (byModule.get(group) ?? 0) + node.selfSize);
  }
  return {
    kind: 'heap',
    totalBytes: total,
    functions: rank(byFunction, total, top),
    modules: rank(byModule, total, top),
  };
}

/** Either summary, by the file's extension. */
export function summarise(file, top = 15) {
  return file.endsWith('.heapprofile') ? summariseHeapProfile(file, top) : summariseProfile(file, top);
}

/** The summary as text lines (`by`: module, function or both), each line indented by `indent`. */
export function formatSummary(summary, { by = 'both', indent = '  ' } = {}) {
  const amount =
    summary.kind === 'cpu'
      ? (ms) => `${ms.toFixed(1).padStart(9)} ms`
      : (bytes) => `${(bytes / 1024).toFixed(0).padStart(8)} KB`;
  const lines = [
    summary.kind === 'cpu'
      ? `${indent}${(summary.totalMs / 1000).toFixed(2)} s sampled, ${(summary.busyMs / 1000).toFixed(2)} s busy (shares of the busy time), ${(summary.idleMs / 1000).toFixed(2)} s idle`
      : `${indent}${(summary.totalBytes / 2 ** 20).toFixed(1)} MB sampled live allocations`,
  ];
  const section = (title, rows) => {
    lines.push(`${indent}${title}`);
    for (const r of rows)
      lines.push(`${indent}  ${amount(r.amount)}  ${(r.share * 100).toFixed(1).padStart(5)} %  ${r.name}`);
  };
  const self = summary.kind === 'cpu' ? 'self time' : 'self size';
  if (by !== 'function') section(`by module (${self}):`, summary.modules);
  if (by !== 'module') section(`by function (${self}):`, summary.functions);
  return lines;
}

/** The profiles in `target`: the file itself, or the .cpuprofile and .heapprofile files of a directory. */
export function profileFiles(target) {
  return statSync(target).isDirectory()
    ? readdirSync(target)
        .filter((f) => f.endsWith('.cpuprofile') || f.endsWith('.heapprofile'))
        .sort()
        .map((f) => join(target, f))
    : [target];
}

/**
 * A new directory for the profiles of one bench run, kept after the run (so they can be read again
 * or opened in Chrome DevTools): `<SVC_PROFILE_DIR or the temp dir/svc-profiles>/<bench>-<time>`.
 */
export function profileDirectory(bench) {
  const dir = join(
    process.env.SVC_PROFILE_DIR || join(tmpdir(), 'svc-profiles'),
    `${bench}-${new Date().toISOString().replace(/[:.]/g, '-')}`,
  );
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The CLI (also what bench/profile-top.mjs runs). */
export function main(argv = process.argv.slice(2)) {
  const target = argv.find((a) => !a.startsWith('--'));
  if (target === undefined) {
    process.stderr.write(
      'usage: node bench/profile.mjs <file.cpuprofile | file.heapprofile | dir> [--top=25] [--by=module|function|both]\n',
    );
    process.exitCode = 2;
    return;
  }
  const top = Math.round(positive('top', 'PROFILE_TOP', 25));
  const by = oneOf('by', 'PROFILE_BY', 'both', ['module', 'function', 'both']);
  for (const file of profileFiles(target)) {
    process.stdout.write(`${file}\n${formatSummary(summarise(file, top), { by }).join('\n')}\n`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
