/**
 * Local mode's audit path: the local gateway in front of the audit handler, the durable local queue
 * behind it, and one writer handler per configured destination (the same handlers the writer
 * Lambdas run), each a consumer group of the queue. The idempotency store keeps its records in the
 * queue directory, which the queue's lock reserves for this process.
 */

import { type AuditCounters, makeAuditHandlers } from '../../shared/audit/handler.js';
import { makeWriterHandler } from '../../shared/destinations/handler.js';
import type { BaseDestination } from '../../shared/destinations/port.js';
import { auditDestinations } from '../../shared/destinations/registry.js';
import type { StoreComponent } from '../../shared/destinations/store/build.js';
import { LocalIdempotencyStore } from '../../shared/idempotency/local.js';
import { decodeMessage } from '../../shared/queue/codec.js';
import { eventsOfKind } from '../../shared/queue/events.js';
import { type ConsumerGroup, LocalEventQueue } from '../../shared/queue/local/index.js';
import { Throttle } from '../../shared/queue/throttle.js';
import { MemoryRateLimiter } from '../../shared/ratelimit/memory.js';
import type { AppContext } from '../../shared/runtime/context.js';
import type { Component } from '../../shared/runtime/lifecycle.js';
import { LocalGateway } from './gateway/gateway.js';
import { crashBeforeSettle } from './test-hooks.js';

export interface LocalAudit {
  components: Component[];
  gateway: LocalGateway;
  queue: LocalEventQueue;
  /** The queue's destinations (one consumer group each), for the metrics endpoint. */
  destinations: BaseDestination[];
  idempotency: LocalIdempotencyStore | null;
  counters: AuditCounters;
}

/** The audit events in queue message bodies (id and receivedAt): what the idempotency store recovers. */
function* auditEventsIn(bodies: Iterable<string>): Iterable<{ key: string; receivedAtMs: number }> {
  for (const body of bodies) {
    const decoded = decodeMessage(body);
    if (!decoded.ok || !('events' in decoded.message)) continue;
    for (const e of eventsOfKind(decoded.message.events, 'audit'))
      yield { key: e.id, receivedAtMs: Date.parse(e.receivedAt) };
  }
}

/**
 * The components of the audit path, in start order (queue, idempotency store, then the gateway that
 * feeds them); `store`: the process's embedded store, which keeps every accepted audit event.
 */
export function localAuditComponents(ctx: AppContext, store: StoreComponent | null = null): LocalAudit | null {
  const { config, logger: log, clock } = ctx;
  const settings = config.auditEvents;
  if (!settings.enable) return null;
  if (settings.apiToken === '')
    log.warn({}, 'Svc.auditEvents.apiToken is not set: the audit API accepts requests without a token');
  const destinations = auditDestinations(ctx, store);
  if (destinations.length === 0)
    log.warn({}, 'no audit destination is enabled (Svc.auditEvents.destination): accepted audit events are not stored');
  const groups: ConsumerGroup[] = destinations.map(
    ({ destination, batchSize, batchWindowMs, stableBatches, maxInFlight, maxBatchEvents }) => ({
      name: destination.name,
      handler: makeWriterHandler({ destination, claimCheck: null, log }),
      batchSize,
      batchWindowMs,
      maxInFlight: maxInFlight ?? 1,
      stableBatches: stableBatches ?? false,
      ...(maxBatchEvents !== undefined ? { maxBatchEvents } : {}),
      throttle: settings.queue.rateLimit.enable ? new Throttle(settings.queue.rateLimit.maxPerMinute) : null,
    }),
  );
  const beforeSettle = crashBeforeSettle();
  const idempotency = settings.idempotency.enable
    ? new LocalIdempotencyStore({
        directory: config.localQueue.directory,
        windowSeconds: settings.idempotency.windowSeconds,
        maxEntries: settings.idempotency.maxEntries,
        log,
      })
    : null;
  const queue = new LocalEventQueue({
    directory: config.localQueue.directory,
    capacity: settings.queue.capacity,
    maxReceiveCount: config.localQueue.maxReceiveCount,
    groups,
    log,
    ...(idempotency ? { onReplay: (bodies: Iterable<string>) => idempotency.recover(auditEventsIn(bodies)) } : {}),
    ...(beforeSettle ? { beforeSettle } : {}),
  });
  const counters: AuditCounters = { duplicates: 0 };
  const handlers = makeAuditHandlers({
    settings,
    rateLimiter: settings.rateLimit.enable ? new MemoryRateLimiter({ limit: settings.rateLimit.maxPerMinute }) : null,
    idempotency,
    queue,
    clock,
    log,
    counters,
  });
  const gateway = new LocalGateway({
    name: 'audit API',
    host: settings.host,
    port: settings.port,
    ...handlers,
    log,
    limits: settings,
  });
  return {
    components: [queue, ...(idempotency ? [idempotency] : []), gateway],
    gateway,
    queue,
    destinations: destinations.map((d) => d.destination),
    idempotency,
    counters,
  };
}
