/**
 * The point time's text, built per event by the UDP listeners and the audit API (PointClock.nextText,
 * shared/queue/point-clock.ts): ns per call against two baselines in the same run, on the same
 * milliseconds: the BigInt path (`next(ms).toString()`), and the one template of the 13-digit
 * millisecond and the counter that nextText was before 204b588. nextText builds the text from
 * small integers, which V8 takes from its number-string cache, where the template converts the
 * millisecond's double at every call unless the same millisecond came just before. Two sets of
 * times: a different millisecond at every call (events' own times, as the log appenders send them)
 * and 50 calls per millisecond (the cache's best case for the template).
 *
 *   npm run bench:point-clock  (= npm run -s build && node bench/point-clock.mjs) [--calls=1000000] [--rounds=5]
 */
import { fmt, loadNow, machineLine, median, positive } from './lib.mjs';

const { PointClock } = await import(new URL('../dist/shared/queue/point-clock.js', import.meta.url).href);

const calls = Math.round(positive('calls', 'BENCH_CALLS', 1_000_000));
const rounds = Math.round(positive('rounds', 'BENCH_ROUNDS', 5));
const base = Date.now();
const timeSets = {
  'a new millisecond every call': (i) => base + i * 7,
  '50 calls per millisecond': (i) => base + Math.floor(i / 50),
};

const variants = {
  'BigInt: next(ms).toString()': (msOf) => {
    const clock = new PointClock();
    let keep = 0;
    for (let i = 0; i < calls; i++) keep += clock.next(msOf(i)).toString().length;
    return keep;
  },
  'template of ms and counter (before)': (msOf) => {
    let counter = 0;
    let keep = 0;
    for (let i = 0; i < calls; i++) {
      const ms = Math.floor(msOf(i));
      const c = counter;
      counter = (c + 1) % 1_000_000;
      keep += `${ms}${c < 100_000 ? String(c).padStart(6, '0') : c}`.length;
    }
    return keep;
  },
  'nextText(ms)': (msOf) => {
    const clock = new PointClock();
    let keep = 0;
    for (let i = 0; i < calls; i++) keep += clock.nextText(msOf(i)).length;
    return keep;
  },
};

console.log('point time text: ns per call (median of rounds; variants alternate within each round)');
console.log(`machine     ${machineLine()}`);
console.log(`load avg    ${loadNow().text} at start`);
for (const [setName, msOf] of Object.entries(timeSets)) {
  const times = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let round = 0; round <= rounds; round++) {
    for (const [name, run] of Object.entries(variants)) {
      const start = process.hrtime.bigint();
      run(msOf);
      // Round 0 warms up.
      if (round > 0) times[name].push(Number(process.hrtime.bigint() - start) / calls);
    }
  }
  const baseline = median(times['BigInt: next(ms).toString()']);
  console.log(`${setName}:`);
  for (const [name, ns] of Object.entries(times)) {
    console.log(`  ${name.padEnd(36)} ${fmt(median(ns), 1).padStart(7)} ns   ×${fmt(median(ns) / baseline)} of BigInt`);
  }
}
