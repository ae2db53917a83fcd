/**
 * Svc's own counters into the embedded store, once a minute (`svc_counters`): what the UDP
 * listeners received and dropped (per reason), each queue's depth, oldest pending age and
 * dead-lettered messages per destination, and each destination's written and failed events. They
 * are read from `Observed` (the metrics endpoint and the status page read the same), so this part
 * lives in edge-agent, and writes through the store writer directly, not through a queue: a sample
 * lost to a store failure is simply not kept (the next one, a minute later, has the running totals).
 */
import type { Log } from '../../shared/logging/log.js';
import type { Component } from '../../shared/runtime/lifecycle.js';
import type { StoreWriting } from '../../shared/store/thread.js';
import type { CounterSample } from '../../shared/store/writer.js';
import type { Observed } from '../endpoints/observed.js';

/** How often the counters are sampled into the store. */
export const STORE_COUNTERS_INTERVAL_MS = 60_000;

/** Every counter `observed` can read now, as store rows (totals since Svc started, or gauges). */
export function counterSamples(observed: Observed, nowMs: number): CounterSample[] {
  const samples: CounterSample[] = [];
  for (const listener of observed.listeners) {
    const totals = listener.totals();
    const labels = { listener: listener.queueType };
    samples.push(
      { name: 'received', labels, value: totals.received },
      { name: 'queued', labels, value: totals.queued },
      { name: 'processed', labels, value: totals.processed },
      { name: 'failed', labels, value: totals.failed },
    );
    for (const [reason, value] of Object.entries(totals.dropped))
      samples.push({ name: `dropped.${reason}`, labels, value });
  }
  for (const { name: queue, queue: q, destinations } of observed.queues) {
    const stats = q.stats();
    for (const destination of destinations) {
      const labels = { queue, destination: destination.name };
      const group = stats[destination.name];
      if (group) {
        samples.push(
          { name: 'queue_depth', labels, value: group.pendingEvents },
          {
            name: 'queue_oldest_age_ms',
            labels,
            value: group.oldestPendingAt === null ? 0 : Math.max(0, nowMs - group.oldestPendingAt),
          },
          { name: 'dead_lettered', labels, value: group.deadLettered },
        );
      }
      samples.push(
        { name: 'written_events', labels, value: destination.writtenEvents },
        { name: 'failed_writes', labels, value: destination.failedWrites },
      );
    }
  }
  for (const { kind, group } of observed.pollGroups)
    for (const { label, skipped } of group.counts())
      samples.push({ name: 'polls_skipped', labels: { kind, target: label }, value: skipped });
  return samples;
}

/** Samples the counters once a minute (and once at stop) into the store. */
export class StoreCounters implements Component {
  readonly name = 'store counters';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly writer: Pick<StoreWriting, 'writeCounters'>,
    private readonly observed: Observed,
    private readonly log: Log,
    private readonly now: () => number = Date.now,
  ) {}

  start(): Promise<void> {
    this.timer = setInterval(() => void this.sample(), STORE_COUNTERS_INTERVAL_MS);
    this.timer.unref();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sample();
  }

  /** One sample now; a store that cannot write loses this sample only (logged at DEBUG: the store's destinations say it at ERROR). */
  async sample(): Promise<void> {
    const nowMs = this.now();
    try {
      await this.writer.writeCounters(nowMs, counterSamples(this.observed, nowMs));
    } catch (err) {
      this.log.debug({ err }, 'cannot write Svc counters to the store; the next sample has the running totals');
    }
  }
}
