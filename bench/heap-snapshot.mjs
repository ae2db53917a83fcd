/**
 * The top of a V8 heap snapshot (`node --heapsnapshot-signal=…`, `v8.writeHeapSnapshot()`): the
 * self size of the heap's objects summed by type and constructor (or, for strings, code and arrays,
 * by type alone), largest first. Self sizes, not retained sizes: what the heap is made of, enough to
 * say which kind of object fills the old space, without the dominator tree a retained size needs.
 *
 *   node bench/heap-snapshot.mjs <file.heapsnapshot> [--top=20]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Rows {type, name, count, bytes} by self size, largest first, and the snapshot's total. */
export function summariseSnapshot(file, top = 20) {
  const snapshot = JSON.parse(readFileSync(file, 'utf8'));
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const { nodes, strings } = snapshot;
  const groups = new Map();
  let total = 0;
  for (let i = 0; i < nodes.length; i += fields.length) {
    const type = types[nodes[i + typeAt]];
    const bytes = nodes[i + sizeAt];
    total += bytes;
    // Objects and closures by constructor; strings, code, arrays and the rest by type alone.
    const name =
      type === 'object' || type === 'closure' || type === 'native'
        ? String(strings[nodes[i + nameAt]]).slice(0, 60)
        : '';
    const key = `${type}\u0000${name}`;
    const g = groups.get(key) ?? { type, name, count: 0, bytes: 0 };
    g.count += 1;
    g.bytes += bytes;
    groups.set(key, g);
  }
  return { total, rows: [...groups.values()].sort((a, b) => b.bytes - a.bytes).slice(0, top) };
}

export function formatSnapshot({ total, rows }) {
  const mb = (b) => (b / 2 ** 20).toFixed(1);
  return [
    `heap snapshot: ${mb(total)} MB of objects (self sizes); the largest kinds:`,
    '| type | constructor | objects | MB |',
    '|---|---|---|---|',
    ...rows.map(
      (r) => `| ${r.type} | ${r.name.replace(/\|/g, '\\|')} | ${r.count.toLocaleString('en-US')} | ${mb(r.bytes)} |`,
    ),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node bench/heap-snapshot.mjs <file.heapsnapshot> [--top=20]');
    process.exit(2);
  }
  const top = Number(/^--top=(\d+)$/.exec(process.argv[3] ?? '')?.[1] ?? 20);
  for (const line of formatSnapshot(summariseSnapshot(file, top))) console.log(line);
}
