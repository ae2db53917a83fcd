/**
 * The top of a V8 CPU profile (`node --cpu-prof`), grouped so it can be read: self time per
 * package (node_modules/<pkg>), per Svc source file (through the bundle's or dist's source map) and
 * per Node internal module, and the hottest functions.
 *
 *   node bench/profile-top.mjs <file.cpuprofile | dir of them> [--top=25] [--by=module|function]
 *
 * Frames in a file that has a source map beside it (`<file>.map`, as esbuild and tsc write them)
 * are mapped to their original source, so a minified Lambda bundle reads as shared/…/x.ts and
 * node_modules/ajv. Self time is the sampled time a function was on top of the stack; the total
 * line is the profile's whole sampled time, idle included ("(idle)"), so the shares add up.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { option, positive } from './lib.mjs';

const target = process.argv.slice(2).find((a) => !a.startsWith('--'));
if (target === undefined) {
  process.stderr.write('usage: node bench/profile-top.mjs <file.cpuprofile | dir> [--top=25] [--by=module|function]\n');
  process.exit(2);
}
const TOP = Math.round(positive('top', 'PROFILE_TOP', 25));
const BY = option('by', 'PROFILE_BY', 'module');

const files = statSync(target).isDirectory()
  ? readdirSync(target).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(target, f))
  : [target];

const maps = new Map();
/** The source map of a script URL (file:// or a path), or null. */
function sourceMapOf(url) {
  if (maps.has(url)) return maps.get(url);
  let map = null;
  try {
    const path = url.startsWith('file://') ? fileURLToPath(url) : url;
    if (path.startsWith('/') && existsSync(`${path}.map`)) map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
  } catch {
    map = null;
  }
  maps.set(url, map);
  return map;
}

/** Where a frame's code comes from: [module group, function label]. */
function place(frame) {
  const { url, functionName, lineNumber, columnNumber } = frame;
  const name = functionName || '(anonymous)';
  if (url === '') return [name.startsWith('(') ? name : '(native)', name];
  let source = url;
  let line = lineNumber + 1;
  const map = sourceMapOf(url);
  if (map !== null && lineNumber >= 0) {
    const entry = map.findEntry(lineNumber, columnNumber);
    if (entry?.originalSource) {
      // Sources are relative to the map's file (a bundle under node_modules/.cache names ../../x).
      source = new URL(entry.originalSource, url.startsWith('file://') ? url : `file://${url}`).pathname;
      line = entry.originalLine + 1;
    }
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source)?.[1];
  const group = pkg ?? source.replace(/^file:\/\//, '').replace(/^.*?\/((?:shared|functions|edge-agent|infra|bench|test)\/)/, '$1');
  return [group, `${name} ${group}:${line}`];
}

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    total += ms;
    const [group, fn] = place(node.callFrame);
    const key = BY === 'function' ? fn : group;
    self.set(key, (self.get(key) ?? 0) + ms);
  }
  process.stdout.write(`${file}: ${total.toFixed(1)} ms sampled, self time by ${BY}\n`);
  for (const [key, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    process.stdout.write(`  ${ms.toFixed(1).padStart(8)} ms  ${((ms / total) * 100).toFixed(1).padStart(5)} %  ${key}\n`);
  }
}
