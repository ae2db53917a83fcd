/**
 * What one UDP log datagram costs in Svc's own code, without the socket: the handler (parse, count,
 * categorise), the event batcher, and the durable LocalEventQueue (stringify, journal, fdatasync),
 * with the bench's consumer and without, on datagrams of `svc simulate udp --kinds log`. CPU µs per
 * datagram (process.cpuUsage), best of --rounds passes of --count datagrams handed over in batches
 * of --batch (the listener's maxConcurrent). Steps are cumulative: each adds one stage. Under each
 * step: the best round's CPU by thread (main, libuv's pool: the synced writes, V8's helpers: GC),
 * and with the queue its synced journal writes (the group commit's size: datagrams per write).
 *
 *   npm run bench:udp-steps  (= npm run -s build && node bench/udp-steps.mjs)
 *       [--count=100000] [--batch=10] [--rounds=3] [--per-message=20] [--seed=42] [--only=TEXT] [--rate=0] [--gather=MS]
 *
 * --only runs the steps whose name contains TEXT. --rate=N hands the batches over at N datagrams/s
 * (as a socket at that rate would; timers, so in bursts of about a millisecond) instead of as fast as
 * the handler takes them: the batcher's rounds, and so the group commit, are then as small as at that rate.
 * --gather=MS: the batcher's least time between rounds (default svc's, compose.ts BATCHER_GATHER_MS).
 * One batch is handed over per event-loop turn (setImmediate), as the listener's queue does, so the
 * batcher's writes run between batches.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, int, median, option, positive, threadCpuByKind, threadTimes } from './lib.mjs';
import { benchConfig, countingGroup, decodingGroup, loadSvc } from './udp-svc.mjs';

const svc = await loadSvc();
// The first listing tells the thread kinds apart (lib.mjs threadKinds): taken before any pool job.
threadTimes();

const count = Math.round(positive('count', 'BENCH_COUNT', 100_000));
const batchSize = Math.round(positive('batch', 'BENCH_BATCH', 10));
const rounds = Math.round(positive('rounds', 'BENCH_ROUNDS', 3));
const perMessage = Math.round(positive('per-message', 'BENCH_PER_MESSAGE', svc.EDGE_EVENTS_PER_MESSAGE));
const seed = Math.round(positive('seed', 'BENCH_SEED', 42));
const only = option('only', 'BENCH_ONLY', '');
// The batcher's rounds at least this far apart: svc's own (compose.ts BATCHER_GATHER_MS) unless given.
const gatherMs = Number(option('gather', 'BENCH_GATHER_MS', String(svc.BATCHER_GATHER_MS ?? 0)));
// 0: as fast as the handler takes them; else datagrams/s, paced as a socket would deliver them.
const rate = Math.round(Number(option('rate', 'BENCH_RATE', '0')));
if (!Number.isFinite(rate) || rate < 0)
  throw new Error('--rate must be a number of datagrams/s, 0 for as fast as possible');

// The listener's queue settings do not matter here: the datagrams are handed to the handler directly.
const settings = benchConfig(svc, 200, 10).logEvents;
const { logger: log } = await svc.createLogger({ level: 'warn', pretty: false });

const gen = svc.createDatagramGenerator({ seed, kinds: svc.LOG_KINDS, malformed: 0 });
const now = Date.now();
const datagrams = Array.from({ length: count }, (_, i) => ({
  data: gen.next().data,
  address: '127.0.0.1',
  port: 40000,
  receivedAtMs: now + Math.floor(i / 50),
}));
const batches = [];
for (let i = 0; i < datagrams.length; i += batchSize) batches.push(datagrams.slice(i, i + batchSize));

const makeHandler = (queue) =>
  svc.logEventHandler({
    settings,
    appNames: svc.NO_APP_NAMES,
    counter: new svc.EventCounter(),
    rejected: new svc.RejectedEventCounter(),
    trackPerfRejections: false,
    queue,
    clock: new svc.PointClock(),
    // What svc local counts per event: the metrics endpoint's and the alerts' log counts (udp/compose.ts).
    levels: new svc.LogLevelCounts(),
    log,
  });

const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs every batch through the handler, one batch per event-loop turn as the listener's queue does
 * (so the batcher's writes run between batches); waits when a batch's outcome is a promise (batcher full).
 */
async function feed(handler) {
  const start = performance.now();
  for (let b = 0; b < batches.length; b++) {
    const batch = batches[b];
    if (rate > 0) {
      const wait = start + ((b * batchSize) / rate) * 1000 - performance.now();
      if (wait >= 1) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    const r = handler.batch(batch);
    if (r instanceof Promise) await r;
    await turn();
  }
}

/** `consumer`: null (none), 'acking' (bench:udp's counting group) or 'decoding' (decodes as the writers do). */
async function withQueue(consumer, fn) {
  const directory = mkdtempSync(join(tmpdir(), 'svc-bench-udp-steps-'));
  const queue = new svc.LocalEventQueue({
    directory,
    capacity: 10_000_000,
    maxReceiveCount: 3,
    log,
    // The acking consumer is bench:udp's (udp-svc.mjs), so both benches measure the same path.
    groups: consumer === 'acking' ? [countingGroup().group] : consumer === 'decoding' ? [decodingGroup(svc).group] : [],
  });
  await queue.start();
  try {
    await fn(queue);
    // Taken before the stop, which closes the journal (its writes are all done: the batcher stopped).
    return queue.segmentWrites;
  } finally {
    await queue.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

const steps = {
  'handler (parse, count, categorise; no queue)': async () => feed(makeHandler(null)),
  'handler → batcher → no-op queue': async () => {
    const batcher = new svc.EventBatcher({
      name: 'log',
      queue: { maxMessageBytes: 1_048_576, sendEncoded: async () => {} },
      maxBuffered: svc.BATCHER_EVENTS,
      maxPerMessage: perMessage,
      gatherMs: gatherMs,
      log,
    });
    await feed(makeHandler(batcher));
    await batcher.stop();
  },
  'handler → batcher → LocalEventQueue (no consumer)': async () =>
    withQueue(null, async (queue) => {
      const batcher = new svc.EventBatcher({
        name: 'log',
        queue,
        maxBuffered: svc.BATCHER_EVENTS,
        maxPerMessage: perMessage,
        gatherMs: gatherMs,
        log,
      });
      await feed(makeHandler(batcher));
      await batcher.stop();
    }),
  'handler → batcher → LocalEventQueue → consumer acking all': async () =>
    withQueue('acking', async (queue) => {
      const batcher = new svc.EventBatcher({
        name: 'log',
        queue,
        maxBuffered: svc.BATCHER_EVENTS,
        maxPerMessage: perMessage,
        gatherMs: gatherMs,
        log,
      });
      await feed(makeHandler(batcher));
      await batcher.stop();
      while (queue.pending > 0) await new Promise((r) => setTimeout(r, 20));
    }),
  'handler → batcher → LocalEventQueue → consumer decoding all (decodeRecord, as the writers)': async () =>
    withQueue('decoding', async (queue) => {
      const batcher = new svc.EventBatcher({
        name: 'log',
        queue,
        maxBuffered: svc.BATCHER_EVENTS,
        maxPerMessage: perMessage,
        gatherMs: gatherMs,
        log,
      });
      await feed(makeHandler(batcher));
      await batcher.stop();
      while (queue.pending > 0) await new Promise((r) => setTimeout(r, 20));
    }),
};

console.log(
  `UDP steps: ${int(count)} log datagrams (svc simulate udp --kinds log, seed ${seed}) in batches of ${batchSize}, ${rate > 0 ? `paced at ${int(rate)}/s` : 'as fast as taken'}, ${perMessage} events per queue message, batcher rounds ≥ ${gatherMs} ms apart, best of ${rounds}; load avg ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
const perDatagram = (us) => fmt(us / count, 2);
for (const [name, run] of Object.entries(steps)) {
  if (only && !name.includes(only)) continue;
  const runs = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = threadTimes();
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    const writes = await run();
    const ms = performance.now() - w0;
    const c = process.cpuUsage(c0);
    runs.push({ total: c.user + c.system, system: c.system, ms, threads: threadCpuByKind(t0, threadTimes()), writes });
  }
  const totals = runs.map((x) => x.total);
  const best = runs.reduce((a, b) => (b.total < a.total ? b : a));
  // The system share is mostly the journal's writes (O_DSYNC: the kernel's work for the sync is in it).
  console.log(
    `${perDatagram(best.total).padStart(7)} µs CPU per datagram (${perDatagram(best.system)} system; median ${perDatagram(median(totals))})   ${name}`,
  );
  const t = best.threads;
  // /proc counts in ticks of 10 ms: enough over a round of 100,000 datagrams.
  console.log(
    `          by thread: main ${perDatagram(t.main.user + t.main.system)} (system ${perDatagram(t.main.system)}), libuv pool ${perDatagram(t['libuv pool'].user + t['libuv pool'].system)} (system ${perDatagram(t['libuv pool'].system)}), V8 + other ${perDatagram(t['V8 + other'].user + t['V8 + other'].system)}; ${int(count / (best.ms / 1000))} datagrams/s fed`,
  );
  if (best.writes !== undefined && best.writes.writes > 0) {
    const w = best.writes;
    console.log(
      `          journal: ${int(w.writes)} synced writes (${int(w.writes / (best.ms / 1000))}/s), ${fmt(count / w.writes, 1)} datagrams, ${fmt(w.records / w.writes, 2)} messages and ${int(w.bytes / w.writes)} bytes per write`,
    );
  }
}
console.log(
  `load avg ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at the end`,
);
