/**
 * Svc's own counts as labelled values, read from what `Observed` names: the one reading of the
 * listeners, queues, destinations and tracked errors that the metrics endpoint (svc-metrics.ts) and
 * the alert rules' facts (edge-agent/alerts/facts.ts) both show, so the two never disagree on what a
 * count is or which labels it has.
 */
import { ERROR_TYPES, type ErrorTracker, type ErrorType } from '../../shared/errors/tracker.js';
import type { GroupStats } from '../../shared/queue/local/index.js';
import { DROP_REASONS, type ListenerTotals } from '../sources/udp/listener.js';
import type { Observed } from './observed.js';

/** One labelled value. */
export type Reading<L extends string> = [labels: Record<L, string>, value: number];

/** A count of each UDP listener, labelled by its type. */
export function perListener(observed: Observed, read: (totals: ListenerTotals) => number): Reading<'listener'>[] {
  return observed.listeners.map((listener) => [{ listener: listener.queueType }, read(listener.totals())]);
}

/** Datagrams dropped per listener and reason (`kernel` only where the OS counts it). */
export function udpDropped(observed: Observed): Reading<'listener' | 'reason'>[] {
  return observed.listeners.flatMap((listener) => {
    const totals = listener.totals();
    return DROP_REASONS.filter((reason) => reason !== 'kernel' || totals.kernelCounted).map(
      (reason): Reading<'listener' | 'reason'> => [{ listener: listener.queueType, reason }, totals.dropped[reason]],
    );
  });
}

/** A value of each consumer group (destination) of each local queue. */
export function perQueueGroup(
  observed: Observed,
  read: (stats: GroupStats) => number,
): Reading<'queue' | 'destination'>[] {
  return observed.queues.flatMap(({ name, queue }) =>
    Object.entries(queue.stats()).map(
      ([destination, stats]): Reading<'queue' | 'destination'> => [{ queue: name, destination }, read(stats)],
    ),
  );
}

/** Events not written on a delivery attempt, per queue and destination. */
export function destinationFailures(observed: Observed): Reading<'queue' | 'destination'>[] {
  return observed.queues.flatMap(({ name, destinations }) =>
    destinations.map(
      (destination): Reading<'queue' | 'destination'> => [
        { queue: name, destination: destination.name },
        destination.failedWrites,
      ],
    ),
  );
}

/** Seconds the oldest event of a group has waited at `nowMs`; 0 when none waits. */
export function oldestPendingAgeSeconds(stats: GroupStats, nowMs: number): number {
  return stats.oldestPendingAt === null ? 0 : Math.max(0, (nowMs - stats.oldestPendingAt) / 1000);
}

/** Errors tracked per type since the start, every known type from 0; none while tracking is off (it counts nothing). */
export function errorCounts(errors: Pick<ErrorTracker, 'sinceStartByType' | 'enabled'>): [ErrorType, number][] {
  return errors.enabled ? ERROR_TYPES.map((type) => [type, errors.sinceStartByType.get(type) ?? 0]) : [];
}
