/**
 * After a service's start: one full garbage collection, so that an idle service holds what it
 * keeps rather than what starting took.
 *
 * Starting (loading ≈ 350 modules, reading the config, starting the components) grows V8's young
 * generation to its 16 MB cap, ≈ 7–8 MB of it resident. V8 shrinks it again only after a full
 * collection (the collection itself, or the memory reducer it arms); an idle service allocates too
 * little to cause one, so whether and when the young generation shrank after start was luck
 * (bench/memory.mjs: idle RSS 64 or 77 MB for the same build, 30 s after start). One collection,
 * a few seconds after start (COLLECT_AFTER_START_MS), costs ≈ 10–20 ms of CPU, once.
 *
 * Node gives no public call for one without a start flag: `--expose-gc` is turned on just long
 * enough to take the `gc` function of a new context, and off again, so V8's flags are as before
 * (they are part of what a code cache must match). Where that fails (a runtime without the V8
 * flag), nothing is collected and the service runs as before.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Log } from '../../shared/logging/log.js';

/** The `gc` function: the global one when the process was started with --expose-gc, else one taken as above. */
export function gcFunction(): unknown {
  const global: unknown = Reflect.get(globalThis, 'gc');
  if (typeof global === 'function') return global;
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('typeof gc === "function" ? gc : undefined');
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/**
 * How long after "running" the collection runs. V8 gives the young generation back in a full
 * collection only when the allocation rate of the last seconds is low: right at the end of start it
 * is not (measured: a collection then left the 16 MB in place until the memory reducer it armed ran,
 * 8–20 s later), a few seconds into an idle run it is.
 */
export const COLLECT_AFTER_START_MS = 5_000;

/** Schedules the collection COLLECT_AFTER_START_MS after now (the timer does not keep the process alive). */
export function collectAfterStart(log: Log): void {
  setTimeout(() => collectNow(log), COLLECT_AFTER_START_MS).unref();
}

function collectNow(log: Log): void {
  const gc = gcFunction();
  if (typeof gc !== 'function') {
    log.debug({}, 'no garbage collection after start: this runtime gives no gc function');
    return;
  }
  const before = process.memoryUsage();
  Reflect.apply(gc, undefined, []);
  const after = process.memoryUsage();
  const mb = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;
  log.debug(
    { heapTotalMb: mb(after.heapTotal), rssMb: mb(after.rss), rssBeforeMb: mb(before.rss) },
    `garbage collected after start: heap ${mb(after.heapTotal)} MB, RSS ${mb(before.rss)} → ${mb(after.rss)} MB`,
  );
}
