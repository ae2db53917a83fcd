/**
 * The steady state of Svc's bounded id sets, once full: every add forgets the oldest. µs per add
 * of RecentIds (the writer handler's 100,000 written ids; JSON and MQTT keep 10,000) and of the
 * local idempotency store's record (claim + complete, maxEntries 250,000, its default), against a
 * baseline in the same run: a plain Set's add and delete of a known key. Before issue 14's fifth
 * session both read their oldest entry from the front of the Set or Map, behind the holes of every
 * earlier delete: the cost rose with the holes until V8 rebuilt the table.
 *
 *   npm run build && node bench/eviction.mjs [--rounds=5] [--adds=50000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadNow, positive } from './lib.mjs';

const dist = new URL('../dist/', import.meta.url);
const { RecentIds } = await import(new URL('shared/util/recent-ids.js', dist).href);
const { LocalIdempotencyStore } = await import(new URL('shared/idempotency/local.js', dist).href);

const rounds = Math.round(positive('rounds', 'BENCH_ROUNDS', 5));
const adds = Math.round(positive('adds', 'BENCH_ADDS', 50_000));
const silent = {
  info() {},
  warn() {},
  error() {},
  debug() {},
  trace() {},
  fatal() {},
  child() {
    return silent;
  },
};
const key = (i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const usPer = (start, n) => Number(process.hrtime.bigint() - start) / n / 1000;

console.log('bounded id sets, once full: µs per add (each add forgets the oldest)');
console.log(`load avg    ${loadNow().text} at start`);

const set = new Set();
const recent = new RecentIds(100_000);
let s = 0;
let r = 0;
for (; s < 100_000; s++) set.add(key(s));
for (; r < 100_000; r++) recent.add(key(r));
const directory = mkdtempSync(join(tmpdir(), 'svc-bench-eviction-'));
let now = Date.parse('2026-11-25T00:00:00Z');
const store = new LocalIdempotencyStore({
  directory,
  windowSeconds: 86_400,
  maxEntries: 250_000,
  log: silent,
  now: () => now,
});
await store.start();
let k = 0;
const record = async (i) => {
  now += 1;
  await store.claim(key(i), now);
  await store.complete(key(i), new Date(now).toISOString(), now);
};
for (; k < 250_000; k++) await record(k);

for (let round = 1; round <= rounds; round++) {
  let t = process.hrtime.bigint();
  for (let n = 0; n < adds; n++, s++) {
    set.add(key(s));
    set.delete(key(s - 100_000));
  }
  const baseline = usPer(t, adds);
  t = process.hrtime.bigint();
  for (let n = 0; n < adds; n++, r++) recent.add(key(r));
  const ids = usPer(t, adds);
  t = process.hrtime.bigint();
  for (let n = 0; n < adds; n++, k++) await record(k);
  const idem = usPer(t, adds);
  console.log(
    `round ${round}   baseline (Set add + delete) ${baseline.toFixed(2)} µs   RecentIds(100,000) ${ids.toFixed(2)} µs (×${(ids / baseline).toFixed(1)})   idempotency store (250,000) ${idem.toFixed(2)} µs per claim + complete`,
  );
}
await store.stop();
rmSync(directory, { recursive: true, force: true });
console.log(`load avg    ${loadNow().text} at the end`);
